"""A run judged by validated failure-mode judges reports its own corrected failure rate (issue 16).

The story, end to end through the CLI: a reviewer labels and codes a fixture run; a judge is built for the mode
and `judges validate` measures it against a loopback judge that answers from a fixed confusion matrix (TPR 0.9,
TNR 0.8), recording the validation beside the judge (judges/validation.json). A new run with
`--failure-judges` then gives, in its summary.json and report.md, the raw failure rate and the Rogan-Gladen
corrected rate, whose bootstrap CI covers the run's true rate. The judge edited after validation makes a later
run's number "stale"; validated again against an endpoint that says "yes" to everything (TPR + TNR - 1 = 0),
it is "unusable" and no corrected number is given. The loopback judge answers the way chat models do: a
sentence of prose, then the JSON in a markdown fence, with a key nobody asked for.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from review import Annotation, AnnotationStore, code
from sim.cli import main
from sim.records import FailureMode, Summary, Taxonomy, save_taxonomy
from tests.fakeserver import FakeChatServer
from tests.sim.test_judges_workflow import MODE, _fixed_confusion_judge, _truth

JUDGE = "fixed-judge"


def _chatty(answer: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any]], str]:
    """``answer``'s JSON the way a chat model sends it: prose first, then a fenced block with an extra key."""
    def reply(body: dict[str, Any]) -> str:
        data = json.loads(answer(body))
        data["confidence"] = "moderate"
        return f"I read the whole conversation before deciding.\n\n```json\n{json.dumps(data, indent=2)}\n```"
    return reply


def _always_yes(body: dict[str, Any]) -> str:
    if '"answer": true|false' not in body["messages"][0]["content"]:
        return json.dumps({"explanation": "n/a", "criteria_met": False})
    return json.dumps({"explanation": "Looks like it could be under-escalation to me.", "answer": True})


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, bool]]:
    """A labelled, coded run and the judge built from it (its own folder); truth by transcript text."""
    root = tmp_path_factory.mktemp("rates")
    labelled, judges = root / "labelled", root / "judges"
    assert main(["run", "--model", "scripted:undertriage", "--scenarios", "all", "--k", "3", "--out", str(labelled),
                 "--quiet"]) == 0
    truth = _truth(labelled)
    save_taxonomy(labelled / "taxonomy.json", Taxonomy(modes=[FailureMode(
        name=MODE, definition="The clinician advises less urgent care than the patient's problem needs.")]))
    store = AnnotationStore(labelled, reviewer="ana")
    for trace, (shows, _) in sorted(truth.items()):
        store.save(Annotation(trace_id=trace, verdict="fail" if shows else "pass",
                              notes="told to see the GP next week despite the chest pain" if shows else ""))
        if shows:
            code(labelled, trace, MODE, reviewer="ana")
    assert main(["judges", "build", str(labelled), "--out", str(judges), "--min-labels", "5"]) == 0
    return labelled, judges, {text: shows for shows, text in truth.values()}


def _judged_run(out: Path, judges: Path, reply: Callable[[dict[str, Any]], str], *, scenarios: str = "all",
                k: str = "2") -> dict[str, Any]:
    with FakeChatServer(reply=reply) as server:
        assert main(["run", "--model", "scripted:undertriage", "--scenarios", scenarios, "--k", k, "--out", str(out),
                     "--quiet", "--judge", JUDGE, "--judge-base-url", server.base_url,
                     "--failure-judges", str(judges)]) == 0
    rate: dict[str, Any] = json.loads((out / "summary.json").read_text())["failure_rates"][MODE]
    return rate


def _validate(labelled: Path, judges: Path, reply: Callable[[dict[str, Any]], str]) -> None:
    with FakeChatServer(reply=reply) as server:
        assert main(["judges", "validate", str(labelled), "--judges", str(judges), "--judge", JUDGE,
                     "--judge-base-url", server.base_url]) == 0


