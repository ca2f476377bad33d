"""What every importer shares: reading JSON Lines, writing and validating scenario files, the report.

An importer is a function ``convert(row, ctx) -> Converted`` from one decoded JSON object to the
plain data of one scenario file. ``run_import`` does the rest, the same way for every format:

1. Read the source as JSON Lines (UTF-8, a BOM is tolerated, blank lines are skipped). A line that
   is not valid JSON, or is JSON but not an object, is reported as a failed row. A file in which
   *no* line is a JSON object (or that is missing, a folder, empty, or one pretty-printed JSON
   document) is not JSON Lines at all: :class:`ImportSourceError`, one paragraph, nothing written.
2. Convert each row. A row the converter cannot use raises :class:`RowError` with the reason; any
   other exception from a converter is also caught and reported for that row (external data comes
   in shapes nobody foresaw), so one odd row never stops an import.
3. Dump the scenario with ``yaml.safe_dump`` to a hidden temporary file in the output folder,
   re-load it with :func:`scenarios.load_scenario` (the loader's message is the failure reason if
   it does not validate), then rename it to ``<id>.yaml``. An existing file of that name is
   **overwritten**: ids are derived from the source, so importing the same file again refreshes
   the same files. Two rows of one import that give the same id: the later one fails as a duplicate.

Row numbers in reports are 1-based line numbers of the source file. ``read_jsonl`` is step 1 and
``import_rows`` steps 2 and 3, for importers that read other formats too (``_vignettes.py`` reads CSV).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel

from scenarios._files import FileProblem, parse_json_checked, read_bytes_checked
from scenarios.loader import ScenarioError, load_scenario

MAX_IMPORT_BYTES = 256 * 1024 * 1024
"""The largest file ``encsim import`` reads (it is read whole, before its first row is converted)."""


class ImportSourceError(ScenarioError):
    """The source file as a whole cannot be imported (missing, unreadable, not JSON Lines)."""


class RowError(Exception):
    """One source row cannot become a scenario; the message is the reason shown to the user."""


class FailedRow(BaseModel):
    row: int
    reason: str


class RowWarning(BaseModel):
    row: int
    message: str


ImageStatus = Literal["fetched", "present", "missing", "refused"]
IMAGE_STATUSES: tuple[ImageStatus, ...] = ("fetched", "present", "missing", "refused")


class ImageOutcome(BaseModel):
    """One case's image in the import report (NEJM image cases; ``_nejm_images.py``)."""

    row: int
    url: str | None
    name: str | None = None
    status: ImageStatus
    file: str | None = None  # the image as the scenarios name it, relative to the output folder
    reason: str | None = None  # why missing or refused; where a present image came from


class ImportReport(BaseModel):
    """The outcome of one import. ``rows`` counts the non-blank lines of the source.

    ``converted`` lists the scenarios written and ``converted_rows`` the lines they came from (an NEJM image case
    gives two scenarios, an imaging item and an encounter); ``images`` is each image case's image.
    """

    format: str
    source: Path
    out_dir: Path
    rows: int = 0
    converted: list[str] = []
    converted_rows: list[int] = []
    failed: list[FailedRow] = []
    warnings: list[RowWarning] = []
    labels: Path | None = None  # the clinician labels file (``--labels``), if any
    labelled: list[str] = []  # the scenarios it labelled (``expected.label_source: clinician``)
    images: list[ImageOutcome] = []

    def image_counts(self) -> dict[str, int]:
        """Cases per image status, every status present (0 when none), in ``IMAGE_STATUSES`` order."""
        return {s: sum(o.status == s for o in self.images) for s in IMAGE_STATUSES}


@dataclass(frozen=True)
class RowContext:
    """Where a row comes from, for ``source`` fields and messages."""

    line: int
    file_name: str


@dataclass
class Converted:
    """The plain data of one scenario file, and what the converter had to guess."""

    data: dict[str, Any]
    warnings: list[str] = field(default_factory=list)


Converter = Callable[[dict[str, Any], RowContext], Converted]
RowConverter = Callable[[dict[str, Any], RowContext], "Converted | list[Converted]"]
"""One row -> one scenario, or several (an NEJM image case: an imaging item and an encounter)."""

_NOT_JSONL_HELP = ("Give a JSON Lines file: one JSON object per line, as HealthBench and AgentClinic "
                   "publish them (e.g. healthbench_eval.jsonl, agentclinic_medqa.jsonl).")


# What an imported patient says to a message it does not understand: non-committal, never a denial ("Nothing
# else comes to mind" would answer a question the patient did not understand with a no; `scenarios validate`
# refuses such lines).
FALLBACK_LINES = ["Sorry, what do you mean?", "I'm not sure what you're asking.", "Could you ask that another way?"]


