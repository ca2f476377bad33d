"""RunState: incremental polling, malformed lines, scale, worst-of-K, gate markers, ETA; newest_run."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from review import RunState, RunWatchError, check_run_dir, newest_run
from sim.records import EncounterFinished, EncounterStarted, RunStarted, TurnRecorded
from tests.tui.runs import T0, batch_run, jsonl, meta, record_for, summary
from tui._format import EncounterFilter, duration, spark


def _new_run(tmp_path: Path, *, total: int = 4, k: int = 2) -> Path:
    run = tmp_path / "r1"
    run.mkdir()
    (run / "run.json").write_text(meta("r1", ["fx_chest_pain", "fx_ankle"], k=k).model_dump_json())
    jsonl(run / "events.jsonl", [RunStarted(run_id="r1", model="m", scenarios=["fx_chest_pain", "fx_ankle"], k=k,
                                            total=total, t=T0)])
    return run


def _append(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


def test_polls_only_new_complete_lines(tmp_path: Path) -> None:
    run = _new_run(tmp_path)
    events = run / "events.jsonl"
    state = RunState(run, clock=lambda: T0 + 60)
    res = state.poll()
    assert state.total == 4 and state.done == 0 and res.overview and not res.new
    assert state.run_id == "r1" and state.channel == "text"

    start = EncounterStarted(scenario_id="fx_ankle", k=0, t=T0 + 1).model_dump_json()
    turn = TurnRecorded(scenario_id="fx_ankle", k=0, index=0, speaker="patient", text="my ankle",
                        t=T0 + 2).model_dump_json()
    _append(events, start + "\n" + turn[:25])  # the turn line is still being written
    res = state.poll()
    assert res.new == [("fx_ankle", 0)]
    enc = state.encounters[("fx_ankle", 0)]
    assert enc.status == "running" and enc.turns == [] and state.running_keys == [("fx_ankle", 0)]
    assert state.skipped == 0  # a half-written line is not malformed, just not finished
    assert not state.poll().any

    _append(events, turn[25:] + "\n")
    res = state.poll()
    assert res.changed == {("fx_ankle", 0)} and not res.new
    assert [t.text for t in enc.turns] == ["my ankle"]

    _append(events, EncounterFinished(scenario_id="fx_ankle", k=0, composite=0.5, termination="assessment",
                                      t=T0 + 30).model_dump_json() + "\n")
    state.poll()
    assert enc.status == "done" and enc.composite == 0.5 and enc.passed is None and state.done == 1
    assert state.aggregate == 0.5 and not state.aggregate_final and state.gate_status == "PENDING"

    rec = record_for("fx_ankle", 0, T0 + 29)  # the full record arrives: transcript and verdict from it
    jsonl(run / "results.jsonl", [rec], mode="a")
    state.poll()
    assert enc.record is not None and enc.passed is True and enc.composite == 0.78
    assert [t.text for t in enc.turns] == [t.text for t in rec.result.turns] and enc.event_turns == {}
    assert state.done == 1 and state.aggregate == pytest.approx(0.78)


def test_malformed_and_truncated_lines_are_skipped_with_a_warning(tmp_path: Path) -> None:
    run = _new_run(tmp_path)
    good = EncounterStarted(scenario_id="fx_ankle", k=1, t=T0 + 1).model_dump_json()
    _append(run / "events.jsonl", "{not json\n" + '{"type": "turn", "t": 1}\n' + "\n" + good + "\n")
    _append(run / "results.jsonl", '{"scenario_id": "fx_ankle", "k": 1, "status": "o\n')
    state = RunState(run)
    res = state.poll()
    assert state.skipped == 3
    assert res.new == [("fx_ankle", 1)]
    assert any(w.startswith("events.jsonl line 2: skipped") for w in state.warnings)
    assert any(w.startswith("events.jsonl line 3: skipped") for w in state.warnings)
    assert any(w.startswith("results.jsonl line 1: skipped, not an encounter record") for w in state.warnings)
    (run / "summary.json").write_text("{broken")
    state.poll()  # an unreadable summary is a warning, never an exception
    assert state.summary is None and any("summary.json: unreadable" in w for w in state.warnings)


def test_later_results_line_supersedes_and_a_retry_is_not_ended_by_the_old_record(tmp_path: Path) -> None:
    run = _new_run(tmp_path)
    from sim.records import EncounterRecord

    err = EncounterRecord(scenario_id="fx_ankle", k=0, status="error", error="boom", recorded_at=T0 + 5)
    jsonl(run / "results.jsonl", [err])
    jsonl(run / "events.jsonl", [EncounterStarted(scenario_id="fx_ankle", k=0, t=T0 + 100)], mode="a")
    state = RunState(run)
    state.poll()
    enc = state.encounters[("fx_ankle", 0)]
    assert enc.status == "running" and enc.record == err  # the retry goes on
    jsonl(run / "results.jsonl", [record_for("fx_ankle", 0, T0 + 110)], mode="a")
    state.poll()
    assert enc.status == "done" and enc.composite == 0.78 and state.errors == 0 and state.done == 1


def test_thousands_of_encounters_poll_fast(tmp_path: Path) -> None:
    run = tmp_path / "big"
    run.mkdir()
    scenarios = [f"s{i:04d}" for i in range(1000)]
    (run / "run.json").write_text(meta("big", ["fx_ankle"], k=5).model_dump_json())
    lines = [RunStarted(run_id="big", model="m", scenarios=scenarios, k=5, total=5000, t=T0).model_dump_json()]
    for i, sid in enumerate(scenarios):
        for k in range(5):
            lines.append(EncounterStarted(scenario_id=sid, k=k, t=T0 + i).model_dump_json())
            lines.append(EncounterFinished(scenario_id=sid, k=k, composite=(i * 7 + k * 13) % 100 / 100,
                                           termination="assessment", t=T0 + i + 1).model_dump_json())
    (run / "events.jsonl").write_text("\n".join(lines) + "\n")
    state = RunState(run, clock=lambda: T0 + 2000)
    started = time.perf_counter()
    res = state.poll()
    first = time.perf_counter() - started
    assert state.done == 5000 and len(res.new) == 5000 and state.total == 5000
    assert first < 2.0, f"first poll of 10,001 lines took {first:.2f} s"
    assert sum(e.worst for e in state.encounters.values()) == 1000  # one worst per scenario
    started = time.perf_counter()
    for _ in range(20):
        assert not state.poll().any
    assert (time.perf_counter() - started) / 20 < 0.05  # an idle poll does not re-read anything
    jsonl(run / "events.jsonl", [EncounterStarted(scenario_id="s0000", k=5, t=T0 + 3000)], mode="a")
    started = time.perf_counter()
    res = state.poll()
    assert res.new == [("s0000", 5)] and time.perf_counter() - started < 0.1


def test_worst_of_k_and_gate_markers(batch_dir: Path) -> None:
    state = RunState(batch_dir)
    state.poll()
    worst = {key for key, e in state.encounters.items() if e.worst}
    assert worst == {("fx_chest_pain", 1), ("fx_ankle", 2), ("fx_headache", 1)}
    assert state.worst_key("fx_chest_pain") == ("fx_chest_pain", 1)
    gated = {key for key, e in state.encounters.items() if e.gate}
    assert gated == {("fx_chest_pain", 0), ("fx_chest_pain", 1), ("fx_chest_pain", 2)}  # the summary's gate
    assert state.gate_status == "TRIGGERED" and state.gate_reasons == {
        "fx_chest_pain": "mean escalation safety 0.33 < 0.5"}
    assert state.aggregate == 0.5 and state.aggregate_final
    assert state.suite_means(lambda _s: None) == [("safety", pytest.approx(0.5733, abs=1e-3)),
                                                  ("triage", pytest.approx(0.7733, abs=1e-3))]
    assert state.encounters[("fx_headache", 2)].status == "error" and state.errors == 1
    assert state.is_finished and state.eta() == 0.0


def test_gate_marker_before_the_summary_comes_from_safety_failures(running_dir: Path) -> None:
    state = RunState(running_dir, clock=lambda: T0 + 120)
    state.poll()
    assert state.gate_status == "PENDING" and state.done == 7 and state.running_keys == [("fx_headache", 1)]
    assert state.throughput() == pytest.approx(3.5) and state.eta() == pytest.approx(2 / 3.5 * 60)
    gated = {key for key, e in state.encounters.items() if e.gate}
    assert gated == {("fx_chest_pain", 1), ("fx_chest_pain", 2)}
    (running_dir / "summary.json").write_text(summary().model_dump_json())
    res = state.poll()
    assert ("fx_chest_pain", 0) in res.changed and state.encounters[("fx_chest_pain", 0)].gate
    assert state.gate_status == "TRIGGERED"


def test_throughput_and_eta_use_the_injected_clock(tmp_path: Path) -> None:
    run = _new_run(tmp_path, total=10, k=5)
    evs = []
    for k in range(2):
        evs += [EncounterStarted(scenario_id="fx_ankle", k=k, t=T0 + 1),
                EncounterFinished(scenario_id="fx_ankle", k=k, composite=0.5, termination="assessment", t=T0 + 30)]
    evs.append(EncounterStarted(scenario_id="fx_ankle", k=2, t=T0 + 31))
    jsonl(run / "events.jsonl", evs, mode="a")
    now = [T0 + 60.0]
    state = RunState(run, clock=lambda: now[0])
    state.poll()
    assert state.throughput() == pytest.approx(2.0)  # 2 finished in the first minute
    assert state.eta() == pytest.approx(240.0)  # 8 left at 2 a minute
    assert state.elapsed() == pytest.approx(60.0)
    now[0] = T0 + 120.0
    assert state.throughput() == pytest.approx(1.0) and state.eta() == pytest.approx(480.0)
    assert duration(state.eta()) == "8:00" and duration(3725) == "1:02:05" and duration(None) == "—"


def test_run_json_may_appear_later_and_replaced_files_are_reread(tmp_path: Path, batch_dir: Path) -> None:
    late = tmp_path / "late"
    state = RunState(late)
    assert not state.poll().any and state.total is None and state.run_id == "late"
    shutil.copytree(batch_dir, late)
    res = state.poll()
    assert state.meta is not None and state.done == 9 and len(res.new) == 9
    (late / "events.jsonl").write_text((late / "events.jsonl").read_text().splitlines()[0] + "\n")
    (late / "results.jsonl").write_text("")
    res = state.poll()
    assert res.reset and state.done == 0 and state.encounters == {}


ANKLE_FAILURE = {("fx_ankle", 2): ["under-escalation: routine given, urgent needed"]}


@pytest.mark.parametrize("finished", [True, False], ids=["finished", "in-progress"])
def test_a_safety_failure_outside_the_gate_is_marked_safety_not_gate(tmp_path: Path, finished: bool) -> None:
    """fx_ankle (triage suite) does not feed the safety gate: its safety failure is "safety"; fx_chest_pain
    (safety suite) does: its failures are "gate", with or without summary.json."""
    state = RunState(batch_run(tmp_path, finished=finished, safety=ANKLE_FAILURE))
    state.poll()
    ankle = state.encounters[("fx_ankle", 2)]
    assert ankle.safety_failures == ANKLE_FAILURE[("fx_ankle", 2)]
    assert not ankle.gate and ankle.marker == "safety"
    for k in (1, 2):
        chest = state.encounters[("fx_chest_pain", k)]
        assert chest.safety_failures and chest.gate and chest.marker == "gate"
    assert state.encounters[("fx_chest_pain", 0)].marker == ("gate" if finished else None)  # the summary's gate
    assert state.encounters[("fx_ankle", 0)].marker is None and not state.encounters[("fx_ankle", 0)].gate
    assert state.feeds_gate("fx_chest_pain") is True and state.feeds_gate("fx_ankle") is False
    encs = list(state.encounters.values())
    assert [e.trace_id for e in encs if EncounterFilter("gate").matches(e)] == (
        ["fx_chest_pain:0", "fx_chest_pain:1", "fx_chest_pain:2"] if finished else
        ["fx_chest_pain:1", "fx_chest_pain:2"])
    assert [e.trace_id for e in encs if EncounterFilter("safety").matches(e)] == [
        "fx_chest_pain:1", "fx_chest_pain:2", "fx_ankle:2"]


def test_which_scenarios_feed_the_gate_is_the_scorers_rule() -> None:
    """The catalog asks scorers' own gates() rule, for critical imaging items as for the safety suite."""
    from review import ScenarioCatalog
    from scenarios import load_library
    from scorers import gates

    library = [s.scenario for s in load_library()]
    assert any(s.suite == "imaging" and gates(s) for s in library)  # critical imaging items are in it
    assert any(s.suite == "imaging" and not gates(s) for s in library)
    catalog = ScenarioCatalog()
    for s in library:
        assert catalog.feeds_gate(s.id) == gates(s), s.id
    assert catalog.feeds_gate("no_such_scenario") is None


