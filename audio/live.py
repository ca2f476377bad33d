"""Live voice calls: real-time pipecat pipelines for the voiced patient and for a built-in voice agent.

A live call streams audio both ways in 20 ms frames over a websocket (pipecat's protobuf wire format:
one ``pipecat.Frame`` per binary message, 16 kHz mono int16 PCM both ways) and takes turns by voice
activity, as a real phone triage call does. Each side is one pipecat pipeline::

    transport in -> InputTap -> Silero VAD -> Whisper STT -> brain -> PiperSpeaker -> RealtimePacer -> transport out

* ``InputTap`` stamps the other side's audio into the call recording as it arrives.
* ``WhisperSegmentSTT`` transcribes each VAD segment with the process-wide faster-whisper model.
* the brain takes turns: ``PatientBrain`` answers through the information-tree simulator it is handed
  (the same code as batch runs); ``AgentBrain`` asks the agent under test (one stateless call per turn).
* ``PiperSpeaker`` speaks sentence by sentence with the process-wide Piper voice (deterministic).
* ``RealtimePacer`` is the playout clock: it sends exactly one 20 ms frame per 20 ms, silence when
  there is nothing to say, so the far end hears a continuous stream and its VAD sees real pauses.

Timing. Every time is seconds since the call started (``CallClock``; it starts when the caller is
admitted, see below). The pacer knows exactly when this side's speech starts and ends. The other
side's speech is bounded by VAD events corrected for the VAD's own confirmation delays
(``start_secs`` / ``stop_secs``). From those, ``interaction_metrics`` derives the per-turn latencies,
overlaps (who talked over whom and whether the other yielded) and silence gaps. The recording
(``call.wav``) is stereo: left this side (the patient), right the far end. It runs on the same
clock, from the call's start to its end (``interaction["call_s"]`` seconds), so a speech event at
``at`` seconds is at sample ``at * 16000`` of the file.

Barge-in. With ``yield_on_overlap`` a side stops talking when the other starts while it speaks (its
speech is cut, queued audio dropped, and an ``InterruptionFrame`` tells the far end to flush playback);
with ``barge_in_after_s`` the patient cuts in when the agent has talked that long without a pause.

Who may call. Every websocket server here (the patient waiting for a caller, the built-in voice
agent) is bound to loopback and guarded at the opening handshake (``OriginPolicy``): a browser page
may open it only from a loopback origin (``http(s)://127.0.0.1``, ``localhost`` or ``[::1]``, any
port; exactly as browsers serialise origins: lower case, no path) or an origin given with
``--allow-origin``; a program that sends no ``Origin`` header (our own caller and agent clients send
none) may always call. With the call page (``encsim live --serve``) only the page's own origin and
``--allow-origin`` ones are accepted, and a missing Origin is refused. Anything else gets HTTP 403
before the websocket opens, one line on the log naming the origin (neutralised: it is attacker
text) and ``--allow-origin``, and is never part of a call. This stops cross-site websocket hijacking
(a web page in the user's browser talking to the local server).

Admission. An accepted connection is not a call yet: it becomes the caller with its first valid
audio frame (16 kHz mono int16 PCM, an even number of bytes, at most 1 s). Only then does the call
clock start, the recording begin and the patient open the call. A connection that sends no valid
audio within the join window (``join_window_s``, ``--join-window``, default 10 s) is closed (1008)
and logged; it is not recorded and never scored, and the server keeps waiting for a caller (``encsim
live`` records "no caller joined" when ``--wait`` runs out). Whatever comes in is read defensively
(``_read_wire``): only audio frames and JSON-object messages pass; text and transcription frames,
malformed protobuf, wrong-format audio and websocket text messages are dropped, so neither garbage
nor a forged transcript reaches the patient.

This module imports only types from ``sim`` (events, result) and ``sim.redact``; ``sim.live`` wires it
to the store, the scorers and the agents.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
import pipecat.frames.protobufs.frames_pb2 as frame_protos
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.audio.vad.vad_analyzer import VADParams
from pipecat.frames.frames import (
    CancelFrame,
    DataFrame,
    EndFrame,
    Frame,
    InputAudioRawFrame,
    InputTransportMessageFrame,
    InterruptionFrame,
    OutputAudioRawFrame,
    OutputTransportMessageUrgentFrame,
    StartFrame,
    TranscriptionFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.audio.vad_processor import VADProcessor
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.serializers.protobuf import ProtobufFrameSerializer
from pipecat.services.settings import STTSettings
from pipecat.services.stt_service import SegmentedSTTService
from pipecat.transports.websocket.server import (
    SingleClientWebsocketServerInputTransport,
    SingleClientWebsocketServerParams,
    SingleClientWebsocketServerTransport,
)
from pipecat.utils.time import time_now_iso8601
from pipecat.workers.runner import WorkerRunner
from pydantic import BaseModel, Field
from websockets.asyncio.server import serve as websocket_serve
from websockets.protocol import State

from audio import stt as _stt
from audio._pcm import RATE_16K, float_to_int16, int16_rms, int16_samples, resample, resample_int16
from audio.tts import DETERMINISTIC, PiperTTS, VoiceStyle
from sim.events import LatencyMeasured, OverlapDetected, SpeechStarted, SpeechStopped, TurnRecorded
from sim.redact import neutralise
from sim.result import Turn

__all__ = [
    "DEFAULT_JOIN_WINDOW_S",
    "LIVE_RATE",
    "AgentBrain",
    "CallClock",
    "CallOutcome",
    "CallRecorder",
    "LiveError",
    "LiveSettings",
    "OriginPolicy",
    "PatientBrain",
    "interaction_metrics",
    "parse_allowed_origin",
    "run_agent_bot",
    "run_patient_call",
    "speakable",
]

LIVE_RATE = RATE_16K  # the wire rate, both ways
FRAME_S = 0.020
FRAME_BYTES = int(LIVE_RATE * FRAME_S) * 2
Side = Literal["patient", "agent"]
EventSink = Callable[[Any], None]


class LiveError(Exception):
    """A live call could not be set up or run (bad endpoint, port taken, ...); the message says why."""


class LiveSettings(BaseModel):
    """Turn-taking and limits of one side of a live call (keyword-only, frozen)."""

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


class CallClock:
    """Seconds since the call started; one clock per call, shared by every processor of a side."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.wall0 = time.time()

    def now(self) -> float:
        return time.monotonic() - self.t0


# --------------------------------------------------------------------------------------------- recording

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
            self._end = max(0, int(round(self.clock.now() * LIVE_RATE)))

    @property
    def length_s(self) -> float:
        """Seconds of call the recording holds (from the call's start to ``stop()``, or to the last audio)."""
        return self._length() / LIVE_RATE

    def _length(self) -> int:
        return self._end if self._end is not None else max(self._cursor.values())

    def add(self, track: Literal["own", "far"], pcm: bytes, *, rate: int = LIVE_RATE) -> float | None:
        """Place ``pcm`` on ``track``; returns where it ends on the call clock (None when not recording)."""
        if not self._on or self._end is not None:
            return None
        samples = int16_samples(pcm)
        if rate != LIVE_RATE:
            samples = resample_int16(samples, rate, LIVE_RATE)
        at = max(self._cursor[track], int(round(self.clock.now() * LIVE_RATE)) - len(samples))
        self._tracks[track].append((at, samples))
        self._cursor[track] = at + len(samples)
        return self._cursor[track] / LIVE_RATE

    def stereo(self) -> np.ndarray:
        n = self._length()
        out = np.zeros((n, 2), dtype=np.int16)
        for ch, track in enumerate(("own", "far")):
            for at, samples in self._tracks[track]:
                if at < n:
                    out[at:at + len(samples), ch] = samples[:n - at]
        return out

    def write(self, path: Path) -> Path:
        import soundfile as sf

        sf.write(str(path), self.stereo(), LIVE_RATE, subtype="PCM_16")
        return path


