"""The harness: runs one encounter between the simulated patient and the agent under test.

Protocol (HARNESS_VERSION is recorded in every result; change it whenever any rule here changes):

- The agent gets the frozen ``SYSTEM_PROMPT`` and the whole transcript on every call (patient
  lines as ``user``, its own replies as ``assistant``), with temperature 0.3 and max_tokens 1024.
  The agent keeps no state; the harness owns all of it.
- The patient speaks first (the scenario's opening line). Each agent reply goes through the
  channel to the patient simulator, whose answer goes through the channel back to the agent.
- The encounter ends when a reply is the assessment (``sim.assessment.assessment_form``): a line
  that, once markdown emphasis, heading and list marks are stripped, begins ``assessment:`` /
  ``my assessment -`` (any case), or an "Assessment" heading followed by the fields; a reply that
  only mentions an assessment is not one. Termination ``assessment``; the turn records the form.
- The patient understands the agent through ``sim.understanding`` (only questions and requests
  reveal; scenario triggers and the shared intent lexicon) and, with ``patient_model``, a model;
  each revealed fact records its layer in the patient turn's ``revealed_by``. A message that reveals
  nothing is answered without denying anything the patient has (``sim.patient``); the turn records
  the kind of answer (``facts``, ``unsure``, ``negative``, ``fallback``) in ``answer_kind``.
- The scenario's persona may hold facts back for a turn and reword answers (``sim.persona``); the patient
  turn records the facts held back in ``persona_held``, what the persona did in ``persona_note``, and the
  kinds ``withheld``, ``vague``, ``not_known`` and ``not_understood``.
- When two agent turns remain, the harness appends ``NUDGE`` to what the agent receives (and
  records it as a ``harness`` turn) so that the agent synthesises before the limit.
- After ``turn_limit`` agent turns without an assessment it stops: termination ``max_turns``.
- An agent call that fails for good ends the encounter with termination ``error`` and the reason
  in ``errors``; the runner records it as an error, never scores it.
- A fact with an ``image`` sends that image with the patient's answer (a photo the patient shares,
  an examination or test result image the agent asked for): OpenAI content parts, the text first
  and one ``image_url`` data URL per image (metadata stripped, longer side at most 1024 px, see
  ``imaging``). A model declared text-only (``agent.vision`` False) gets no image part: the text
  says an image was sent and gives its description instead. The turn records each image's source
  and content hash, and whether it was shown or described.
- A *replay* scenario (``scenario.replay``, e.g. an imported HealthBench conversation) skips the
  patient simulator: the fixed conversation is the transcript, the agent replies once, and the
  encounter ends with termination ``reply`` (or ``assessment`` if that reply is one).
- A *single-turn triage item* (``is_single_turn``: a replay whose ``expected`` gives an escalation, a
  triage level or diagnoses, e.g. an imported symptom-checker vignette) is the classic vignette
  protocol: ``SINGLE_TURN`` is appended to the last patient message (recorded as a ``harness`` turn)
  because the agent cannot ask anything, and its one reply is its assessment: read with
  ``parse_assessment`` as if it began with the marker when it does not (termination ``reply``, the
  turn's ``assessment_form`` None), so that advice given in prose ("go to the emergency department
  now") is still read. A HealthBench replay (rubrics only) is unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from scenarios.schema import ImageRef, Scenario
from sim.agents.base import Agent, AgentRequest, ChatMessage
from sim.assessment import assessment_form, parse_assessment
from sim.patient import PatientSimulator
from sim.patient_model import PatientModel
from sim.records import (
    AgentError,
    Channel,
    ConversationResult,
    EventSink,
    ParsedAssessment,
    Termination,
    TokenUsage,
    Turn,
    TurnRecorded,
)

HARNESS_VERSION = "1.5.0"  # 1.1: images on facts; 1.2: question filter, intent lexicon, markdown assessments;
# 1.3: optional Disposition line, acceptable label sets, fallbacks that never deny, stricter diagnosis matching;
# 1.4: single-turn triage items (SINGLE_TURN note, the one reply read as the assessment); 1.5: persona behaviours,
# and a patient who volunteers a symptom to an open question
TEMPERATURE = 0.3
MAX_TOKENS = 1024

SYSTEM_PROMPT = """\
You are a triage clinician talking with a patient (or their parent or carer) by phone or chat.
Interview them to decide how urgently they need care. Ask focused questions, one or two at a time,
about the symptoms, their timing, red flags, medical history, medications, allergies and anything
else that changes the triage decision. Do not give your conclusion until you have what you need.

