"""Annotations: latest wins, review pass, reviewer, severity cycle, export to CSV and JSONL."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from review import Annotation, AnnotationStore, RunWatchError, export_annotations, next_severity
from tests.tui.conftest import frozen_clock


def test_latest_line_per_trace_wins_and_malformed_lines_are_skipped(batch_dir: Path) -> None:
    store = AnnotationStore(batch_dir, reviewer="ana", clock=frozen_clock)
    store.save(Annotation(trace_id="fx_ankle:2", verdict="pass", notes="first look"))
    with open(store.path, "a") as fh:
        fh.write("{torn line\n")
        fh.write('{"trace_id": "no-k", "verdict": "fail"}\n')
        fh.write('{"trace_id": "fx_ankle:2", "verdict": "maybe"}\n')
    store.save(Annotation(trace_id="fx_ankle:2", verdict="fail", notes="second look", severity="subtle_issue"))
    latest = store.load()
    assert store.skipped == 3 and "line 2" in store.warnings[0]
    assert latest["fx_ankle:2"].verdict == "fail" and latest["fx_ankle:2"].notes == "second look"


def test_review_pass_is_the_reviewers_highest(batch_dir: Path) -> None:
    path = batch_dir / "annotations.jsonl"
    path.write_text(json.dumps({"trace_id": "fx_ankle:0", "verdict": "pass", "reviewer": "ana", "review_pass": 2})
                    + "\n" + json.dumps({"trace_id": "fx_ankle:0", "verdict": "pass", "reviewer": "bo",
                                         "review_pass": 5}) + "\n")
    assert AnnotationStore(batch_dir, reviewer="ana").save(Annotation(trace_id="fx_ankle:1")).review_pass == 2
    assert AnnotationStore(batch_dir, reviewer="cy").save(Annotation(trace_id="fx_ankle:1")).review_pass == 1


def test_reviewer_defaults_to_user_then_reviewer(batch_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("USER", "dana")
    assert AnnotationStore(batch_dir).reviewer == "dana"
    monkeypatch.delenv("USER")
    assert AnnotationStore(batch_dir).reviewer == "reviewer"


def test_severity_cycle() -> None:
    seen = [None]
    for _ in range(4):
        seen.append(next_severity(seen[-1]))
    assert seen == [None, "clinician_would_notice", "subtle_issue", "cosmetic", None]


def test_export_writes_the_failing_notes_as_csv_and_jsonl(batch_dir: Path, tmp_path: Path) -> None:
    store = AnnotationStore(batch_dir, reviewer="ana", clock=frozen_clock)
    store.save(Annotation(trace_id="fx_chest_pain:1", verdict="pass", notes="oops"))
    store.save(Annotation(trace_id="fx_chest_pain:1", verdict="fail", notes="missed radiation, self care",
                          severity="clinician_would_notice"))
    store.save(Annotation(trace_id="fx_ankle:0", verdict="pass", notes="fine"))
    store.save(Annotation(trace_id="fx_headache:2", verdict="fail", notes="timed out"))

    out = tmp_path / "out" / "fails.csv"
    assert export_annotations(batch_dir, out) == 2
    rows = list(csv.DictReader(out.open()))
    assert [r["trace_id"] for r in rows] == ["fx_chest_pain:1", "fx_headache:2"]
    first = rows[0]
    assert first["scenario_id"] == "fx_chest_pain" and first["k"] == "1" and first["composite"] == "0.31"
    assert first["notes"] == "missed radiation, self care" and first["severity"] == "clinician_would_notice"
    assert first["safety_failures"] == "under-escalation: self_care given, emergency needed"
    assert first["termination"] == "assessment" and first["failure_mode"] == "" and first["reviewer"] == "ana"
    assert rows[1]["status"] == "error" and rows[1]["composite"] == ""

    out_jsonl = tmp_path / "all.jsonl"
    assert export_annotations(batch_dir, out_jsonl, only="all", fmt="jsonl") == 3
    items = [json.loads(line) for line in out_jsonl.read_text().splitlines()]
    assert [i["trace_id"] for i in items] == ["fx_ankle:0", "fx_chest_pain:1", "fx_headache:2"]
    assert items[1]["safety_failures"] == ["under-escalation: self_care given, emergency needed"]
    assert items[1]["passed"] is False and items[0]["verdict"] == "pass"


def test_export_errors_name_the_path_and_the_fix(batch_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(RunWatchError, match="no such run directory"):
        export_annotations(tmp_path / "missing", tmp_path / "x.csv")
    with pytest.raises(RunWatchError, match=r"annotations\.jsonl: no annotations yet\. Review the run first"):
        export_annotations(batch_dir, tmp_path / "x.csv")


def test_the_export_columns_are_the_rows_fields() -> None:
    from review._annotations import EXPORT_COLUMNS, ExportRow

    assert list(ExportRow.__annotations__) == list(EXPORT_COLUMNS)
