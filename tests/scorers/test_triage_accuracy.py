"""Triage accuracy (scorers._triage_accuracy): escalation accuracy, under/over-triage, per class, the confusion
matrix and diagnosis top-1/top-3, on hand-built cards whose answers are known."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scenarios import Scenario
from scenarios.loader import parse_scenario
from scenarios.schema import Diagnosis, Escalation
from scorers import aggregate, bootstrap_ci, cluster_bootstrap_ci, score_encounter, triage_accuracy
from sim.encounter.assessment import parse_assessment
from sim.records import ConversationResult, EscalationComponent, ParsedAssessment, ScoreCard, TriageAccuracy

MINIMAL = Path(__file__).parents[1] / "scenarios" / "valid_minimal.yaml"
RATIONALE = "test labels"


@pytest.fixture(scope="module")
def base() -> Scenario:
    return parse_scenario(MINIMAL.read_text(), MINIMAL)


def labelled(base: Scenario, sid: str, best: str | None, acceptable: tuple[str, ...] = (),
             diagnoses: list[Diagnosis] | None = None) -> Scenario:
    """The minimal scenario under another id with the given escalation labels (and diagnoses)."""
    expected = base.expected.model_copy(update={
        "escalation": Escalation(best) if best else None,
        "acceptable_escalations": [Escalation(a) for a in acceptable],
        "label_rationale": RATIONALE if acceptable else None,
        "diagnoses": diagnoses if diagnoses is not None else [],
    })
    return base.model_copy(update={"id": sid, "expected": expected})


def card(given: str | None, expected: str | None = None, **extra: Any) -> ScoreCard:
    """A score card whose only content is the escalation given (what triage accuracy reads)."""
    esc = EscalationComponent(expected=expected, given=given, under_escalated=False, score=1.0)
    return ScoreCard(triage=None, information=None, escalation=esc, efficiency=None, diagnosis=None, composite=1.0,
                     passed=True, **extra)


def result(scenario: Scenario, reply: str, k: int = 0) -> ConversationResult:
    return ConversationResult(scenario_id=scenario.id, k=k, seed=0, harness_version="t", model="m", turns=[],
                              gathered_info=[], final_assessment=reply, final_reply=reply,
                              assessment=parse_assessment(reply), termination="assessment", agent_turns=2,
                              turn_limit=10, started_at=0.0, ended_at=1.0)


def counts(ta: TriageAccuracy) -> dict[str, tuple[int, int]]:
    names = ("exact", "acceptable", "under", "over", "under_acceptable", "over_acceptable", "none", "unsafe")
    return {n: (getattr(ta, n).count, getattr(ta, n).n) for n in names}


# ---------------------------------------------------------------------------------------- the figures

@pytest.fixture(scope="module")
def six(base: Scenario) -> tuple[list[Scenario], dict[tuple[str, int], ScoreCard], dict[tuple[str, int], str]]:
    """Three emergency cases given emergency / urgent / nothing; an urgent case (acceptable: emergency, urgent)
    given emergency; a routine case (acceptable: routine, self_care) given self_care; a self-care case given
    routine. Plus an error on e1, and a scenario with no escalation target (ignored)."""
    scenarios = [labelled(base, "e1", "emergency"), labelled(base, "e2", "emergency"),
                 labelled(base, "e3", "emergency"), labelled(base, "u1", "urgent", ("emergency", "urgent")),
                 labelled(base, "r1", "routine", ("routine", "self_care")), labelled(base, "s1", "self_care"),
                 labelled(base, "ddx_only", None)]
    cards = {("e1", 0): card("emergency"), ("e2", 0): card("urgent"), ("e3", 0): card(None),
             ("u1", 0): card("emergency"), ("r1", 0): card("self_care"), ("s1", 0): card("routine"),
             ("ddx_only", 0): card(None)}
    return scenarios, cards, {("e1", 1): "AgentError: timeout"}


def test_overall_figures_under_and_over_triage(six: Any) -> None:
    scenarios, cards, errors = six
    ta = triage_accuracy(scenarios, cards, errors)
    assert ta is not None
    assert (ta.scored, ta.encounters, ta.errors, ta.scenarios) == (6, 7, 1, 6)
    assert counts(ta) == {"exact": (1, 6), "acceptable": (3, 6), "under": (2, 6), "over": (2, 6),
                          "under_acceptable": (1, 6), "over_acceptable": (1, 6), "none": (1, 6), "unsafe": (2, 6)}
    assert ta.exact.value == pytest.approx(1 / 6) and ta.under.value == pytest.approx(2 / 6)
    assert ta.under_acceptable.value == pytest.approx(1 / 6) and ta.unsafe.value == pytest.approx(2 / 6)
    # every encounter lands in exactly one of exact/under/over/none, and of acceptable/under/over (set)/none
    assert sum(c for c, _ in (counts(ta)[n] for n in ("exact", "under", "over", "none"))) == 6
    assert sum(c for c, _ in (counts(ta)[n] for n in ("acceptable", "under_acceptable", "over_acceptable",
                                                      "none"))) == 6
    assert not ta.clustered and ta.diagnosis is None
    for name in ("exact", "acceptable", "under", "over", "unsafe"):
        rate = getattr(ta, name)
        assert rate.ci95 is not None and rate.ci95[0] <= rate.value <= rate.ci95[1]
    assert ta.under.ci95 == bootstrap_ci([0, 1, 0, 0, 1, 0])  # K = 1: the ordinary bootstrap over encounters
    assert triage_accuracy(scenarios, cards, errors) == ta  # seeded: the same figures every time


def test_per_class_and_confusion_matrix(six: Any) -> None:
    ta = triage_accuracy(*six)
    assert ta is not None
    assert list(ta.per_class) == ["emergency", "urgent", "routine", "self_care"]
    em = ta.per_class["emergency"]
    assert em.n == 3 and (em.exact.count, em.acceptable.count, em.under_acceptable.count) == (1, 1, 1)
    assert em.exact.value == pytest.approx(1 / 3)
    assert (ta.per_class["urgent"].exact.value, ta.per_class["urgent"].acceptable.value) == (0.0, 1.0)
    assert (ta.per_class["routine"].acceptable.value, ta.per_class["routine"].under_acceptable.value) == (1.0, 0.0)
    assert (ta.per_class["self_care"].n, ta.per_class["self_care"].acceptable.value) == (1, 0.0)
    assert ta.confusion == {
        "emergency": {"emergency": 1, "urgent": 1, "routine": 0, "self_care": 0, "none": 1},
        "urgent": {"emergency": 1, "urgent": 0, "routine": 0, "self_care": 0, "none": 0},
        "routine": {"emergency": 0, "urgent": 0, "routine": 0, "self_care": 1, "none": 0},
        "self_care": {"emergency": 0, "urgent": 0, "routine": 1, "self_care": 0, "none": 0},
    }


def test_summary_carries_the_figures(six: Any) -> None:
    scenarios, cards, errors = six
    summary = aggregate(scenarios, cards, errors)
    assert summary.triage_accuracy == triage_accuracy(scenarios, cards, errors)
    dumped = summary.model_dump(mode="json")["triage_accuracy"]
    assert dumped["under"] == {"value": pytest.approx(2 / 6), "ci95": dumped["under"]["ci95"], "count": 2, "n": 6}
    line = summary.triage_accuracy.cli_line()  # type: ignore[union-attr]
    assert line.startswith("Triage accuracy: exact 0.17 [") and "under-triage 0.33 [" in line
    assert line.endswith("(6 of 7 encounters scored)")


def test_k_runs_resample_scenarios_not_encounters(base: Scenario) -> None:
    """Two scenarios, three runs each: one always right, one always wrong. Resampling scenarios gives [0, 1];
    resampling the six encounters as if independent would give a narrower interval."""
    scenarios = [labelled(base, "a", "emergency"), labelled(base, "b", "emergency")]
    cards = {("a", k): card("emergency") for k in range(3)} | {("b", k): card("self_care") for k in range(3)}
    ta = triage_accuracy(scenarios, cards)
    assert ta is not None and ta.clustered and ta.scenarios == 2
    assert ta.exact.value == 0.5 and ta.exact.ci95 == [0.0, 1.0]
    naive = bootstrap_ci([1, 1, 1, 0, 0, 0])
    assert naive is not None and naive[1] - naive[0] < 1.0
    assert "over scenarios (2)" in ta.ci_method()


def test_cluster_bootstrap_helper() -> None:
    assert cluster_bootstrap_ci([]) is None
    assert cluster_bootstrap_ci([[0.5], [0.5, 0.5]]) == [0.5, 0.5]
    one = cluster_bootstrap_ci([[1.0, 0.0, 1.0]])
    assert one == pytest.approx([2 / 3, 2 / 3])  # one cluster: no spread between scenarios to see
    singles = [[1.0], [0.0], [1.0], [1.0]]
    assert cluster_bootstrap_ci(singles) == bootstrap_ci([1.0, 0.0, 1.0, 1.0])
    grouped = [[1.0, 1.0], [0.0, 1.0], [0.0, 0.0], [1.0, 1.0, 1.0]]
    ci = cluster_bootstrap_ci(grouped, seed=3)
    assert ci is not None and ci[0] < 5 / 9 < ci[1] and ci == cluster_bootstrap_ci(grouped, seed=3)


# ---------------------------------------------------------------------------------------------- diagnosis

ACS = Diagnosis(name="Acute coronary syndrome", synonyms=["NSTEMI", "heart attack"])
CHAT_DIFFERENTIAL = """Thanks for answering my questions.