def sha_hex(text: str, n: int = 8) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:n]


def slug(text: str, max_len: int = 40, sep: str = "_") -> str:
    """Lower-case letters and digits joined by ``sep``, cut at a word end within ``max_len``.

    ``""`` if nothing is left.
    """
    out = re.sub(r"[^a-z0-9]+", sep, text.lower()).strip(sep)
    if len(out) <= max_len:
        return out
    cut = out[: max_len + 1]
    return (cut.rsplit(sep, 1)[0] if sep in cut else cut[:max_len]).rstrip(sep)


def read_source(source: Path, wanted: str = ".jsonl file") -> bytes:
    """The bytes of a file to import, a UTF-8 BOM removed.

    A missing file, a folder, a file that is not a regular file (a device such as /dev/zero, a pipe), one over
    ``MAX_IMPORT_BYTES`` or an unreadable file is an :class:`ImportSourceError` that says so (``wanted`` names
    what to give instead).
    """
    try:
        raw = read_bytes_checked(source, MAX_IMPORT_BYTES)
    except FileProblem as problem:
        fixes = {"missing": "Check the path of the file to import.", "folder": f"Give the {wanted} itself.",
                 "special": f"Give the {wanted} itself.",
                 "too_big": f"Split it into files of at most {MAX_IMPORT_BYTES // 1024 // 1024} MiB and import each "
                            "(scenarios of one --out folder may come from several files)."}
        reason = "is a folder" if problem.kind == "folder" else problem.reason.replace("this file", "an import file")
        raise ImportSourceError(f"{source}: {reason}. {fixes.get(problem.kind, 'Check the file and its permissions.')}"
                                ) from None
    return raw.removeprefix(b"\xef\xbb\xbf")


def _source_lines(source: Path) -> list[tuple[int, bytes]]:
    raw = read_source(source)
    lines = [(i, line) for i, line in enumerate(raw.split(b"\n"), start=1) if line.strip()]
    if not lines:
        raise ImportSourceError(f"{source}: the file is empty. {_NOT_JSONL_HELP}")
    return lines


def _decode(line: bytes) -> dict[str, Any]:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise RowError("not UTF-8 text") from None
    try:
        value = parse_json_checked(text)
    except FileProblem as problem:
        if problem.kind == "json_syntax":
            raise RowError(f"not valid JSON ({problem.reason} at column {problem.column})") from None
        raise RowError(problem.reason) from None
    if not isinstance(value, dict):
        raise RowError(f"a JSON {type(value).__name__} where a JSON object was expected")
    return value


def _check_not_one_document(source: Path, lines: list[tuple[int, bytes]]) -> None:
    """Refuse a pretty-printed JSON array or object: it is one document, not JSON Lines.

    It is one document even where some of its lines happen to be JSON objects; say so rather than import a
    fragment of it.
    """
    if len(lines) < 2 and not lines[0][1].lstrip().startswith(b"["):
        return
    try:
        doc = parse_json_checked(b"\n".join(line for _, line in lines).decode("utf-8"))
    except (UnicodeDecodeError, FileProblem):  # JSON Lines has "extra data" after line 1
        return
    # The suggested command writes a NEW file: `jq ... x.jsonl > x.jsonl` would empty the source before jq reads it.
    src, dst = shlex.quote(source.name), shlex.quote(f"{source.stem}.lines.jsonl")
    if isinstance(doc, list):
        raise ImportSourceError(
            f"{source}: is one JSON array, not JSON Lines. Write one object per line into a new file first, "
            f"e.g. `jq -c '.[]' {src} > {dst}`, and import that.")
    if isinstance(doc, dict):
        raise ImportSourceError(
            f"{source}: is one pretty-printed JSON object, not JSON Lines (one compact object per line). "
            f"Convert it into a new file with `jq -c . {src} > {dst}` and import that.")


def _not_jsonl(source: Path, lines: list[tuple[int, bytes]], first: SourceRow | None = None) -> ImportSourceError:
    why = f" (line {first[0]}: {first[1]})" if first is not None else ""
    return ImportSourceError(f"{source}: not a JSON Lines file: none of its {len(lines)} non-blank line(s) "
                             f"is a JSON object{why}. {_NOT_JSONL_HELP}")


