"""Live calls wired to the rest of encounter-sim: a scenario in, a scored run directory out.

``run_live`` plays one scenario's patient in a real-time call (``audio.live``), then records the call
the way a batch encounter is recorded: ``results.jsonl`` (the transcript as the patient heard it,
scored by the same scoring core), ``events.jsonl`` (speech started/stopped, transcripts, facts,
latencies, overlaps as they happen), ``summary.json`` / ``report.md`` / ``report.html`` with the
interaction metrics, and ``audio/call.wav`` (stereo: left the patient, right the agent).

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
from typing import TYPE_CHECKING

from scenarios import LoadedScenario, Scenario
from scorers import load_profile, record_for
from sim.agents.base import Agent, AgentRequest, ChatMessage
from sim.assessment import from_speech, is_spoken_assessment, parse_assessment
from sim.harness import HARNESS_VERSION, MAX_TOKENS, SYSTEM_PROMPT, TEMPERATURE
from sim.patient import PatientSimulator
from sim.records import (
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
    from audio.live import CallOutcome, LiveSettings

VOICE_NOTE = ("\n\nThis is a phone call: your words are spoken aloud by a voice. Ask one or two short "
              "questions per turn, no lists or formatting. When you give the assessment, say it as "
              "'Assessment: triage level ESI <n>. Escalation: <category>. Diagnoses: ...'.")
LIVE_TERMINATIONS: dict[str, Termination] = {"assessment": "assessment", "max_turns": "max_turns",
                                              "hangup": "hangup", "time_limit": "time_limit"}


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


def scenario_vocabulary(s: Scenario) -> list[str]:
    """Drug names and other long words of a scenario's medication facts, to bias Whisper towards them."""
    words = {w.strip(".,;:()") for f in s.information_tree if f.category.value == "medications"
             for w in f.answer.split()}
    return sorted(w for w in words if len(w) >= 5 and w.isalpha())[:20]


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


def live_settings(scenario: Scenario, *, time_limit_s: float, barge_in_after_s: float | None,
                  yield_on_overlap: bool | None) -> LiveSettings:
    """The live call's ``LiveSettings``: each flag given overrides the scenario's ``voice`` block.

    Without the flag and the block, the patient does not barge in and yields when both talk at once.
    """
    from audio.live import LiveSettings

    voice = scenario.voice
    return LiveSettings(
        time_limit_s=time_limit_s,
        barge_in_after_s=barge_in_after_s if barge_in_after_s is not None else (voice.barge_in_after_s if voice
                                                                                 else None),
        yield_on_overlap=yield_on_overlap if yield_on_overlap is not None else (voice.yield_on_overlap if voice
                                                                                else True))


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
    last_agent = next((t.text for t in reversed(outcome.turns) if t.speaker == "agent"), None)
    return ConversationResult(
        scenario_id=scenario.id, k=k, seed=seed, harness_version=HARNESS_VERSION, model=model,
        turns=outcome.turns, gathered_info=outcome.gathered_info, final_assessment=final,
        final_reply=final or last_agent, assessment=parse_assessment(final or ""),
        termination=termination, agent_turns=outcome.agent_turns, turn_limit=turn_limit, tokens=TokenUsage(),
        started_at=outcome.started_at, ended_at=outcome.ended_at, errors=errors, artifacts=artifacts,
        interaction=outcome.interaction)