## Assessment
- **Triage level:** ESI 2 (emergent)
- **Escalation:** Emergency (call an ambulance)
- **Differential diagnoses:**
  1. **Pulmonary embolism**
  2. Aortic dissection
  3. Possible heart attack
  4. Pneumonia
- **Advice:** call 999 now."""


def test_top1_top3_with_synonyms_and_a_chat_formatted_differential(base: Scenario) -> None:
    acs = labelled(base, "acs", "emergency", diagnoses=[ACS, Diagnosis(name="Aortic dissection")])
    no_dx = labelled(base, "no_dx", "urgent")
    replies = {
        0: "ASSESSMENT:\nTriage level: ESI 2\nEscalation: emergency\nDiagnoses: 1. NSTEMI; 2. Aortic dissection",
        1: CHAT_DIFFERENTIAL,  # the synonym, hedged, third in a markdown list: top-3, not top-1
        2: "ASSESSMENT:\nEscalation: urgent\nDiagnoses: 1. GORD; 2. Costochondritis; 3. Pneumonia; "
           "4. Acute coronary syndrome",  # named, but fourth
        3: "ASSESSMENT:\nEscalation: emergency\nDiagnoses: 1. History of heart attack; 2. Anxiety",  # not named
    }
    cards = {("acs", k): score_encounter(result(acs, text, k), acs) for k, text in replies.items()}
    cards[("no_dx", 0)] = score_encounter(result(no_dx, "ASSESSMENT:\nEscalation: urgent\nDiagnoses: Cold"), no_dx)
    ta = triage_accuracy([acs, no_dx], cards)
    assert ta is not None and ta.diagnosis is not None
    dx = ta.diagnosis
    assert dx.n == 4 and (dx.top1.count, dx.top3.count) == (1, 2)
    assert (dx.top1.value, dx.top3.value) == (0.25, 0.5)
    assert not dx.judge and dx.judge_top1 is None and "synonym matcher" in dx.method
    assert ta.exact.count == 4 and ta.under.count == 1  # acs k=2 said urgent
    assert ta.per_class["emergency"].n == 4 and ta.per_class["urgent"].n == 1


# ------------------------------------------------------------------------------- runs without targets, kinds

def test_no_escalation_targets_means_no_figures(base: Scenario) -> None:
    scenarios = [labelled(base, "ddx1", None, diagnoses=[ACS]), labelled(base, "ddx2", None)]
    cards = {("ddx1", 0): card(None), ("ddx2", 0): card(None)}
    assert triage_accuracy(scenarios, cards, {("ddx2", 1): "error"}) is None
    summary = aggregate(scenarios, cards, {("ddx2", 1): "error"})
    assert summary.triage_accuracy is None and summary.model_dump(mode="json")["triage_accuracy"] is None
    assert triage_accuracy([], {}) is None


def test_every_encounter_an_error_is_counted_not_scored(base: Scenario) -> None:
    s = labelled(base, "e", "emergency")
    ta = triage_accuracy([s], {}, {("e", 0): "boom", ("e", 1): "boom"}, not_applicable={("e", 2)})
    assert ta is not None and (ta.scored, ta.encounters, ta.errors, ta.not_applicable) == (0, 2, 2, 1)
    assert ta.exact.value is None and ta.exact.ci95 is None and ta.exact.text() == "n/a"
    assert ta.per_class["emergency"].n == 0 and ta.confusion["emergency"]["none"] == 0


def imaging_result(scenario: Scenario, reply: str, escalation: str | None) -> ConversationResult:
    return ConversationResult(scenario_id=scenario.id, k=0, seed=0, harness_version="t", model="m", turns=[],
                              gathered_info=[], final_reply=reply, assessment=ParsedAssessment(escalation=escalation),
                              termination="reply", agent_turns=1, turn_limit=1, started_at=0.0, ended_at=1.0)


REPLAY = """\
id: replay_headache
title: A fixed conversation the agent answers once
suite: ddx
canary: encsim-canary-12345678-replay-headache
patient_profile: {age: 40, sex: female}
chief_complaint: headache
opening_line: "unused for replay items"
fallback_lines: ["-"]
replay:
  - {role: patient, content: "I have had a throbbing headache with flashing lights since this morning."}
