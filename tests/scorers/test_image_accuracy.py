"""Image accuracy (scorers._image_accuracy): multiple-choice accuracy of imaging items and top-1/top-3 of encounters
with an image, overall and by image type, with the bootstrap CIs triage accuracy uses, on hand-built cards."""

from __future__ import annotations

from pathlib import Path

import pytest

from scenarios import Scenario
from scenarios.loader import parse_scenario
from scenarios.schema import Diagnosis, ImageRef, ImagingTask
from scorers import aggregate, bootstrap_ci, cluster_bootstrap_ci, image_accuracy
from sim.records import DiagnosisMatch, ImagingComponent, ScoreCard

MINIMAL = Path(__file__).parents[1] / "scenarios" / "valid_minimal.yaml"


@pytest.fixture(scope="module")
def base() -> Scenario:
    return parse_scenario(MINIMAL.read_text(), MINIMAL)


def item(base: Scenario, sid: str, types: list[str], *, image: bool = True, answer_type: str = "multiple_choice",
         ) -> Scenario:
    """A multiple-choice imaging item under ``sid`` with ``image_type:`` tags (without its image: text only)."""
    extra = {"choices": ["a", "b"], "answer": "A"} if answer_type == "multiple_choice" else {"findings": ["x"]}
    task = ImagingTask(images=[ImageRef(path="x.png", description="an image")] if image else [],
                       image_unavailable=None if image else "image not available: test", question="?",
                       answer_type=answer_type, modality="photo", body_part="skin", **extra)
    return base.model_copy(update={"id": sid, "suite": "imaging", "information_tree": [], "imaging": task,
                                   "tags": [f"image_type:{t}" for t in types]})


def encounter(base: Scenario, sid: str, types: list[str], *, image_fact: bool = False) -> Scenario:
    expected = base.expected.model_copy(update={"diagnoses": [Diagnosis(name="Tinea")]})
    tree = [f.model_copy(update={"image": ImageRef(path="x.png", description="a photo")}) if image_fact and i == 0
            else f for i, f in enumerate(base.information_tree)]
    return base.model_copy(update={"id": sid, "expected": expected, "information_tree": tree,
                                   "tags": [f"image_type:{t}" for t in types]})


def item_card(right: bool) -> ScoreCard:
    comp = ImagingComponent(answer_type="multiple_choice", score=float(right), choice="A" if right else "B",
                            correct=right)
    return ScoreCard(triage=None, information=None, escalation=None, efficiency=None, diagnosis=None, imaging=comp,
                     composite=float(right), passed=right)


def enc_card(top1: bool, top3: bool) -> ScoreCard:
    return ScoreCard(triage=None, information=None, escalation=None, efficiency=None, composite=1.0, passed=True,
                     diagnosis=DiagnosisMatch(top1=top1, top3=top3))


def test_items_and_encounters_overall_and_by_type(base: Scenario) -> None:
    scenarios = [item(base, "i1", ["CT scan", "hist/path"]), item(base, "i2", ["CT scan"]),
                 item(base, "i3", ["dermatology"], image=False), item(base, "i4", ["xray"]),
                 encounter(base, "e1", ["CT scan"]), encounter(base, "e2", ["dermatology"]),
                 encounter(base, "e3", [], image_fact=True), encounter(base, "plain", []),
                 item(base, "f1", ["xray"], answer_type="findings")]
    cards = {("i1", 0): item_card(True), ("i2", 0): item_card(False), ("i3", 0): item_card(True),
             ("e1", 0): enc_card(True, True), ("e2", 0): enc_card(False, True), ("e3", 0): enc_card(False, False),
             ("plain", 0): enc_card(True, True)}
    ia = image_accuracy(scenarios, cards, errors={("i4", 0)}, not_applicable={("i1", 1)})
    assert ia is not None
    o = ia.overall
    assert (o.choice.count, o.choice.n, o.text_only) == (2, 3, 1)
    assert (o.top1.count, o.top1.n, o.top3.count) == (1, 3, 2)  # "plain" shows no image and has no type: not counted
    assert (ia.errors, ia.not_applicable, ia.scenarios, ia.clustered) == (1, 1, 6, False)
    types = {t.image_type: t for t in ia.by_type}
    assert list(types) == ["CT scan", "dermatology", "hist/path", "(no image type)"]  # xray: its item errored
    assert (types["CT scan"].choice.count, types["CT scan"].choice.n, types["CT scan"].top1.n) == (1, 2, 1)
    assert (types["hist/path"].choice.count, types["hist/path"].choice.n) == (1, 1)  # a case of two types counts twice
    assert types["dermatology"].text_only == 1 and types["(no image type)"].top1.n == 1
    # the CI is the bootstrap of the mean over encounters when each scenario has one
    assert o.choice.ci95 == bootstrap_ci([1.0, 0.0, 1.0])
    assert "multiple choice 0.67" in ia.cli_line() and "top-1 0.33" in ia.cli_line()


def test_k_runs_are_resampled_by_scenario(base: Scenario) -> None:
    scenarios = [item(base, "a", ["x"]), item(base, "b", ["x"]), item(base, "c", ["y"])]
    cards = {("a", 0): item_card(True), ("a", 1): item_card(True), ("b", 0): item_card(False),
             ("b", 1): item_card(True), ("c", 0): item_card(False), ("c", 1): item_card(False)}
    ia = image_accuracy(scenarios, cards)
    assert ia is not None and ia.clustered and ia.overall.choice.value == 0.5
    assert ia.overall.choice.ci95 == cluster_bootstrap_ci([[1.0, 1.0], [0.0, 1.0], [0.0, 0.0]])
    assert "over scenarios (3)" in ia.ci_method()


def test_no_items_or_image_encounters_no_figures(base: Scenario) -> None:
    assert image_accuracy([base], {(base.id, 0): enc_card(True, True)}) is None
    summary = aggregate([base], {}, {})
    assert summary.image_accuracy is None and "image_accuracy" not in summary.model_dump(exclude_none=False)


def test_the_summary_carries_it(base: Scenario) -> None:
    summary = aggregate([item(base, "i1", ["ECG"])], {("i1", 0): item_card(True)}, {})
    assert summary.image_accuracy is not None and summary.image_accuracy.by_type[0].image_type == "ECG"
    assert "image_accuracy" in summary.model_dump()