async def run_live(
    loaded: LoadedScenario,
    *,
    out: Path,
    connect: str | None,
    host: str = "127.0.0.1",
    port: int = 8765,
    page: bool = False,
    page_port: int | None = None,
    time_limit_s: float = 600.0,
    turn_limit: int | None = None,
    barge_in_after_s: float | None = None,
    yield_on_overlap: bool | None = None,
    connect_timeout_s: float | None = 300.0,
    seed: int = 0,
    on_ready: Callable[[str], None] | None = None,
    announce: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr, flush=True),
    allow_origins: Sequence[str] = (),
    join_window_s: float | None = None,
) -> tuple[EncounterRecord, Path]:
    """One live encounter into a new run directory ``out``; returns its record and the directory.

    ``allow_origins``: web origins allowed to call besides loopback pages (already normalised by
    ``audio.live.parse_allowed_origin``); ``join_window_s``: how long a connection has to send audio.
    """
    from audio.live import DEFAULT_JOIN_WINDOW_S, CallHooks, OriginPolicy, PatientCallSettings, run_patient_call
    from audio.tts import style_for_profile

    scenario = loaded.scenario
    limit = turn_limit or scenario.max_turns
    model = connect or ("person (web page)" if page else f"caller on ws://{host}:{port}")
    meta = RunMeta(run_id=out.name, harness_version=HARNESS_VERSION, model=model, channel="live",
                   scenarios=[ScenarioRef(id=scenario.id, path=str(loaded.path.resolve()), sha256=loaded.sha256)],
                   k=1, seed=seed, turn_limit=turn_limit, created_at=time.time(),
                   packages=package_versions())
    store = RunStore.create(out, meta)
    k = 0
    enc_seed = encounter_seed(seed, scenario.id, k)
    store.layout.audio.mkdir(exist_ok=True)
    page_server = None
    the_page_port = page_port if page_port is not None else port + 1

    async def ready(ws_url: str) -> None:
        nonlocal page_server
        if page:
            from audio.webpage import caller_line, start_call_page

            # the page is for the person under test: a neutral caller line, never the scenario's title
            page_server = await start_call_page(ws_url=ws_url, title=caller_line(scenario.patient_profile),
                                                host=host, port=the_page_port)
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
            call = PatientCallSettings(
                scenario_id=scenario.id, k=k, turn_limit=limit, connect=connect, host=host, port=port,
                side=live_settings(scenario, time_limit_s=time_limit_s, barge_in_after_s=barge_in_after_s,
                                   yield_on_overlap=yield_on_overlap),
                style=style_for_profile(scenario.patient_profile), recording=store.layout.live_call,
                vocabulary=tuple(scenario_vocabulary(scenario)), connect_timeout_s=connect_timeout_s,
                origins=OriginPolicy(allow=tuple(allow_origins),
                                     pages=tuple(f"http://{h}:{the_page_port}" for h in ("127.0.0.1", "localhost"))
                                     if page else None),
                join_window_s=join_window_s if join_window_s is not None else DEFAULT_JOIN_WINDOW_S)
            outcome = await run_patient_call(call, patient=patient, is_assessment=is_spoken_assessment,
                                             hooks=CallHooks(sink=session.events, on_ready=ready, log=announce))
        finally:
            if page_server is not None:
                await page_server.close()
        result = to_result(outcome, scenario, k=k, seed=enc_seed, model=model, turn_limit=limit, run_dir=store.root,
                           revealed_by=dict(patient.revealed_by))
        profile = load_profile(meta.profile)
        rec = await record_for(result, scenario, evaluator_names=list(profile.evaluators), judges=None,
                               profile=profile)
        await session.record(rec)
        if outcome.termination == "no_connection":
            session.no_call(rec)
    return rec, store.root


async def serve_agent(agent: Agent, *, scenario: Scenario | None, host: str = "127.0.0.1", port: int = 8766,
                      calls: int | None = None, seed: int = 0,
                      announce: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr, flush=True),
                      on_ready: Callable[[str], None] | None = None, allow_origins: Sequence[str] = (),
                      join_window_s: float | None = None) -> list[CallOutcome]:
    """Answer ``calls`` calls (None: until cancelled) as the built-in voice agent; returns their outcomes.

    A connection that is refused or never sends audio is no call and does not count (see ``audio.live``).
    """
    from audio.channel import CLINICIAN_STYLE
    from audio.live import DEFAULT_JOIN_WINDOW_S, AgentCallSettings, CallHooks, OriginPolicy, run_agent_bot

    settings = AgentCallSettings(
        host=host, port=port, style=CLINICIAN_STYLE, origins=OriginPolicy(allow=tuple(allow_origins)),
        join_window_s=join_window_s if join_window_s is not None else DEFAULT_JOIN_WINDOW_S)
    outcomes = []
    n = 0
    while calls is None or n < calls:
        n += 1

        def ready(url: str, n: int = n) -> None:
            announce(f"voice agent ({getattr(agent, 'name', 'agent')}) waiting for call {n} on {url}")
            if on_ready is not None:
                on_ready(url)

        outcome = await run_agent_bot(settings, respond=make_respond(agent, scenario, seed=seed),
                                      hooks=CallHooks(on_ready=ready, log=announce))
        announce(f"call {n} ended ({outcome.termination}); {len(outcome.turns)} messages"
                 + (f"; errors: {'; '.join(outcome.errors)}" if outcome.errors else ""))
        outcomes.append(outcome)
    return outcomes
