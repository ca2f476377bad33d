"""A pipecat transport for agents that are not pipecat websocket peers: the patient on one side, an ``AgentLink``.

The patient's pipeline (``audio.live._call._build_side``) reads and writes 16 kHz mono PCM through a pipecat
transport. For pipecat's protobuf frames and Twilio Media Streams that transport is pipecat's
``WebsocketClientTransport`` with the protocol's serializer. An agent reached through a client library (the OpenAI
Realtime protocol through the ``openai`` SDK) or by request and reply (audio chat completions) has no serializer:
its ``VoiceAgentTransport`` hands the call a ``BridgeTransport`` over an ``AgentLink`` instead.

* ``AgentLink.open(hear, hang_up)``: connect to the agent. ``hear(frame)`` puts the agent's audio (16 kHz mono
  int16 ``InputAudioRawFrame``) into the patient's pipeline; ``hang_up(reason=None)`` says the agent ended the
  call (``reason``: the failure that ended it, kept in the call's errors). A failure to connect raises
  ``LiveError`` with one line saying what happened (HTTP 401, a refused connection, a protocol error): the call
  then ends as ``no_connection`` with that line, at once, not after the connect timeout.
* ``AgentLink.speak(pcm)``: the patient's audio as it is played out, 20 ms of 16 kHz int16 at a time, in real time
  (the pipeline's ``RealtimePacer`` keeps the clock), silence between lines included (all-zero samples).
* ``AgentLink.close()``: the call is over; idempotent and it never raises.
* ``AgentLink.transcript``: the agent's own transcript of its replies, when the protocol carries one (the Realtime
  protocol's ``response.output_audio_transcript``); the call writes it beside the recording.

The transport raises the events run_patient_call listens to on every transport: ``on_connected(transport, None)``
once ``open`` returned, ``on_disconnected(transport, None)`` when the link hung up, and ``on_connect_error(transport,
reason)`` when ``open`` failed.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import Protocol

from pipecat.frames.frames import CancelFrame, EndFrame, InputAudioRawFrame, OutputAudioRawFrame, StartFrame
from pipecat.transports.base_input import BaseInputTransport
from pipecat.transports.base_output import BaseOutputTransport
from pipecat.transports.base_transport import BaseTransport, TransportParams

from audio._pcm import RATE_16K
from audio.live._settings import LiveError

Hear = Callable[[InputAudioRawFrame], Awaitable[None]]
"""Where the agent's audio enters the patient's pipeline (16 kHz mono int16 frames)."""


class HangUp(Protocol):
    """Called when the agent ends the call: its connection closed, or it said the call is over (first call counts).

    ``reason``: what went wrong, when the call ended on a failure (a protocol error, the server's error event, an
    HTTP 500): one line, kept in the call's errors. None: the agent hung up normally.
    """

    async def __call__(self, reason: str | None = None) -> None:
        """End the call from the agent's side."""


class AgentLink(ABC):
    """One call's connection to an agent the patient does not reach through a pipecat serializer (module doc)."""

    @abstractmethod
    async def open(self, hear: Hear, hang_up: HangUp) -> None:
        """Connect to the agent; from now on its audio goes to ``hear``.

        Raises:
            LiveError: the agent could not be reached or refused the call; the message is the one line the record
                keeps (what happened, not a traceback).
        """

    @abstractmethod
    async def speak(self, pcm: bytes) -> None:
        """20 ms of the patient's 16 kHz mono int16 audio, in real time (zeros between lines)."""

    @property
    def transcript(self) -> list[str]:
        """The agent's own transcript of each of its replies so far, when its protocol sends one (else empty)."""
        return []

    @abstractmethod
    async def close(self) -> None:
        """The call is over: stop what ``open`` started and close the connection (idempotent, never raises)."""


class _BridgeInput(BaseInputTransport):
    def __init__(self, bridge: BridgeTransport, params: TransportParams) -> None:
        super().__init__(params)
        self._bridge = bridge
        self._opening: asyncio.Task[None] | None = None

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)
        if self._opening is None:
            self._opening = asyncio.create_task(self._bridge.open_link(self.push_audio_frame))

    async def stop(self, frame: EndFrame) -> None:
        await super().stop(frame)
        await self._bridge.close_link()

    async def cancel(self, frame: CancelFrame) -> None:
        await super().cancel(frame)
        await self._bridge.close_link()


class _BridgeOutput(BaseOutputTransport):
    def __init__(self, bridge: BridgeTransport, params: TransportParams) -> None:
        super().__init__(params)
        self._bridge = bridge

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)

    async def write_audio_frame(self, frame: OutputAudioRawFrame) -> bool:
        if not self._bridge.is_open:
            return False
        try:
            await self._bridge.link.speak(frame.audio)
        except Exception as exc:  # the agent went away mid-line: the call ends as a hang-up, not a traceback
            await self._bridge.lost(f"{type(exc).__name__}: {exc}")
            return False
        return True

    async def stop(self, frame: EndFrame) -> None:
        await super().stop(frame)
        await self._bridge.close_link()

    async def cancel(self, frame: CancelFrame) -> None:
        await super().cancel(frame)
        await self._bridge.close_link()


class BridgeTransport(BaseTransport):
    """A pipecat transport whose far end is an ``AgentLink`` (module docstring); 16 kHz mono both ways."""

    def __init__(self, link: AgentLink) -> None:
        super().__init__()
        self.link = link
        self._params = TransportParams(audio_in_enabled=True, audio_in_sample_rate=RATE_16K, audio_in_channels=1,
                                       audio_out_enabled=True, audio_out_sample_rate=RATE_16K, audio_out_channels=1)
        self._input: _BridgeInput | None = None
        self._output: _BridgeOutput | None = None
        self.is_open = False
        self._closed = False
        self.error: str | None = None
        self._register_event_handler("on_connected")
        self._register_event_handler("on_disconnected")
        self._register_event_handler("on_connect_error")

    def input(self) -> _BridgeInput:
        """The patient hears the agent here."""
        if self._input is None:
            self._input = _BridgeInput(self, self._params)
        return self._input

    def output(self) -> _BridgeOutput:
        """The patient speaks to the agent here."""
        if self._output is None:
            self._output = _BridgeOutput(self, self._params)
        return self._output

    async def open_link(self, hear: Hear) -> None:
        """Open the link (once the pipeline has started) and raise the matching event."""
        try:
            await self.link.open(hear, self._hung_up)
        except LiveError as exc:
            self.error = str(exc)
        except Exception as exc:  # a client library's own failure: one line, what it was
            self.error = f"{type(exc).__name__}: {exc}"
        if self.error is not None:
            await self._call_event_handler("on_connect_error", self.error)
            return
        if self._closed:  # the call was torn down while the link opened
            await self.link.close()
            return
        self.is_open = True
        await self._call_event_handler("on_connected", None)

    async def _hung_up(self, reason: str | None = None) -> None:
        if reason is not None:
            self.error = self.error or reason
        if self.is_open:
            self.is_open = False
            await self._call_event_handler("on_disconnected", None)

    async def lost(self, reason: str) -> None:
        """Speaking to the agent failed: the agent is gone (a hang-up; ``reason`` kept for the log)."""
        await self._hung_up(reason)

    async def close_link(self) -> None:
        """Close the link once (both halves of the transport call this when the pipeline stops)."""
        if self._closed:
            return
        self._closed = True
        self.is_open = False
        await self.link.close()

    def __repr__(self) -> str:
        return f"BridgeTransport({type(self.link).__name__})"

