"""Twilio Media Streams (``audio.live._twilio``) against pipecat's own ``TwilioFrameSerializer``, the bot's side.

The patient plays Twilio (``TwilioCaller``): what it sends is read by pipecat's serializer exactly as a phone bot
reads Twilio, and what that serializer writes (audio, ``clear``, a ``mark`` a bot sends as a transport message) is
what the patient hears and answers. The built-in voice agent's side (``TwilioBotSerializer``) is checked behind a
real door. No socket: a stand-in records what the caller sends.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from typing import Any, cast

import numpy as np
import pytest
from loguru import logger
from pipecat.frames.frames import (
    CancelFrame,
    EndFrame,
    InputAudioRawFrame,
    InterruptionFrame,
    OutputAudioRawFrame,
    OutputTransportMessageFrame,
)
from pipecat.processors.frame_processor import FrameProcessorSetup
from pipecat.serializers.twilio import TwilioFrameSerializer

from audio.live import FRAME_BYTES, OriginPolicy
from audio.live._door import _Door
from audio.live._twilio import CHUNK_BYTES, StreamResampler, TwilioBotSerializer, TwilioCaller

RATE = 16_000


@pytest.fixture(scope="module", autouse=True)
def quiet_pipecat() -> Iterator[None]:
    logger.disable("pipecat")
    try:
        yield
    finally:
        logger.enable("pipecat")


class Socket:
    """What the caller sends, as JSON."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send(self, message: str) -> None:
        self.sent.append(json.loads(message))


def _setup() -> FrameProcessorSetup:
    none = cast(Any, None)
    return FrameProcessorSetup(clock=none, task_manager=none, pipeline_worker=none, audio_in_sample_rate=RATE,
                               audio_out_sample_rate=RATE)


async def _pipecat_bot(stream_sid: str) -> TwilioFrameSerializer:
    """pipecat's serializer as a phone bot makes it from Twilio's ``start`` (never hanging up through Twilio)."""
    # pipecat's stream resampler resets after 0.2 s of wall-clock idle by default: a loaded machine made this
    # test's SNR depend on timing (6.8 dB when it ran alone), so the reset is off here
    params = TwilioFrameSerializer.InputParams(auto_hang_up=False, resampler_clear_after_secs=None)
    bot = TwilioFrameSerializer(stream_sid, params=params)
    await bot.setup(_setup())
    return bot


def _speechlike(seconds: float, seed: int = 0) -> np.ndarray:
    """Tones inside the telephone band under a syllable-rate envelope, int16 at 16 kHz."""
    t = np.arange(int(RATE * seconds)) / RATE
    rng = np.random.default_rng(seed)
    tones = sum(np.sin(2 * np.pi * f * t + rng.uniform(0, 6)) for f in (310, 730, 1250, 2300))
    envelope = 0.6 + 0.4 * np.sin(2 * np.pi * 4 * t)
    return (tones / 4 * envelope * 12000).astype(np.int16)


def _frames(samples: np.ndarray) -> list[bytes]:
    pcm = samples.tobytes()
    return [pcm[i:i + FRAME_BYTES] for i in range(0, len(pcm), FRAME_BYTES)]


def _aligned_snr_db(sent: np.ndarray, heard: np.ndarray) -> float:
    """The SNR of ``heard`` against ``sent``, after the offset between them is found and taken out.

    The offset goes either way: the filters delay the stream, and pipecat's streaming resampler may hold back or
    drop its first few milliseconds (it did when this test ran alone in a fresh process: 60 ms fewer samples).
    """
    a, b = sent.astype(np.float64), heard.astype(np.float64)
    window = a[4000:12000]

    def match(lag: int) -> float:
        lo, hi = 4000 + lag, 12000 + lag
        return float(np.dot(window, b[lo:hi])) if 0 <= lo and hi <= len(b) else -np.inf

    best = max(range(-4000, 4000), key=match)
    start = 200 + max(0, -best)
    n = min(len(a), len(b) - best) - 200
    ref, got = a[start:n], b[start + best:n + best]
    return float(10 * np.log10(np.sum(ref ** 2) / np.sum((ref - got) ** 2)))


async def _opened(caller: TwilioCaller, heard: list[bytes] | None = None) -> Socket:
    socket = Socket()

    async def push(frame: InputAudioRawFrame) -> None:
        if heard is not None:
            heard.append(frame.audio)

    await caller.opened(cast(Any, socket), push)
    return socket


