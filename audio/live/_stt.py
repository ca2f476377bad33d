"""Speech to text for a live call: Whisper on the VAD's segments, speculatively.

``WhisperSegmentSTT`` is pipecat's segmented STT service on the process-wide faster-whisper model of
``audio.stt`` (never downloads, one load per process). The segments are the Silero VAD's: 16 kHz mono
int16 PCM from the VAD's confirmed start to its confirmed stop.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any

from pipecat.frames.frames import (
    Frame,
    InputAudioRawFrame,
    TranscriptionFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.settings import STTSettings
from pipecat.services.stt_service import SegmentedSTTService
from pipecat.utils.time import time_now_iso8601

from audio import stt as _stt
from audio._pcm import RATE_16K, int16_rms, int16_samples

QUIET_RMS = 300          # int16 RMS below this (about -40 dBFS) counts as a pause
SPECULATE_AFTER_S = 0.12  # a pause this long starts a speculative transcription (or shorter: SPECULATE_LEAD_S)
SPECULATE_LEAD_S = 0.05   # ... at least this long before the VAD confirms the stop, so Whisper is mostly done by then
TRAILING_SILENCE_S = 0.2  # pipecat pads each segment with this much silence, so Whisper keeps the last word
LEADING_SILENCE_S = 0.3   # and we put this much before it: see WhisperSegmentSTT
TTFS_P99_S = 1.0          # speech end -> final transcript (p99) that pipecat announces to turn strategies


def speculation_start(vad_stop_s: float) -> float:
    """How long a pause starts a speculative transcription when the VAD confirms a stop after ``vad_stop_s``."""
    return max(0.02, min(SPECULATE_AFTER_S, vad_stop_s - SPECULATE_LEAD_S))


class WhisperSegmentSTT(SegmentedSTTService):
    """pipecat's segmented STT on our process-wide faster-whisper model (never downloads, one load).

    Speculative transcription: once the speaker has been quiet for ``speculate_after_s`` (``SPECULATE_AFTER_S``, or
    ``SPECULATE_LEAD_S`` before a shorter VAD stop: ``speculation_start``) the segment so far is transcribed in the
    background. If the VAD then confirms the stop and nothing but quiet
    audio came after that point, the speculative transcript is used, so most of the VAD's stop wait
    overlaps with Whisper's work. If speech resumes, the speculation is simply discarded. One speculation runs at a
    time: a transcription cannot be stopped once started, and with a short VAD stop (0.05 s of quiet) a pause inside
    every other word started one, so on a busy machine they queued for the worker threads that Piper, Whisper's final
    pass and the end-of-turn model wait for, and a reply waited seconds.

    Every clip is transcribed with ``LEADING_SILENCE_S`` of silence before it. pipecat keeps the audio since the
    last stop, so after a short pause a segment starts at its first word; Whisper's short window then read a
    1.8 s "Can you tell me about radiate?" as that line three times, the clip went back to the full window and
    took 2-3.4 s instead of 0.1 (six such clips in one 3-turn call with a 0.1 s VAD stop, 2026-11-29; with 0.3 s
    of silence first all six read once, in 0.11-0.2 s).
    """

    def __init__(self, *, beam_size: int = 5, vocabulary: Sequence[str] | None = None,
                 on_transcribed: Callable[[str, float, float], None] | None = None, speculate: bool = True,
                 speculate_after_s: float = SPECULATE_AFTER_S, **kwargs: Any) -> None:
        super().__init__(sample_rate=RATE_16K, trailing_silence_secs=TRAILING_SILENCE_S, ttfs_p99_latency=TTFS_P99_S,
                         settings=STTSettings(model="faster-whisper", language=None), **kwargs)
        self._beam = beam_size
        self._vocabulary = list(vocabulary or [])
        self._on_transcribed = on_transcribed
        self._speculate = speculate
        self._speculate_bytes = int(speculate_after_s * RATE_16K) * 2
        self._quiet_bytes = 0
        self._spec: tuple[int, asyncio.Task[_stt.Transcript]] | None = None  # (buffer length it covers, transcription)
        self.speculative_hits = 0
        self.speculations = 0
        self.pending = 0  # segments the VAD closed that are not transcribed yet

    @property
    def wants_wav_segments(self) -> bool:
        return False

    def can_generate_metrics(self) -> bool:
        return False

    def _transcribe(self, pcm: bytes) -> _stt.Transcript:
        lead = bytes(int(LEADING_SILENCE_S * RATE_16K) * 2)
        return _stt.transcribe(int16_samples(lead + pcm), sample_rate=RATE_16K, beam_size=self._beam,
                               vocabulary=self._vocabulary or None)

    async def process_audio_frame(self, frame: InputAudioRawFrame, direction: FrameDirection) -> None:
        await super().process_audio_frame(frame, direction)
        if not self._speculate or not self._user_speaking:
            self._quiet_bytes = 0
            return
        if int16_rms(frame.audio) >= QUIET_RMS:
            self._quiet_bytes = 0
            return
        self._quiet_bytes += len(frame.audio)
        covered = len(self._audio_buffer)
        stale = self._spec is None or self._spec[0] < covered - self._quiet_bytes  # speech came after it
        if self._quiet_bytes >= self._speculate_bytes and stale and (self._spec is None or self._spec[1].done()):
            pcm = bytes(self._audio_buffer) + self._trailing_silence()
            self.speculations += 1
            self._spec = (covered, asyncio.create_task(asyncio.to_thread(self._transcribe, pcm)))

    async def _handle_user_stopped_speaking(self, frame: VADUserStoppedSpeakingFrame) -> None:
        if self.is_usable:
            self.pending += 1  # the base class queues the segment for run_stt
        await super()._handle_user_stopped_speaking(frame)

    def _quiet_after(self, audio: bytes, offset: int) -> bool:
        return int16_rms(audio[offset:len(audio) - len(self._trailing_silence())]) < QUIET_RMS  # 0.0 when empty

    async def run_stt(self, audio: bytes) -> AsyncGenerator[Frame | None, None]:
        started = time.monotonic()
        spec, self._spec = self._spec, None
        transcript: _stt.Transcript | None = None
        if spec is not None and spec[0] <= len(audio) and self._quiet_after(audio, spec[0]):
            try:
                transcript = await spec[1]
                self.speculative_hits += 1
            except Exception:  # a failed speculation is retried the ordinary way below
                transcript = None
        try:
            if transcript is None:
                transcript = await asyncio.to_thread(self._transcribe, audio)
        finally:
            self.pending = max(0, self.pending - 1)
        text = transcript.text.strip()
        if self._on_transcribed is not None:
            self._on_transcribed(text, started, time.monotonic())
        if text:
            yield TranscriptionFrame(text=text, user_id="", timestamp=time_now_iso8601())
