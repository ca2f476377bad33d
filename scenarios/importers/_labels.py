"""A clinician's triage labels for imported cases: ``encsim import agentclinic|healthbench FILE --labels LABELS``.

Public case files carry a diagnosis but no triage level or escalation, so their scenarios have no safety target.
A labels file, written by a clinician, gives them one. YAML (or JSON)::

    labeller: Dr A. Example, emergency physician     # optional: the labeller of every label that names none
    labels:
      - case: 3                        # the row's line number in the source file (as the import report counts rows)
        triage_level: 2                # 1 (most urgent) .. 5, on the scenario's scale (ESI)
        escalation: emergency          # emergency | urgent | routine | self_care
        disposition: self_present_ed   # optional: ambulance, self_present_ed, same_day_urgent_care, crisis_team,
                                       #   same_day_gp, routine_gp, pharmacist, self_care; must belong to escalation
        rationale: Suspected bowel obstruction in an infant; needs same-day surgical review.
        labeller: Dr B. Example        # optional when the file names one
      - case: ac_myasthenia_gravis_532ee556    # or the scenario's id (as ``encsim import`` names the file)
        ...

or CSV with a header row: ``case,triage_level,escalation,disposition,rationale,labeller`` (``disposition`` may be
empty or left out; ``labeller`` is required on every row).

Each label sets the scenario's ``expected.triage_level``, ``escalation``, ``dispositions`` (the one given),
``label_rationale`` (the rationale, the labeller and the file) and ``label_source: clinician``, and adds the tag
``labels:clinician``; a scenario without a label keeps no triage target and no ``label_source``, so a report can
tell clinician labels from none. The labels are checked before anything is written: a file that is missing, not
valid YAML / JSON / CSV, not in the format, or names a case the source file does not have, a level outside 1-5, an
unknown escalation or disposition, a disposition of another escalation, no labeller or no rationale, or the same
case twice, is a :class:`LabelsError`: one paragraph naming the file (and the row or label) and the fix; nothing is
imported. A label of a row that then fails to convert is reported as a warning of that row.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from scenarios._files import (
    FileProblem,
    decode_checked,
    first_error_paragraph,
    load_model_file,
    problem_paragraph,
    read_bytes_checked,
)
from scenarios.importers._common import (
    Converted,
    Converter,
    ImportReport,
    ImportSourceError,
    RowContext,
    RowWarning,
    SourceRow,
    import_rows,
    read_jsonl,
)
from scenarios.schema import Disposition, Escalation

_FIX = ("Give a YAML file with `labels:` (or a CSV file with the columns case, triage_level, escalation, disposition, "
        "rationale, labeller): see scenarios/importers/_labels.py.")
CSV_COLUMNS = ("case", "triage_level", "escalation", "disposition", "rationale", "labeller")


class LabelsError(ImportSourceError):
    """A labels file cannot be used; the message names the file, the label and the fix."""


class CaseLabel(BaseModel):
    """One case's label."""

    model_config = ConfigDict(extra="forbid")

    case: int | str = Field(description="the row's line number in the source file, or the scenario id")
    triage_level: int
    escalation: Escalation
    disposition: Disposition | None = None
    rationale: str = Field(min_length=1)
    labeller: str | None = None

    @field_validator("case")
    @classmethod
    def _case(cls, v: int | str) -> int | str:
        if isinstance(v, str):
            v = v.strip()
            if v.isdigit():
                return int(v)
            if not v:
                raise ValueError("the case is empty; give the row's line number or the scenario id")
        if isinstance(v, int) and v < 1:
            raise ValueError("a line number starts at 1")
        return v

    @field_validator("triage_level", mode="before")
    @classmethod
    def _level(cls, v: Any) -> int:
        text = str(v).strip()
        if isinstance(v, bool) or not text.isdigit() or not 1 <= int(text) <= 5:
            raise ValueError(f"a triage level is a whole number from 1 (most urgent) to 5 (least urgent), not {v!r}")
        return int(text)

    @model_validator(mode="after")
    def _disposition(self) -> CaseLabel:
        if self.disposition is not None and self.disposition.escalation is not self.escalation:
            raise ValueError(f"disposition {self.disposition.value} belongs to escalation "
                             f"{self.disposition.escalation.value}, not {self.escalation.value}; give a disposition of "
                             "the escalation, or none")
        return self


