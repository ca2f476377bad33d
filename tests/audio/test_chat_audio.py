"""Audio chat completions (``audio.live._chat_audio``): the patient's link through the openai SDK, and the server.

The link is driven by hand (the patient's 20 ms frames in, the frames it plays out collected) against a tiny aiohttp
server on loopback that records each request and answers as the test says: a text reply, a WAV reply, an HTTP
error, a malformed body, or nothing. The served side (``serve_chat_audio``) is called with the SDK and with the
link itself. No clock races: the tests wait for what happened (a request, a frame), never for a fixed time.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import socket
import wave
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from aiohttp import web
from pipecat.frames.frames import InputAudioRawFrame
from pydantic import SecretStr

from audio.live import FRAME_BYTES, AgentLinkSettings, BridgeTransport, LiveError, voice_agent_transport
from audio.live._chat_audio import ChatAudioCaller, ChatAudioLink, serve_chat_audio, wav_bytes, wav_to_pcm16k

RATE = 16_000
KEY = "sk-test-chat-audio-0123456789"


def _speechlike(seconds: float, rate: int = RATE, seed: int = 0) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    rng = np.random.default_rng(seed)
    tones = sum(np.sin(2 * np.pi * f * t + rng.uniform(0, 6)) for f in (310, 730, 1250, 2300))
    return (tones / 4 * (0.6 + 0.4 * np.sin(2 * np.pi * 4 * t)) * 12000).astype(np.int16)


def _frames(samples: np.ndarray) -> list[bytes]:
    pcm = samples.tobytes()
    return [pcm[i:i + FRAME_BYTES].ljust(FRAME_BYTES, b"\0") for i in range(0, len(pcm), FRAME_BYTES)]


def _wav_b64(samples: np.ndarray, rate: int) -> str:
    return base64.b64encode(wav_bytes(samples.tobytes(), rate)).decode("ascii")


def _completion(*, text: str | None = None, audio: str | None = None, transcript: str = "") -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if audio is not None:
        message["audio"] = {"id": "audio_1", "data": audio, "expires_at": 0, "transcript": transcript}
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}]}


Answer = Callable[[int, dict[str, Any]], Awaitable[web.Response]]


@dataclass
class Stub:
    """A loopback chat completions server: each request's body and query recorded, answered by ``answer``."""

    answer: Answer
    models_status: int = 200
    requests: list[dict[str, Any]] = field(default_factory=list)
    queries: list[dict[str, str]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    url: str = ""
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def models(self, request: web.Request) -> web.Response:
        self.headers.append(dict(request.headers))
        if self.models_status != 200:
            return web.json_response({"error": {"message": f"echo {request.headers.get('Authorization')}"}},
                                     status=self.models_status)
        return web.json_response({"object": "list", "data": [{"id": "listed-model", "object": "model",
                                                               "created": 0, "owned_by": "x"}]})

    async def completions(self, request: web.Request) -> web.Response:
        self.requests.append(await request.json())
        self.queries.append(dict(request.query))
        self.arrived.set()
        return await self.answer(len(self.requests), self.requests[-1])


@pytest.fixture
async def serve() -> AsyncIterator[Callable[..., Awaitable[Stub]]]:
    runners: list[web.AppRunner] = []

    async def start(answer: Answer, **kwargs: Any) -> Stub:
        stub = Stub(answer, **kwargs)
        app = web.Application(client_max_size=64 << 20)
        app.router.add_get("/v1/models", stub.models)
        app.router.add_post("/v1/chat/completions", stub.completions)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runners.append(runner)
        stub.url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
        return stub

    yield start
    for runner in runners:
        await runner.cleanup()


class Ear:
    """What the link plays into the patient's pipeline, and how it hung up."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.hung_up: list[str | None] = []

    async def hear(self, frame: InputAudioRawFrame) -> None:
        assert frame.sample_rate == RATE and frame.num_channels == 1 and len(frame.audio) == FRAME_BYTES
        self.frames.append(frame.audio)

    async def hang_up(self, reason: str | None = None) -> None:
        self.hung_up.append(reason)

    @property
    def voiced(self) -> int:
        return sum(1 for f in self.frames if np.any(np.frombuffer(f, dtype=np.int16)))


async def _until(condition: Callable[[], bool], seconds: float = 30.0) -> None:
    for _ in range(int(seconds / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("timed out")


async def _say(link: ChatAudioLink, seconds: float, *, seed: int = 0, then_silence_s: float = 0.8) -> None:
    """A patient line as the pacer plays it: speech, then zeros (no clock: the link counts frames)."""
    for frame in _frames(_speechlike(seconds, seed=seed)) + [bytes(FRAME_BYTES)] * int(then_silence_s / 0.02):
        await link.speak(frame)


def _sent_wav(part: dict[str, Any]) -> tuple[int, int, int, int]:
    assert part["type"] == "input_audio" and part["input_audio"]["format"] == "wav"
    with wave.open(io.BytesIO(base64.b64decode(part["input_audio"]["data"])), "rb") as w:
        return w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()


def _settings(**kwargs: Any) -> AgentLinkSettings:
    return AgentLinkSettings(instructions="You are a triage nurse.", **kwargs)


async def test_each_patient_line_is_one_request_with_the_prompt_the_history_and_the_audio(serve: Any) -> None:
    """Two lines: two requests; the second carries the first line's very WAV and the agent's transcript; the
    agent's 24 kHz WAV is played at 16 kHz, 20 ms per 20 ms, and its transcript kept on the link."""
    reply = _speechlike(0.6, rate=24_000, seed=3)

    async def answer(n: int, _body: dict[str, Any]) -> web.Response:
        return web.json_response(_completion(audio=_wav_b64(reply, 24_000), transcript=f"Reply {n}."))

    stub = await serve(answer)
    link, ear = ChatAudioLink(stub.url, _settings(api_key=SecretStr(KEY))), Ear()
    await link.open(ear.hear, ear.hang_up)
    try:
        assert link.model == "listed-model"  # no --model: the first model the endpoint lists
        assert stub.headers[0]["Authorization"] == f"Bearer {KEY}"
        await _say(link, 1.0)
        await _until(lambda: len(link.replies) == 1 and ear.voiced >= 28)
        await _until(lambda: not link.playing)
        await _say(link, 0.5, seed=1)
        await _until(lambda: len(link.replies) == 2)
        await _until(lambda: not link.playing)
    finally:
        await link.close()
        await link.close()  # idempotent
    first, second = stub.requests
    assert first["model"] == "listed-model" and first["modalities"] == ["text", "audio"]
    assert first["audio"] == {"voice": "alloy", "format": "wav"}
    system, user = first["messages"]
    assert system == {"role": "system", "content": "You are a triage nurse."}
    (part,) = user["content"]
    channels, width, rate, n = _sent_wav(part)
    assert (channels, width, rate) == (1, 2, RATE) and 1.0 * RATE <= n <= 1.2 * RATE  # the line, trailing pause cut
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "user"]
    assert second["messages"][1] == user and second["messages"][2]["content"] == "Reply 1."
    assert 0.45 * RATE <= _sent_wav(second["messages"][3]["content"][0])[3] <= 0.7 * RATE
    assert stub.queries == [{}, {}]  # no scenario hint unless asked for
    assert [r.transcript for r in link.replies] == ["Reply 1.", "Reply 2."]
    assert abs(link.replies[0].audio_s - 0.6) < 0.01
    assert ear.voiced >= 2 * 28  # both replies heard (0.6 s each: 30 frames, the last may be partly silent)


