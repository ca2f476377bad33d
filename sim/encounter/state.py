"""One encounter's conversation as it is built: what both paths (an interview, a replay) share.

``EncounterState`` holds the turns, the messages the agent is sent (the frozen system prompt first), the tokens
and errors, and does the three things every path does: record a turn (and pass it to the event sink), deliver
what the patient says to the agent through the channel (with a fact's images), and ask the agent for one reply.
``result`` makes the ``ConversationResult``. The rules are in ``sim.encounter.protocol``.
"""

from __future__ import annotations

import time
from typing import Any

from scenarios.schema import Scenario
from sim.agents.base import Agent, AgentReply, AgentRequest, ChatMessage
from sim.encounter.assessment import parse_assessment
from sim.encounter.protocol import (
    HARNESS_VERSION,
    MAX_TOKENS,
    SYSTEM_PROMPT,
    TEMPERATURE,
    ImageLoader,
    is_single_turn,
    read_unmarked,
)
from sim.records import (
    AgentError,
    Channel,
    ConversationResult,
    Event,
    EventSink,
    ParsedAssessment,
    Termination,
    TokenUsage,
    Turn,
    TurnRecorded,
)


def _noop(_: Event) -> None:
    return None


class EncounterState:
    """The conversation of one encounter so far (module docstring)."""

    def __init__(self, scenario: Scenario, agent: Agent, channel: Channel, sink: EventSink = _noop, *, k: int = 0,
                 seed: int = 0, images: ImageLoader | None = None) -> None:
        self.scenario, self.agent, self.channel, self.sink = scenario, agent, channel, sink
        self.k, self.seed, self.images = k, seed, images
        self.turns: list[Turn] = []
        self.messages = [ChatMessage(role="system", content=SYSTEM_PROMPT)]
        self.tokens = TokenUsage()
        self.errors: list[str] = []
        self.started = time.time()

    def record(self, turn: Turn) -> None:
        """Keep a turn and pass it to the event sink."""
        self.turns.append(turn)
        self.sink(TurnRecorded(scenario_id=self.scenario.id, k=self.k, index=turn.index, speaker=turn.speaker,
                               text=turn.text, heard_text=turn.heard_text, revealed=turn.revealed,
                               latency_s=turn.latency_s))

    def note(self, text: str, agent_turn: int) -> None:
        """A note of the harness (``NUDGE``, ``SINGLE_TURN``).

        Recorded as a ``harness`` turn and appended to what the agent receives last.
        """
        now = time.time()
        self.record(Turn(index=len(self.turns), speaker="harness", text=text, started_at=now, ended_at=now,
                         agent_turn=agent_turn))
        self.messages[-1] = self.messages[-1].with_text_appended(text)

    async def patient_says(self, text: str, revealed: list[str], t0: float, agent_turn: int,
                           revealed_by: dict[str, str] | None = None, warnings: list[str] | None = None,
                           answer_kind: str | None = None, persona_held: list[str] | None = None,
                           persona_note: str | None = None) -> None:
        """Deliver what the patient says to the agent through the channel, with the images of facts revealed."""
        scenario = self.scenario
        delivered = await self.channel.to_agent(text, scenario_id=scenario.id, k=self.k, turn=len(self.turns))
        refs = [f.image for f in scenario.information_tree if f.id in revealed and f.image is not None]
        content: str | list[dict[str, Any]] = delivered.text
        shown: list[dict[str, str]] = []
        if refs:
            from imaging import content_parts, text_placeholder

            if self.images is None:
                raise RuntimeError(f"scenario {scenario.id} sends images but the harness was given no image loader")
            prepared = [await self.images(ref) for ref in refs]
            vision = self.agent.vision
            if vision:
                content = content_parts(delivered.text, prepared)
            else:
                content = f"{delivered.text}\n\n{text_placeholder([r.description for r in refs])}"
            shown = [{"source": r.path, "sha256": p.sha256, "shown": "image" if vision else "description"}
                     for r, p in zip(refs, prepared, strict=True)]
        self.record(Turn(index=len(self.turns), speaker="patient", text=text, started_at=t0, ended_at=time.time(),
                         revealed=revealed, revealed_by=revealed_by or {}, answer_kind=answer_kind,
                         persona_held=persona_held or [], persona_note=persona_note,
                         heard_text=delivered.text if delivered.text != text else None,
                         agent_turn=agent_turn, channel=delivered.metrics, artifacts=delivered.artifacts,
                         warnings=[*(warnings or []), *delivered.warnings], images=shown))
        self.messages.append(ChatMessage(role="user", content=content))

    async def ask_agent(self, agent_turn: int) -> AgentReply | None:
        """The agent's reply to the whole transcript, its tokens counted.

        None when the call failed for good (the error is kept in ``errors``).
        """
        try:
            # model_construct: every field is already typed; validating would re-run the scenario's own
            # model validators on every turn (pydantic runs "after" validators on instances too)
            reply = await self.agent.respond(AgentRequest.model_construct(
                messages=list(self.messages), temperature=TEMPERATURE, max_tokens=MAX_TOKENS,
                seed=self.seed, scenario=self.scenario, agent_turn=agent_turn))
        except AgentError as exc:
            self.errors.append(f"agent turn {agent_turn}: {exc}")
            return None
        if reply.tokens:
            self.tokens = TokenUsage(prompt=self.tokens.prompt + reply.tokens.prompt,
                                     completion=self.tokens.completion + reply.tokens.completion)
        return reply

    def result(self, *, termination: Termination, final_text: str | None, last_reply: str | None,
               gathered_info: list[str], agent_turns: int, turn_limit: int,
               model_name: str | None, assessment: ParsedAssessment | None = None) -> ConversationResult:
        """Everything that happened; the assessment read from the final text (or a single-turn item's reply).

        ``assessment``: the final text's assessment as already read (by the judge fallback), used as given.
        """
        if assessment is None:
            if final_text is not None:
                assessment = parse_assessment(final_text)
            elif termination == "reply" and last_reply is not None and is_single_turn(self.scenario):
                assessment = read_unmarked(last_reply)
            else:
                assessment = parse_assessment("")
        return ConversationResult(
            scenario_id=self.scenario.id, k=self.k, seed=self.seed, harness_version=HARNESS_VERSION,
            model=model_name if model_name else getattr(self.agent, "name", "agent"), turns=self.turns,
            gathered_info=gathered_info, final_assessment=final_text, final_reply=last_reply,
            assessment=assessment, termination=termination, agent_turns=agent_turns, turn_limit=turn_limit,
            tokens=self.tokens, started_at=self.started, ended_at=time.time(), errors=self.errors,
        )
