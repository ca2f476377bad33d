"""The seam between the calling patient and the agent under test: one ``VoiceAgentTransport`` per wire protocol.

``run_patient_call`` dials the agent's websocket with pipecat's ``WebsocketClientTransport`` whatever the protocol;
the patient's pipeline sees 16 kHz mono PCM frames either way. What a protocol decides is all a transport holds:

* ``serializer``: how pipecat frames cross the wire (the patient's 20 ms output frames out, what it hears in);
* ``opened(websocket, push_audio)``: what the caller says first on the open socket, and, when the protocol plays the
  far end's audio out itself (a telephone network buffers what the bot sends), where that audio enters the
  patient's pipeline (``push_audio``);
* ``closing()``: what the caller says last while the socket is still open, and stopping what ``opened`` started.

The transports, chosen by name (``audio.live._call.voice_agent_transport``; ``--agent-protocol``,
``PatientCallSettings.protocol``):

* ``pipecat`` (``PipecatTransport``, the default): pipecat's protobuf frames, one per binary message, 16 kHz PCM
  both ways (``audio.live._door._WireSerializer``); nothing is said around them, the far end's audio goes straight
  into the pipeline.
* ``twilio`` (``audio.live._twilio.TwilioCaller``): the patient plays Twilio's side of Media Streams against a
  phone bot's websocket: ``connected`` and ``start``, ``media`` (base64 mu-law, 8 kHz) both ways, ``mark`` and
  ``clear`` from the bot honoured as Twilio does, ``stop`` at the end.
* ``openai-realtime`` and ``chat-audio``: agents reached through a client library or by request and reply have no
  pipecat serializer; their transports override ``pipecat_transport`` and hand the call a
  ``audio.live._bridge.BridgeTransport`` over an ``AgentLink`` (the ``openai`` SDK's realtime connection; audio chat
  completions).

What a transport needs beyond the URL (the agent's model name, its API key, the frozen system prompt, how turns
are taken and what the reply is) is the call's ``AgentLinkSettings``. ``scenario_hint`` is for the scripted
controls only (``--agent-scenario-hint``): it names the scenario to the agent (``?encsim_scenario=ID`` on a
websocket URL), which a real agent under test must never be told.

The served side (the built-in voice agent, ``run_agent_bot``) speaks the same protocols:
``audio.live._call.served_serializer`` gives the serializer its server reads and writes behind the door.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, ClassVar, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pipecat.frames.frames import InputAudioRawFrame
from pipecat.serializers.base_serializer import FrameSerializer
from pipecat.transports.base_transport import BaseTransport
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from audio.live._door import _transport_params, _WireSerializer

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

AgentProtocol = Literal["pipecat", "twilio", "openai-realtime", "chat-audio"]
AGENT_PROTOCOLS: tuple[AgentProtocol, ...] = ("pipecat", "twilio", "openai-realtime", "chat-audio")
"""The wire protocols a voice agent is reached over (``--agent-protocol``), the default first."""
SCENARIO_HINT_PARAM = "encsim_scenario"
"""The query parameter naming the scenario to a scripted control agent (``--agent-scenario-hint``)."""


class AgentLinkSettings(BaseModel):
    """What a call's transport needs besides the agent's URL (frozen; the key is a ``SecretStr``, never written).

    Every field has the default a transport uses when its flag is not given; the pipecat and twilio transports
    read only ``scenario_hint``.
    """

    model_config = ConfigDict(frozen=True)

    model: str | None = Field(default=None, description="the agent's model name, where the protocol names one "
                                                        "(--agent-model: the Realtime session's and chat "
                                                        "completions' model)")
    api_key: SecretStr | None = Field(default=None, description="the agent's API key (from --api-key-env)")
    instructions: str = Field(default="", description="the frozen system prompt (the Realtime session's "
                                                      "instructions, chat-audio's system message)")
    turn_detection: Literal["server", "commit"] = Field(
        default="server", description="openai-realtime: the server's voice activity detection ends each patient "
                                      "turn, or the patient commits each turn itself (--agent-turns)")
    reply: Literal["audio", "text"] = Field(default="audio", description="chat-audio: ask for a spoken reply (the "
                                                                         "patient hears the agent's own audio) or "
                                                                         "a text one (--agent-reply)")
    scenario_hint: str | None = Field(default=None, description="the scenario's id, told to scripted control "
                                                                "agents only (--agent-scenario-hint)")


def with_scenario_hint(url: str, scenario_id: str | None) -> str:
    """``url`` with ``?encsim_scenario=ID`` added (unchanged when ``scenario_id`` is None)."""
    if scenario_id is None:
        return url
    parts = urlsplit(url)
    query = [*parse_qsl(parts.query, keep_blank_values=True), (SCENARIO_HINT_PARAM, scenario_id)]
    return urlunsplit(parts._replace(query=urlencode(query)))


def scenario_hint_of(path: str) -> str | None:
    """The scenario a caller named in a request path's query (``?encsim_scenario=ID``), or None."""
    values = [v for k, v in parse_qsl(urlsplit(path).query) if k == SCENARIO_HINT_PARAM]
    return values[-1] if values else None

PushAudio = Callable[[InputAudioRawFrame], Awaitable[None]]
"""Where audio the far end sent enters the patient's pipeline (the client input transport's ``push_audio_frame``)."""


class VoiceAgentTransport(ABC):
    """How the calling patient speaks one wire protocol to the agent under test (module docstring).

    One instance serves one call. ``protocol`` is its name; ``pipecat_transport(url, link)`` is the pipecat
    transport the patient's pipeline reads and writes (by default pipecat's ``WebsocketClientTransport`` with
    ``serializer``); ``opened`` and ``closing`` default to saying nothing.
    """

    protocol: ClassVar[AgentProtocol]

    @property
    @abstractmethod
    def serializer(self) -> FrameSerializer:
        """The call's serializer: the patient's frames to wire messages and back (one instance per call)."""

    def pipecat_transport(self, url: str, link: AgentLinkSettings) -> BaseTransport:
        """The pipecat transport of this call: pipecat's websocket client speaking ``serializer`` to ``url``.

        A transport without a serializer (``openai-realtime``, ``chat-audio``) overrides this and returns an
        ``audio.live._bridge.BridgeTransport``.
        """
        from pipecat.transports.websocket.client import WebsocketClientParams, WebsocketClientTransport

        return WebsocketClientTransport(with_scenario_hint(url, link.scenario_hint),
                                        WebsocketClientParams(**_transport_params(self.serializer)))

    async def opened(self, websocket: ClientConnection, push_audio: PushAudio) -> None:  # noqa: B027 - optional hook
        """The socket is open, before the pipeline starts: say what the protocol says first.

        Args:
            websocket: the open connection to the agent (send on it; pipecat's session reads it).
            push_audio: where audio this transport plays out itself enters the patient's pipeline.
        """

    async def closing(self) -> None:  # noqa: B027 - an optional hook
        """The call is ending and the socket may still be open: say the last words, stop what ``opened`` started.

        Called once the patient's pipeline is done speaking and again when the call is torn down: idempotent, and
        it never raises (the agent may have gone already).
        """


class PipecatTransport(VoiceAgentTransport):
    """pipecat's protobuf frames, 16 kHz PCM both ways (``_WireSerializer``: only audio and JSON messages pass)."""

    protocol: ClassVar[AgentProtocol] = "pipecat"

    def __init__(self) -> None:
        self._serializer = _WireSerializer()

    @property
    def serializer(self) -> FrameSerializer:
        """The protobuf wire, read defensively (``audio.live._door._read_wire``)."""
        return self._serializer
