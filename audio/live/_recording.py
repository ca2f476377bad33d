"""The call clock and the call recording.

``CallClock`` is the one clock of a call: every time of a live call is seconds since the call started
(it starts when the caller is admitted, see ``_door``). ``CallRecorder`` records both sides on that clock:
``call.<fmt>`` (``audio._store``: FLAC, Ogg/Opus or WAV by the path's suffix) is stereo, left this side (the
patient), right the far end, 16 kHz int16, from the call's start to its end, so a speech event at ``at`` seconds is
at sample ``at * 16000`` of the file.
``InputTap`` is the pipeline's first processor: it stamps the far end's audio into the recording as it
arrives, notes when the far end was last voiced (for the barge-in) and hands each frame on to the brain (what the
end-of-turn model hears).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pipecat.frames.frames import (
    Frame,
    InputAudioRawFrame,
    InterruptionFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from audio._pcm import RATE_16K, int16_rms, int16_samples, resample_int16
from audio._store import write_audio
from audio.live._stt import QUIET_RMS


class CallClock:
    """Seconds since the call started; one clock per call, shared by every processor of a side.

    Attributes:
        t0: ``time.monotonic()`` at the call's start (reset when the caller is admitted).
        wall0: ``time.time()`` at the same moment.
    """

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.wall0 = time.time()

    def now(self) -> float:
        """Seconds since the call started."""
        return time.monotonic() - self.t0


class CallRecorder:
    """Both sides of the call on one timeline: left channel this side, right channel the far end.

    Our own audio is written frame by frame by the pacer (exact). The far end's audio is placed where
    it arrived: at ``max(write cursor, arrival time)``, so bursts faster than real time stay in order.
    ``start()`` (the call begins: its clock was just reset) drops whatever was recorded before, so audio
    from before the call cannot shift the tracks; ``stop()`` ends the recording at that moment of the
    call clock, so the file lasts exactly ``length_s`` (the call) however long the teardown takes.
    A recorder made with ``started=False`` records nothing until ``start()``.
    """

    def __init__(self, clock: CallClock, *, started: bool = True) -> None:
        self.clock = clock
        self._tracks: dict[str, list[tuple[int, np.ndarray]]] = {"own": [], "far": []}
        self._cursor = {"own": 0, "far": 0}
        self._on = started
        self._end: int | None = None

    def start(self) -> None:
        self._tracks = {"own": [], "far": []}
        self._cursor = {"own": 0, "far": 0}
        self._on, self._end = True, None

    def stop(self) -> None:
        if self._on and self._end is None:
            self._end = max(0, int(round(self.clock.now() * RATE_16K)))

    @property
    def length_s(self) -> float:
        """Seconds of call the recording holds (from the call's start to ``stop()``, or to the last audio)."""
        return self._length() / RATE_16K

    def _length(self) -> int:
        return self._end if self._end is not None else max(self._cursor.values())

    def add(self, track: Literal["own", "far"], pcm: bytes, *, rate: int = RATE_16K) -> float | None:
        """Place ``pcm`` on ``track``; returns where it ends on the call clock (None when not recording)."""
        if not self._on or self._end is not None:
            return None
        samples = int16_samples(pcm)
        if rate != RATE_16K:
            samples = resample_int16(samples, rate, RATE_16K)
        at = max(self._cursor[track], int(round(self.clock.now() * RATE_16K)) - len(samples))
        self._tracks[track].append((at, samples))
        self._cursor[track] = at + len(samples)
        return self._cursor[track] / RATE_16K

    def stereo(self) -> np.ndarray:
        n = self._length()
        out = np.zeros((n, 2), dtype=np.int16)
        for ch, track in enumerate(("own", "far")):
            for at, samples in self._tracks[track]:
                if at < n:
                    out[at:at + len(samples), ch] = samples[:n - at]
        return out

    def write(self, path: Path) -> Path:
        """Write the stereo recording to ``path``, stored by its suffix (``.flac``, ``.opus``, ``.wav``)."""
        return write_audio(path, self.stereo(), RATE_16K)


class InputTap(FrameProcessor):
    """Copies the far end's audio into the recording as it arrives and notes when it was last voiced.

    ``on_voice(at)`` is called for every voiced frame, ``on_audio(pcm, rate)`` for every frame.

    An ``InterruptionFrame`` coming in from the far end is dropped: it tells the far end's *own*
    playback to flush (it stopped talking), and must not cut this side's speech.
    """

    def __init__(self, *, recorder: CallRecorder, on_voice: Callable[[float], None] | None = None,
                 on_audio: Callable[[bytes, int], None] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._recorder = recorder
        self._on_voice = on_voice
        self._on_audio = on_audio

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, InterruptionFrame) and direction == FrameDirection.DOWNSTREAM:
            return
        if isinstance(frame, InputAudioRawFrame):
            self._recorder.add("far", frame.audio, rate=frame.sample_rate)
            if self._on_audio is not None:
                self._on_audio(frame.audio, frame.sample_rate)
            if self._on_voice is not None and int16_rms(frame.audio) >= QUIET_RMS:
                self._on_voice(self._recorder.clock.now())
        await self.push_frame(frame, direction)
