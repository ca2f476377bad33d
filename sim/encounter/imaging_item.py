"""Standalone imaging items: one question about one to four images, one reply, scored by scorers._imaging.

The agent gets ``IMAGING_SYSTEM_PROMPT`` and one user message: the clinical context (the scenario's
opening line), the question, the options of a multiple-choice item, the answer format, and the images
as OpenAI content parts (metadata stripped, longer side at most 1024 px; see ``imaging``). A model
declared text-only (``agent.vision`` False) is not asked at all: the item is recorded as
``not_applicable`` (termination), never sent text it cannot answer and never an HTTP error from an
endpoint that cannot take images. An item without images (``image_unavailable``: an imported case whose
image is missing) is asked as text alone, of every model, a text-only one included.
"""

from __future__ import annotations

import time
from typing import Any

from scenarios.schema import ImagingTask, Scenario
from sim.agents.base import Agent, AgentRequest, ChatMessage
from sim.encounter.assessment import parse_escalation_line
from sim.encounter.protocol import HARNESS_VERSION, MAX_TOKENS, TEMPERATURE, ImageLoader
from sim.records import AgentError, ConversationResult, ParsedAssessment, TokenUsage, Turn

IMAGING_SYSTEM_PROMPT = """\
You are a clinician reviewing medical images for a colleague. Look at every image, answer the question \
in the format asked, and finish with one line 'Escalation: emergency', 'Escalation: urgent', \
'Escalation: routine' or 'Escalation: self_care' saying how soon the patient must be seen because of \
what the images show."""

FORMATS = {
    "multiple_choice": "Give your answer on its own line as 'Answer: <letter>'.",
    "findings": ("List every finding on one line as 'Findings: <finding>; <finding>', or 'Findings: none' for a "
                 "normal study."),
    "free_text": "Describe what the images show and what it means for the patient.",
}


def item_prompt(scenario: Scenario) -> str:
    """The one patient message of an imaging item: the opening line, the question and the answer format.

    A multiple-choice item lists its lettered choices; the answer format (``FORMATS``) is followed by the request
    for the Escalation line.
    """
    task = scenario.imaging
    assert task is not None
    lines = [scenario.opening_line.strip(), "", task.question.strip()]
    if task.answer_type == "multiple_choice":
        lines += [f"{chr(ord('A') + i)}. {c}" for i, c in enumerate(task.choices)]
    lines += ["", FORMATS[task.answer_type], "Then give the Escalation line."]
    return "\n".join(lines)


def _question_turn(scenario: Scenario, task: ImagingTask, shown: list[dict[str, str]]) -> Turn:
    now = time.time()
    return Turn(index=0, speaker="patient", text=item_prompt(scenario), started_at=now, ended_at=now,
                agent_turn=0, images=shown)


async def run_imaging_item(scenario: Scenario, agent: Agent, *, k: int = 0, seed: int = 0,
                           images: ImageLoader, model_name: str | None = None) -> ConversationResult:
    """Ask one imaging item; ``not_applicable`` for a text-only model, ``error`` when the call fails."""
    from imaging import content_parts

    task = scenario.imaging
    assert task is not None
    started = time.time()
    vision = agent.vision
    name = model_name or agent.name

    def result(turns: list[Turn], termination: Any, **kw: Any) -> ConversationResult:
        return ConversationResult(scenario_id=scenario.id, k=k, seed=seed, harness_version=HARNESS_VERSION,
                                  model=name, turns=turns, gathered_info=[], termination=termination,
                                  agent_turns=sum(t.speaker == "agent" for t in turns), turn_limit=1,
                                  started_at=started, ended_at=time.time(), **kw)

    if not vision and task.images:
        shown = [{"source": r.path, "sha256": "", "shown": "not sent"} for r in task.images]
        return result([_question_turn(scenario, task, shown)], "not_applicable",
                      errors=[], final_reply=None)
    prepared = [await images(ref) for ref in task.images]
    shown = [{"source": r.path, "sha256": p.sha256, "shown": "image"}
             for r, p in zip(task.images, prepared, strict=True)]
    question = _question_turn(scenario, task, shown)
    messages = [ChatMessage(role="system", content=IMAGING_SYSTEM_PROMPT),
                ChatMessage(role="user", content=content_parts(question.text, prepared) if prepared
                            else question.text)]
    t0 = time.time()
    try:
        reply = await agent.respond(AgentRequest(messages=messages, temperature=TEMPERATURE, max_tokens=MAX_TOKENS,
                                                 seed=seed, scenario=scenario, agent_turn=1))
    except AgentError as exc:
        return result([question], "error", errors=[f"agent turn 1: {exc}"])
    answer = Turn(index=1, speaker="agent", text=reply.text, started_at=t0, ended_at=time.time(),
                  latency_s=reply.latency_s, tokens=reply.tokens, agent_turn=1)
    return result([question, answer], "reply", final_reply=reply.text, final_assessment=reply.text,
                  assessment=ParsedAssessment(escalation=parse_escalation_line(reply.text)),
                  tokens=reply.tokens or TokenUsage())
