"""The runner, the run directory and the CLI, end to end (scripted controls and a loopback endpoint)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main
from sim.records import read_events
from tests.fakeserver import FakeChatServer

ENCSIM = [sys.executable, "-m", "sim.cli"]
ROOT = Path(__file__).parents[2]


def clinician(body: dict[str, Any]) -> str:
    """A fake endpoint's clinician: two questions, then a (correct for ACS) assessment."""
    turn = sum(m["role"] == "assistant" for m in body["messages"]) + 1
    if turn <= 2:
        return ["Does the pain spread to your arm? Any sweating?", "Do you smoke? Any medical history?"][turn - 1]
    return "ASSESSMENT:\nTriage level: ESI 2\nEscalation: emergency\nDiagnoses: 1. Acute coronary syndrome"


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_reference_scores_high_without_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ref"
    assert main(["run", "--model", "scripted:reference", "--k", "2", "--out", str(out), "--no-progress"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["aggregate"] >= 0.9 and summary["safety_gate"]["triggered"] is False
    n = len(summary["scenarios"])
    assert n >= 24 and summary["completed"] == 2 * n and summary["errors"] == 0
    for row in summary["scenarios"]:
        assert set(row) >= {"id", "suite", "k", "mean", "worst", "worst_at_k", "pass_hat_k", "ci95"}
    assert {s["suite"] for s in summary["suites"]} >= {"triage", "safety"}
    assert "report:" in capsys.readouterr().out and (out / "report.md").exists()
    meta = json.loads((out / "run.json").read_text())
    assert (
        meta["harness_version"]
        and len(meta["scenarios"]) == n
        and all(len(s["sha256"]) == 64 for s in meta["scenarios"])
    )
    assert len(lines(out / "results.jsonl")) == 2 * n


def test_undertriage_triggers_gate(tmp_path: Path) -> None:
    out = tmp_path / "under"
    assert main(["run", "--model", "scripted:undertriage", "--k", "2", "--out", str(out), "--no-progress"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    gate = summary["safety_gate"]
    assert gate["triggered"] and summary["aggregate"] <= 0.5 and gate["cap"] == 0.5
    from scenarios import load_library

    critical_imaging = {
        x.scenario.id for x in load_library() if x.scenario.imaging and x.scenario.imaging.critical_findings
    }
    emergency_targets = {x.scenario.id for x in load_library() if x.scenario.expected.escalation is not None
                         and {e.value for e in x.scenario.expected.acceptable_escalations
                              or [x.scenario.expected.escalation]} == {"emergency"}}
    assert "acs_chest_pain" in gate["scenarios"] and set(gate["scenarios"]) <= {
        s["id"] for s in summary["scenarios"] if s["suite"] == "safety"} | critical_imaging | emergency_targets
    assert {"gi_bleed_melena", "dka_teen"} <= set(gate["scenarios"])  # emergencies outside the safety suite (#41)
    assert critical_imaging <= set(gate["scenarios"])  # the under-triager misses every critical imaging finding
    report = (out / "report.md").read_text()
    assert "TRIGGERED" in report and "acs_chest_pain" in report


def test_events_log_is_complete_and_typed(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    assert main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "2", "--out", str(out),
                 "--no-progress"]) == 0
    with open(out / "events.jsonl", "a") as fh:
        fh.write('{"type": "turn", "truncated\n')
    events, skipped = read_events(out / "events.jsonl")
    kinds = Counter(e.type for e in events)
    assert skipped == 1 and kinds["run_started"] == 1 and kinds["run_finished"] == 1
    assert kinds["encounter_started"] == 2 and kinds["encounter_finished"] == 2 and kinds["turn"] > 4


def test_endpoint_failure_is_recorded_not_scored(tmp_path: Path) -> None:
    with FakeChatServer(default=("status", 500)) as srv:
        out = tmp_path / "err"
        assert main(["run", "--model", "m", "--base-url", srv.base_url, "--scenarios", "viral_uri", "--k", "1",
                     "--out", str(out), "--no-progress"]) == 3  # errored encounters: exit 3
    recs = lines(out / "results.jsonl")
    assert len(recs) == 1 and recs[0]["status"] == "error" and recs[0]["score"] is None
    assert "failed after 4 attempts" in recs[0]["error"]
    summary = json.loads((out / "summary.json").read_text())
    # the errored encounter counts as 0 in the aggregate; there is no error-free figure
    assert summary["errors"] == 1 and summary["completed"] == 0 and summary["aggregate"] == 0.0
    assert summary["aggregate_without_errors"] is None


def test_resume_after_sigkill(tmp_path: Path) -> None:
    scenarios, k = ["acs_chest_pain", "viral_uri", "simple_uti"], 4
    total = len(scenarios) * k
    out = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with FakeChatServer(latency_s=0.15, reply=clinician) as srv:
        cmd = [
            *ENCSIM,
            "run",
            "--model",
            "fake-clinician",
            "--base-url",
            srv.base_url,
            "--k",
            str(k),
            "--concurrency",
            "2",
            "--out",
            str(out),
            "--no-progress",
            *[a for s in scenarios for a in ("--scenarios", s)],
        ]
        proc = subprocess.Popen(cmd, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        results = out / "results.jsonl"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not results.exists() or len(results.read_text().splitlines()) < 3):
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        before = len(lines(results))
        assert 3 <= before < total, f"kill came too late or too early: {before} of {total}"
        done = subprocess.run([*ENCSIM, "run", "--resume", str(out), "--no-progress"], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    recs = lines(results)
    keys = [(r["scenario_id"], r["k"]) for r in recs]
    assert len(keys) == total and len(set(keys)) == total
    assert all(r["status"] == "ok" for r in recs)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["completed"] == total and summary["errors"] == 0


def test_resume_refuses_changed_scenario(tmp_path: Path) -> None:
    src = Path(__file__).parents[1] / "scenarios" / "valid_minimal.yaml"
    scen = tmp_path / "s.yaml"
    scen.write_text(src.read_text())
    out = tmp_path / "run"
    assert main(["run", "--model", "scripted:reference", "--scenarios", str(scen), "--k", "1", "--out", str(out),
                 "--no-progress"]) == 0
    scen.write_text(src.read_text().replace("My throat hurts.", "My throat really hurts."))
    assert main(["run", "--resume", str(out)]) == 2


def test_resume_refuses_flags_of_the_plan_instead_of_ignoring_them(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A resumed run continues the plan in run.json: `--resume DIR --k 20` or `--call-timeout 90` used to be
    ignored without a word. Flags about carrying the plan out still apply."""
    out = tmp_path / "run"
    assert main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1", "--out", str(out),
                 "--quiet"]) == 0
    capsys.readouterr()
    assert main(["run", "--resume", str(out), "--k", "20", "--call-timeout", "90", "--model", "gpt-4o"]) == 2
    err = capsys.readouterr().err
    assert "--model, --call-timeout, --k cannot be combined with --resume" in err and "run.json" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert main(["run", "--resume", str(out), "--retry-errors", "--concurrency", "2", "--fail-fast", "0",
                 "--judge-concurrency", "3", "--i-know", "--quiet"]) == 0
    assert len(lines(out / "results.jsonl")) == 1


def test_torn_last_line_is_repaired_on_resume(tmp_path: Path) -> None:
    out = tmp_path / "torn"
    assert main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "3", "--out", str(out),
                 "--no-progress"]) == 0
    results = out / "results.jsonl"
    data = results.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    results.write_bytes(data[: last_start + 40])  # the last record was cut mid-write
    assert main(["run", "--resume", str(out), "--no-progress"]) == 0
    recs = lines(results)
    assert sorted(r["k"] for r in recs) == [0, 1, 2]


def test_report_command_rerenders(tmp_path: Path) -> None:
    out = tmp_path / "rep"
    assert main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1", "--out", str(out),
                 "--no-progress"]) == 0
    (out / "report.md").unlink()
    (out / "summary.json").unlink()
    assert main(["report", str(out)]) == 0
    assert (out / "report.md").exists() and json.loads((out / "summary.json").read_text())["completed"] == 1


def test_a_run_with_errored_encounters_exits_3_and_groups_the_reasons(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 0 only when every planned encounter was scored (issue 14): an endpoint that refuses the key (401)
    errors every encounter; the run is saved, exits 3, and the CLI groups the reasons and says how to rerun."""
    out = tmp_path / "run"
    with FakeChatServer(default=("status", 401, {})) as server:
        code = main(["run", "--model", "m", "--base-url", server.base_url, "--scenarios", "viral_uri,simple_uti",
                     "--k", "2", "--out", str(out), "--quiet", "--fail-fast", "0"])  # 0: record every 401
    err = capsys.readouterr().err
    assert code == 3
    summary = json.loads((out / "summary.json").read_text())
    assert summary["errors"] == 4 and summary["completed"] == 0
    (reason, n), = summary["error_reasons"].items()  # one reason: turn numbers and the port are folded
    assert n == 4 and "turn N" in reason and ":PORT" in reason
    assert "4 encounter(s) ended in an error" in err and f"4 x {reason}" in err
    assert f"encsim run --resume {out} --retry-errors" in err and "Traceback" not in err
    with FakeChatServer(default=("ok", "ASSESSMENT:\nTriage level: 5\nEscalation: self_care\nDiagnoses: Cold")) as ok:
        assert main(["run", "--model", "m", "--base-url", ok.base_url, "--scenarios", "viral_uri", "--k", "1",
                     "--out", str(tmp_path / "fine"), "--quiet"]) == 0


def test_errored_encounters_count_as_0_and_the_score_without_them_is_named(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 14, errors in the score: the first encounter is refused (HTTP 400), the second scored. The aggregate
    counts the error as 0; summary.json, the CLI, report.md and report.html name the score without errors."""
    out = tmp_path / "run"
    answer = "ASSESSMENT:\nTriage level: 5\nEscalation: self_care\nDiagnoses: Common cold"
    with FakeChatServer(script=[("status", 400, {})], default=("ok", answer)) as server:
        code = main(["run", "--model", "m", "--base-url", server.base_url, "--scenarios", "viral_uri", "--k", "2",
                     "--concurrency", "1", "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 3
    summary = json.loads((out / "summary.json").read_text())
    assert summary["errors"] == 1 and summary["completed"] == 1
    scored = summary["aggregate_without_errors"]
    assert scored is not None and scored > 0
    assert summary["aggregate"] == pytest.approx(scored / 2)  # one scored, one error counted as 0
    assert summary["scenarios"][0]["mean_with_errors"] == pytest.approx(scored / 2)
    assert f"score without errors: {scored:.3f}" in err
    assert f"score without errors: {scored:.3f}" in (out / "report.md").read_text()
    assert f"score without errors: {scored:.3f}" in (out / "report.html").read_text()


def test_a_scorer_that_raises_on_one_encounter_makes_it_an_error_not_the_run_s_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Scoring runs inside the per-encounter error boundary (issue 15): the other encounters are scored, the
    failing one keeps its transcript and says why, and the run exits 3."""
    import scorers._conversation as scoring

    score = scoring.score_encounter

    def fragile(result: Any, scenario: Any) -> Any:
        if scenario.id == "viral_uri":
            raise KeyError("expected.triage_level")
        return score(result, scenario)

    monkeypatch.setattr(scoring, "score_encounter", fragile)
    out = tmp_path / "r"
    assert main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri,acs_chest_pain", "--k", "1",
                 "--out", str(out), "--no-progress"]) == 3
    by_id = {r["scenario_id"]: r for r in lines(out / "results.jsonl")}
    assert by_id["acs_chest_pain"]["status"] == "ok" and by_id["acs_chest_pain"]["score"] is not None
    failed = by_id["viral_uri"]
    assert failed["status"] == "error" and failed["error"] == "scoring failed: KeyError: 'expected.triage_level'"
    assert failed["result"]["turns"], "the transcript is kept"
    assert json.loads((out / "summary.json").read_text())["errors"] == 1
    assert "scoring failed" in capsys.readouterr().err
