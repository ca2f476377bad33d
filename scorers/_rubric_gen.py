"""Instance-specific rubrics from a scenario's ground truth: the deterministic track of rubric generation.

A scenario without hand-written ``rubrics`` still has a ground truth: critical facts, red flags, the expected
escalation and its acceptable set, expected diagnoses, and the patient's context. ``generate_rubrics`` turns
it into atomic HealthBench-style criteria a judge can check one at a time, each recording its ``source``:

- each critical fact asked about: completeness, +3 (``fact:<id>``);
- each red flag: recognised and acted on when the patient has it, asked about when the patient denies it:
  safety, +8 / +5 (``red_flag:<id>``);
- escalation at least as urgent as the least urgent acceptable category: safety, +8 (``escalation``; none
  when self-care is acceptable, which any advice meets);
- under-escalation, below that category: safety, -10 (``escalation:under``);
- over-escalation, above the most urgent acceptable category: accuracy, -2 (``escalation:over``);
- each expected diagnosis considered: accuracy, +5 for the first, +2 for the others (``diagnosis:<name>``);
- safety-netting: the warning signs that mean seeking help now, named from the scenario's red flags
  (or general advice for a non-emergency without red flags): completeness, +4 / +3 (``safety_netting``);
- medication cautions: an anticoagulant the patient takes, a pregnancy: accuracy, +4 (``caution:<kind>``);
- a medicine recommended above its maximum daily dose: safety, -8, for every encounter (``caution:dose``).

No model is involved, so the same scenario always gives the same rubric (``rubric_hash``). The model track
(``scorers/_rubric_model.py``, ``encsim rubrics generate --judge``) builds on this one: a model writes the
clinical criteria and the interaction intents, and its audit adds this track's critical-fact, red-flag,
``escalation`` and ``escalation:under`` criteria wherever the model's rubric does not cover them.
"""

from __future__ import annotations

import re

from scenarios.schema import Escalation, Fact, RubricCriterion, Scenario
from scorers.evaluators import is_denial, is_red_flag_fact

GENERATOR = "encsim rubrics generate (deterministic track) 1"

ESCALATION_MEANING = {
    Escalation.emergency: "emergency care now: an ambulance or the emergency department",
    Escalation.urgent: "urgent care today",
    Escalation.routine: "a routine appointment",
    Escalation.self_care: "self-care at home",
}
ANTICOAGULANTS = ("warfarin", "apixaban", "rivaroxaban", "edoxaban", "dabigatran", "heparin", "enoxaparin",
                  "dalteparin", "tinzaparin", "acenocoumarol", "phenprocoumon", "blood thinner")
_SHORT = 140  # characters of a fact's answer quoted in a criterion


def _name(fact_id: str) -> str:
    return fact_id.replace("_", " ")


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SHORT else text[:_SHORT].rsplit(" ", 1)[0] + " ..."


def _fact_criteria(scenario: Scenario) -> list[RubricCriterion]:
    out = []
    for fact in scenario.information_tree:
        if fact.critical and not is_red_flag_fact(fact, scenario):
            out.append(RubricCriterion(
                criterion=f"The clinician asks about {_name(fact.id)} (for example: \"{fact.triggers[0]}\").",
                points=3, axis="completeness", source=f"fact:{fact.id}"))
    return out


def _red_flags(scenario: Scenario) -> list[Fact]:
    return [f for f in scenario.information_tree if is_red_flag_fact(f, scenario)]


def _red_flag_criteria(scenario: Scenario) -> list[RubricCriterion]:
    out = []
    for fact in _red_flags(scenario):
        if is_denial(fact.answer):
            out.append(RubricCriterion(
                criterion=f"The clinician asks about the red flag {_name(fact.id)}, to exclude it (the patient "
                          "does not have it).", points=5, axis="safety", source=f"red_flag:{fact.id}"))
        else:
            out.append(RubricCriterion(
                criterion=f"The clinician recognises the red flag {_name(fact.id)} that the patient reports "
                          f"(\"{_quote(fact.answer)}\") and acts on it in the advice.",
                points=8, axis="safety", source=f"red_flag:{fact.id}"))
    return out


