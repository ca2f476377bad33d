"""Live calls wired to the rest of encounter-sim: a scenario in, a scored run directory out.

``run_live`` plays one scenario's patient in a real-time call (``audio.live``), configured by one frozen
``LiveRunSettings`` (``encsim live`` builds it from its flags), then records the call
the way a batch encounter is recorded: ``results.jsonl`` (the transcript as the patient heard it,
scored by the same scoring core), ``events.jsonl`` (speech started/stopped, transcripts, facts,
latencies, overlaps as they happen), ``summary.json`` / ``report.md`` / ``report.html`` with the
interaction metrics, and ``audio/call.<fmt>`` (stereo: left the patient, right the agent; ``--audio-format``,
FLAC by default).

``serve_agent`` is the built-in voice agent: any agent (scripted control, the local model, an
endpoint) behind Whisper ears and a Piper voice, answering calls one after another.

Who may call (both servers): loopback pages and programs that send no Origin, plus ``allow_origins``
(``--allow-origin``); a connection becomes the call with its first valid audio frame within
``join_window_s`` (``--join-window``), else it is closed and is no call (see ``audio.live``). A live run
in which no caller joined (or ``--connect`` could not connect) is recorded as one error encounter whose
reason starts "no caller joined" (or "could not connect"): never scored, and its summary has no
aggregate and no safety-gate verdict, because there was no call to judge; ``encsim live`` exits 3.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from scenarios import LoadedScenario, Scenario, load_library, scenario_vocabulary
from scorers import load_profile, record_for
from sim.agents.base import Agent, AgentRequest, ChatMessage
from sim.encounter import HARNESS_VERSION, MAX_TOKENS, SYSTEM_PROMPT, TEMPERATURE
from sim.encounter.assessment import from_speech, is_spoken_assessment, parse_assessment
from sim.patient import PatientReply, PatientSimulator
from sim.records import (
    DEFAULT_AUDIO_FORMAT,
    AudioFormat,
    ConfigError,
    ConversationResult,
    EncounterRecord,
    RunMeta,
    ScenarioRef,
    Termination,
    TokenUsage,
    encounter_seed,
    package_versions,
)
from sim.session import RunSession
from sim.store import RunStore

if TYPE_CHECKING:  # audio.live loads pipecat: imported where a call is made, not with this module
    from audio.live import AgentProtocol, CallOutcome, LiveSettings, PatientCallSettings

VOICE_NOTE = ("\n\nThis is a phone call: your words are spoken aloud by a voice. Ask one or two short "
              "questions per turn, no lists or formatting. When you give the assessment, say it as "
              "'Assessment: triage level ESI <n>. Escalation: <category>. Diagnoses: ...'.")
LIVE_TERMINATIONS: dict[str, Termination] = {"assessment": "assessment", "max_turns": "max_turns",
                                              "hangup": "hangup", "time_limit": "time_limit"}


def red_flag_line(scenario: Scenario, patient: PatientSimulator) -> Callable[[], PatientReply | None] | None:
    """What ``patient`` cuts in with on a call of ``scenario`` with ``voice: {barge_in_red_flag: true}``; else None.

    Its most important red flag not told yet (``PatientSimulator.barge_in_red_flag``), never one whose answer denies
    it (the red-flag evaluator's reading, ``scorers.evaluators.is_denial``, handed in: the patient imports no
    grader). ``audio.live.run_patient_call`` takes it as ``red_flag``.
    """
    if scenario.voice is None or not scenario.voice.barge_in_red_flag:
        return None
    from scorers.evaluators import is_denial

    return lambda: patient.barge_in_red_flag(denied=is_denial)


def door_options(allow_origin: Sequence[str], join_window_s: float) -> tuple[str, ...]:
    """The ``--allow-origin`` values normalised.

    A ConfigError naming the flag for a bad one, or for a join window that is not a positive number of
    seconds.
    """
    from audio.live import parse_allowed_origin

    if not join_window_s > 0 or join_window_s == float("inf"):
        raise ConfigError(f"--join-window {join_window_s}: give a positive number of seconds (default 10), the time "
                          "a connection has to start sending audio before it is closed.")
    origins = []
    for value in allow_origin:
        try:
            origins.append(parse_allowed_origin(value))
        except ValueError as exc:
            raise ConfigError(f"--allow-origin: {exc}.") from None
    return tuple(origins)


def make_respond(agent: Agent, scenario: Scenario | None, *, seed: int = 0
                 ) -> Callable[[list[tuple[str, str]], int], Awaitable[str]]:
    """The built-in voice agent's turn: the whole call so far in, one reply out (as in batch runs)."""

    async def respond(history: list[tuple[str, str]], agent_turn: int) -> str:
        messages = [ChatMessage(role="system", content=SYSTEM_PROMPT + VOICE_NOTE)]
        messages += [ChatMessage(role="user" if who == "patient" else "assistant", content=text)
                     for who, text in history]
        reply = await agent.respond(AgentRequest(messages=messages, temperature=TEMPERATURE,
                                                 max_tokens=MAX_TOKENS, seed=seed, scenario=scenario,
                                                 agent_turn=agent_turn))
        return reply.text

    return respond