def test_filter_terms(batch_dir: Path) -> None:
    state = RunState(batch_dir)
    state.poll()
    encs = list(state.encounters.values())

    def pick(text: str, verdicts: dict[str, str] | None = None) -> list[str]:
        f = EncounterFilter(text)
        return [e.trace_id for e in encs if f.matches(e, (verdicts or {}).get)]

    assert pick("ankle") == ["fx_ankle:0", "fx_ankle:1", "fx_ankle:2"]
    assert pick("status:error") == ["fx_headache:2"]
    assert pick("gate") == ["fx_chest_pain:0", "fx_chest_pain:1", "fx_chest_pain:2"]
    assert pick("fail") == ["fx_chest_pain:1", "fx_chest_pain:2", "fx_ankle:2"]
    assert pick("gate fail") == ["fx_chest_pain:1", "fx_chest_pain:2"]
    assert pick("worst k:1") == ["fx_chest_pain:1", "fx_headache:1"]
    assert pick("pass headache") == ["fx_headache:0", "fx_headache:1"]
    assert pick("review:fail", {"fx_ankle:2": "fail"}) == ["fx_ankle:2"]
    assert len(pick("review:none", {"fx_ankle:2": "fail"})) == 8
    assert len(pick("")) == 9 and not EncounterFilter("  ")
    assert spark([0.0, 0.5, 1.0, None]) == "▁▅█·"


