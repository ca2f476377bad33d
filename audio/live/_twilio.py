"""Twilio Media Streams: the patient plays Twilio's side against a phone bot's websocket; the built-in agent, the bot's.

The wire, as Twilio speaks it and pipecat's ``TwilioFrameSerializer`` (the bot side) reads it: JSON text messages,
audio base64 mu-law at 8 kHz mono. Twilio sends ``connected``, ``start``, ``media`` (``track`` inbound),
``mark`` and ``stop``; the bot sends ``media``, ``mark`` and ``clear``.

The caller (``TwilioCaller``, the ``twilio`` ``VoiceAgentTransport``: ``--agent-protocol twilio``), so that a bot
deployed behind a phone number is tested with no phone number:

* on connect: ``connected``, then ``start`` with a new stream, call and account sid (``MZ``, ``CA``, ``AC`` and 32
  hex digits), ``tracks: ["inbound"]``, ``mediaFormat`` audio/x-mulaw 8000 Hz mono and no ``customParameters``;
* the patient's 16 kHz PCM: one ``media`` message per 20 ms (160 mu-law bytes), with ``sequenceNumber`` (every
  message after ``connected``, from 1), ``media.chunk`` (from 1) and ``media.timestamp`` (milliseconds of the
  stream), all strings, as Twilio sends them;
* the bot's ``media`` (any length) is buffered and played out in real time, as Twilio plays it to the phone: one
  20 ms frame of 16 kHz PCM into the patient's pipeline every 20 ms, silence when there is nothing to play (a line
  is never mute); a talkspurt starts ``JITTER_S`` after its first audio arrived, the jitter buffer a phone network
  has (pipecat's bot sends in bursts of about 95 ms, its resampler's blocks);
* a ``mark`` from the bot is echoed back (same name, Twilio's fields) once all audio it sent before the mark has
  been played out; at once when nothing is waiting;
* ``clear`` drops the bot's audio not yet played and echoes at once every mark still waiting in it, as Twilio
  does (what was played before it has reached the patient's pipeline and stays heard);
* at the end of the call: ``stop`` (with the account and call sid), then the socket closes;
* anything else from the bot (binary or non-JSON messages, other events, messages for another ``streamSid``) is
  ignored, the first of each kind noted on the call's log.

The bot (``TwilioBotSerializer``, ``encsim serve-agent --protocol twilio``): pipecat's own ``TwilioFrameSerializer``,
made when ``start`` gives the stream sid (as pipecat's telephony examples make it after reading ``start``), with
``auto_hang_up=False``: ending the call never calls Twilio's REST API. The door's rules hold as for pipecat's
frames: a connection becomes the call with its first valid ``media`` (after its ``start``) within the join window;
binary, non-JSON and oversized messages are dropped.

mu-law is pipecat's (``pipecat.audio.utils``: ``pcm_to_ulaw``, ``ulaw_to_pcm``); the caller's 16 <-> 8 kHz
resampling is ``StreamResampler``, a streaming windowed-sinc filter that returns exactly 160 samples per 20 ms
(pipecat's soxr stream resampler returns its output in ~95 ms blocks, too late for 20 ms messages).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from pipecat.audio.resamplers.base_audio_resampler import BaseAudioResampler
from pipecat.audio.utils import pcm_to_ulaw, ulaw_to_pcm
from pipecat.frames.frames import AudioRawFrame, Frame, InputAudioRawFrame
from pipecat.processors.frame_processor import FrameProcessorSetup
from pipecat.serializers.base_serializer import FrameSerializer
from pipecat.serializers.twilio import TwilioFrameSerializer
from websockets.exceptions import ConnectionClosed

from audio._pcm import RATE_16K, int16_samples, round_to_int16
from audio.live._door import _Door
from audio.live._speaking import FRAME_BYTES, FRAME_S, every_frame
from audio.live._transport import AgentProtocol, PushAudio, VoiceAgentTransport

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

TWILIO_RATE = 8_000
CHUNK_BYTES = int(TWILIO_RATE * FRAME_S)  # one 20 ms media chunk: 160 mu-law bytes
MAX_MEDIA_BYTES = TWILIO_RATE  # one second of mu-law in one message is the most the built-in agent takes
JITTER_S = 0.06  # a talkspurt of the bot's starts playing this long after its first audio arrived
STOP_TIMEOUT_S = 1.0  # how long ``stop`` gets to leave


def _sid(prefix: str) -> str:
    return prefix + uuid.uuid4().hex


class StreamResampler(BaseAudioResampler):
    """Streaming int16 resampling between two rates one of which is a multiple of the other (16 <-> 8 kHz).

    A windowed-sinc low-pass (63 taps at the higher rate, cut at 45 % of the lower rate) with its state kept from
    chunk to chunk, so chunk edges leave no clicks and every 20 ms in gives exactly 20 ms out, from the first call
    (the filter delays the stream by 31 samples at the higher rate, 2 ms). One instance per direction of a stream.
    """

    TAPS = 63

    def __init__(self) -> None:
        self._rates: tuple[int, int] | None = None
        self._up = self._down = 1
        self._taps = np.zeros(0)
        self._state = np.zeros(0)
        self._phase = 0  # samples of the filtered stream so far, modulo ``_down``

    def _start(self, in_rate: int, out_rate: int) -> None:
        from scipy.signal import firwin

        if max(in_rate, out_rate) % min(in_rate, out_rate):
            raise ValueError(f"StreamResampler needs one rate a multiple of the other, not {in_rate} -> {out_rate}")
        self._rates = (in_rate, out_rate)
        self._up, self._down = max(1, out_rate // in_rate), max(1, in_rate // out_rate)
        high = max(in_rate, out_rate)
        self._taps = firwin(self.TAPS, 0.45 * min(in_rate, out_rate), fs=high) * self._up
        self._state = np.zeros(self.TAPS - 1)

    async def resample(self, audio: bytes, in_rate: int, out_rate: int) -> bytes:
        """``audio`` (int16 PCM at ``in_rate``) at ``out_rate``, continuing the stream of the previous calls."""
        if in_rate == out_rate or not audio:
            return audio
        if self._rates is None:
            self._start(in_rate, out_rate)
        elif self._rates != (in_rate, out_rate):
            raise ValueError(f"this StreamResampler resamples {self._rates[0]} -> {self._rates[1]} Hz")
        from scipy.signal import lfilter

        x = int16_samples(audio).astype(np.float64)
        if self._up > 1:
            stuffed = np.zeros(len(x) * self._up)
            stuffed[::self._up] = x
            x = stuffed
        y, self._state = lfilter(self._taps, 1.0, x, zi=self._state)
        if self._down > 1:
            first = -self._phase % self._down
            self._phase = (self._phase + len(y)) % self._down
            y = y[first::self._down]
        return round_to_int16(y).tobytes()


def _json_object(data: str | bytes) -> dict[str, Any] | None:
    """A websocket message as the JSON object Twilio and the bots send, or None."""
    if not isinstance(data, str):
        return None
    try:
        message = json.loads(data)
    except ValueError:
        return None
    return message if isinstance(message, dict) and isinstance(message.get("event"), str) else None


def _media_payload(message: dict[str, Any]) -> bytes | None:
    """The mu-law bytes of a ``media`` message, or None when it carries none or not base64."""
    media = message.get("media")
    payload = media.get("payload") if isinstance(media, dict) else None
    if not isinstance(payload, str) or not payload:
        return None
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return None


class TwilioPlayout:
    """Twilio's playback buffer for what the bot sends: audio, and the marks among it (no clock, no socket).

    ``take(now)`` is one 20 ms tick: the frame to play (``FRAME_BYTES`` of 16 kHz PCM, silence when there is none)
    and the names of the marks the playout has now passed.
    """

    def __init__(self, *, jitter_s: float = JITTER_S) -> None:
        self.jitter_s = jitter_s
        self._audio = bytearray()
        self._marks: list[tuple[int, str]] = []  # (bytes still to play before the mark, its name), in order
        self._first_at: float | None = None  # when the first audio of a talkspurt not yet playing arrived
        self._playing = False

    @property
    def pending_s(self) -> float:
        """Seconds of the bot's audio waiting to be played."""
        return len(self._audio) / 2 / RATE_16K

    def add(self, pcm: bytes, now: float) -> None:
        """The bot's audio (16 kHz PCM), to play after what is waiting."""
        if pcm and not self._audio and not self._playing:
            self._first_at = now
        self._audio += pcm

    def mark(self, name: str) -> None:
        """A mark after the audio waiting: passed once that has been played."""
        self._marks.append((len(self._audio), name))

    def clear(self) -> list[str]:
        """Drop the audio not yet played; returns the marks waiting in it (Twilio echoes them at once)."""
        names = [name for _, name in self._marks]
        self._audio.clear()
        self._marks.clear()
        self._playing, self._first_at = False, None
        return names

    def take(self, now: float) -> tuple[bytes, list[str]]:
        """The next 20 ms to play at ``now`` and the marks played past (module docstring)."""
        if not self._playing and self._audio and self._first_at is not None and now - self._first_at >= self.jitter_s:
            self._playing = True
        played = 0
        frame = bytes(FRAME_BYTES)
        if self._playing:
            played = min(len(self._audio), FRAME_BYTES)
            frame = bytes(self._audio[:played]).ljust(FRAME_BYTES, b"\0")
            del self._audio[:played]
            if not self._audio:  # the talkspurt has been played: the next one waits for the jitter buffer again
                self._playing, self._first_at = False, None
        passed = [name for left, name in self._marks if left <= played]
        self._marks = [(left - played, name) for left, name in self._marks if left > played]
        return frame, passed


