"""Live voice calls: real-time pipecat pipelines for the voiced patient and for a built-in voice agent.

A live call streams audio both ways in 20 ms frames over a websocket (pipecat's protobuf wire format:
one ``pipecat.Frame`` per binary message, 16 kHz mono int16 PCM both ways; or Twilio Media Streams, mu-law at
8 kHz, to and from a phone bot) and takes turns by voice activity, as a real phone triage call does. Each
side is one pipecat pipeline::

    transport in -> InputTap -> Silero VAD -> Whisper STT -> brain -> PiperSpeaker -> RealtimePacer -> transport out

One concern per module:

* ``_recording``: ``CallClock`` (every time of a call is seconds since it started), ``CallRecorder``
  (``call.<fmt>``, stereo: left this side, right the far end, on the call clock) and ``InputTap``, which
  stamps the other side's audio into the recording as it arrives.
* ``_stt``: ``WhisperSegmentSTT`` transcribes each VAD segment with the process-wide faster-whisper
  model, speculatively from the first pause.
* ``_speaking``: ``PiperSpeaker`` speaks sentence by sentence with the process-wide Piper voice
  (deterministic); ``RealtimePacer`` is the playout clock, one 20 ms frame per 20 ms, silence when there
  is nothing to say, so the far end hears a continuous stream and its VAD sees real pauses.
* ``_metrics``: the ``Timeline`` a brain collects and ``interaction_metrics`` (a typed
  ``InteractionMetrics``): latencies, overlaps, silence gaps.
* ``_end_of_turn``: whether the far end's turn is over, judged from its voice by Smart Turn v3.2 (pipecat's bundled
  ONNX model, loaded once per process, run on a worker thread) at a short VAD stop (``LiveSettings.end_of_turn``).
* ``_turns``: ``TurnTaker``, the turn-taking shared by both brains (reply, yield, barge in), and its
  ``CallLog`` (the timeline, the transcript and the events).
* ``_brains``: ``PatientBrain`` answers through the information-tree simulator it is handed (the same
  code as batch runs); ``AgentBrain`` asks the agent under test (one stateless call per turn).
* ``_door``: who may call (``OriginPolicy``, loopback only, checked at the handshake), when a connection
  becomes the call (its first valid audio frame, within the join window) and what it may send.
* ``_transport``: the seam between the dialling patient and the agent under test, ``VoiceAgentTransport`` (the
  serializer pipecat's websocket client dials with, what the caller says first and last), one per wire protocol
  (``AGENT_PROTOCOLS``): ``pipecat`` (``PipecatTransport``: protobuf frames, the default), ``twilio``,
  ``openai-realtime`` and ``chat-audio``; ``AgentLinkSettings`` (model, key, instructions, turn taking).
* ``_bridge``: ``BridgeTransport``, the pipecat transport for agents without a pipecat serializer: the patient's
  pipeline on one side, an ``AgentLink`` (a client library's connection, or request and reply) on the other.
* ``_twilio``: Twilio Media Streams. ``TwilioCaller``: the patient plays Twilio's side against a phone bot
  (``connected``, ``start``, 20 ms mu-law ``media``, ``mark`` echoed once played, ``clear``, ``stop``);
  ``TwilioBotSerializer``: the built-in agent as the bot, through pipecat's ``TwilioFrameSerializer``.
* ``_chat_audio``: audio chat completions (``chat-audio``). ``ChatAudioCaller``: the patient calls an
  OpenAI-compatible endpoint through the ``openai`` SDK, each of its lines one request with ``input_audio`` parts
  (``ChatAudioLink``, over a ``BridgeTransport``); ``serve_chat_audio``: the built-in agent as such an endpoint.
* ``_call``: the entry points ``run_patient_call`` and ``run_agent_bot``, what each is configured with
  (``PatientCallSettings``, ``AgentCallSettings``: ``CallSettings``, frozen), the ``CallHooks`` it reports to
  and its ``CallOutcome``; which transport a protocol name means (``voice_agent_transport`` for the dialling
  patient, ``served_serializer`` for the built-in voice agent's server).

From ``sim`` this package imports only ``sim.records`` (types, events, ``EventSink``, redaction); ``sim.live``
wires it to the store, the scorers and the agents.
"""

