"""Live-call turn taking: the VAD path beside Smart Turn, latency and premature replies, in one run.

Both sides run as real pipecat pipelines in this process and talk over loopback websockets in real time
(Silero VAD, Whisper tiny.en, Piper joe, Smart Turn v3.2). Each end-of-turn path (``LiveSettings.end_of_turn``:
``vad``, the old fixed VAD stop and turn wait; ``smart-turn``, the model at a short VAD stop; ``prepared``:
``smart-turn`` with the patient's answers synthesised ahead, ``PiperSpeaker.prepare``) is measured twice:

* a 10-turn call between the voiced patient and the built-in scripted agent (one question a turn, then the
  assessment), both sides on that path: the patient's voice-to-voice latency (end of the agent's speech -> first
  patient audio), p50 and p95, with the stage breakdown (VAD stop wait, STT after it, decide (the end-of-turn
  check, its hold and the simulator), first TTS frame, playout), and the built-in agent's response latency p50;
* the premature-reply measure: the agent turns of ``bench/data/pause_turns.yaml`` (26 with a 0.5-0.7 s pause in
  the middle of a sentence, 8 with a 0.25-0.35 s pause between two sentences), spoken by the built-in agent's Piper
  voice with the silence inserted, fed to a served patient by a websocket caller written here; a reply is premature
  when the patient's first audio after the pause began comes before the turn's last word has been sent.

It also prints what Piper takes for the first sentence of the patient's answers against their first clause (the
first TTS chunk), and the machine's speed at the start and the end (the median of 20 Smart Turn inferences, about
40 ms on an idle core) beside ``os.getloadavg()``: the machine is shared, and another tenant's load shows in the
first and not always in the second.

Goals on 2 cores, idle (issue 37), on the prepared path: patient p50 <= 0.25 s and p95 <= 0.45 s, the built-in
agent's p50 <= 0.35 s, and no more premature replies than the vad path. The Piper cache is off so that every line is
synthesised during the call (the prepared path synthesises its sentences during the call too, while the patient
talks). ``--patient-stop`` / ``--agent-stop`` try other smart-turn VAD stops.

Figures (2026-11-29 13:57-14:16, this 2-core machine, load average 0.7-1.3, ``.venv/bin/python
bench/live_latency.py``): patient p50 / p95 vad 0.602 / 0.998 s, smart-turn 0.420 / 0.961 s, prepared 0.223 /
0.697 s (stages p50: VAD stop 0.100, STT 0.044, decide 0.057, first TTS frame 0.001, playout 0.007; 11 of 11 replies
began with a prepared sentence); built-in agent p50 0.784, 0.578 and 0.543 s; premature replies 17, 13 and 11 of 26
mid-sentence, 3, 3 and 4 of 8 between sentences. Met: patient p50, premature mid-sentence; not met: patient p95,
agent p50, premature between sentences (by one turn).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from loguru import logger

logger.remove()  # before pipecat is imported: it logs a banner and every frame-level event
logger.add(sys.stderr, level="ERROR")

import numpy as np  # noqa: E402
import yaml  # noqa: E402

from audio._pcm import RATE_16K  # noqa: E402
from audio.channel import CLINICIAN_STYLE  # noqa: E402
from audio.live import (  # noqa: E402
    AgentCallSettings,
    CallHooks,
    LiveSettings,
    PatientCallSettings,
    run_agent_bot,
    run_patient_call,
)
from audio.live._speaking import _SENTENCE, SENTENCE_GAP_S, _to_wire_pcm  # noqa: E402
from audio.tts import DETERMINISTIC, PiperTTS, style_for_profile  # noqa: E402
from scenarios import load_library, scenario_vocabulary  # noqa: E402
from sim.agents.base import AgentReply, AgentRequest  # noqa: E402
from sim.agents.scripted import ask, assessment, ordered_facts  # noqa: E402
from sim.encounter.assessment import is_spoken_assessment  # noqa: E402
from sim.live import make_respond  # noqa: E402
from sim.patient import PatientSimulator  # noqa: E402
from sim.records import percentile  # noqa: E402

PATHS = ("vad", "smart-turn", "prepared")  # prepared: smart-turn with the patient's answers synthesised ahead
GOAL_P50, GOAL_P95, GOAL_AGENT_P50 = 0.250, 0.450, 0.350  # issue 37, smart-turn
PAUSES = Path(__file__).resolve().parent / "data" / "pause_turns.yaml"
FRAME_BYTES = int(RATE_16K * 0.02) * 2
LOUD_RMS = 500.0      # int16 RMS of a frame of the patient's speech (audio.live counts < 300 as quiet)
QUIET_AFTER_S = 1.0   # the patient's reply is over after this much quiet
NO_REPLY_S = 8.0      # a turn with no reply this long after its end has none


class OneQuestionAgent:
    """Asks about one fact per turn for ``turns`` turns, then gives the reference assessment."""

    name = "bench:one-question"
    vision = False

    def __init__(self, turns: int) -> None:
        self.turns = turns

    async def respond(self, request: AgentRequest) -> AgentReply:
        s = request.scenario
        assert s is not None
        facts = ordered_facts(s)
        if request.agent_turn <= self.turns:
            return AgentReply(text=ask([facts[(request.agent_turn - 1) % len(facts)]]))
        exp = s.expected
        return AgentReply(text=assessment(exp.triage_level, exp.escalation.value if exp.escalation else None,
                                          [d.name for d in exp.diagnoses[:2]], "Please follow this advice."))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _scenario(scenario_id: str) -> Any:
    return {s.scenario.id: s for s in load_library()}[scenario_id].scenario


STOPS: dict[str, float] = {}  # --patient-stop / --agent-stop: smart_turn_stop_s of each side, when given


def _side(path: str, base: LiveSettings, who: str) -> LiveSettings:
    update: dict[str, Any] = {"end_of_turn": "vad" if path == "vad" else "smart-turn"}
    if who in STOPS:
        update["smart_turn_stop_s"] = STOPS[who]
    return base.model_copy(update=update)


# ------------------------------------------------------------------------------------------ the 10-turn call

async def one_call(scenario_id: str, turns: int, path: str) -> dict[str, Any]:
    scenario = _scenario(scenario_id)
    port = _free_port()
    ready = asyncio.Event()
    tts = PiperTTS(disk_cache=False, memory_cache_size=0)
    agent_settings = AgentCallSettings(port=port, style=CLINICIAN_STYLE)
    agent_settings = agent_settings.model_copy(update={"side": _side(path, agent_settings.side, "agent")})
    bot = asyncio.create_task(run_agent_bot(
        agent_settings, respond=make_respond(OneQuestionAgent(turns), scenario), tts=tts,
        hooks=CallHooks(on_ready=lambda _url: ready.set())))
    await asyncio.wait_for(ready.wait(), 60)
    started = time.perf_counter()
    patient = PatientSimulator(scenario, seed=0)
    try:
        outcome = await run_patient_call(
            PatientCallSettings(scenario_id=scenario.id, turn_limit=turns + 3,
                                style=style_for_profile(scenario.patient_profile), connect=f"ws://127.0.0.1:{port}",
                                side=_side(path, LiveSettings(time_limit_s=600), "patient"),
                                vocabulary=tuple(scenario_vocabulary(scenario))),
            patient=patient, is_assessment=is_spoken_assessment, tts=tts,
            prepare=patient.answer_openings() if path == "prepared" else ())
    finally:
        agent_side = await asyncio.wait_for(bot, 60)
    metrics = outcome.interaction
    return {"metrics": metrics, "termination": outcome.termination, "seconds": time.perf_counter() - started,
            "replies": len(metrics.get("patient_latency_s", [])), "agent": agent_side.interaction,
            "facts": len(outcome.gathered_info), "errors": outcome.errors + agent_side.errors,
            "prepared": outcome.prepared}


_STAGE_FIELDS = {"vad_stop": ("heard_end", "vad_stop"), "stt": ("vad_stop", "transcribed"),
                 "decide": ("transcribed", "decided"), "first_tts": ("decided", "first_audio"),
                 "playout": ("first_audio", "audible")}


def _stage_p(metrics: dict[str, Any], q: int) -> dict[str, float]:
    out = {}
    for name, (f_a, f_b) in _STAGE_FIELDS.items():
        values = [t[f_b] - t[f_a] for t in metrics.get("timeline", []) if not t["interrupted"]
                  and t[f_a] is not None and t[f_b] is not None]
        p = percentile(values, q)  # the definition the call's own p50/p95 and the reports use
        out[name] = float("nan") if p is None else p
    return out


# ------------------------------------------------------------------------------- the premature-reply measure

def _speak(tts: PiperTTS, text: str) -> bytes:
    """``text`` as the built-in agent says it: Piper sentence by sentence, PiperSpeaker's gaps and trimming."""
    out = b""
    for i, sentence in enumerate(s for s in _SENTENCE.split(text.strip()) if s.strip()):
        speech = tts.synthesize(sentence, settings=DETERMINISTIC, style=CLINICIAN_STYLE)
        out += _to_wire_pcm(speech.samples, speech.sample_rate, gap_before_s=0.0 if i == 0 else SENTENCE_GAP_S)
    return out


