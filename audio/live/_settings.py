"""What one side of a live call is configured with, and the live call's own error.

``LiveSettings`` holds the turn-taking and the limits of one side (the patient, or the built-in voice
agent); ``LiveError`` is what a call raises when it cannot be set up or run. ``Side`` names a side.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from sim.records import EncSimError

Side = Literal["patient", "agent"]


class LiveError(EncSimError):
    """A live call could not be set up or run (bad endpoint, port taken, ...); the message says why."""


class LiveSettings(BaseModel):
    """Turn-taking and limits of one side of a live call (keyword-only, frozen).

    Every field is described in the schema (``LiveSettings.model_fields``). The defaults are the patient's;
    the built-in voice agent listens with ``vad_stop_s=0.6`` and ``turn_wait_s=0.0`` (``AgentCallSettings``).
    A call's entry point gets it as ``CallSettings.side``.
    """

    model_config = {"frozen": True}

    vad_start_s: float = Field(default=0.2, gt=0, description="speech this long before VAD confirms a start")
    vad_stop_s: float = Field(default=0.3, gt=0, description="silence this long before VAD confirms a stop")
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
