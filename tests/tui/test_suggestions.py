"""A judge's suggested codes in the dashboard, and where failure-mode judges and people disagree (issue 16).

``encsim annotations suggest-codes --save`` keeps the suggestions in code_suggestions.jsonl (never in
annotations.jsonl nor taxonomy.json); the coding screen shows them marked as suggestions and ``a`` accepts one.
``v`` lists the traces where a judge validated with ``encsim judges validate`` and people disagree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from review import Annotation, AnnotationStore, taxonomy_report
from sim.cli import main
from sim.records import (
    CodeSuggestion,
    FailureMode,
    RunLayout,
    Taxonomy,
    append_code_suggestions,
    forget_secrets,
    load_taxonomy,
    register_secret,
    save_taxonomy,
)
from tests.fakeserver import FakeChatServer
from tests.tui.conftest import NOW, frozen_clock
from tests.tui.runs import screen_text
from tui import DashboardApp
from tui._screens import CodingScreen, DisagreementScreen, EncounterScreen, MainScreen

SIZE = (120, 40)
SECRET = "sk-live-4f9a0c2e7b1d83a6"
UNSAFE = "Sends a patient home although the symptoms need same-day assessment."


@pytest.fixture
def reviewed(batch_dir: Path) -> Path:
    """Three uncoded failing annotations in a reviewer's words, one pass, and a one-mode taxonomy."""
    store = AnnotationStore(batch_dir, reviewer="ana", clock=frozen_clock)
    store.save(Annotation(trace_id="fx_chest_pain:1", verdict="fail", severity="clinician_would_notice",
                          notes="Didn't ask whether the pain goes to the arm or jaw - big miss for ACS"))
    store.save(Annotation(trace_id="fx_chest_pain:2", verdict="fail",
                          notes="told him to rest and see his GP next week?? with exertional chest pain"))
    store.save(Annotation(trace_id="fx_ankle:2", verdict="fail",
                          notes=f"no Ottawa rules, just said ice it (pasted key {SECRET} by mistake)"))
    store.save(Annotation(trace_id="fx_ankle:0", verdict="pass", notes="fine, sensible safety-netting"))
    save_taxonomy(RunLayout(batch_dir).taxonomy, Taxonomy(modes=[
        FailureMode(name="missed_red_flag", definition="Never asks about a red-flag symptom.")]))
    return batch_dir


def _coder(body: dict[str, Any]) -> str:
    """A judge that answers like a chat model: a sentence, then the JSON in a fenced block, with an extra key."""
    note = str(body["messages"][-1]["content"])
    if "arm or jaw" in note:
        answer = {"mode": "missed_red_flag", "reason": "radiation of chest pain is a red flag", "definition": "",
                  "confidence": "high"}
    elif "GP next week" in note:
        answer = {"mode": "Unsafe discharge", "reason": "exertional chest pain sent home", "definition": UNSAFE,
                  "confidence": "medium"}
    else:
        answer = {"mode": "no_decision_rule", "reason": "Ottawa ankle rules not applied",
                  "definition": "Skips the validated decision rule the presentation calls for."}
    return f"Looking at the reviewer's note, here is my suggestion.\n\n```json\n{json.dumps(answer, indent=2)}\n```"


def _suggest(run: Path, reply: Any = _coder, *extra: str) -> None:
    with FakeChatServer(reply=reply) as judge:
        assert main(["annotations", "suggest-codes", str(run), "--judge", "coder-7b", "--judge-base-url",
                     judge.base_url, "--save", *extra]) == 0


@pytest.fixture
def suggested(reviewed: Path) -> Path:
    register_secret(SECRET)
    try:
        _suggest(reviewed)
    finally:
        forget_secrets()
    return reviewed


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _app(run: Path) -> DashboardApp:
    return DashboardApp(run, reviewer="bo", clock=frozen_clock)