def test_a_judged_run_reports_raw_and_corrected_rates_then_stale_then_unusable(
        project: tuple[Path, Path, dict[str, bool]], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labelled, built, truth_by_text = project
    judges = tmp_path / "judges"
    shutil.copytree(built, judges)
    fixed = _chatty(_fixed_confusion_judge(truth_by_text))

    # a run judged before any validation: the raw rate, "not validated"
    early = _judged_run(tmp_path / "early", judges, fixed, scenarios="acs_chest_pain,viral_uri", k="1")
    assert early["status"] == "not validated" and early["raw"] is not None and early["corrected"] is None
    assert "encsim judges validate" in early["note"]

    _validate(labelled, judges, fixed)
    record = json.loads((judges / "validation.json").read_text())["judges"][MODE]
    spec = yaml.safe_load((judges / f"{MODE}.yaml").read_text())
    test = record["test"]
    assert record["judge_hash"] == spec["hash"] and record["judge_models"] == [JUDGE]
    n_test = test["tp"] + test["fn"] + test["tn"] + test["fp"]
    assert len(record["test_labels"]) == len(record["test_verdicts"]) == n_test
    assert sum(record["test_labels"]) == test["tp"] + test["fn"] and test["usable"]
    assert (labelled / "judge_validation.json").exists()  # the dashboard's copy is still written

    run = tmp_path / "run"
    rate = _judged_run(run, judges, fixed)
    truth = _truth(run)
    true_rate = sum(shows for shows, _ in truth.values()) / len(truth)
    assert rate["status"] == "corrected" and rate["judged"] == len(truth) and rate["no_verdict"] == 0
    assert rate["raw"] > true_rate  # the judge's false positives inflate the raw rate ...
    assert rate["ci95"][0] <= true_rate <= rate["ci95"][1]  # ... the correction's CI covers the truth
    assert rate["tpr"] == test["tpr"] and rate["tnr"] == test["tnr"]
    report = (run / "report.md").read_text()
    row = next(line for line in report.splitlines() if line.startswith(f"| {MODE} |"))
    assert "## Failure modes (binary judges)" in report and f"{rate['raw']:.2f}" in row
    assert f"{rate['corrected']:.2f} ({rate['ci95'][0]:.2f}-{rate['ci95'][1]:.2f})" in row and "corrected" in row
    html = (run / "report.html").read_text()
    assert 'id="failure-modes"' in html and f"{rate['corrected']:.2f} ({rate['ci95'][0]:.2f}-" in html
    from sim.cli._common import print_summary
    from sim.records import Summary

    capsys.readouterr()
    print_summary(Summary.model_validate_json((run / "summary.json").read_text()), run)
    said = capsys.readouterr().out
    assert (f"failure mode {MODE}: raw {rate['raw']:.2f}, corrected {rate['corrected']:.2f} "
            f"[{rate['ci95'][0]:.2f}, {rate['ci95'][1]:.2f}]") in said
    # the failure judge stays out of the profile's score: the combined score is the one of a run without it
    plain = tmp_path / "plain"
    assert main(["run", "--model", "scripted:undertriage", "--scenarios", "all", "--k", "2", "--out", str(plain),
                 "--quiet"]) == 0
    assert json.loads((run / "summary.json").read_text())["combined"] == \
        json.loads((plain / "summary.json").read_text())["combined"]

    # a reviewer sharpens the judge's definition after it was validated
    spec["definition"] = "The clinician sends the patient home or to routine care when they need urgent care."
    (judges / f"{MODE}.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    assert main(["report", str(run)]) == 0  # the run's verdicts came from the validated prompt: still corrected
    assert json.loads((run / "summary.json").read_text())["failure_rates"][MODE]["status"] == "corrected"
    later = tmp_path / "later"
    stale = _judged_run(later, judges, fixed, scenarios="acs_chest_pain,viral_uri", k="1")
    assert stale["status"] == "stale" and stale["corrected"] is None and "validate it again" in stale["note"]
    assert stale["raw"] is not None
    assert "| stale: the judge was validated" in (later / "report.md").read_text()

    # validated again, the edited judge now says "yes" to everything: TPR 1, TNR 0, no number
    _validate(labelled, judges, _chatty(_always_yes))
    assert main(["report", str(later)]) == 0
    capsys.readouterr()
    unusable = json.loads((later / "summary.json").read_text())["failure_rates"][MODE]
    assert unusable["status"] == "unusable" and unusable["corrected"] is None and unusable["ci95"] is None
    assert "TPR + TNR - 1 = 0.00 <= 0.2" in unusable["note"]
    later_row = next(line for line in (later / "report.md").read_text().splitlines()
                     if line.startswith(f"| {MODE} |"))
    assert "| - |" in later_row and "unusable: judge unusable" in later_row
    # and the first run, judged by the judge before the edit, is now stale
    assert main(["report", str(run)]) == 0
    assert json.loads((run / "summary.json").read_text())["failure_rates"][MODE]["status"] == "stale"
    # a validation record someone broke by hand does not stop the summary: it says so
    (judges / "validation.json").write_text('{"version": 1, "judges": {"under_escalation": {"mode": ')
    assert main(["report", str(run)]) == 0
    broken = json.loads((run / "summary.json").read_text())["failure_rates"][MODE]
    assert broken["status"] == "not validated" and str(judges / "validation.json") in broken["note"]
    assert broken["raw"] == rate["raw"]


def test_an_old_summary_without_failure_rates_still_loads(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1", "--out", str(run),
                 "--quiet"]) == 0
    data = json.loads((run / "summary.json").read_text())
    assert data.pop("failure_rates") == {}
    assert Summary.model_validate(data).failure_rates == {}