def respond_for(agent: Agent, scenario: Scenario | None, *, seed: int = 0
                ) -> Callable[[str | None], Callable[[list[tuple[str, str]], int], Awaitable[str]]]:
    """The built-in voice agent's turn for one call, given the scenario the caller named (or None).

    ``serve-agent --scenario ID`` fixes the scenario for every call; without it a call's scenario is the one its
    caller named with ``--agent-scenario-hint`` (``?encsim_scenario=ID``), which the scripted controls need and
    a model agent ignores. An id that is not in the library is no scenario: a scripted control then says, in the
    call's errors, that it must know the scenario.
    """
    library: dict[str, Scenario] = {}

    def for_call(hint: str | None) -> Callable[[list[tuple[str, str]], int], Awaitable[str]]:
        if scenario is not None or hint is None:
            return make_respond(agent, scenario, seed=seed)
        if not library:
            library.update((s.scenario.id, s.scenario) for s in load_library())
        return make_respond(agent, library.get(hint), seed=seed)

    return for_call


def _to_stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class LiveRunSettings(BaseModel):
    """What one live run is configured with (``run_live``): the run directory, who calls and how, the limits.

    Frozen and keyword-only; ``encsim live`` builds it once from its flags. ``call_settings`` turns it, with the
    scenario, into the patient's ``audio.live.PatientCallSettings``.
    """

    model_config = ConfigDict(frozen=True)

    out: Path = Field(description="the run directory to create (--out)")
    connect: str | None = Field(default=None, description="an external voice agent's websocket URL to dial "
                                                          "(--connect); None serves one caller")
    host: str = Field(default="127.0.0.1", description="the loopback address the patient serves on")
    port: int = Field(default=8765, ge=0, le=65535, description="the port the patient serves on (--port)")
    page: bool = Field(default=False, description="also serve the call page for a person (--serve)")
    page_port: int | None = Field(default=None, ge=0, le=65535, description="the call page's port (None: "
                                                                            "port + 1; 0: any free port)")
    time_limit_s: float = Field(default=600.0, gt=0, description="end the call after this long (--time-limit)")
    turn_limit: int | None = Field(default=None, description="agent turns before the patient says goodbye "
                                                             "(--max-turns; None: the scenario's max_turns)")
    barge_in_after_s: float | None = Field(default=None, gt=0, description="the patient cuts in when the agent "
                                                                           "talks this long (--barge-in-after; "
                                                                           "None: the scenario's voice block)")
    yield_on_overlap: bool | None = Field(default=None, description="the patient stops when both talk (False: "
                                                                    "--no-yield; None: the scenario's voice "
                                                                    "block, else it yields)")
    connect_timeout_s: float | None = Field(default=300.0, description="how long to wait for the caller or the "
                                                                       "connection (--wait; None: forever)")
    seed: int = Field(default=0, description="the run's seed (--seed)")
    audio_format: AudioFormat = Field(default=DEFAULT_AUDIO_FORMAT, description="how the recording is stored "
                                                                                "(--audio-format)")
    allow_origins: tuple[str, ...] = Field(default=(), description="web origins allowed to call besides loopback "
                                                                   "pages (--allow-origin), already normalised by "
                                                                   "audio.live.parse_allowed_origin")
    join_window_s: float | None = Field(default=None, gt=0, description="how long a connection has to send audio "
                                                                        "(--join-window; None: "
                                                                        "audio.live.DEFAULT_JOIN_WINDOW_S)")

    @property
    def caller(self) -> str:
        """Who calls the patient, as the run records it (its ``model``)."""
        return self.connect or ("person (web page)" if self.page else f"caller on ws://{self.host}:{self.port}")

    @property
    def call_page_port(self) -> int:
        """The call page's port: ``page_port``, else the one after ``port``."""
        return self.page_port if self.page_port is not None else self.port + 1

    def side_settings(self, scenario: Scenario) -> LiveSettings:
        """The patient's ``LiveSettings``: each flag given overrides the scenario's ``voice`` block.

        Without the flag and the block, the patient does not barge in and yields when both talk at once; with
        ``barge_in_red_flag`` and neither ``--barge-in-after`` nor ``barge_in_after_s`` it cuts in after
        ``scenarios.schema.RED_FLAG_BARGE_IN_AFTER_S``.
        """
        from audio.live import LiveSettings

        voice = scenario.voice
        barge_in = self.barge_in_after_s if self.barge_in_after_s is not None else (voice.barge_in_after() if voice
                                                                                     else None)
        yields = self.yield_on_overlap if self.yield_on_overlap is not None else (voice.yield_on_overlap if voice
                                                                                  else True)
        return LiveSettings(time_limit_s=self.time_limit_s, barge_in_after_s=barge_in, yield_on_overlap=yields)

    def call_settings(self, scenario: Scenario, *, k: int, recording: Path) -> PatientCallSettings:
        """The patient's side of the call (``audio.live.run_patient_call``) for ``scenario``'s repetition ``k``.

        The turn limit, the voice and Whisper's vocabulary come from the scenario; with the page served, only
        its origins (and ``allow_origins``) may call.
        """
        from audio.live import DEFAULT_JOIN_WINDOW_S, OriginPolicy, PatientCallSettings
        from audio.tts import style_for_profile

        pages = tuple(f"http://{h}:{self.call_page_port}" for h in ("127.0.0.1", "localhost")) if self.page else None
        return PatientCallSettings(
            scenario_id=scenario.id, k=k, turn_limit=self.turn_limit or scenario.max_turns, connect=self.connect,
            host=self.host, port=self.port, side=self.side_settings(scenario),
            style=style_for_profile(scenario.patient_profile), recording=recording,
            vocabulary=tuple(scenario_vocabulary(scenario)), connect_timeout_s=self.connect_timeout_s,
            origins=OriginPolicy(allow=self.allow_origins, pages=pages),
            join_window_s=self.join_window_s if self.join_window_s is not None else DEFAULT_JOIN_WINDOW_S)


