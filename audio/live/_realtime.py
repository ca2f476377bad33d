"""The OpenAI Realtime protocol: the patient calls a speech-to-speech agent through the ``openai`` SDK.

The built-in voice agent serves the same protocol (``RealtimeBotSerializer``).

The wire is the Realtime API's: JSON events over a websocket at ``{base}/realtime?model=M``, audio base64 PCM16
mono at 24 kHz both ways. Every event either side sends is one of the SDK's models (``openai.types.realtime``),
never hand-written JSON.

The caller (``RealtimeCaller``, ``--agent-protocol openai-realtime``; its link ``RealtimeLink`` behind
``audio.live._bridge.BridgeTransport``), through ``AsyncOpenAI(...).realtime.connect(model=..., extra_query=...)``:

* ``--agent-url`` may be ``ws(s)://`` or ``http(s)://`` (``realtime_urls``): the SDK's ``websocket_base_url`` is the
  URL with a websocket scheme, ``base_url`` the same with an HTTP one, so ``ws://127.0.0.1:8766/v1`` is dialled as
  ``ws://127.0.0.1:8766/v1/realtime?model=gpt-realtime``. The model is ``--model`` (``AgentLinkSettings.model``) or
  ``DEFAULT_MODEL``. The key is ``AgentLinkSettings.api_key`` (``--api-key-env``); without one the SDK is given
  ``PLACEHOLDER_KEY``, never ``OPENAI_API_KEY`` from the environment (a test endpoint must not see a real key).
  The scenario hint (``--agent-scenario-hint``, scripted controls only) is an extra query parameter.
* on open: ``session.update`` (``SessionUpdateEvent``) with the frozen system prompt as ``instructions``, audio in
  and out ``audio/pcm`` at 24 kHz, output ``audio``, and turn detection: ``server`` -> ``server_vad``; ``commit`` ->
  none. The call starts when the server answers with ``session.updated`` (``session.created`` may come first).
  HTTP 401/403/404 or any other refusal of the handshake, a refused connection, an ``error`` event or a close
  before ``session.updated``, or no answer within ``OPEN_TIMEOUT_S``: ``LiveError`` with one line (the key is in
  no message).
* the patient's 20 ms frames of 16 kHz PCM: resampled to 24 kHz (``StreamResampler24``, over ``audio._pcm``) and
  sent with ``input_audio_buffer.append``. With ``commit`` turns the patient ends each of its lines itself: after
  ``COMMIT_AFTER_S`` of silence (all-zero frames; the gap between two sentences of one line is
  ``audio.live._speaking.SENTENCE_GAP_S``, 0.12 s) it sends ``input_audio_buffer.commit`` and ``response.create``
  (``response.cancel`` first if the agent's response is still running), and silence between lines is not streamed.
  With ``server`` turns everything is streamed: the server's VAD needs the silence to end a turn.
* ``response.output_audio.delta``: decoded, resampled to 16 kHz and played out in real time (Twilio's playout,
  ``audio.live._twilio.TwilioPlayout``: one 20 ms frame into the patient's pipeline every 20 ms, silence when
  there is nothing to play; a server sends faster than real time, the buffer absorbs it).
* ``response.output_audio_transcript.delta``/``.done``: the agent's own transcript of what it said, kept per
  response on the link (``RealtimeLink.transcript``, ``RealtimeCaller.transcript``), one line each, in order.
* ``input_audio_buffer.speech_started`` (the server heard the patient) while agent audio is waiting: the waiting
  audio is dropped, as Twilio's ``clear``; the server itself cancels its response (``interrupt_response``).
* mid-call, an ``error`` event, a message that is not a JSON event, or the server closing the connection (other
  than a normal close): the call ends as a hang-up, with the reason in one line in the call's errors.

The served side (``RealtimeBotSerializer``, ``encsim serve-agent --protocol openai-realtime``): a pipecat
``FrameSerializer`` behind the door. Client events are parsed with the SDK's ``RealtimeClientEvent`` union (a
pydantic ``TypeAdapter``); server events are the SDK's models, dumped with ``to_json``.

* a connection's first event is answered by ``session.created`` first (a serializer only speaks when spoken to:
  pipecat gives it no hook at accept time), then as below;
* ``session.update`` -> ``session.updated`` with the effective session: the client's instructions, PCM 24 kHz in
  and out, and ``server_vad`` whatever the client asked (the built-in agent always takes turns by its own VAD);
* ``input_audio_buffer.append`` (24 kHz PCM16 base64, at most 1 s) -> 16 kHz ``InputAudioRawFrame``s; the first
  valid one admits the caller (``_Door.audio_arrived``), as a first ``media`` does over Twilio;
* ``input_audio_buffer.commit`` -> ``input_audio_buffer.committed``; ``input_audio_buffer.clear`` -> ``.cleared``;
  ``response.create`` and ``response.cancel`` do nothing: the built-in agent answers when its own VAD and
  turn-taking say the caller's line has ended, so in commit mode a ``response.create`` is answered by the reply
  the agent was going to give anyway;
* the agent's ``OutputAudioRawFrame``s -> ``response.output_audio.delta`` (24 kHz), framed by ``response.created``
  before a reply's first audio and ``response.output_audio.done`` + ``response.done`` once no audio came for
  ``REPLY_END_S``; an ``InterruptionFrame`` (the caller spoke over the agent) -> ``input_audio_buffer.speech_started``
  and ``response.done`` with status ``cancelled``. No transcript events: the serializer sees only the frames the
  output transport writes (audio, interruptions, messages), never the agent's text;
* anything else (binary, not JSON, not a valid client event, an event the built-in agent does not take, audio that
  is not base64 or is too long) -> an ``error`` event naming it, and the connection stays open.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import math
import time
import uuid
from collections.abc import Callable
from typing import Any, ClassVar, cast
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import numpy as np
from openai.types.realtime import (
    InputAudioBufferClearedEvent,
    InputAudioBufferCommittedEvent,
    InputAudioBufferSpeechStartedEvent,
    RealtimeAudioConfig,
    RealtimeAudioConfigInput,
    RealtimeAudioConfigOutput,
    RealtimeClientEvent,
    RealtimeError,
    RealtimeErrorEvent,
    RealtimeResponse,
    RealtimeSessionCreateRequest,
    ResponseAudioDeltaEvent,
    ResponseAudioDoneEvent,
    ResponseCreatedEvent,
    ResponseDoneEvent,
    SessionCreatedEvent,
    SessionUpdatedEvent,
    SessionUpdateEvent,
)
from openai.types.realtime.realtime_audio_formats import AudioPCM
from openai.types.realtime.realtime_audio_input_turn_detection import ServerVad
from pipecat.frames.frames import (
    CancelFrame,
    EndFrame,
    Frame,
    InputAudioRawFrame,
    InterruptionFrame,
    OutputAudioRawFrame,
)
from pipecat.serializers.base_serializer import FrameSerializer
from pipecat.transports.base_transport import BaseTransport
from pydantic import BaseModel, TypeAdapter, ValidationError

from audio._pcm import RATE_16K, int16_samples, resample_int16
from audio.live._bridge import AgentLink, BridgeTransport, HangUp, Hear
from audio.live._door import _Door
from audio.live._settings import LiveError
from audio.live._speaking import every_frame
from audio.live._transport import SCENARIO_HINT_PARAM, AgentLinkSettings, AgentProtocol, VoiceAgentTransport
from audio.live._twilio import JITTER_S, TwilioPlayout

REALTIME_RATE = 24_000
DEFAULT_MODEL = "gpt-realtime"  # the session's model when --model is not given (OpenAI's speech-to-speech model)
PLACEHOLDER_KEY = "encsim-no-api-key"  # what the SDK is given without --api-key-env: never a real key
OPEN_TIMEOUT_S = 15.0  # the handshake and the answer to session.update must come within this
CLOSE_TIMEOUT_S = 2.0
COMMIT_AFTER_S = 0.5  # commit turns: this much silence ends the patient's line (> SENTENCE_GAP_S, 0.12 s)
REPLY_END_S = 0.5  # served side: no agent audio this long ends its response
MAX_APPEND_BYTES = REALTIME_RATE * 2  # one second of 24 kHz PCM16 in one append is the most the built-in agent takes
_CLIENT_EVENT: TypeAdapter[Any] = TypeAdapter(RealtimeClientEvent)


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


class StreamResampler24:
    """Streaming int16 resampling between 16 and 24 kHz with ``audio._pcm.resample_int16`` (overlap-save).

    ``resample_poly`` on each chunk alone would pad every chunk's edges with zeros (a 50 Hz buzz at 20 ms chunks);
    here each call resamples the chunk with ``CONTEXT`` input samples of the stream on either side and keeps only
    the output those cover fully, so the stream is resampled as if in one piece, ``CONTEXT`` samples late (2 ms).
    One instance per direction of a stream.

    Args:
        rate_from: the input's rate, 16000 or 24000.
        rate_to: the output's rate, the other one.
    """

    def __init__(self, rate_from: int, rate_to: int) -> None:
        if {rate_from, rate_to} != {RATE_16K, REALTIME_RATE}:
            raise ValueError(f"StreamResampler24 resamples 16000 <-> 24000 Hz, not {rate_from} -> {rate_to}")
        self.rate_from, self.rate_to = rate_from, rate_to
        g = math.gcd(rate_from, rate_to)
        self._up, self._down = rate_to // g, rate_from // g
        self.context = 16 * self._down  # well past resample_poly's filter half-length, a whole number of phases
        self._pending = np.zeros(self.context, dtype=np.int16)  # context before the next output, then the rest

    def resample(self, pcm: bytes) -> bytes:
        """``pcm`` (int16 at ``rate_from``) at ``rate_to``, continuing the stream of the previous calls."""
        if pcm:
            self._pending = np.concatenate([self._pending, int16_samples(pcm[:len(pcm) - len(pcm) % 2])])
        ready = (len(self._pending) - 2 * self.context) // self._down * self._down  # whole phases with context
        if ready <= 0:
            return b""
        out = resample_int16(self._pending[:ready + 2 * self.context], self.rate_from, self.rate_to)
        skip = self.context * self._up // self._down
        self._pending = self._pending[ready:]
        return out[skip:skip + ready * self._up // self._down].tobytes()


def realtime_urls(url: str) -> tuple[str, str, dict[str, str]]:
    """The SDK's ``base_url`` and ``websocket_base_url`` for ``--agent-url``, and the query it carried.

    ``ws://h/v1`` and ``http://h/v1`` both give ``("http://h/v1", "ws://h/v1", {})``; the SDK appends
    ``/realtime`` and ``?model=``.
    """
    parts = urlsplit(url)
    secure = parts.scheme in ("wss", "https")
    base = parts._replace(query="", fragment="")
    http = urlunsplit(base._replace(scheme="https" if secure else "http"))
    ws = urlunsplit(base._replace(scheme="wss" if secure else "ws"))
    return http, ws, dict(parse_qsl(parts.query, keep_blank_values=True))


def _handshake_failure(exc: BaseException, shown: str) -> str:
    """One line for why the websocket to ``shown`` could not be opened (never the key: it is in no exception)."""
    from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI

    if isinstance(exc, InvalidStatus):
        status = exc.response.status_code
        why = {401: "the API key was refused (--api-key-env)", 403: "the API key was refused (--api-key-env)",
               404: "no Realtime endpoint there (the SDK dials --agent-url + /realtime; check --agent-url)"}
        return f"HTTP {status} from {shown}: " + why.get(status, "the server refused the websocket handshake")
    if isinstance(exc, ConnectionRefusedError):
        return f"could not connect to {shown}: connection refused (nothing listens there)"
    if isinstance(exc, TimeoutError):
        return f"could not connect to {shown}: no answer within {OPEN_TIMEOUT_S:g} s"
    if isinstance(exc, InvalidURI):
        return f"could not connect to {shown}: not a websocket URL"
    if isinstance(exc, InvalidHandshake):
        return f"could not connect to {shown}: the websocket handshake failed ({type(exc).__name__})"
    if isinstance(exc, OSError):
        return f"could not connect to {shown}: {exc.strerror or type(exc).__name__}"
    return f"could not connect to {shown}: {type(exc).__name__}"


def _error_line(error: Any) -> str:
    """An ``error`` event's error as ``type/code: message`` (short, one line)."""
    kind = "/".join(str(x) for x in (getattr(error, "type", None), getattr(error, "code", None)) if x)
    message = " ".join(str(getattr(error, "message", "") or "").split())[:300]
    return f"{kind or 'error'}: {message}" if message else kind or "error"


