"""The dashboard app driven by Textual's pilot: every screen and every key, live updates, the job."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from rich.text import Text
from textual.binding import Binding

from review import RunWatchError
from sim.records import EncounterFailed, EncounterFinished, EncounterStarted, RunFinished, TurnRecorded
from tests.tui.conftest import frozen_clock
from tests.tui.runs import T0, batch_run, jsonl, record_for, screen_text, summary
from tui import DashboardApp
from tui._screens import (
    KEYS,
    CodingScreen,
    EncounterScreen,
    GateScreen,
    HelpScreen,
    LiveScreen,
    MainScreen,
    ReliabilityScreen,
)
from tui._widgets import CodingTable, EncounterTable, LatencyTable, ModeTable, Overview, Pane, ReliabilityTable

SIZE = (120, 40)


async def _until(pilot, predicate, *, timeout: float = 3.0) -> None:  # type: ignore[no-untyped-def]  # noqa: ASYNC109
    """Let the app run until ``predicate()`` holds (the poll timer works in the background)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.05)


def test_missing_or_non_run_dir_raises_from_init(tmp_path: Path) -> None:
    with pytest.raises(RunWatchError, match="no such run directory"):
        DashboardApp(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunWatchError, match=r"not a run directory \(no run\.json\)"):
        DashboardApp(tmp_path / "empty")