from __future__ import annotations

from audio._pcm import RATE_16K
from audio.live._brains import (
    GOODBYE_LINE,
    NUDGE_LINE,
    AgentBrain,
    LiveAnswer,
    LivePatient,
    PatientBrain,
    RedFlagLine,
    Respond,
)
from audio.live._bridge import AgentLink, BridgeTransport
from audio.live._call import (
    AgentCallSettings,
    CallHooks,
    CallOutcome,
    CallSettings,
    PatientCallSettings,
    run_agent_bot,
    run_patient_call,
    voice_agent_transport,
    warm_up,
)
from audio.live._chat_audio import ChatAudioCaller, ChatAudioLink, serve_chat_audio
from audio.live._door import (
    DEFAULT_JOIN_WINDOW_S,
    LOOPBACK_ORIGINS,
    MAX_AUDIO_FRAME_BYTES,
    MAX_MESSAGE_BYTES,
    OriginPolicy,
    parse_allowed_origin,
    serve_calls,
)
from audio.live._metrics import InteractionMetrics, Overlap, Timeline, TurnTiming, interaction_metrics
from audio.live._recording import CallClock, CallRecorder, InputTap
from audio.live._settings import LiveError, LiveSettings, Side
from audio.live._speaking import (
    FRAME_BYTES,
    FRAME_S,
    SENTENCE_GAP_S,
    PiperSpeaker,
    RealtimePacer,
    SpeakFrame,
    speakable,
)
from audio.live._stt import QUIET_RMS, SPECULATE_AFTER_S, WhisperSegmentSTT
from audio.live._transport import (
    AGENT_PROTOCOLS,
    AgentLinkSettings,
    AgentProtocol,
    VoiceAgentTransport,
    scenario_hint_of,
    with_scenario_hint,
)
from audio.live._turns import CallLog, TurnTaker
from sim.records import EventSink

LIVE_RATE = RATE_16K
"""The wire rate of a live call, both ways (``audio._pcm.RATE_16K``; the public name of this package)."""

__all__ = [
    "AGENT_PROTOCOLS",
    "DEFAULT_JOIN_WINDOW_S",
    "FRAME_BYTES",
    "FRAME_S",
    "GOODBYE_LINE",
    "LIVE_RATE",
    "LOOPBACK_ORIGINS",
    "MAX_AUDIO_FRAME_BYTES",
    "MAX_MESSAGE_BYTES",
    "NUDGE_LINE",
    "QUIET_RMS",
    "SENTENCE_GAP_S",
    "SPECULATE_AFTER_S",
    "AgentBrain",
    "AgentCallSettings",
    "AgentLink",
    "AgentLinkSettings",
    "AgentProtocol",
    "BridgeTransport",
    "CallClock",
    "CallHooks",
    "CallLog",
    "CallOutcome",
    "CallRecorder",
    "CallSettings",
    "ChatAudioCaller",
    "ChatAudioLink",
    "EventSink",
    "InputTap",
    "InteractionMetrics",
    "LiveAnswer",
    "LiveError",
    "LivePatient",
    "LiveSettings",
    "OriginPolicy",
    "Overlap",
    "PatientBrain",
    "PatientCallSettings",
    "PiperSpeaker",
    "RealtimePacer",
    "RedFlagLine",
    "Respond",
    "Side",
    "SpeakFrame",
    "Timeline",
    "TurnTaker",
    "TurnTiming",
    "VoiceAgentTransport",
    "WhisperSegmentSTT",
    "interaction_metrics",
    "parse_allowed_origin",
    "run_agent_bot",
    "run_patient_call",
    "speakable",
    "scenario_hint_of",
    "serve_calls",
    "serve_chat_audio",
    "voice_agent_transport",
    "with_scenario_hint",
    "warm_up",
]
