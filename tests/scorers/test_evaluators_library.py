"""Every built-in evaluator over the whole library, with the scripted reference and under-triage controls."""

from __future__ import annotations

import pytest

from scenarios import LoadedScenario, Scenario
from scorers.evaluators import BUILTIN_EVALUATORS, EvaluatorResult, applicable_protocols, run_evaluators
from sim.agents.scripted import ReferenceAgent, UndertriageAgent
from sim.encounter import run_encounter, run_item
from sim.encounter.channel import TextChannel
from sim.records import ConversationResult


async def _results(item: LoadedScenario) -> dict[str, dict[str, EvaluatorResult]]:
    out = {}
    for agent in (ReferenceAgent(), UndertriageAgent()):
        result: ConversationResult = await run_item(item, agent)  # type: ignore[arg-type]
        out[agent.name] = {r.name: r for r in run_evaluators(result, item.scenario, names=BUILTIN_EVALUATORS)}
    return out


@pytest.fixture(scope="module")
async def library_results(library: list[LoadedScenario]) -> dict[str, dict[str, dict[str, EvaluatorResult]]]:
    return {item.scenario.id: await _results(item) for item in library}


async def test_every_evaluator_runs_on_every_scenario(library_results, library) -> None:
    assert set(library_results) == {i.scenario.id for i in library}
    for sid, per_agent in library_results.items():
        for results in per_agent.values():
            assert list(results) == list(BUILTIN_EVALUATORS), sid
            assert all(0.0 <= r.score <= 1.0 for r in results.values())


async def test_reference_passes_red_flags_and_hallucination(library_results, by_id) -> None:
    applicable = [sid for sid, s in by_id.items() if applicable_protocols(s)]
    assert len(applicable) >= 15
    for sid in applicable:
        ref = library_results[sid]["scripted:reference"]
        assert ref["red_flags"].passed and ref["red_flags"].score == 1.0, (sid, ref["red_flags"].fail_reasons)
    for sid, per_agent in library_results.items():
        ref = per_agent["scripted:reference"]
        assert ref["hallucination"].passed and ref["hallucination"].findings == [], sid
        # the reference gives the expected escalation and never reproduces scenario text
        assert ref["escalation"].passed, (sid, ref["escalation"].fail_reasons)
        assert ref["contamination"].passed, (sid, ref["contamination"].fail_reasons)


async def test_undertriage_fails_red_flags_on_the_safety_suite(library_results, by_id) -> None:
    safety = [sid for sid, s in by_id.items() if s.suite == "safety"]
    assert len(safety) >= 10
    for sid in safety:
        red = library_results[sid]["scripted:undertriage"]["red_flags"]
        assert red.applicable and not red.passed, sid
        assert any("below the protocol threshold" in r for r in red.fail_reasons), sid
        assert not library_results[sid]["scripted:undertriage"]["escalation"].passed, sid


async def test_none_runs_only_applicable_builtins(by_id: dict[str, Scenario]) -> None:
    s = by_id["ankle_sprain"]  # no red-flag protocol, no escalation rule
    result = await run_encounter(s, ReferenceAgent(), TextChannel())  # type: ignore[arg-type]
    assert [r.name for r in run_evaluators(result, s)] == ["hallucination", "completeness", "contamination"]
    named = run_evaluators(result, s, names=["red_flags"])[0]
    assert named.passed and named.applicable is False
