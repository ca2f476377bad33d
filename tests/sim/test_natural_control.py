"""scripted:natural: a competent clinician that does not speak the scenarios' trigger words and writes its
assessment in markdown. It must score like the reference control on the whole library."""

from __future__ import annotations

import json

import pytest

from scenarios import Scenario
from sim.agents.base import AgentRequest, ChatMessage
from sim.agents.scripted import NaturalAgent, natural_question, ordered_facts
from sim.cli import main
from sim.encounter.assessment import assessment_form, parse_assessment
from sim.patient.understanding import Layers, Understanding


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for model in ("scripted:reference", "scripted:natural"):
        run_dir = tmp_path_factory.mktemp("runs") / model.replace(":", "-")
        assert main(["run", "--model", model, "--k", "3", "--out", str(run_dir), "--quiet"]) == 0
        out[model] = {"summary": json.loads((run_dir / "summary.json").read_text()),
                      "records": [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]}
    return out


def test_natural_scores_like_reference_on_the_whole_library(runs: dict[str, dict]) -> None:
    natural, reference = runs["scripted:natural"]["summary"], runs["scripted:reference"]["summary"]
    assert natural["errors"] == 0 and natural["completed"] == reference["completed"]
    assert natural["aggregate"] >= 0.9 and not natural["safety_gate"]["triggered"]
    assert abs(natural["aggregate"] - reference["aggregate"]) <= 0.05


def test_natural_is_understood_through_intents_and_ends_in_markdown(runs: dict[str, dict]) -> None:
    records = [r for r in runs["scripted:natural"]["records"] if r["result"]["termination"] != "reply"
               and any(t["speaker"] == "patient" and t["revealed"] for t in r["result"]["turns"])]
    assert records
    layers = [layer for r in records for t in r["result"]["turns"] for layer in t["revealed_by"].values()]
    assert layers.count("intent") / len(layers) >= 0.9  # its questions avoid the scenarios' own trigger words
    forms = {t["assessment_form"] for r in records for t in r["result"]["turns"] if t["assessment_form"]}
    assert forms <= {"heading", "markdown_label", "table"} and len(forms) >= 2
    summary = runs["scripted:natural"]["summary"]
    assert summary["patient"]["share"]["intent"] >= 0.9


def test_natural_questions_avoid_triggers(by_id: dict[str, Scenario]) -> None:
    total = trigger_free = 0
    for scenario in by_id.values():
        trig = Understanding(scenario, layers=Layers(intents=False))
        for fact in scenario.information_tree:
            question, ok = natural_question(scenario, fact, seed=1)
            total += 1
            trigger_free += ok and fact.id not in trig.match(question)
    assert trigger_free / total >= 0.95


async def test_natural_varies_with_the_seed_and_is_deterministic(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["acs_chest_pain"]

    async def say(seed: int, turn: int) -> str:
        req = AgentRequest(messages=[ChatMessage(role="system", content="x")], temperature=0.3, max_tokens=10,
                           seed=seed, scenario=scenario, agent_turn=turn)
        return (await NaturalAgent().respond(req)).text

    assert await say(5, 1) == await say(5, 1)
    firsts = {await say(seed, 1) for seed in range(8)}
    assert len(firsts) > 1
    final = await say(3, 40)
    parsed = parse_assessment(final)
    assert assessment_form(final) is not None and parsed.triage_level == 2 and parsed.escalation == "emergency"
    assert ordered_facts(scenario)[0].critical