async def test_the_reply_is_paced_in_real_time_and_the_hint_sent_only_when_set(serve: Any) -> None:
    reply = _speechlike(1.0, seed=4)

    async def answer(_n: int, _body: dict[str, Any]) -> web.Response:
        return web.json_response(_completion(audio=_wav_b64(reply, RATE), transcript="Hello."))

    stub = await serve(answer)
    link, ear = ChatAudioLink(stub.url, _settings(model="qwen2-audio", scenario_hint="viral_uri")), Ear()
    await link.open(ear.hear, ear.hang_up)
    loop = asyncio.get_running_loop()
    try:
        await _say(link, 0.4)
        await _until(lambda: ear.voiced > 0)
        began = loop.time()
        await _until(lambda: ear.voiced >= 50)
        took = loop.time() - began
    finally:
        await link.close()
    assert stub.requests[0]["model"] == "qwen2-audio" and stub.queries == [{"encsim_scenario": "viral_uri"}]
    assert took >= 0.9  # 49 frames after the first: 0.98 s of playout; a busy machine only makes it later
    assert stub.headers[0]["Authorization"] == "Bearer EMPTY"  # no key: vLLM's convention, never OPENAI_API_KEY


async def test_patient_speech_over_the_reply_stops_its_playout(serve: Any) -> None:
    async def answer(_n: int, _body: dict[str, Any]) -> web.Response:
        return web.json_response(_completion(audio=_wav_b64(_speechlike(5.0), RATE), transcript="A long one."))

    stub = await serve(answer)
    link, ear = ChatAudioLink(stub.url, _settings()), Ear()
    await link.open(ear.hear, ear.hang_up)
    try:
        await _say(link, 0.4)
        await _until(lambda: ear.voiced > 5)
        assert link.playing
        await link.speak(_frames(_speechlike(0.02, seed=9))[0])  # the patient barges in
        assert not link.playing
        heard = ear.voiced
        await asyncio.sleep(0.1)
        assert ear.voiced <= heard + 1  # at most the frame already on its way
    finally:
        await link.close()
    assert len(stub.requests) == 1  # the barge-in line is not over yet: nothing sent for it


