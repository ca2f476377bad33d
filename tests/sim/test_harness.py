from __future__ import annotations

import pytest

from scenarios import Scenario
from sim.agents.base import AgentReply, AgentRequest
from sim.encounter import HARNESS_VERSION, MAX_TOKENS, NUDGE, SYSTEM_PROMPT, TEMPERATURE, run_encounter
from sim.encounter.channel import TextChannel
from sim.records import AgentError, Delivery

FINAL = "ASSESSMENT:\nTriage level: ESI 2\nEscalation: emergency\nDiagnoses: 1. Acute coronary syndrome"


class ReplayAgent:
    """Says the given lines in order (then repeats the last); records every request it got."""

    name = "replay"
    vision = True

    def __init__(self, lines: list[str], fail_at: int | None = None) -> None:
        self.lines = lines
        self.fail_at = fail_at
        self.requests: list[AgentRequest] = []

    async def respond(self, request: AgentRequest) -> AgentReply:
        self.requests.append(request)
        if self.fail_at == request.agent_turn:
            raise AgentError("endpoint gone", retryable=True)
        return AgentReply(text=self.lines[min(len(self.lines), request.agent_turn) - 1])

    async def aclose(self) -> None:
        return None


async def test_terminates_on_assessment_and_parses(by_id: dict[str, Scenario]) -> None:
    agent = ReplayAgent(["Do you smoke? Does it spread to your arm?", FINAL])
    r = await run_encounter(by_id["acs_chest_pain"], agent, TextChannel(), k=1, seed=5)
    assert r.termination == "assessment" and r.agent_turns == 2
    assert r.final_assessment == FINAL
    assert (r.assessment.triage_level, r.assessment.escalation) == (2, "emergency")
    assert r.gathered_info == ["radiation", "smoking"]
    assert [t.speaker for t in r.turns] == ["patient", "agent", "patient", "agent"]
    assert r.harness_version == HARNESS_VERSION and r.seed == 5 and r.k == 1


@pytest.mark.parametrize("line", ["my assessment - ESI 2", "  Assessment: ESI 2", "Thanks.\nASSESSMENT -\nESI 2"])
async def test_termination_variants(by_id: dict[str, Scenario], line: str) -> None:
    r = await run_encounter(by_id["viral_uri"], ReplayAgent(["Any fever?", line]), TextChannel())
    assert r.termination == "assessment" and r.agent_turns == 2


async def test_stateless_whole_transcript_each_call(by_id: dict[str, Scenario]) -> None:
    agent = ReplayAgent(["Q1 about smoking?", "Q2 about your family?", FINAL])
    await run_encounter(by_id["acs_chest_pain"], agent, TextChannel())
    sizes = [len(req.messages) for req in agent.requests]
    assert sizes == [2, 4, 6]  # system + opening, then + (assistant, user) per turn
    last = agent.requests[-1]
    assert last.messages[0].role == "system" and last.messages[0].content == SYSTEM_PROMPT
    assert [m.role for m in last.messages[1:]] == ["user", "assistant", "user", "assistant", "user"]
    assert last.messages[1].content == by_id["acs_chest_pain"].opening_line
    assert all(req.temperature == TEMPERATURE == 0.3 and req.max_tokens == MAX_TOKENS == 1024 for req in agent.requests)


async def test_nudge_when_two_turns_remain_and_stop_at_limit(by_id: dict[str, Scenario]) -> None:
    agent = ReplayAgent(["What is your favourite colour?"])
    r = await run_encounter(by_id["viral_uri"], agent, TextChannel(), turn_limit=5)
    assert r.termination == "max_turns" and r.agent_turns == 5 and len(agent.requests) == 5
    assert r.final_assessment is None
    nudged_last = [i for i, req in enumerate(agent.requests, 1) if NUDGE in req.messages[-1].content]
    assert nudged_last == [4]  # injected into what the agent receives before turn 4 of 5 ...
    assert any(NUDGE in m.content for m in agent.requests[4].messages)  # ... and still there at turn 5
    harness_turns = [t for t in r.turns if t.speaker == "harness"]
    assert len(harness_turns) == 1 and harness_turns[0].agent_turn == 4


async def test_adaptive_limit_used_by_default(by_id: dict[str, Scenario]) -> None:
    s = by_id["viral_uri"]
    r = await run_encounter(s, ReplayAgent(["Hmm?"]), TextChannel())
    assert r.turn_limit == s.max_turns and r.agent_turns == s.max_turns


async def test_agent_failure_ends_encounter_as_error(by_id: dict[str, Scenario]) -> None:
    r = await run_encounter(by_id["viral_uri"], ReplayAgent(["Any fever?"], fail_at=2), TextChannel())
    assert r.termination == "error" and not r.ok and r.agent_turns == 1
    assert r.errors == ["agent turn 2: endpoint gone"]


class MishearingChannel(TextChannel):
    """Replaces 'smoke' with 'spoke' on the way to the patient: the patient must act on what it heard."""

    name = "mishear"

    async def to_patient(self, agent_text: str, *, scenario_id: str, k: int, turn: int) -> Delivery:
        return Delivery(text=agent_text.replace("smoke", "spoke"))


async def test_channel_is_the_seam(by_id: dict[str, Scenario]) -> None:
    r = await run_encounter(by_id["acs_chest_pain"], ReplayAgent(["Do you smoke?", FINAL]), MishearingChannel())
    assert "smoking" not in r.gathered_info
    agent_turn = r.turns[1]
    assert agent_turn.text == "Do you smoke?" and agent_turn.heard_text == "Do you spoke?"


async def test_events_are_emitted_per_turn(by_id: dict[str, Scenario]) -> None:
    seen = []
    await run_encounter(by_id["acs_chest_pain"], ReplayAgent(["Do you smoke?", FINAL]), TextChannel(), seen.append,
                        k=3)
    assert [e.speaker for e in seen] == ["patient", "agent", "patient", "agent"]
    assert seen[2].revealed == ["smoking"] and all(e.k == 3 for e in seen)
