"""Human review notes: ``runs/<id>/annotations.jsonl``, kept apart from the immutable results.

One JSON object per line::

    {"trace_id": "acs_chest_pain:1", "verdict": "fail", "notes": "...", "failure_mode": null,
     "severity": "subtle_issue", "reviewer": "ana", "timestamp": 1795311108.2, "review_pass": 1}

``verdict`` is "pass", "fail" or null; ``severity`` one of ``SEVERITIES`` or null; ``failure_mode``
stays null until the notes are open-coded into failure modes (``export_annotations`` writes the
failing ones for that). ``code_source`` says who chose the ``failure_mode``: "person" (typed or picked in
the coding screen) or "accepted_suggestion" (a judge's suggestion a person accepted with ``a``); it is left
out of lines without one (older lines, uncoded ones). Each save appends one line, flushed and fsync'd;
when reading, the latest line per trace id wins and malformed lines are skipped. ``review_pass`` is the highest pass the
reviewer already has in the file, or 1.
"""

from __future__ import annotations

import csv
import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Literal, TypedDict

from review._rundir import RunWatchError, check_run_dir
from review._state import RunState, Status, parse_trace_id
from scenarios import FileProblem, parse_json_checked
from sim.records import RunLayout

SEVERITIES: tuple[str, ...] = ("clinician_would_notice", "subtle_issue", "cosmetic")
VERDICTS: tuple[str, ...] = ("pass", "fail")
CODE_SOURCES: tuple[str, ...] = ("person", "accepted_suggestion")


def default_reviewer() -> str:
    return os.environ.get("USER") or "reviewer"


@dataclass(frozen=True)
class Annotation:
    trace_id: str
    verdict: Literal["pass", "fail"] | None = None
    notes: str = ""
    failure_mode: str | None = None
    severity: str | None = None
    reviewer: str = "reviewer"
    timestamp: float = 0.0
    review_pass: int = 1
    code_source: Literal["person", "accepted_suggestion"] | None = None

    def to_json(self) -> str:
        """The annotation as one line of annotations.jsonl (JSON, non-ASCII kept; no ``code_source`` if None)."""
        data = asdict(self)
        if data["code_source"] is None:
            del data["code_source"]
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_obj(cls, obj: object) -> Annotation:
        """Validate one decoded line; ValueError says what is wrong."""
        if not isinstance(obj, dict):
            raise ValueError("not a JSON object")
        tid = obj.get("trace_id")
        if not isinstance(tid, str) or parse_trace_id(tid) is None:
            raise ValueError("trace_id must be '<scenario_id>:<k>'")
        verdict = obj.get("verdict")
        if verdict not in (None, *VERDICTS):
            raise ValueError(f"verdict {verdict!r} is not pass, fail or null")
        severity = obj.get("severity")
        if severity not in (None, *SEVERITIES):
            raise ValueError(f"severity {severity!r} is not one of {', '.join(SEVERITIES)} or null")
        notes = obj.get("notes") or ""
        failure_mode = obj.get("failure_mode")
        reviewer = obj.get("reviewer") or "reviewer"
        timestamp = obj.get("timestamp", 0.0)
        review_pass = obj.get("review_pass", 1)
        if not isinstance(notes, str) or not (failure_mode is None or isinstance(failure_mode, str)) \
                or not isinstance(reviewer, str):
            raise ValueError("notes, failure_mode and reviewer must be strings")
        if not isinstance(timestamp, int | float) or isinstance(timestamp, bool) or not math.isfinite(timestamp) \
                or not isinstance(review_pass, int) or isinstance(review_pass, bool):
            raise ValueError("timestamp must be a number and review_pass an integer")
        code_source = obj.get("code_source")
        if code_source not in (None, *CODE_SOURCES):
            raise ValueError(f"code_source {code_source!r} is not one of {', '.join(CODE_SOURCES)} or null")
        return cls(trace_id=tid, verdict=verdict, notes=notes, failure_mode=failure_mode, severity=severity,
                   reviewer=reviewer, timestamp=float(timestamp), review_pass=review_pass, code_source=code_source)


def next_severity(current: str | None) -> str | None:
    """The severity tag after ``current`` in the cycle SEVERITIES..., None."""
    cycle: list[str | None] = [*SEVERITIES, None]
    return cycle[(cycle.index(current) + 1) % len(cycle)] if current in cycle else SEVERITIES[0]


