"""Who may call a live server, when a connection becomes the call, and what it may send.

The wire format: pipecat's protobuf frames, one ``pipecat.Frame`` per binary websocket message, 16 kHz
mono int16 PCM both ways.

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
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import pipecat.frames.protobufs.frames_pb2 as frame_protos
from pipecat.frames.frames import (
    Frame,
    InputAudioRawFrame,
    InputTransportMessageFrame,
)
from pipecat.serializers.base_serializer import FrameSerializer
from pipecat.serializers.protobuf import ProtobufFrameSerializer
from pipecat.transports.websocket.server import (
    SingleClientWebsocketServerInputTransport,
    SingleClientWebsocketServerParams,
    SingleClientWebsocketServerTransport,
)
from websockets.asyncio.server import serve as websocket_serve
from websockets.protocol import State

from audio._pcm import RATE_16K
from audio.live._settings import LiveError
from sim.records import neutralise

DEFAULT_JOIN_WINDOW_S = 10.0
MAX_AUDIO_FRAME_BYTES = RATE_16K * 2  # one second of 16 kHz int16 in one message is the most a caller sends
MAX_MESSAGE_BYTES = 1 << 20
LOOPBACK_ORIGINS = ("http(s)://127.0.0.1", "http(s)://localhost", "http(s)://[::1]")
_LOOPBACK_ORIGIN = re.compile(r"https?://(?:127\.0\.0\.1|localhost|\[::1\])(?::[0-9]{1,5})?")
_ORIGIN = re.compile(r"(https?)://([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\])(?::([0-9]{1,5}))?")


def _transport_params(serializer: FrameSerializer) -> dict[str, Any]:
    """The pipeline side of both transports (client and server): 16 kHz mono int16 both ways, 20 ms out.

    No WAV header; ``serializer`` turns the frames into the wire's format (pipecat's protobuf frames, or Twilio's).
    """
    return dict(audio_in_enabled=True, audio_out_enabled=True, audio_in_sample_rate=RATE_16K,
                audio_out_sample_rate=RATE_16K, audio_out_10ms_chunks=2,  # 20 ms out: one pacer frame
                serializer=serializer, add_wav_header=False)


def _check_loopback(host: str, option: str) -> None:
    """Refuse to serve on anything but the loopback interface (LiveError naming ``option``)."""
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise LiveError(f"{option} {host}: live servers bind to the loopback interface only. Use 127.0.0.1 "
                        "(put a reverse proxy in front of it if another machine must reach it).")


def parse_allowed_origin(value: str) -> str:
    """An ``--allow-origin`` value the way a browser sends it in ``Origin``.

    Args:
        value: what the user gave, e.g. ``HTTPS://Example.org:443``.

    Returns:
        ``scheme://host[:port]``, lower case, without the scheme's default port (``https://example.org``).

    Raises:
        ValueError: ``value`` is not an http(s) origin; the message says what is wrong and shows an example.
    """
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

    Attributes:
        allow: extra origins (normalised by ``parse_allowed_origin``), matched exactly.
        pages: when set (the call page is served), only these page origins and ``allow`` are accepted, and a
            client without an Origin is refused; when None, any loopback origin and clients without one are.
    """

    allow: tuple[str, ...] = ()
    pages: tuple[str, ...] | None = None

    def allows(self, origin: str | None) -> bool:
        """Whether a client whose ``Origin`` header is ``origin`` (None: it sent none) may call."""
        if origin is None:
            return self.pages is None
        if origin in self.allow:
            return True
        if self.pages is not None:
            return origin in self.pages
        return _LOOPBACK_ORIGIN.fullmatch(origin) is not None

    def accepted(self) -> str:
        """Who may call under this policy, in words for a log line."""
        if self.pages is not None:
            return f"only the call page ({', '.join(self.pages)}) may call"
        return f"only pages on this machine ({', '.join(LOOPBACK_ORIGINS)}) and programs that send no Origin may call"