async def test_overview_and_list(batch_dir: Path) -> None:
    app = DashboardApp(batch_dir, clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        text = screen_text(app)
        assert "batch-demo" in text and str(batch_dir.parent) not in text
        assert "9/9 encounters done" in text and "FINISHED" in text and "1 error" in text
        assert "aggregate 0.500 (final)" in text and "TRIGGERED" in text and "fx_chest_pain" in text
        assert "suites safety 0.57 · triage 0.77" in text
        table = app.screen.query_one(EncounterTable)
        assert table.row_count == 9 and table.has_focus
        row = table.get_row("fx_chest_pain:1")
        assert row[2].plain == "done" and row[3].plain == "0.310" and row[4].plain == "FAIL"
        assert row[6].plain == "▼ worst" and row[7].plain == "⚠ gate"
        assert table.get_row("fx_headache:2")[2].plain == "error"


async def test_arrows_and_j_k_move_enter_opens_escape_goes_back(batch_dir: Path) -> None:
    app = DashboardApp(batch_dir, clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(EncounterTable)
        await pilot.press("down", "down")
        assert table.cursor_row == 2
        await pilot.press("up")
        assert table.cursor_row == 1
        await pilot.press("j", "j")
        assert table.cursor_row == 3
        await pilot.press("k")
        assert table.cursor_row == 2
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, EncounterScreen) and app.screen.key == ("fx_chest_pain", 2)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_tab_switches_panes(batch_dir: Path) -> None:
    app = DashboardApp(batch_dir, clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.focused, EncounterTable)
        await pilot.press("tab")
        assert isinstance(app.focused, Overview)
        await pilot.press("tab")
        assert isinstance(app.focused, EncounterTable)
        await pilot.press("enter")
        await pilot.pause()
        assert app.focused is not None and app.focused.id == "transcript-pane"
        await pilot.press("tab")
        assert app.focused is not None and app.focused.id == "details-pane"
        await pilot.press("shift+tab")
        assert app.focused is not None and app.focused.id == "transcript-pane"


async def test_slash_filters_and_escape_clears(batch_dir: Path) -> None:
    app = DashboardApp(batch_dir, clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(EncounterTable)
        await pilot.press("slash")
        await pilot.press(*"ankle")
        await pilot.pause()
        assert table.keys() == ["fx_ankle:0", "fx_ankle:1", "fx_ankle:2"]
        await pilot.press("enter")  # keeps the filter, back to the list
        assert table.has_focus and "Encounters 3 of 9 · /ankle" in screen_text(app)
        for query, expected in [("status:error", ["fx_headache:2"]),
                                ("gate", ["fx_chest_pain:0", "fx_chest_pain:1", "fx_chest_pain:2"]),
                                ("fail", ["fx_chest_pain:1", "fx_chest_pain:2", "fx_ankle:2"])]:
            await pilot.press("slash", "ctrl+a", "ctrl+k", *query, "enter")
            await pilot.pause()
            assert table.keys() == expected, query
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, EncounterScreen)
        assert "encounter 1 of 3" in screen_text(app)
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert table.row_count == 9 and app.screen.filter.text == ""


async def test_safety_failure_outside_the_gate_shows_safety_not_gate(tmp_path: Path) -> None:
    """A safety failure in fx_ankle (triage suite, does not feed the gate) is "⚠ safety" in the list, the
    encounter view and the reliability view; fx_chest_pain (safety suite) is "⚠ gate"; help explains both."""
    run = batch_run(tmp_path, safety={("fx_ankle", 2): ["under-escalation: routine given, urgent needed"]})
    app = DashboardApp(run, clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = app.screen.query_one(EncounterTable)
        assert table.get_row("fx_ankle:2")[7].plain == "⚠ safety"
        assert table.get_row("fx_ankle:0")[7].plain == ""
        assert table.get_row("fx_chest_pain:1")[7].plain == "⚠ gate"
        assert table.get_row("fx_chest_pain:0")[7].plain == "⚠ gate"  # its scenario triggered the gate
        await pilot.press("slash", *"gate", "enter")
        await pilot.pause()
        assert table.keys() == ["fx_chest_pain:0", "fx_chest_pain:1", "fx_chest_pain:2"]
        await pilot.press("slash", "ctrl+a", "ctrl+k", *"safety", "enter")
        await pilot.pause()
        assert table.keys() == ["fx_chest_pain:1", "fx_chest_pain:2", "fx_ankle:2"]
        await pilot.press("escape")
        app.open_encounter(("fx_ankle", 2))
        await pilot.pause()
        text = screen_text(app)
        assert "fx_ankle  k=2  done  composite 0.640  FAIL  ▼ worst of K  ⚠ safety" in text
        assert "⚠ gate" not in text
        await pilot.press("escape", "r")
        await pilot.pause()
        rel = app.screen.query_one(ReliabilityTable)
        assert rel.get_row("fx_ankle")[7].plain == "⚠ safety"
        assert rel.get_row("fx_chest_pain")[7].plain == "⚠ gate"
        assert rel.get_row("fx_headache")[7].plain == ""
        await pilot.press("escape", "g")
        await pilot.pause()
        text = screen_text(app)
        assert "fx_ankle:2" in text and "⚠ safety" in text  # listed among the safety failures, as "safety"
        await pilot.press("escape", "question_mark")
        await pilot.pause()
        text = screen_text(app)
        assert "⚠ gate" in text and "⚠ safety" in text
        assert "does not feed the safety gate" in text


async def test_encounter_view_shows_transcript_checklist_score_card_and_judge(batch_dir: Path) -> None:
    app = DashboardApp(batch_dir, clock=frozen_clock)
    async with app.run_test(size=(160, 60)) as pilot:
        await pilot.press("down", "enter")
        await pilot.pause()
        text = screen_text(app)
        assert "fx_chest_pain  k=1  done  composite 0.310  FAIL  ▼ worst of K  ⚠ gate" in text
        assert "encounter 2 of 9" in text
        assert "[0] patient I've got this pressure in my chest" in text
        assert "↳ revealed character" in text
        assert "★ onset_exertion  ✖ missed" in text and "  character       ✔ turn 2" in text
        assert "✖ radiation" in text and "✖ sweating_nausea" in text
        assert "escalation emergency self_care  UNDER-ESCALATED" in text
        assert "composite 0.310   FAIL" in text
        assert "✖ under-escalation: self_care given, emergency needed" in text
        assert "judges judge-a · rubric 0.20 · trust 1.00" in text
        assert "Reassures that it is probably muscular" in text


async def test_next_and_previous_encounter_and_scrolling(batch_dir: Path) -> None:
    app = DashboardApp(batch_dir, clock=frozen_clock)
    async with app.run_test(size=(100, 24)) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, EncounterScreen) and "encounter 1 of 9" in screen_text(app)
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert screen.key == ("fx_chest_pain", 1) and "encounter 2 of 9" in screen_text(app)
        await pilot.press("left_square_bracket", "left_square_bracket")
        await pilot.pause()
        assert screen.key == ("fx_chest_pain", 0) and "first encounter of the list" in screen_text(app)
        assert app.main.query_one(EncounterTable).cursor_row == 0
        await pilot.press("tab")  # the details pane of fx_chest_pain:0 is longer than the screen
        pane = screen.query_one("#details-pane", Pane)
        assert pane.has_focus and pane.max_scroll_y > 0
        await pilot.press("j", "j", "down")
        assert pane.scroll_y == 3
        await pilot.press("k")
        assert pane.scroll_y == 2


async def test_annotation_keys(batch_dir: Path) -> None:
    app = DashboardApp(batch_dir, reviewer="ana", clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter", "1")
        assert app.draft_for("fx_chest_pain:0").verdict == "pass"
        await pilot.press("2")
        assert app.draft_for("fx_chest_pain:0").verdict == "fail"
        for expected in ["clinician_would_notice", "subtle_issue", "cosmetic", None]:
            await pilot.press("t")
            assert app.draft_for("fx_chest_pain:0").severity == expected
        await pilot.press("n", *"first", "enter")
        assert app.draft_for("fx_chest_pain:0").notes == "first"
        await pilot.press("n", *"ignored", "escape")  # escape cancels the note, stays on the encounter
        await pilot.pause()
        assert app.draft_for("fx_chest_pain:0").notes == "first" and isinstance(app.screen, EncounterScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert app.main.query_one(EncounterTable).get_row("fx_chest_pain:0")[8].plain == "fail*"
        await pilot.press("enter", "s", "escape")
        await pilot.pause()
        assert app.main.query_one(EncounterTable).get_row("fx_chest_pain:0")[8].plain == "fail"
        assert app.saved["fx_chest_pain:0"].notes == "first"


async def test_q_warns_about_unsaved_annotations_then_quits(batch_dir: Path) -> None:
    app = DashboardApp(batch_dir, clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter", "2", "escape", "q")
        await pilot.pause()
        assert app.is_running
        assert "1 unsaved annotation (s saves). Press q again to quit." in screen_text(app)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0 and not (batch_dir / "annotations.jsonl").exists()


async def test_q_quits_at_once_without_unsaved_work(batch_dir: Path) -> None:
    app = DashboardApp(batch_dir, clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


async def test_reliability_view_and_worst_transcript(batch_dir: Path) -> None:
    app = DashboardApp(batch_dir, clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, ReliabilityScreen)
        table = app.screen.query_one(ReliabilityTable)
        assert table.row_count == 3
        row = table.get_row("fx_chest_pain")
        assert row[1] == "safety" and row[2] == "3/3" and row[3].plain == "▇▃▅" and row[6].plain == "1"
        assert table.get_row("fx_headache")[3].plain == "█▆·" and table.get_row("fx_headache")[2] == "2/3"
        spark = app.screen.query_one("#rel-spark")
        assert list(spark.data) == [0.86, 0.31, 0.55]
        await pilot.press("j")
        await pilot.pause()
        assert list(spark.data) == [0.78, 0.82, 0.64]
        assert "worst: k=2 — enter opens its transcript" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, EncounterScreen) and app.screen.key == ("fx_ankle", 2)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ReliabilityScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_gate_details(batch_dir: Path) -> None:
    app = DashboardApp(batch_dir, clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g")
        await pilot.pause()
        assert isinstance(app.screen, GateScreen)
        text = screen_text(app)
        assert "fx_chest_pain" in text and "mean escalation safety 0.33 < 0.5" in text
        assert "fx_chest_pain:1" in text and "under-escalation: self_care given, emergency needed" in text
        await pilot.press("g")  # already open: stays, does not stack
        assert len(app.screen_stack) == 2
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_help_lists_every_key(batch_dir: Path) -> None:
    app = DashboardApp(batch_dir, clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)
        for _, key, _ in KEYS[:8]:
            assert key in text
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


def test_every_binding_is_in_the_help() -> None:
    """Every key the app, its screens and widgets bind (shown in the footer or not) is in the help."""
    names = {"question_mark": "?", "slash": "/", "right_square_bracket": "]", "left_square_bracket": "[",
             "shift+tab": "shift+tab", "up": "↑", "down": "↓"}
    help_keys = " ".join(key for _, key, _ in KEYS)
    owners = [DashboardApp, MainScreen, EncounterScreen, ReliabilityScreen, LiveScreen, GateScreen, HelpScreen,
              CodingScreen, EncounterTable, ReliabilityTable, LatencyTable, CodingTable, ModeTable, Pane]
    for owner in owners:
        for binding in owner.BINDINGS:
            assert isinstance(binding, Binding)
            for key in binding.key.split(","):
                shown = names.get(key, key)
                assert shown in help_keys, f"{owner.__name__}: {key} ({binding.action}) is not in the help"


async def test_live_view_by_key_and_automatically_for_live_runs(live_dir: Path, batch_dir: Path) -> None:
    app = DashboardApp(live_dir, clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, LiveScreen)  # shown by itself for channel live
        text = screen_text(app)
        assert "● patient speaking" in text and "overlaps 1" in text
        assert "agent latency median 1.90 s" in text
        assert "heard Does the pain spread to your arm or your jaw" in text
        table = app.screen.query_one(LatencyTable)
        assert table.row_count == 3
        assert [c.plain if hasattr(c, "plain") else c for c in table.get_row_at(2)][:3] == ["2", "agent", "2.60"]
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        assert "0/1 encounters done · 1 running" in screen_text(app)
        await pilot.press("l")
        await pilot.pause()
        assert isinstance(app.screen, LiveScreen)
    app = DashboardApp(batch_dir, clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("l")
        await pilot.pause()
        assert isinstance(app.screen, LiveScreen) and "no live call in this run" in screen_text(app)


async def test_screen_follows_appended_events_and_results(running_dir: Path) -> None:
    events, results = running_dir / "events.jsonl", running_dir / "results.jsonl"
    app = DashboardApp(running_dir, clock=frozen_clock, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(EncounterTable)
        assert table.row_count == 8 and "7/9 encounters done · 1 running · 0 errors" in screen_text(app)
        assert table.get_row("fx_headache:1")[2].plain == "running"
        assert table.get_row("fx_headache:1")[5].plain == "4"  # turns so far, from the event log
        jsonl(events, [TurnRecorded(scenario_id="fx_headache", k=1, index=4, speaker="patient", text="thanks",
                                    t=T0 + 101)], mode="a")
        await _until(pilot, lambda: table.get_row("fx_headache:1")[5].plain == "5")
        jsonl(events, [EncounterFinished(scenario_id="fx_headache", k=1, composite=0.7, termination="assessment",
                                         t=T0 + 105)], mode="a")
        jsonl(results, [record_for("fx_headache", 1, T0 + 104)], mode="a")
        await _until(pilot, lambda: table.get_row("fx_headache:1")[2].plain == "done")
        assert table.get_row("fx_headache:1")[3].plain == "0.700"
        assert table.get_row("fx_headache:1")[6].plain == "▼ worst"  # 0.70 < 0.90
        assert "8/9 encounters done · 0 running" in screen_text(app)
        jsonl(events, [EncounterStarted(scenario_id="fx_headache", k=2, t=T0 + 106)], mode="a")
        await _until(pilot, lambda: table.row_count == 9)
        assert table.get_row("fx_headache:2")[2].plain == "running"
        jsonl(events, [EncounterFailed(scenario_id="fx_headache", k=2, error="boom", t=T0 + 107)], mode="a")
        await _until(pilot, lambda: table.get_row("fx_headache:2")[2].plain == "error")
        assert "9/9 encounters done · 0 running · 1 error" in screen_text(app)
        assert "PENDING" in screen_text(app)
        (running_dir / "summary.json").write_text(summary().model_dump_json())
        jsonl(events, [RunFinished(aggregate=0.5, gate_triggered=True, completed=8, errors=1, t=T0 + 110)], mode="a")
        await _until(pilot, lambda: "FINISHED" in screen_text(app))
        assert table.get_row("fx_chest_pain:0")[7].plain == "⚠ gate"  # the summary's gate marks every k
        assert "TRIGGERED" in screen_text(app)


async def test_job_runs_in_the_app_and_its_run_dir_appears_later(tmp_path: Path) -> None:
    started = asyncio.Event()

    async def job() -> str:
        await started.wait()
        batch_run(tmp_path, "from-job")
        return "summary!"

    app = DashboardApp(tmp_path / "from-job", job=job, clock=frozen_clock, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "WAITING FOR THE RUN" in screen_text(app)
        await pilot.press("q")  # the run is going: the first q warns
        assert app.is_running and "the run is still going" in screen_text(app)
        started.set()
        await _until(pilot, lambda: app.job_result == "summary!")
        await _until(pilot, lambda: "9/9 encounters done" in screen_text(app))
        assert app.screen.query_one(EncounterTable).row_count == 9


async def test_a_failing_job_is_shown_and_the_app_stays_open(tmp_path: Path) -> None:
    async def job() -> None:
        batch_run(tmp_path, "broken", finished=False)
        raise RuntimeError("the model server went away")

    app = DashboardApp(tmp_path / "broken", job=job, clock=frozen_clock, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: app.job_error is not None)
        await pilot.pause()
        assert app.is_running
        text = screen_text(app)
        assert "✖ the run failed: RuntimeError: the model server went away" in text and "STOPPED" in text
        assert app.job_result is None
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


async def test_malformed_lines_are_reported_in_the_overview(batch_dir: Path) -> None:
    with open(batch_dir / "events.jsonl", "a") as fh:  # noqa: ASYNC230
        fh.write("{half a line}\n")
    app = DashboardApp(batch_dir, clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "⚠ 1 malformed line skipped" in text and "events.jsonl line 65: skipped, malformed event line" in text


async def test_a_running_encounter_shows_its_turns_from_the_event_log(running_dir: Path) -> None:
    app = DashboardApp(running_dir, clock=frozen_clock, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"status:running", "enter", "enter")
        await pilot.pause()
        assert isinstance(app.screen, EncounterScreen) and app.screen.key == ("fx_headache", 1)
        text = screen_text(app)
        assert "● running: the score card appears when it finishes" in text and "encounter 1 of 1" in text
        assert "usual_pattern  ✔ turn 2" in text
        jsonl(running_dir / "events.jsonl", [TurnRecorded(scenario_id="fx_headache", k=1, index=4,
                                                          speaker="patient", text="It is easing now.",
                                                          t=T0 + 200)], mode="a")
        await _until(pilot, lambda: "It is easing now." in screen_text(app))


async def test_a_long_list_filters_when_typing_pauses(batch_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(MainScreen, "INSTANT_FILTER_ROWS", 0)
    monkeypatch.setattr(MainScreen, "FILTER_PAUSE_S", 60.0)
    app = DashboardApp(batch_dir, clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(EncounterTable)
        await pilot.press("slash", *"headache")
        assert table.row_count == 9  # not yet: the filter waits for a pause in typing
        await pilot.press("enter")  # or for enter
        assert table.row_count == 3
        monkeypatch.setattr(MainScreen, "FILTER_PAUSE_S", 0.05)
        await pilot.press("slash", "ctrl+a", "ctrl+k", *"ankle")
        await _until(pilot, lambda: table.keys() == ["fx_ankle:0", "fx_ankle:1", "fx_ankle:2"])
        await pilot.press("escape")
        await pilot.pause()
        assert table.row_count == 9


async def test_quitting_while_the_job_runs_cancels_it(tmp_path: Path) -> None:
    cancelled = asyncio.Event()

    async def job() -> None:
        batch_run(tmp_path, "slow", finished=False)
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    app = DashboardApp(tmp_path / "slow", job=job, clock=frozen_clock, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: "7/9 encounters done" in screen_text(app))
        await pilot.press("q", "q")
        await pilot.pause()
    assert cancelled.is_set() and app.job_result is None and app.job_error is None


@pytest.mark.parametrize("processes", ["0", "2"])
async def test_run_tui_runs_the_real_batch_in_the_app(tmp_path: Path, processes: str) -> None:
    """`encsim run --tui` wiring: the CLI's own run coroutine is the app's job; the app follows what it writes
    (also with the encounters in worker processes, started from the app's event loop)."""
    import asyncio

    from sim.cli import _run, build_parser
    from tui import DashboardApp

    out = tmp_path / "run"
    args = build_parser().parse_args(["run", "--model", "scripted:undertriage", "--scenarios",
                                      "acs_chest_pain,viral_uri", "--k", "2", "--out", str(out), "--tui",
                                      "--processes", processes])
    app = DashboardApp(out, job=lambda: _run(args), poll_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(200):
            await pilot.pause(0.05)
            if app.job_result is not None and app.state.done == 4:
                break
        assert app.job_result is not None, app.job_error
        summary, root = app.job_result
        assert root == out and summary.safety_gate.triggered
        assert (app.state.done, app.state.total) == (4, 4)
        await pilot.press("q")
    await asyncio.sleep(0)


async def test_a_poll_landing_while_the_overview_is_being_removed_does_not_crash(batch_dir: Path) -> None:
    """The run poll can call Overview.show between a screen switch's removal of its children; it must skip that
    update, not raise NoMatches out of the app (seen under load in test_a_running_encounter_...)."""
    app = DashboardApp(batch_dir, clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        overview = app.screen.query_one(Overview)
        await overview.query_one("#ov-count").remove()
        await pilot.pause()
        overview.show(app.state, (Text("head"), "text"))
        await pilot.pause()
        assert app.is_running


async def test_a_poll_during_shutdown_touches_no_screen(running_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The poll timer can fire while Textual prunes the screens on exit (cc10 failed that way)."""
    app = DashboardApp(running_dir, clock=frozen_clock, poll_interval=60.0)
    errors: list[BaseException] = []
    prune = type(app)._prune

    async def prune_then_poll(self, *nodes, parent=None):  # type: ignore[no-untyped-def]
        await prune(self, *nodes, parent=parent)
        try:
            self.poll(force=True)
        except Exception as exc:  # recorded: Textual would re-raise it from run_test
            errors.append(exc)

    monkeypatch.setattr(type(app), "_prune", prune_then_poll)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
    assert errors == []


async def test_an_encounter_of_a_persona_sweep_names_its_persona(tmp_path: Path) -> None:
    from sim.cli import main

    run = tmp_path / "sweep"
    assert await asyncio.to_thread(main, ["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k",
                                          "1", "--personas", "default,minimiser", "--out", str(run), "--quiet"]) == 0
    app = DashboardApp(run, clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        titles = {}
        for k in (0, 1):
            app.push_screen(EncounterScreen(("viral_uri", k)))
            await pilot.pause()
            titles[k] = str(app.screen.query_one("#enc-title").render())
            await pilot.press("escape")
            await pilot.pause()
    assert "(minimiser)" in titles[1] and "(" not in titles[0].split("k=0")[1].split("composite")[0], titles