async def test_a_line_spoken_while_a_request_is_in_flight_goes_with_the_next_request(serve: Any) -> None:
    release = asyncio.Event()

    async def answer(n: int, _body: dict[str, Any]) -> web.Response:
        if n == 1:
            await release.wait()
        return web.json_response(_completion(audio=_wav_b64(_speechlike(0.2), RATE), transcript=f"Reply {n}."))

    stub = await serve(answer)
    link, ear = ChatAudioLink(stub.url, _settings()), Ear()
    await link.open(ear.hear, ear.hang_up)
    try:
        await _say(link, 0.4)
        await _until(lambda: len(stub.requests) == 1)
        await _say(link, 0.3, seed=2)  # finished while the first request waits
        assert len(stub.requests) == 1
        release.set()
        await _until(lambda: len(link.replies) == 2)
    finally:
        await link.close()
    assert [m["role"] for m in stub.requests[1]["messages"]] == ["system", "user", "assistant", "user"]
    assert stub.requests[1]["messages"][2]["content"] == "Reply 1." and not ear.hung_up


async def test_a_text_reply_is_voiced_with_piper_and_asks_for_no_audio(serve: Any) -> None:
    async def answer(_n: int, _body: dict[str, Any]) -> web.Response:
        return web.json_response(_completion(text="How long have you had the cough?"))

    stub = await serve(answer)
    link, ear = ChatAudioLink(stub.url, _settings(reply="text")), Ear()
    await link.open(ear.hear, ear.hang_up)
    try:
        await _say(link, 0.4)
        await _until(lambda: len(link.replies) == 1, 120)
        await _until(lambda: not link.playing, 60)
    finally:
        await link.close()
    assert "modalities" not in stub.requests[0] and "audio" not in stub.requests[0]
    (reply,) = link.replies
    assert reply.text == "How long have you had the cough?" and reply.transcript is None
    assert reply.audio_s > 1.0 and ear.voiced >= 0.8 * reply.audio_s / 0.02  # Piper's voice was played out


