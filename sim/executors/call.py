"""The call executor: each encounter is a real-time voice call to the agent under test (``--mode call``).

The simulated patient (the same information-tree simulator as every run) dials the agent's websocket
(``--agent-url``: ``audio.live.run_patient_call``) in the agent's protocol (``--agent-protocol``: pipecat's protobuf
frames, or Twilio Media Streams with the patient as Twilio; ``audio.live.VoiceAgentTransport``), speaks with the
Piper voice and hears the agent's own speech through Whisper, turn by turn by voice activity, until an assessment,
the patient's turn limit, a hang-up or the call's time limit. With ``voice: {barge_in_red_flag: true}`` (or the
persona preset ``red-flag-barge-in``) the patient cuts in once with its most important untold red flag
(``sim.live.red_flag_line``). The call becomes a ``ConversationResult`` exactly as
a live call does (``sim.live.to_result``: the agent's turns are what the patient heard, with the call's interaction
metrics), and the runner scores and records it like any other encounter; the recording is the encounter's
``call.<fmt>`` (the run's ``audio_format``).

Before the first call, ``probe_agent`` checks that something listens at the URL's host and port (a TCP
connection, no websocket), so a wrong URL is one paragraph before the run directory exists. A call that could not
connect reaches ``observe`` as an ``AgentError`` of kind ``connection_refused``, so that
``--fail-fast`` stops a run whose agent cannot be reached, and is recorded as an error with that paragraph; a call
that connected counts as a call that succeeded. A replay or an imaging item is no call: ``not_applicable``.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import SecretStr

from scenarios import LoadedScenario, scenario_vocabulary
from sim.encounter import HARNESS_VERSION, SYSTEM_PROMPT
from sim.executors.base import EncounterLost
from sim.fail_fast import CallObserver
from sim.records import AgentError, ConfigError, ConversationResult, EventSink, RunLayout, RunMeta

if TYPE_CHECKING:  # audio.live loads pipecat: imported where a call is made, not with this module
    from audio.live import AgentProtocol

DEFAULT_CALL_TIME_LIMIT_S = 300.0
CONNECT_TIMEOUT_S = 12.0  # pipecat gives up on a websocket handshake after 10 s
PROBE_TIMEOUT_S = 5.0


async def probe_agent(url: str) -> None:
    """Check that something accepts connections at the agent's host and port, before a run of calls starts.

    A TCP connection, opened and closed at once: no websocket handshake, so the agent sees no call. Raises a
    one-paragraph ``ConfigError`` naming ``--agent-url`` when the host does not resolve, refuses, or does not answer
    within ``PROBE_TIMEOUT_S``; what the websocket itself then says is each call's to report.
    """
    import asyncio
    import socket
    from urllib.parse import urlsplit

    from sim.records import ConfigError

    parts = urlsplit(url)
    host, port = parts.hostname or "", parts.port or (443 if parts.scheme == "wss" else 80)
    fix = "Start the voice agent (for a test, `encsim serve-agent --model scripted:reference`) or correct --agent-url."
    try:
        _reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), PROBE_TIMEOUT_S)
    except socket.gaierror:
        raise ConfigError(f"--agent-url {url}: the host {host!r} does not resolve (DNS). {fix}") from None
    except ConnectionRefusedError:
        raise ConfigError(f"--agent-url {url}: connection refused on {host}:{port}; nothing listens there. "
                          f"{fix}") from None
    except (TimeoutError, OSError) as exc:
        what = "no answer" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__)
        raise ConfigError(f"--agent-url {url}: cannot reach {host}:{port} ({what}). {fix}") from None
    writer.close()
    try:
        await writer.wait_closed()
    except OSError:
        pass


def agent_protocol(stored: str | None) -> AgentProtocol:
    """A run's ``agent_protocol`` (run.json; None, as in runs made before the flag: pipecat) as a protocol.

    Raises:
        ConfigError: a protocol ``audio.live`` does not speak (a hand-edited run.json).
    """
    if stored is None or stored == "pipecat":
        return "pipecat"
    from audio.live import AGENT_PROTOCOLS

    for protocol in AGENT_PROTOCOLS:
        if stored == protocol:
            return protocol
    raise ConfigError(f"run.json: agent_protocol {stored[:40]!r} is not one of {', '.join(AGENT_PROTOCOLS)} "
                      "(--agent-protocol); correct it or start a new run.")


@dataclass(frozen=True)
class CallEncounters:
    """``EncounterRunner`` over voice calls: the agent's URL and protocol, the run, and where the recordings go."""

    agent_url: str
    meta: RunMeta
    audio_dir: Path
    time_limit_s: float = DEFAULT_CALL_TIME_LIMIT_S
    protocol: AgentProtocol = "pipecat"
    api_key: str | None = field(default=None, repr=False)  # --api-key-env's value; never written anywhere

    async def run(self, item: LoadedScenario, k: int, *, seed: int, sink: EventSink,
                  observe: CallObserver) -> ConversationResult:
        """One call (``sim.executors.base.EncounterRunner``; module docstring)."""
        from audio.live import AgentLinkSettings, CallHooks, LiveSettings, PatientCallSettings, run_patient_call
        from audio.tts import style_for_profile
        from sim.encounter.assessment import is_spoken_assessment
        from sim.live import VOICE_NOTE, red_flag_line, to_result
        from sim.patient import PatientSimulator

        scenario = item.scenario
        if scenario.replay is not None or scenario.imaging is not None:  # a fixed conversation or an image: no call
            now = time.time()
            return ConversationResult(scenario_id=scenario.id, k=k, seed=seed, harness_version=HARNESS_VERSION,
                                      model=self.meta.model, turns=[], gathered_info=[],
                                      termination="not_applicable", agent_turns=0, turn_limit=0, started_at=now,
                                      ended_at=now)
        turn_limit = self.meta.turn_limit or scenario.max_turns
        voice = scenario.voice
        side = LiveSettings(time_limit_s=self.time_limit_s,
                            barge_in_after_s=voice.barge_in_after() if voice else None,
                            yield_on_overlap=voice.yield_on_overlap if voice else True)
        recording = RunLayout.encounter_call(self.audio_dir, scenario.id, k, audio_format=self.meta.audio_format)
        recording.parent.mkdir(parents=True, exist_ok=True)
        settings = PatientCallSettings(
            scenario_id=scenario.id, k=k, turn_limit=turn_limit, connect=self.agent_url, protocol=self.protocol,
            side=side, style=style_for_profile(scenario.patient_profile), recording=recording,
            vocabulary=tuple(scenario_vocabulary(scenario)), connect_timeout_s=CONNECT_TIMEOUT_S,
            link=AgentLinkSettings(
                model=self.meta.model if self.meta.model != self.agent_url else None,
                api_key=SecretStr(self.api_key) if self.api_key else None, instructions=SYSTEM_PROMPT + VOICE_NOTE,
                turn_detection="commit" if self.meta.agent_turns == "commit" else "server",
                reply="text" if self.meta.agent_reply == "text" else "audio",
                scenario_hint=scenario.id if self.meta.agent_scenario_hint else None))
        patient = PatientSimulator(scenario, seed=seed)
        started = time.time()
        outcome = await run_patient_call(settings, patient=patient, is_assessment=is_spoken_assessment,
                                         hooks=CallHooks(sink=sink, log=lambda _line: None),
                                         red_flag=red_flag_line(scenario, patient))
        if outcome.termination == "no_connection":
            reason = "; ".join(outcome.errors) or f"could not connect to {self.agent_url}"
            refused = re.search(r"\bHTTP (401|403) from ", reason)  # a bridge's link: the key was refused
            error = AgentError(f"--agent-url {self.agent_url}: {reason}. Start the voice agent (for a test, "
                               "`encsim serve-agent --model scripted:reference`) or correct --agent-url.",
                               kind=f"http_{refused.group(1)}" if refused else "connection_refused")
            observe(error)
            raise EncounterLost(str(error))
        observe(None)
        result = to_result(outcome, scenario, k=k, seed=seed, model=self.meta.model, turn_limit=turn_limit,
                           run_dir=self.audio_dir.parent, revealed_by=dict(patient.revealed_by))
        result.started_at = min(result.started_at, started)
        return result
