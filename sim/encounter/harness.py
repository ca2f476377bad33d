"""The harness: runs one encounter between the simulated patient and the agent under test.

The rules (``HARNESS_VERSION``, the system prompt, the nudge, replays and single-turn items) are stated in
``sim.encounter.protocol``. ``run_encounter`` builds an ``sim.encounter.state.EncounterState`` and runs a replay
scenario on ``sim.encounter.replay.run_replay``, and an interview here: the patient's opening line, then per agent
turn the agent's reply (through the channel to the patient simulator, unless it is the assessment), the patient's
answer (understood by its layers and, with ``patient_model``, a model) back through the channel, the ``NUDGE``
two turns before the limit, until an assessment, the turn limit or an error.
"""

from __future__ import annotations

import time

from scenarios.schema import Scenario
from sim.agents.base import Agent, ChatMessage
from sim.encounter.assessment import AssessmentJudge, assessment_form
from sim.encounter.protocol import NUDGE, ImageLoader
from sim.encounter.replay import run_replay
from sim.encounter.state import EncounterState, _noop
from sim.patient import PatientSimulator
from sim.patient.model import PatientModel
from sim.records import Channel, ConversationResult, EventSink, ParsedAssessment, Termination, Turn


async def run_encounter(
    scenario: Scenario,
    agent: Agent,
    channel: Channel,
    sink: EventSink = _noop,
    *,
    k: int = 0,
    seed: int = 0,
    turn_limit: int | None = None,
    model_name: str | None = None,
    images: ImageLoader | None = None,
    patient_model: PatientModel | None = None,
    assessment_judge: AssessmentJudge | None = None,
) -> ConversationResult:
    """Run one encounter to its end and return everything that happened.

    ``images`` prepares a fact's image for sending (``imaging.prepare_image_async`` bound to the
    scenario's folder); without it a scenario with images cannot be run. ``patient_model`` adds the
    optional model layer to the patient's understanding (``--patient-model``); ``assessment_judge`` reads a final
    assessment the deterministic reader cannot (``--judge``; ``sim.encounter.assessment._judge``).
    """
    state = EncounterState(scenario, agent, channel, sink, k=k, seed=seed, images=images)
    if scenario.replay is not None:
        return await run_replay(state, model_name=model_name)
    return await _interview(state, turn_limit or scenario.max_turns, patient_model, model_name, assessment_judge)


async def _interview(state: EncounterState, limit: int, patient_model: PatientModel | None,
                     model_name: str | None, assessment_judge: AssessmentJudge | None = None) -> ConversationResult:
    """The patient simulator and the agent, turn by turn (module docstring)."""
    scenario, channel, k = state.scenario, state.channel, state.k
    patient = PatientSimulator(scenario, seed=state.seed)
    await state.patient_says(patient.opening_line, [], time.time(), 0)
    termination: Termination = "max_turns"
    final_text: str | None = None
    judged: ParsedAssessment | None = None
    last_reply: str | None = None
    agent_turns = 0
    for agent_turn in range(1, limit + 1):
        if limit - agent_turn + 1 == 2:
            state.note(NUDGE, agent_turn)
        t0 = time.time()
        reply = await state.ask_agent(agent_turn)
        if reply is None:
            termination = "error"
            break
        agent_turns = agent_turn
        form = assessment_form(reply.text)
        judged = None if assessment_judge is None else \
            await assessment_judge.fallback(reply.text, form, last_turn=agent_turn == limit)
        form = "judge" if judged is not None else form
        done = form is not None
        last_reply = reply.text
        heard = None
        delivered = None
        asr_missed: list[str] = []
        if not done:
            delivered = await channel.to_patient(reply.text, scenario_id=scenario.id, k=k, turn=len(state.turns))
            heard = delivered.text if delivered.text != reply.text else None
            if heard is not None:  # what the words as spoken would have revealed and the words as heard did not
                heard_ids = {f.id for f in patient.triggered_facts(heard)}
                asr_missed = [f.id for f in patient.triggered_facts(reply.text)
                              if f.id not in heard_ids and f.id not in patient.gathered_info]
        state.record(Turn(index=len(state.turns), speaker="agent", text=reply.text, started_at=t0,
                          ended_at=time.time(), latency_s=reply.latency_s, tokens=reply.tokens, agent_turn=agent_turn,
                          heard_text=heard, channel=delivered.metrics if delivered else {},
                          artifacts=delivered.artifacts if delivered else {},
                          warnings=delivered.warnings if delivered else [], asr_missed=asr_missed,
                          assessment_form=form))
        state.messages.append(ChatMessage(role="assistant", content=reply.text))
        if done:
            termination, final_text = "assessment", reply.text
            break
        t1 = time.time()
        message = heard if heard is not None else reply.text
        model_ids: list[str] = []
        model_warnings: list[str] = []
        if patient_model is not None:
            decision = await patient_model.decide(scenario, message)
            model_ids = decision.fact_ids
            model_warnings = decision.warnings
        answer = patient.respond(message, model_ids)
        await state.patient_says(answer.text, answer.revealed, t1, agent_turn, dict(answer.revealed_by),
                                 model_warnings, answer.kind, answer.held, answer.persona_note)
    return state.result(termination=termination, final_text=final_text, last_reply=last_reply,
                        gathered_info=list(patient.gathered_info), agent_turns=agent_turns, turn_limit=limit,
                        model_name=model_name, assessment=judged)