def _shown(text: str) -> str:
    """Attacker text fit for one log line.

    Control characters are made visible, whitespace folded, anything beyond ASCII escaped, and at most 200
    characters are kept.
    """
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
    except Exception:  # any malformed payload is just dropped
        return "not a protobuf frame"
    if which == "audio":
        a = proto.audio
        if a.sample_rate != RATE_16K or a.num_channels != 1:
            return f"audio at {a.sample_rate} Hz with {a.num_channels} channel(s)"
        if not a.audio or len(a.audio) % 2 or len(a.audio) > MAX_AUDIO_FRAME_BYTES:
            return f"an audio frame of {len(a.audio)} bytes"
        return InputAudioRawFrame(audio=bytes(a.audio), sample_rate=RATE_16K, num_channels=1)
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


def refuse_origin(policy: OriginPolicy, connection: Any, request: Any, log: Callable[[str], None]) -> Any:
    """HTTP 403 for a handshake whose Origin ``policy`` does not allow (logged with the fix), else None.

    It never raises: a hostile request is refused, never a traceback.
    """
    try:
        origins = list(request.headers.get_all("Origin"))
        if len(origins) <= 1 and policy.allows(origins[0] if origins else None):
            return None
        shown = _shown(", ".join(origins)) if origins else "none (no Origin header)"
        try:
            suggested = parse_allowed_origin(origins[0]) if len(origins) == 1 else ""
        except ValueError:
            suggested = ""
        flag = f"--allow-origin {suggested}" if 0 < len(suggested) <= 200 else "--allow-origin ORIGIN"
        log(f"refused a websocket connection from origin {shown} (HTTP 403): {policy.accepted()}; "
            f"to let another page call, add {flag}")
        return connection.respond(HTTPStatus.FORBIDDEN, "Forbidden: this origin may not open the call.\n")
    except Exception:  # a hostile request is refused, never a traceback
        return connection.respond(HTTPStatus.FORBIDDEN, "Forbidden.\n")


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
        self.served = 0               # connections accepted so far (the one served is number ``served``)
        self.refused = 0              # handshakes refused for their origin
        self.silent = 0               # connections closed for sending no caller audio
        self._current: Any = None     # the connection being served (admitted or not)
        self._ignored = 0
        self._noted_audio = False
        self._window: asyncio.Task[None] | None = None

    def check_handshake(self, connection: Any, request: Any) -> Any:
        """The ``process_request`` hook of websockets: None accepts, a response refuses (it must never raise)."""
        try:
            if self._over():
                return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, "The call is over.\n")
        except Exception:  # a hostile request is refused, never a traceback
            return connection.respond(HTTPStatus.FORBIDDEN, "Forbidden.\n")
        refusal = refuse_origin(self.policy, connection, request, self._log)
        if refusal is not None:
            self.refused += 1
        return refusal

    def opened(self, websocket: Any) -> None:
        """A connection was accepted and is now the one served (pipecat serves one at a time)."""
        self._current, self._ignored, self._noted_audio = websocket, 0, False
        self.served += 1
        if self.caller is None:
            self._window = asyncio.create_task(self._close_if_silent(websocket))

    def screen(self, frame: Frame | str) -> Frame | None:
        """What a message of the served connection becomes: the frame, or None (dropped)."""
        if isinstance(frame, InputAudioRawFrame):
            return frame if self.audio_arrived() else None
        if isinstance(frame, Frame) and self.caller is not None and self.caller is self._current:
            return frame
        self._ignored += 1
        if isinstance(frame, str) and frame.startswith("audio at") and not self._noted_audio:
            self._noted_audio = True
            self._log(f"ignoring {frame} from a websocket client: the live wire format is 16 kHz mono int16 PCM")
        return None

    def audio_arrived(self) -> bool:
        """Valid caller audio arrived on the served connection: it becomes the caller if there is none yet.

        Returns:
            Whether the served connection is the caller (its audio goes on).
        """
        if self.caller is None and self._current is not None:
            self.caller = self._current
            if self._window is not None:
                self._window.cancel()
            self._on_caller()
        return self.caller is not None and self.caller is self._current

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


class _HandedServerInput(_GuardedServerInput):
    """A server input that serves no port: it is handed one connection another server accepted (``serve_calls``)."""

    handed: Any

    async def _server_task_handler(self) -> None:
        await self._client_handler(self.handed)
        await self._stop_server_event.wait()


