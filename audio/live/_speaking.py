"""Speaking and pacing: what a side says, synthesized sentence by sentence and played out in real time.

``PiperSpeaker`` speaks ``SpeakFrame`` text sentence by sentence with the process-wide Piper voice
(deterministic settings), as 16 kHz int16 PCM with Piper's own edge silence trimmed. Its ``prepare`` synthesises
ahead the first sentence of each line the side may start a reply with (the patient's scripted answers), only
while the side itself is talking (or before the call), so as never to take the cores from the far end's own work: a
reply that starts with one is heard without waiting for Piper. ``RealtimePacer``
is the playout clock: it sends exactly one 20 ms frame (``FRAME_S``) per 20 ms, silence when there is
nothing to say, so the far end hears a continuous stream and its VAD sees real pauses; it knows exactly
when this side's speech starts and ends, and writes this side's track of the call recording.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from pipecat.frames.frames import (
    CancelFrame,
    DataFrame,
    EndFrame,
    Frame,
    InterruptionFrame,
    OutputAudioRawFrame,
    StartFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from audio._pcm import RATE_16K, float_to_int16, resample
from audio.live._recording import CallClock, CallRecorder
from audio.tts import DETERMINISTIC, PiperTTS, TTSError, VoiceStyle

FRAME_S = 0.020  # the pacer sends one frame of this length per this many seconds
FRAME_BYTES = int(RATE_16K * FRAME_S) * 2  # one frame of 16 kHz int16 PCM

_SENTENCE = re.compile(r"(?<=[.!?])(?<![0-9]\.)\s+")  # "Diagnoses: 1. X" stays one sentence


def sentences(text: str) -> list[str]:
    """The sentences a speaker synthesises one at a time, in order (a line without an end mark is one)."""
    return [s for s in _SENTENCE.split(text.strip()) if s.strip()]


def speakable(text: str) -> str:
    """What a voice should read of ``text``: markdown and list markers dropped, each line ending as a sentence.

    Args:
        text: a reply as a model writes it (markdown, lists, an assessment block).

    Returns:
        One line of sentences, e.g. ``"ASSESSMENT: Triage level: ESI 5. Advice. Rest at home."``.
    """
    lines = []
    for line in text.splitlines():
        line = re.sub(r"[*#`>]+", "", line).replace("_", " ").strip()
        line = re.sub(r"^\s*[-•]\s+", "", line)
        if not line:
            continue
        lines.append(line if line[-1] in ".!?:;," else line + ".")
    return " ".join(lines)


SENTENCE_GAP_S = 0.12  # pause between two sentences of one line: well under any VAD stop setting
_EDGE_SILENCE = 0.01   # float amplitude at or below which Piper's leading and trailing audio is silence
_EDGE_PAD_S = 0.03     # silence kept at each edge of a sentence


def _to_wire_pcm(samples: np.ndarray, rate: int, *, gap_before_s: float = 0.0) -> bytes:
    """16 kHz int16 bytes of one sentence, ``gap_before_s`` of silence first.

    Piper's own leading and trailing silence is trimmed to ``_EDGE_PAD_S``, so the pause between two sentences
    is ``gap_before_s`` and never long enough to end a turn.
    """
    x = np.asarray(samples, dtype=np.float32)
    loud = np.flatnonzero(np.abs(x) > _EDGE_SILENCE)
    if loud.size:
        pad = int(_EDGE_PAD_S * rate)
        x = x[max(0, loud[0] - pad):loud[-1] + pad]
    if gap_before_s > 0:
        x = np.concatenate([np.zeros(int(gap_before_s * rate), dtype=np.float32), x])
    return float_to_int16(resample(x, rate, RATE_16K)).tobytes()


@dataclass
class SpeakFrame(DataFrame):
    """Internal: ask the next ``PiperSpeaker`` to say ``text`` (it never reaches a transport)."""

    text: str = ""
    turn: int = 0


class PiperSpeaker(FrameProcessor):
    """Speaks ``SpeakFrame`` text sentence by sentence, pushing 16 kHz audio as soon as each is ready.

    ``replies`` counts the lines it started to speak and ``from_prepared`` those whose first sentence was
    synthesised ahead by ``prepare``.
    """

    def __init__(self, *, tts: PiperTTS, style: VoiceStyle | None, on_first_audio: Callable[[int], None],
                 far_quiet: Callable[[], bool] = lambda: True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._tts = tts
        self._far_quiet = far_quiet
        self._style = style
        self._on_first_audio = on_first_audio
        self._task: asyncio.Task[None] | None = None
        self._preparing: asyncio.Task[int] | None = None
        self._ready: dict[str, bytes] = {}  # first sentence -> its wire PCM, synthesised ahead
        self._idle = asyncio.Event()  # no line of this side is being synthesised
        self._idle.set()
        self._talking = asyncio.Event()  # this side is audible, or the call has not started
        self._talking.set()
        self.replies = 0
        self.from_prepared = 0

    def on_own_speech(self, start: bool) -> None:
        """Called by the pacer when this side becomes audible (``start``) or silent."""
        if start:
            self._talking.set()
        else:
            self._talking.clear()

    async def prepare(self, lines: Iterable[str]) -> int:
        """Synthesise ahead the first sentence of each of ``lines``, one at a time.

        The audio is exactly what speaking the sentence would synthesise (the same voice, settings and style), so a
        reply that starts with one is heard as soon as it is decided instead of after Piper's first sentence (about
        0.17 s on two cores). It runs only while this side is audible (or before the call starts), the far end is
        quiet (``far_quiet``: not talking over it, nothing of it left to transcribe) and nothing of this side is
        being synthesised: then the far end listens, and neither this side's next sentence nor the far end's own
        transcription, model or voice (on the same machine in a batch of calls) waits for it. A line Piper cannot
        speak is skipped. Returns how many sentences are ready.
        """
        for sentence in dict.fromkeys(said[0] for line in lines if (said := sentences(line))):
            if sentence in self._ready:
                continue
            while not (self._idle.is_set() and self._talking.is_set() and self._far_quiet()):
                if not self._idle.is_set():
                    await self._idle.wait()
                elif not self._talking.is_set():
                    await self._talking.wait()
                else:
                    await asyncio.sleep(FRAME_S)  # the far end talks over this side, or is being transcribed
            try:
                speech = await self._tts.synthesize_async(sentence, settings=DETERMINISTIC, style=self._style)
            except TTSError:
                continue
            self._ready[sentence] = await asyncio.to_thread(_to_wire_pcm, speech.samples, speech.sample_rate)
        return len(self._ready)

    def start_preparing(self, lines: Iterable[str]) -> None:
        """``prepare(lines)`` as a task of the call, stopped by ``stop_preparing``."""
        self._preparing = asyncio.create_task(self.prepare(lines))

    async def stop_preparing(self, log: Callable[[str], None]) -> None:
        """Cancel what is left of the preparation; a failure there slowed replies, it never fails the call."""
        task, self._preparing = self._preparing, None
        if task is None:
            return
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        except Exception as e:  # anything Piper raised: the replies were synthesised as they came
            log(f"the patient's answers could not be prepared ahead ({type(e).__name__}: {e}); replies were "
                "synthesised as they came")

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, SpeakFrame):
            self._cancel()
            self._task = asyncio.create_task(self._speak(frame.text, frame.turn))
            self._idle.clear()
            return
        if isinstance(frame, (InterruptionFrame, EndFrame, CancelFrame)):
            self._cancel()
        await self.push_frame(frame, direction)

    def _cancel(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None
        self._idle.set()

    async def _speak(self, text: str, turn: int) -> None:
        first = True
        self.replies += 1
        try:
            for sentence in sentences(text):
                pcm = self._ready.get(sentence) if first else None
                if pcm is not None:
                    self.from_prepared += 1
                else:
                    speech = await self._tts.synthesize_async(sentence, settings=DETERMINISTIC, style=self._style)
                    pcm = await asyncio.to_thread(_to_wire_pcm, speech.samples, speech.sample_rate,
                                                  gap_before_s=0.0 if first else SENTENCE_GAP_S)
                if first:
                    self._on_first_audio(turn)
                    first = False
                await self.push_frame(OutputAudioRawFrame(audio=pcm, sample_rate=RATE_16K, num_channels=1))
        finally:
            if self._task is asyncio.current_task():
                self._idle.set()


async def every_frame(tick: Callable[[], Awaitable[None]], *, running: Callable[[], bool] = lambda: True) -> None:
    """Call ``tick()`` once per 20 ms slot (``FRAME_S``) on absolute deadlines while ``running()``.

    After a stall the slots that passed are skipped, not caught up back to back: the playout clock of audio a far
    end sent (a phone line's, a Realtime server's, a chat reply's), which plays one frame per tick.
    """
    start = time.monotonic()
    n = 0
    while running():
        n = max(n + 1, math.floor((time.monotonic() - start) / FRAME_S))
        await asyncio.sleep(max(0.0, start + n * FRAME_S - time.monotonic()))
        await tick()


class RealtimePacer(FrameProcessor):
    """The playout clock: one 20 ms frame every 20 ms on absolute deadlines, silence between lines.

    ``on_speech(start: bool, at: float)`` fires when this side starts and stops being audible.
    After a stall (a loaded machine held the event loop) the slots that passed are skipped, not sent
    back to back: a burst would put the recording ahead of the call clock, on which the speech events
    are stamped, by the length of the stall. Skipping delays the rest of the line instead, as a phone
    line's playout would. A late frame can still leave the recording a frame or two ahead of the clock,
    so the stop event is stamped no earlier than the end of the last voiced frame in the recording.
    """

    def __init__(self, *, clock: CallClock, recorder: CallRecorder,
                 on_speech: Callable[[bool, float], None], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._clock = clock
        self._recorder = recorder
        self._on_speech = on_speech
        self._buffer = bytearray()
        self._task: asyncio.Task[None] | None = None
        self.speaking = False

    @property
    def pending_s(self) -> float:
        return len(self._buffer) / 2 / RATE_16K

    def clear(self) -> None:
        self._buffer.clear()

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, OutputAudioRawFrame) and direction == FrameDirection.DOWNSTREAM:
            self._buffer += frame.audio
            return
        if isinstance(frame, InterruptionFrame):
            self.clear()
        await self.push_frame(frame, direction)
        if isinstance(frame, StartFrame) and self._task is None:
            self._task = asyncio.create_task(self._tick())
        elif isinstance(frame, (EndFrame, CancelFrame)) and self._task is not None:
            self._task.cancel()
            self._task = None

    async def _tick(self) -> None:
        silence = bytes(FRAME_BYTES)
        start = time.monotonic()
        n = 0
        voiced_end = 0.0  # where the last frame of speech ends in the recording (call clock)
        while True:
            n = max(n + 1, int((time.monotonic() - start) / FRAME_S))  # skip the slots a stall took
            await asyncio.sleep(max(0.0, start + n * FRAME_S - time.monotonic()))
            if self._buffer:
                chunk = bytes(self._buffer[:FRAME_BYTES]).ljust(FRAME_BYTES, b"\0")
                del self._buffer[:FRAME_BYTES]
                if not self.speaking:
                    self.speaking = True
                    self._on_speech(True, self._clock.now())
            else:
                chunk = silence
                if self.speaking:
                    self.speaking = False
                    self._on_speech(False, max(self._clock.now(), voiced_end))
            placed = self._recorder.add("own", chunk)
            if chunk is not silence and placed is not None:
                voiced_end = placed
            await self.push_frame(OutputAudioRawFrame(audio=chunk, sample_rate=RATE_16K, num_channels=1))