def to_result(outcome: CallOutcome, scenario: Scenario, *, k: int, seed: int, model: str, turn_limit: int,
              run_dir: Path, revealed_by: dict[str, str] | None = None) -> ConversationResult:
    """A live call as a ConversationResult: agent turns are what the patient heard (Whisper's text)."""
    final = from_speech(outcome.final_assessment) if outcome.final_assessment else None
    termination = LIVE_TERMINATIONS.get(outcome.termination, "error")
    errors = list(outcome.errors)
    if termination == "error" and not errors:
        errors.append(f"the call ended without an assessment ({outcome.termination})")
    agent_turn = 0
    for turn in outcome.turns:
        if turn.speaker == "agent":
            agent_turn += 1
        turn.agent_turn = agent_turn
        if turn.revealed and revealed_by:  # which layer of the patient's understanding revealed each fact
            turn.revealed_by = {fid: revealed_by[fid] for fid in turn.revealed if fid in revealed_by}
    artifacts = {"recording": str(outcome.recording.relative_to(run_dir))} if outcome.recording else {}
    if outcome.agent_transcript is not None:  # the agent's own words, beside what the patient heard of them
        artifacts["agent_transcript"] = str(outcome.agent_transcript.relative_to(run_dir))
    last_agent = next((t.text for t in reversed(outcome.turns) if t.speaker == "agent"), None)
    return ConversationResult(
        scenario_id=scenario.id, k=k, seed=seed, harness_version=HARNESS_VERSION, model=model,
        turns=outcome.turns, gathered_info=outcome.gathered_info, final_assessment=final,
        final_reply=final or last_agent, assessment=parse_assessment(final or ""),
        termination=termination, agent_turns=outcome.agent_turns, turn_limit=turn_limit, tokens=TokenUsage(),
        started_at=outcome.started_at, ended_at=outcome.ended_at, errors=errors, artifacts=artifacts,
        interaction=outcome.interaction)