class LabelsFile(BaseModel):
    """A whole labels file."""

    model_config = ConfigDict(extra="forbid")

    labeller: str | None = Field(default=None, description="the labeller of every label that names none")
    labels: list[CaseLabel] = Field(min_length=1)

    @model_validator(mode="after")
    def _complete(self) -> LabelsFile:
        seen: set[int | str] = set()
        for i, label in enumerate(self.labels):
            if not (label.labeller or self.labeller or "").strip():
                raise ValueError(f"label {i + 1} (case {label.case}): no labeller; name who labelled it (`labeller:` "
                                 "on the label or once for the file)")
            if label.case in seen:
                raise ValueError(f"label {i + 1}: case {label.case} is labelled twice; keep one label per case")
            seen.add(label.case)
        return self


@dataclass(frozen=True)
class Labels:
    """A checked labels file: its path (for messages and the rationale) and its labels."""

    path: Path
    file: LabelsFile

    def labeller(self, label: CaseLabel) -> str:
        return (label.labeller or self.file.labeller or "").strip()


def _read_csv(path: Path) -> LabelsFile:
    try:
        text = decode_checked(read_bytes_checked(path), allow_empty=True)
    except FileProblem as problem:
        fix = "Check the path given to --labels." if problem.kind == "missing" else _FIX
        raise LabelsError(problem_paragraph(problem, path, "a labels file", fix)) from None
    try:
        rows = list(csv.DictReader(io.StringIO(text)))
    except csv.Error as exc:
        raise LabelsError(f"{path}: not valid CSV ({exc}). {_FIX}") from None
    header = [h.strip() for h in (csv.DictReader(io.StringIO(text)).fieldnames or [])]
    missing = [c for c in CSV_COLUMNS if c != "disposition" and c not in header]
    unknown = [h for h in header if h not in CSV_COLUMNS]
    if missing or unknown:
        what = (f"no column {', '.join(missing)}" if missing else "") + ("; " if missing and unknown else "") + \
            (f"unknown column {', '.join(unknown)}" if unknown else "")
        raise LabelsError(f"{path}: not a labels file: {what} (the header row must name the columns "
                          f"{', '.join(CSV_COLUMNS)}; disposition may be left out). {_FIX}")
    labels: list[dict[str, Any]] = []
    for row in rows:
        if None in row:  # more cells than columns
            raise LabelsError(f"{path}: row {len(labels) + 2} has more cells than the header has columns; quote a "
                              f"rationale that contains a comma. {_FIX}")
        cells = {k.strip(): (v or "").strip() for k, v in row.items()}
        if not any(cells.values()):
            continue
        labels.append({k: v for k, v in cells.items() if v or k not in ("disposition", "labeller")})
    try:
        return LabelsFile.model_validate({"labels": labels})
    except ValidationError as exc:
        raise LabelsError(_csv_paragraph(exc, path)) from None


def _csv_paragraph(exc: ValidationError, path: Path) -> str:
    """A validation error of a CSV labels file, with the row (the header is line 1)."""
    loc = exc.errors()[0]["loc"]
    if len(loc) >= 2 and loc[0] == "labels" and isinstance(loc[1], int):
        return first_error_paragraph(exc, f"{path}: row {loc[1] + 2}", "a valid label", _FIX).replace(
            f" at labels.{loc[1]}.", " in column ", 1).replace(f" at labels.{loc[1]}", "", 1)
    return first_error_paragraph(exc, path, "a labels file", _FIX)


