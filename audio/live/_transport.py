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

The served side (the built-in voice agent, ``run_agent_bot``) speaks the same protocols:
``audio.live._call.served_serializer`` gives the serializer its server reads and writes behind the door.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, ClassVar, Literal

from pipecat.frames.frames import InputAudioRawFrame
from pipecat.serializers.base_serializer import FrameSerializer

from audio.live._door import _WireSerializer

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

AgentProtocol = Literal["pipecat", "twilio"]
AGENT_PROTOCOLS: tuple[AgentProtocol, ...] = ("pipecat", "twilio")
"""The wire protocols a voice agent is reached over (``--agent-protocol``), the default first."""

PushAudio = Callable[[InputAudioRawFrame], Awaitable[None]]
"""Where audio the far end sent enters the patient's pipeline (the client input transport's ``push_audio_frame``)."""


class VoiceAgentTransport(ABC):
    """How the calling patient speaks one wire protocol to the agent under test (module docstring).

    One instance serves one call. ``protocol`` is its name; ``serializer`` is handed to pipecat's
    ``WebsocketClientTransport``; ``opened`` and ``closing`` default to saying nothing.
    """

    protocol: ClassVar[AgentProtocol]

    @property
    @abstractmethod
    def serializer(self) -> FrameSerializer:
        """The call's serializer: the patient's frames to wire messages and back (one instance per call)."""

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
