"""The OpenAI Realtime protocol (``audio.live._realtime``): the caller through the ``openai`` SDK, the served side.

The caller's link is dialled at a stand-in Realtime server on loopback (``FakeRealtime``: a websockets server that
records what it receives and answers with the SDK's own server event models); no speech models, no pipeline.
What the caller sends is read back with the SDK's ``RealtimeClientEvent`` union, so every event is checked to be
one of the SDK's. The built-in agent's side (``RealtimeBotSerializer``) is checked behind a real door, with a
stand-in connection that records what it is sent.
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
from collections.abc import Awaitable, Callable, Iterator
from http import HTTPStatus
from typing import Any

import numpy as np
import pytest
from loguru import logger
from openai.types.realtime import (
    RealtimeClientEvent,
    RealtimeError,
    RealtimeErrorEvent,
    RealtimeResponse,
    RealtimeSessionCreateRequest,
    ResponseAudioDeltaEvent,
    ResponseAudioTranscriptDeltaEvent,
    ResponseAudioTranscriptDoneEvent,
    ResponseCreatedEvent,
    ResponseDoneEvent,
    SessionCreatedEvent,
    SessionUpdatedEvent,
)
from openai.types.realtime.input_audio_buffer_speech_started_event import InputAudioBufferSpeechStartedEvent
from pipecat.frames.frames import InputAudioRawFrame, InterruptionFrame, OutputAudioRawFrame
from pydantic import SecretStr, TypeAdapter
from websockets.asyncio.server import serve

from audio._pcm import resample_int16
from audio.live import FRAME_BYTES, OriginPolicy
from audio.live._door import _Door
from audio.live._realtime import (
    DEFAULT_MODEL,
    PLACEHOLDER_KEY,
    REPLY_END_S,
    RealtimeBotSerializer,
    RealtimeCaller,
    RealtimeLink,
    StreamResampler24,
    realtime_urls,
    session_update,
)
from audio.live._settings import LiveError
from audio.live._transport import AgentLinkSettings

RATE = 16_000
CLIENT_EVENT: TypeAdapter[Any] = TypeAdapter(RealtimeClientEvent)
KEY = "sk-test-DO-NOT-LEAK-4242"


@pytest.fixture(scope="module", autouse=True)
def quiet_pipecat() -> Iterator[None]:
    logger.disable("pipecat")
    try:
        yield
    finally:
        logger.enable("pipecat")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tone(seconds: float, rate: int = RATE, freq: float = 440.0) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (np.sin(2 * np.pi * freq * t) * 8000).astype(np.int16)


def _frames(samples: np.ndarray) -> list[bytes]:
    pcm = samples.tobytes()
    return [pcm[i:i + FRAME_BYTES] for i in range(0, len(pcm), FRAME_BYTES)]


def _dump(event: Any) -> str:
    return str(event.to_json(indent=None))


async def _until(condition: Callable[[], bool], seconds: float = 20.0) -> None:
    for _ in range(int(seconds / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("timed out")


Script = Callable[[Any], Awaitable[None]]


class FakeRealtime:
    """A stand-in Realtime server on loopback: records every client event (parsed by the SDK's models).

    Args:
        status: refuse the websocket handshake with this HTTP status.
        on_update: answer ``session.update`` with this server event instead of ``session.updated``.
        then: run on the connection once the session is updated (send audio, an error, close...).
    """

    def __init__(self, *, status: HTTPStatus | None = None, on_update: Any = None, then: Script | None = None):
        self.status, self.on_update, self.then = status, on_update, then
        self.events: list[Any] = []
        self.requests: list[Any] = []
        self.port = 0
        self._server: Any = None
        self.closed = asyncio.Event()

    def url(self, scheme: str = "ws") -> str:
        return f"{scheme}://127.0.0.1:{self.port}/v1"

    def _check(self, connection: Any, request: Any) -> Any:
        self.requests.append(request)
        return connection.respond(self.status, "no\n") if self.status is not None else None

    async def _handler(self, websocket: Any) -> None:
        await websocket.send(_dump(SessionCreatedEvent(type="session.created", event_id="e0",
                                                       session=RealtimeSessionCreateRequest(type="realtime"))))
        script: asyncio.Task[None] | None = None
        try:
            async for message in websocket:
                event = CLIENT_EVENT.validate_python(json.loads(message))
                self.events.append(event)
                if event.type == "session.update":
                    answer = self.on_update or SessionUpdatedEvent(type="session.updated", event_id="e1",
                                                                   session=event.session)
                    await websocket.send(_dump(answer))
                    if self.then is not None and self.on_update is None:
                        script = asyncio.create_task(self.then(websocket))
        except Exception:
            pass
        finally:
            self.closed.set()
            if script is not None:
                await asyncio.gather(script, return_exceptions=True)

    async def __aenter__(self) -> FakeRealtime:
        self._server = await serve(self._handler, "127.0.0.1", 0, process_request=self._check)
        self.port = next(iter(self._server.sockets)).getsockname()[1]
        return self

    async def __aexit__(self, *_exc: object) -> None:
        self._server.close()
        await self._server.wait_closed()

    def of_type(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]


class Ear:
    """What the patient hears through the link, and how the agent hung up."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.hung_up: list[str | None] = []

    async def hear(self, frame: InputAudioRawFrame) -> None:
        assert frame.sample_rate == RATE and len(frame.audio) == FRAME_BYTES
        self.frames.append(frame.audio)

    async def hang_up(self, reason: str | None = None) -> None:
        self.hung_up.append(reason)

    def loud(self) -> int:
        return sum(1 for f in self.frames if np.abs(np.frombuffer(f, dtype=np.int16)).max() > 1000)


def _settings(**kw: Any) -> AgentLinkSettings:
    return AgentLinkSettings(instructions="You are a triage nurse. Ask one question at a time.", **kw)


async def test_the_caller_opens_a_session_with_the_sdks_events(monkeypatch: pytest.MonkeyPatch) -> None:
    """session.update carries the frozen prompt, PCM 24 kHz both ways and server VAD; audio goes at 24 kHz."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")  # never sent: the link passes its own key
    async with FakeRealtime() as server:
        link, ear = RealtimeLink(server.url(), _settings(api_key=SecretStr(KEY))), Ear()
        await link.open(ear.hear, ear.hang_up)
        try:
            (update,) = server.events
            assert type(update).__name__ == "SessionUpdateEvent"
            assert update.session.instructions == _settings().instructions
            assert update.session.output_modalities == ["audio"]
            audio = update.session.audio
            assert (audio.input.format.type, audio.input.format.rate) == ("audio/pcm", 24000)
            assert (audio.output.format.type, audio.output.format.rate) == ("audio/pcm", 24000)
            assert audio.input.turn_detection.type == "server_vad"
            request = server.requests[0]
            assert request.path == f"/v1/realtime?model={DEFAULT_MODEL}"
            assert request.headers["Authorization"] == f"Bearer {KEY}"
            assert link.events[:2] == ["session.created", "session.updated"]
            sent = _tone(0.4)
            for frame in _frames(sent) + [bytes(FRAME_BYTES)] * 5:
                await link.speak(frame)
            await _until(lambda: len(server.of_type("input_audio_buffer.append")) == 25)
            pcm = b"".join(base64.b64decode(e.audio) for e in server.of_type("input_audio_buffer.append"))
            got = np.frombuffer(pcm, dtype=np.int16)
            expected = resample_int16(np.concatenate([sent, np.zeros(5 * 320, np.int16)]), 16000, 24000)
            assert 24000 * 0.49 < len(got) <= len(expected)  # all of it but the resampler's 2 ms look-ahead
            assert np.abs(got.astype(int) - expected[:len(got)]).max() <= 1  # as if resampled in one piece
            assert not server.of_type("input_audio_buffer.commit")  # the server's VAD takes the turns
        finally:
            await link.close()
            await link.close()
        await asyncio.wait_for(server.closed.wait(), 10)
    assert ear.hung_up == []  # closing is not the agent hanging up


async def test_commit_turns_commit_each_line_after_its_silence_and_stream_no_idle_silence(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    async with FakeRealtime() as server:
        link, ear = RealtimeLink(server.url("http"), _settings(turn_detection="commit", model="my-model")), Ear()
        await link.open(ear.hear, ear.hang_up)
        try:
            (update,) = server.events
            assert update.session.audio.input.turn_detection is None
            assert "turn_detection" in update.session.audio.input.model_fields_set  # sent as null: turned off
            assert server.requests[0].path == "/v1/realtime?model=my-model"
            assert server.requests[0].headers["Authorization"] == f"Bearer {PLACEHOLDER_KEY}"
            silence = [bytes(FRAME_BYTES)]
            for frame in silence * 10 + _frames(_tone(0.3)) + silence * 6 + _frames(_tone(0.2)) + silence * 40:
                await link.speak(frame)
            await _until(lambda: len(server.of_type("response.create")) == 1)
            kinds = [e.type for e in server.events[1:]]
            # the leading silence was not streamed; the 120 ms gap inside the line was; the line ended 0.5 s after
            # its last sound, and nothing after that was streamed
            assert kinds == ["input_audio_buffer.append"] * (15 + 6 + 10 + 25) + [
                "input_audio_buffer.commit", "response.create"]
        finally:
            await link.close()


async def test_the_agents_audio_is_played_out_in_real_time_and_its_transcript_kept() -> None:
    async def speak_twice(websocket: Any) -> None:
        for n, text in enumerate(["Hello, what brings you in?", "How long has it hurt?"]):
            rid = f"resp_{n}"
            await websocket.send(_dump(ResponseCreatedEvent(type="response.created", event_id="e", response=
                                                            RealtimeResponse(id=rid, status="in_progress"))))
            pcm = _tone(0.3, rate=24000).tobytes()
            await websocket.send(_dump(ResponseAudioDeltaEvent(
                type="response.output_audio.delta", event_id="e", response_id=rid, item_id="i", output_index=0,
                content_index=0, delta=base64.b64encode(pcm).decode())))
            for word in text.split(" "):
                await websocket.send(_dump(ResponseAudioTranscriptDeltaEvent(
                    type="response.output_audio_transcript.delta", event_id="e", response_id=rid, item_id="i",
                    output_index=0, content_index=0, delta=word + " ")))
            if n == 0:  # the second response's transcript is only in its deltas
                await websocket.send(_dump(ResponseAudioTranscriptDoneEvent(
                    type="response.output_audio_transcript.done", event_id="e", response_id=rid, item_id="i",
                    output_index=0, content_index=0, transcript=text)))
            await websocket.send(_dump(ResponseDoneEvent(type="response.done", event_id="e",
                                                         response=RealtimeResponse(id=rid, status="completed"))))

    async with FakeRealtime(then=speak_twice) as server:
        caller = RealtimeCaller()
        caller.pipecat_transport(server.url(), _settings())
        link, ear = caller.link, Ear()
        assert link is not None and caller.transcript == []
        await link.open(ear.hear, ear.hang_up)
        try:
            await _until(lambda: link.events.count("response.done") == 2 and ear.loud() >= 29)
            assert caller.transcript == ["Hello, what brings you in?", "How long has it hurt?"]
            assert 29 <= ear.loud() <= 31  # 2 x 0.3 s, 20 ms a frame (resampling edges may tip one frame)
        finally:
            await link.close()
    assert ear.hung_up == []


async def test_speech_started_drops_the_agents_audio_not_yet_played() -> None:
    """Barge-in: the server heard the patient; what the agent had not said yet is never heard (Twilio's clear)."""
    async def long_reply_then_barge_in(websocket: Any) -> None:
        pcm = _tone(8.0, rate=24000).tobytes()
        await websocket.send(_dump(ResponseAudioDeltaEvent(
            type="response.output_audio.delta", event_id="e", response_id="r", item_id="i", output_index=0,
            content_index=0, delta=base64.b64encode(pcm).decode())))
        await asyncio.sleep(0.5)
        await websocket.send(_dump(InputAudioBufferSpeechStartedEvent(
            type="input_audio_buffer.speech_started", event_id="e", item_id="i2", audio_start_ms=500)))

    async with FakeRealtime(then=long_reply_then_barge_in) as server:
        link, ear = RealtimeLink(server.url(), _settings()), Ear()
        await link.open(ear.hear, ear.hang_up)
        try:
            await _until(lambda: "response.output_audio.delta" in link.events)
            assert link.playout.pending_s > 7.0
            await _until(lambda: "input_audio_buffer.speech_started" in link.events)
            assert link.playout.pending_s == 0
            heard = ear.loud()
            await asyncio.sleep(0.2)
            assert ear.loud() == heard < 400  # nothing more of the reply, and never all of its 8 s
        finally:
            await link.close()


@pytest.mark.parametrize(("status", "said"), [
    (HTTPStatus.UNAUTHORIZED, "HTTP 401 from ws://127.0.0.1:{port}/v1/realtime: the API key was refused "
                              "(--api-key-env)"),
    (HTTPStatus.FORBIDDEN, "HTTP 403 from ws://127.0.0.1:{port}/v1/realtime: the API key was refused"),
    (HTTPStatus.NOT_FOUND, "HTTP 404 from ws://127.0.0.1:{port}/v1/realtime: no Realtime endpoint there"),
    (HTTPStatus.BAD_GATEWAY, "HTTP 502 from ws://127.0.0.1:{port}/v1/realtime: the server refused"),
])
async def test_a_refused_handshake_is_one_line_without_the_key(status: HTTPStatus, said: str) -> None:
    async with FakeRealtime(status=status) as server:
        link = RealtimeLink(server.url(), _settings(api_key=SecretStr(KEY)))
        with pytest.raises(LiveError) as caught:
            await link.open(Ear().hear, Ear().hang_up)
    message = str(caught.value)
    assert message.startswith(said.format(port=server.port)) and "\n" not in message and KEY not in message
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


async def test_nothing_listening_or_an_error_instead_of_the_session_is_one_line() -> None:
    port = _free_port()
    with pytest.raises(LiveError, match=rf"^could not connect to ws://127.0.0.1:{port}/v1/realtime: connection "
                                        "refused"):
        await RealtimeLink(f"ws://127.0.0.1:{port}/v1", _settings()).open(Ear().hear, Ear().hang_up)
    refusal = RealtimeErrorEvent(type="error", event_id="e", error=RealtimeError(
        type="invalid_request_error", code="model_not_found", message="The model 'x' does not exist."))
    async with FakeRealtime(on_update=refusal) as server:
        with pytest.raises(LiveError) as caught:
            await RealtimeLink(server.url(), _settings()).open(Ear().hear, Ear().hang_up)
        await asyncio.wait_for(server.closed.wait(), 10)  # the link closed its connection
    assert str(caught.value) == (f"ws://127.0.0.1:{server.port}/v1/realtime refused the session: "
                                 "invalid_request_error/model_not_found: The model 'x' does not exist.")


@pytest.mark.parametrize("ending", ["error", "close 1011", "close 1000", "garbage"])
async def test_the_agent_ending_the_call_mid_call_is_a_hang_up_with_one_line(ending: str) -> None:
    async def end(websocket: Any) -> None:
        if ending == "error":
            await websocket.send(_dump(RealtimeErrorEvent(type="error", event_id="e", error=RealtimeError(
                type="server_error", message="The server had an error\nwhile processing."))))
        elif ending == "garbage":
            await websocket.send("{not json")
        else:
            await websocket.close(int(ending.split()[1]), "bye")

    async with FakeRealtime(then=end) as server:
        link, ear = RealtimeLink(server.url(), _settings()), Ear()
        await link.open(ear.hear, ear.hang_up)
        try:
            await _until(lambda: bool(ear.hung_up))
        finally:
            await link.close()
    shown = f"ws://127.0.0.1:{server.port}/v1/realtime"
    expected = {"error": f"an error event from {shown}: server_error: The server had an error while processing.",
                "close 1011": f"{shown} closed the connection mid-call (code 1011)", "close 1000": None,
                "garbage": f"a protocol error from {shown}: JSONDecodeError (not a Realtime event)"}
    assert ear.hung_up == [expected[ending]]


def test_agent_urls_map_to_the_sdks_base_urls() -> None:
    assert realtime_urls("ws://127.0.0.1:8766/v1") == ("http://127.0.0.1:8766/v1", "ws://127.0.0.1:8766/v1", {})
    assert realtime_urls("https://api.example.org/v1?x=1") == ("https://api.example.org/v1",
                                                               "wss://api.example.org/v1", {"x": "1"})
    assert realtime_urls("wss://h/v1/")[0] == "https://h/v1/"
    with pytest.raises(LiveError, match="no pipecat serializer"):
        _ = RealtimeCaller().serializer


def test_the_stream_resampler_is_one_piece_resampling_in_chunks() -> None:
    up, down = StreamResampler24(16000, 24000), StreamResampler24(24000, 16000)
    x = _tone(1.0)
    y = np.frombuffer(b"".join(up.resample(f) for f in _frames(x)), dtype=np.int16)
    assert np.abs(y.astype(int) - resample_int16(x, 16000, 24000)[:len(y)]).max() <= 1 and len(y) >= 24000 - 48
    z = np.frombuffer(b"".join(down.resample(y[i:i + 480].tobytes()) for i in range(0, len(y), 480)), np.int16)
    assert np.abs(z[100:len(z) - 100].astype(int) - x[100:len(z) - 100]).max() < 200  # back where it started
    with pytest.raises(ValueError, match="16000 <-> 24000"):
        StreamResampler24(16000, 8000)


class Connection:
    """The served connection as the door knows it: what the serializer sends on it, parsed as JSON."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send(self, message: str) -> None:
        self.sent.append(json.loads(message))

    def types(self) -> list[str]:
        return [m["type"] for m in self.sent]


async def test_the_built_in_agent_serves_the_realtime_protocol_behind_the_door() -> None:
    callers: list[str] = []

    async def hung_up() -> None:
        callers.append("hangup")

    door = _Door(policy=OriginPolicy(), join_window_s=10, log=lambda _line: None,
                 on_caller=lambda: callers.append("caller"), on_hangup=hung_up, over=lambda: False)
    bot, connection = RealtimeBotSerializer(door), Connection()
    door.opened(connection)
    try:
        update = session_update(_settings(turn_detection="commit"))
        assert await bot.deserialize(_dump(update)) is None
        assert connection.types() == ["session.created", "session.updated"] and door.caller is None
        session = connection.sent[1]["session"]
        assert session["instructions"] == _settings().instructions
        assert session["audio"]["input"]["format"] == session["audio"]["output"]["format"] == {
            "type": "audio/pcm", "rate": 24000}
        assert session["audio"]["input"]["turn_detection"]["type"] == "server_vad"  # its own VAD, always
        heard = []
        for chunk in _frames(_tone(0.5, rate=24000))[::1]:
            event = {"type": "input_audio_buffer.append", "audio": base64.b64encode(chunk).decode()}
            heard.append(await bot.deserialize(json.dumps(event)))
        assert callers == ["caller"] and door.caller is connection
        frames = [f for f in heard if f is not None]
        assert all(isinstance(f, InputAudioRawFrame) and f.sample_rate == RATE for f in frames)
        assert 16000 * 0.5 - 48 <= sum(len(f.audio) for f in frames) // 2 <= 16000 * 0.5
        assert await bot.deserialize(json.dumps({"type": "input_audio_buffer.commit"})) is None
        assert await bot.deserialize(json.dumps({"type": "response.create"})) is None
        assert connection.types()[2:] == ["input_audio_buffer.committed"]
        for garbage, code in [("{", "invalid_event"), (b"\x00", "invalid_event"), ('{"type": "dance"}',
                              "invalid_event"), ('{"type": "input_audio_buffer.append", "audio": "%%"}',
                              "invalid_audio"), (json.dumps({"type": "conversation.item.delete",
                                                             "item_id": "x"}), "unsupported_event")]:
            before = len(connection.sent)
            assert await bot.deserialize(garbage) is None
            (error,) = connection.sent[before:]
            assert error["type"] == "error" and error["error"]["code"] == code
        connection.sent.clear()
        out = [await bot.serialize(OutputAudioRawFrame(audio=f, sample_rate=RATE, num_channels=1))
               for f in _frames(_tone(0.3))]
        deltas = [json.loads(m) for m in out if m is not None]
        assert connection.types() == ["response.created"]
        rid = connection.sent[0]["response"]["id"]
        assert {d["type"] for d in deltas} == {"response.output_audio.delta"} and {d["response_id"] for d in
                                                                                     deltas} == {rid}
        samples = sum(len(base64.b64decode(d["delta"])) for d in deltas) // 2
        assert 24000 * 0.3 - 48 <= samples <= 24000 * 0.3
        await _until(lambda: "response.done" in connection.types(), REPLY_END_S * 20)
        assert connection.types() == ["response.created", "response.output_audio.done", "response.done"]
        assert connection.sent[-1]["response"] == {"id": rid, "object": "realtime.response", "status": "completed"}
        connection.sent.clear()
        await bot.serialize(OutputAudioRawFrame(audio=bytes(FRAME_BYTES), sample_rate=RATE, num_channels=1))
        assert await bot.serialize(InterruptionFrame()) is None
        assert connection.types() == ["response.created", "input_audio_buffer.speech_started",
                                      "response.output_audio.done", "response.done"]
        assert connection.sent[-1]["response"]["status"] == "cancelled"
    finally:
        await door.gone(connection)
    assert callers == ["caller", "hangup"]


def test_the_protocol_dispatch_gives_a_new_realtime_caller_and_bot_per_call() -> None:
    from audio.live._bridge import BridgeTransport
    from audio.live._call import served_serializer, voice_agent_transport

    first, second = voice_agent_transport("openai-realtime"), voice_agent_transport("openai-realtime")
    assert isinstance(first, RealtimeCaller) and first.protocol == "openai-realtime" and first is not second
    transport = first.pipecat_transport("ws://127.0.0.1:9/v1", _settings(scenario_hint="viral_uri"))
    assert isinstance(transport, BridgeTransport) and transport.link is first.link
    assert first.link is not None and first.link._query == {"encsim_scenario": "viral_uri"}
    door = _Door(policy=OriginPolicy(), join_window_s=10, log=lambda _line: None, on_caller=lambda: None,
                 on_hangup=lambda: asyncio.sleep(0), over=lambda: False)
    assert isinstance(served_serializer("openai-realtime", door), RealtimeBotSerializer)