def session_update(link: AgentLinkSettings) -> SessionUpdateEvent:
    """The caller's ``session.update``: the frozen prompt, PCM 24 kHz both ways, audio out, the turn detection."""
    pcm = AudioPCM(type="audio/pcm", rate=24000)
    turns = ServerVad(type="server_vad") if link.turn_detection == "server" else None
    return SessionUpdateEvent(type="session.update", session=RealtimeSessionCreateRequest(
        type="realtime", instructions=link.instructions, output_modalities=["audio"],
        audio=RealtimeAudioConfig(input=RealtimeAudioConfigInput(format=pcm, turn_detection=turns),
                                  output=RealtimeAudioConfigOutput(format=pcm))))


class RealtimeLink(AgentLink):
    """One call to a Realtime agent through the ``openai`` SDK's realtime client (module docstring).

    Args:
        url: ``--agent-url`` (ws, wss, http or https; see ``realtime_urls``).
        settings: the model, key, instructions, turn detection and scenario hint of the call.
        log: where notes about the call go, one line each (never the key).
        jitter_s: how long the playout waits after a talkspurt's first audio before playing it.
    """

    def __init__(self, url: str, settings: AgentLinkSettings, *, log: Callable[[str], None] = lambda _line: None,
                 jitter_s: float = JITTER_S) -> None:
        self.url, self.settings, self.model = url, settings, settings.model or DEFAULT_MODEL
        self._http, self._ws, self._query = realtime_urls(url)
        if settings.scenario_hint is not None:
            self._query[SCENARIO_HINT_PARAM] = settings.scenario_hint
        self.shown = f"{self._ws.rstrip('/')}/realtime"
        self.playout = TwilioPlayout(jitter_s=jitter_s)
        self._transcript: list[str] = []  # the agent's own transcript of each response, in order
        self.events: list[str] = []  # the type of every server event, in order (for tests and the log)
        self._log = log
        self._client: Any = None
        self._connection: Any = None
        self._hear: Hear | None = None
        self._hang_up: HangUp | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._partial: dict[str, list[str]] = {}  # response id -> transcript deltas so far
        self._to_agent = StreamResampler24(RATE_16K, REALTIME_RATE)
        self._from_agent = StreamResampler24(REALTIME_RATE, RATE_16K)
        self._response: str | None = None  # the agent's response in progress
        self._speaking = False  # commit turns: the patient's line has begun and is not committed yet
        self._silence_s = 0.0
        self._closed = False

    async def open(self, hear: Hear, hang_up: HangUp) -> None:
        """Dial, configure the session and wait for ``session.updated``; then read and play out in the background.

        Raises:
            LiveError: the handshake failed, or the server refused the session (module docstring).
        """
        from openai import AsyncOpenAI

        key = self.settings.api_key.get_secret_value() if self.settings.api_key is not None else PLACEHOLDER_KEY
        self._client = AsyncOpenAI(api_key=key, base_url=self._http, websocket_base_url=self._ws, max_retries=0)
        try:
            self._connection = await asyncio.wait_for(
                self._client.realtime.connect(model=self.model, extra_query=self._query).enter(), OPEN_TIMEOUT_S)
        except Exception as exc:  # every failure to connect is one line, never a traceback
            await self.close()
            raise LiveError(_handshake_failure(exc, self.shown)) from None
        try:
            await asyncio.wait_for(self._configure(), OPEN_TIMEOUT_S)
        except TimeoutError:
            await self.close()
            raise LiveError(f"{self.shown}: no session.updated within {OPEN_TIMEOUT_S:g} s of session.update (is "
                            "it a Realtime endpoint?)") from None
        except LiveError:
            await self.close()
            raise
        self._hear, self._hang_up = hear, hang_up
        self._tasks = [asyncio.create_task(self._read()), asyncio.create_task(self._play())]

    async def _configure(self) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            await self._connection.send(session_update(self.settings))
            while True:
                event = await self._connection.recv()
                self.events.append(str(getattr(event, "type", "?")))
                if event.type == "session.updated":
                    return
                if event.type == "error":
                    raise LiveError(f"{self.shown} refused the session: {_error_line(event.error)}")
        except ConnectionClosed as exc:
            raise LiveError(f"{self.shown} closed the connection before the session was ready (code "
                            f"{exc.rcvd.code if exc.rcvd else 'none'})") from None
        except (ValueError, AttributeError) as exc:
            raise LiveError(f"{self.shown}: not a Realtime server: a message that is not a JSON event "
                            f"({type(exc).__name__})") from None

    async def _end(self, reason: str | None) -> None:
        if self._closed or self._hang_up is None:
            return
        hang_up, self._hang_up = self._hang_up, None
        await hang_up(reason)

    async def _read(self) -> None:
        """The server's events until the connection ends (module docstring); the end is the agent's hang-up."""
        from websockets.exceptions import ConnectionClosed, ConnectionClosedOK

        try:
            while True:
                event = await self._connection.recv()
                kind = str(getattr(event, "type", "?"))
                self.events.append(kind)
                if kind == "error":
                    await self._end(f"an error event from {self.shown}: {_error_line(event.error)}")
                    return
                await self._on_event(kind, event)
        except ConnectionClosedOK:
            await self._end(None)
        except ConnectionClosed as exc:
            code = exc.rcvd.code if exc.rcvd else None
            await self._end(f"{self.shown} closed the connection mid-call (code {code or 'none'})")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a message that is not a JSON event, or one the SDK could not read
            await self._end(f"a protocol error from {self.shown}: {type(exc).__name__} (not a Realtime event)")

    async def _on_event(self, kind: str, event: Any) -> None:
        if kind == "response.output_audio.delta":
            try:
                pcm = base64.b64decode(event.delta, validate=True)
            except (binascii.Error, ValueError, TypeError):
                self._log("openai-realtime: ignoring audio that is not base64 from the agent")
                return
            self.playout.add(self._from_agent.resample(pcm), time.monotonic())
        elif kind == "response.created":
            self._response = getattr(event.response, "id", None) or "?"
        elif kind == "response.done":
            self._response = None
            self._finish_transcript(getattr(event.response, "id", None) or "?", None)
        elif kind == "response.output_audio_transcript.delta":
            self._partial.setdefault(event.response_id, []).append(event.delta or "")
        elif kind == "response.output_audio_transcript.done":
            self._finish_transcript(event.response_id, event.transcript)
        elif kind == "input_audio_buffer.speech_started" and self.playout.pending_s > 0:
            self.playout.clear()  # barge-in: what the agent had not yet said is not heard

    def _finish_transcript(self, response_id: str, text: str | None) -> None:
        deltas = self._partial.pop(response_id, None)
        line = text if text is not None else "".join(deltas) if deltas is not None else None
        if line is not None and line.strip():
            self._transcript.append(" ".join(line.split()))

    @property
    def transcript(self) -> list[str]:
        """The agent's own transcript of each of its responses so far (``response.output_audio_transcript``)."""
        return self._transcript

    async def _play(self) -> None:
        """The playout clock (``every_frame``, as ``TwilioCaller._play``): one frame every 20 ms."""

        async def tick() -> None:
            frame, _ = self.playout.take(time.monotonic())
            if self._hear is not None:
                await self._hear(InputAudioRawFrame(audio=frame, sample_rate=RATE_16K, num_channels=1))

        await every_frame(tick)

    async def speak(self, pcm: bytes) -> None:
        """Append the patient's 20 ms (at 24 kHz); with commit turns, commit its line once it has ended."""
        if self._connection is None or self._closed:
            return
        silent = not any(pcm)
        commit = self.settings.turn_detection == "commit"
        if commit and silent and not self._speaking:
            return  # between lines nothing is streamed
        audio = self._to_agent.resample(pcm)
        if audio:
            await self._connection.input_audio_buffer.append(audio=base64.b64encode(audio).decode("ascii"))
        if not commit:
            return
        if not silent:
            self._speaking, self._silence_s = True, 0.0
            return
        self._silence_s += len(pcm) / 2 / RATE_16K
        if self._silence_s >= COMMIT_AFTER_S:
            self._speaking = False
            if self._response is not None:
                await self._connection.response.cancel()
                self._response = None
            await self._connection.input_audio_buffer.commit()
            await self._connection.response.create()

    async def close(self) -> None:
        """Stop reading and playing out, close the websocket and the client (idempotent, never raises)."""
        self._closed = True
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        connection, self._connection = self._connection, None
        client, self._client = self._client, None
        try:
            if connection is not None:
                await asyncio.wait_for(connection.close(), CLOSE_TIMEOUT_S)
        except Exception:  # already gone
            pass
        try:
            if client is not None:
                await client.close()
        except Exception:
            pass