def pause_turns(tts: PiperTTS, limit: int | None = None) -> list[dict[str, Any]]:
    """The pause set, spoken: each turn's parts with the pause's silence between, and where each part ends.

    A part that goes on after the pause ends in a comma when its text has no punctuation there, so Piper speaks it
    with the intonation of a clause that continues rather than of a finished sentence. ``limit``: the first N turns
    of each kind.
    """
    data = yaml.safe_load(PAUSES.read_text())
    turns = []
    for kind in ("turns", "between_sentences"):
        for item in data[kind][:limit]:
            parts = [p.strip() for p in item["text"].split("|")]
            pcm, part_ends = b"", []
            for i, part in enumerate(parts):
                last = i == len(parts) - 1
                if i:
                    pcm += bytes(int(item["pause_s"] * RATE_16K) * 2)
                pcm += _speak(tts, part if last or part[-1] in ",.?!;:" else part + ",")
                part_ends.append(len(pcm))
            turns.append({"text": item["text"].replace("| ", ""), "kind": kind, "pcm": pcm,
                          "pause_at": part_ends[0], "end": part_ends[-1]})
    return turns


class _Line:
    """The agent's side of a served patient's call: 20 ms protobuf audio frames both ways, at real-time pace."""

    def __init__(self, ws: Any) -> None:
        from pipecat.serializers.protobuf import ProtobufFrameSerializer

        self.ws = ws
        self.ser = ProtobufFrameSerializer()
        self.t0 = time.monotonic()
        self.out = bytearray()
        self.queued = 0           # bytes queued so far, silence between lines not counted
        self.sent: list[tuple[float, int]] = []  # (time, queued bytes sent by then), per frame with speech
        self.heard: list[tuple[float, float]] = []  # (time, rms) of every frame from the patient
        self.messages: list[tuple[float, dict[str, Any]]] = []

    def now(self) -> float:
        return time.monotonic() - self.t0

    async def send_loop(self) -> None:
        from pipecat.frames.frames import OutputAudioRawFrame

        start, n, done = time.monotonic(), 0, 0
        while True:
            n = max(n + 1, int((time.monotonic() - start) / 0.02))
            await asyncio.sleep(max(0.0, start + n * 0.02 - time.monotonic()))
            chunk = bytes(self.out[:FRAME_BYTES])
            del self.out[:FRAME_BYTES]
            if chunk:
                done += len(chunk)
                self.sent.append((self.now(), done))
            await self.ws.send(await self.ser.serialize(OutputAudioRawFrame(
                audio=chunk.ljust(FRAME_BYTES, b"\0"), sample_rate=RATE_16K, num_channels=1)))

    async def recv_loop(self) -> None:
        from pipecat.frames.frames import InputAudioRawFrame, InputTransportMessageFrame

        async for data in self.ws:
            frame = await self.ser.deserialize(data)
            if isinstance(frame, InputAudioRawFrame):
                x = np.frombuffer(frame.audio, dtype=np.int16).astype(np.float64)
                self.heard.append((self.now(), float(np.sqrt(np.mean(x ** 2))) if x.size else 0.0))
            elif isinstance(frame, InputTransportMessageFrame):
                self.messages.append((self.now(), dict(frame.message)))

    def queue(self, pcm: bytes) -> int:
        """Queue speech; returns the byte offset (in everything queued) at which it starts."""
        at = self.queued
        self.out += pcm
        self.queued += len(pcm)
        return at

    def sent_at(self, offset: int) -> float | None:
        """When the frame holding queued byte ``offset - 1`` was sent (the moment ``offset`` bytes were out)."""
        return next((t for t, done in self.sent if done >= offset), None)

    def first_loud(self, after: float) -> float | None:
        return next((t for t, rms in self.heard if t > after and rms > LOUD_RMS), None)

    def said_after(self, after: float) -> float | None:
        """When the patient decided its first line after ``after`` (its transcript message), or None."""
        return next((t for t, m in self.messages if t > after and m.get("type") == "transcript"
                     and m.get("speaker") == "patient"), None)

    async def answered(self, after: float, *, quiet_s: float = QUIET_AFTER_S, give_up_s: float = NO_REPLY_S) -> None:
        """Until the patient has decided a line after ``after``, spoken it and been quiet ``quiet_s`` (or, with no
        line, until ``give_up_s`` has passed): a premature reply that was cut off is not the end of its answer."""
        while True:
            said, now = self.said_after(after), self.now()
            loud = [t for t, rms in self.heard if said is not None and t > said and rms > LOUD_RMS]
            if (loud and now - loud[-1] >= quiet_s) or (said is None and now - after >= give_up_s):
                return
            await asyncio.sleep(0.05)


