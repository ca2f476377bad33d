"""Scenarios without every target: replay items (one graded reply) and cases with no triage level."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from scenarios import ScenarioError, load_scenario, parse_scenario
from scorers import score_encounter
from sim.encounter import run_encounter
from sim.encounter.channel import TextChannel
from tests.sim.test_harness import ReplayAgent

REPLAY = textwrap.dedent("""\
    id: replay_item
    title: A fixed conversation the agent answers once
    suite: ddx
    canary: encsim-canary-12345678-replay-item
    patient_profile: {age: 40, sex: female}
    chief_complaint: headache
    opening_line: "unused for replay items"
    fallback_lines: ["-"]
    replay:
      - {role: patient, content: "I have had a headache for two days."}
      - {role: agent, content: "Any fever or stiff neck?"}
      - {role: patient, content: "No. What should I do?"}
    rubrics:
      - {criterion: "Advises seeking care if red flags appear", points: 5, axis: completeness}
      - {criterion: "Prescribes opioids", points: -8, axis: safety}
    expected: {}
    """)


async def test_replay_scenario_gets_one_reply(tmp_path: Path) -> None:
    s = parse_scenario(REPLAY, tmp_path / "r.yaml")
    agent = ReplayAgent(["Rest, fluids, paracetamol; seek care if it gets worse."])
    r = await run_encounter(s, agent, TextChannel())
    assert r.termination == "reply" and r.agent_turns == 1 and len(agent.requests) == 1
    assert [m.role for m in agent.requests[0].messages] == ["system", "user", "assistant", "user"]
    assert r.final_reply == "Rest, fluids, paracetamol; seek care if it gets worse."
    assert [t.speaker for t in r.turns] == ["patient", "agent", "patient", "agent"]
    card = score_encounter(r, s)
    assert card.composite is None and card.triage is None and card.information is None and card.efficiency is None


async def test_scenario_without_triage_target_is_scored_on_the_rest(by_id, tmp_path: Path) -> None:
    text = (Path(__file__).parents[1] / "scenarios" / "valid_minimal.yaml").read_text()
    text = text.replace("suite: triage", "suite: ddx").replace("  triage_level: 5\n", "").replace(
        "  escalation: self_care\n", "")
    path = tmp_path / "ddx.yaml"
    path.write_text(text)
    s = load_scenario(path).scenario
    r = await run_encounter(s, ReplayAgent(["Any fever?", "ASSESSMENT:\nDiagnoses: 1. Viral pharyngitis"]),
                            TextChannel())
    card = score_encounter(r, s)
    assert card.triage is None and card.escalation is None and card.diagnosis is not None and card.diagnosis.top1
    assert card.diagnosis.score == pytest.approx(1.0)  # the one expected diagnosis, named first
    expected = (0.3 * card.information.score + 0.1 * card.efficiency.score  # type: ignore[union-attr]
                + 0.1 * card.diagnosis.score) / 0.5
    assert card.composite == pytest.approx(expected)


@pytest.mark.parametrize(("edit", "fragment"), [
    (lambda t: t.replace("suite: ddx", "suite: triage"), "expected.triage_level: required for suite 'triage'"),
    (lambda t: t.replace('  - {role: patient, content: "No. What should I do?"}\n', ""), "end with a patient message"),
    (lambda t: t.replace("points: -8", "points: 0"), "points must be non-zero"),
    (lambda t: t.replace("points: 5", "points: 12"), "less than or equal to 10"),
])
def test_new_fields_are_validated(tmp_path: Path, edit, fragment: str) -> None:
    with pytest.raises(ScenarioError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        parse_scenario(edit(REPLAY), tmp_path / "bad.yaml")