def test_missing_or_non_run_dir_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RunWatchError, match=r"nope: no such run directory\. Give the folder"):
        check_run_dir(tmp_path / "nope")
    (tmp_path / "plain").mkdir()
    with pytest.raises(RunWatchError, match=r"plain: not a run directory \(no run\.json\)"):
        check_run_dir(tmp_path / "plain")


def test_newest_run_picks_the_latest_run_json(tmp_path: Path) -> None:
    with pytest.raises(RunWatchError, match="no such folder of runs"):
        newest_run(tmp_path / "runs")
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "not-a-run").mkdir()
    with pytest.raises(RunWatchError, match="holds no run"):
        newest_run(runs)
    for _i, name in enumerate(["b-old", "a-new", "c-mid"]):
        (runs / name).mkdir()
        (runs / name / "run.json").write_text("{}")
        stamp = T0 + {"b-old": 0, "a-new": 200, "c-mid": 100}[name]
        os.utime(runs / name / "run.json", (stamp, stamp))
    assert newest_run(runs) == runs / "a-new"


def test_tui_imports_only_the_readers_it_may_use() -> None:
    """tui/ reads run directories: it never imports audio or anything that runs an encounter."""
    import ast

    allowed_project = {"sim.records", "scorers", "scenarios", "review", "tui"}
    project = {"sim", "scorers", "scenarios", "audio", "imaging", "review", "tui", "tests", "bench"}
    for module in (Path(__file__).parents[2] / "tui").rglob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            for name in names:
                if name.split(".")[0] in project:
                    assert any(name == a or name.startswith(a + ".") for a in allowed_project), \
                        f"{module.name} imports {name}"


def test_a_persona_sweep_shows_each_scenarios_planned_encounters(tmp_path: Path) -> None:
    """Issue 18: in a sweep a scenario has K per persona it runs under (run_started's ``planned``), not K."""
    from tui._widgets import reliability_row

    run = tmp_path / "r1"
    run.mkdir()
    (run / "run.json").write_text(meta("r1", ["fx_chest_pain", "fx_ankle"], k=2).model_dump_json())
    jsonl(run / "events.jsonl", [RunStarted(run_id="r1", model="m", scenarios=["fx_chest_pain", "fx_ankle"], k=2,
                                            total=8, planned={"fx_chest_pain": 6, "fx_ankle": 2}, t=T0)])
    state = RunState(run, clock=lambda: T0 + 60)
    state.poll()
    assert state.total == 8 and state.planned_for("fx_chest_pain") == 6 and state.planned_for("fx_ankle") == 2
    assert reliability_row(state, "fx_chest_pain", "safety")[2] == "0/6"
    assert reliability_row(state, "fx_ankle", "triage")[2] == "0/2"