class _CallerWire(FrameSerializer):
    """The caller's serializer: the patient's audio out as ``media``; what the bot sends, to ``TwilioCaller``."""

    def __init__(self, caller: TwilioCaller) -> None:
        super().__init__()
        self._caller = caller

    async def serialize(self, frame: Frame) -> str | None:
        if isinstance(frame, AudioRawFrame):
            return await self._caller.media_out(frame)
        return None  # nothing else crosses Twilio's wire from the phone's side

    async def deserialize(self, data: str | bytes) -> Frame | None:
        await self._caller.heard(data)
        return None  # the bot's audio enters the pipeline from the playout, on its own clock


class TwilioCaller(VoiceAgentTransport):
    """The patient as Twilio: Media Streams against a phone bot's websocket (module docstring).

    Args:
        log: where the first ignored message of each kind from the bot is noted, one line.
        jitter_s: the jitter buffer before each talkspurt of the bot's is played.
    """

    protocol: ClassVar[AgentProtocol] = "twilio"

    def __init__(self, *, log: Callable[[str], None] = lambda _line: None, jitter_s: float = JITTER_S) -> None:
        self.stream_sid, self.call_sid, self.account_sid = _sid("MZ"), _sid("CA"), _sid("AC")
        self.playout = TwilioPlayout(jitter_s=jitter_s)
        self._log = log
        self._wire = _CallerWire(self)
        self._websocket: ClientConnection | None = None
        self._push: PushAudio | None = None
        self._task: asyncio.Task[None] | None = None
        self._sequence = 0
        self._chunk = 0
        self._out = bytearray()  # mu-law not yet sent (less than one chunk)
        self._sent_samples = 0
        self._to_twilio = StreamResampler()
        self._from_twilio = StreamResampler()
        self._noted: set[str] = set()
        self._stopped = False

    @property
    def serializer(self) -> FrameSerializer:
        """The Media Streams wire of this call (``_CallerWire``)."""
        return self._wire

    def _next(self) -> str:
        self._sequence += 1
        return str(self._sequence)

    async def _send(self, message: dict[str, Any]) -> None:
        if self._websocket is None:
            return
        try:
            await self._websocket.send(json.dumps(message))
        except (ConnectionClosed, OSError):  # the bot went away; the call ends on the disconnect
            pass

    def _note(self, what: str) -> None:
        if what not in self._noted:
            self._noted.add(what)
            self._log(f"twilio: ignoring {what} from the voice agent (and any more like it)")

    def start_message(self) -> dict[str, Any]:
        """Twilio's ``start``: the stream's metadata (it takes the next sequence number)."""
        return {"event": "start", "sequenceNumber": self._next(),
                "start": {"streamSid": self.stream_sid, "accountSid": self.account_sid, "callSid": self.call_sid,
                          "tracks": ["inbound"], "customParameters": {},
                          "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": TWILIO_RATE, "channels": 1}},
                "streamSid": self.stream_sid}

    def _mark_message(self, name: str) -> dict[str, Any]:
        return {"event": "mark", "sequenceNumber": self._next(), "streamSid": self.stream_sid, "mark": {"name": name}}

    async def opened(self, websocket: ClientConnection, push_audio: PushAudio) -> None:
        """Send ``connected`` and ``start``, and start playing out what the bot sends."""
        self._websocket, self._push = websocket, push_audio
        await self._send({"event": "connected", "protocol": "Call", "version": "1.0.0"})
        await self._send(self.start_message())
        if self._task is None:
            self._task = asyncio.create_task(self._play())

    async def closing(self) -> None:
        """Stop the playout and send ``stop`` (once; nothing if the bot has gone)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._stopped or self._websocket is None:
            return
        self._stopped = True
        stop = {"event": "stop", "sequenceNumber": self._next(), "streamSid": self.stream_sid,
                "stop": {"accountSid": self.account_sid, "callSid": self.call_sid}}
        try:
            await asyncio.wait_for(self._send(stop), STOP_TIMEOUT_S)
        except TimeoutError:
            pass

    async def media_out(self, frame: AudioRawFrame) -> str | None:
        """The patient's audio as one ``media`` message of whole 20 ms chunks, or None until a chunk is complete."""
        if self._stopped:
            return None
        self._out += await pcm_to_ulaw(frame.audio, frame.sample_rate, TWILIO_RATE, self._to_twilio)
        whole = len(self._out) - len(self._out) % CHUNK_BYTES
        if not whole:
            return None
        payload = bytes(self._out[:whole])
        del self._out[:whole]
        self._chunk += 1
        timestamp = self._sent_samples * 1000 // TWILIO_RATE
        self._sent_samples += whole
        return json.dumps({"event": "media", "sequenceNumber": self._next(),
                           "media": {"track": "inbound", "chunk": str(self._chunk), "timestamp": str(timestamp),
                                     "payload": base64.b64encode(payload).decode("ascii")},
                           "streamSid": self.stream_sid})

    async def heard(self, data: str | bytes) -> None:
        """One message from the bot: ``media`` to the playout, ``mark`` into it, ``clear`` empties it."""
        message = _json_object(data)
        if message is None:
            self._note("a binary message" if isinstance(data, bytes) else "a message that is not a JSON event")
            return
        event = message["event"]
        if event not in ("media", "mark", "clear"):
            self._note(f"a {event[:40]!r} event (a bot sends media, mark and clear)")
            return
        if message.get("streamSid") != self.stream_sid:
            self._note(f"{event} messages for another streamSid than this call's")
            return
        if event == "media":
            ulaw = _media_payload(message)
            if ulaw is None:
                self._note("media without a base64 payload")
                return
            self.playout.add(await ulaw_to_pcm(ulaw, TWILIO_RATE, RATE_16K, self._from_twilio), time.monotonic())
        elif event == "mark":
            mark = message.get("mark")
            name = mark.get("name") if isinstance(mark, dict) else None
            if not isinstance(name, str):
                self._note("a mark without a name")
                return
            self.playout.mark(name)
        else:
            for name in self.playout.clear():
                await self._send(self._mark_message(name))

    async def _play(self) -> None:
        """The playout clock (``every_frame``): one frame every 20 ms, and the marks it played past."""

        async def tick() -> None:
            frame, passed = self.playout.take(time.monotonic())
            if self._push is not None:
                await self._push(InputAudioRawFrame(audio=frame, sample_rate=RATE_16K, num_channels=1))
            for name in passed:
                await self._send(self._mark_message(name))

        await every_frame(tick)


