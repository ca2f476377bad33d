"""The two brains of a live call: the simulated patient and the built-in voice agent.

``PatientBrain`` answers through the information-tree simulator it is handed (the same code as batch
runs), cuts in with a red flag when the caller hands it one (``RedFlagLine``) and ends the call on the agent's
assessment; ``AgentBrain`` asks the agent under test, one
stateless call per turn. Both take turns through ``TurnTaker``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from pipecat.frames.frames import (
    Frame,
    TranscriptionFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from audio.live._speaking import speakable
from audio.live._turns import TurnTaker
from sim.records import Turn


class LiveAnswer(Protocol):
    """One answer of the patient (sim.patient.PatientReply): what is said, and what the persona did."""

    @property
    def text(self) -> str: ...

    @property
    def revealed(self) -> list[str]: ...

    @property
    def kind(self) -> str: ...

    @property
    def held(self) -> list[str]: ...

    @property
    def persona_note(self) -> str | None: ...


class LivePatient(Protocol):
    """What the patient brain needs from the information-tree simulator (sim.patient.PatientSimulator)."""

    @property
    def opening_line(self) -> str: ...

    gathered_info: list[str]

    def respond(self, message: str) -> LiveAnswer: ...


RedFlagLine = Callable[[], LiveAnswer | None]
"""What the patient cuts in with to tell a red flag (``sim.patient.PatientSimulator.barge_in_red_flag``): it
reveals and records the fact, and returns the line and the fact's id; None when there is no red flag left."""

NUDGE_LINE = "Sorry, I have to go soon. What do you think I should do?"
GOODBYE_LINE = "Okay, I need to go now. Thank you."
ASSESSMENT_POLL_S = 0.05  # after the grace, how often to look whether the assessment's rest has arrived


class PatientBrain(TurnTaker):
    """The simulated patient: opens the call, answers from the information tree, ends on the assessment.

    With ``red_flag`` its first barge-in that has a red flag to tell says it (``barge_in``); any other is
    ``barge_in_line``, which reveals nothing.
    """

    def __init__(self, *, patient: LivePatient, turn_limit: int,
                 is_assessment: Callable[[str], bool], red_flag: RedFlagLine | None = None, **kwargs: Any) -> None:
        super().__init__(own="patient", **kwargs)
        self.patient = patient
        self.red_flag = red_flag
        self.red_flag_told = False
        self.turn_limit = turn_limit
        self.is_assessment = is_assessment
        self.agent_turns = 0
        self.final_assessment: str | None = None
        self._previous = ""
        self._assessment_task: asyncio.Task[None] | None = None

    async def open(self) -> None:
        await asyncio.sleep(self.settings.opening_delay_s)
        self.log.far_turn = None  # the opening line replies to nothing
        await self.say(self.patient.opening_line, revealed=[])
        await self.notify({"type": "transcript", "speaker": "patient", "text": self.patient.opening_line})

    def barge_in_line(self) -> str:
        """The interjection that reveals nothing."""
        return "Sorry to cut in, but it's really bad. What should I do?"

    async def barge_in(self) -> Turn:
        """Cut in: with a red flag still to tell (once a call), say it and reveal it; else ``barge_in_line``."""
        reply = self.red_flag() if self.red_flag is not None and not self.red_flag_told else None
        if reply is None:
            return await super().barge_in()
        self.red_flag_told = True
        turn = await self.say(reply.text, revealed=list(reply.revealed), interjection=True)
        turn.answer_kind = reply.kind
        await self.notify({"type": "transcript", "speaker": "patient", "text": reply.text})
        return turn

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        if isinstance(frame, TranscriptionFrame) and self.final_assessment is not None:
            await FrameProcessor.process_frame(self, frame, direction)
            self.final_assessment += " " + frame.text  # the rest of a spoken assessment
            self.log.far_segment(frame.text)
            self._restart_assessment_timer()
            return
        await super().process_frame(frame, direction)

    async def decide_and_say(self, heard: str) -> None:
        self.agent_turns += 1
        await self.notify({"type": "transcript", "speaker": "agent", "text": heard})
        spoken = f"{self._previous} {heard}" if "assessment" in self._previous.lower() else heard
        self._previous = heard
        if self.is_assessment(spoken):  # an assessment may span two segments the agent paused between
            self.final_assessment = spoken
            self._restart_assessment_timer()
            return
        reply = self.patient.respond(heard)
        answer, revealed = reply.text, list(reply.revealed)
        remaining = self.turn_limit - self.agent_turns
        if remaining <= 0:
            await self.say(GOODBYE_LINE, revealed=revealed)
            await self.wait_until_quiet()
            await self.end_call("max_turns")
            return
        if remaining == 1:  # the spoken form of the harness nudge: one more agent turn is left
            answer = f"{answer} {NUDGE_LINE}"
        turn = await self.say(answer, revealed=revealed)
        # as the harness records a patient message: the kind of answer, and what the persona held back and did
        turn.answer_kind, turn.persona_held, turn.persona_note = reply.kind, list(reply.held), reply.persona_note
        await self.notify({"type": "transcript", "speaker": "patient", "text": answer})

    def _restart_assessment_timer(self) -> None:
        if self._assessment_task is not None:
            self._assessment_task.cancel()
        self._assessment_task = asyncio.create_task(self._finish_after_grace())

    async def _finish_after_grace(self) -> None:
        await asyncio.sleep(self.settings.assessment_grace_s)
        # the rest of the assessment is still being spoken or transcribed; _far_done is derived from several fields
        # the pipeline's frames change, so it is polled rather than signalled
        while not self._far_done:  # noqa: ASYNC110
            await asyncio.sleep(ASSESSMENT_POLL_S)
        await self.end_call("assessment")


Respond = Callable[[list[tuple[str, str]], int], Awaitable[str]]


class AgentBrain(TurnTaker):
    """The built-in voice agent: hears the patient, asks ``respond(history, agent_turn)``, speaks."""

    def __init__(self, *, respond: Respond, **kwargs: Any) -> None:
        super().__init__(own="agent", **kwargs)
        self.respond = respond
        self.history: list[tuple[str, str]] = []

    async def decide_and_say(self, heard: str) -> None:
        self.history.append(("patient", heard))
        try:
            text = await self.respond(list(self.history), self.replies + 1)
        except Exception as exc:  # an agent failure ends this call, it must not kill the server
            self.errors.append(f"{type(exc).__name__}: {exc}")
            await self.end_call("error")
            return
        self.history.append(("agent", text))
        await self.say(speakable(text), revealed=[])