class InputTap(FrameProcessor):
    """Copies the far end's audio into the recording as it arrives and notes when it was last voiced.

    An ``InterruptionFrame`` coming in from the far end is dropped: it tells the far end's *own*
    playback to flush (it stopped talking), and must not cut this side's speech.
    """

    def __init__(self, *, recorder: CallRecorder, on_voice: Callable[[float], None] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._recorder = recorder
        self._on_voice = on_voice

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, InterruptionFrame) and direction == FrameDirection.DOWNSTREAM:
            return
        if isinstance(frame, InputAudioRawFrame):
            self._recorder.add("far", frame.audio, rate=frame.sample_rate)
            if self._on_voice is not None and int16_rms(frame.audio) >= QUIET_RMS:
                self._on_voice(self._recorder.clock.now())
        await self.push_frame(frame, direction)


# --------------------------------------------------------------------------------------------- STT / TTS

QUIET_RMS = 300          # int16 RMS below this (about -40 dBFS) counts as a pause
SPECULATE_AFTER_S = 0.12  # a pause this long starts a speculative transcription


class WhisperSegmentSTT(SegmentedSTTService):
    """pipecat's segmented STT on our process-wide faster-whisper model (never downloads, one load).

    Speculative transcription: once the speaker has been quiet for ``SPECULATE_AFTER_S`` the segment so
    far is transcribed in the background. If the VAD then confirms the stop and nothing but quiet
    audio came after that point, the speculative transcript is used, so most of the VAD's stop wait
    overlaps with Whisper's work. If speech resumes, the speculation is simply discarded.
    """

    def __init__(self, *, beam_size: int = 5, vocabulary: Sequence[str] | None = None,
                 on_transcribed: Callable[[str, float, float], None] | None = None, speculate: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(sample_rate=LIVE_RATE, trailing_silence_secs=0.2, ttfs_p99_latency=1.0,
                         settings=STTSettings(model="faster-whisper", language=None), **kwargs)
        self._beam = beam_size
        self._vocabulary = list(vocabulary or [])
        self._on_transcribed = on_transcribed
        self._speculate = speculate
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
        return _stt.transcribe(int16_samples(pcm), sample_rate=LIVE_RATE, beam_size=self._beam,
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
        if self._quiet_bytes >= SPECULATE_AFTER_S * LIVE_RATE * 2 and (self._spec is None or
                                                                        self._spec[0] < covered - self._quiet_bytes):
            pcm = bytes(self._audio_buffer) + self._trailing_silence()
            self.speculations += 1
            self._spec = (covered, asyncio.create_task(asyncio.to_thread(self._transcribe, pcm)))

    async def _handle_user_stopped_speaking(self, frame: VADUserStoppedSpeakingFrame) -> None:
        if self.is_usable:
            self.pending += 1  # the base class queues the segment for run_stt
        await super()._handle_user_stopped_speaking(frame)

    def _quiet_after(self, audio: bytes, offset: int) -> bool:
        return int16_rms(audio[offset:len(audio) - len(self._trailing_silence())]) < QUIET_RMS  # 0.0 when empty

    async def run_stt(self, audio: bytes):  # type: ignore[override]
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


_SENTENCE = re.compile(r"(?<=[.!?])(?<![0-9]\.)\s+")  # "Diagnoses: 1. X" stays one sentence


def speakable(text: str) -> str:
    """What a voice should read: markdown and list markers dropped, each line ending as a sentence."""
    lines = []
    for line in text.splitlines():
        line = re.sub(r"[*#`>]+", "", line).replace("_", " ").strip()
        line = re.sub(r"^\s*[-•]\s+", "", line)
        if not line:
            continue
        lines.append(line if line[-1] in ".!?:;," else line + ".")
    return " ".join(lines)


SENTENCE_GAP_S = 0.12  # pause between two sentences of one line: well under any VAD stop setting
_EDGE_SILENCE = 0.01


def _to_wire_pcm(samples: np.ndarray, rate: int, *, gap_before_s: float = 0.0) -> bytes:
    """16 kHz int16 bytes of one sentence, with Piper's own leading and trailing silence trimmed to
    30 ms so the pause between sentences is ``gap_before_s`` and never long enough to end a turn."""
    x = np.asarray(samples, dtype=np.float32)
    loud = np.flatnonzero(np.abs(x) > _EDGE_SILENCE)
    if loud.size:
        pad = int(0.03 * rate)
        x = x[max(0, loud[0] - pad):loud[-1] + pad]
    if gap_before_s > 0:
        x = np.concatenate([np.zeros(int(gap_before_s * rate), dtype=np.float32), x])
    return float_to_int16(resample(x, rate, LIVE_RATE)).tobytes()


@dataclass
class SpeakFrame(DataFrame):
    """Internal: ask the next ``PiperSpeaker`` to say ``text`` (it never reaches a transport)."""

    text: str = ""
    turn: int = 0


class PiperSpeaker(FrameProcessor):
    """Speaks ``SpeakFrame`` text sentence by sentence, pushing 16 kHz audio as soon as each is ready."""

    def __init__(self, *, tts: PiperTTS, style: VoiceStyle | None, on_first_audio: Callable[[int], None],
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._tts = tts
        self._style = style
        self._on_first_audio = on_first_audio
        self._task: asyncio.Task[None] | None = None

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, SpeakFrame):
            self._cancel()
            self._task = asyncio.create_task(self._speak(frame.text, frame.turn))
            return
        if isinstance(frame, (InterruptionFrame, EndFrame, CancelFrame)):
            self._cancel()
        await self.push_frame(frame, direction)

    def _cancel(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None

    async def _speak(self, text: str, turn: int) -> None:
        first = True
        for sentence in (s for s in _SENTENCE.split(text.strip()) if s.strip()):
            speech = await self._tts.synthesize_async(sentence, settings=DETERMINISTIC, style=self._style)
            pcm = await asyncio.to_thread(_to_wire_pcm, speech.samples, speech.sample_rate,
                                          gap_before_s=0.0 if first else SENTENCE_GAP_S)
            if first:
                self._on_first_audio(turn)
                first = False
            await self.push_frame(OutputAudioRawFrame(audio=pcm, sample_rate=LIVE_RATE, num_channels=1))


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
        return len(self._buffer) / 2 / LIVE_RATE

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
            await self.push_frame(OutputAudioRawFrame(audio=chunk, sample_rate=LIVE_RATE, num_channels=1))


# --------------------------------------------------------------------------------------------- timeline

@dataclass
class TurnTiming:
    """Stage times (call seconds) of one reply by this side; None where the stage did not happen."""

    turn: int
    heard_end: float | None = None       # the far end stopped speaking (VAD stop minus stop_secs)
    vad_stop: float | None = None        # VAD confirmed the stop
    transcribed: float | None = None     # the (last) transcript arrived
    decided: float | None = None         # the reply text was ready
    first_audio: float | None = None     # the first synthesized frame reached the pacer
    audible: float | None = None         # the pacer sent the first frame of the reply
    interrupted: bool = False


@dataclass
class Timeline:
    """Everything ``interaction_metrics`` needs, collected by a brain as the call runs."""

    own: Side
    own_speech: list[list[float]] = field(default_factory=list)   # [start, end] pairs (end may be open)
    far_speech: list[list[float]] = field(default_factory=list)
    turns: list[TurnTiming] = field(default_factory=list)
    overlaps: list[dict[str, Any]] = field(default_factory=list)


def _pct(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def interaction_metrics(tl: Timeline, *, gap_threshold_s: float = 2.0) -> dict[str, Any]:
    """Latencies, overlaps and silence gaps of a call, from this side's point of view.

    * ``own_latency``: far end's speech end -> our first audible frame, per reply (voice to voice);
    * ``far_latency``: our speech end -> the far end's next speech start (VAD start minus start_secs);
    * ``overlaps``: intervals where both talk, with who started talking over whom and who yielded;
    * ``gaps``: intervals where nobody talks, between the first and the last speech of the call.
    """
    own = [(s, e) for s, e in tl.own_speech if e is not None]
    far = [(s, e) for s, e in tl.far_speech if e is not None]
    own_lat = [t.audible - t.heard_end for t in tl.turns
               if t.audible is not None and t.heard_end is not None and not t.interrupted]
    far_lat = []
    for _, end in own:
        nxt = [s for s, _ in far if s >= end - 0.05]
        if nxt:
            far_lat.append(min(nxt) - end)
    spans = sorted(own + far)
    gaps: list[tuple[float, float]] = []
    if spans:
        reach = spans[0][1]
        for s, e in spans[1:]:
            if s > reach:
                gaps.append((reach, s))
            reach = max(reach, e)
    long_gaps = [g for g in gaps if g[1] - g[0] >= gap_threshold_s]
    stages: dict[str, list[float]] = {"vad_stop": [], "stt": [], "decide": [], "first_tts": [], "playout": []}
    for t in tl.turns:
        if t.interrupted:
            continue
        for name, a, b in (("vad_stop", t.heard_end, t.vad_stop), ("stt", t.vad_stop, t.transcribed),
                           ("decide", t.transcribed, t.decided), ("first_tts", t.decided, t.first_audio),
                           ("playout", t.first_audio, t.audible)):
            if a is not None and b is not None:
                stages[name].append(b - a)
    own_side = tl.own
    far_side = "agent" if own_side == "patient" else "patient"
    return {
        f"{own_side}_latency_s": own_lat,
        f"{far_side}_latency_s": far_lat,
        f"{own_side}_latency_p50_s": _pct(own_lat, 50),
        f"{own_side}_latency_p95_s": _pct(own_lat, 95),
        f"{far_side}_latency_p50_s": _pct(far_lat, 50),
        f"{far_side}_latency_p95_s": _pct(far_lat, 95),
        "stages_p50_s": {k: _pct(v, 50) for k, v in stages.items()},
        "overlaps": tl.overlaps,
        "interruptions": sum(1 for o in tl.overlaps if o.get("yielded")),
        "overlap_s": float(sum(o.get("duration_s", 0.0) for o in tl.overlaps)),
        "silence_gaps": len(gaps),
        "long_silences": len(long_gaps),
        "max_silence_s": max((b - a for a, b in gaps), default=0.0),
        "mean_silence_s": float(np.mean([b - a for a, b in gaps])) if gaps else 0.0,
        f"{own_side}_speech_s": float(sum(e - s for s, e in own)),
        f"{far_side}_speech_s": float(sum(e - s for s, e in far)),
        "timeline": [vars(t) for t in tl.turns],
    }


# --------------------------------------------------------------------------------------------- brains

class TurnTaker(FrameProcessor):
    """Shared turn-taking: collect what the far end said, reply once it has stopped, yield on overlap.

    Subclasses implement ``decide(heard) -> str | None`` (None: say nothing) and may override
    ``after_reply``. Frames from the transport pass through untouched.
    """

    def __init__(self, *, own: Side, clock: CallClock, settings: LiveSettings, sink: EventSink,
                 scenario_id: str, k: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.own: Side = own
        self.far: Side = "agent" if own == "patient" else "patient"
        self.clock = clock
        self.settings = settings
        self.sink = sink
        self.scenario_id, self.k = scenario_id, k
        self.timeline = Timeline(own=own)
        self.turns: list[Turn] = []
        self.pacer: RealtimePacer | None = None
        self.stt: WhisperSegmentSTT | None = None
        self._far_voiced_at = -1.0
        self._barge_ins = 0
        self._barged_this_turn = False
        self.ended = asyncio.Event()
        self.end_reason: str | None = None
        self._heard: list[str] = []
        self._far_speaking = False
        self._reply_task: asyncio.Task[None] | None = None
        self._barge_task: asyncio.Task[None] | None = None
        self._timing: TurnTiming | None = None        # the far end's latest turn, from its VAD stop
        self._reply_timing: TurnTiming | None = None  # the reply being spoken
        self._replies = 0
        self._speaking_turn: Turn | None = None

    # -- wiring --
    def attach(self, pacer: RealtimePacer, stt: WhisperSegmentSTT | None = None) -> None:
        self.pacer = pacer
        self.stt = stt

    def on_far_voice(self, at: float) -> None:
        """Called by the input tap for every voiced frame of the far end."""
        self._far_voiced_at = at

    @property
    def _transcribing(self) -> bool:
        return self.stt is not None and self.stt.pending > 0

    @property
    def _far_done(self) -> bool:
        """The far end has stopped and everything it said has been transcribed."""
        return not self._far_speaking and not self._transcribing

    def on_own_speech(self, start: bool, at: float) -> None:
        """Called by the pacer when this side becomes audible or silent."""
        if start:
            self.timeline.own_speech.append([at, None])  # type: ignore[list-item]
            t = self._reply_timing
            if t is not None and t.audible is None:
                t.audible = at
                self._emit_latency(t)
            if self._speaking_turn is not None:
                self._speaking_turn.channel["speech_start_s"] = round(at, 3)
            if self._far_speaking:
                self._overlap(at, talker=self.own)
        elif self.timeline.own_speech and self.timeline.own_speech[-1][1] is None:
            self.timeline.own_speech[-1][1] = at
            if self._speaking_turn is not None:
                self._speaking_turn.channel["speech_end_s"] = round(at, 3)
        self.sink((SpeechStarted if start else SpeechStopped)(scenario_id=self.scenario_id, k=self.k,
                                                              speaker=self.own, at=at))

    def on_first_audio(self, turn: int) -> None:
        t = self._reply_timing
        if t is not None and t.turn == turn and t.first_audio is None:
            t.first_audio = self.clock.now()

    def on_transcribed(self, text: str, started: float, ended: float) -> None:
        """Every transcription, even an empty one; a non-empty one also arrives as a TranscriptionFrame."""
        if not text and self._heard and self._far_done:
            self._schedule_reply()

    # -- frames --
    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, VADUserStartedSpeakingFrame):
            await self._far_started(frame.start_secs or self.settings.vad_start_s)
        elif isinstance(frame, VADUserStoppedSpeakingFrame):
            self._far_stopped(frame.stop_secs or self.settings.vad_stop_s)
        elif isinstance(frame, TranscriptionFrame):
            self._heard.append(frame.text)
            self._note_far_segment(frame.text)
            if self._timing is not None:
                self._timing.transcribed = self.clock.now()
            if self._far_done:
                self._schedule_reply()
            return
        elif isinstance(frame, InputTransportMessageFrame):
            message = frame.message if isinstance(frame.message, dict) else {}
            if message.get("type") == "hangup":
                await self.end_call("hangup")
            return
        await self.push_frame(frame, direction)

    async def _far_started(self, start_secs: float) -> None:
        at = self.clock.now() - start_secs
        self._far_speaking = True
        self.timeline.far_speech.append([at, None])  # type: ignore[list-item]
        self.sink(SpeechStarted(scenario_id=self.scenario_id, k=self.k, speaker=self.far, at=at))
        if self._reply_task is not None and not self._reply_task.done() and self._timing is not None \
                and self._timing.decided is None:
            self._reply_task.cancel()  # the far end went on talking: wait for the rest of its turn
        if self.pacer is not None and self.pacer.speaking:
            self._overlap(at, talker=self.far)
            if self.settings.yield_on_overlap:
                await self._yield()
        if self.settings.barge_in_after_s is not None and self.own == "patient" and not self._barged_this_turn:
            if self._barge_task is not None:
                self._barge_task.cancel()
            self._barge_task = asyncio.create_task(
                self._barge_in_later(max(0.0, self.settings.barge_in_after_s - start_secs)))

    def _far_stopped(self, stop_secs: float) -> None:
        now = self.clock.now()
        self._far_speaking = False
        if self._barge_task is not None:
            self._barge_task.cancel()
            self._barge_task = None
        if self.timeline.far_speech and self.timeline.far_speech[-1][1] is None:
            self.timeline.far_speech[-1][1] = now - stop_secs
        self.sink(SpeechStopped(scenario_id=self.scenario_id, k=self.k, speaker=self.far, at=now - stop_secs))
        self._timing = TurnTiming(turn=self._replies + 1, heard_end=now - stop_secs, vad_stop=now)
        # the reply waits for this segment's transcript (see on_transcribed and the TranscriptionFrame)

    def _note_far_segment(self, text: str) -> None:
        """Record a transcribed segment of the far end with the speech interval it came from."""
        heard = self.record(self.far, text)
        if self.timeline.far_speech:
            start, end = self.timeline.far_speech[-1]
            heard.channel.setdefault("speech_start_s", round(start, 3))
            if end is not None:
                heard.channel["speech_end_s"] = round(end, 3)

    def _overlap(self, at: float, *, talker: Side) -> None:
        """``talker`` started while the other side was audible."""
        self.timeline.overlaps.append({"at": round(at, 3), "by": talker, "yielded": False, "duration_s": 0.0})
        self.sink(OverlapDetected(scenario_id=self.scenario_id, k=self.k, by=talker, at=at))

    async def _yield(self) -> None:
        """Stop talking now: drop queued audio, tell the far end to flush what it has buffered."""
        if self.pacer is not None:
            self.pacer.clear()
        if self.timeline.overlaps:
            last = self.timeline.overlaps[-1]
            last["yielded"] = True
            last["duration_s"] = round(max(0.0, self.clock.now() - last["at"]), 3)
        if self._reply_timing is not None:
            self._reply_timing.interrupted = True
        if self._speaking_turn is not None:
            self._speaking_turn.warnings.append("interrupted: stopped talking when the other side spoke")
        await self.push_frame(InterruptionFrame())  # downstream only: the far end's audio must still reach STT

    MAX_BARGE_INS = 2

    async def _barge_in_later(self, after: float) -> None:
        """Cut in if the far end is still talking ``after`` seconds into its speech (once per turn,
        at most ``MAX_BARGE_INS`` a call); the overlap is recorded when this side becomes audible."""
        await asyncio.sleep(after)
        voiced_now = self.clock.now() - self._far_voiced_at <= 0.1
        if self._far_speaking and voiced_now and not self.ended.is_set() and self._barge_ins < self.MAX_BARGE_INS:
            self._barge_ins += 1
            self._barged_this_turn = True
            await self.say(self.barge_in_line(), revealed=[], interjection=True)

    def barge_in_line(self) -> str:
        return "Sorry to cut in, but it's really bad."

    def _schedule_reply(self) -> None:
        if self.ended.is_set():
            return
        if self._reply_task is None or self._reply_task.done():
            self._reply_task = asyncio.create_task(self._reply())

    async def _reply(self) -> None:
        if not self._heard:
            return
        if not self._heard[-1].rstrip().endswith("?") and self.settings.turn_wait_s > 0:
            await asyncio.sleep(self.settings.turn_wait_s)  # cancelled if the far end goes on talking
        if not self._far_done:  # more speech or a transcript is on its way; its arrival reschedules
            return
        self._barged_this_turn = False
        heard = " ".join(self._heard)
        self._heard = []
        if self._timing is None:
            self._timing = TurnTiming(turn=self._replies + 1)
        self._timing.transcribed = self._timing.transcribed or self.clock.now()
        try:
            await self.decide_and_say(heard)
        except asyncio.CancelledError:
            self._heard.insert(0, heard)
            raise

    async def decide_and_say(self, heard: str) -> None:
        raise NotImplementedError

    async def say(self, text: str, *, revealed: list[str], interjection: bool = False) -> Turn:
        self._replies += 0 if interjection else 1
        if self._timing is not None and not interjection:
            self._timing.turn = self._replies
            self._timing.decided = self.clock.now()
            self.timeline.turns.append(self._timing)
            self._reply_timing, self._timing = self._timing, None
        else:
            self._reply_timing = None
        turn = self.record(self.own, text, revealed=revealed)
        if self._reply_timing is not None:
            turn.channel.update({"reply_to_s": round(self._reply_timing.heard_end or 0.0, 3)})
        self._speaking_turn = turn
        await self.push_frame(SpeakFrame(text=text, turn=self._replies))
        return turn

    def record(self, speaker: Side, text: str, *, revealed: list[str] | None = None) -> Turn:
        """Add a message; a far-side segment that follows another (no reply between) extends it."""
        now = time.time()
        last = self.turns[-1] if self.turns else None
        if speaker == self.far and last is not None and last.speaker == speaker:
            last.text = f"{last.text} {text}"
            last.ended_at = now
            turn = last
        else:
            turn = Turn(index=len(self.turns), speaker=speaker, text=text, started_at=now, ended_at=now,
                        revealed=revealed or [], agent_turn=None)
            self.turns.append(turn)
        text = turn.text
        self.sink(TurnRecorded(scenario_id=self.scenario_id, k=self.k, index=turn.index, speaker=speaker,
                               text=text, revealed=turn.revealed))
        return turn

    def _emit_latency(self, t: TurnTiming) -> None:
        if t.heard_end is None or t.audible is None:
            return
        stages = {name: round(b - a, 4) for name, a, b in (
            ("vad_stop", t.heard_end, t.vad_stop), ("stt", t.vad_stop, t.transcribed),
            ("decide", t.transcribed, t.decided), ("first_tts", t.decided, t.first_audio),
            ("playout", t.first_audio, t.audible)) if a is not None and b is not None}
        self.sink(LatencyMeasured(scenario_id=self.scenario_id, k=self.k, side=self.own, turn=t.turn,
                                  total_s=t.audible - t.heard_end, stages=stages))
        if self._speaking_turn is not None:
            self._speaking_turn.channel.update({"latency_s": round(t.audible - t.heard_end, 4)}
                                               | {f"{name}_s": v for name, v in stages.items()})

    async def wait_until_quiet(self) -> None:
        """Until everything this side queued has been played out."""
        me = asyncio.current_task()
        for _ in range(int(30 / FRAME_S)):
            replying = self._reply_task is not None and not self._reply_task.done() and self._reply_task is not me
            if self.pacer is None or (not self.pacer.speaking and self.pacer.pending_s == 0 and not replying):
                return
            await asyncio.sleep(FRAME_S)

    async def end_call(self, reason: str) -> None:
        if self.ended.is_set():
            return
        self.end_reason = reason
        self.ended.set()
        await self.push_frame(OutputTransportMessageUrgentFrame(message={"type": "call_ended", "reason": reason}))

    async def notify(self, message: dict[str, Any]) -> None:
        """A JSON message to the far end (the web page shows transcripts and status from these)."""
        await self.push_frame(OutputTransportMessageUrgentFrame(message=message))


class LivePatient(Protocol):
    """What the patient brain needs from the information-tree simulator (sim.patient.PatientSimulator)."""

    @property
    def opening_line(self) -> str: ...

    gathered_info: list[str]

    def reply(self, message: str) -> tuple[str, list[str]]: ...


NUDGE_LINE = "Sorry, I have to go soon. What do you think I should do?"
GOODBYE_LINE = "Okay, I need to go now. Thank you."


class PatientBrain(TurnTaker):
    """The simulated patient: opens the call, answers from the information tree, ends on the assessment."""

    def __init__(self, *, patient: LivePatient, turn_limit: int,
                 is_assessment: Callable[[str], bool], **kwargs: Any) -> None:
        super().__init__(own="patient", **kwargs)
        self.patient = patient
        self.turn_limit = turn_limit
        self.is_assessment = is_assessment
        self.agent_turns = 0
        self.final_assessment: str | None = None
        self._previous = ""
        self._assessment_task: asyncio.Task[None] | None = None

    async def open(self) -> None:
        await asyncio.sleep(self.settings.opening_delay_s)
        self._timing = None
        await self.say(self.patient.opening_line, revealed=[])
        await self.notify({"type": "transcript", "speaker": "patient", "text": self.patient.opening_line})

    def barge_in_line(self) -> str:
        return "Sorry to cut in, but it's really bad. What should I do?"

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        if isinstance(frame, TranscriptionFrame) and self.final_assessment is not None:
            await FrameProcessor.process_frame(self, frame, direction)
            self.final_assessment += " " + frame.text  # the rest of a spoken assessment
            self._note_far_segment(frame.text)
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
        answer, revealed = self.patient.reply(heard)
        remaining = self.turn_limit - self.agent_turns
        if remaining <= 0:
            await self.say(GOODBYE_LINE, revealed=revealed)
            await self.wait_until_quiet()
            await self.end_call("max_turns")
            return
        if remaining == 1:  # the spoken form of the harness nudge: one more agent turn is left
            answer = f"{answer} {NUDGE_LINE}"
        await self.say(answer, revealed=revealed)
        await self.notify({"type": "transcript", "speaker": "patient", "text": answer})

    def _restart_assessment_timer(self) -> None:
        if self._assessment_task is not None:
            self._assessment_task.cancel()
        self._assessment_task = asyncio.create_task(self._finish_after_grace())

    async def _finish_after_grace(self) -> None:
        await asyncio.sleep(self.settings.assessment_grace_s)
        while not self._far_done:  # the rest of the assessment is still being spoken or transcribed
            await asyncio.sleep(0.05)
        await self.end_call("assessment")


Respond = Callable[[list[tuple[str, str]], int], Awaitable[str]]


class AgentBrain(TurnTaker):
    """The built-in voice agent: hears the patient, asks ``respond(history, agent_turn)``, speaks."""

    def __init__(self, *, respond: Respond, **kwargs: Any) -> None:
        super().__init__(own="agent", **kwargs)
        self.respond = respond
        self.history: list[tuple[str, str]] = []
        self.errors: list[str] = []

    async def decide_and_say(self, heard: str) -> None:
        self.history.append(("patient", heard))
        try:
            text = await self.respond(list(self.history), self._replies + 1)
        except Exception as exc:  # an agent failure ends this call, it must not kill the server
            self.errors.append(f"{type(exc).__name__}: {exc}")
            await self.end_call("error")
            return
        self.history.append(("agent", text))
        await self.say(speakable(text), revealed=[])


# --------------------------------------------------------------------------------------------- pipelines

@dataclass
class CallOutcome:
    """What one side of a live call produced (``sim.live`` turns it into a ConversationResult)."""

    turns: list[Turn]
    termination: str
    interaction: dict[str, Any]
    recording: Path | None
    started_at: float
    ended_at: float
    errors: list[str] = field(default_factory=list)
    final_assessment: str | None = None
    gathered_info: list[str] = field(default_factory=list)
    agent_turns: int = 0
    refused: int = 0  # served calls: connections refused for their origin
    silent: int = 0   # served calls: connections closed for sending no caller audio in the join window


def _transport_params(serializer: ProtobufFrameSerializer) -> dict[str, Any]:
    return dict(audio_in_enabled=True, audio_out_enabled=True, audio_in_sample_rate=LIVE_RATE,
                audio_out_sample_rate=LIVE_RATE, audio_out_10ms_chunks=2, serializer=serializer, add_wav_header=False)


def _check_loopback(host: str, option: str) -> None:
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise LiveError(f"{option} {host}: live servers bind to the loopback interface only. Use 127.0.0.1 "
                        "(put a reverse proxy in front of it if another machine must reach it).")


def _build_side(brain: TurnTaker, transport: Any, *, tts: PiperTTS, style: VoiceStyle | None,
                recorder: CallRecorder, vocabulary: Sequence[str] | None) -> tuple[Pipeline, RealtimePacer]:
    s = brain.settings
    vad = VADProcessor(vad_analyzer=SileroVADAnalyzer(sample_rate=LIVE_RATE, params=VADParams(
        confidence=s.vad_confidence, start_secs=s.vad_start_s, stop_secs=s.vad_stop_s)))
    stt = WhisperSegmentSTT(beam_size=s.beam_size, vocabulary=vocabulary, on_transcribed=brain.on_transcribed,
                            speculate=s.speculative_stt)
    speaker = PiperSpeaker(tts=tts, style=style, on_first_audio=brain.on_first_audio)
    pacer = RealtimePacer(clock=brain.clock, recorder=recorder, on_speech=brain.on_own_speech)
    brain.attach(pacer, stt)
    pipeline = Pipeline([transport.input(), InputTap(recorder=recorder, on_voice=brain.on_far_voice), vad, stt,
                         brain, speaker, pacer, transport.output()])
    return pipeline, pacer


def _worker(pipeline: Pipeline) -> PipelineWorker:
    return PipelineWorker(pipeline, params=PipelineParams(audio_in_sample_rate=LIVE_RATE,
                                                          audio_out_sample_rate=LIVE_RATE),
                          idle_timeout_secs=None, enable_rtvi=False, enable_turn_tracking=False,
                          check_dangling_tasks=False)


_WARMED: set[tuple[str, int]] = set()


def warm_up(tts: PiperTTS, *, beam_size: int = 5) -> None:
    """Load Whisper and Piper and run each once per process, so the first turn of a call is not the slow one."""
    key = (str(tts.model_path), beam_size)
    if key in _WARMED:
        return
    speech = tts.synthesize("Hello, this is a warm up.", settings=DETERMINISTIC)
    _stt.transcribe(speech.samples, sample_rate=speech.sample_rate, beam_size=beam_size)
    _WARMED.add(key)


# --------------------------------------------------------------------------------------------- who may call

DEFAULT_JOIN_WINDOW_S = 10.0
MAX_AUDIO_FRAME_BYTES = LIVE_RATE * 2  # one second of 16 kHz int16 in one message is the most a caller sends
MAX_MESSAGE_BYTES = 1 << 20
LOOPBACK_ORIGINS = ("http(s)://127.0.0.1", "http(s)://localhost", "http(s)://[::1]")
_LOOPBACK_ORIGIN = re.compile(r"https?://(?:127\.0\.0\.1|localhost|\[::1\])(?::[0-9]{1,5})?")
_ORIGIN = re.compile(r"(https?)://([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\])(?::([0-9]{1,5}))?")


def parse_allowed_origin(value: str) -> str:
    """An ``--allow-origin`` value the way a browser sends it in ``Origin``: ``scheme://host[:port]``, lower
    case, without the scheme's default port. ValueError (saying what is wrong) for anything else."""
    text = value.strip().lower()
    m = _ORIGIN.fullmatch(text)
    port = int(m.group(3)) if m and m.group(3) else None
    if m is None or (port is not None and not 1 <= port <= 65535):
        raise ValueError(f"{_shown(value)} is not a web origin; give scheme://host[:port] exactly as the "
                         "page's address starts (http or https, no path, no trailing slash), e.g. "
                         "https://example.org or http://192.168.1.20:3000")
    scheme, host = m.group(1), m.group(2)
    if port is not None and (scheme, port) in (("http", 80), ("https", 443)):
        port = None  # browsers leave the default port out of an origin
    return f"{scheme}://{host}" + (f":{port}" if port is not None else "")


@dataclass(frozen=True)
class OriginPolicy:
    """Which websocket clients a live server accepts, by their ``Origin`` header (see the module docstring).

    ``allow``: extra origins (normalised by ``parse_allowed_origin``), matched exactly. ``pages``: when
    set (the call page is served), only these page origins and ``allow`` are accepted, and a client
    without an Origin is refused; when None, any loopback origin and clients without one are accepted.
    """

    allow: tuple[str, ...] = ()
    pages: tuple[str, ...] | None = None

    def allows(self, origin: str | None) -> bool:
        if origin is None:
            return self.pages is None
        if origin in self.allow:
            return True
        if self.pages is not None:
            return origin in self.pages
        return _LOOPBACK_ORIGIN.fullmatch(origin) is not None

    def accepted(self) -> str:
        if self.pages is not None:
            return f"only the call page ({', '.join(self.pages)}) may call"
        return f"only pages on this machine ({', '.join(LOOPBACK_ORIGINS)}) and programs that send no Origin may call"


def _shown(text: str) -> str:
    """Attacker text fit for one log line: control characters made visible, whitespace folded, anything
    beyond ASCII escaped, at most 200 characters."""
    short = " ".join(neutralise(text[:200]).split()) + ("..." if len(text) > 200 else "")
    return "'" + short.encode("ascii", "backslashreplace").decode("ascii") + "'"


def _read_wire(data: str | bytes) -> Frame | str:
    """One websocket message as a frame, or why it was dropped.

    Only two kinds pass: audio (16 kHz mono int16, 1 to ``MAX_AUDIO_FRAME_BYTES`` bytes, even) as an
    ``InputAudioRawFrame``, and a JSON object message as an ``InputTransportMessageFrame``. Websocket
    text messages, malformed protobuf, text and transcription frames (nothing but our own STT may say what
    was heard) and audio in any other format are dropped; nothing here raises.
    """
    if not isinstance(data, (bytes, bytearray)):
        return "a text message"
    try:
        proto = frame_protos.Frame.FromString(bytes(data))  # type: ignore[attr-defined]
        which = proto.WhichOneof("frame")
    except Exception:  # noqa: BLE001 - any malformed payload is just dropped
        return "not a protobuf frame"
    if which == "audio":
        a = proto.audio
        if a.sample_rate != LIVE_RATE or a.num_channels != 1:
            return f"audio at {a.sample_rate} Hz with {a.num_channels} channel(s)"
        if not a.audio or len(a.audio) % 2 or len(a.audio) > MAX_AUDIO_FRAME_BYTES:
            return f"an audio frame of {len(a.audio)} bytes"
        return InputAudioRawFrame(audio=bytes(a.audio), sample_rate=LIVE_RATE, num_channels=1)
    if which == "message":
        try:
            message = json.loads(proto.message.data)
        except ValueError:
            return "a message that is not JSON"
        return InputTransportMessageFrame(message=message) if isinstance(message, dict) else "a non-object message"
    return f"a {which or 'empty'} frame"


class _WireSerializer(ProtobufFrameSerializer):
    """pipecat's protobuf wire format, read through ``_read_wire``; with a door, its admission too."""

    def __init__(self, door: _Door | None = None) -> None:
        super().__init__()
        self._door = door

    async def deserialize(self, data: str | bytes) -> Frame | None:
        frame = _read_wire(data)
        if self._door is not None:
            return self._door.screen(frame)
        return frame if isinstance(frame, Frame) else None


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class _Door:
    """The door of one live server: the Origin check at the handshake and the admission of a caller.

    ``on_caller()`` runs once, when the first connection sends valid audio (synchronously, before that
    frame goes on); ``on_hangup()`` when that caller's connection closes. ``over()`` true: the call has
    ended and new connections get 503.
    """

    def __init__(self, *, policy: OriginPolicy, join_window_s: float, log: Callable[[str], None],
                 on_caller: Callable[[], None], on_hangup: Callable[[], Awaitable[None]],
                 over: Callable[[], bool]) -> None:
        self.policy = policy
        self.join_window_s = join_window_s
        self._log = log
        self._on_caller = on_caller
        self._on_hangup = on_hangup
        self._over = over
        self.caller: Any = None       # the admitted connection
        self.refused = 0              # handshakes refused for their origin
        self.silent = 0               # connections closed for sending no caller audio
        self._current: Any = None     # the connection being served (admitted or not)
        self._ignored = 0
        self._noted_audio = False
        self._window: asyncio.Task[None] | None = None

    def check_handshake(self, connection: Any, request: Any) -> Any:
        """websockets' ``process_request``: None accepts, a response refuses (it must never raise)."""
        try:
            if self._over():
                return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, "The call is over.\n")
            origins = list(request.headers.get_all("Origin"))
            if len(origins) <= 1 and self.policy.allows(origins[0] if origins else None):
                return None
            self.refused += 1
            shown = _shown(", ".join(origins)) if origins else "none (no Origin header)"
            try:
                suggested = parse_allowed_origin(origins[0]) if len(origins) == 1 else ""
            except ValueError:
                suggested = ""
            flag = f"--allow-origin {suggested}" if 0 < len(suggested) <= 200 else "--allow-origin ORIGIN"
            self._log(f"refused a websocket connection from origin {shown} (HTTP 403): {self.policy.accepted()}; "
                      f"to let another page call, add {flag}")
            return connection.respond(HTTPStatus.FORBIDDEN, "Forbidden: this origin may not open the call.\n")
        except Exception:  # noqa: BLE001 - a hostile request is refused, never a traceback
            return connection.respond(HTTPStatus.FORBIDDEN, "Forbidden.\n")

    def opened(self, websocket: Any) -> None:
        """A connection was accepted and is now the one served (pipecat serves one at a time)."""
        self._current, self._ignored, self._noted_audio = websocket, 0, False
        if self.caller is None:
            self._window = asyncio.create_task(self._close_if_silent(websocket))

    def screen(self, frame: Frame | str) -> Frame | None:
        """What a message of the served connection becomes: the frame, or None (dropped)."""
        if isinstance(frame, InputAudioRawFrame):
            if self.caller is None and self._current is not None:
                self.caller = self._current
                if self._window is not None:
                    self._window.cancel()
                self._on_caller()
            return frame if self.caller is self._current else None
        if isinstance(frame, Frame) and self.caller is not None and self.caller is self._current:
            return frame
        self._ignored += 1
        if isinstance(frame, str) and frame.startswith("audio at") and not self._noted_audio:
            self._noted_audio = True
            self._log(f"ignoring {frame} from a websocket client: the live wire format is 16 kHz mono int16 PCM")
        return None

    async def _close_if_silent(self, websocket: Any) -> None:
        await asyncio.sleep(self.join_window_s)
        if self.caller is None and self._current is websocket:
            self.silent += 1
            self._log(f"closed a websocket connection that sent no caller audio within the {self.join_window_s:g} s "
                      f"join window (--join-window; {self._ignored} message(s) ignored): it was not a call")
            await websocket.close(1008, "no caller audio")

    async def gone(self, websocket: Any) -> None:
        """The served connection closed: the caller hung up, or a connection that never was one left."""
        if self._current is not websocket:
            return
        self._current = None
        if self._window is not None:
            self._window.cancel()
            self._window = None
        if self.caller is websocket:
            await self._on_hangup()

    def no_caller(self, waited_s: float | None) -> str:
        """Why nobody became the caller, in one line, for the record."""
        within = f" within {waited_s:.0f} s (--wait)" if waited_s is not None else ""
        if not self.refused and not self.silent:
            return f"no caller joined: nobody connected{within}"
        parts = []
        if self.refused:
            parts.append(f"{self.refused} connection(s) refused for their origin (--allow-origin)")
        if self.silent:
            parts.append(f"{self.silent} closed after sending no caller audio within the {self.join_window_s:g} s "
                         "join window (--join-window)")
        return f"no caller joined{within}: " + "; ".join(parts)


class _GuardedServerInput(SingleClientWebsocketServerInputTransport):
    """pipecat's single-client server input with ``_Door`` at the handshake and around each connection."""

    door: _Door

    async def _server_task_handler(self) -> None:
        async with websocket_serve(self._client_handler, self._host, self._port,
                                   process_request=self.door.check_handshake, max_size=MAX_MESSAGE_BYTES):
            await self._callbacks.on_websocket_ready()
            await self._stop_server_event.wait()

    async def _client_handler(self, websocket: Any) -> None:
        current = self._websocket
        if current is not None and current.state is State.OPEN:
            await super()._client_handler(websocket)  # pipecat turns a second client away (1013)
            return
        self.door.opened(websocket)
        await super()._client_handler(websocket)
        await self.door.gone(websocket)


class _GuardedServerTransport(SingleClientWebsocketServerTransport):
    def __init__(self, params: SingleClientWebsocketServerParams, *, host: str, port: int, door: _Door) -> None:
        super().__init__(params, host=host, port=port)
        self._door = door

    def input(self) -> SingleClientWebsocketServerInputTransport:
        if not self._input:
            guarded = _GuardedServerInput(self, self._host, self._port, self._params, self._callbacks,
                                          name=self._input_name)
            guarded.door = self._door
            self._input = guarded
        return self._input


def _serve_one_caller(*, host: str, port: int, door: _Door,
                      on_ready: Callable[[str], Awaitable[None] | None] | None) -> Any:
    """pipecat's single-client websocket server on loopback, behind ``door`` (origin check, admission)."""
    _check_loopback(host, "--host")
    transport = _GuardedServerTransport(
        SingleClientWebsocketServerParams(allowed_origins=[],  # the door checks origins, not pipecat
                                          **_transport_params(_WireSerializer(door))),
        host=host, port=port, door=door)

    @transport.event_handler("on_websocket_ready")
    async def _on_ready(_t: Any) -> None:
        if on_ready is not None:
            maybe = on_ready(f"ws://{host}:{port}")
            if asyncio.iscoroutine(maybe):
                await maybe

    return transport


async def _run_until_ended(worker: PipelineWorker, brain: TurnTaker, *, time_limit_s: float,
                           connected: asyncio.Event, connect_timeout_s: float | None,
                           recorder: CallRecorder) -> None:
    runner = WorkerRunner(handle_sigint=False, check_dangling_tasks=False)
    await runner.add_workers(worker)
    run = asyncio.create_task(runner.run())

    async def watchdog() -> None:
        if connect_timeout_s is not None:
            try:
                await asyncio.wait_for(connected.wait(), connect_timeout_s)
            except TimeoutError:
                await brain.end_call("no_connection")
                return
        else:
            await connected.wait()
        try:
            await asyncio.wait_for(brain.ended.wait(), time_limit_s)
        except TimeoutError:
            await brain.end_call("time_limit")

    dog = asyncio.create_task(watchdog())
    try:
        done, _ = await asyncio.wait({run, dog}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        # Ctrl-C (asyncio.run cancels the main task): stop the pipeline the way it expects, else its worker
        # waits forever for a pipeline whose tasks were cancelled under it and the process never exits
        recorder.stop()
        dog.cancel()
        try:
            await asyncio.wait_for(worker.cancel(reason="interrupted"), 10)
            await asyncio.wait_for(run, 10)
        except (Exception, asyncio.CancelledError):  # noqa: BLE001 - already stopping; leave the rest to asyncio
            run.cancel()
        raise
    if dog in done:
        await brain.wait_until_quiet()
        await asyncio.sleep(0.3)  # let the call_ended message and the last frames leave
        recorder.stop()  # the call ends here on its own clock, however long the teardown below takes
        await worker.cancel(reason=brain.end_reason)
    else:
        recorder.stop()
        dog.cancel()
        await brain.end_call(brain.end_reason or "hangup")
    try:
        await asyncio.wait_for(run, 15)
    except TimeoutError:
        run.cancel()
    exc = run.exception() if run.done() and not run.cancelled() else None
    if exc is not None:
        raise LiveError(f"the live pipeline failed: {type(exc).__name__}: {exc}") from exc


class _CallStart:
    """Starts a call once: the clock and the recording start now, then ``then()`` runs (as a task, kept)."""

    def __init__(self, clock: CallClock, recorder: CallRecorder, connected: asyncio.Event,
                 then: Callable[[], Coroutine[Any, Any, None]] | None = None) -> None:
        self._clock, self._recorder, self._connected, self._then = clock, recorder, connected, then
        self._task: asyncio.Task[None] | None = None

    def __call__(self) -> None:
        if self._connected.is_set():
            return
        self._connected.set()
        self._clock.t0, self._clock.wall0 = time.monotonic(), time.time()
        self._recorder.start()
        if self._then is not None:
            self._task = asyncio.create_task(self._then())


async def run_patient_call(
    *,
    patient: LivePatient,
    scenario_id: str,
    k: int = 0,
    turn_limit: int,
    is_assessment: Callable[[str], bool],
    style: VoiceStyle | None,
    connect: str | None = None,
    host: str = "127.0.0.1",
    port: int = 8765,
    settings: LiveSettings = LiveSettings(),
    sink: EventSink = lambda _e: None,
    recording: Path | None = None,
    vocabulary: Sequence[str] | None = None,
    tts: PiperTTS | None = None,
    on_ready: Callable[[str], Awaitable[None] | None] | None = None,
    connect_timeout_s: float | None = 30.0,
    origins: OriginPolicy = OriginPolicy(),
    join_window_s: float = DEFAULT_JOIN_WINDOW_S,
    log: Callable[[str], None] = _stderr,
) -> CallOutcome:
    """One live call with the simulated patient, to its end (assessment, hang-up, turn or time limit).

    With ``connect`` the patient dials that websocket URL (an external voice agent, the agent under
    test) and the call starts when it connects; otherwise it serves one caller on ``ws://host:port``
    (a program, or a person through the web page) and waits up to ``connect_timeout_s`` (None: forever)
    for one: ``origins`` says which clients may connect, and a connection becomes the caller with its
    first valid audio frame, within ``join_window_s`` or it is closed (see the module docstring;
    refusals go to ``log``). ``on_ready(url)`` is called once the server listens.
    """
    from pipecat.transports.websocket.client import WebsocketClientParams, WebsocketClientTransport

    tts = tts or PiperTTS()
    await asyncio.to_thread(warm_up, tts, beam_size=settings.beam_size)
    clock = CallClock()
    recorder = CallRecorder(clock, started=False)
    brain = PatientBrain(patient=patient, turn_limit=turn_limit, is_assessment=is_assessment, clock=clock,
                         settings=settings, sink=sink, scenario_id=scenario_id, k=k)
    connected = asyncio.Event()
    started = time.time()
    begin = _CallStart(clock, recorder, connected, then=brain.open)
    door: _Door | None = None

    if connect is not None:
        transport: Any = WebsocketClientTransport(
            connect, WebsocketClientParams(**_transport_params(_WireSerializer())))

        @transport.event_handler("on_connected")
        async def _on_connected(_t: Any, _ws: Any) -> None:
            begin()

        @transport.event_handler("on_disconnected")
        async def _on_disconnected(_t: Any, _ws: Any) -> None:
            await brain.end_call("hangup")
    else:
        door = _Door(policy=origins, join_window_s=join_window_s, log=log, on_caller=begin,
                     on_hangup=lambda: brain.end_call("hangup"), over=brain.ended.is_set)
        transport = _serve_one_caller(host=host, port=port, door=door, on_ready=on_ready)

    pipeline, _ = _build_side(brain, transport, tts=tts, style=style, recorder=recorder, vocabulary=vocabulary)
    worker = _worker(pipeline)
    errors: list[str] = []
    try:
        await _run_until_ended(worker, brain, time_limit_s=settings.time_limit_s, connected=connected,
                               connect_timeout_s=connect_timeout_s, recorder=recorder)
    except LiveError as exc:
        errors.append(str(exc))
    path = await asyncio.to_thread(recorder.write, recording) if recording is not None and connected.is_set() \
        else None
    termination = brain.end_reason or "hangup"
    if termination == "no_connection":
        errors.append(door.no_caller(connect_timeout_s) if door is not None else f"could not connect to {connect}")
    if brain.final_assessment is not None:
        termination = "assessment"
    # no call, no interaction: an empty dict, so that summaries do not count a call that never happened
    interaction = interaction_metrics(brain.timeline) | {"call_s": round(recorder.length_s, 3)} \
        if connected.is_set() else {}
    return CallOutcome(turns=brain.turns, termination=termination, interaction=interaction,
                       recording=path, started_at=started, ended_at=time.time(), errors=errors,
                       final_assessment=brain.final_assessment, gathered_info=list(patient.gathered_info),
                       agent_turns=brain.agent_turns, refused=door.refused if door else 0,
                       silent=door.silent if door else 0)


async def run_agent_bot(
    *,
    respond: Respond,
    host: str = "127.0.0.1",
    port: int = 8766,
    settings: LiveSettings = LiveSettings(vad_stop_s=0.6, turn_wait_s=0.0),
    style: VoiceStyle | None = None,
    sink: EventSink = lambda _e: None,
    tts: PiperTTS | None = None,
    on_ready: Callable[[str], Awaitable[None] | None] | None = None,
    connect_timeout_s: float | None = None,
    recording: Path | None = None,
    origins: OriginPolicy = OriginPolicy(),
    join_window_s: float = DEFAULT_JOIN_WINDOW_S,
    log: Callable[[str], None] = _stderr,
) -> CallOutcome:
    """Serve one call as the built-in voice agent on ``ws://host:port`` and return when it ends.

    The agent listens with a longer end-of-turn silence (0.6 s) than the patient, so a patient's pause
    between two sentences does not cut its answer in half. Who may call, and when a connection becomes
    the call: as for the served patient (``origins``, ``join_window_s``; see the module docstring).
    """
    _check_loopback(host, "--host")
    tts = tts or PiperTTS()
    await asyncio.to_thread(warm_up, tts, beam_size=settings.beam_size)
    clock = CallClock()
    recorder = CallRecorder(clock, started=False)
    brain = AgentBrain(respond=respond, clock=clock, settings=settings, sink=sink, scenario_id="", k=0)
    connected = asyncio.Event()
    started = time.time()
    door = _Door(policy=origins, join_window_s=join_window_s, log=log,
                 on_caller=_CallStart(clock, recorder, connected),
                 on_hangup=lambda: brain.end_call("hangup"), over=brain.ended.is_set)
    transport = _serve_one_caller(host=host, port=port, door=door, on_ready=on_ready)

    pipeline, _ = _build_side(brain, transport, tts=tts, style=style, recorder=recorder, vocabulary=None)
    worker = _worker(pipeline)
    errors = list(brain.errors)
    try:
        await _run_until_ended(worker, brain, time_limit_s=settings.time_limit_s, connected=connected,
                               connect_timeout_s=connect_timeout_s, recorder=recorder)
    except LiveError as exc:
        errors.append(str(exc))
    if brain.end_reason == "no_connection":
        errors.append(door.no_caller(connect_timeout_s))
    path = await asyncio.to_thread(recorder.write, recording) if recording is not None and connected.is_set() \
        else None
    # no call, no interaction: an empty dict, so that summaries do not count a call that never happened
    interaction = interaction_metrics(brain.timeline) | {"call_s": round(recorder.length_s, 3)} \
        if connected.is_set() else {}
    return CallOutcome(turns=brain.turns, termination=brain.end_reason or "hangup",
                       interaction=interaction, recording=path, started_at=started,
                       ended_at=time.time(), errors=errors + brain.errors, agent_turns=brain._replies,
                       refused=door.refused, silent=door.silent)