def read_labels(path: str | Path) -> Labels:
    """The labels of a YAML, JSON or CSV labels file (by its suffix), checked (see the module docstring)."""
    p = Path(path)
    if p.is_dir():
        raise LabelsError(f"{p}: is a folder; give the labels file itself to --labels. {_FIX}")
    if p.suffix.lower() == ".csv":
        return Labels(p, _read_csv(p))
    return Labels(p, load_model_file(p, LabelsFile, what="a labels file", fix=_FIX, error=LabelsError))


def _label_for(labels: Labels, line: int, scenario_id: str) -> CaseLabel | None:
    for label in labels.file.labels:
        if label.case == line or label.case == scenario_id:
            return label
    return None


def apply_label(data: dict[str, Any], label: CaseLabel, labels: Labels) -> None:
    """Set ``expected``'s triage target of one converted scenario from its clinician label, and say so."""
    expected = data.setdefault("expected", {})
    expected["triage_level"] = label.triage_level
    expected["escalation"] = label.escalation.value
    if label.disposition is not None:
        expected["dispositions"] = [label.disposition.value]
    expected["label_rationale"] = f"{label.rationale.strip()} (clinician label by {labels.labeller(label)}, " \
                                  f"{labels.path.name})"
    expected["label_source"] = "clinician"
    data["tags"] = [*data.get("tags", []), "labels:clinician"]


def labelled(convert: Converter, labels: Labels, rows: list[SourceRow]) -> tuple[Converter, dict[int, str]]:
    """``convert`` with each row's label applied, and the lines it labelled (line -> scenario id, once converted).

    Every label must name a case of ``rows`` (by line number, or by the id its row converts to); else
    :class:`LabelsError` before anything is written.
    """
    lines = {line for line, _ in rows}
    ids: dict[str, int] = {}
    by_id = any(isinstance(label.case, str) for label in labels.file.labels)
    for line, row in rows if by_id else []:  # the ids the rows convert to, when a label names one
        if isinstance(row, dict):
            try:
                ids[str(convert(row, RowContext(line=line, file_name="")).data["id"])] = line
            except Exception:  # the import reports this row; here it only has no id
                continue
    by_line: dict[int, CaseLabel] = {}
    for i, label in enumerate(labels.file.labels):
        found = label.case if isinstance(label.case, int) else ids.get(label.case)
        if found is None or found not in lines:
            raise LabelsError(
                f"{labels.path}: label {i + 1} names case {label.case!r}, which the source file does not have "
                f"({len(rows)} rows, lines {min(lines)}-{max(lines)}). Name a case by its line number in the source "
                "file or by its scenario id (as `encsim import` writes <id>.yaml).")
        by_line[found] = label

    done: dict[int, str] = {line: "" for line in by_line}

    def convert_labelled(row: dict[str, Any], ctx: RowContext) -> Converted:
        result = convert(row, ctx)
        label = by_line.get(ctx.line)
        if label is not None:
            apply_label(result.data, label, labels)
            done[ctx.line] = str(result.data["id"])
        return result

    return convert_labelled, done


def run_labelled_import(fmt: str, source: str | Path, out_dir: str | Path, convert: Converter,
                        labels: str | Path | None) -> ImportReport:
    """``_common.run_import`` with a labels file: the labels are read and checked first, then applied as rows convert.

    The report lists the labelled scenarios (``labelled``) and warns of a labelled row that did not convert.
    """
    checked = read_labels(labels) if labels is not None else None
    src, out = Path(source), Path(out_dir)
    rows = read_jsonl(src)
    if checked is None:
        return import_rows(fmt, src, out, rows, convert)
    convert, done = labelled(convert, checked, rows)
    report = import_rows(fmt, src, out, rows, convert)
    converted = set(report.converted)
    report.labels = checked.path
    report.labelled = [sid for sid in done.values() if sid in converted]
    report.warnings.extend(RowWarning(row=line, message=f"labelled in {checked.path.name}, but the row was not "
                                                        "converted: its label is not used")
                           for line, sid in sorted(done.items()) if sid not in converted)
    return report


__all__ = ["CSV_COLUMNS", "CaseLabel", "Labels", "LabelsError", "LabelsFile", "apply_label", "labelled",
           "read_labels", "run_labelled_import"]