async def pause_set(scenario_id: str, path: str, turns: list[dict[str, Any]]) -> dict[str, Any]:
    from pipecat.frames.frames import OutputTransportMessageUrgentFrame
    from websockets.asyncio.client import connect

    scenario = _scenario(scenario_id)
    port = _free_port()
    ready = asyncio.Event()
    tts = PiperTTS(disk_cache=False, memory_cache_size=0)
    simulator = PatientSimulator(scenario, seed=0)
    patient = asyncio.create_task(run_patient_call(
        PatientCallSettings(scenario_id=scenario.id, turn_limit=1000, port=port, connect=None, connect_timeout_s=60,
                            style=style_for_profile(scenario.patient_profile),
                            side=_side(path, LiveSettings(time_limit_s=1200), "patient"),
                            vocabulary=tuple(scenario_vocabulary(scenario))),
        patient=simulator, is_assessment=is_spoken_assessment, tts=tts,
        hooks=CallHooks(on_ready=lambda _url: ready.set(), log=lambda _line: None),
        prepare=simulator.answer_openings() if path == "prepared" else ()))
    await asyncio.wait_for(ready.wait(), 60)
    rows = []
    async with connect(f"ws://127.0.0.1:{port}", max_size=None) as ws:
        line = _Line(ws)
        tasks = [asyncio.create_task(line.send_loop()), asyncio.create_task(line.recv_loop())]
        try:
            await line.answered(0.0)  # the patient's opening line
            for turn in turns:
                start = line.queue(turn["pcm"])
                while line.sent_at(start + turn["end"]) is None:  # noqa: ASYNC110
                    await asyncio.sleep(0.02)
                pause_at, end = line.sent_at(start + turn["pause_at"]), line.sent_at(start + turn["end"])
                assert pause_at is not None and end is not None
                first = line.first_loud(pause_at)
                premature = first is not None and first < end
                await line.answered(end)
                said = line.said_after(end)
                reply = line.first_loud(said) if said is not None else None
                rows.append({"text": turn["text"], "kind": turn["kind"], "premature": premature,
                             "reply_s": None if reply is None else reply - end,
                             "early_s": None if not premature or first is None else first - pause_at})
            await ws.send(await line.ser.serialize(OutputTransportMessageUrgentFrame(message={"type": "hangup"})))
            outcome = await asyncio.wait_for(patient, 60)
        finally:
            for task in tasks:
                task.cancel()
    return {"rows": rows, "termination": outcome.termination, "errors": outcome.errors, "turns": outcome.turns}


