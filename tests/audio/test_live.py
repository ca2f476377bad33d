"""Live voice calls (audio.live, sim.live) with real parts only: real Piper, real Whisper, real pipecat
pipelines talking protobuf frames over websockets on 127.0.0.1 (free ports).

* a headless end-to-end call between the simulated patient and the built-in scripted reference agent;
* a hand-written websocket caller that streams WAV / FLAC speech to a served patient and hangs up;
* a barge-in call: the patient cuts into a long agent monologue and the agent yields;
* fast unit tests of the timing maths, the recorder, ``speakable`` and the spoken-assessment parser.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
import pytest_asyncio
import soundfile as sf
from loguru import logger

from audio.live import (
    LIVE_RATE,
    CallRecorder,
    LiveSettings,
    Timeline,
    TurnTiming,
    interaction_metrics,
    speakable,
)
from scenarios import LoadedScenario
from sim.agents.base import AgentReply, AgentRequest
from sim.agents.scripted import ReferenceAgent
from sim.encounter.assessment import from_speech, is_spoken_assessment, parse_assessment
from sim.records import ConversationResult, read_events
from sim.summary import live_metrics
from tests.audio.live_helpers import SetClock
from tests.public_data import JFK

REPO = Path(__file__).resolve().parents[2]
LOUD_RMS = 500.0  # int16 RMS; audio.live treats < 300 as a pause


@pytest.fixture(scope="module", autouse=True)
def quiet_pipecat() -> Iterator[None]:
    """pipecat logs every frame type it meets at DEBUG through loguru; mute it for this module only."""
    logger.disable("pipecat")
    try:
        yield
    finally:
        logger.enable("pipecat")


@pytest.fixture(scope="module")
def viral_uri() -> LoadedScenario:
    from scenarios.loader import load_library

    return next(s for s in load_library() if s.scenario.id == "viral_uri")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _stop(task: asyncio.Task[Any] | None) -> None:
    """Cancel a server task (if it has not finished) and wait for it; its own exception is not ours."""
    if task is None:
        return
    if not task.done():
        task.cancel()
    try:
        await asyncio.wait_for(task, 20)
    except (asyncio.CancelledError, TimeoutError, Exception):  # cleanup only
        pass


def _rms(x: np.ndarray) -> float:
    x = np.asarray(x, dtype=np.float64)
    return float(np.sqrt(np.mean(x ** 2))) if x.size else 0.0


def _spans(events: list[Any], speaker: str) -> list[tuple[float, float]]:
    """(start, stop) speech intervals of one speaker from speech_started / speech_stopped events."""
    out, start = [], None
    for e in events:
        if getattr(e, "speaker", None) != speaker:
            continue
        if e.type == "speech_started":
            start = e.at
        elif e.type == "speech_stopped" and start is not None:
            out.append((start, e.at))
            start = None
    return out


def _to_pcm16(samples: np.ndarray, rate: int) -> bytes:
    from scipy.signal import resample_poly

    x = np.asarray(samples, dtype=np.float32)
    if x.ndim == 2:
        x = x.mean(axis=1)
    if rate != LIVE_RATE:
        g = int(np.gcd(rate, LIVE_RATE))
        x = resample_poly(x, LIVE_RATE // g, rate // g)
    return (np.clip(x, -1.0, 1.0) * 32767).astype(np.int16).tobytes()


# ============================================================================================ unit tests

def test_interaction_metrics_on_a_hand_built_timeline() -> None:
    tl = Timeline(
        own="patient",
        own_speech=[[0.0, 2.0], [5.0, 7.0], [14.0, None]],  # the last one is still open: not counted
        far_speech=[[2.6, 4.0], [6.5, 10.0], [12.5, 13.0]],
        turns=[
            TurnTiming(turn=1, heard_end=4.0, vad_stop=4.3, transcribed=4.5, decided=4.6, first_audio=4.8,
                       audible=5.0),
            TurnTiming(turn=2, heard_end=10.0, vad_stop=10.3, transcribed=10.4, decided=10.5, first_audio=10.6),
            # an interrupted reply counts in no latency and no stage
            TurnTiming(turn=3, heard_end=13.0, vad_stop=14.0, transcribed=15.0, decided=16.0, first_audio=18.0,
                       audible=20.0, interrupted=True),
        ],
        overlaps=[{"at": 6.5, "by": "agent", "yielded": True, "duration_s": 0.5},
                  {"at": 9.0, "by": "patient", "yielded": False, "duration_s": 0.0}],
    )
    metrics = interaction_metrics(tl)
    m = metrics.model_dump()  # the dict a run records
    approx = pytest.approx
    # own: far speech end -> our first audible frame; only turn 1 has both and is not interrupted
    assert m["patient_latency_s"] == approx([1.0])
    assert m["patient_latency_p50_s"] == approx(1.0) and m["patient_latency_p95_s"] == approx(1.0)
    # far: our speech end -> the far end's next start at or after it (2.0 -> 2.6; 7.0 -> 12.5)
    assert m["agent_latency_s"] == approx([0.6, 5.5])
    assert m["agent_latency_p50_s"] == approx(3.05)
    assert m["agent_latency_p95_s"] == approx(0.6 + 0.95 * 4.9)
    # gaps between the first and the last speech: 2.0-2.6, 4.0-5.0, 10.0-12.5 (6.5-7.0 is an overlap)
    assert m["silence_gaps"] == 3
    assert m["long_silences"] == 1
    assert m["max_silence_s"] == approx(2.5)
    assert m["mean_silence_s"] == approx((0.6 + 1.0 + 2.5) / 3)
    assert m["overlaps"] == tl.overlaps and m["interruptions"] == 1 and m["overlap_s"] == approx(0.5)
    assert m["patient_speech_s"] == approx(4.0) and m["agent_speech_s"] == approx(1.4 + 3.5 + 0.5)
    assert m["stages_p50_s"] == {"vad_stop": approx(0.3), "stt": approx(0.15), "decide": approx(0.1),
                                 "first_tts": approx(0.15), "playout": approx(0.2)}
    assert [t["turn"] for t in m["timeline"]] == [1, 2, 3]
    assert m["timeline"][1] == {"turn": 2, "heard_end": 10.0, "vad_stop": 10.3, "transcribed": 10.4, "decided": 10.5,
                                "first_audio": 10.6, "audible": None, "interrupted": False}
    json.dumps(m)  # it goes into results.jsonl as is
    # typed: the same figures as attributes
    assert metrics.patient_latency_p50_s == approx(1.0) and metrics.silence_gaps == 3
    assert metrics.overlaps[0].yielded and metrics.overlaps[0].by == "agent" and metrics.call_s is None
    # the keys in the order results.jsonl has always had them (this side's first), call_s last and only when set
    assert list(m) == ["patient_latency_s", "agent_latency_s", "patient_latency_p50_s", "patient_latency_p95_s",
                       "agent_latency_p50_s", "agent_latency_p95_s", "stages_p50_s", "overlaps", "interruptions",
                       "overlap_s", "silence_gaps", "long_silences", "max_silence_s", "mean_silence_s",
                       "patient_speech_s", "agent_speech_s", "timeline"]
    with_call = metrics.model_copy(update={"call_s": 21.5}).model_dump()
    assert list(with_call) == [*m, "call_s"] and with_call["call_s"] == 21.5

    # the gap threshold is a parameter; and the keys follow the side the timeline belongs to
    assert interaction_metrics(tl, gap_threshold_s=0.9).model_dump()["long_silences"] == 2
    agent_view = interaction_metrics(Timeline(own="agent", own_speech=[[0.0, 1.0]],
                                              far_speech=[[1.4, 2.0]])).model_dump()
    assert agent_view["patient_latency_s"] == approx([0.4]) and agent_view["agent_latency_s"] == []
    assert agent_view["agent_latency_p50_s"] is None
    assert list(agent_view)[:6] == ["agent_latency_s", "patient_latency_s", "agent_latency_p50_s",
                                    "agent_latency_p95_s", "patient_latency_p50_s", "patient_latency_p95_s"]
    assert list(agent_view)[-3:] == ["agent_speech_s", "patient_speech_s", "timeline"]


def test_interaction_metrics_of_an_empty_call() -> None:
    m = interaction_metrics(Timeline(own="patient")).model_dump()
    assert m["patient_latency_s"] == [] and m["patient_latency_p50_s"] is None
    assert m["silence_gaps"] == 0 and m["max_silence_s"] == 0.0 and m["mean_silence_s"] == 0.0
    assert m["interruptions"] == 0 and m["overlap_s"] == 0.0


def test_call_recorder_keeps_bursts_in_order_and_writes_stereo(tmp_path: Path) -> None:
    clock = SetClock()
    rec = CallRecorder(clock)
    frame = 320  # 20 ms at 16 kHz

    def chunk(value: int, n: int = frame) -> bytes:
        return np.full(n, value, dtype=np.int16).tobytes()

    clock.at = 1.0
    for v in (1, 2, 3):  # three far-end frames arriving at the same instant (a network burst)
        rec.add("far", chunk(v))
    clock.at = 1.01  # the next frame arrives "early": it still goes after the burst, never over it
    rec.add("far", chunk(4))
    clock.at = 2.0
    rec.add("own", chunk(7))
    rec.add("far", chunk(5, 160), rate=8000)  # another rate is resampled to 16 kHz (320 samples)

    st = rec.stereo()
    assert st.dtype == np.int16 and st.ndim == 2 and st.shape[1] == 2
    first = 16000 - frame  # a frame that arrived at t ended at t
    assert st.shape[0] == 32000
    for i, v in enumerate((1, 2, 3, 4)):
        seg = st[first + i * frame:first + (i + 1) * frame, 1]
        assert (seg == v).all(), (i, np.unique(seg))
    assert (st[:first, 1] == 0).all()
    assert (st[:31680, 0] == 0).all() and (st[31680:32000, 0] == 7).all()
    # the resampled frame is 320 samples and ends at the arrival time (2.0 s)
    tail = st[31680:32000, 1]
    assert np.median(tail) == pytest.approx(5, abs=1)

    path = rec.write(tmp_path / "call.wav")
    data, rate = sf.read(str(path), dtype="int16")
    assert rate == LIVE_RATE and data.shape == (32000, 2)
    assert (data == st).all()


def test_call_recorder_runs_from_the_call_start_to_its_end(tmp_path: Path) -> None:
    """Audio from before the call (a served patient's pacer ticks while it waits for a caller) cannot shift
    the tracks, and the file ends where the call ended on its clock, not when the teardown finished."""
    clock = SetClock()
    rec = CallRecorder(clock, started=False)
    clock.at = 30.0
    rec.add("own", np.full(320, 9, dtype=np.int16).tobytes())  # waiting for a caller: not recorded
    assert rec.length_s == 0.0
    rec.start()  # the caller was admitted; the clock restarts at 0
    clock.at = 0.02
    rec.add("own", np.full(320, 1, dtype=np.int16).tobytes())
    clock.at = 1.0
    rec.add("far", np.full(320, 2, dtype=np.int16).tobytes())
    clock.at = 1.5
    rec.stop()  # the call is over
    clock.at = 9.0  # a slow teardown: the pacer and the far end go on for a while
    rec.add("own", np.full(320, 7, dtype=np.int16).tobytes())
    rec.add("far", np.full(320, 7, dtype=np.int16).tobytes())
    st = rec.stereo()
    assert rec.length_s == pytest.approx(1.5) and st.shape == (24000, 2)
    assert (st[:320, 0] == 1).all() and (st[320:, 0] == 0).all()  # our frame at 0 s, nothing from before
    assert (st[16000 - 320:16000, 1] == 2).all() and (st[:16000 - 320, 1] == 0).all()
    assert 7 not in st and 9 not in st
    data, _ = sf.read(str(rec.write(tmp_path / "call.wav")), dtype="int16")
    assert data.shape == (24000, 2)


async def test_both_entry_points_build_their_outcome_the_same_way(tmp_path: Path) -> None:
    """run_patient_call and run_agent_bot end with one _outcome(): no call, no recording and no interaction, with
    the reason among the errors; a call, its recording and metrics (call_s last); a patient that heard an
    assessment ended the call on it; the agent counts its own replies and its errors come last."""
    from audio.live import AgentBrain, PatientBrain
    from audio.live._call import _outcome

    class _Patient:
        opening_line = "Hi."
        gathered_info = ["fever"]

        def respond(self, message: str) -> Any:
            raise AssertionError("not asked in this test")

    clock = SetClock()
    common: dict[str, Any] = dict(clock=clock, settings=LiveSettings(), sink=lambda _e: None, k=0)
    patient = PatientBrain(patient=_Patient(), turn_limit=5, is_assessment=lambda _t: False, scenario_id="s",
                           **common)
    patient.end_reason = "no_connection"
    wav = tmp_path / "call.wav"
    nobody = await _outcome(patient, errors=["the live pipeline failed: X"], no_call=lambda: "no caller joined",
                            recorder=CallRecorder(clock, started=False), recording=wav, connected=asyncio.Event(),
                            started=1.0, door=None)
    assert nobody.termination == "no_connection"
    assert nobody.errors == ["the live pipeline failed: X", "no caller joined"]
    assert nobody.interaction == {} and nobody.recording is None and not wav.exists()
    assert nobody.gathered_info == ["fever"] and nobody.agent_turns == 0 and (nobody.refused, nobody.silent) == (0, 0)
    assert nobody.started_at == 1.0 and nobody.ended_at >= nobody.started_at

    connected = asyncio.Event()
    connected.set()
    recorder = CallRecorder(clock)
    clock.at = 1.0
    recorder.add("own", np.full(320, 3, dtype=np.int16).tobytes())
    recorder.stop()
    patient.end_reason, patient.final_assessment, patient.agent_turns = "hangup", "ASSESSMENT: ESI 5", 3
    call = await _outcome(patient, errors=[], no_call=lambda: "unused", recorder=recorder, recording=wav,
                          connected=connected, started=1.0, door=None)
    assert call.termination == "assessment" and call.final_assessment == "ASSESSMENT: ESI 5" and call.errors == []
    assert call.recording == wav and wav.exists() and call.agent_turns == 3
    assert call.interaction == interaction_metrics(patient.timeline).model_dump() | {"call_s": 1.0}
    assert list(call.interaction)[-1] == "call_s"

    async def respond(history: list[tuple[str, str]], turn: int) -> str:
        return "Hello."

    agent = AgentBrain(respond=respond, scenario_id="", **common)
    agent.errors.append("RuntimeError: the model is down")
    ended = await _outcome(agent, errors=["the live pipeline failed: X"], no_call=lambda: "unused",
                           recorder=CallRecorder(clock, started=False), recording=None, connected=asyncio.Event(),
                           started=0.0, door=None)
    assert ended.termination == "hangup" and ended.final_assessment is None and ended.gathered_info == []
    assert ended.errors == ["the live pipeline failed: X", "RuntimeError: the model is down"]
    assert ended.agent_turns == agent.replies == 0 and ended.turns is agent.turns


def test_speakable_strips_markdown_and_makes_sentences() -> None:
    text = "**ASSESSMENT:**\n- Triage_level: ESI 5\n\n# Advice\n* Rest at home\n> drink `fluids`!\nCall back"
    assert speakable(text) == "ASSESSMENT: Triage level: ESI 5. Advice. Rest at home. drink fluids! Call back."
    assert speakable("") == ""
    assert speakable("Already a sentence?") == "Already a sentence?"


def test_spoken_assessments_from_whisper_transcripts() -> None:
    heard = ("Thank you. That helps. Assessment, triage level, ESI2 escalation, emergency diagnosis, one, acute "
             "coronary syndrome, two, aortic dissection advice, call an ambulance")
    assert is_spoken_assessment(heard)
    block = from_speech(heard)
    assert block.startswith("Thank you. That helps.\nASSESSMENT:")
    parsed = parse_assessment(block)
    assert parsed.triage_level == 2 and parsed.escalation == "emergency"
    assert [d.lower() for d in parsed.diagnoses] == ["acute coronary syndrome", "aortic dissection"]

    # Whisper's spelling of a spoken "ESI" varies: the number after "level" is what counts
    se5 = "Okay. Assessment. Triage level, SE5. Escalation, self care. Diagnosis, common cold."
    assert is_spoken_assessment(se5)
    parsed = parse_assessment(from_speech(se5))
    assert parsed.triage_level == 5 and parsed.escalation == "self_care"
    assert [d.lower() for d in parsed.diagnoses] == ["common cold"]
    assert parse_assessment(from_speech("Assessment: triage level E.S.I. two, escalation urgent")).triage_level == 2

    # the word alone does not make an assessment
    assert not is_spoken_assessment("I will make an assessment of your symptoms after a few more questions.")
    assert not is_spoken_assessment("Thanks. Can you tell me about your breathing?")
    assert from_speech("Can you tell me about your cough?") == "Can you tell me about your cough?"


@pytest.mark.parametrize("heard", ["Assessment, triage level, SE-5, escalation, self-care, diagnosis, common cold.",
                                   "Assessment, triage level, E-S-I 5, escalation self care."])
def test_spoken_level_with_a_hyphen(heard: str) -> None:
    assert parse_assessment(from_speech(heard)).triage_level == 5


@pytest.mark.parametrize("question", ["To finish my assessment, how would you rate your pain level, one to ten?",
                                      "For my assessment, do you have a recommendation from your doctor?"])
def test_a_question_about_the_assessment_is_not_one(question: str) -> None:
    assert not is_spoken_assessment(question)


def _result(interaction: dict[str, Any] | None) -> ConversationResult:
    return ConversationResult(scenario_id="viral_uri", k=0, seed=0, harness_version="test", model="test", turns=[],
                              gathered_info=[], termination="hangup", agent_turns=0, turn_limit=8, started_at=0.0,
                              ended_at=1.0, interaction=interaction)


def test_live_metrics_pools_calls() -> None:
    a = {"patient_latency_s": [0.5, 1.0, 2.0], "agent_latency_s": [3.0], "interruptions": 1,
         "overlaps": [{"by": "patient"}, {"by": "agent"}], "overlap_s": 0.4, "long_silences": 1, "max_silence_s": 2.5}
    b = {"patient_latency_s": [0.7], "agent_latency_s": [], "interruptions": 0, "overlaps": [{"by": "patient"}],
         "overlap_s": 0.25, "long_silences": 0, "max_silence_s": 3.5}
    out = live_metrics([_result(a), _result(b), _result(None)])
    assert out is not None
    assert out.calls == 2
    # pooled over both calls: [0.5, 0.7, 1.0, 2.0]; percentiles interpolate linearly (numpy's default)
    assert out.patient_replies == 4
    assert out.patient_latency_p50_s == pytest.approx(0.85)
    assert out.patient_latency_p95_s == pytest.approx(1.85)
    assert out.patient_latency_mean_s == pytest.approx(4.2 / 4)
    assert out.agent_replies == 1 and out.agent_latency_p50_s == pytest.approx(3.0)
    assert out.interruptions == 1 and out.overlaps == 3
    assert out.overlap_s == pytest.approx(0.65)
    assert out.long_silences == 1 and out.max_silence_s == pytest.approx(3.5)
    assert live_metrics([_result(None)]) is None
    assert live_metrics([]) is None


def test_a_single_call_run_reports_the_calls_own_percentiles() -> None:
    """One percentile definition: a run of one call has the call's p50/p95 (InteractionMetrics), to the bit."""
    tl = Timeline(own="patient",
                  own_speech=[[1.0, 2.0], [3.5, 4.0], [6.3, 7.0], [8.4, 9.0], [11.5, 12.0]],
                  far_speech=[[0.0, 0.6], [2.7, 3.0], [4.4, 5.3], [7.2, 8.0], [9.9, 10.5]],
                  turns=[TurnTiming(turn=i + 1, heard_end=end, audible=start) for i, (start, end) in
                         enumerate([(1.0, 0.6), (3.5, 3.0), (6.3, 5.3), (8.4, 8.0), (11.5, 10.5)])])
    call = interaction_metrics(tl)
    assert len(call.patient_latency_s) == 5 and len(call.agent_latency_s) == 4  # odd and even counts
    run = live_metrics([_result(call.model_dump())])
    assert run is not None and run.calls == 1
    assert (run.patient_latency_p50_s, run.patient_latency_p95_s) == (call.patient_latency_p50_s,
                                                                      call.patient_latency_p95_s)
    assert (run.agent_latency_p50_s, run.agent_latency_p95_s) == (call.agent_latency_p50_s, call.agent_latency_p95_s)
    # the even count is where the nearest-rank percentile differed: [0.2, 0.4, 0.7, 0.9] has p50 0.55, not 0.7
    assert run.agent_latency_p50_s == pytest.approx(0.55)


# ============================================================================================ live calls

async def _call_agent(agent: Any, loaded: LoadedScenario, out: Path, *, time_limit_s: float,
                      barge_in_after_s: float | None = None, timeout_s: float) -> dict[str, Any]:
    """One live call: the patient (run_live) dials the built-in voice agent (serve_agent) on a free port."""
    from sim.live import LiveRunSettings, run_live, serve_agent

    port = free_port()
    ready = asyncio.Event()
    bot = asyncio.create_task(serve_agent(agent, scenario=loaded.scenario, port=port, calls=1,
                                          on_ready=lambda _url: ready.set(), announce=lambda _m: None))
    try:
        await asyncio.wait_for(ready.wait(), 90)
        rec, root = await asyncio.wait_for(
            run_live(LiveRunSettings(out=out, connect=f"ws://127.0.0.1:{port}", time_limit_s=time_limit_s,
                                     barge_in_after_s=barge_in_after_s), loaded, announce=lambda _m: None), timeout_s)
        outcomes = await asyncio.wait_for(bot, 30)
    finally:
        await _stop(bot)
    events, skipped = read_events(root / "events.jsonl")
    return {"rec": rec, "result": rec.result, "root": root, "outcomes": outcomes, "events": events,
            "skipped": skipped}


def _transcript(turns: list[Any]) -> str:
    return "\n".join(f"{t.speaker}: {t.text} {t.revealed} {t.warnings} {t.channel}" for t in turns)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def reference_call(viral_uri: LoadedScenario, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The headless end-to-end call, once for the module: the patient dials the scripted reference agent."""
    # The call ends on the assessment (about 2.5 min on a quiet machine); the limit only bounds a broken call.
    # It is generous because on a loaded 2-core machine one Whisper transcription has taken 13 s and the call
    # ran into a 240 s limit with nothing wrong.
    return await _call_agent(ReferenceAgent(), viral_uri, tmp_path_factory.mktemp("live") / "run",
                             time_limit_s=540, timeout_s=600)


@pytest.mark.slow
def test_headless_live_call_with_the_reference_agent(reference_call: dict[str, Any],
                                                     viral_uri: LoadedScenario) -> None:
    """The patient dials the built-in voice agent (scripted reference) and the call ends on its assessment."""
    scenario = viral_uri.scenario
    rec, r, root = reference_call["rec"], reference_call["result"], reference_call["root"]
    assert r is not None
    transcript = _transcript(r.turns)
    assert rec.status == "ok", (rec.error, transcript)
    assert r.termination == "assessment", transcript
    assert r.errors == []
    # the patient heard a spoken assessment with the expected triage level (its parse: see the next test)
    assert r.final_assessment is not None and is_spoken_assessment(r.final_assessment)
    level = scenario.expected.triage_level
    words = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}
    assert re.search(rf"\blevel\b\W*(?:[a-z.]{{1,6}}\W?)?(?:{level}|{words[level]})\b", r.final_assessment, re.I), \
        r.final_assessment
    critical = {f.id for f in scenario.information_tree if f.critical}
    assert critical and critical <= set(r.gathered_info), transcript
    assert rec.score is not None and not rec.score.information.critical_missed

    # per-turn voice-to-voice latency of the patient's answers (the opening line answers nothing)
    answers = [t for t in r.turns if t.speaker == "patient" and t.revealed]
    assert len(answers) >= 3, transcript
    # measured and sane; how fast is a performance figure for bench/, not a race for a loaded test machine (on a
    # 2-core machine under a parallel suite one Whisper pass took 5-13 s)
    assert all(0 < t.channel["latency_s"] < 120 for t in answers), [t.channel for t in answers]
    assert all(0 < v < 120 for v in r.interaction["patient_latency_s"])
    assert len(r.interaction["patient_latency_s"]) >= len(answers)

    # the stereo recording: left the patient, right the agent, with speech where the events put it
    wav = root / "audio" / "call.flac"
    assert wav.is_file() and r.artifacts["recording"] == "audio/call.flac"
    data, rate = sf.read(str(wav), dtype="int16")
    assert rate == LIVE_RATE and data.ndim == 2 and data.shape[1] == 2
    duration = len(data) / rate
    events = reference_call["events"]
    assert reference_call["skipped"] == 0
    patient_spans, agent_spans = _spans(events, "patient"), _spans(events, "agent")
    assert patient_spans and agent_spans
    last_speech = max(e for _, e in patient_spans + agent_spans)
    # The recording runs on the call's own clock, the one the speech events' ``at`` are on: it starts when the
    # call starts and ends when the call ends (interaction["call_s"] on that clock), however long the teardown
    # and the transcription of the last words take on a loaded machine; so it is compared with that clock only.
    call_s = r.interaction["call_s"]
    assert duration == pytest.approx(call_s, abs=0.001), (duration, call_s)  # call_s is rounded to 1 ms
    assert last_speech <= call_s, (last_speech, call_s)
    # and it lies within the wall-clock span of the call (its clock starts after started_at, stops before ended_at)
    assert duration <= r.ended_at - r.started_at
    left, right = data[:, 0].astype(np.float64), data[:, 1].astype(np.float64)
    assert _rms(left) > 300 and _rms(right) > 300

    def window(x: np.ndarray, a: float, b: float) -> np.ndarray:
        return x[int(a * rate):int(b * rate)]

    longest_p = max(patient_spans, key=lambda s: s[1] - s[0])
    longest_a = max(agent_spans, key=lambda s: s[1] - s[0])
    assert longest_p[1] - longest_p[0] > 3 and longest_a[1] - longest_a[0] > 3
    assert _rms(window(left, *longest_p)) > LOUD_RMS
    assert _rms(window(right, *longest_a)) > LOUD_RMS
    # the patient's own channel is silent whenever the patient was not speaking (the pacer's exact timing)
    mask = np.ones(len(left), dtype=bool)
    for a, b in patient_spans:
        mask[max(0, int((a - 0.1) * rate)):int((b + 0.1) * rate)] = False
    assert mask.sum() > 10 * rate and _rms(left[mask]) < 50

    # the event log: speech of both sides, latencies, transcripts with the facts they revealed
    kinds = {e.type for e in events}
    assert {"run_started", "encounter_started", "encounter_finished", "run_finished"} <= kinds
    for kind in ("speech_started", "speech_stopped"):
        assert {e.speaker for e in events if e.type == kind} == {"patient", "agent"}
    latencies = [e for e in events if e.type == "latency"]
    assert latencies and all(e.side == "patient" and 0 < e.total_s < 120 for e in latencies)  # sane, not fast (above)
    # a latency event for every reply; the interaction's list leaves out the replies the patient broke off (a pause
    # of the agent's as long as a turn's end, when its voice is slow on a loaded machine, is answered, then yielded)
    interrupted = sum(t.speaker == "patient" and any(w.startswith("interrupted") for w in t.warnings) for t in r.turns)
    assert len(latencies) == len(r.interaction["patient_latency_s"]) + interrupted, (latencies, transcript)
    turn_events = [e for e in events if e.type == "turn"]
    assert {e.speaker for e in turn_events} == {"patient", "agent"}
    assert critical <= {f for e in turn_events for f in e.revealed}

    summary = json.loads((root / "summary.json").read_text())
    live = summary["live"]
    assert live["calls"] == 1 and live["patient_latency_p50_s"] is not None
    assert 0 < live["patient_latency_p50_s"] < 120
    assert live["patient_replies"] == len(r.interaction["patient_latency_s"])
    assert live["agent_latency_p50_s"] is not None
    assert json.loads((root / "run.json").read_text())["channel"] == "live"
    assert "## Live call" in (root / "report.md").read_text()
    assert (root / "report.html").is_file()
    assert len((root / "results.jsonl").read_text().splitlines()) == 1

    # the agent's side of the same call
    outcomes = reference_call["outcomes"]
    assert len(outcomes) == 1
    agent = outcomes[0]
    assert agent.ended_at >= agent.started_at and agent.termination in {"hangup", "assessment"}
    assert agent.errors == []
    said = [t for t in agent.turns if t.speaker == "agent"]
    heard = [t for t in agent.turns if t.speaker == "patient"]
    assert len(said) >= 3 and heard and agent.agent_turns == len(said)
    assert "triage level" in said[-1].text.lower(), said[-1].text
    assert "antibiotic" in heard[0].text.lower(), heard[0].text  # Whisper heard the opening line
    assert agent.interaction["agent_latency_p50_s"] is not None


@pytest.mark.slow
def test_headless_live_call_parses_the_whole_spoken_assessment(reference_call: dict[str, Any],
                                                               viral_uri: LoadedScenario) -> None:
    r = reference_call["result"]
    expected = viral_uri.scenario.expected
    assert r.termination == "assessment"
    assert r.assessment.triage_level == expected.triage_level, r.final_assessment
    assert r.assessment.escalation == expected.escalation.value, r.final_assessment
    assert r.assessment.diagnoses, r.final_assessment


class _Caller:
    """A phone line written from scratch: 20 ms protobuf audio frames at real-time pace both ways."""

    FRAME = int(LIVE_RATE * 0.02) * 2

    def __init__(self, ws: Any) -> None:
        from pipecat.serializers.protobuf import ProtobufFrameSerializer

        self.ws = ws
        self.ser = ProtobufFrameSerializer()
        self.t0 = time.monotonic()
        self.out = bytearray()
        self.frames: list[tuple[float, float]] = []  # (time, rms) of every audio frame received
        self.messages: list[tuple[float, dict[str, Any]]] = []

    def now(self) -> float:
        return time.monotonic() - self.t0

    async def send_loop(self) -> None:
        from pipecat.frames.frames import OutputAudioRawFrame

        start, n = time.monotonic(), 0
        while True:
            n += 1
            await asyncio.sleep(max(0.0, start + n * 0.02 - time.monotonic()))
            chunk = bytes(self.out[:self.FRAME]).ljust(self.FRAME, b"\0")  # silence when nothing to say
            del self.out[:self.FRAME]
            await self.ws.send(await self.ser.serialize(
                OutputAudioRawFrame(audio=chunk, sample_rate=LIVE_RATE, num_channels=1)))

    async def recv_loop(self) -> None:
        from pipecat.frames.frames import InputAudioRawFrame, InputTransportMessageFrame

        async for data in self.ws:
            frame = await self.ser.deserialize(data)
            if isinstance(frame, InputAudioRawFrame):
                assert frame.sample_rate == LIVE_RATE
                self.frames.append((self.now(), _rms(np.frombuffer(frame.audio, dtype=np.int16))))
            elif isinstance(frame, InputTransportMessageFrame):
                self.messages.append((self.now(), dict(frame.message)))

    async def play(self, pcm: bytes) -> float:
        """Queue speech and wait until its last frame has been sent; returns that time."""
        self.out += pcm
        while self.out:  # noqa: ASYNC110
            await asyncio.sleep(0.02)
        return self.now()

    async def send_message(self, message: dict[str, Any]) -> None:
        from pipecat.frames.frames import OutputTransportMessageUrgentFrame

        await self.ws.send(await self.ser.serialize(OutputTransportMessageUrgentFrame(message=message)))

    def patient_transcripts(self, after: float = 0.0) -> list[tuple[float, str]]:
        return [(t, m["text"]) for t, m in self.messages
                if t > after and m.get("type") == "transcript" and m.get("speaker") == "patient"]

    def loud_s(self, after: float = 0.0) -> float:
        return 0.02 * sum(1 for t, r in self.frames if t > after and r > LOUD_RMS)

    async def patient_answered(self, after: float, *, quiet_s: float = 1.0) -> float:
        """Wait for a patient transcript after ``after``, its audio, and then ``quiet_s`` of quiet."""
        while True:
            said = self.patient_transcripts(after)
            if said:
                loud = [t for t, r in self.frames if t > said[0][0] and r > LOUD_RMS]
                if loud and self.now() - loud[-1] >= quiet_s:
                    return said[0][0]
            await asyncio.sleep(0.05)


@pytest.mark.slow
async def test_a_websocket_caller_streams_speech_files_to_the_patient(tmp_path: Path,
                                                                      viral_uri: LoadedScenario) -> None:
    """A caller program speaks a WAV file (Piper, written and read back) and a real recording to the served
    patient over pipecat's protobuf wire format, hears the answers, and hangs up."""
    from scipy.signal import resample_poly
    from websockets.asyncio.client import connect

    from audio.tts import DETERMINISTIC, PiperTTS
    from sim.live import LiveRunSettings, run_live

    scenario = viral_uri.scenario
    fever = next(f for f in scenario.information_tree if f.id == "fever")
    assert "fever" in fever.triggers
    question = "Have you had a fever in the last few days?"

    speech = PiperTTS(disk_cache=False).synthesize(question, settings=DETERMINISTIC)
    samples = np.asarray(speech.samples, dtype=np.float32)
    if speech.sample_rate != 22050:
        g = int(np.gcd(speech.sample_rate, 22050))
        samples = resample_poly(samples, 22050 // g, speech.sample_rate // g).astype(np.float32)
    wav = tmp_path / "question.wav"
    sf.write(str(wav), samples, 22050)
    read, rate = sf.read(str(wav), dtype="float32")
    assert rate == 22050
    question_pcm = _to_pcm16(read, rate)
    jfk, jfk_rate = sf.read(str(JFK), dtype="float32")
    jfk_pcm = _to_pcm16(jfk, jfk_rate)

    port = free_port()
    listening = asyncio.Event()
    patient = asyncio.create_task(run_live(LiveRunSettings(out=tmp_path / "run", connect=None, port=port,
                                                           connect_timeout_s=30, time_limit_s=120), viral_uri,
                                           on_ready=lambda _url: listening.set(), announce=lambda _m: None))
    sender = receiver = None
    try:
        await asyncio.wait_for(listening.wait(), 90)
        async with connect(f"ws://127.0.0.1:{port}", max_size=None) as ws:
            caller = _Caller(ws)
            sender = asyncio.create_task(caller.send_loop())
            receiver = asyncio.create_task(caller.recv_loop())
            # the patient opens the call; let it finish before asking
            await asyncio.wait_for(caller.patient_answered(0.0), 60)
            opening = caller.patient_transcripts()[0][1]
            assert opening == scenario.opening_line
            assert caller.loud_s() > 3.0  # we heard the opening line as audio, not just as a message

            asked = await caller.play(question_pcm)
            answered_at = await asyncio.wait_for(caller.patient_answered(asked - 0.5), 40)
            answer = caller.patient_transcripts(asked - 0.5)[0][1]
            assert answer == fever.answer
            assert caller.loud_s(answered_at) > 2.0

            spoke = await caller.play(jfk_pcm)  # a real recording that asks nothing clinical
            await asyncio.wait_for(caller.patient_answered(spoke - 0.5, quiet_s=1.5), 40)
            await asyncio.sleep(1.0)  # any second reply to the last segment would have started by now

            await caller.send_message({"type": "hangup"})

            async def ended() -> dict[str, Any]:
                while True:
                    for _, m in caller.messages:
                        if m.get("type") == "call_ended":
                            return m
                    await asyncio.sleep(0.05)
            goodbye = await asyncio.wait_for(ended(), 10)
            assert goodbye["reason"] == "hangup"
            assert not receiver.done() or receiver.exception() is None
        rec, root = await asyncio.wait_for(patient, 60)
    finally:
        await _stop(sender)
        await _stop(receiver)
        await _stop(patient)

    r = rec.result
    assert r is not None
    transcript = "\n".join(f"{t.speaker}: {t.text} {t.revealed}" for t in r.turns)
    assert r.termination == "hangup" and r.final_assessment is None, transcript
    assert r.gathered_info == ["fever"], transcript  # the fever question, and nothing from the speech
    agent_turns = [t for t in r.turns if t.speaker == "agent"]
    assert "fever" in agent_turns[0].text.lower(), transcript  # what Whisper heard from the WAV file
    patient_turns = [t for t in r.turns if t.speaker == "patient"]
    assert patient_turns[0].text == scenario.opening_line
    assert patient_turns[1].revealed == ["fever"] and patient_turns[1].text == fever.answer
    # Whisper heard the recording, and the patient's reply to it revealed nothing
    later = r.turns[patient_turns[1].index + 1:]
    assert any("country" in t.text.lower() for t in later if t.speaker == "agent"), transcript
    later_answers = [t for t in later if t.speaker == "patient"]
    assert later_answers and all(t.revealed == [] for t in later_answers), transcript
    assert all(t.text in scenario.fallback_lines for t in later_answers), transcript

    wav_path = root / "audio" / "call.flac"
    data, rate = sf.read(str(wav_path), dtype="int16")
    assert rate == LIVE_RATE and data.ndim == 2 and data.shape[1] == 2
    assert _rms(data[:, 0]) > 300 and _rms(data[:, 1]) > 300  # the patient left, our speech right
    # the caller's speech lasted about 2.3 s + 11 s; the far channel has at least that much loud audio
    frames = data[: len(data) // 320 * 320, 1].reshape(-1, 320).astype(np.float64)
    loud_far_s = 0.02 * int((np.sqrt((frames ** 2).mean(axis=1)) > LOUD_RMS).sum())
    assert loud_far_s > 6.0, loud_far_s


class _LongTalker:
    """An agent that answers the opening with a long monologue (about 15 s without a pause a VAD would end a
    turn on), then only says a short line each turn."""

    name = "test:long-talker"
    vision = True
    MONOLOGUE = ("I would like to hear much more about how this cold started. Please tell me how it has changed from "
                 "one day to the next. Tell me whether anything you tried has made it feel better or worse. Tell me "
                 "about everyone around you who has been ill lately. Please take your time and tell me all of it "
                 "slowly and in detail?")
    SHORT = "I see. Please go on."

    async def respond(self, request: AgentRequest) -> AgentReply:
        return AgentReply(text=self.MONOLOGUE if request.agent_turn == 1 else self.SHORT)

    async def aclose(self) -> None:
        return None


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def barge_in_call(viral_uri: LoadedScenario, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A call in which the patient cuts in after 1.5 s of the agent's monologue; it ends on the time limit."""
    return await _call_agent(_LongTalker(), viral_uri, tmp_path_factory.mktemp("barge") / "run", time_limit_s=40,
                             barge_in_after_s=1.5, timeout_s=120)


def _first_barge_in(call: dict[str, Any]) -> tuple[dict[str, Any], tuple[float, float]]:
    overlaps = [o for o in call["result"].interaction["overlaps"] if o["by"] == "patient"]
    assert overlaps, (call["result"].interaction["overlaps"], _transcript(call["result"].turns))
    agent_spans = _spans(call["events"], "agent")
    assert agent_spans
    return overlaps[0], agent_spans[0]


@pytest.mark.slow
def test_barge_in_the_patient_cuts_in_and_the_agent_yields(barge_in_call: dict[str, Any]) -> None:
    r = barge_in_call["result"]
    transcript = _transcript(r.turns)
    overlap, monologue = _first_barge_in(barge_in_call)
    # the patient cut in about 1.5 s (plus the VAD's start confirmation) into the monologue, long before its
    # end (it lasts about 15 s); on a loaded machine the VAD confirms late (4.3 s has been seen), hence 8 s
    assert monologue[0] + 1.0 < overlap["at"] < monologue[0] + 8.0, (monologue, r.interaction["overlaps"])
    assert any(e.type == "overlap" and e.by == "patient" for e in barge_in_call["events"])
    barge = [t for t in r.turns if t.speaker == "patient" and "cut in" in t.text]
    assert barge and barge[0].revealed == [], transcript
    assert r.termination == "time_limit", transcript

    # the agent heard the patient talk over it and stopped: its monologue (about 15 s) was cut short
    agent = barge_in_call["outcomes"][0]
    ai = agent.interaction
    assert ai["interruptions"] >= 1, ai["overlaps"]
    yielded = [o for o in ai["overlaps"] if o["yielded"]]
    assert yielded and yielded[0]["by"] == "patient" and yielded[0]["duration_s"] > 0
    said = [t for t in agent.turns if t.speaker == "agent"]
    assert said[0].text == _LongTalker.MONOLOGUE
    assert any(w.startswith("interrupted") for w in said[0].warnings), said[0]
    # cut short: it stopped within 2 s of the barge-in the patient made at most 8 s in (above), well before the
    # monologue's 15 s; the bound follows the barge-in's own slack for a loaded machine, not a speed target
    assert said[0].channel["speech_end_s"] - said[0].channel["speech_start_s"] < 10, said[0].channel
    # the yielded reply counts in no latency; the agent's later replies do
    # (a sanity bound, not a speed target: on a loaded 2-core machine a reply has taken 5.6 s)
    assert ai["agent_latency_s"] and all(0 < v < 120 for v in ai["agent_latency_s"])
    # and the call went on: the agent answered again after it yielded
    assert len(said) >= 2 and said[1].text == _LongTalker.SHORT
    assert (barge_in_call["root"] / "audio" / "call.flac").is_file()


@pytest.mark.slow
def test_barge_in_line_reaches_the_agent_whole(barge_in_call: dict[str, Any]) -> None:
    agent = barge_in_call["outcomes"][0]
    first_said = next(i for i, t in enumerate(agent.turns) if t.speaker == "agent")
    heard_next = next(t for t in agent.turns[first_said + 1:] if t.speaker == "patient")
    assert "cut in" in heard_next.text.lower(), heard_next.text


@pytest.mark.slow
def test_one_barge_in_is_one_overlap(barge_in_call: dict[str, Any]) -> None:
    overlap, _ = _first_barge_in(barge_in_call)
    same = [o for o in barge_in_call["result"].interaction["overlaps"]
            if o["by"] == "patient" and abs(o["at"] - overlap["at"]) < 1.0]
    assert len(same) == 1, barge_in_call["result"].interaction["overlaps"]


# ============================================================================================ who may call

def test_origin_policy_accepts_loopback_pages_and_programs_only() -> None:
    from audio.live import OriginPolicy, parse_allowed_origin

    default = OriginPolicy()
    for ok in (None, "http://127.0.0.1:8766", "http://localhost:5173", "https://localhost", "http://[::1]:3000"):
        assert default.allows(ok), ok
    for bad in ("null", "", "file://", "https://evil.example", "http://127.0.0.1.evil.com", "http://localhost.evil.com",
                "http://evil.com#@127.0.0.1", "http://127.0.0.1@evil.com", "http://127.0.0.1:8766/path",
                "http://localhost:8766/", "HTTP://LOCALHOST:8766", "http://127.0.0.2", "ws://127.0.0.1:8766",
                "http://[::1].evil.com", "http://0.0.0.0:8766"):
        assert not default.allows(bad), bad
    extra = OriginPolicy(allow=(parse_allowed_origin("HTTPS://Evil.Example:443"),))
    assert extra.allow == ("https://evil.example",)
    assert extra.allows("https://evil.example") and not extra.allows("https://evil.example:8443")
    assert not extra.allows("http://evil.example")
    page = OriginPolicy(pages=("http://127.0.0.1:8766", "http://localhost:8766"))
    assert page.allows("http://localhost:8766") and not page.allows("http://localhost:3000")
    assert not page.allows(None)  # with the call page, a client without an Origin is not the page
    assert parse_allowed_origin("http://192.168.1.20:3000") == "http://192.168.1.20:3000"
    assert parse_allowed_origin("http://[fd00::1]:80") == "http://[fd00::1]"
    for bad in ("null", "evil.example", "https://evil.example/", "https://evil.example/call", "ftp://evil.example",
                "https://user@evil.example", "https://evil.example:99999", "file:///tmp/x.html", "*"):
        with pytest.raises(ValueError, match="not a web origin"):
            parse_allowed_origin(bad)


async def _served(loaded: LoadedScenario, out: Path, **kw: Any) -> tuple[asyncio.Task[Any], int, list[str]]:
    """``run_live`` serving the patient on a free port (as ``encsim live`` does); its log lines are collected."""
    from sim.live import LiveRunSettings, run_live

    port = free_port()
    ready = asyncio.Event()
    log: list[str] = []
    task = asyncio.create_task(run_live(LiveRunSettings(out=out, connect=None, port=port, **kw), loaded,
                                        on_ready=lambda _u: ready.set(), announce=log.append))
    await asyncio.wait_for(ready.wait(), 90)
    return task, port, log


async def _handshake_status(port: int, origin: str | None) -> int:
    """The HTTP status of a websocket handshake (101: the websocket opened; it is closed again at once)."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    try:
        async with connect(f"ws://127.0.0.1:{port}", origin=cast(Any, origin)):
            return 101
    except InvalidStatus as exc:
        return exc.response.status_code


async def test_a_page_of_another_site_is_refused_at_the_handshake(tmp_path: Path, viral_uri: LoadedScenario) -> None:
    """Cross-site websocket hijacking: a page on evil.example in the user's browser opens the patient's socket.
    It gets 403 before the websocket opens; loopback pages and programs (no Origin) get through."""
    task, port, log = await _served(viral_uri, tmp_path / "run", connect_timeout_s=4, join_window_s=1.0)
    try:
        assert await _handshake_status(port, "http://evil.example") == 403
        assert await _handshake_status(port, "http://localhost:5173") == 101
        assert await _handshake_status(port, None) == 101
        rec, root = await asyncio.wait_for(task, 60)
    finally:
        await _stop(task)
    refused = [line for line in log if "refused" in line]
    assert len(refused) == 1 and "'http://evil.example'" in refused[0], log
    assert "--allow-origin http://evil.example" in refused[0] and "\n" not in refused[0]
    # the accepted connections sent no audio: no call, nothing scored
    assert rec.status == "error" and rec.score is None and rec.result is not None and rec.result.turns == []
    assert rec.error.startswith("no caller joined within 4 s (--wait): 1 connection(s) refused"), rec.error
    assert "--allow-origin" in rec.error and "2 closed after sending no caller audio" not in rec.error
    assert not list((root / "audio").glob("call.*"))


async def test_allow_origin_lets_that_page_make_the_call(tmp_path: Path, viral_uri: LoadedScenario) -> None:
    """With --allow-origin http://evil.example that page's client is accepted, and its audio makes it the caller."""
    from websockets.asyncio.client import connect

    task, port, log = await _served(viral_uri, tmp_path / "run", connect_timeout_s=60, join_window_s=5.0,
                                    allow_origins=("http://evil.example",))
    sender = receiver = None
    try:
        evil: Any = "http://evil.example"
        async with connect(f"ws://127.0.0.1:{port}", origin=evil, max_size=None) as ws:
            caller = _Caller(ws)
            sender = asyncio.create_task(caller.send_loop())  # 20 ms frames of silence: a caller on the line
            receiver = asyncio.create_task(caller.recv_loop())

            async def opened() -> None:
                while not caller.patient_transcripts():  # noqa: ASYNC110
                    await asyncio.sleep(0.05)
            await asyncio.wait_for(opened(), 60)  # the patient answered the call with its opening line
            await caller.send_message({"type": "hangup"})
            rec, _ = await asyncio.wait_for(task, 60)
    finally:
        await _stop(sender)
        await _stop(receiver)
        await _stop(task)
    assert not [line for line in log if "refused" in line or "closed" in line], log
    assert rec.status == "ok" and rec.result is not None and rec.result.termination == "hangup"
    assert rec.result.turns[0].text == viral_uri.scenario.opening_line


def test_a_connection_that_sends_nothing_is_no_caller_and_exits_3(tmp_path: Path) -> None:
    """`encsim live` on a safety scenario: a websocket client connects and says nothing. It is closed after the
    join window and the run records "no caller joined": not scored, no aggregate (not 0), no gate, exit 3."""
    import threading

    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    from tests.adversarial.conftest import encsim_in_process

    port, out = free_port(), tmp_path / "run"
    done: dict[str, Any] = {}
    server = threading.Thread(target=lambda: done.update(outcome=encsim_in_process(
        "live", "acs_chest_pain", "--port", str(port), "--wait", "5", "--join-window", "0.5", "--out", str(out))))
    server.start()
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                ws = connect(f"ws://127.0.0.1:{port}", open_timeout=5)
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError("the patient never listened")
        with ws:
            with pytest.raises(ConnectionClosed) as closed:
                while True:  # the patient's line plays silence; we say nothing, so the server closes it
                    ws.recv(timeout=30)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    finally:
        server.join(120)
    outcome = done["outcome"]
    assert outcome.code == 3, outcome.output
    assert "Traceback" not in outcome.output
    assert "no caller joined within 5 s (--wait): 1 closed after sending no caller audio within the 0.5 s join " \
           "window (--join-window)" in outcome.stdout, outcome.output
    assert "closed a websocket connection that sent no caller audio" in outcome.stderr
    (rec,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert rec["status"] == "error" and rec["score"] is None and rec["result"]["turns"] == []
    assert not rec["result"]["interaction"]  # no call: nothing for the live metrics to count
    summary = json.loads((out / "summary.json").read_text())
    assert summary["aggregate"] is None and summary["safety_gate"]["triggered"] is False
    assert summary["errors"] == 1 and summary["completed"] == 0
    events, _ = read_events(out / "events.jsonl")
    kinds = [e.type for e in events]
    assert "encounter_failed" in kinds and "encounter_finished" not in kinds and "turn" not in kinds
    assert events[-1].type == "run_finished" and events[-1].gate_triggered is False and events[-1].aggregate is None


def _proto(**frame: Any) -> bytes:
    import pipecat.frames.protobufs.frames_pb2 as fp

    kind, fields = next(iter(frame.items()))
    message = {"audio": fp.AudioRawFrame, "text": fp.TextFrame, "transcription": fp.TranscriptionFrame,
               "message": fp.MessageFrame}[kind](**fields)
    return fp.Frame(**{kind: message}).SerializeToString()


GARBAGE: list[str | bytes] = [
    "hello",                                                   # a websocket text message
    json.dumps({"type": "hangup"}),                            # JSON as text, not a protobuf message frame
    b"\x00\xff\x13\x37 not a protobuf at all",                  # malformed binary
    b"",                                                       # an empty binary message
    _proto(text={"text": "Assessment: triage level ESI 5. Escalation: self care."}),
    _proto(transcription={"text": "Assessment: triage level ESI 5. Escalation: self care.", "user_id": "x"}),
    _proto(message={"data": json.dumps({"type": "hangup"})}),  # a hang-up before any audio is no call either
    _proto(message={"data": "[1, 2"}),                         # a message that is not JSON
    _proto(audio={"audio": b"\x01" * 641, "sample_rate": LIVE_RATE, "num_channels": 1}),  # odd byte count
    _proto(audio={"audio": b"\x01\x02" * 160, "sample_rate": 8000, "num_channels": 1}),  # not 16 kHz
    _proto(audio={"audio": b"\x01\x02" * 160, "sample_rate": LIVE_RATE, "num_channels": 0}),
    _proto(audio={"audio": b"", "sample_rate": LIVE_RATE, "num_channels": 1}),
]


async def test_garbage_frames_are_not_a_call(tmp_path: Path, viral_uri: LoadedScenario) -> None:
    """A client that sends everything but 16 kHz mono audio (text, malformed protobuf, a forged transcript of an
    assessment, a hang-up, malformed audio) is closed after the join window and is never scored."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    task, port, log = await _served(viral_uri, tmp_path / "run", connect_timeout_s=4, join_window_s=1.0)
    try:
        async with connect(f"ws://127.0.0.1:{port}") as ws:
            for payload in GARBAGE:
                await ws.send(payload)
            with pytest.raises(ConnectionClosed):
                while True:
                    await asyncio.wait_for(ws.recv(), 30)
        assert ws.close_code == 1008
        rec, root = await asyncio.wait_for(task, 60)
    finally:
        await _stop(task)
    assert rec.status == "error" and rec.score is None and rec.result is not None and rec.result.turns == []
    assert "no caller joined" in rec.error and "1 closed after sending no caller audio" in rec.error
    closed = [line for line in log if line.startswith("closed a websocket connection")]
    assert closed and f"{len(GARBAGE)} message(s) ignored" in closed[0], log
    assert any("ignoring audio at 8000 Hz with 1 channel(s)" in line for line in log), log
    events, _ = read_events(root / "events.jsonl")
    assert not [e for e in events if e.type in ("turn", "speech_started", "encounter_finished")]


async def test_the_voice_agent_refuses_other_sites_and_silent_connections(tmp_path: Path) -> None:
    """`encsim serve-agent`'s server: the same origin check and admission; neither connection is a call."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    from audio.live import AgentCallSettings, CallHooks, run_agent_bot

    async def respond(_history: list[tuple[str, str]], _turn: int) -> str:
        raise AssertionError("no call should reach the agent")

    port, ready, log = free_port(), asyncio.Event(), []
    bot = asyncio.create_task(run_agent_bot(AgentCallSettings(port=port, connect_timeout_s=4, join_window_s=0.5),
                                            respond=respond, hooks=CallHooks(on_ready=lambda _u: ready.set(),
                                                                             log=log.append)))
    try:
        await asyncio.wait_for(ready.wait(), 90)
        assert await _handshake_status(port, "https://evil.example") == 403
        async with connect(f"ws://127.0.0.1:{port}") as ws:
            await ws.send(_proto(transcription={"text": "I have crushing chest pain", "user_id": "x"}))
            with pytest.raises(ConnectionClosed):
                while True:
                    await asyncio.wait_for(ws.recv(), 30)
        outcome = await asyncio.wait_for(bot, 60)
    finally:
        await _stop(bot)
    assert outcome.termination == "no_connection" and outcome.turns == []
    assert (outcome.refused, outcome.silent) == (1, 1)
    assert any("'https://evil.example'" in line and "--allow-origin https://evil.example" in line for line in log)


async def test_a_live_patient_records_what_its_persona_held_back(by_id: dict[str, Any]) -> None:
    """The live patient's messages carry the answer's kind, the facts the persona held back and its note, as
    the batch harness's do: poor recall keeps a critical fact from an open question."""
    from audio.live import PatientBrain
    from scenarios.personas import with_persona
    from sim.patient import PatientSimulator

    scenario = with_persona(by_id["acs_chest_pain"], "poor-recall")
    common: dict[str, Any] = dict(clock=SetClock(), settings=LiveSettings(), sink=lambda _e: None, k=0)
    brain = PatientBrain(patient=PatientSimulator(scenario, seed=0), turn_limit=10, is_assessment=lambda _t: False,
                         scenario_id=scenario.id, **common)
    spoken: list[Any] = []

    async def push_frame(frame: Any, direction: Any = None) -> None:
        spoken.append(frame)

    brain.push_frame = push_frame  # type: ignore[method-assign]
    await brain.decide_and_say("Have you been diagnosed with any conditions in the past?")
    (turn,) = [t for t in brain.log.turns if t.speaker == "patient"]
    assert turn.answer_kind == "withheld" and turn.persona_held == ["risk_factors"], turn
    assert "withheld: risk_factors" in (turn.persona_note or "") and spoken
    await brain.decide_and_say("Has a doctor ever said you have diabetes or high blood pressure?")
    last = [t for t in brain.log.turns if t.speaker == "patient"][-1]
    assert last.revealed == ["risk_factors"] and last.answer_kind == "facts" and last.persona_held == []


async def test_audio_that_reaches_the_calling_side_before_its_pipeline_starts_is_dropped() -> None:
    """pipecat's websocket client connects during setup, so the far end's first audio can arrive before the input
    transport has its queue: that ended the call at once (AttributeError). It is dropped instead."""
    from pipecat.frames.frames import InputAudioRawFrame
    from pipecat.transports.websocket.client import WebsocketClientParams, WebsocketClientTransport

    from audio.live._call import _drop_audio_before_start

    frame = InputAudioRawFrame(audio=b"\0\0" * 320, sample_rate=16000, num_channels=1)
    bare = WebsocketClientTransport("ws://127.0.0.1:9", WebsocketClientParams(audio_in_enabled=True)).input()
    with pytest.raises(AttributeError, match="_audio_in_queue"):
        await bare.push_audio_frame(frame)  # what happened without the guard
    guarded = WebsocketClientTransport("ws://127.0.0.1:9", WebsocketClientParams(audio_in_enabled=True)).input()
    _drop_audio_before_start(guarded)
    await guarded.push_audio_frame(frame)  # dropped, no error
    guarded._audio_in_queue = asyncio.Queue()  # once started, audio goes through as before
    await guarded.push_audio_frame(frame)
    assert guarded._audio_in_queue.qsize() == 1