async def _until(condition: Any, seconds: float = 3.0) -> None:
    for _ in range(int(seconds / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("timed out")


async def test_the_caller_opens_and_closes_the_stream_as_twilio_does() -> None:
    caller = TwilioCaller()
    socket = await _opened(caller)
    try:
        connected, start = socket.sent
        assert connected == {"event": "connected", "protocol": "Call", "version": "1.0.0"}
        assert start["event"] == "start" and start["sequenceNumber"] == "1"
        assert start["streamSid"] == start["start"]["streamSid"] == caller.stream_sid
        assert caller.stream_sid.startswith("MZ") and len(caller.stream_sid) == 34
        assert start["start"]["callSid"].startswith("CA") and start["start"]["accountSid"].startswith("AC")
        assert start["start"]["tracks"] == ["inbound"] and start["start"]["customParameters"] == {}
        assert start["start"]["mediaFormat"] == {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}
    finally:
        await caller.closing()
        await caller.closing()  # once only
    stops = [m for m in socket.sent if m["event"] == "stop"]
    assert stops == [{"event": "stop", "sequenceNumber": "2", "streamSid": caller.stream_sid,
                      "stop": {"accountSid": caller.account_sid, "callSid": caller.call_sid}}]


async def test_the_patients_speech_reaches_a_pipecat_twilio_bot() -> None:
    """20 ms of 16 kHz PCM -> one media message (160 mu-law bytes) -> pipecat's bot reads 16 kHz audio back."""
    caller = TwilioCaller()
    await _opened(caller)
    bot = await _pipecat_bot(caller.stream_sid)
    sent = _speechlike(1.5)
    messages = [await caller.serializer.serialize(OutputAudioRawFrame(audio=f, sample_rate=RATE, num_channels=1))
                for f in _frames(sent)]
    await caller.closing()
    media = [json.loads(m) for m in messages if isinstance(m, str)]
    assert len(media) == len(messages)
    assert [m["sequenceNumber"] for m in media] == [str(n) for n in range(2, 2 + len(media))]
    assert [m["media"]["chunk"] for m in media] == [str(n) for n in range(1, 1 + len(media))]
    assert [m["media"]["timestamp"] for m in media] == [str(20 * n) for n in range(len(media))]
    assert {m["media"]["track"] for m in media} == {"inbound"} and {m["streamSid"] for m in media} == {
        caller.stream_sid}
    assert {len(base64.b64decode(m["media"]["payload"])) for m in media} == {CHUNK_BYTES}
    heard = [await bot.deserialize(json.dumps(m)) for m in media]
    audio = b"".join(f.audio for f in heard if isinstance(f, InputAudioRawFrame))
    assert {f.sample_rate for f in heard if f is not None} == {RATE}
    assert _aligned_snr_db(sent, np.frombuffer(audio, dtype=np.int16)) > 25  # mu-law and two resamplings (about 37 dB)


async def test_a_pipecat_twilio_bots_speech_reaches_the_patient() -> None:
    """pipecat's bot writes mu-law media for the call's stream; the patient plays it out as 20 ms frames of 16 kHz."""
    caller = TwilioCaller()
    bot = await _pipecat_bot(caller.stream_sid)
    sent = _speechlike(1.5, seed=1)
    for frame in _frames(sent):
        message = await bot.serialize(OutputAudioRawFrame(audio=frame, sample_rate=RATE, num_channels=1))
        if message is not None:
            assert json.loads(message)["streamSid"] == caller.stream_sid
            await caller.serializer.deserialize(message)
    assert caller.playout.pending_s > 1.0
    frames = []
    while caller.playout.pending_s:
        frame, _ = caller.playout.take(now=1e9)
        frames.append(frame)
    assert {len(f) for f in frames} == {FRAME_BYTES}
    assert _aligned_snr_db(sent, np.frombuffer(b"".join(frames), dtype=np.int16)) > 25  # about 31 dB


async def test_a_mark_is_echoed_once_the_audio_before_it_was_played() -> None:
    caller = TwilioCaller(jitter_s=0.0)
    heard: list[bytes] = []
    socket = await _opened(caller, heard)
    bot = await _pipecat_bot(caller.stream_sid)
    try:
        speech = _speechlike(0.2).tobytes()
        ulaw = base64.b64encode(bytes(_ulaw(speech))).decode()
        await caller.serializer.deserialize(json.dumps({"event": "media", "streamSid": caller.stream_sid,
                                                        "media": {"payload": ulaw}}))
        mark = await bot.serialize(OutputTransportMessageFrame(message={
            "event": "mark", "streamSid": caller.stream_sid, "mark": {"name": "greeting done"}}))
        assert isinstance(mark, str)
        heard_before = len(heard)
        await caller.serializer.deserialize(mark)
        await _until(lambda: any(m["event"] == "mark" for m in socket.sent))
        loud = [f for f in heard[heard_before:] if np.abs(np.frombuffer(f, dtype=np.int16)).max() > 1000]
        assert len(loud) >= 9  # the 200 ms before the mark had been played when it came back (at most 1 frame
        #                        of it may have played before the mark arrived)
        echo = next(m for m in socket.sent if m["event"] == "mark")
        assert echo == {"event": "mark", "sequenceNumber": echo["sequenceNumber"], "streamSid": caller.stream_sid,
                        "mark": {"name": "greeting done"}}
        assert int(echo["sequenceNumber"]) == 2
    finally:
        await caller.closing()


def _ulaw(pcm16k: bytes) -> bytes:
    import audioop  # pipecat's mu-law is audioop's (pipecat.audio.utils)

    from scipy.signal import resample_poly

    x = resample_poly(np.frombuffer(pcm16k, dtype=np.int16).astype(np.float64), 1, 2)
    return audioop.lin2ulaw(np.clip(x, -32768, 32767).astype(np.int16).tobytes(), 2)


async def test_clear_drops_what_was_not_played_and_returns_the_marks_in_it() -> None:
    caller = TwilioCaller()
    socket = await _opened(caller)
    bot = await _pipecat_bot(caller.stream_sid)
    try:
        ulaw = base64.b64encode(_ulaw(_speechlike(2.0).tobytes())).decode()
        await caller.serializer.deserialize(json.dumps({"event": "media", "streamSid": caller.stream_sid,
                                                        "media": {"payload": ulaw}}))
        await caller.serializer.deserialize(json.dumps({"event": "mark", "streamSid": caller.stream_sid,
                                                        "mark": {"name": "end of line"}}))
        assert caller.playout.pending_s > 1.5
        clear = await bot.serialize(InterruptionFrame())
        assert clear is not None and json.loads(clear) == {"event": "clear", "streamSid": caller.stream_sid}
        await caller.serializer.deserialize(clear)
        assert caller.playout.pending_s == 0
        assert [m["mark"]["name"] for m in socket.sent if m["event"] == "mark"] == ["end of line"]
        frame, passed = caller.playout.take(now=1e9)
        assert frame == bytes(FRAME_BYTES) and passed == []
    finally:
        await caller.closing()


async def test_what_a_bot_should_not_send_is_ignored_and_noted_once() -> None:
    log: list[str] = []
    caller = TwilioCaller(log=log.append)
    payload = base64.b64encode(b"\xff" * 160).decode()
    for message in [b"\x08\x01", "not json", "not json either", json.dumps({"event": "dance"}),
                    json.dumps({"event": "media", "streamSid": "MZother", "media": {"payload": payload}}),
                    json.dumps({"event": "media", "streamSid": caller.stream_sid, "media": {"payload": "%%%"}})]:
        assert await caller.serializer.deserialize(message) is None
    assert caller.playout.pending_s == 0
    assert len(log) == 5 and all(line.startswith("twilio: ignoring") for line in log)
    assert await caller.serializer.serialize(InterruptionFrame()) is None


async def test_the_built_in_bot_reads_its_stream_from_start_and_takes_media_as_audio() -> None:
    """``encsim serve-agent --protocol twilio``: pipecat's serializer made at start; the first media is the caller."""
    callers: list[str] = []

    async def hung_up() -> None:
        callers.append("hangup")

    door = _Door(policy=OriginPolicy(), join_window_s=10, log=lambda _line: None,
                 on_caller=lambda: callers.append("caller"), on_hangup=hung_up, over=lambda: False)
    bot = TwilioBotSerializer(door)
    await bot.setup(_setup())
    caller = TwilioCaller()
    socket = await _opened(caller)
    connection = object()
    door.opened(connection)
    try:
        media = [await caller.serializer.serialize(OutputAudioRawFrame(audio=f, sample_rate=RATE, num_channels=1))
                 for f in _frames(_speechlike(0.5))]
        media = [m for m in media if m is not None]
        assert await bot.deserialize(media[0]) is None and door.caller is None  # no audio before start
        assert await bot.serialize(OutputAudioRawFrame(audio=bytes(FRAME_BYTES), sample_rate=RATE,
                                                       num_channels=1)) is None  # no stream to send on yet
        for message in socket.sent:  # connected, start
            assert await bot.deserialize(json.dumps(message)) is None
        assert bot.stream_sid == caller.stream_sid and door.caller is None
        heard = [await bot.deserialize(m) for m in media]
        assert door.caller is connection and callers == ["caller"]
        assert any(isinstance(f, InputAudioRawFrame) and f.sample_rate == RATE for f in heard)
        for garbage in [b"\x00\x01", "{", json.dumps({"event": "media", "streamSid": caller.stream_sid,
                                                        "media": {"payload": base64.b64encode(b"\xff" * 9000)
                                                                  .decode()}})]:
            assert await bot.deserialize(garbage) is None
        for frame in (EndFrame(), CancelFrame()):  # auto_hang_up=False: nothing, and never Twilio's REST API
            assert await bot.serialize(frame) is None
        out = await bot.serialize(InterruptionFrame())
        assert out is not None and json.loads(out) == {"event": "clear", "streamSid": caller.stream_sid}
    finally:
        await caller.closing()
        await door.gone(connection)
    assert callers == ["caller", "hangup"]


async def test_stream_resampler_gives_exactly_20_ms_for_20_ms() -> None:
    down, up = StreamResampler(), StreamResampler()
    pcm = _speechlike(0.2).tobytes()
    lengths = [len(await down.resample(pcm[i:i + 640], 16000, 8000)) for i in range(0, len(pcm), 640)]
    assert lengths == [320] * 10
    back = [len(await up.resample(b"\x01\x00" * 160, 8000, 16000)) for _ in range(5)]
    assert back == [640] * 5
    with pytest.raises(ValueError, match="multiple"):
        await StreamResampler().resample(pcm, 16000, 11025)
    with pytest.raises(ValueError, match="16000 -> 8000"):
        await down.resample(pcm, 8000, 16000)