# ------------------------------------------------------------------------------------------------- the run

def _fmt(v: float | None) -> str:
    return "  n/a" if v is None or v != v else f"{v:.3f}"


def print_call(path: str, r: dict[str, Any], scenario_id: str) -> bool:
    m = r["metrics"]
    print(f"\n[{path}] call {scenario_id}: {r['replies']} patient replies, {r['seconds']:.1f} s, ended "
          f"{r['termination']}, {r['facts']} facts revealed" + (f"; errors: {r['errors']}" if r["errors"] else ""))
    if m.get("patient_latency_p50_s") is None:  # no reply: the call failed before it started
        print(f"  the call failed ({r['termination']}): no latency to measure; run the bench again")
        return False
    print(f"  patient voice-to-voice latency  p50 {m['patient_latency_p50_s']:.3f} s   "
          f"p95 {m['patient_latency_p95_s']:.3f} s   (n {len(m['patient_latency_s'])})")
    for q in (50, 95):
        print(f"    stages p{q}: " + "  ".join(f"{k} {_fmt(v)}" for k, v in _stage_p(m, q).items()))
    a = r["agent"]
    print(f"  built-in agent response latency  p50 {_fmt(a.get('agent_latency_p50_s'))} s   "
          f"p95 {_fmt(a.get('agent_latency_p95_s'))} s   (n {len(a.get('agent_latency_s', []))})")
    if a.get("timeline"):
        print("    stages p50: " + "  ".join(f"{k} {_fmt(v)}" for k, v in _stage_p(a, 50).items()))
    print(f"  overlaps {len(m['overlaps'])}, long silences {m['long_silences']}")
    if r["prepared"] is not None:
        print(f"  replies that began with a prepared sentence: {r['prepared'][0]} of {r['prepared'][1]}")
    return True