class _GuardedServerTransport(SingleClientWebsocketServerTransport):
    def __init__(self, params: SingleClientWebsocketServerParams, *, host: str, port: int, door: _Door,
                 handed: Any = None) -> None:
        super().__init__(params, host=host, port=port)
        self._door = door
        self._handed = handed

    def input(self) -> SingleClientWebsocketServerInputTransport:
        if not self._input:
            kind = _GuardedServerInput if self._handed is None else _HandedServerInput
            guarded = kind(self, self._host, self._port, self._params, self._callbacks, name=self._input_name)
            guarded.door = self._door
            if isinstance(guarded, _HandedServerInput):
                guarded.handed = self._handed
            self._input = guarded
        return self._input


def _serve_one_caller(*, host: str, port: int, door: _Door,
                      on_ready: Callable[[str], Awaitable[None] | None] | None,
                      serializer: FrameSerializer | None = None, handed: Any = None) -> Any:
    """Pipecat's single-client websocket server on loopback, behind ``door`` (origin check, admission).

    ``serializer`` reads and writes the wire and hands what it reads to ``door`` (default: pipecat's protobuf
    frames, ``_WireSerializer(door)``; ``audio.live._twilio.TwilioBotSerializer`` serves Twilio Media Streams).
    ``handed``: a connection ``serve_calls`` accepted; the transport then serves it instead of a port of its own.
    """
    _check_loopback(host, "--host")
    transport = _GuardedServerTransport(
        SingleClientWebsocketServerParams(allowed_origins=[],  # the door checks origins, not pipecat
                                          **_transport_params(serializer or _WireSerializer(door))),
        host=host, port=port, door=door, handed=handed)

    @transport.event_handler("on_websocket_ready")  # type: ignore[untyped-decorator]  # pipecat's is untyped
    async def _on_ready(_t: Any) -> None:
        if on_ready is not None:
            maybe = on_ready(f"ws://{host}:{port}")
            if asyncio.iscoroutine(maybe):
                await maybe

    return transport


async def serve_calls(*, host: str, port: int, policy: OriginPolicy, log: Callable[[str], None],
                      call: Callable[[Any], Awaitable[None]], concurrency: int, stop: asyncio.Event,
                      on_ready: Callable[[str], Awaitable[None] | None] | None = None) -> None:
    """One loopback websocket server taking up to ``concurrency`` calls at once, until ``stop`` is set.

    Each accepted connection is handed to ``call(websocket)`` (a call of its own, with its own door: admission by
    its first valid audio, the join window), which returns when that call has ended. At the handshake a
    connection is refused for its Origin (HTTP 403, ``refuse_origin``, checked first) or, when ``concurrency``
    calls are already running, with HTTP 503 "busy" (the caller may try again; two handshakes at the same moment
    may both pass, so the limit is a soft one). On ``stop`` the server stops taking connections and waits for the
    calls in progress to end.
    """
    _check_loopback(host, "--host")
    running: set[asyncio.Task[None]] = set()

    def check(connection: Any, request: Any) -> Any:
        refusal = refuse_origin(policy, connection, request, log)
        if refusal is not None:
            return refusal
        try:
            if stop.is_set():
                return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, "The agent has stopped taking calls.\n")
            if len(running) >= concurrency:
                log(f"refused a call: {concurrency} call(s) already in progress (serve-agent --concurrency)")
                return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE,
                                          f"Busy: {concurrency} call(s) in progress; try again.\n")
        except Exception:  # a hostile request is refused, never a traceback
            return connection.respond(HTTPStatus.FORBIDDEN, "Forbidden.\n")
        return None

    async def handler(websocket: Any) -> None:
        task = asyncio.current_task()
        assert task is not None  # websockets runs each connection's handler in a task
        running.add(task)
        try:
            await call(websocket)
        finally:
            running.discard(task)

    async with websocket_serve(handler, host, port, process_request=check, max_size=MAX_MESSAGE_BYTES) as server:
        if on_ready is not None:
            bound = next(iter(server.sockets)).getsockname()[1]
            maybe = on_ready(f"ws://{host}:{bound}")
            if asyncio.iscoroutine(maybe):
                await maybe
        await stop.wait()
        while running:
            await asyncio.gather(*list(running), return_exceptions=True)
