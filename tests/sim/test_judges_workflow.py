"""From annotations to a trusted judge, end to end on fixture runs (issue 16): a reviewer passes and fails the
encounters of a run and codes the failures; the taxonomy command lists the mode; a judge is built for it from the
train split; `judges validate` measures it against people with a loopback judge that answers from a fixed
confusion matrix (TPR 0.9, TNR 0.8), and the corrected failure rate of a second run recovers that run's true rate."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from review import Annotation, AnnotationStore, code
from scorers import transcript_text
from sim.cli import main
from sim.records import FailureMode, Taxonomy, save_taxonomy
from sim.store import RunStore
from tests.fakeserver import FakeChatServer

MODE = "under_escalation"
TPR, TNR = 0.9, 0.8


def _truth(run: Path) -> dict[str, tuple[bool, str]]:
    """Trace id -> (the agent advised less urgent care than the scenario expects, transcript)."""
    records, _ = RunStore.open(run).load_records()
    return {f"{sid}:{k}": (bool(r.score and r.score.escalation and r.score.escalation.under_escalated),
                           transcript_text(r.result))
            for (sid, k), r in records.items() if r.result is not None and r.status == "ok"}


def _fixed_confusion_judge(truth_by_text: dict[str, bool]) -> Any:
    def reply(body: dict[str, Any]) -> str:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if '"answer": true|false' not in system:
            return json.dumps({"explanation": "n/a", "criteria_met": False})
        conversation = user.rsplit("Conversation:\n\n", 1)[1].rsplit("\n\nDoes this transcript show", 1)[0]
        shows = truth_by_text[conversation]
        u = int.from_bytes(hashlib.sha256(conversation.encode()).digest()[:8], "big") / 2**64
        return json.dumps({"explanation": "fixed matrix", "answer": u < TPR if shows else u >= TNR})
    return reply


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("judges")
    labelled, second = root / "labelled", root / "second"
    for out, model, k in ((labelled, "scripted:undertriage", "3"), (second, "scripted:undertriage", "2")):
        assert main(["run", "--model", model, "--scenarios", "all", "--k", k, "--out", str(out), "--quiet"]) == 0
    return labelled, second


def test_code_build_validate_and_correct(runs: tuple[Path, Path], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    labelled, second = runs
    truth = _truth(labelled)
    save_taxonomy(labelled / "taxonomy.json", Taxonomy(modes=[FailureMode(
        name=MODE, definition="The clinician advises less urgent care than the patient's problem needs.",
        pass_example="Sends a patient with crushing chest pain to the emergency department.",
        fail_example="Tells a patient with crushing chest pain to see their GP next week.")]))
    store = AnnotationStore(labelled, reviewer="ana")
    for trace, (shows, _) in sorted(truth.items()):  # the reviewer passes and fails every encounter ...
        store.save(Annotation(trace_id=trace, verdict="fail" if shows else "pass",
                              notes="sent home with chest pain" if shows else ""))
        if shows:  # ... and codes each failure with the mode
            code(labelled, trace, MODE, reviewer="ana")
    coded = sum(shows for shows, _ in truth.values())
    assert coded >= 20 and len(truth) - coded >= 20

    capsys.readouterr()
    assert main(["annotations", "taxonomy", str(labelled), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    row = next(m for m in listed["modes"] if m["name"] == MODE)
    assert row["count"] == coded

    assert main(["judges", "build", str(labelled), "--min-labels", "5"]) == 0
    spec = yaml.safe_load((labelled / "judges" / f"{MODE}.yaml").read_text())
    assert spec["mode"] == MODE and spec["examples"] and spec["hash"]

    truth_by_text = {text: shows for shows, text in truth.values()}
    second_truth = _truth(second)
    truth_by_text.update({text: shows for shows, text in second_truth.values()})
    report = tmp_path / "validation.json"
    with FakeChatServer(reply=_fixed_confusion_judge(truth_by_text)) as judge:
        assert main(["judges", "validate", str(labelled), "--judge", "fixed-judge", "--judge-base-url",
                     judge.base_url, "--apply-to", str(second), "--json", str(report)]) == 0
    printed = capsys.readouterr().out
    assert MODE in printed and "TPR" in printed and "corrected" in printed
    figures = json.loads(report.read_text())[0]
    # the same figures are saved in the labelled run for the dashboard's disagreements
    assert json.loads((labelled / "judge_validation.json").read_text()) == json.loads(report.read_text())
    test = figures["test"]
    assert test["tp"] + test["fn"] >= 5 and test["tn"] + test["fp"] >= 5 and test["usable"]
    assert test["tpr_ci95"][0] <= TPR <= test["tpr_ci95"][1] and test["tnr_ci95"][0] <= TNR <= test["tnr_ci95"][1]
    rate = figures["runs"][0]
    true_rate = sum(shows for shows, _ in second_truth.values()) / len(second_truth)
    assert rate["corrected"] is not None and rate["ci95"][0] <= true_rate <= rate["ci95"][1]
    # the raw rate carries the judge's false positives: above the truth by about (1 - TNR) x (1 - rate)
    assert rate["raw"] > true_rate

    # iterating on the prompt: --dev-only judges the dev split alone and records nothing
    record = labelled / "judges" / "validation.json"
    before = record.read_text()
    dev_n = sum(figures["dev"][k] for k in ("tp", "fn", "tn", "fp", "no_verdict"))
    capsys.readouterr()
    with FakeChatServer(reply=_fixed_confusion_judge(truth_by_text)) as judge:
        assert main(["judges", "validate", str(labelled), "--judge", "fixed-judge", "--judge-base-url",
                     judge.base_url, "--dev-only"]) == 0
        assert len(judge.requests) == dev_n  # not one call on the test split
    printed = capsys.readouterr().out
    assert "not run (--dev-only" in printed and record.read_text() == before
    assert json.loads((labelled / "judge_validation.json").read_text())[0]["test"] is None
    # a second version of the prompt validated on the test split: said, and remembered
    path = labelled / "judges" / f"{MODE}.yaml"
    edited = path.read_text().replace("problem needs.", "problem needs, such as home care for an emergency.")
    assert edited != path.read_text()
    path.write_text(edited)
    with FakeChatServer(reply=_fixed_confusion_judge(truth_by_text)) as judge:
        assert main(["judges", "validate", str(labelled), "--judge", "fixed-judge", "--judge-base-url",
                     judge.base_url]) == 0
    assert "has now been run on 2 versions" in capsys.readouterr().out
    assert len(json.loads(record.read_text())["judges"][MODE]["tested_hashes"]) == 2
    assert main(["judges", "validate", str(labelled), "--judge", "x", "--judge-base-url", "http://127.0.0.1:9/v1",
                 "--dev-only", "--apply-to", str(second)]) == 2
    assert "--dev-only cannot be used with --apply-to" in capsys.readouterr().err

    # a --json path that cannot be written is one clear error before any judge call is paid for
    capsys.readouterr()
    with FakeChatServer(reply=_fixed_confusion_judge(truth_by_text)) as judge:
        assert main(["judges", "validate", str(labelled), "--judge", "fixed-judge", "--judge-base-url",
                     judge.base_url, "--json", str(tmp_path / "no-such-folder" / "v.json")]) == 2
        assert not judge.requests
    err = capsys.readouterr().err
    assert "--json" in err and "no-such-folder" in err and err.count("\n") == 1 and "Traceback" not in err


def test_build_without_enough_labels_is_one_clear_error(runs: tuple[Path, Path], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    _, second = runs
    taxonomy = tmp_path / "t.json"
    save_taxonomy(taxonomy, Taxonomy(modes=[FailureMode(name="m", definition="d")]))
    assert main(["judges", "build", str(second), "--taxonomy", str(taxonomy)]) == 2
    err = capsys.readouterr().err
    assert "no failure mode" in err and "--min-labels" in err and err.count("\n") == 1
    assert main(["judges", "validate", str(second)]) == 2
    assert "needs a --judge" in capsys.readouterr().err


def test_acceptance_twenty_coded_in_the_dashboard_to_a_corrected_rate(
        runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's acceptance, keystroke by keystroke: a reviewer codes 20 annotated encounters on the coding screen
    (c, n for the new mode, d for its definition, then Enter Enter for each next one); the taxonomy command lists
    the mode with its count; a judge is built and validated on the test split; the second run's corrected failure
    rate is printed."""
    import shutil

    from tui import DashboardApp
    from tui._screens import CodingScreen

    labelled = tmp_path / "labelled"
    shutil.copytree(runs[0], labelled)  # the other test of the module may have coded runs[0]: start unreviewed
    for name in ("annotations.jsonl", "taxonomy.json", "taxonomy.json.lock", "judge_validation.json"):
        (labelled / name).unlink(missing_ok=True)
    shutil.rmtree(labelled / "judges", ignore_errors=True)
    second = runs[1]
    truth = _truth(labelled)
    store = AnnotationStore(labelled, reviewer="ana")
    notes = ("told to book a GP appointment for crushing chest pain", "sent home, should have been A&E",
             "self-care advice for a red-flag headache", "routine slot offered, needed same-day")
    for i, (trace, (shows, _)) in enumerate(sorted(truth.items())):
        store.save(Annotation(trace_id=trace, verdict="fail" if shows else "pass",
                              notes=notes[i % len(notes)] if shows else "appropriate advice"))
    failing = sorted(t for t, (shows, _) in truth.items() if shows)
    assert len(failing) >= 20

    async def review() -> None:
        app = DashboardApp(labelled, reviewer="bo")
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("c")
            await pilot.pause()
            assert isinstance(app.screen, CodingScreen)
            await pilot.press("n", *"under", "enter")  # the first: a new mode typed in place (keys are slow here)
            await pilot.press("tab", "d", *"Less care than needed.", "enter")
            await pilot.press("shift+tab")
            for _ in range(19):  # the next 19: Enter to pick a mode, Enter on under_escalation
                await pilot.press("enter", "enter")
            await pilot.pause()

    asyncio.run(review())  # the commands below run their own event loops
    coded = {t: a.failure_mode for t, a in AnnotationStore(labelled).load().items() if a.failure_mode}
    assert len(coded) == 20 and set(coded.values()) == {"under"}

    capsys.readouterr()
    assert main(["annotations", "taxonomy", str(labelled)]) == 0
    listed = capsys.readouterr().out
    assert "under" in listed and "20" in listed and "Less care than needed." in listed
    assert main(["judges", "build", str(labelled), "--min-labels", "5"]) == 0
    truth_by_text = {text: shows for shows, text in truth.values()}
    truth_by_text.update({text: shows for shows, text in _truth(second).values()})
    capsys.readouterr()
    with FakeChatServer(reply=_fixed_confusion_judge(truth_by_text)) as judge:
        assert main(["judges", "validate", str(labelled), "--judge", "fixed-judge", "--judge-base-url",
                     judge.base_url, "--apply-to", str(second)]) == 0
    printed = capsys.readouterr().out
    assert "test" in printed and "TPR" in printed
    corrected = next(line for line in printed.splitlines() if str(second) in line)
    assert "raw failure rate" in corrected and "corrected" in corrected and "unusable" not in corrected