def print_pauses(path: str, p: dict[str, Any]) -> None:
    rows = p["rows"]
    replies = [r["reply_s"] for r in rows if r["reply_s"] is not None]
    counts = "; ".join(f"{sum(r['premature'] for r in rows if r['kind'] == kind)} of "
                       f"{sum(1 for r in rows if r['kind'] == kind)} {label}" for kind, label in KINDS.items())
    print(f"\n[{path}] pause set: premature replies {counts}; reply after the turn's end p50 "
          f"{_fmt(percentile(replies, 50))} s (n {len(replies)}); call ended {p['termination']}"
          + (f"; errors: {p['errors']}" if p["errors"] else ""))
    for r in rows:
        if r["premature"]:
            print(f"    premature, {r['early_s']:.2f} s into the pause: {r['text']}")
        elif r["reply_s"] is None:
            print(f"    no reply within {NO_REPLY_S:.0f} s: {r['text']}")


KINDS = {"turns": "mid-sentence pauses", "between_sentences": "pauses between sentences"}


def _premature(p: dict[str, Any], kind: str | None = None) -> int:
    return sum(r["premature"] for r in p["rows"] if kind in (None, r["kind"]))


def first_chunk(scenario_id: str) -> str:
    """How long Piper takes for a patient reply's first sentence, and for its first clause where a comma cuts it.

    The first TTS frame waits for the whole first sentence (``PiperSpeaker`` speaks sentence by sentence); this is
    what synthesising only up to the first comma would save, on this scenario's answers in the patient's voice.
    """
    scenario = _scenario(scenario_id)
    tts = PiperTTS(disk_cache=False, memory_cache_size=0)
    style = style_for_profile(scenario.patient_profile)

    def ms(text: str) -> float:
        started = time.perf_counter()
        tts.synthesize(text, settings=DETERMINISTIC, style=style)
        return 1000 * (time.perf_counter() - started)

    ms("Warm up.")
    firsts = [_SENTENCE.split(f.answer.strip())[0] for f in ordered_facts(scenario)]
    whole = [ms(t) for t in firsts]
    cut = [(ms(t), ms(t.split(",")[0] + ",")) for t in firsts if "," in t[:-1]]
    saved = f"{np.median([a - b for a, b in cut]):.0f} ms less" if cut else "nothing"
    return (f"first TTS chunk: Piper takes p50 {np.median(whole):.0f} ms for the first sentence of {len(firsts)} "
            f"answers (p50 {np.median([len(t.split()) for t in firsts]):.0f} words); {len(cut)} of those sentences "
            f"have a comma, and their first clause alone takes p50 {saved}")


