"""The call entry points: one live call with the patient, or one served by the built-in voice agent.

Each side is one pipecat pipeline (``_build_side``)::

    transport in -> InputTap -> Silero VAD -> Whisper STT -> brain -> PiperSpeaker -> RealtimePacer -> transport out

``run_patient_call`` and ``run_agent_bot`` build it, run it to the call's end (``_run_until_ended``: an
assessment, a hang-up, the turn or time limit, no caller) and return a ``CallOutcome`` built the same way
for both (``_outcome``). Each takes its configuration as one frozen value (``PatientCallSettings``,
``AgentCallSettings``; both are ``CallSettings``) and its live objects apart: the patient or the agent, the
``CallHooks`` the call reports to, a loaded voice.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.audio.vad.vad_analyzer import VADParams
from pipecat.frames.frames import InputAudioRawFrame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.audio.vad_processor import VADProcessor
from pipecat.serializers.base_serializer import FrameSerializer
from pipecat.workers.runner import WorkerRunner
from pydantic import BaseModel, ConfigDict, Field

from audio import stt as _stt
from audio._pcm import RATE_16K
from audio.live._brains import AgentBrain, LivePatient, PatientBrain, RedFlagLine, Respond
from audio.live._bridge import BridgeTransport
from audio.live._door import (
    DEFAULT_JOIN_WINDOW_S,
    OriginPolicy,
    _check_loopback,
    _Door,
    _serve_one_caller,
    _WireSerializer,
)
from audio.live._end_of_turn import smart_turn
from audio.live._metrics import interaction_metrics
from audio.live._recording import CallClock, CallRecorder, InputTap
from audio.live._settings import LiveError, LiveSettings
from audio.live._speaking import PiperSpeaker, RealtimePacer
from audio.live._stt import WhisperSegmentSTT, speculation_start
from audio.live._transport import (
    AGENT_PROTOCOLS,
    AgentLinkSettings,
    AgentProtocol,
    PipecatTransport,
    VoiceAgentTransport,
)
from audio.live._turns import TurnTaker
from audio.live._twilio import TwilioBotSerializer, TwilioCaller
from audio.tts import DETERMINISTIC, PiperTTS, VoiceStyle
from sim.records import CallInteraction, Event, EventSink, Turn

AGENT_TRANSCRIPT = "agent_transcript.json"  # beside call.wav: the agent's own transcript (CallOutcome)

@dataclass
class CallOutcome:
    """What one side of a live call produced (``sim.live`` turns it into a ConversationResult).

    Attributes:
        turns: the transcript as this side heard and spoke it.
        termination: why the call ended: ``assessment``, ``hangup``, ``max_turns``, ``time_limit``,
            ``no_connection`` or ``error``.
        interaction: ``InteractionMetrics.model_dump()`` with ``call_s``; empty when no call took place.
        recording: the stereo ``call.<fmt>`` (this side left), or None.
        started_at: when the entry point started (wall clock).
        ended_at: when the outcome was built (wall clock).
        errors: what went wrong, one line each (no caller, a failed pipeline, the agent's failures).
        final_assessment: the patient's side: the assessment it heard.
        gathered_info: the patient's side: the facts the agent found out.
        agent_turns: the agent's turns (heard by the patient, or spoken by the voice agent).
        refused: served calls: connections refused for their origin.
        silent: served calls: connections closed for sending no caller audio in the join window.
        agent_transcript: ``agent_transcript.json`` beside the recording: the agent's own transcript of each of its
            replies (a JSON list of lines), when its link reports one (``AgentLink.transcript``: openai-realtime).
        prepared: the patient's side, when lines were prepared: (replies whose first sentence was synthesised ahead,
            replies spoken).
    """

    turns: list[Turn]
    termination: str
    interaction: CallInteraction
    recording: Path | None
    started_at: float
    ended_at: float
    errors: list[str] = field(default_factory=list)
    final_assessment: str | None = None
    gathered_info: list[str] = field(default_factory=list)
    agent_turns: int = 0
    refused: int = 0  # served calls: connections refused for their origin
    silent: int = 0   # served calls: connections closed for sending no caller audio in the join window
    agent_transcript: Path | None = None  # the agent's own transcript of what it said (a bridge link's), JSON
    prepared: tuple[int, int] | None = None


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _no_events(_event: Event) -> None:
    return None


@dataclass(frozen=True, kw_only=True)
class CallHooks:
    """Where one side of a live call reports while it runs (its live objects besides the brain and the voice).

    Attributes:
        sink: receives every event of the call (speech, turns, overlaps, latencies).
        on_ready: called with the server's URL once it listens (a served call only).
        log: where refusals and closed connections are reported, one line each.
    """

    sink: EventSink = _no_events
    on_ready: Callable[[str], Awaitable[None] | None] | None = None
    log: Callable[[str], None] = _stderr


class CallSettings(BaseModel):
    """How one side of a live call takes its call: turn-taking, where it serves, who may call, its voice (frozen).

    What both entry points share; ``PatientCallSettings`` and ``AgentCallSettings`` add to it and set each side's
    defaults. Keyword-only; every field is described in the schema (``model_fields``).
    """

    model_config = ConfigDict(frozen=True)

    side: LiveSettings = Field(default=LiveSettings(), description="this side's turn-taking and limits")
    host: str = Field(default="127.0.0.1", description="the loopback address to serve on")
    port: int = Field(default=8765, ge=0, le=65535, description="the port to serve on")
    connect_timeout_s: float | None = Field(default=30.0, description="how long to wait for a caller or a "
                                                                      "connection (None: forever)")
    origins: OriginPolicy = Field(default=OriginPolicy(), description="which clients may connect")
    join_window_s: float = Field(default=DEFAULT_JOIN_WINDOW_S, gt=0,
                                 description="how long a connection has to send its first audio")
    style: VoiceStyle | None = Field(default=None, description="this side's voice")
    recording: Path | None = Field(default=None, description="where to write call.<fmt>; None records nothing to "
                                                             "disk")


class PatientCallSettings(CallSettings):
    """The simulated patient's call (``run_patient_call``): ``CallSettings`` and what the patient's side adds."""

    scenario_id: str = Field(description="the scenario, for the events")
    k: int = Field(default=0, ge=0, description="the run's repetition, for the events")
    turn_limit: int = Field(description="agent turns after which the patient says goodbye (the nudge comes one "
                                        "turn earlier)")
    connect: str | None = Field(default=None, description="a websocket URL to dial; None serves one caller instead")
    protocol: AgentProtocol = Field(default="pipecat", description="with connect: the protocol the agent speaks "
                                                                   "(audio.live._transport): pipecat's protobuf "
                                                                   "frames, or twilio (the patient plays Twilio's "
                                                                   "side of Media Streams)")
    vocabulary: tuple[str, ...] | None = Field(default=None, description="words Whisper should favour (the "
                                                                         "scenario's drug names)")
    link: AgentLinkSettings = Field(default=AgentLinkSettings(), description="with connect: what the transport "
                                                                             "needs besides the URL (model, key, "
                                                                             "instructions, turn taking)")


class AgentCallSettings(CallSettings):
    """The built-in voice agent's call (``run_agent_bot``): the agent's defaults.

    The agent listens with a longer VAD stop than the patient (0.45 s, and 0.6 s on the ``vad`` path or for a turn
    the end-of-turn model judged incomplete), so a patient's pause inside an answer does not cut it in half, and with
    no question rule (a patient's answers are not questions); it serves on 8766 and waits for a caller for as long as
    it takes. Not shorter: its callers are the simulated patient, whose Piper voice pauses up to 0.42 s inside an
    answer (Silero's silence at its commas, 60 answers of 15 scenarios), and on that voice Smart Turn judges such a
    pause complete about as often as the answer's end (0.57 against 0.56, 2026-11-29); with 0.2 s the agent cut the
    patient off at about half of those pauses.
    """

    side: LiveSettings = Field(default=LiveSettings(smart_turn_stop_s=0.45, vad_stop_s=0.6, turn_wait_s=0.0),
                               description="the agent's turn-taking and limits")
    port: int = Field(default=8766, ge=0, le=65535, description="the port to serve on")
    connect_timeout_s: float | None = Field(default=None, description="how long to wait for a caller (None: "
                                                                      "forever)")
    protocol: AgentProtocol = Field(default="pipecat", description="the protocol callers speak: pipecat's protobuf "
                                                                   "frames, or twilio (Media Streams, with pipecat's "
                                                                   "TwilioFrameSerializer as the bot's side)")


def _unknown(protocol: str) -> LiveError:
    return LiveError(f"agent protocol {protocol[:40]!r}: give one of {', '.join(AGENT_PROTOCOLS)} (--agent-protocol).")


def voice_agent_transport(protocol: str, *, log: Callable[[str], None] = _stderr) -> VoiceAgentTransport:
    """A new ``VoiceAgentTransport`` (``audio.live._transport``) for one call to an agent speaking ``protocol``.

    Args:
        protocol: one of ``AGENT_PROTOCOLS``: ``pipecat`` (``PipecatTransport``) or ``twilio`` (``TwilioCaller``).
        log: where the transport notes what it ignored from the agent, one line per kind.

    Raises:
        LiveError: an unknown protocol.
    """
    if protocol == "pipecat":
        return PipecatTransport()
    if protocol == "twilio":
        return TwilioCaller(log=log)
    if protocol == "openai-realtime":
        from audio.live._realtime import RealtimeCaller

        return RealtimeCaller(log=log)
    if protocol == "chat-audio":
        from audio.live._chat_audio import ChatAudioCaller

        return ChatAudioCaller(log=log)
    raise _unknown(protocol)


def served_serializer(protocol: str, door: _Door) -> FrameSerializer:
    """What a served call (the built-in voice agent) reads and writes behind ``door``, for callers of ``protocol``.

    Raises:
        LiveError: an unknown protocol.
    """
    if protocol == "pipecat":
        return _WireSerializer(door)
    if protocol == "twilio":
        return TwilioBotSerializer(door)
    if protocol == "openai-realtime":
        from audio.live._realtime import RealtimeBotSerializer

        return RealtimeBotSerializer(door)
    raise _unknown(protocol)  # chat-audio is served over HTTP (audio.live._chat_audio.serve_chat_audio)


def _build_side(brain: TurnTaker, transport: Any, *, tts: PiperTTS, style: VoiceStyle | None,
                recorder: CallRecorder, vocabulary: Sequence[str] | None) -> tuple[Pipeline, PiperSpeaker]:
    s = brain.settings
    vad = VADProcessor(vad_analyzer=SileroVADAnalyzer(sample_rate=RATE_16K, params=VADParams(
        confidence=s.vad_confidence, start_secs=s.vad_start_s, stop_secs=s.listening_stop_s)))
    stt = WhisperSegmentSTT(beam_size=s.beam_size, vocabulary=vocabulary, on_transcribed=brain.on_transcribed,
                            speculate=s.speculative_stt, speculate_after_s=speculation_start(s.listening_stop_s))
    speaker = PiperSpeaker(tts=tts, style=style, on_first_audio=brain.on_first_audio, far_quiet=lambda: brain.far_quiet)

    def on_speech(start: bool, at: float) -> None:
        speaker.on_own_speech(start)
        brain.on_own_speech(start, at)

    pacer = RealtimePacer(clock=brain.clock, recorder=recorder, on_speech=on_speech)
    brain.attach(pacer, stt)
    tap = InputTap(recorder=recorder, on_voice=brain.on_far_voice, on_audio=brain.on_far_audio)
    pipeline = Pipeline([transport.input(), tap, vad, stt, brain, speaker, pacer, transport.output()])
    return pipeline, speaker


def _worker(pipeline: Pipeline) -> PipelineWorker:
    return PipelineWorker(pipeline, params=PipelineParams(audio_in_sample_rate=RATE_16K,
                                                          audio_out_sample_rate=RATE_16K),
                          idle_timeout_secs=None, enable_rtvi=False, enable_turn_tracking=False,
                          check_dangling_tasks=False)


_WARMED: set[tuple[str, int]] = set()


def _drop_audio_before_start(input_transport: Any) -> None:  # pipecat's input transport
    """Drop audio that arrives before the pipeline has started, instead of failing the call.

    pipecat's websocket client connects while the pipeline is set up, before its StartFrame, so audio the far
    end sends at once reaches ``push_audio_frame`` before the input transport has made its queue, and the call
    ended with "'WebsocketClientInputTransport' object has no attribute '_audio_in_queue'" (one live-latency
    bench run of three on 2026-11-24). Nothing is heard before the call starts anyway.
    """
    push = input_transport.push_audio_frame

    async def push_when_started(frame: Any) -> None:  # a pipecat frame
        if getattr(input_transport, "_audio_in_queue", None) is None:
            return
        await push(frame)

    input_transport.push_audio_frame = push_when_started


def warm_up(tts: PiperTTS, *, beam_size: int = 5) -> None:
    """Load Whisper, Piper and Smart Turn and run each once per process, so no turn of a call is the slow first one.

    Args:
        tts: the voice to warm up.
        beam_size: the Whisper beam the call will use.
    """
    key = (str(tts.model_path), beam_size)
    if key in _WARMED:
        return
    speech = tts.synthesize("Hello, this is a warm up.", settings=DETERMINISTIC)
    _stt.transcribe(speech.samples, sample_rate=speech.sample_rate, beam_size=beam_size)
    smart_turn().judge(speech.samples)
    _WARMED.add(key)


FAREWELL_S = 0.3        # after the call ends, the call_ended message and the last frames get this long to leave
CANCEL_TIMEOUT_S = 10.0  # on Ctrl-C: how long the pipeline gets to cancel, and then to finish
STOP_TIMEOUT_S = 15.0    # after the call ends: how long the pipeline gets to finish before it is cancelled


async def _first(*events: asyncio.Event) -> None:
    """Wait until one of ``events`` is set."""
    waits = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()


async def _run_until_ended(worker: PipelineWorker, brain: TurnTaker, *, time_limit_s: float,
                           connected: asyncio.Event, connect_timeout_s: float | None,
                           recorder: CallRecorder,
                           before_stop: Callable[[], Awaitable[None]] | None = None) -> list[str]:
    """Run one side's pipeline until the call ends (or nobody connects in time) and the pipeline stops.

    ``before_stop`` runs once the call is over and before the pipeline is stopped (the connection is still open):
    a dialling patient's transport says its last words there (``VoiceAgentTransport.closing``).

    Returns:
        What went wrong, as lines for the record: the pipeline's failure, or nothing.
    """
    runner = WorkerRunner(handle_sigint=False, check_dangling_tasks=False)
    await runner.add_workers(worker)
    run = asyncio.create_task(runner.run())

    async def watchdog() -> None:
        if connect_timeout_s is not None:
            try:  # a transport that says it cannot connect (a bridge's link) ends the call before the timeout
                await asyncio.wait_for(_first(connected, brain.ended), connect_timeout_s)
            except TimeoutError:
                await brain.end_call("no_connection")
                return
            if not connected.is_set():
                return
        else:
            await connected.wait()
        try:
            await asyncio.wait_for(brain.ended.wait(), time_limit_s)
        except TimeoutError:
            await brain.end_call("time_limit")

    dog = asyncio.create_task(watchdog())
    try:
        done, _ = await asyncio.wait({run, dog}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        # Ctrl-C (asyncio.run cancels the main task): stop the pipeline the way it expects, else its worker
        # waits forever for a pipeline whose tasks were cancelled under it and the process never exits
        recorder.stop()
        dog.cancel()
        try:
            await asyncio.wait_for(worker.cancel(reason="interrupted"), CANCEL_TIMEOUT_S)
            await asyncio.wait_for(run, CANCEL_TIMEOUT_S)
        except (Exception, asyncio.CancelledError):  # already stopping; leave the rest to asyncio
            run.cancel()
        raise
    if dog in done:
        await brain.wait_until_quiet()
        await asyncio.sleep(FAREWELL_S)
        recorder.stop()  # the call ends here on its own clock, however long the teardown below takes
        if before_stop is not None:
            await before_stop()
        await worker.cancel(reason=brain.end_reason)
    else:
        recorder.stop()
        dog.cancel()
        await brain.end_call(brain.end_reason or "hangup")
        if before_stop is not None:
            await before_stop()
    try:
        await asyncio.wait_for(run, STOP_TIMEOUT_S)
    except TimeoutError:
        run.cancel()
    exc = run.exception() if run.done() and not run.cancelled() else None
    return [] if exc is None else [f"the live pipeline failed: {type(exc).__name__}: {exc}"]


async def _outcome(brain: TurnTaker, *, errors: list[str], no_call: Callable[[], str], recorder: CallRecorder,
                   recording: Path | None, connected: asyncio.Event, started: float,
                   door: _Door | None) -> CallOutcome:
    """What one side of a call produced, once the call has ended: built the same way for both sides.

    The recording is written only if a call took place (``connected``); no call, no interaction: an empty
    dict, so that summaries do not count a call that never happened. ``no_call()`` says why there was
    none. A patient that heard an assessment ended the call on it, whatever stopped the pipeline.
    """
    path = await asyncio.to_thread(recorder.write, recording) if recording is not None and connected.is_set() \
        else None
    if brain.end_reason == "no_connection":
        errors = [*errors, no_call()]
    # the serializer writes exactly CallInteraction's keys (audio.live._metrics.InteractionMetrics)
    interaction = cast(CallInteraction, interaction_metrics(brain.timeline).model_copy(
        update={"call_s": round(recorder.length_s, 3)}).model_dump()) if connected.is_set() else CallInteraction()
    if isinstance(brain, PatientBrain):
        final_assessment, gathered_info = brain.final_assessment, list(brain.patient.gathered_info)
        agent_turns = brain.agent_turns  # the agent's turns the patient heard
    else:
        final_assessment, gathered_info, agent_turns = None, [], brain.replies  # the agent's own replies
    termination = "assessment" if final_assessment is not None else brain.end_reason or "hangup"
    return CallOutcome(turns=brain.turns, termination=termination, interaction=interaction, recording=path,
                       started_at=started, ended_at=time.time(), errors=errors + brain.errors,
                       final_assessment=final_assessment, gathered_info=gathered_info, agent_turns=agent_turns,
                       refused=door.refused if door is not None else 0, silent=door.silent if door is not None else 0)


class _CallStart:
    """Starts a call once: the clock and the recording start now, then ``then()`` runs (as a task, kept)."""

    def __init__(self, clock: CallClock, recorder: CallRecorder, connected: asyncio.Event,
                 then: Callable[[], Coroutine[Any, Any, None]] | None = None) -> None:
        self._clock, self._recorder, self._connected, self._then = clock, recorder, connected, then
        self._task: asyncio.Task[None] | None = None

    def __call__(self) -> None:
        if self._connected.is_set():
            return
        self._connected.set()
        self._clock.t0, self._clock.wall0 = time.monotonic(), time.time()
        self._recorder.start()
        if self._then is not None:
            self._task = asyncio.create_task(self._then())


async def run_patient_call(
    settings: PatientCallSettings,
    *,
    patient: LivePatient,
    is_assessment: Callable[[str], bool],
    hooks: CallHooks = CallHooks(),
    tts: PiperTTS | None = None,
    red_flag: RedFlagLine | None = None,
    prepare: Sequence[str] = (),
) -> CallOutcome:
    """One live call with the simulated patient, to its end (assessment, hang-up, turn or time limit).

    With ``settings.connect`` the patient dials that websocket URL (an external voice agent, the agent under
    test) and the call starts when it connects; otherwise it serves one caller on ``ws://host:port`` (a
    program, or a person through the web page) and waits up to ``connect_timeout_s`` (None: forever) for one:
    ``origins`` says which clients may connect, and a connection becomes the caller with its first valid audio
    frame, within ``join_window_s`` or it is closed (see ``audio.live._door``; refusals go to ``hooks.log``).
    ``hooks.on_ready(url)`` is called once the server listens. A dialling patient speaks ``settings.protocol``
    to the agent (a ``VoiceAgentTransport``, ``audio.live._transport``: pipecat's protobuf frames, or Twilio's
    side of Media Streams).

    Args:
        settings: the call's configuration (each field is described in ``PatientCallSettings``).
        patient: the information-tree simulator that answers (``sim.patient.PatientSimulator``).
        is_assessment: whether what the agent said is its spoken assessment (it ends the call).
        hooks: where the call's events, its URL and its log lines go.
        tts: the Piper voice; None loads the default.
        red_flag: what the patient cuts in with to tell a red flag (``PatientBrain``); None: its barge-ins reveal
            nothing. It cuts in only with ``settings.side.barge_in_after_s``.
        prepare: the lines the patient may start a reply with (``PatientSimulator.answer_openings``), whose first
            sentences are synthesised ahead (``PiperSpeaker.prepare``) so that such a reply is heard at once.

    Returns:
        The call's outcome; a call that never took place has ``termination == "no_connection"`` and says why
        in ``errors``.

    Raises:
        LiveError: the call could not be set up (e.g. ``host`` is not a loopback address, or a protocol other than
            pipecat's without ``connect``).
    """
    connect = settings.connect
    if connect is None and settings.protocol != "pipecat":
        raise LiveError(f"protocol {settings.protocol}: the patient speaks it when it dials an agent (connect); a "
                        "patient waiting for a caller serves pipecat's protobuf frames.")
    agent = voice_agent_transport(settings.protocol, log=hooks.log) if connect is not None else None
    tts = tts or PiperTTS()
    await asyncio.to_thread(warm_up, tts, beam_size=settings.side.beam_size)
    clock = CallClock()
    recorder = CallRecorder(clock, started=False)
    brain = PatientBrain(patient=patient, turn_limit=settings.turn_limit, is_assessment=is_assessment, clock=clock,
                         settings=settings.side, sink=hooks.sink, scenario_id=settings.scenario_id, k=settings.k,
                         red_flag=red_flag)
    connected = asyncio.Event()
    started = time.time()
    begin = _CallStart(clock, recorder, connected, then=brain.open)
    door: _Door | None = None
    refused: list[str] = []  # why the agent could not be reached, when its transport says (a bridge's link)
    if connect is not None and agent is not None:
        transport: Any = agent.pipecat_transport(connect, settings.link)
        heard = transport.input()
        _drop_audio_before_start(heard)

        async def push_audio(frame: InputAudioRawFrame) -> None:
            await heard.push_audio_frame(frame)  # looked up per frame: _drop_audio_before_start replaced it

        @transport.event_handler("on_connected")  # type: ignore[untyped-decorator]  # pipecat's is untyped
        async def _on_connected(_t: Any, websocket: Any) -> None:
            begin()
            await agent.opened(websocket, push_audio)

        @transport.event_handler("on_disconnected")  # type: ignore[untyped-decorator]
        async def _on_disconnected(_t: Any, _ws: Any) -> None:
            await brain.end_call("hangup")

        if isinstance(transport, BridgeTransport):
            @transport.event_handler("on_connect_error")  # type: ignore[untyped-decorator]
            async def _on_connect_error(_t: Any, reason: str) -> None:
                refused.append(reason)
                await brain.end_call("no_connection")
    else:
        door = _Door(policy=settings.origins, join_window_s=settings.join_window_s, log=hooks.log, on_caller=begin,
                     on_hangup=lambda: brain.end_call("hangup"), over=brain.ended.is_set)
        transport = _serve_one_caller(host=settings.host, port=settings.port, door=door, on_ready=hooks.on_ready)

    pipeline, speaker = _build_side(brain, transport, tts=tts, style=settings.style, recorder=recorder,
                                    vocabulary=settings.vocabulary)
    speaker.start_preparing(prepare)
    try:
        errors = await _run_until_ended(_worker(pipeline), brain, time_limit_s=settings.side.time_limit_s,
                                        connected=connected, connect_timeout_s=settings.connect_timeout_s,
                                        recorder=recorder, before_stop=agent.closing if agent is not None else None)
    finally:
        await speaker.stop_preparing(hooks.log)
        if agent is not None:
            await agent.closing()  # stops what the transport started, however the call ended
    link_failed = isinstance(transport, BridgeTransport) and transport.error is not None and not refused
    if link_failed:
        errors = [*errors, f"the agent's connection failed mid-call: {transport.error}"]

    def no_call() -> str:
        if door is not None:
            return door.no_caller(settings.connect_timeout_s)
        return "; ".join(refused) if refused else f"could not connect to {connect}"

    outcome = await _outcome(brain, errors=errors, no_call=no_call, recorder=recorder,
                             recording=settings.recording, connected=connected, started=started, door=door)
    if link_failed and outcome.termination not in ("assessment", "no_connection"):
        outcome.termination = "error"  # a failed call, as a failed agent call is in a text run: kept, not scored
    outcome.prepared = (speaker.from_prepared, speaker.replies) if prepare else None
    if isinstance(transport, BridgeTransport) and transport.link.transcript and outcome.recording is not None:
        outcome.agent_transcript = outcome.recording.with_name(AGENT_TRANSCRIPT)
        outcome.agent_transcript.write_text(json.dumps(transport.link.transcript, indent=1) + "\n")
    return outcome


async def run_agent_bot(
    settings: AgentCallSettings,
    *,
    respond: Respond,
    hooks: CallHooks = CallHooks(),
    tts: PiperTTS | None = None,
    websocket: Any = None,
) -> CallOutcome:
    """Serve one call as the built-in voice agent on ``ws://host:port`` and return when it ends.

    Who may call, and when a connection becomes the call: as for the served patient (``origins``,
    ``join_window_s``; see ``audio.live._door``). ``AgentCallSettings()`` has the agent's defaults; its
    ``protocol`` is what callers speak (``twilio``: the agent is a phone bot behind Media Streams, its
    serializer pipecat's ``TwilioFrameSerializer``, and a caller's first ``media`` is its first audio).

    Args:
        settings: the call's configuration (each field is described in ``AgentCallSettings``).
        respond: the agent under test: ``respond(history, agent_turn)`` returns what to say; ``history`` is
            ``(speaker, text)`` pairs. A failure ends the call (``termination == "error"``), not the server.
        hooks: where the call's events, its URL and its log lines go.
        tts: the Piper voice; None loads the default.
        websocket: a connection another server accepted (``audio.live._door.serve_calls``, several calls at
            once): the call is served on it instead of on a port of its own, and ends as no call if it sends no
            valid audio within the join window.

    Returns:
        The call's outcome, from the agent's side.

    Raises:
        LiveError: ``host`` is not a loopback address.
    """
    _check_loopback(settings.host, "--host")
    tts = tts or PiperTTS()
    await asyncio.to_thread(warm_up, tts, beam_size=settings.side.beam_size)
    clock = CallClock()
    recorder = CallRecorder(clock, started=False)
    brain = AgentBrain(respond=respond, clock=clock, settings=settings.side, sink=hooks.sink, scenario_id="", k=0)
    connected = asyncio.Event()
    started = time.time()
    door = _Door(policy=settings.origins, join_window_s=settings.join_window_s, log=hooks.log,
                 on_caller=_CallStart(clock, recorder, connected),
                 on_hangup=lambda: brain.end_call("hangup"), over=brain.ended.is_set)
    transport = _serve_one_caller(host=settings.host, port=settings.port, door=door,
                                  on_ready=hooks.on_ready if websocket is None else None,
                                  serializer=served_serializer(settings.protocol, door), handed=websocket)
    # a handed connection is the only one this call can get: it is no call once its join window has passed
    connect_timeout_s = settings.connect_timeout_s if websocket is None else settings.join_window_s + 1.0

    pipeline, _ = _build_side(brain, transport, tts=tts, style=settings.style, recorder=recorder, vocabulary=None)
    errors = await _run_until_ended(_worker(pipeline), brain, time_limit_s=settings.side.time_limit_s,
                                    connected=connected, connect_timeout_s=connect_timeout_s,
                                    recorder=recorder)
    return await _outcome(brain, errors=errors, no_call=lambda: door.no_caller(connect_timeout_s),
                          recorder=recorder, recording=settings.recording, connected=connected, started=started,
                          door=door)