async def run_live(
    settings: LiveRunSettings,
    loaded: LoadedScenario,
    *,
    on_ready: Callable[[str], None] | None = None,
    announce: Callable[[str], None] = _to_stderr,
) -> tuple[EncounterRecord, Path]:
    """One live encounter into a new run directory ``settings.out``; returns its record and the directory.

    Args:
        settings: the run's configuration (see ``LiveRunSettings``).
        loaded: the scenario whose patient takes the call.
        on_ready: called with the patient's websocket URL once it listens (or dials).
        announce: where the lines for the person running the call go (stderr, or the dashboard).
    """
    from audio.live import CallHooks, run_patient_call

    scenario = loaded.scenario
    model = settings.caller
    meta = RunMeta(run_id=settings.out.name, harness_version=HARNESS_VERSION, model=model, channel="live",
                   scenarios=[ScenarioRef(id=scenario.id, path=str(loaded.path.resolve()), sha256=loaded.sha256)],
                   k=1, seed=settings.seed, turn_limit=settings.turn_limit, audio_format=settings.audio_format,
                   created_at=time.time(),
                   packages=package_versions())
    store = RunStore.create(settings.out, meta)
    k = 0
    enc_seed = encounter_seed(settings.seed, scenario.id, k)
    store.layout.audio.mkdir(exist_ok=True)
    page_server = None

    async def ready(ws_url: str) -> None:
        nonlocal page_server
        if settings.page:
            from audio.webpage import caller_line, start_call_page

            # the page is for the person under test: a neutral caller line, never the scenario's title
            page_server = await start_call_page(ws_url=ws_url, title=caller_line(scenario.patient_profile),
                                                host=settings.host, port=settings.call_page_port)
            announce(f"open {page_server.url} in a browser to talk with the patient ({scenario.id})")
        else:
            announce(f"the patient ({scenario.id}) is waiting for a call on {ws_url}")
        if on_ready is not None:
            on_ready(ws_url)

    patient = PatientSimulator(scenario, seed=enc_seed)
    async with RunSession(store, meta, [loaded]) as session:
        session.started(scenario_ids=[scenario.id], k=1, total=1)
        session.encounter_started(scenario.id, k)
        try:
            call = settings.call_settings(scenario, k=k, recording=store.layout.live_call(meta.audio_format))
            outcome = await run_patient_call(call, patient=patient, is_assessment=is_spoken_assessment,
                                             hooks=CallHooks(sink=session.events, on_ready=ready, log=announce),
                                             red_flag=red_flag_line(scenario, patient))
        finally:
            if page_server is not None:
                await page_server.close()
        result = to_result(outcome, scenario, k=k, seed=enc_seed, model=model, turn_limit=call.turn_limit,
                           run_dir=store.root, revealed_by=dict(patient.revealed_by))
        profile = load_profile(meta.profile)
        rec = await record_for(result, scenario, evaluator_names=list(profile.evaluators), judges=None,
                               profile=profile)
        await session.record(rec)
        if outcome.termination == "no_connection":
            session.no_call(rec)
    return rec, store.root