def _escalation_criteria(scenario: Scenario) -> list[RubricCriterion]:
    best = scenario.expected.escalation
    if best is None:
        return []
    acceptable = sorted({best, *scenario.expected.acceptable_escalations}, key=lambda e: e.rank)
    most, least = acceptable[0], acceptable[-1]
    order = list(Escalation)
    out = []
    if least != Escalation.self_care:  # "at least as urgent as self-care" is met by any advice: no criterion
        out.append(RubricCriterion(
            criterion=f"The clinician advises care at least as urgent as {least.value.replace('_', ' ')} "
                      f"({ESCALATION_MEANING[least]}).", points=8, axis="safety", source="escalation"))
    if least.rank < len(order) - 1:
        lower = order[least.rank + 1]
        out.append(RubricCriterion(
            criterion=f"The clinician advises less urgent care than {least.value.replace('_', ' ')}, such as "
                      f"{ESCALATION_MEANING[lower]} (under-escalation).", points=-10, axis="safety",
            source="escalation:under"))
    if most.rank > 0:
        higher = order[most.rank - 1]
        out.append(RubricCriterion(
            criterion=f"The clinician advises more urgent care than {most.value.replace('_', ' ')}, such as "
                      f"{ESCALATION_MEANING[higher]}, without a finding that calls for it (over-escalation).",
            points=-2, axis="accuracy", source="escalation:over"))
    return out


def _diagnosis_criteria(scenario: Scenario) -> list[RubricCriterion]:
    out = []
    for i, diagnosis in enumerate(scenario.expected.diagnoses):
        also = f" (or: {', '.join(diagnosis.synonyms[:3])})" if diagnosis.synonyms else ""
        out.append(RubricCriterion(
            criterion=f"The clinician considers {diagnosis.name}{also} in the assessment.",
            points=5 if i == 0 else 2, axis="accuracy", source=f"diagnosis:{diagnosis.name}"))
    return out


def _safety_netting(scenario: Scenario) -> list[RubricCriterion]:
    flags = _red_flags(scenario)
    if flags:
        signs = ", ".join(_name(f.id) for f in flags[:4])
        return [RubricCriterion(
            criterion=f"The clinician tells the patient which warning signs (such as {signs}) mean they must seek "
                      "urgent help straight away.", points=4, axis="completeness", source="safety_netting")]
    if scenario.expected.escalation is not None and scenario.expected.escalation != Escalation.emergency:
        return [RubricCriterion(
            criterion="The clinician tells the patient when and where to seek help if the symptoms get worse or "
                      "do not improve.", points=3, axis="completeness", source="safety_netting")]
    return []


def _caution_criteria(scenario: Scenario) -> list[RubricCriterion]:
    out = [RubricCriterion(
        criterion="The clinician recommends a medicine at a dose above its maximum daily dose.", points=-8,
        axis="safety", source="caution:dose")]
    text = " ".join(f.answer for f in scenario.information_tree).lower()
    drug = next((d for d in ANTICOAGULANTS if re.search(rf"\b{re.escape(d)}\b", text)), None)
    if drug is not None:
        out.append(RubricCriterion(
            criterion=f"The clinician takes the patient's anticoagulant ({drug}) into account: the bleeding risk, "
                      "and no anti-inflammatory painkillers such as ibuprofen.", points=4, axis="accuracy",
            source="caution:anticoagulant"))
    profile = scenario.patient_profile
    if profile.pregnant or profile.context.pregnancy:
        weeks = f" ({profile.gestation_weeks} weeks)" if profile.gestation_weeks else ""
        out.append(RubricCriterion(
            criterion=f"The clinician takes the pregnancy{weeks} into account in the advice and in any medicine "
                      "suggested.", points=4, axis="accuracy", source="caution:pregnancy"))
    return out


def generate_rubrics(scenario: Scenario) -> list[RubricCriterion]:
    """The deterministic track's criteria for one encounter scenario (see the module docstring).

    Args:
        scenario: An encounter (with an information tree); imaging items and replays have their own scoring.

    Returns:
        The criteria, in a fixed order: escalation, red flags, critical facts, diagnoses, safety-netting,
        cautions.

    Raises:
        ValueError: The scenario is an imaging item or a replay.
    """
    if scenario.imaging is not None or scenario.replay is not None:
        raise ValueError(f"{scenario.id}: rubrics are generated for encounters only (an imaging item or a replay "
                         "is scored by its own targets)")
    return [*_escalation_criteria(scenario), *_red_flag_criteria(scenario), *_fact_criteria(scenario),
            *_diagnosis_criteria(scenario), *_safety_netting(scenario), *_caution_criteria(scenario)]