When you are ready, finish with your assessment in exactly this format:

ASSESSMENT:
Triage level: ESI <1-5>   (1 = immediate life-saving care ... 5 = no resources needed)
Escalation: <emergency | urgent | routine | self_care>
Disposition: <ambulance | self_present_ed | same_day_urgent_care | crisis_team | same_day_gp | routine_gp | pharmacist | self_care>   (optional: how they get that care)
Diagnoses: 1. <most likely>; 2. <next>; 3. <next>
Advice: <what the patient should do now>"""

NUDGE = ("[Note from the system: two turns remain. Give your ASSESSMENT now, or after at most one "
         "more question, in the required format.]")

SINGLE_TURN = ("[Note from the system: this is a single-message triage. You cannot ask any questions and "
               "will not get another turn. Give your ASSESSMENT now, in the required format, from what the "
               "message says.]")

def is_single_turn(scenario: Scenario) -> bool:
    """A replay with a deterministic target (escalation, triage level or diagnoses).

    A single-turn triage item, whose one reply is the assessment (see the module docstring).
    """
    exp = scenario.expected
    return scenario.replay is not None and (exp.escalation is not None or exp.triage_level is not None
                                            or bool(exp.diagnoses))


ImageLoader = Callable[[ImageRef], Awaitable[Any]]  # -> imaging.PreparedImage


def _noop(_: Any) -> None:
    return None


def read_unmarked(reply: str) -> ParsedAssessment:
    """A single-turn item's reply that has no assessment marker, read as if it began with one.

    The fields it labels, else the escalation its advice names (``parse_assessment``'s rules); ``form`` None
    and a note in ``problems`` that the reply was not marked.
    """
    parsed = parse_assessment(f"ASSESSMENT:\n{reply}")
    return parsed.model_copy(update={"form": None, "problems": [
        "the reply has no 'Assessment:' line; read as a whole (single-turn item)", *parsed.problems]})


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
) -> ConversationResult:
    """Run one encounter to its end and return everything that happened.

    ``images`` prepares a fact's image for sending (``imaging.prepare_image_async`` bound to the
    scenario's folder); without it a scenario with images cannot be run. ``patient_model`` adds the
    optional model layer to the patient's understanding (``--patient-model``).
    """
    limit = turn_limit or scenario.max_turns
    patient = PatientSimulator(scenario, seed=seed)
    turns: list[Turn] = []
    messages = [ChatMessage(role="system", content=SYSTEM_PROMPT)]
    tokens = TokenUsage()
    errors: list[str] = []
    started = time.time()

    def record(turn: Turn) -> None:
        turns.append(turn)
        sink(TurnRecorded(scenario_id=scenario.id, k=k, index=turn.index, speaker=turn.speaker, text=turn.text,
                          heard_text=turn.heard_text, revealed=turn.revealed, latency_s=turn.latency_s))

    vision = agent.vision

    async def patient_says(text: str, revealed: list[str], t0: float, agent_turn: int,
                           revealed_by: dict[str, str] | None = None, warnings: list[str] | None = None,
                           answer_kind: str | None = None, persona_held: list[str] | None = None,
                           persona_note: str | None = None) -> None:
        delivered = await channel.to_agent(text, scenario_id=scenario.id, k=k, turn=len(turns))
        refs = [f.image for f in scenario.information_tree if f.id in revealed and f.image is not None]
        content: str | list[dict[str, Any]] = delivered.text
        shown: list[dict[str, str]] = []
        if refs:
            from imaging import content_parts, text_placeholder

            if images is None:
                raise RuntimeError(f"scenario {scenario.id} sends images but the harness was given no image loader")
            prepared = [await images(ref) for ref in refs]
            if vision:
                content = content_parts(delivered.text, prepared)
            else:
                content = f"{delivered.text}\n\n{text_placeholder([r.description for r in refs])}"
            shown = [{"source": r.path, "sha256": p.sha256, "shown": "image" if vision else "description"}
                     for r, p in zip(refs, prepared, strict=True)]
        record(Turn(index=len(turns), speaker="patient", text=text, started_at=t0, ended_at=time.time(),
                    revealed=revealed, revealed_by=revealed_by or {}, answer_kind=answer_kind,
                    persona_held=persona_held or [], persona_note=persona_note,
                    heard_text=delivered.text if delivered.text != text else None,
                    agent_turn=agent_turn, channel=delivered.metrics, artifacts=delivered.artifacts,
                    warnings=[*(warnings or []), *delivered.warnings], images=shown))
        messages.append(ChatMessage(role="user", content=content))

    if scenario.replay is not None:
        for msg in scenario.replay[:-1]:
            now = time.time()
            record(Turn(index=len(turns), speaker=msg.role, text=msg.content, started_at=now, ended_at=now))
            messages.append(ChatMessage(role="user" if msg.role == "patient" else "assistant", content=msg.content))
        await patient_says(scenario.replay[-1].content, [], time.time(), 0)
        limit = 1
        if is_single_turn(scenario):
            now = time.time()
            record(Turn(index=len(turns), speaker="harness", text=SINGLE_TURN, started_at=now, ended_at=now,
                        agent_turn=1))
            messages[-1] = messages[-1].with_text_appended(SINGLE_TURN)
    else:
        await patient_says(patient.opening_line, [], time.time(), 0)
    termination: Termination = "max_turns" if scenario.replay is None else "reply"
    final_text: str | None = None
    last_reply: str | None = None
    agent_turns = 0
    for agent_turn in range(1, limit + 1):
        if limit - agent_turn + 1 == 2 and scenario.replay is None:
            now = time.time()
            record(Turn(index=len(turns), speaker="harness", text=NUDGE, started_at=now, ended_at=now,
                        agent_turn=agent_turn))
            messages[-1] = messages[-1].with_text_appended(NUDGE)
        t0 = time.time()
        try:
            # model_construct: every field is already typed; validating would re-run the scenario's own
            # model validators on every turn (pydantic runs "after" validators on instances too)
            reply = await agent.respond(AgentRequest.model_construct(
                messages=list(messages), temperature=TEMPERATURE, max_tokens=MAX_TOKENS,
                seed=seed, scenario=scenario, agent_turn=agent_turn))
        except AgentError as exc:
            errors.append(f"agent turn {agent_turn}: {exc}")
            termination = "error"
            break
        agent_turns = agent_turn
        if reply.tokens:
            tokens = TokenUsage(prompt=tokens.prompt + reply.tokens.prompt,
                                completion=tokens.completion + reply.tokens.completion)
        form = assessment_form(reply.text)
        done = form is not None
        last_reply = reply.text
        heard = None
        delivered = None
        asr_missed: list[str] = []
        if not done and scenario.replay is None:
            delivered = await channel.to_patient(reply.text, scenario_id=scenario.id, k=k, turn=len(turns))
            heard = delivered.text if delivered.text != reply.text else None
            if heard is not None:  # what the words as spoken would have revealed and the words as heard did not
                heard_ids = {f.id for f in patient.triggered_facts(heard)}
                asr_missed = [f.id for f in patient.triggered_facts(reply.text)
                              if f.id not in heard_ids and f.id not in patient.gathered_info]
        record(Turn(index=len(turns), speaker="agent", text=reply.text, started_at=t0, ended_at=time.time(),
                    latency_s=reply.latency_s, tokens=reply.tokens, agent_turn=agent_turn, heard_text=heard,
                    channel=delivered.metrics if delivered else {}, artifacts=delivered.artifacts if delivered else {},
                    warnings=delivered.warnings if delivered else [], asr_missed=asr_missed,
                    assessment_form=form))
        messages.append(ChatMessage(role="assistant", content=reply.text))
        if done:
            termination, final_text = "assessment", reply.text
            break
        if scenario.replay is not None:
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
        await patient_says(answer.text, answer.revealed, t1, agent_turn, dict(answer.revealed_by), model_warnings,
                           answer.kind, answer.held, answer.persona_note)

    if final_text is not None:
        assessment = parse_assessment(final_text)
    elif termination == "reply" and last_reply is not None and is_single_turn(scenario):
        assessment = read_unmarked(last_reply)
    else:
        assessment = parse_assessment("")
    return ConversationResult(
        scenario_id=scenario.id, k=k, seed=seed, harness_version=HARNESS_VERSION,
        model=model_name if model_name else getattr(agent, "name", "agent"), turns=turns,
        gathered_info=list(patient.gathered_info), final_assessment=final_text, final_reply=last_reply,
        assessment=assessment,
        termination=termination, agent_turns=agent_turns, turn_limit=limit, tokens=tokens,
        started_at=started, ended_at=time.time(), errors=errors,
    )