class RealtimeCaller(VoiceAgentTransport):
    """The patient as a Realtime client: a ``BridgeTransport`` over a ``RealtimeLink`` (module docstring).

    Args:
        log: where notes about the call go, one line each.
    """

    protocol: ClassVar[AgentProtocol] = "openai-realtime"

    def __init__(self, *, log: Callable[[str], None] = lambda _line: None) -> None:
        self._log = log
        self.link: RealtimeLink | None = None

    @property
    def serializer(self) -> FrameSerializer:
        """None: the SDK speaks the wire (``pipecat_transport`` is a bridge)."""
        raise LiveError("openai-realtime has no pipecat serializer: the call goes through the openai SDK")

    @property
    def transcript(self) -> list[str]:
        """The agent's own transcript of each of its responses so far (empty before the call)."""
        return self.link.transcript if self.link is not None else []

    def pipecat_transport(self, url: str, link: AgentLinkSettings) -> BaseTransport:
        """A ``BridgeTransport`` over a new ``RealtimeLink`` to ``url``."""
        self.link = RealtimeLink(url, link, log=self._log)
        return BridgeTransport(self.link)


def _dump(event: BaseModel) -> str:
    return str(cast(Any, event).to_json(indent=None))


class RealtimeBotSerializer(FrameSerializer):
    """The built-in voice agent's side of the Realtime protocol, behind the door (module docstring)."""

    def __init__(self, door: _Door) -> None:
        super().__init__()
        self._door = door
        self._connection_no = 0  # the door's connection number this state belongs to
        self._session = RealtimeSessionCreateRequest(type="realtime")
        self._from_caller = StreamResampler24(REALTIME_RATE, RATE_16K)
        self._to_caller = StreamResampler24(RATE_16K, REALTIME_RATE)
        self._response: str | None = None
        self._item = ""
        self._finishing: asyncio.Task[None] | None = None

    def _effective(self, asked: RealtimeSessionCreateRequest | None) -> RealtimeSessionCreateRequest:
        pcm = AudioPCM(type="audio/pcm", rate=24000)
        audio = RealtimeAudioConfig(input=RealtimeAudioConfigInput(format=pcm, turn_detection=ServerVad(
            type="server_vad")), output=RealtimeAudioConfigOutput(format=pcm))
        instructions = asked.instructions if asked is not None and asked.instructions is not None \
            else self._session.instructions
        return RealtimeSessionCreateRequest(type="realtime", model="encsim-built-in-agent", instructions=instructions,
                                            output_modalities=["audio"], audio=audio)

    async def _send(self, event: BaseModel) -> None:
        websocket = getattr(self._door, "_current", None)  # the served connection (pipecat's is not ours to use)
        if websocket is None:
            return
        try:
            await websocket.send(_dump(event))
        except Exception:  # the caller went away; the door ends the call
            pass

    async def _error(self, message: str, *, code: str, event_id: str | None = None) -> None:
        await self._send(RealtimeErrorEvent(type="error", event_id=_id("event"), error=RealtimeError(
            type="invalid_request_error", code=code, message=message, event_id=event_id)))

    async def _new_connection(self) -> None:
        self._connection_no = self._door.served
        self._session = self._effective(None)
        self._from_caller = StreamResampler24(REALTIME_RATE, RATE_16K)
        self._to_caller = StreamResampler24(RATE_16K, REALTIME_RATE)
        self._response = None
        await self._send(SessionCreatedEvent(type="session.created", event_id=_id("event"), session=self._session))

    async def deserialize(self, data: str | bytes) -> Frame | None:
        """One client event: audio for the door, an answer on the socket, or an ``error`` event."""
        if self._connection_no != self._door.served:
            await self._new_connection()
        if not isinstance(data, str):
            await self._error("binary messages are not Realtime events: send JSON text", code="invalid_event")
            return self._door.screen("a binary message")
        try:
            event = _CLIENT_EVENT.validate_python(json.loads(data))
        except (ValueError, ValidationError, RecursionError):
            await self._error("not a valid Realtime client event", code="invalid_event")
            return self._door.screen("a message that is not a Realtime client event")
        kind = event.type
        if kind == "input_audio_buffer.append":
            return await self._append(event.audio, event.event_id)
        if kind == "session.update":
            asked = event.session if isinstance(event.session, RealtimeSessionCreateRequest) else None
            if asked is None:
                await self._error("the built-in agent serves realtime sessions only", code="invalid_session",
                                  event_id=event.event_id)
                return None
            self._session = self._effective(asked)
            await self._send(SessionUpdatedEvent(type="session.updated", event_id=_id("event"), session=self._session))
        elif kind == "input_audio_buffer.commit":
            self._item = _id("item")
            await self._send(InputAudioBufferCommittedEvent(type="input_audio_buffer.committed", event_id=_id("event"),
                                                            item_id=self._item))
        elif kind == "input_audio_buffer.clear":
            await self._send(InputAudioBufferClearedEvent(type="input_audio_buffer.cleared", event_id=_id("event")))
        elif kind not in ("response.create", "response.cancel"):  # the agent answers by its own turn-taking
            await self._error(f"{kind} is not supported by the built-in agent", code="unsupported_event",
                              event_id=event.event_id)
        return None

    async def _append(self, audio: str, event_id: str | None) -> Frame | None:
        try:
            pcm = base64.b64decode(audio, validate=True)
        except (binascii.Error, ValueError):
            await self._error("input_audio_buffer.append: audio is not base64", code="invalid_audio",
                              event_id=event_id)
            return self._door.screen("audio that is not base64")
        if not pcm or len(pcm) % 2 or len(pcm) > MAX_APPEND_BYTES:
            await self._error(f"input_audio_buffer.append: {len(pcm)} bytes is not 24 kHz PCM16 of at most 1 s",
                              code="invalid_audio", event_id=event_id)
            return self._door.screen(f"an audio append of {len(pcm)} bytes")
        if not self._door.audio_arrived():
            return None
        heard = self._from_caller.resample(pcm)
        return InputAudioRawFrame(audio=heard, sample_rate=RATE_16K, num_channels=1) if heard else None

    async def serialize(self, frame: Frame) -> str | bytes | None:
        """The agent's audio as ``response.output_audio.delta`` (with its response's framing); see module doc."""
        if isinstance(frame, OutputAudioRawFrame):
            if self._finishing is not None:
                self._finishing.cancel()
            if self._response is None:
                self._response, self._item = _id("resp"), _id("item")
                await self._send(ResponseCreatedEvent(type="response.created", event_id=_id("event"),
                                                      response=RealtimeResponse(id=self._response,
                                                                                object="realtime.response",
                                                                                status="in_progress")))
            self._finishing = asyncio.create_task(self._finish_later(self._response))
            pcm = self._to_caller.resample(frame.audio)
            if not pcm:
                return None
            return _dump(ResponseAudioDeltaEvent(
                type="response.output_audio.delta", event_id=_id("event"), response_id=self._response,
                item_id=self._item, output_index=0, content_index=0, delta=base64.b64encode(pcm).decode("ascii")))
        if isinstance(frame, InterruptionFrame) and self._response is not None:
            await self._send(InputAudioBufferSpeechStartedEvent(type="input_audio_buffer.speech_started",
                                                                event_id=_id("event"), item_id=_id("item"),
                                                                audio_start_ms=0))
            await self._finish(self._response, "cancelled")
        elif isinstance(frame, (EndFrame, CancelFrame)) and self._response is not None:
            await self._finish(self._response, "completed")
        return None

    async def _finish_later(self, response: str) -> None:
        await asyncio.sleep(REPLY_END_S)
        await self._finish(response, "completed")

    async def _finish(self, response: str, status: str) -> None:
        if self._response != response:
            return
        self._response = None
        if self._finishing is not None and self._finishing is not asyncio.current_task():
            self._finishing.cancel()
        await self._send(ResponseAudioDoneEvent(type="response.output_audio.done", event_id=_id("event"),
                                                response_id=response, item_id=self._item, output_index=0,
                                                content_index=0))
        await self._send(ResponseDoneEvent(type="response.done", event_id=_id("event"), response=RealtimeResponse(
            id=response, object="realtime.response", status=cast(Any, status))))
