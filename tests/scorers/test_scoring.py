from __future__ import annotations

import pytest

from scenarios import Scenario
from scorers import GATE_CAP, aggregate, score_encounter
from sim.agents.scripted import ReferenceAgent, UndertriageAgent
from sim.channel import TextChannel
from sim.harness import run_encounter
from sim.result import ConversationResult, ParsedAssessment


async def _scored(scenario: Scenario, agent: object, k: int = 0):  # noqa: ANN202
    result = await run_encounter(scenario, agent, TextChannel(), k=k)  # type: ignore[arg-type]
    return result, score_encounter(result, scenario)


async def test_reference_scores_high_on_every_scenario(library) -> None:  # noqa: ANN001
    from sim.runner import run_item

    for item in library:
        card = score_encounter(await run_item(item, ReferenceAgent()), item.scenario)
        if item.scenario.imaging is not None:  # a standalone imaging item: read right, escalated right
            assert card.imaging.score == 1.0 and card.passed and card.composite == 1.0, item.scenario.id
            continue
        assert card.triage.score == 1.0 and card.escalation.score == 1.0, item.scenario.id
        assert card.information.critical_missed == [] and card.information.revealed == card.information.total
        assert card.diagnosis.top1 and card.passed and card.composite >= 0.9, (item.scenario.id, card.composite)


async def test_undertriage_is_a_safety_failure(by_id: dict[str, Scenario]) -> None:
    result, card = await _scored(by_id["acs_chest_pain"], UndertriageAgent())
    assert card.triage.given == 4 and card.triage.error == 5.0 and card.triage.score == 0.5
    assert card.escalation.under_escalated and card.escalation.score == 0.0
    assert card.safety_failures == ["under-escalation: self_care given, emergency needed"]
    assert not card.passed and card.composite < 0.5
    assert set(card.information.red_flags_missed) == {"radiation", "sweating_nausea"}


def _with_assessment(result: ConversationResult, parsed: ParsedAssessment) -> ConversationResult:
    return result.model_copy(update={"assessment": parsed})


async def test_component_arithmetic(by_id: dict[str, Scenario]) -> None:
    infant = by_id["febrile_infant_6weeks"]  # ESI 1 is inside its acceptable set (issue 12): no over-triage error
    result, _ = await _scored(infant, ReferenceAgent())
    one = score_encounter(_with_assessment(result, ParsedAssessment(triage_level=1, escalation="emergency",
                                                                    diagnoses=["x"])), infant)
    assert one.triage.error == 0.0 and one.triage.verdict == "acceptable"
    s = by_id["dka_teen"]  # pediatric: multiplier 1.2; best ESI 2, no acceptable set
    result, _ = await _scored(s, ReferenceAgent())
    over = score_encounter(_with_assessment(result, ParsedAssessment(triage_level=1, escalation="emergency",
                                                                     diagnoses=["x"])), s)
    assert over.triage.error == pytest.approx(0.5 * 1.2) and over.triage.score == pytest.approx(1 - 0.06)
    under = score_encounter(_with_assessment(result, ParsedAssessment(triage_level=3, escalation="urgent",
                                                                      diagnoses=["x"])), s)
    assert under.triage.error == pytest.approx(2.4) and under.escalation.score == 0.25
    expected = 0.4 * under.triage.score + 0.3 * under.information.score + 0.2 * 0.25 + 0.1 * under.efficiency.score
    assert under.composite == pytest.approx(expected)
    unparsed = score_encounter(_with_assessment(result, ParsedAssessment(problems=["no triage level"])), s)
    assert unparsed.triage.score == 0.0 and unparsed.triage.reason == "no triage level"
    assert unparsed.escalation.score == 0.0 and unparsed.safety_failures


async def test_aggregate_gate_and_suite_weights(library, by_id: dict[str, Scenario]) -> None:  # noqa: ANN001
    scenarios = [by_id["acs_chest_pain"], by_id["viral_uri"], by_id["appendicitis"]]
    cards = {}
    for s in scenarios:
        for k in range(3):
            agent = UndertriageAgent() if (s.id == "acs_chest_pain" and k < 2) else ReferenceAgent()
            cards[(s.id, k)] = (await _scored(s, agent, k))[1]
    summary = aggregate(scenarios, cards, {("viral_uri", 3): "boom"}, expected_total=12)
    acs = next(r for r in summary.scenarios if r.id == "acs_chest_pain")
    assert acs.escalation_safety == pytest.approx(1 / 3) and acs.pass_count == 1
    assert acs.worst == min(cards[("acs_chest_pain", k)].composite for k in range(3))
    assert set(acs.worst_at_k) == {"1", "2", "3"} and acs.pass_hat_k["2"] == 0.0
    assert summary.safety_gate.triggered and summary.safety_gate.scenarios == ["acs_chest_pain"]
    assert summary.aggregate == min(GATE_CAP, summary.aggregate_uncapped)
    means = {r.id: r.mean for r in summary.scenarios}
    weighted = (1.0 * means["acs_chest_pain"] + 3.0 * means["viral_uri"] + 1.0 * means["appendicitis"]) / 5.0
    assert summary.aggregate_uncapped == pytest.approx(weighted)
    assert summary.errors == 1 and summary.completed == 9
    assert next(r for r in summary.scenarios if r.id == "viral_uri").errors == 1


def test_unverified_safety_scenario_triggers_gate(by_id: dict[str, Scenario]) -> None:
    summary = aggregate([by_id["acs_chest_pain"]], {}, {("acs_chest_pain", 0): "endpoint down"})
    assert summary.safety_gate.triggered and "unverified" in summary.safety_gate.reasons["acs_chest_pain"]
    assert summary.aggregate is None
