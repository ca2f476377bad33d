"""The coding screen (c): failing annotations get failure modes; modes are renamed and merged (issue 16)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from review import Annotation, AnnotationStore
from sim.records import FailureMode, RunLayout, Taxonomy, load_taxonomy, save_taxonomy
from tests.tui.conftest import NOW, frozen_clock
from tests.tui.runs import screen_text
from tui import DashboardApp
from tui._screens import CodingScreen, EncounterScreen, MainScreen

SIZE = (120, 40)


@pytest.fixture
def reviewed(batch_dir: Path) -> Path:
    """Three failing annotations (fx_ankle:2, fx_chest_pain:1, fx_chest_pain:2 in list order) and one pass."""
    store = AnnotationStore(batch_dir, reviewer="ana", clock=frozen_clock)
    store.save(Annotation(trace_id="fx_chest_pain:1", verdict="fail", notes="never asked about radiation",
                          severity="clinician_would_notice"))
    store.save(Annotation(trace_id="fx_chest_pain:2", verdict="fail", notes="sent home with chest pain"))
    store.save(Annotation(trace_id="fx_ankle:2", verdict="fail", notes="no ottawa rules"))
    store.save(Annotation(trace_id="fx_ankle:0", verdict="pass", notes="fine"))
    return batch_dir


def _lines(run: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in RunLayout(run).annotations.read_text().splitlines()]


def _latest_modes(run: Path) -> dict[str, str | None]:
    return {t: a.failure_mode for t, a in AnnotationStore(run).load().items() if a.verdict == "fail"}


def _app(run: Path, **kw: object) -> DashboardApp:
    return DashboardApp(run, reviewer="bo", clock=frozen_clock, **kw)  # type: ignore[arg-type]


async def test_c_lists_the_failing_annotations_with_notes_and_escape_leaves(reviewed: Path) -> None:
    app = _app(reviewed)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, CodingScreen)
        text = screen_text(app)
        assert "3 failing annotation(s), 3 uncoded" in text
        assert "fx_chest_pain:1" in text and "fx_ankle:0" not in text
        assert app.screen.codes.keys() == ["fx_ankle:2", "fx_chest_pain:1", "fx_chest_pain:2"]
        assert "no ottawa rules" in text and "uncoded" in text
        await pilot.press("down")
        await pilot.pause()
        assert "clinician_would_notice  never asked about radiation" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
    assert not RunLayout(reviewed).taxonomy.exists()
    assert len(_lines(reviewed)) == 4  # looking changes nothing


async def test_n_assigns_a_new_mode_typed_in_place(reviewed: Path) -> None:
    app = _app(reviewed)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c", "down", "n")
        await pilot.press(*"Missed red flag")
        await pilot.press("enter")
        await pilot.pause()
        assert "coded fx_chest_pain:1: missed_red_flag" in screen_text(app)
        assert app.screen.modes.keys() == ["missed_red_flag"]
        assert app.screen.codes.highlighted_key() == "fx_chest_pain:2"  # on to the next one
        assert app.saved["fx_chest_pain:1"].failure_mode == "missed_red_flag"
    last = _lines(reviewed)[-1]
    assert last == {"trace_id": "fx_chest_pain:1", "verdict": "fail", "notes": "never asked about radiation",
                    "failure_mode": "missed_red_flag", "severity": "clinician_would_notice", "reviewer": "bo",
                    "timestamp": NOW, "review_pass": 1, "code_source": "person"}
    assert load_taxonomy(RunLayout(reviewed).taxonomy) == Taxonomy(modes=[FailureMode(name="missed_red_flag")])


async def test_enter_then_enter_assigns_an_existing_mode(reviewed: Path) -> None:
    save_taxonomy(RunLayout(reviewed).taxonomy, Taxonomy(modes=[
        FailureMode(name="missed_red_flag", definition="Never asks about a red flag."),
        FailureMode(name="under_escalation", definition="Advises less care than needed.")]))
    app = _app(reviewed)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await pilot.pause()
        assert app.screen.modes.get_row("under_escalation")[2].plain == "Advises less care than needed."
        await pilot.press("down", "down", "enter")  # fx_chest_pain:2: pick its mode
        await pilot.pause()
        assert app.screen.modes.has_focus and "coding fx_chest_pain:2" in screen_text(app)
        await pilot.press("down", "enter")  # under_escalation
        await pilot.pause()
        assert app.screen.codes.has_focus
    assert _latest_modes(reviewed) == {"fx_chest_pain:1": None, "fx_chest_pain:2": "under_escalation",
                                       "fx_ankle:2": None}
    assert load_taxonomy(RunLayout(reviewed).taxonomy).names == ["missed_red_flag", "under_escalation"]


async def test_e_renames_a_mode_and_recodes(reviewed: Path) -> None:
    app = _app(reviewed)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c", "n", *"red flag", "enter")  # fx_ankle:2
        await pilot.press("n", *"red flag", "enter")  # fx_chest_pain:1
        await pilot.pause()
        await pilot.press("tab", "e")  # the mode list: its only mode
        await pilot.pause()
        box = app.screen.query_one("#mode-input")
        assert box.has_class("shown") and box.value == "red_flag"  # type: ignore[attr-defined]
        await pilot.press(*["backspace"] * 8, *"missed_red_flag", "enter")
        await pilot.pause()
        assert "renamed red_flag: 2 annotation(s) re-coded" in screen_text(app)
        assert app.screen.modes.keys() == ["missed_red_flag"]
        assert app.saved["fx_ankle:2"].failure_mode == "missed_red_flag"
    assert _latest_modes(reviewed) == {"fx_chest_pain:1": "missed_red_flag", "fx_chest_pain:2": None,
                                       "fx_ankle:2": "missed_red_flag"}
    assert load_taxonomy(RunLayout(reviewed).taxonomy).names == ["missed_red_flag"]


async def test_m_merges_one_mode_into_another(reviewed: Path) -> None:
    save_taxonomy(RunLayout(reviewed).taxonomy, Taxonomy(modes=[
        FailureMode(name="sent_home", definition=""),
        FailureMode(name="under_escalation", definition="Advises less care than needed.")]))
    app = _app(reviewed)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c", "down", "down", "enter", "enter")  # fx_chest_pain:2 -> sent_home (first row)
        await pilot.press("up", "enter", "down", "enter")  # fx_chest_pain:1 -> under_escalation
        await pilot.pause()
        assert _latest_modes(reviewed)["fx_chest_pain:2"] == "sent_home"
        assert _latest_modes(reviewed)["fx_chest_pain:1"] == "under_escalation"
        await pilot.press("tab")
        await pilot.pause()
        modes = app.screen.modes
        modes.move_to("sent_home")
        await pilot.press("m", *"under_escalation", "enter")
        await pilot.pause()
        assert "merged sent_home into under_escalation: 1 annotation(s) re-coded" in screen_text(app)
        assert modes.keys() == ["under_escalation"]
    assert _latest_modes(reviewed) == {"fx_chest_pain:1": "under_escalation", "fx_chest_pain:2": "under_escalation",
                                       "fx_ankle:2": None}
    assert load_taxonomy(RunLayout(reviewed).taxonomy).modes == [
        FailureMode(name="under_escalation", definition="Advises less care than needed.")]


async def test_refusals_are_shown_and_change_nothing(reviewed: Path) -> None:
    save_taxonomy(RunLayout(reviewed).taxonomy, Taxonomy(modes=[FailureMode(name="a"), FailureMode(name="b")]))
    before = RunLayout(reviewed).taxonomy.read_text()
    app = _app(reviewed)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c", "tab", "e", *["backspace"] * 3, "b", "enter")
        await pilot.pause()
        assert "failure mode 'b' already exists" in app.status_text  # the status line is one screen line
        await pilot.press("m", *"nope", "enter")
        await pilot.pause()
        assert "no failure mode 'nope' to merge" in app.status_text
        await pilot.press("m", "escape")
        await pilot.pause()
        assert "cancelled: nothing changed" in screen_text(app)
        assert isinstance(app.screen, CodingScreen)
    assert RunLayout(reviewed).taxonomy.read_text() == before
    assert len(_lines(reviewed)) == 4


async def test_a_bad_taxonomy_file_is_shown_not_raised(reviewed: Path, tmp_path: Path) -> None:
    bad = tmp_path / "shared.json"
    bad.write_text("{oops")
    app = _app(reviewed, taxonomy_path=bad)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c", "n", *"x", "enter")
        await pilot.pause()
        assert isinstance(app.screen, CodingScreen)
        assert "shared.json: not valid JSON" in app.status_text
    assert len(_lines(reviewed)) == 4


async def test_coding_into_a_project_level_taxonomy(reviewed: Path, tmp_path: Path) -> None:
    shared = tmp_path / "project" / "taxonomy.json"
    app = _app(reviewed, taxonomy_path=shared)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c", "n", *"no_decision_rule", "enter")
        await pilot.pause()
        assert app.taxonomy_path == shared and "· taxonomy /" in screen_text(app)
    assert load_taxonomy(shared).names == ["no_decision_rule"]
    assert not RunLayout(reviewed).taxonomy.exists()


async def test_an_unsaved_draft_keeps_the_new_code(reviewed: Path) -> None:
    app = _app(reviewed)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down", "enter")  # fx_chest_pain:1 in the encounter list
        await pilot.pause()
        assert isinstance(app.screen, EncounterScreen)
        await pilot.press("t")  # an unsaved severity change
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, CodingScreen)
        app.screen.codes.move_to("fx_chest_pain:1")
        await pilot.press("n", *"missed_red_flag", "enter")
        await pilot.pause()
        assert app.drafts["fx_chest_pain:1"].failure_mode == "missed_red_flag"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, EncounterScreen)
        await pilot.press("s")
        await pilot.pause()
    last = _lines(reviewed)[-1]
    assert last["failure_mode"] == "missed_red_flag" and last["severity"] == "subtle_issue"


async def test_without_failing_annotations_it_says_how_to_make_them(batch_dir: Path) -> None:
    app = _app(batch_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await pilot.pause()
        assert "no failing annotation yet" in screen_text(app)
        await pilot.press("n")
        await pilot.pause()
        assert "no failing annotation to code" in screen_text(app)
        await pilot.press("e")
        await pilot.pause()
        assert "no failure mode to rename yet" in screen_text(app)


def test_watch_taxonomy_flag_reaches_the_app(reviewed: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from sim.cli import main

    seen: list[Path] = []
    monkeypatch.setattr(DashboardApp, "run", lambda self, *a, **k: seen.append(self.taxonomy_path))
    monkeypatch.setattr("sim.cli._watch.has_terminal", lambda: True)  # as in a terminal
    assert main(["watch", str(reviewed), "--taxonomy", str(tmp_path / "shared.json")]) == 0
    assert main(["watch", str(reviewed)]) == 0
    assert seen == [tmp_path / "shared.json", RunLayout(reviewed).taxonomy]


async def test_d_p_f_describe_the_mode_under_the_cursor(reviewed: Path) -> None:
    app = _app(reviewed)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c", "down", "n", *"missed_red_flag", "enter")  # fx_chest_pain:1
        await pilot.press("tab", "d", *"Never asks about a red-flag symptom.", "enter")
        await pilot.press("p", *"fx_chest_pain:0", "enter")
        await pilot.press("f", *"fx_chest_pain:1", "enter")
        await pilot.pause()
        assert "missed_red_flag: fail example saved to taxonomy.json" in app.status_text
        assert app.screen.modes.get_row("missed_red_flag")[2].plain == "Never asks about a red-flag symptom."
        await pilot.press("d")  # the input opens with the current text
        await pilot.pause()
        assert app.screen.query_one("#mode-input").value == "Never asks about a red-flag symptom."  # type: ignore[attr-defined]
        await pilot.press("escape", "up")  # escape returns to the annotations
        await pilot.pause()
        assert "missed_red_flag: Never asks about a red-flag symptom." in screen_text(app)  # the notes box
    assert load_taxonomy(RunLayout(reviewed).taxonomy).modes == [FailureMode(
        name="missed_red_flag", definition="Never asks about a red-flag symptom.", pass_example="fx_chest_pain:0",
        fail_example="fx_chest_pain:1")]


async def test_coming_back_shows_annotations_saved_meanwhile(reviewed: Path) -> None:
    app = _app(reviewed)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c", "r")  # the reliability screen opens above the coding screen
        await pilot.pause()
        app.open_encounter(("fx_headache", 1))
        await pilot.pause()
        await pilot.press("2", "n", *"missed thunderclap check", "enter", "s", "c")  # back down to coding
        await pilot.pause()
        assert isinstance(app.screen, CodingScreen)
        assert "fx_headache:1" in app.screen.codes.keys()
        assert "4 failing annotation(s), 4 uncoded" in screen_text(app)