def _start_sids(message: dict[str, Any]) -> tuple[str, str | None, str | None] | None:
    """The stream, call and account sid of a ``start`` message (None without a usable stream sid)."""
    start = message.get("start")
    start = start if isinstance(start, dict) else {}
    stream = start.get("streamSid") or message.get("streamSid")
    if not isinstance(stream, str) or not 0 < len(stream) <= 64 or not stream.isprintable():
        return None
    call, account = start.get("callSid"), start.get("accountSid")
    return stream, call if isinstance(call, str) else None, account if isinstance(account, str) else None


class TwilioBotSerializer(FrameSerializer):
    """The built-in voice agent's side of Media Streams: pipecat's ``TwilioFrameSerializer`` behind the door.

    The inner serializer is made when the served connection's ``start`` arrives (its stream sid is in every message
    the bot sends), with ``auto_hang_up=False``. Until then the bot sends nothing and a ``media`` is no audio. A
    valid ``media`` (1 byte to ``MAX_MEDIA_BYTES`` of base64 mu-law) is the caller's audio for the door
    (``_Door.audio_arrived``); ``connected``, ``mark``, ``stop`` and ``dtmf`` are Twilio's bookkeeping and reach no
    one; anything else is dropped through ``_Door.screen``.
    """

    def __init__(self, door: _Door) -> None:
        super().__init__()
        self._door = door
        self._setup: FrameProcessorSetup | None = None
        self._inner: TwilioFrameSerializer | None = None
        self._inner_of = 0  # the door's connection number whose ``start`` made ``_inner``
        self.stream_sid: str | None = None  # the stream sid of the call's ``start`` (None before it)

    async def setup(self, setup: FrameProcessorSetup) -> None:  # type: ignore[override]  # as pipecat's serializers
        self._setup = setup
        if self._inner is not None:
            await self._inner.setup(setup)

    async def serialize(self, frame: Frame) -> str | bytes | None:
        return await self._inner.serialize(frame) if self._inner is not None else None

    async def _start(self, message: dict[str, Any]) -> Frame | None:
        sids = _start_sids(message)
        if sids is None:
            return self._door.screen("a start event without a stream sid")
        if self._door.caller is not None:  # the call has its stream; a second start is not Twilio's
            return None
        stream, call, account = sids
        inner = TwilioFrameSerializer(stream, call_sid=call, account_sid=account,
                                      params=TwilioFrameSerializer.InputParams(auto_hang_up=False))
        if self._setup is not None:
            await inner.setup(self._setup)
        self._inner, self._inner_of, self.stream_sid = inner, self._door.served, stream
        return None

    async def deserialize(self, data: str | bytes) -> Frame | None:
        message = _json_object(data)
        if message is None:
            return self._door.screen("a binary message" if isinstance(data, bytes) else "a message that is not a "
                                     "Twilio JSON event")
        event = message["event"]
        if event == "start":
            return await self._start(message)
        if event != "media":
            return None if event in ("connected", "mark", "stop", "dtmf") else self._door.screen(f"a {event} event")
        if self._inner is None or self._inner_of != self._door.served:
            return self._door.screen("a media event before its start")
        ulaw = _media_payload(message)
        if ulaw is None or len(ulaw) > MAX_MEDIA_BYTES:
            return self._door.screen(f"a media event of {len(ulaw) if ulaw else 0} bytes")
        if not self._door.audio_arrived():
            return None
        return await self._inner.deserialize(data)