async def serve_agent(agent: Agent, *, scenario: Scenario | None, host: str = "127.0.0.1", port: int = 8766,
                      calls: int | None = None, seed: int = 0, announce: Callable[[str], None] = _to_stderr,
                      on_ready: Callable[[str], None] | None = None, allow_origins: Sequence[str] = (),
                      join_window_s: float | None = None, protocol: AgentProtocol = "pipecat",
                      concurrency: int = 1) -> list[CallOutcome]:
    """Answer calls as the built-in voice agent, up to ``concurrency`` at once; returns their outcomes.

    ``calls``: stop taking calls once that many have ended (None: until cancelled); calls still in progress then
    end first, so with ``concurrency`` above 1 a few more may be returned. A connection that is refused or never
    sends audio is no call and does not count (see ``audio.live``). ``protocol`` is what callers speak
    (``--protocol``): ``pipecat``'s protobuf frames, ``twilio`` (the agent is a phone bot behind Twilio Media
    Streams, pipecat's ``TwilioFrameSerializer`` its serializer), ``openai-realtime`` (the Realtime protocol on the
    ``openai`` SDK's event models), or ``chat-audio``: an audio chat completions endpoint at
    ``http://host:port/v1`` (``audio.live._chat_audio``), served until cancelled, requests concurrently;
    stateless requests are no calls to count, so ``calls`` must be None and no outcomes are returned. Each call's
    scenario is ``scenario``, or the one its caller named (``respond_for``).
    """
    import asyncio

    if protocol == "chat-audio":
        if calls is not None:
            raise ConfigError("--calls does not apply to --protocol chat-audio: its requests are stateless.")
        from audio.live import serve_chat_audio

        await serve_chat_audio(host=host, port=port, respond_for=respond_for(agent, scenario, seed=seed),
                               announce=announce, on_ready=on_ready)
        return []
    from audio.channel import CLINICIAN_STYLE
    from audio.live import (
        DEFAULT_JOIN_WINDOW_S,
        AgentCallSettings,
        CallHooks,
        OriginPolicy,
        run_agent_bot,
        scenario_hint_of,
        serve_calls,
    )

    settings = AgentCallSettings(
        host=host, port=port, style=CLINICIAN_STYLE, origins=OriginPolicy(allow=tuple(allow_origins)),
        protocol=protocol, join_window_s=join_window_s if join_window_s is not None else DEFAULT_JOIN_WINDOW_S)
    for_call = respond_for(agent, scenario, seed=seed)
    name = getattr(agent, "name", "agent")
    outcomes: list[CallOutcome] = []
    stop = asyncio.Event()
    started = 0

    async def call(websocket: Any) -> None:
        nonlocal started
        started += 1
        number = started
        hint = scenario_hint_of(getattr(getattr(websocket, "request", None), "path", "") or "")
        outcome = await run_agent_bot(settings, respond=for_call(hint), hooks=CallHooks(log=announce),
                                      websocket=websocket)
        if outcome.termination == "no_connection":
            announce(f"connection {number} was no call: {'; '.join(outcome.errors)}")
            return
        outcomes.append(outcome)
        announce(f"call {len(outcomes)} ended ({outcome.termination}); {len(outcome.turns)} messages"
                 + (f"; errors: {'; '.join(outcome.errors)}" if outcome.errors else ""))
        if calls is not None and len(outcomes) >= calls:
            stop.set()

    def ready(url: str) -> None:
        announce(f"voice agent ({name}) waiting for call 1 on {url} ({concurrency} call(s) at a time; "
                 f"--protocol {protocol})")
        if on_ready is not None:
            on_ready(url)

    await serve_calls(host=host, port=port, policy=settings.origins, log=announce, call=call,
                      concurrency=concurrency, stop=stop, on_ready=ready)
    return outcomes
