"""What one side of a live call is configured with, and the live call's own error.

``LiveSettings`` holds the turn-taking and the limits of one side (the patient, or the built-in voice
agent); ``LiveError`` is what a call raises when it cannot be set up or run. ``Side`` names a side.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from sim.records import EncSimError

Side = Literal["patient", "agent"]
EndOfTurn = Literal["smart-turn", "vad"]


class LiveError(EncSimError):
    """A live call could not be set up or run (bad endpoint, port taken, ...); the message says why."""


class LiveSettings(BaseModel):
    """Turn-taking and limits of one side of a live call (keyword-only, frozen).

    Every field is described in the schema (``LiveSettings.model_fields``). The defaults are the patient's;
    the built-in voice agent listens with ``smart_turn_stop_s=0.45``, ``vad_stop_s=0.6`` and ``turn_wait_s=0.0``
    (``AgentCallSettings``). A call's entry point gets it as ``CallSettings.side``.

    When the far end's turn is over (``end_of_turn``; ``audio.live._turns.TurnTaker``):

    * ``vad``: the VAD stops after ``vad_stop_s`` of silence and the turn is over; a segment whose transcript does
      not end in "?" waits ``turn_wait_s`` longer.
    * ``smart-turn`` (the default): the VAD stops after ``smart_turn_stop_s`` and Smart Turn v3.2
      (``audio.live._end_of_turn``) judges the far end's turn so far. Judged complete, the turn is over at once if
      its transcript ends in "?" (or the side has no question rule: ``turn_wait_s`` 0); otherwise the old timing
      holds, counted from the end of speech: ``vad_stop_s`` of silence, plus ``turn_wait_s`` without a "?". The
      model can only make a reply earlier than the ``vad`` path would, never later.
    """

    model_config = {"frozen": True}

    end_of_turn: EndOfTurn = Field(default="smart-turn", description="how the far end's turn is judged over: "
                                                                     "smart-turn (the model, at a short VAD stop) or "
                                                                     "vad (a fixed VAD stop)")
    smart_turn_stop_s: float = Field(default=0.1, gt=0, description="with smart-turn: silence this long before the "
                                                                     "VAD stops and the model judges the turn")
    vad_start_s: float = Field(default=0.2, gt=0, description="speech this long before VAD confirms a start")
    vad_stop_s: float = Field(default=0.3, gt=0, description="silence this long before VAD confirms a stop (with "
                                                             "smart-turn: before a turn judged incomplete is over)")
    turn_wait_s: float = Field(default=0.7, ge=0, description="after a segment that does not end in a question, "
                                                               "wait this much longer for the speaker to go on")
    vad_confidence: float = Field(default=0.7, gt=0, lt=1)
    beam_size: int = Field(default=5, ge=1, description="Whisper beam; 5 is far better than 1 on drug names")
    speculative_stt: bool = Field(default=True, description="start transcribing at the first pause (see "
                                                             "WhisperSegmentSTT)")
    assessment_grace_s: float = Field(default=1.2, ge=0, description="wait after an assessment for its rest")
    time_limit_s: float = Field(default=600.0, gt=0)
    opening_delay_s: float = Field(default=0.5, ge=0, description="pause before the patient's first line")
    yield_on_overlap: bool = True
    barge_in_after_s: float | None = Field(default=None, gt=0)

    @property
    def listening_stop_s(self) -> float:
        """The silence after which this side's VAD confirms a stop: ``smart_turn_stop_s`` or ``vad_stop_s``."""
        return self.smart_turn_stop_s if self.end_of_turn == "smart-turn" else self.vad_stop_s