# ---------------------------------------------------------------------------------------------- the CLI
def test_save_keeps_suggestions_apart_from_annotations_and_taxonomy(reviewed: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    layout = RunLayout(reviewed)
    annotations, taxonomy = layout.annotations.read_bytes(), layout.taxonomy.read_bytes()
    stamps = {t: a.timestamp for t, a in AnnotationStore(reviewed).load().items()}
    register_secret(SECRET)
    try:
        _suggest(reviewed)
    finally:
        forget_secrets()
    assert "3 suggestion(s) saved to" in capsys.readouterr().out
    assert layout.annotations.read_bytes() == annotations and layout.taxonomy.read_bytes() == taxonomy
    text = layout.code_suggestions.read_text()
    assert SECRET not in text and "[redacted]" in text
    rows = {r["trace_id"]: r for r in _lines(layout.code_suggestions)}
    assert set(rows) == {"fx_chest_pain:1", "fx_chest_pain:2", "fx_ankle:2"}
    chest2 = rows["fx_chest_pain:2"]
    assert (chest2["mode"], chest2["new_mode"], chest2["definition"], chest2["judges"]) == (
        "unsafe_discharge", True, UNSAFE, ["coder-7b"])
    assert chest2["notes"] == "told him to rest and see his GP next week?? with exertional chest pain"
    assert chest2["annotation_timestamp"] == stamps["fx_chest_pain:2"] and chest2["time"] > 0
    chest1 = rows["fx_chest_pain:1"]
    assert (chest1["mode"], chest1["new_mode"], chest1["definition"]) == ("missed_red_flag", False, "")
    # the taxonomy report does not count a suggestion as a code
    report = taxonomy_report(reviewed)
    assert (report.failing, report.uncoded) == (3, 3)
    assert [(r.name, r.count) for r in report.rows] == [("missed_red_flag", 0)]
    assert main(["annotations", "taxonomy", str(reviewed), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["uncoded"] == 3 and [m["name"] for m in listed["modes"]] == ["missed_red_flag"]


def test_without_save_nothing_is_written(reviewed: Path) -> None:
    with FakeChatServer(reply=_coder) as judge:
        assert main(["annotations", "suggest-codes", str(reviewed), "--judge", "coder-7b", "--judge-base-url",
                     judge.base_url]) == 0
    assert not RunLayout(reviewed).code_suggestions.exists()


# ---------------------------------------------------------------------------------------------- coding screen
async def test_the_coding_screen_shows_suggestions_marked_and_uncounted(suggested: Path) -> None:
    app = _app(suggested)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, CodingScreen)
        screen = app.screen
        text = screen_text(app)
        assert "3 failing annotation(s), 3 uncoded (3 with a suggestion: a accepts)" in text
        cell = screen.codes.get_row("fx_chest_pain:2")[2]
        assert cell.plain == "suggested: unsafe_discharge" and "italic" in str(cell.style)
        assert screen.modes.keys() == ["missed_red_flag"]  # a suggested new mode is not a mode yet
        assert screen.modes.get_row("missed_red_flag")[1].plain == "0"  # nor a suggestion a code
        screen.codes.move_to("fx_chest_pain:2")
        await pilot.pause()
        text = screen_text(app)
        assert "suggested: unsafe_discharge (judge coder-7b)" in text and "a accepts" in text
        assert "Accept suggestion" in text  # the footer
    assert not any(a.failure_mode for a in AnnotationStore(suggested).load().values())


async def test_a_accepts_a_new_mode_with_its_definition(suggested: Path) -> None:
    app = _app(suggested)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await pilot.pause()
        app.screen.codes.move_to("fx_chest_pain:2")
        await pilot.press("a")
        await pilot.pause()
        assert "accepted the suggestion for fx_chest_pain:2: unsafe_discharge" in app.status_text
        assert app.screen.codes.get_row("fx_chest_pain:2")[2].plain == "unsafe_discharge"
        assert app.screen.modes.get_row("unsafe_discharge")[1].plain == "1"
        assert "2 uncoded (2 with a suggestion" in screen_text(app)
    last = _lines(RunLayout(suggested).annotations)[-1]
    assert last == {"trace_id": "fx_chest_pain:2", "verdict": "fail",
                    "notes": "told him to rest and see his GP next week?? with exertional chest pain",
                    "failure_mode": "unsafe_discharge", "severity": None, "reviewer": "bo", "timestamp": NOW,
                    "review_pass": 1, "code_source": "accepted_suggestion"}
    assert load_taxonomy(RunLayout(suggested).taxonomy).modes == [
        FailureMode(name="missed_red_flag", definition="Never asks about a red-flag symptom."),
        FailureMode(name="unsafe_discharge", definition=UNSAFE)]


async def test_a_accepts_an_existing_mode_and_n_still_changes_it(suggested: Path) -> None:
    app = _app(suggested)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")  # fx_ankle:2 first: a person types their own mode instead
        await pilot.press("n", *"no_ottawa_rules", "enter")
        await pilot.pause()
        assert app.screen.codes.highlighted_key() == "fx_chest_pain:1"
        await pilot.press("a")
        await pilot.pause()
    latest = AnnotationStore(suggested).load()
    assert (latest["fx_chest_pain:1"].failure_mode, latest["fx_chest_pain:1"].code_source) == (
        "missed_red_flag", "accepted_suggestion")
    assert (latest["fx_ankle:2"].failure_mode, latest["fx_ankle:2"].code_source) == ("no_ottawa_rules", "person")
    assert load_taxonomy(RunLayout(suggested).taxonomy).names == ["missed_red_flag", "no_ottawa_rules"]


async def test_a_stale_suggestion_is_not_offered(suggested: Path) -> None:
    store = AnnotationStore(suggested, reviewer="ana")  # the reviewer rewrites the note after the judge read it
    old = store.load()["fx_chest_pain:2"]
    store.save(Annotation(trace_id=old.trace_id, verdict="fail",
                          notes="advised rest at home; should have gone to ED - exertional pain + sweating"))
    before = RunLayout(suggested).annotations.read_text()
    app = _app(suggested)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CodingScreen)
        assert screen.codes.get_row("fx_chest_pain:2")[2].plain == "uncoded"
        assert "(2 with a suggestion" in screen_text(app)
        screen.codes.move_to("fx_chest_pain:2")
        await pilot.press("a")
        await pilot.pause()
        assert "fx_chest_pain:2: no current suggestion to accept" in app.status_text
    assert RunLayout(suggested).annotations.read_text() == before
    assert load_taxonomy(RunLayout(suggested).taxonomy).names == ["missed_red_flag"]


async def test_the_latest_suggestion_for_a_trace_wins(suggested: Path) -> None:
    notes = AnnotationStore(suggested).load()["fx_chest_pain:1"].notes
    append_code_suggestions(RunLayout(suggested).code_suggestions, [CodeSuggestion(
        trace_id="fx_chest_pain:1", mode="incomplete_history", new_mode=True, judges=["other-judge"],
        definition="Leaves out questions the presenting complaint calls for.", notes=notes, time=NOW + 60)])
    app = _app(suggested)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await pilot.pause()
        assert app.screen.codes.get_row("fx_chest_pain:1")[2].plain == "suggested: incomplete_history"


# ---------------------------------------------------------------------------------------------- disagreements
@pytest.fixture(scope="module")
def validated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A labelled run (every encounter passed or failed and coded by people), a judge built and validated."""
    from review import code
    from tests.sim.test_judges_workflow import MODE, _fixed_confusion_judge, _truth

    run = tmp_path_factory.mktemp("validated") / "labelled"
    assert main(["run", "--model", "scripted:undertriage", "--scenarios", "all", "--k", "1", "--out", str(run),
                 "--quiet"]) == 0
    truth = _truth(run)
    save_taxonomy(RunLayout(run).taxonomy, Taxonomy(modes=[FailureMode(
        name=MODE, definition="The clinician advises less urgent care than the patient's problem needs.")]))
    store = AnnotationStore(run, reviewer="ana")
    for trace, (shows, _) in sorted(truth.items()):
        store.save(Annotation(trace_id=trace, verdict="fail" if shows else "pass",
                              notes="under-triaged, sent to GP" if shows else ""))
        if shows:
            code(run, trace, MODE, reviewer="ana")
    assert main(["judges", "build", str(run), "--min-labels", "3"]) == 0
    with FakeChatServer(reply=_fixed_confusion_judge({text: shows for shows, text in truth.values()})) as judge:
        assert main(["judges", "validate", str(run), "--judge", "fixed-judge", "--judge-base-url",
                     judge.base_url]) == 0
    return run


async def test_v_lists_the_disagreements_and_enter_opens_the_transcript(validated: Path) -> None:
    report = json.loads(RunLayout(validated).judge_validation.read_text())
    mode = report[0]["mode"]
    expected = [(split, t) for split in ("dev", "test") for t in report[0][split]["disagreements"]]
    assert expected  # the fixed confusion matrix gets some traces wrong
    latest = AnnotationStore(validated).load()
    app = _app(validated)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("v")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DisagreementScreen)
        assert screen.table.keys() == [f"{mode}|{split}|{t}" for split, t in expected]
        for split, t in expected:
            row = screen.table.get_row(f"{mode}|{split}|{t}")
            people = latest[t].verdict == "fail" and latest[t].failure_mode == mode
            assert row[5].plain == ("shows it" if people else "does not")
            assert row[6].plain == ("does not" if people else "shows it")  # the judge said the opposite
            assert row[2].plain == f"{report[0][split]['tpr']:.2f}" and row[3].plain == f"{report[0][split]['tnr']:.2f}"
        text = screen_text(app)
        assert f"dev: n {sum(report[0]['dev'][k] for k in ('tp', 'fn', 'tn', 'fp'))} TPR" in text
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, EncounterScreen)
        assert app.screen.tid == expected[0][1]
        assert expected[0][1].rpartition(":")[0] in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, DisagreementScreen)


async def test_v_without_a_validation_says_so(batch_dir: Path) -> None:
    app = _app(batch_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        assert "no judge validation in this run" in app.status_text
        assert "encsim judges validate" in app.status_text


@pytest.mark.parametrize(("content", "says"), [
    ('[{"mode": "under_escalation", "dev": {"tp": 1}', "not valid JSON"),
    ('[{"mode": "under_escalation", "dev": {}, "test": {}}]', "not a judge validation at 0.dev"),
    ('{"mode": "under_escalation"}', "not a judge validation"),
])
async def test_v_with_a_malformed_validation_says_so(batch_dir: Path, content: str, says: str) -> None:
    RunLayout(batch_dir).judge_validation.write_text(content)
    app = _app(batch_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        assert "judge_validation.json" in app.status_text and says in app.status_text
        assert "\n" not in app.status_text


def test_a_trace_relabelled_after_validation_keeps_the_judge_s_verdict(validated: Path) -> None:
    from dataclasses import replace

    from sim.records import load_run_validation
    from tui._widgets._disagreements import disagreement_rows

    validations = load_run_validation(RunLayout(validated).judge_validation)
    mode = validations[0].mode
    trace = next(t for s in ("dev", "test") for t in getattr(validations[0], s).disagreements)
    said = next(getattr(validations[0], s).judge_said[trace] for s in ("dev", "test")
                if trace in getattr(validations[0], s).judge_said)
    store = AnnotationStore(validated)
    before = store.load()[trace]
    # a reviewer now agrees with the judge: the label flips to what the judge said
    store.save(replace(before, verdict="fail" if said else "pass", failure_mode=mode if said else None))
    row = next(r for r in disagreement_rows(validations, store.load()) if r.trace_id == trace)
    assert row.people is said and row.judge is said  # the judge's verdict as validated, not "the opposite"
