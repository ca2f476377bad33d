"""Audio chat completions (``chat-audio``): the patient calls an audio LLM by request and reply; the built-in agent.

How audio LLMs served by vLLM (Qwen2-Audio, Ultravox, Voxtral) and audio chat models are called: OpenAI-compatible
chat completions whose user messages carry ``input_audio`` content parts. There is no stream and no socket: a call
is a series of requests, one per turn of the agent's, through the official ``openai`` SDK (``AsyncOpenAI``).

The caller (``ChatAudioCaller``, ``--agent-protocol chat-audio``; ``ChatAudioLink`` is its ``AgentLink``):

* ``open``: ``GET {url}/models`` (``client.models.list()``) checks the endpoint is there and the key accepted
  before the call starts: HTTP 401/403 or a refused connection is a ``LiveError`` of one line (the key is never in
  it); a 404 (many servers have no ``/models``) or any other answer lets the call go on. Without ``--model`` the
  first model the endpoint lists is the model, else ``DEFAULT_MODEL``.
* the patient's audio arrives 20 ms at a time, zeros between lines; a line is over after ``END_OF_LINE_S`` of
  silence (well over the pause between two sentences of one line, ``SENTENCE_GAP_S``); that silence is part of
  every latency the call measures, as a real endpointer's would be. The line, trimmed, becomes a WAV (16 kHz mono
  int16, base64) and one request is sent: the system message (``AgentLinkSettings.instructions``), the call so far
  (the patient's earlier lines as ``input_audio`` parts, their WAVs kept, the agent's replies as assistant text) and
  the new line as a user message. ``extra_query={"encsim_scenario": ID}`` only with ``--agent-scenario-hint``.
  The SDK does not retry (``max_retries=0``): a failed turn is reported, not hidden.
* ``--agent-reply audio`` (the default): ``modalities=["text", "audio"]``, ``audio={"voice": DEFAULT_VOICE,
  "format": "wav"}``; ``message.audio.data`` is decoded, resampled to 16 kHz and played into the patient's pipeline
  in real time, 20 ms per 20 ms, silence between replies, as a phone line plays it. The agent's own transcript
  (``message.audio.transcript``) is the history's assistant text and is kept on the link (``replies``) and
  logged; the record keeps what the patient heard through Whisper. A reply without audio ends the call with a line
  saying to use ``--agent-reply text``.
* ``--agent-reply text`` (audio-in, text-out models: most of vLLM's): the text is voiced with the project's Piper
  (the clinician voice, ``audio.channel.CLINICIAN_STYLE``) and played out the same way, so the patient still
  hears it through its Whisper. The call's speech measures (speaking rate, pauses, latency after the reply
  arrived) then reflect our voice, not the agent's.
* Turn taking: one request at a time. A patient line finished while a request is in flight is sent with the next
  request, at once after that reply arrived. Patient speech while a reply plays stops the playout (barge-in: what
  was not played is not heard; the history still holds the whole reply).
* Mid-call, an HTTP error status, a timeout (``REQUEST_TIMEOUT_S``), a lost connection or a malformed reply ends
  the call (``hang_up(reason)``) with one line naming it, kept in the call's errors.

The served side (``serve_chat_audio``, ``encsim serve-agent --protocol chat-audio``): an aiohttp server on loopback
at ``/v1/chat/completions`` and ``GET /v1/models``. Each ``input_audio`` part is transcribed with the project's
Whisper (cached by content hash, so a resent history is not transcribed again); the built-in agent answers the
transcribed call (``respond_for(hint)(history, agent_turn)``, the hint from ``?encsim_scenario=``; the request's
system message is not used: the built-in agent has its own) and the reply is an SDK ``ChatCompletion``: text, or
with ``modalities`` including ``audio`` a Piper WAV with its transcript. Requests are served concurrently (Whisper
and Piper in threads); a bad request is an OpenAI-style JSON error with HTTP 400, an agent that fails HTTP 500.
Over stateless HTTP there are no calls to count: the server runs until cancelled or ``stop``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import io
import json
import time
import uuid
import wave
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from aiohttp import web
from pipecat.frames.frames import InputAudioRawFrame
from pipecat.serializers.base_serializer import FrameSerializer
from pipecat.transports.base_transport import BaseTransport

from audio._pcm import RATE_16K, float_to_int16, int16_samples, resample_int16
from audio.live._bridge import AgentLink, BridgeTransport, HangUp, Hear
from audio.live._settings import LiveError
from audio.live._speaking import _SENTENCE, FRAME_BYTES, SENTENCE_GAP_S, _to_wire_pcm, every_frame, speakable
from audio.live._transport import SCENARIO_HINT_PARAM, AgentLinkSettings, AgentProtocol, VoiceAgentTransport

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletionContentPartInputAudioParam, ChatCompletionMessageParam

    from audio.tts import PiperTTS

END_OF_LINE_S = 0.6      # this much silence after the patient's speech ends its line (SENTENCE_GAP_S is 0.12 s)
SILENCE_PEAK = 8         # an int16 frame whose peak is at most this is silence (the pacer sends exact zeros)
LINE_PAD_S = 0.1         # silence kept after the last voiced frame of a line
REQUEST_TIMEOUT_S = 120.0  # one turn's request may take this long (a local audio LLM on CPU is slow)
OPEN_TIMEOUT_S = 10.0    # GET /models before the call
DEFAULT_MODEL = "default"
DEFAULT_VOICE = "alloy"
MAX_REQUEST_BYTES = 64 << 20  # the served side: a long call's history of WAVs fits
TRANSCRIPT_CACHE = 512


def wav_bytes(pcm: bytes, rate: int = RATE_16K) -> bytes:
    """A mono 16-bit WAV file holding ``pcm`` (int16 samples at ``rate``)."""
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm)
    return out.getvalue()


def wav_to_pcm16k(data: bytes) -> bytes:
    """16 kHz mono int16 PCM of a 16-bit PCM WAV file (any rate, channels averaged).

    Raises:
        ValueError: not a WAV file, or not 16-bit PCM.
    """
    try:
        with wave.open(io.BytesIO(data), "rb") as w:
            width, channels, rate = w.getsampwidth(), w.getnchannels(), w.getframerate()
            frames = w.readframes(w.getnframes())
    except (wave.Error, EOFError) as exc:
        raise ValueError(f"not a WAV file ({exc})") from None
    if width != 2:
        raise ValueError(f"a WAV of {8 * width}-bit samples (16-bit PCM expected)")
    samples = int16_samples(frames)
    if channels > 1:
        samples = samples[:len(samples) - len(samples) % channels].reshape(-1, channels).mean(axis=1)
        samples = np.round(samples).astype(np.int16)
    return resample_int16(samples, rate, RATE_16K).tobytes()


def _audio_part(wav_b64: str) -> ChatCompletionContentPartInputAudioParam:
    return {"type": "input_audio", "input_audio": {"data": wav_b64, "format": "wav"}}


@dataclass(frozen=True)
class ChatAudioReply:
    """One reply of the agent's: its text (``message.content``, else the audio's transcript) and timing.

    Attributes:
        text: what the history keeps as the agent's turn.
        transcript: the agent's own transcript of its audio (``message.audio.transcript``), None for text replies.
        audio_s: seconds of audio to play (the agent's, or Piper's for a text reply; 0 until voiced).
        request_s: seconds from the request to its reply.
    """

    text: str
    transcript: str | None
    audio_s: float
    request_s: float


class ChatAudioLink(AgentLink):
    """One call's link to an audio chat completions endpoint (module docstring).

    Args:
        url: the endpoint's base URL (``http://127.0.0.1:8000/v1``).
        settings: the model, key, system prompt, reply kind and scenario hint.
        log: where the agent's transcripts and what was ignored go, one line each.
        tts: the Piper voice for text replies; None loads the default when first needed.
        request_timeout_s: how long one turn's request may take.
        end_of_line_s: the silence that ends a patient line.
    """

    def __init__(self, url: str, settings: AgentLinkSettings, *, log: Callable[[str], None] = lambda _line: None,
                 tts: PiperTTS | None = None, request_timeout_s: float = REQUEST_TIMEOUT_S,
                 end_of_line_s: float = END_OF_LINE_S) -> None:
        self.url = url.rstrip("/")
        self.settings = settings
        self.model = settings.model or DEFAULT_MODEL
        self.replies: list[ChatAudioReply] = []
        self._log = log
        self._tts = tts
        self._timeout = request_timeout_s
        self._end_of_line_s = end_of_line_s
        self._client: AsyncOpenAI | None = None
        self._hear: Hear | None = None
        self._hang_up: HangUp | None = None
        self._line = bytearray()
        self._quiet_s = 0.0
        self._pending: list[str] = []  # the patient's finished lines not sent yet (base64 WAV)
        self._history: list[tuple[str, Any]] = []  # ("patient", [base64 WAV, ...]) or ("agent", text)
        self._playout = bytearray()
        self._request: asyncio.Task[None] | None = None
        self._player: asyncio.Task[None] | None = None
        self._closed = False
        self._ended = False

    def _key(self) -> str:
        return self.settings.api_key.get_secret_value() if self.settings.api_key is not None else "EMPTY"

    def _scrub(self, text: str) -> str:
        """``text`` on one line, at most 200 characters, with the key blanked out (a server may echo it)."""
        key = self._key()
        line = " ".join(text.split())
        return (line.replace(key, "***") if len(key) >= 4 else line)[:200]

    async def open(self, hear: Hear, hang_up: HangUp) -> None:
        """Check the endpoint and the key (``GET /models``), then start the playout (module docstring).

        Raises:
            LiveError: HTTP 401/403, a refused connection or no answer: one line, never the key.
        """
        import openai

        self._client = openai.AsyncOpenAI(base_url=self.url, api_key=self._key(), max_retries=0,
                                          timeout=self._timeout)
        try:
            page = await self._client.models.list(timeout=OPEN_TIMEOUT_S)
            if self.settings.model is None and page.data:
                self.model = page.data[0].id
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            await self._drop_client()
            raise LiveError(f"chat-audio: HTTP {exc.status_code} from GET {self.url}/models: the endpoint refused "
                            "the API key; set the right key in the variable --api-key-env names.") from None
        except openai.APITimeoutError:
            await self._drop_client()
            raise LiveError(f"chat-audio: no answer from GET {self.url}/models within {OPEN_TIMEOUT_S:g} s.") from None
        except openai.APIConnectionError:
            await self._drop_client()
            raise LiveError(f"chat-audio: connection refused at {self.url} (GET /models): nothing answers "
                            "there; start the agent's server or correct --agent-url.") from None
        except openai.APIStatusError as exc:  # 404 and the like: many servers have no /models
            self._log(f"chat-audio: GET {self.url}/models answered HTTP {exc.status_code}; calling anyway")
        self._hear, self._hang_up = hear, hang_up
        self._player = asyncio.create_task(self._play())

    async def _drop_client(self) -> None:
        if self._client is not None:
            try:
                await self._client.close()
            except Exception:  # closing a client that never connected
                pass
            self._client = None

    async def speak(self, pcm: bytes) -> None:
        """20 ms of the patient's audio: a line ends after ``end_of_line_s`` of silence and is sent (docstring)."""
        if self._closed or self._hear is None:
            return
        voiced = bool(pcm) and int(np.max(np.abs(int16_samples(pcm).astype(np.int32)))) > SILENCE_PEAK
        if voiced:
            if self._playout:  # the patient talks over the reply: stop the playout (barge-in)
                self._playout.clear()
            self._line += pcm
            self._quiet_s = 0.0
            return
        if not self._line:
            return
        self._line += pcm
        self._quiet_s += len(pcm) / 2 / RATE_16K
        if self._quiet_s >= self._end_of_line_s:
            keep = len(self._line) - int(max(0.0, self._quiet_s - LINE_PAD_S) * RATE_16K) * 2
            self._pending.append(base64.b64encode(wav_bytes(bytes(self._line[:keep]))).decode("ascii"))
            self._line.clear()
            self._quiet_s = 0.0
            if self._request is None:
                self._request = asyncio.create_task(self._ask())

    def messages(self) -> list[ChatCompletionMessageParam]:
        """The request's messages: the system prompt, then the call so far (module docstring)."""
        out: list[ChatCompletionMessageParam] = [{"role": "system", "content": self.settings.instructions}]
        for who, what in self._history:
            if who == "patient":
                out.append({"role": "user", "content": [_audio_part(w) for w in what]})
            else:
                out.append({"role": "assistant", "content": what})
        return out

    async def _ask(self) -> None:
        """Send the pending lines, play the reply; again while lines came in meanwhile; a failure hangs up."""
        try:
            while self._pending and not self._closed:
                lines, self._pending = self._pending, []
                self._history.append(("patient", lines))
                reason = await self._turn()
                if reason is not None:
                    await self._end(reason)
                    return
        finally:
            self._request = None

    async def _turn(self) -> str | None:
        """One request and its reply into the playout; returns why the call must end, or None."""
        import openai

        assert self._client is not None
        audio = self.settings.reply == "audio"
        extra: dict[str, Any] = {}
        if audio:
            extra = {"modalities": ["text", "audio"], "audio": {"voice": DEFAULT_VOICE, "format": "wav"}}
        if self.settings.scenario_hint is not None:
            extra["extra_query"] = {SCENARIO_HINT_PARAM: self.settings.scenario_hint}
        where = f"POST {self.url}/chat/completions"
        asked = time.monotonic()
        try:
            completion = await self._client.chat.completions.create(model=self.model, messages=self.messages(),
                                                                    **extra)
        except openai.APITimeoutError:
            return f"chat-audio: no reply to {where} within {self._timeout:g} s"
        except openai.APIStatusError as exc:
            return f"chat-audio: HTTP {exc.status_code} from {where}: {self._scrub(exc.message)}"
        except openai.APIConnectionError:
            return f"chat-audio: the connection to {self.url} was lost during {where}"
        except (openai.OpenAIError, ValueError, TypeError) as exc:  # a body the SDK could not read (not JSON)
            return f"chat-audio: a malformed reply to {where}: {self._scrub(f'{type(exc).__name__}: {exc}')}"
        request_s = time.monotonic() - asked
        try:
            message = completion.choices[0].message
            text, transcript, pcm = message.content, None, None
            if audio:
                if message.audio is None:
                    return (f"chat-audio: the reply to {where} has no audio (message.audio) though audio was "
                            "asked for; for a model that answers in text use --agent-reply text")
                transcript = message.audio.transcript
                wav = base64.b64decode(message.audio.data, validate=True)
                pcm = await asyncio.to_thread(wav_to_pcm16k, wav)
                text = text or transcript
        except (AttributeError, IndexError, TypeError, ValueError, binascii.Error) as exc:
            return f"chat-audio: a malformed reply to {where}: {self._scrub(f'{type(exc).__name__}: {exc}')}"
        if not isinstance(text, str) or not text.strip():
            return f"chat-audio: a malformed reply to {where}: no text and no audio transcript"
        self._history.append(("agent", text))
        if transcript is not None:
            self._log(f"chat-audio: the agent's transcript of its reply: {self._scrub(transcript)}")
        if pcm is None:
            pcm = await self._voice(text)
        else:
            self._playout += pcm
        self.replies.append(ChatAudioReply(text=text, transcript=transcript, audio_s=len(pcm) / 2 / RATE_16K,
                                           request_s=round(request_s, 3)))
        return None

    async def _voice(self, text: str) -> bytes:
        """``text`` in the clinician's Piper voice, each sentence into the playout as soon as it is ready."""
        from audio.channel import CLINICIAN_STYLE
        from audio.tts import DETERMINISTIC, PiperTTS

        if self._tts is None:
            self._tts = await asyncio.to_thread(PiperTTS)
        voiced = bytearray()
        for n, sentence in enumerate(s for s in _SENTENCE.split(speakable(text)) if s.strip()):
            speech = await self._tts.synthesize_async(sentence, settings=DETERMINISTIC, style=CLINICIAN_STYLE)
            pcm = await asyncio.to_thread(_to_wire_pcm, speech.samples, speech.sample_rate,
                                          gap_before_s=SENTENCE_GAP_S if n else 0.0)
            if self._closed:
                break
            self._playout += pcm
            voiced += pcm
        return bytes(voiced)

    async def _end(self, reason: str) -> None:
        if self._ended or self._hang_up is None:
            return
        self._ended = True
        self._log(reason)
        await self._hang_up(reason)

    async def _play(self) -> None:
        """The playout clock (``every_frame``): one frame every 20 ms, silence when nothing is to play."""
        silence = bytes(FRAME_BYTES)

        async def tick() -> None:
            frame = silence
            if self._playout:
                frame = bytes(self._playout[:FRAME_BYTES]).ljust(FRAME_BYTES, b"\0")
                del self._playout[:FRAME_BYTES]
            if self._hear is not None:
                await self._hear(InputAudioRawFrame(audio=frame, sample_rate=RATE_16K, num_channels=1))

        await every_frame(tick, running=lambda: not self._closed)

    @property
    def playing(self) -> bool:
        """Whether a reply is waiting to be played or playing."""
        return bool(self._playout)

    async def close(self) -> None:
        """Stop the request and the playout, close the client (idempotent, never raises)."""
        if self._closed:
            return
        self._closed = True
        tasks = [t for t in (self._request, self._player) if t is not None and t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._playout.clear()
        await self._drop_client()


class ChatAudioCaller(VoiceAgentTransport):
    """The patient calling an audio chat completions endpoint: a ``BridgeTransport`` over a ``ChatAudioLink``.

    ``serializer`` raises: nothing crosses a websocket (the bridge takes the patient's frames directly).

    Args:
        log: where the link's lines go.
        tts: the Piper voice for ``--agent-reply text``; None loads the default when first needed.
    """

    protocol: ClassVar[AgentProtocol] = "chat-audio"

    def __init__(self, *, log: Callable[[str], None] = lambda _line: None, tts: PiperTTS | None = None) -> None:
        self._log = log
        self._tts = tts
        self.link: ChatAudioLink | None = None

    @property
    def serializer(self) -> FrameSerializer:
        """None: chat-audio has no wire serializer (``pipecat_transport`` returns a ``BridgeTransport``).

        Raises:
            LiveError: always.
        """
        raise LiveError("chat-audio has no pipecat serializer: it is reached through a BridgeTransport")

    def pipecat_transport(self, url: str, link: AgentLinkSettings) -> BaseTransport:
        """A ``BridgeTransport`` over a new ``ChatAudioLink`` to ``url`` (kept as ``self.link``)."""
        self.link = ChatAudioLink(url, link, log=self._log, tts=self._tts)
        return BridgeTransport(self.link)


# ------------------------------------------------------------------------------------------------ the served side

Respond = Callable[[list[tuple[str, str]], int], Awaitable[str]]


class _BadRequest(LiveError):
    """A request the served side cannot answer: its message is the 400 error's."""


def _error(message: str, status: int = 400, kind: str = "invalid_request_error") -> web.Response:
    return web.json_response({"error": {"message": message, "type": kind, "param": None, "code": None}},
                             status=status)


class _Transcripts:
    """Whisper's text of each ``input_audio`` part, by the sha256 of its base64 (an LRU)."""

    def __init__(self) -> None:
        self._texts: OrderedDict[str, str] = OrderedDict()

    async def text(self, data: str) -> str:
        from audio import stt

        key = hashlib.sha256(data.encode("ascii", "replace")).hexdigest()
        if key in self._texts:
            self._texts.move_to_end(key)
            return self._texts[key]
        try:
            pcm = wav_to_pcm16k(base64.b64decode(data, validate=True))
        except (binascii.Error, ValueError) as exc:
            raise _BadRequest(f"input_audio.data is not base64 16-bit PCM WAV ({exc})") from None
        samples = int16_samples(pcm).astype(np.float32) / 32768.0
        transcript = await asyncio.to_thread(stt.transcribe, samples, sample_rate=RATE_16K)
        self._texts[key] = transcript.text.strip()
        if len(self._texts) > TRANSCRIPT_CACHE:
            self._texts.popitem(last=False)
        return self._texts[key]


async def _history(messages: Any, transcripts: _Transcripts) -> list[tuple[str, str]]:
    """The call as ``(speaker, text)`` pairs: user messages transcribed, assistant ones as they are."""
    if not isinstance(messages, list) or not messages:
        raise _BadRequest("messages must be a non-empty array")
    history: list[tuple[str, str]] = []
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("system", "developer", "user", "assistant"):
            raise _BadRequest(f"messages[{i}]: role must be system, user or assistant")
        if role in ("system", "developer"):
            continue  # the built-in agent has its own system prompt
        content = message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(parts, list):
            raise _BadRequest(f"messages[{i}].content must be a string or an array of parts")
        texts = []
        for part in parts:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif kind == "input_audio" and role == "user" and isinstance(part.get("input_audio"), dict) \
                    and isinstance(part["input_audio"].get("data"), str):
                texts.append(await transcripts.text(part["input_audio"]["data"]))
            else:
                raise _BadRequest(f"messages[{i}]: a content part of type {str(kind)[:40]!r} is not understood "
                                  "(text, and input_audio in user messages)")
        history.append(("patient" if role == "user" else "agent", " ".join(t for t in texts if t)))
    if not history or history[-1][0] != "patient":
        raise _BadRequest("the last message must be the user's")
    return history


async def serve_chat_audio(*, host: str = "127.0.0.1", port: int, respond_for: Callable[[str | None], Respond],
                           tts: PiperTTS | None = None, announce: Callable[[str], None],
                           on_ready: Callable[[str], Awaitable[None] | None] | None = None,
                           stop: asyncio.Event | None = None) -> None:
    """Serve the built-in voice agent as an audio chat completions endpoint until cancelled or ``stop`` is set.

    Args:
        host: a loopback address.
        port: the port (0: any free one).
        respond_for: the agent's turn for a call given the scenario hint (``sim.live.respond_for``).
        tts: the Piper voice for audio replies; None loads the default.
        announce: where the server's lines go (where it listens, each failed turn).
        on_ready: called with the base URL (``http://host:port/v1``) once it listens.
        stop: set it to stop the server.

    Raises:
        LiveError: ``host`` is not a loopback address, or the port is taken.
    """
    from openai.types.chat import ChatCompletion, ChatCompletionMessage
    from openai.types.chat.chat_completion import Choice
    from openai.types.chat.chat_completion_audio import ChatCompletionAudio
    from openai.types.model import Model

    from audio import stt
    from audio.channel import CLINICIAN_STYLE
    from audio.live._door import _check_loopback
    from audio.tts import DETERMINISTIC, PiperTTS

    _check_loopback(host, "--host")
    voice = tts or PiperTTS()

    def warm_up() -> None:  # load Whisper and Piper and run each once, so the first request is not the slow one
        speech = voice.synthesize("Hello, this is a warm up.", settings=DETERMINISTIC)
        stt.transcribe(speech.samples, sample_rate=speech.sample_rate)

    await asyncio.to_thread(warm_up)
    transcripts = _Transcripts()
    model_id = "encsim-voice-agent"

    async def models(_request: web.Request) -> web.Response:
        model = Model(id=model_id, created=0, object="model", owned_by="encounter-sim")
        return web.json_response({"object": "list", "data": [model.model_dump(exclude_none=True)]})

    async def completions(request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except (ValueError, UnicodeDecodeError):
            return _error("the request body is not JSON")
        if not isinstance(body, dict):
            return _error("the request body must be a JSON object")
        try:
            history = await _history(body.get("messages"), transcripts)
        except _BadRequest as exc:
            return _error(str(exc))
        modalities = body.get("modalities") or ["text"]
        if not isinstance(modalities, list) or not set(modalities) <= {"text", "audio"}:
            return _error("modalities must be an array of 'text' and 'audio'")
        agent_turn = sum(1 for who, _ in history if who == "agent") + 1
        hint = request.query.get(SCENARIO_HINT_PARAM)
        try:
            text = await respond_for(hint)(history, agent_turn)
        except Exception as exc:  # the agent under test failed this turn: the caller hears a 500, one line
            announce(f"chat-audio: the agent failed turn {agent_turn}: {type(exc).__name__}: {exc}")
            return _error(f"the agent failed: {type(exc).__name__}", 500, "server_error")
        audio = None
        if "audio" in modalities:
            speech = await voice.synthesize_async(speakable(text) or "Sorry.", settings=DETERMINISTIC,
                                                  style=CLINICIAN_STYLE)
            wav = wav_bytes(float_to_int16(speech.samples).tobytes(), speech.sample_rate)
            audio = ChatCompletionAudio(id=f"audio_{uuid.uuid4().hex}", data=base64.b64encode(wav).decode("ascii"),
                                        expires_at=int(time.time()) + 3600, transcript=text)
        message = ChatCompletionMessage(role="assistant", content=None if audio else text, audio=audio)
        completion = ChatCompletion(id=f"chatcmpl-{uuid.uuid4().hex}", object="chat.completion",
                                    created=int(time.time()), model=str(body.get("model") or model_id),
                                    choices=[Choice(index=0, finish_reason="stop", message=message)])
        return web.json_response(text=json.dumps(completion.model_dump(exclude_none=True)))

    app = web.Application(client_max_size=MAX_REQUEST_BYTES)
    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_get("/v1/models", models)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        try:
            await site.start()
        except OSError as exc:
            raise LiveError(f"--port {port}: cannot serve on {host}:{port} ({exc.strerror or exc}).") from None
        bound = runner.addresses[0][1] if runner.addresses else port
        url = f"http://{host}:{bound}/v1"
        announce(f"voice agent (chat-audio) listening on {url} (POST /chat/completions)")
        if on_ready is not None:
            maybe = on_ready(url)
            if maybe is not None:
                await maybe
        await (stop or asyncio.Event()).wait()
    finally:
        await runner.cleanup()
