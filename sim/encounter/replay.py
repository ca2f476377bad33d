"""A replay: a fixed conversation the agent answers once (``scenario.replay``; rules in ``sim.encounter.protocol``).

The patient simulator takes no part: the fixed messages are the transcript, the last one (the patient's) goes
through the channel, a single-turn triage item (``is_single_turn``) gets the ``SINGLE_TURN`` note, and the agent
replies once. Termination ``reply``, or ``assessment`` when the reply is one; ``error`` when the call failed.
"""

from __future__ import annotations

import time

from sim.agents.base import ChatMessage
from sim.encounter.assessment import assessment_form
from sim.encounter.protocol import SINGLE_TURN, is_single_turn
from sim.encounter.state import EncounterState
from sim.records import ConversationResult, Termination, Turn


async def run_replay(state: EncounterState, *, model_name: str | None = None) -> ConversationResult:
    """The agent's one reply to the scenario's fixed conversation, as a result (module docstring)."""
    scenario = state.scenario
    assert scenario.replay is not None, "run_replay is for a replay scenario"
    for msg in scenario.replay[:-1]:
        now = time.time()
        state.record(Turn(index=len(state.turns), speaker=msg.role, text=msg.content, started_at=now, ended_at=now))
        state.messages.append(ChatMessage(role="user" if msg.role == "patient" else "assistant", content=msg.content))
    await state.patient_says(scenario.replay[-1].content, [], time.time(), 0)
    if is_single_turn(scenario):
        state.note(SINGLE_TURN, 1)
    t0 = time.time()
    reply = await state.ask_agent(1)
    if reply is None:
        return state.result(termination="error", final_text=None, last_reply=None, gathered_info=[],
                            agent_turns=0, turn_limit=1, model_name=model_name)
    form = assessment_form(reply.text)
    state.record(Turn(index=len(state.turns), speaker="agent", text=reply.text, started_at=t0, ended_at=time.time(),
                      latency_s=reply.latency_s, tokens=reply.tokens, agent_turn=1, assessment_form=form))
    state.messages.append(ChatMessage(role="assistant", content=reply.text))
    termination: Termination = "assessment" if form is not None else "reply"
    return state.result(termination=termination, final_text=reply.text if form is not None else None,
                        last_reply=reply.text, gathered_info=[], agent_turns=1, turn_limit=1, model_name=model_name)