class AnnotationStore:
    """Reads and appends ``annotations.jsonl`` of one run directory."""

    def __init__(self, run_dir: Path, *, reviewer: str | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.run_dir = Path(run_dir)
        self.reviewer = reviewer or default_reviewer()
        self.clock = clock
        self.skipped = 0
        self.warnings: list[str] = []

    @property
    def path(self) -> Path:
        """The run's annotations.jsonl."""
        return RunLayout(self.run_dir).annotations

    def read_all(self) -> list[Annotation]:
        """Every well-formed line in file order; malformed ones are counted in ``skipped``."""
        self.skipped, self.warnings = 0, []
        out: list[Annotation] = []
        try:
            fh = open(self.path, encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return out
        with fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    out.append(Annotation.from_obj(parse_json_checked(line)))
                except (ValueError, FileProblem) as exc:  # FileProblem: not JSON, too deep, NaN
                    self.skipped += 1
                    self.warnings.append(f"{RunLayout.ANNOTATIONS_FILE} line {n}: skipped, {str(exc)[:120]}")
        return out

    def load(self) -> dict[str, Annotation]:
        """The latest annotation per trace id."""
        return {a.trace_id: a for a in self.read_all()}

    def review_pass(self) -> int:
        """This reviewer's pass: the highest pass they already have in the file, or 1."""
        return max((a.review_pass for a in self.read_all() if a.reviewer == self.reviewer), default=1)

    def save(self, annotation: Annotation) -> Annotation:
        """Stamp ``annotation`` with reviewer, time and pass, append it (flush + fsync) and return it."""
        saved = replace(annotation, reviewer=self.reviewer, timestamp=float(self.clock()),
                        review_pass=self.review_pass())
        self.run_dir.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(saved.to_json() + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        return saved


class ExportRow(TypedDict):
    """One exported annotation joined with its encounter (None where the run has no such encounter)."""

    trace_id: str
    scenario_id: str | None
    k: int | None
    verdict: Literal["pass", "fail"] | None
    severity: str | None
    notes: str
    failure_mode: str | None
    composite: float | None
    passed: bool | None
    safety_failures: list[str]
    termination: str | None
    status: Status | None
    reviewer: str
    review_pass: int
    timestamp: float


EXPORT_COLUMNS = ("trace_id", "scenario_id", "k", "verdict", "severity", "notes", "failure_mode", "composite",
                  "passed", "safety_failures", "termination", "status", "reviewer", "review_pass", "timestamp")


def export_annotations(run_dir: Path, out: Path, *, only: Literal["fail", "all"] = "fail",
                       fmt: Literal["csv", "jsonl"] = "csv") -> int:
    """Write the latest annotation per trace id, joined with its encounter, to ``out``; returns the rows.

    ``only="fail"`` keeps the annotations whose verdict is fail (the ones to open-code into failure
    modes); ``"all"`` keeps every one. CSV joins safety failures with "; "; JSONL keeps the list.
    """
    run_dir = Path(run_dir)
    try:
        check_run_dir(run_dir)
    except RunWatchError as exc:
        raise RunWatchError(f"annotations export: {exc}") from None
    store = AnnotationStore(run_dir)
    if not store.path.is_file():
        raise RunWatchError(
            f"{store.path}: no annotations yet. Review the run first: open it with `encsim watch {run_dir}`, "
            "press enter on an encounter, 1 (pass) or 2 (fail), n to write a note, s to save; then export again.")
    if only not in ("fail", "all") or fmt not in ("csv", "jsonl"):
        raise ValueError(f"only must be 'fail' or 'all' and fmt 'csv' or 'jsonl' (got {only!r}, {fmt!r})")
    state = RunState(run_dir)
    state.poll()
    rows: list[ExportRow] = []
    latest = store.load()
    for tid in sorted(latest, key=lambda t: (parse_trace_id(t) or ("", 0))):
        ann = latest[tid]
        if only == "fail" and ann.verdict != "fail":
            continue
        key = parse_trace_id(tid)
        enc = state.encounters.get(key) if key is not None else None
        rows.append({
            "trace_id": tid, "scenario_id": key[0] if key else None, "k": key[1] if key else None,
            "verdict": ann.verdict, "severity": ann.severity, "notes": ann.notes, "failure_mode": ann.failure_mode,
            "composite": enc.composite if enc else None, "passed": enc.passed if enc else None,
            "safety_failures": list(enc.safety_failures) if enc else [],
            "termination": enc.termination if enc else None, "status": enc.status if enc else None,
            "reviewer": ann.reviewer, "review_pass": ann.review_pass, "timestamp": ann.timestamp,
        })
    out = Path(out)
    if out.parent != Path("."):
        out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="") as fh:
        if fmt == "jsonl":
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        else:
            writer = csv.DictWriter(fh, fieldnames=list(EXPORT_COLUMNS))
            writer.writeheader()
            for row in rows:
                writer.writerow({**row, "safety_failures": "; ".join(row["safety_failures"]),
                                 "composite": "" if row["composite"] is None else row["composite"],
                                 "passed": "" if row["passed"] is None else row["passed"]})
    return len(rows)