def cpu_check() -> str:
    """The machine's speed now: the median of 20 Smart Turn inferences on a fixed clip (about 40 ms on an idle core)."""
    from audio.live._end_of_turn import smart_turn

    clip = (np.random.default_rng(0).standard_normal(3 * RATE_16K) * 0.1).astype(np.float32)
    seconds = [smart_turn().judge(clip).seconds for _ in range(20)]
    return f"Smart Turn inference median {1000 * float(np.median(seconds)):.0f} ms"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", default="acs_chest_pain")
    ap.add_argument("--turns", type=int, default=10)
    ap.add_argument("--pauses", type=int, default=None, help="only the first N turns of the pause set")
    ap.add_argument("--only", choices=PATHS)
    ap.add_argument("--skip", choices=["call", "pauses"], help="leave out the calls or the pause set")
    ap.add_argument("--patient-stop", type=float, help="the patient's smart_turn_stop_s (default: LiveSettings')")
    ap.add_argument("--agent-stop", type=float, help="the built-in agent's smart_turn_stop_s (default: "
                                                     "AgentCallSettings')")
    args = ap.parse_args()
    STOPS.update({who: v for who, v in (("patient", args.patient_stop), ("agent", args.agent_stop)) if v})
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs); "
          f"{cpu_check()}")
    print(f"smart-turn VAD stop: patient {STOPS.get('patient', LiveSettings().smart_turn_stop_s)} s, built-in agent "
          f"{STOPS.get('agent', AgentCallSettings().side.smart_turn_stop_s)} s")
    paths = [p for p in PATHS if args.only in (None, p)]
    spoken = pause_turns(PiperTTS(), args.pauses) if args.skip != "pauses" else []
    calls: dict[str, dict[str, Any]] = {}
    pauses: dict[str, dict[str, Any]] = {}
    for path in paths:
        if args.skip != "call":
            calls[path] = asyncio.run(one_call(args.scenario, args.turns, path))
            if not print_call(path, calls[path], args.scenario):
                return 1
        if spoken:
            pauses[path] = asyncio.run(pause_set(args.scenario, path, spoken))
            print_pauses(path, pauses[path])
    print("\nsummary             " + "".join(f"{p:>14}" for p in paths))
    if calls:
        for label, get in (("patient p50", lambda r: r["metrics"]["patient_latency_p50_s"]),
                           ("patient p95", lambda r: r["metrics"]["patient_latency_p95_s"]),
                           ("agent p50", lambda r: r["agent"].get("agent_latency_p50_s"))):
            print(f"  {label:<18}" + "".join(f"{_fmt(get(calls[p])):>14}" for p in paths))
    if pauses:
        for kind, label in KINDS.items():
            n = sum(1 for r in next(iter(pauses.values()))["rows"] if r["kind"] == kind)
            print(f"  premature, {label.split()[0]:<8}" + "".join(f"{_premature(pauses[p], kind):>11}/{n:<2}"
                                                                 for p in paths))
    new = calls.get("prepared")
    if new is not None:
        m, a = new["metrics"], new["agent"]
        checks = [(f"patient p50 <= {GOAL_P50:.2f} s", m["patient_latency_p50_s"] <= GOAL_P50),
                  (f"patient p95 <= {GOAL_P95:.2f} s", m["patient_latency_p95_s"] <= GOAL_P95),
                  (f"agent p50 <= {GOAL_AGENT_P50:.2f} s", (a.get("agent_latency_p50_s") or 9.0) <= GOAL_AGENT_P50)]
        if "prepared" in pauses and "vad" in pauses:
            for kind, label in KINDS.items():
                checks.append((f"premature replies <= the vad path's ({label})",
                               _premature(pauses["prepared"], kind) <= _premature(pauses["vad"], kind)))
        verdicts = "; ".join(f"{name} {'met' if ok else 'NOT met'}" for name, ok in checks)
        print(f"goals (prepared): {verdicts}")
    print(first_chunk(args.scenario))
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {cpu_check()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