class _NoAliasDumper(yaml.SafeDumper):
    """Writes a value used twice in full: the scenario loader refuses YAML aliases (``&id001`` / ``*id001``)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump_yaml(data: dict[str, Any], header: str) -> str:
    body = yaml.dump(data, Dumper=_NoAliasDumper, sort_keys=False, allow_unicode=True, width=110)
    return "".join(f"# {line}\n" for line in header.splitlines()) + body


def _write_checked(out_dir: Path, scenario_id: str, text: str) -> str | None:
    """Write ``<id>.yaml`` if it loads; return the loader's reason otherwise (nothing left behind)."""
    final = out_dir / f"{scenario_id}.yaml"
    tmp = out_dir / f".{scenario_id}.yaml.tmp"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ImportSourceError(f"--out {out_dir}: cannot write scenario files there ({exc.strerror}). "
                                "Choose a folder you can write to.") from None
    try:
        loaded = load_scenario(tmp)
    except ScenarioError as exc:
        tmp.unlink(missing_ok=True)
        # The loader's message, less what points into the file that was never kept (its path and lines).
        msg = re.sub(r"\bline \d+, ", "", str(exc).removeprefix(f"{tmp}: ")).split(". Fix the field")[0]
        return f"the scenario made from this row does not validate: {msg}"
    if loaded.scenario.id != scenario_id:  # pragma: no cover - converters set both from one value
        tmp.unlink(missing_ok=True)
        return f"internal error: wrote id {loaded.scenario.id!r} for {scenario_id!r}"
    os.replace(tmp, final)
    return None


SourceRow = tuple[int, dict[str, Any] | RowError]  # (1-based line, the decoded object or why it is not one)


def read_jsonl(source: Path) -> list[SourceRow]:
    """The non-blank lines of a JSON Lines file, each decoded to an object or to the ``RowError`` saying why not.

    :class:`ImportSourceError` if the file is missing, empty, one JSON document, or has no JSON object on any
    line (see the module docstring).
    """
    lines = _source_lines(source)
    _check_not_one_document(source, lines)
    rows: list[SourceRow] = []
    for line_no, line in lines:
        try:
            rows.append((line_no, _decode(line)))
        except RowError as exc:
            rows.append((line_no, exc))
    if not any(isinstance(row, dict) for _, row in rows):
        raise _not_jsonl(source, lines, rows[0] if rows else None)
    return rows


def import_rows(fmt: str, source: Path, out_dir: Path, rows: list[SourceRow], convert: RowConverter) -> ImportReport:
    """Convert already-read rows with ``convert`` into ``out_dir`` (steps 2 and 3 of the module docstring)."""
    report = ImportReport(format=fmt, source=source, out_dir=out_dir, rows=len(rows))
    seen: dict[str, int] = {}
    for line_no, row in rows:
        try:
            if isinstance(row, RowError):
                raise row
            result = convert(row, RowContext(line=line_no, file_name=source.name))
        except RowError as exc:
            report.failed.append(FailedRow(row=line_no, reason=str(exc)))
            continue
        except Exception as exc:  # one odd row must not stop an import; it is reported
            report.failed.append(FailedRow(
                row=line_no, reason=f"unexpected data in this row ({type(exc).__name__}: {exc})"))
            continue
        results = result if isinstance(result, list) else [result]
        for one in results:
            what = f"{one.data.get('suite', 'scenario')} {one.data['id']}: " if len(results) > 1 else ""
            scenario_id = str(one.data["id"])
            if scenario_id in seen:
                report.failed.append(FailedRow(row=line_no, reason=f"{what}duplicate: gives scenario id "
                                                                   f"{scenario_id!r}, already written from line "
                                                                   f"{seen[scenario_id]}"))
                continue
            header = (f"Imported by `encsim import {fmt}` from {source.name} line {line_no}.\n"
                      "Re-importing overwrites this file; edit the source or a copy instead.")
            reason = _write_checked(out_dir, scenario_id, dump_yaml(one.data, header))
            if reason is not None:
                report.failed.append(FailedRow(row=line_no, reason=what + reason))
                continue
            seen[scenario_id] = line_no
            report.converted.append(scenario_id)
            if line_no not in report.converted_rows:
                report.converted_rows.append(line_no)
        if line_no in report.converted_rows:
            report.warnings.extend(RowWarning(row=line_no, message=w)
                                   for w in dict.fromkeys(w for one in results for w in one.warnings))
    return report


def run_import(fmt: str, source: str | Path, out_dir: str | Path, convert: Converter) -> ImportReport:
    """Convert every row of the JSON Lines file ``source`` with ``convert`` into ``out_dir``.

    See the module docstring.
    """
    src, out = Path(source), Path(out_dir)
    return import_rows(fmt, src, out, read_jsonl(src), convert)