@pytest.mark.parametrize(("status", "expected"), [(401, "HTTP 401"), (403, "HTTP 403")])
async def test_a_refused_key_fails_the_open_with_one_line_without_the_key(serve: Any, status: int,
                                                                          expected: str) -> None:
    async def answer(_n: int, _body: dict[str, Any]) -> web.Response:
        raise AssertionError("no request after a refused key")

    stub = await serve(answer, models_status=status)
    link = ChatAudioLink(stub.url, _settings(api_key=SecretStr(KEY)))
    with pytest.raises(LiveError) as caught:
        await link.open(Ear().hear, Ear().hang_up)
    message = str(caught.value)
    assert expected in message and "--api-key-env" in message and KEY not in message and "\n" not in message


async def test_no_models_route_is_no_failure_and_nothing_listening_is_one_line(serve: Any) -> None:
    async def answer(_n: int, _body: dict[str, Any]) -> web.Response:
        return web.json_response(_completion(text="Hi."))

    stub = await serve(answer, models_status=404)
    lines: list[str] = []
    link = ChatAudioLink(stub.url, _settings(), log=lines.append)
    await link.open(Ear().hear, Ear().hang_up)
    await link.close()
    assert link.model == "default" and any("HTTP 404" in line for line in lines)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(LiveError, match=r"^chat-audio: connection refused at http://127\.0\.0\.1:\d+/v1"):
        await ChatAudioLink(f"http://127.0.0.1:{port}/v1", _settings()).open(Ear().hear, Ear().hang_up)


@pytest.mark.parametrize(("kind", "expected"), [
    ("500", "chat-audio: HTTP 500 from POST"),
    ("not json", "chat-audio: a malformed reply to POST"),
    ("no choices", "chat-audio: a malformed reply to POST"),
    ("bad wav", "chat-audio: a malformed reply to POST"),
    ("text only", "has no audio (message.audio) though audio was asked for; for a model that answers in text use "
                  "--agent-reply text"),
    ("hangs", "chat-audio: no reply to POST"),
])
async def test_a_failed_turn_hangs_up_with_one_line(serve: Any, kind: str, expected: str) -> None:
    async def answer(_n: int, _body: dict[str, Any]) -> web.Response:
        if kind == "500":
            return web.json_response({"error": {"message": f"boom {KEY}"}}, status=500)
        if kind == "not json":
            return web.Response(text="<html>oops</html>", content_type="application/json")
        if kind == "no choices":
            return web.json_response({"id": "x", "object": "chat.completion"})
        if kind == "bad wav":
            return web.json_response(_completion(audio=base64.b64encode(b"RIFFnope").decode(), transcript="x"))
        if kind == "text only":
            return web.json_response(_completion(text="I only write."))
        await asyncio.sleep(30)
        raise AssertionError("the client gave up long ago")

    stub = await serve(answer)
    link, ear = ChatAudioLink(stub.url, _settings(api_key=SecretStr(KEY)), request_timeout_s=1.0), Ear()
    await link.open(ear.hear, ear.hang_up)
    try:
        await _say(link, 0.4)
        await _until(lambda: bool(ear.hung_up))
    finally:
        await link.close()
    (reason,) = ear.hung_up
    assert reason is not None and reason.startswith("chat-audio:") and expected in reason
    assert "\n" not in reason and KEY not in reason and len(stub.requests) == 1


def test_the_caller_is_a_bridge_and_wavs_round_trip() -> None:
    caller = voice_agent_transport("chat-audio")
    assert isinstance(caller, ChatAudioCaller) and caller.protocol == "chat-audio"
    transport = caller.pipecat_transport("http://127.0.0.1:9/v1", _settings())
    assert isinstance(transport, BridgeTransport) and transport.link is caller.link
    with pytest.raises(LiveError, match="no pipecat serializer"):
        _ = caller.serializer
    tone = _speechlike(0.5, rate=8000)
    stereo = np.repeat(tone, 2)
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(stereo.tobytes())
    assert len(wav_to_pcm16k(out.getvalue())) == 2 * len(tone) * 2  # 8 kHz stereo -> 16 kHz mono
    assert wav_to_pcm16k(wav_bytes(tone.tobytes(), RATE)) == tone.tobytes()
    with pytest.raises(ValueError, match="not a WAV file"):
        wav_to_pcm16k(b"nope")