expected:
  escalation: urgent
  diagnoses: [{name: Migraine with aura, synonyms: [migraine]}]
"""


def test_a_run_mixing_imaging_items_replays_and_library_encounters(by_id: dict[str, Scenario],
                                                                  tmp_path: Path) -> None:
    """Every kind in one run. Imaging cards carry no verdict and no acceptable set: the scenario's labels
    decide; they have no differential, so they are left out of the diagnosis figures (and counted)."""
    acs, ptx, em = by_id["acs_chest_pain"], by_id["img_cxr_left_pneumothorax"], by_id["img_skin_erythema_migrans"]
    replay = parse_scenario(REPLAY, tmp_path / "replay_headache.yaml")
    assert ptx.imaging is not None and em.imaging is not None and ptx.expected.diagnoses and em.expected.diagnoses
    reply = "**Assessment**\n- **Escalation:** Routine (GP appointment)\n- **Most likely diagnosis:** Migraine"
    replayed = result(replay, reply).model_copy(update={"termination": "reply", "agent_turns": 1})
    cards = {
        ("acs_chest_pain", 0): score_encounter(result(acs, CHAT_DIFFERENTIAL.replace("heart attack", "ACS")), acs),
        ("img_cxr_left_pneumothorax", 0): score_encounter(
            imaging_result(ptx, "Findings: pneumothorax\nEscalation: urgent", "urgent"), ptx),
        ("img_skin_erythema_migrans", 0): score_encounter(imaging_result(em, "Looks like erythema migrans.\n"
                                                                             "Escalation: urgent", "urgent"), em),
        ("replay_headache", 0): score_encounter(replayed, replay),
    }
    assert cards[("img_cxr_left_pneumothorax", 0)].imaging is not None
    assert cards[("img_cxr_left_pneumothorax", 0)].escalation.verdict is None  # type: ignore[union-attr]
    errors = {("img_cxr_left_pneumothorax", 1): "ImageError: corrupt", ("acs_chest_pain", 1): "AgentError: 500"}
    summary = aggregate([acs, ptx, em, replay], cards, errors)
    ta = summary.triage_accuracy
    assert ta is not None and (ta.scored, ta.encounters, ta.errors) == (4, 6, 2)
    # acs: emergency = best; pneumothorax: urgent < emergency (under, unsafe); erythema migrans: urgent is in
    # its acceptable set {urgent, routine} but more urgent than its best label (over, acceptable); the replay:
    # routine < urgent (under, unsafe)
    assert counts(ta) == {"exact": (1, 4), "acceptable": (2, 4), "under": (2, 4), "over": (1, 4),
                          "under_acceptable": (2, 4), "over_acceptable": (0, 4), "none": (0, 4), "unsafe": (2, 4)}
    assert ta.confusion["emergency"] == {"emergency": 1, "urgent": 1, "routine": 0, "self_care": 0, "none": 0}
    assert ta.confusion["routine"]["urgent"] == 1 and ta.confusion["urgent"]["routine"] == 1
    assert ta.diagnosis is not None and ta.diagnosis.n == 2 and ta.diagnosis.imaging_excluded == 2
    assert ta.diagnosis.top1.count == 1 and ta.diagnosis.top3.count == 2  # the replay's migraine; "Possible ACS"


# ------------------------------------------------------------------------------- the judge path of top-1/top-3

class RankJudge:
    """A judge that answers the diagnosis check with a fixed rank (None: an unusable reply)."""

    def __init__(self, name: str, rank: int | None) -> None:
        self.name, self.rank, self.prompts = name, rank, []  # type: ignore[var-annotated]

    async def ask_json(self, messages: list[dict[str, str]], *, keys: dict[str, type]) -> dict[str, Any] | None:
        self.prompts.append(messages)
        if "match" in keys:
            return None if self.rank is None else {"explanation": "x", "match": self.rank}
        return {"explanation": "x", "criteria_met": True} if "criteria_met" in keys else {"rating": 2}


async def test_the_jury_decides_which_of_the_first_three_names_the_expected_diagnosis(base: Scenario) -> None:
    from scorers._judge import diagnosis_prompt, judge_encounter, jury_rank

    acs = labelled(base, "acs", Escalation.emergency, diagnoses=[ACS])
    # the synonym matcher misses "MI" for ACS; the jury says it is the same condition, ranked 2nd
    text = "ASSESSMENT:\nEscalation: emergency\nDiagnoses: Musculoskeletal strain; MI; Pericarditis; Reflux"
    res = result(acs, text, 0)
    card = score_encounter(res, acs)
    judges = [RankJudge("a", 2), RankJudge("b", 2), RankJudge("c", 1)]
    card.judge = await judge_encounter(res, acs, judges)  # type: ignore[arg-type]
    assert card.judge.diagnosis_votes == {"a": 2, "b": 2, "c": 1} and card.judge.diagnosis_rank == 2
    user = judges[0].prompts[-1][-1]["content"]
    assert user.count("\n") >= 3 and "4." not in user and "1. Musculoskeletal strain" in user  # the top 3 only
    assert jury_rank([1, 2]) is None and jury_rank([None, None]) is None and jury_rank([0, 0, 3]) == 0
    assert "Correct diagnosis: " in diagnosis_prompt(acs.expected.diagnoses[0], ["x"])[1]["content"]

    ta = triage_accuracy([acs], {("acs", 0): card})
    assert ta is not None and ta.diagnosis is not None
    dx = ta.diagnosis
    assert dx.judge and dx.judge_n == 1 and dx.judge_top1 is not None and dx.judge_top3 is not None
    assert (dx.judge_top1.count, dx.judge_top3.count) == (0, 1)
    # a tie or no usable reply: no verdict, left out of judge_n
    card.judge = await judge_encounter(res, acs, [RankJudge("a", None), RankJudge("b", None)])  # type: ignore[arg-type]
    assert card.judge.diagnosis_rank is None
    dx2 = triage_accuracy([acs], {("acs", 0): card}).diagnosis  # type: ignore[union-attr]
    assert dx2 is not None and dx2.judge and dx2.judge_n == 0