async def test_the_served_agent_hears_the_audio_once_and_answers_in_text_or_audio(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """serve_chat_audio through the SDK: Whisper hears the patient's WAV (once, however often it is resent), the
    agent gets the history and the hint, a text or an audio reply comes back; bad requests are 400 JSON errors.
    The link itself then calls it with --agent-reply text: the served text is voiced and played."""
    import openai

    from audio import stt
    from audio.tts import DETERMINISTIC, PiperTTS

    tts = PiperTTS()
    seen: list[tuple[str | None, list[tuple[str, str]], int]] = []

    def respond_for(hint: str | None) -> Callable[[list[tuple[str, str]], int], Awaitable[str]]:
        async def respond(history: list[tuple[str, str]], agent_turn: int) -> str:
            seen.append((hint, history, agent_turn))
            return "Thank you. How long have you had it?"
        return respond

    ready: asyncio.Queue[str] = asyncio.Queue()
    stop = asyncio.Event()
    server = asyncio.create_task(serve_chat_audio(port=0, respond_for=respond_for, tts=tts, announce=lambda _m: None,
                                                  on_ready=ready.put_nowait, stop=stop))
    calls = 0
    real = stt.transcribe

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        return real(*args, **kwargs)

    try:
        url = await asyncio.wait_for(ready.get(), 120)  # Whisper and Piper warmed up by now
        monkeypatch.setattr(stt, "transcribe", counting)
        speech = tts.synthesize("I have a sore throat.", settings=DETERMINISTIC)
        line = _wav_b64((np.clip(speech.samples, -1, 1) * 32767).astype(np.int16), speech.sample_rate)
        client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0)
        user: Any = {"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": line,
                                                                                         "format": "wav"}}]}
        first = await client.chat.completions.create(model="m", messages=[{"role": "system", "content": "s"}, user],
                                                     extra_query={"encsim_scenario": "viral_uri"})
        assert first.choices[0].message.content == "Thank you. How long have you had it?"
        second = await client.chat.completions.create(
            model="m", modalities=["text", "audio"], audio={"voice": "alloy", "format": "wav"},
            messages=[user, {"role": "assistant", "content": "How can I help?"}, user])
        audio = second.choices[0].message.audio
        assert audio is not None and audio.transcript == "Thank you. How long have you had it?"
        assert len(wav_to_pcm16k(base64.b64decode(audio.data))) > RATE  # over half a second of speech
        assert calls == 1  # the resent line was not transcribed again
        (hint1, history1, turn1), (hint2, history2, turn2) = seen
        assert hint1 == "viral_uri" and hint2 is None and (turn1, turn2) == (1, 2)
        assert "sore throat" in history1[0][1].lower() and history1[0][0] == "patient"
        assert history2 == [history1[0], ("agent", "How can I help?"), history1[0]]
        assert [m.id for m in (await client.models.list()).data] == ["encsim-voice-agent"]
        bads: list[Any] = [[], [{"role": "assistant", "content": "x"}],
                           [{"role": "user", "content": [{"type": "image"}]}],
                           [{"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "!!"}}]}]]
        for bad in bads:
            with pytest.raises(openai.BadRequestError) as caught:
                await client.chat.completions.create(model="m", messages=bad)
            assert caught.value.status_code == 400 and caught.value.body["message"]  # type: ignore[index]
        await client.close()

        link, ear = ChatAudioLink(url, _settings(reply="text")), Ear()
        await link.open(ear.hear, ear.hang_up)
        try:
            await _say(link, 0.01)  # what Whisper hears does not matter to this agent
            await _until(lambda: len(link.replies) == 1, 120)
            await _until(lambda: not link.playing, 60)
        finally:
            await link.close()
        assert link.replies[0].text == "Thank you. How long have you had it?" and ear.voiced > 50
    finally:
        monkeypatch.undo()
        stop.set()
        await asyncio.wait_for(server, 30)
    assert json.dumps(seen)  # plain data went to the agent
