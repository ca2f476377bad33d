"""Harness overhead benchmark: how much time encounter-sim adds on top of the agent's own latency.

What it measures
----------------
A real loopback OpenAI-compatible server (``tests.fakeserver.FakeChatServer``, an asyncio HTTP
server) runs in a separate process (``multiprocessing`` spawn, ``ServerProcess``), so that its CPU
and GIL are not the harness's: the figures measure the harness, not the server. It answers every
``/chat/completions`` call after a fixed latency (50 ms by default). Its reply makes every
encounter last exactly ``--turns`` (T = 6) agent turns: a question for agent turns 1..T-1 (counted
from the assistant messages in the request), then a valid ``ASSESSMENT:`` block at turn T.

``--encounters`` (224: full waves at concurrency 1, 8 and 32) encounters are then run through the
real path, once per concurrency level (1, 8, 32) and per ``--processes`` value (0 and 2): ``ChatCompletionsAgent``
over aiohttp -> ``TextChannel`` -> ``run_encounter`` -> ``run_batch`` into a fresh ``RunStore`` in a temporary
directory; with ``--processes N`` the encounters run in N worker processes (``sim.executors.process``, started
once before the timing, as ``encsim run --processes N`` starts them before its run) and this process scores and
writes. What is timed therefore includes the patient simulator, the event log, scoring, the fsync'd append to
results.jsonl and the final summary/report that ``run_batch`` writes.

For each level it prints:

- ``ideal``   = encounters x turns x latency / concurrency (the issue's definition)
- ``ratio``   = wall / ideal
- ``ovh/turn``= (wall - ideal) x concurrency / (encounters x turns): the time per agent turn not
  explained by the server's latency (the harness's own time plus loopback HTTP).

A second table reports the schedule-aware ideal (ceil(encounters / concurrency) x turns x latency:
encounters of equal length run in lock-step waves, and a partly empty last wave cannot be beaten),
the ratio and overhead against it, and the wall time of the same schedule done with bare httpx POSTs
(no harness at all: ``concurrency`` workers, each with its own single-connection client, taking encounters
from one queue) and with bare aiohttp POSTs (one session, as the harness's agent has). ``harness-raw ms/turn``
= (harness wall - bare httpx wall) / sequential agent turns on the critical path: what the harness adds per
turn over the issue's baseline; ``harness-aio ms/turn`` the same over bare aiohttp, the floor of the agent's
own transport. ``CPU ms/turn`` is the CPU time per agent turn of this process (all threads: scoring and the
fsync'd writes run off the event loop) and of the worker processes (read from /proc), for the harness and for
the bare runs. The bare runs of a level are done once per repeat, before the harness runs of that repeat, and
compared with each of them.

It also prints a baseline: the mean of ``--baseline`` (200) sequential raw httpx round trips to the
same server, i.e. what loopback HTTP costs beyond the configured latency.

The server's request count is checked against encounters x turns for every level, and every
encounter is checked to have ended by assessment after exactly T agent turns; a mismatch is
printed loudly. Nothing is asserted about speed: figures are only printed.

Goals (issue 17, part 3): harness minus bare httpx <= 1 ms per turn at concurrency 1 and 8; ratio to
the schedule-aware ideal <= 1.10 at concurrency 32.

Figures
-------
Measured 2026-11-25 on this 2-core machine, otherwise idle, ``--repeat 3``, medians of 224 encounters per level, at
ef4bf48 (the agent over aiohttp, scoring on one thread; ``--processes`` levels; the GIL switch interval at 0.5 ms
and the pre-batch heap frozen out of the cyclic GC while a batch runs)::

    concurrency  processes  ratio  harness-bare httpx  harness-bare aiohttp  CPU ms/turn harness / httpx / aiohttp
    1            0          1.047  0.04 ms             1.00 ms               2.07 / 1.74 / 0.72
    1            2          1.049  0.14 ms             1.10 ms               2.43 / 1.74 / 0.72
    8            0          1.082  -2.52 ms            1.55 ms               1.50 / 0.94 / 0.30
    8            2          1.089  -2.67 ms            1.67 ms               1.73 / 0.94 / 0.30
    32           0          1.243  1.93 ms             7.94 ms               1.30 / 0.86 / 0.21
    32           2          1.178  -1.55 ms            4.65 ms               1.39 / 0.86 / 0.21

(ratio: to the schedule-aware ideal.) Bare httpx ratios: 1.046 (1), 1.116-1.148 (8), 1.197-1.268 (32); bare
aiohttp: 1.027, 1.051-1.055, 1.077-1.093.

Earlier figures (idle, medians of 3): at 7ebac1e (the agent over httpx) 1.064 / 0.85 ms at concurrency 1, 1.200 /
2.16 ms at 8 (1.134 / -1.15 ms with ``--processes 2``), 1.871 at 32 (1.449 with ``--processes 2``); at the start of
issue 17: 1.105 / 2.85 ms, 1.451 / 17.75 ms, 2.430.

Goals met: harness minus bare httpx <= 1 ms at concurrency 1 and 8, in one process and with ``--processes 2``. Not
met: 1.10 at concurrency 32 (1.178 with ``--processes 2``, 1.243 in one process). Bare aiohttp alone reaches only
1.077-1.093 there, which leaves the harness 0.2-0.5 ms per turn on the critical path; it adds 1.0 ms per turn over
bare aiohttp even at concurrency 1 (the patient, the events, the scoring and the fsync'd record of each encounter).

How to run
----------
From the repository root::

    .venv/bin/python bench/harness_overhead.py                    # 224 encounters, about 6 minutes
    .venv/bin/python bench/harness_overhead.py --processes 0,1,2  # also one worker process
    .venv/bin/python bench/harness_overhead.py --encounters 64    # quicker
    .venv/bin/python bench/harness_overhead.py --turns 4 --latency 0.02 --concurrency 8,32
    .venv/bin/python bench/harness_overhead.py --concurrency 32 --repeat 5  # concurrency 32 is noisy
    .venv/bin/python bench/harness_overhead.py --profile prof.out # cProfile the highest concurrency

(or ``make bench``).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402
import httpx  # noqa: E402

from scenarios import LoadedScenario, resolve  # noqa: E402
from sim.agents.chat import ChatCompletionsAgent  # noqa: E402
from sim.encounter import HARNESS_VERSION, MAX_TOKENS, SYSTEM_PROMPT, TEMPERATURE  # noqa: E402
from sim.encounter.channel import TextChannel  # noqa: E402
from sim.executors.process import ProcessEncounters  # noqa: E402
from sim.executors.worker_spec import WorkerSpec  # noqa: E402
from sim.records import RunMeta, ScenarioRef  # noqa: E402
from sim.runner import run_batch  # noqa: E402
from sim.store import RunStore  # noqa: E402
from sim.summary import summarise  # noqa: E402
from tests.fakeserver import FakeChatServer  # noqa: E402

GOAL_RATIO = 1.10  # to the schedule-aware ideal, at GOAL_CONCURRENCY
GOAL_CONCURRENCY = 32
GOAL_DIFF_MS = 1.0  # harness minus bare httpx, per turn, at GOAL_DIFF_LEVELS
GOAL_DIFF_LEVELS = (1, 8)

QUESTIONS = [
    "When did it start, and what were you doing when it began?",
    "Does the pain spread anywhere, like your arm, jaw or neck?",
    "Any sweating, nausea or other symptoms with it?",
    "Are you short of breath? How bad is the pain on a scale of one to ten?",
    "Any medical problems like blood pressure, diabetes or cholesterol? Do you smoke?",
    "What medications do you take, and any allergies?",
    "Any heart problems in your family?",
]
ASSESSMENT = ("ASSESSMENT:\nTriage level: ESI 2\nEscalation: emergency\n"
              "Diagnoses: 1. Acute coronary syndrome; 2. Aortic dissection; 3. Pulmonary embolism\n"
              "Advice: Call an ambulance now.")


def make_reply(turns: int) -> Callable[[dict[str, Any]], str]:
    """A reply function for FakeChatServer: questions for turns 1..T-1, the assessment at turn T."""

    def reply(body: dict[str, Any]) -> str:
        turn = 1 + sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        return ASSESSMENT if turn >= turns else QUESTIONS[(turn - 1) % len(QUESTIONS)]

    return reply


def make_meta(run_id: str, scenarios: list[LoadedScenario], k: int, base_url: str, turn_limit: int | None) -> RunMeta:
    return RunMeta(run_id=run_id, harness_version=HARNESS_VERSION, model="bench-fake", base_url=base_url,
                   scenarios=[ScenarioRef(id=s.scenario.id, path=str(s.path.resolve()), sha256=s.sha256)
                              for s in scenarios],
                   k=k, seed=0, turn_limit=turn_limit, created_at=time.time())


def sample_body(turn: int) -> dict[str, Any]:
    """A request body shaped like the harness's at agent turn ``turn`` (for the raw httpx rows)."""
    msgs = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "I've got chest pain."}]
    for i in range(turn - 1):
        msgs += [{"role": "assistant", "content": QUESTIONS[i % len(QUESTIONS)]},
                 {"role": "user", "content": "It came on when I was carrying boxes up the stairs."}]
    return {"model": "bench-fake", "messages": msgs, "temperature": TEMPERATURE, "max_tokens": MAX_TOKENS, "seed": 0}


def _serve(conn: Any, latency_s: float, turns: int) -> None:
    """Child process: a FakeChatServer answering with ``make_reply(turns)``, controlled over ``conn``.

    Sends its port once listening, then answers each command: ``"count"`` -> requests so far, ``"stop"`` -> stops.
    """
    server = FakeChatServer(latency_s=latency_s, reply=make_reply(turns)).start()
    conn.send(server.port)
    try:
        while True:
            cmd = conn.recv()
            if cmd == "count":
                with server._lock:
                    n = len(server.requests)
                    server.requests.clear()  # keep the child's memory flat; the parent sums the counts
                conn.send(n)
            else:
                break
    finally:
        server.stop()
        conn.close()


class ServerProcess:
    """The loopback endpoint in its own process (spawned), so that its CPU and GIL are not the harness's."""

    def __init__(self, latency_s: float, turns: int) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child, latency_s, turns), daemon=True)
        self._proc.start()
        child.close()
        if not self._conn.poll(60):
            self._proc.kill()
            raise RuntimeError("the benchmark server process did not start within 60 s")
        self.port: int = self._conn.recv()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._seen = 0

    def requests_seen(self) -> int:
        """Requests the server has answered since it started."""
        self._conn.send("count")
        self._seen += self._conn.recv()
        return self._seen

    def stop(self) -> None:
        """Stop the server process and wait for it."""
        try:
            self._conn.send("stop")
        except (BrokenPipeError, OSError):
            pass
        self._proc.join(10)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join(5)
        self._conn.close()


async def raw_baseline(url: str, n: int) -> list[float]:
    """Latencies of ``n`` sequential POSTs with a bare httpx.AsyncClient."""
    body = sample_body(1)
    out = []
    async with httpx.AsyncClient(timeout=30.0) as client:
        await client.post(url, json=body)  # connect once, not measured
        for _ in range(n):
            t0 = time.perf_counter()
            r = await client.post(url, json=body)
            r.raise_for_status()
            r.json()
            out.append(time.perf_counter() - t0)
    return out


async def raw_schedule(url: str, encounters: int, turns: int, concurrency: int,
                       client: str = "httpx") -> tuple[float, float]:
    """Wall and CPU time of the benchmark's schedule (encounters x turns sequential POSTs, ``concurrency`` at a
    time) done with bare ``client`` calls (``"httpx"`` or ``"aiohttp"``): the floor without any harness code.

    httpx: each call in flight has its own single-connection client (one shared pool of 32 connections costs far
    more: httpcore scans the whole pool on every request). aiohttp: one session, as the harness's agent
    (``ChatCompletionsAgent``) has since it moved to aiohttp; this is the floor of the harness's own transport.
    """
    bodies = [sample_body(t) for t in range(1, turns + 1)]
    left = iter(range(encounters))
    workers = min(concurrency, encounters)
    if client == "aiohttp":
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))

        async def post(i: int, body: dict[str, Any]) -> None:  # one session for every worker
            async with session.post(url, json=body) as r:
                r.raise_for_status()
                await r.json()

        async def close() -> None:
            await session.close()
    else:
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        clients = [httpx.AsyncClient(timeout=30.0, limits=limits) for _ in range(workers)]

        async def post(i: int, body: dict[str, Any]) -> None:
            r = await clients[i].post(url, json=body)
            r.raise_for_status()
            r.json()

        async def close() -> None:
            for c in clients:
                await c.aclose()
    try:
        async def worker(i: int) -> None:
            for _ in left:  # one shared iterator: each encounter is taken by exactly one worker
                for body in bodies:
                    await post(i, body)

        t0, c0 = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker(i) for i in range(workers)))
        return time.perf_counter() - t0, time.process_time() - c0
    finally:
        await close()


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) that process ``pid`` has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def run_level(server: ServerProcess, root: Path, scenarios: list[LoadedScenario], k: int, turns: int,
                    concurrency: int, turn_limit: int | None, run: int = 1,
                    workers: ProcessEncounters | None = None) -> dict[str, Any]:
    """One concurrency level through the real harness (in this process, or on ``workers``); timings and checks.

    ``cpu`` is the CPU time of this process and of the worker processes, if any.
    """
    meta = make_meta(f"bench-c{concurrency}-p{len(workers.pids) if workers else 0}-{run}", scenarios, k,
                     server.base_url, turn_limit)
    store = RunStore.create(root / meta.run_id, meta)
    agent = ChatCompletionsAgent(model=meta.model, base_url=server.base_url)
    before = server.requests_seen()
    pids = workers.pids if workers else []
    try:
        t0, c0, w0 = time.perf_counter(), time.process_time(), sum(process_cpu(p) for p in pids)
        summary = await run_batch(store, scenarios, agent, TextChannel(), meta, concurrency=concurrency,
                                  progress=None, remote=workers)
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0 + sum(process_cpu(p) for p in pids) - w0
    finally:
        await agent.aclose()
    requests = server.requests_seen() - before
    # The end-of-run summary/report that run_batch wrote, timed on its own (same store, same work).
    t0 = time.perf_counter()
    summarise(store, scenarios, meta)
    summarise_s = time.perf_counter() - t0
    records, bad = store.load_records()
    wrong = [f"{sid} k={kk}: {r.status} {r.error or ''} termination={r.result.termination if r.result else '-'} "
             f"agent_turns={r.result.agent_turns if r.result else '-'}"
             for (sid, kk), r in records.items()
             if r.status != "ok" or r.result is None or r.result.termination != "assessment"
             or r.result.agent_turns != turns]
    return {"wall": wall, "cpu": cpu, "requests": requests, "completed": summary.completed, "errors": summary.errors,
            "records": len(records), "bad_lines": bad, "wrong": wrong, "summarise_s": summarise_s}


async def main_async(args: argparse.Namespace) -> int:  # noqa: C901
    scenarios = resolve([args.scenarios])
    if args.encounters % len(scenarios):
        print(f"--encounters {args.encounters} is not a multiple of the {len(scenarios)} scenarios selected",
              file=sys.stderr)
        return 2
    k = args.encounters // len(scenarios)
    n, t, lat = args.encounters, args.turns, args.latency
    # The scenario's own limit (8..15 agent turns) is kept unless T needs more.
    turn_limit = None if t <= min(s.scenario.max_turns for s in scenarios) else t
    levels = [int(c) for c in args.concurrency.split(",") if c.strip()]
    processes = [int(p) for p in args.processes.split(",") if p.strip()]

    server = ServerProcess(lat, t)
    url = f"{server.base_url}/chat/completions"
    problems: list[str] = []
    rows = []
    try:
        base = await raw_baseline(url, args.baseline)
        base_mean = statistics.fmean(base)
        base_p50 = statistics.median(base)
        base_max = max(base)

        with tempfile.TemporaryDirectory(prefix="encsim-bench-", dir=args.tmp_dir) as tmp:
            root = Path(tmp)
            pools: dict[int, ProcessEncounters | None] = {0: None}
            try:
                for procs in processes:
                    if procs:
                        t0 = time.perf_counter()
                        pools[procs] = await ProcessEncounters(WorkerSpec(model="bench-fake", base_url=server.base_url),
                                                               processes=procs).start()
                        print(f"  {procs} worker processes started in {time.perf_counter() - t0:.2f} s (not timed)",
                              file=sys.stderr, flush=True)
                    # Warm-up, not timed: the first encounters of a process load the intent lexicon, compile its
                    # cues and the evaluators' per-scenario patterns (one-time costs of a process, not of a turn).
                    t0 = time.perf_counter()
                    warm = await run_level(server, root, scenarios, max(1, procs), t, max(1, procs), turn_limit, 0,
                                           pools[procs])
                    print(f"  warm-up with --processes {procs} (not timed in the tables): {warm['completed']} "
                          f"encounters in {time.perf_counter() - t0:.3f} s", file=sys.stderr, flush=True)
                for c, run in ((c, run) for c in levels for run in range(1, args.repeat + 1)):
                    bare = (None, None) if args.skip_raw else await raw_schedule(url, n, t, c)
                    aio = (None, None) if args.skip_raw else await raw_schedule(url, n, t, c, "aiohttp")
                    for procs in processes:
                        if args.profile and c == max(levels) and run == 1 and procs == processes[0]:
                            import cProfile
                            prof = cProfile.Profile()
                            prof.enable()
                            res = await run_level(server, root, scenarios, k, t, c, turn_limit, run, pools[procs])
                            prof.disable()
                            prof.dump_stats(args.profile)
                        else:
                            res = await run_level(server, root, scenarios, k, t, c, turn_limit, run, pools[procs])
                        res["raw"], res["raw_cpu"] = bare
                        res["aio"], res["aio_cpu"] = aio
                        print(f"  concurrency {c} --processes {procs} run {run}: harness {res['wall']:.3f} s (CPU "
                              f"{res['cpu']:.3f} s), bare httpx "
                              + ("-" if res["raw"] is None else f"{res['raw']:.3f} s (CPU {res['raw_cpu']:.3f} s), "
                                 f"bare aiohttp {res['aio']:.3f} s (CPU {res['aio_cpu']:.3f} s)"),
                              file=sys.stderr, flush=True)
                        res["c"], res["p"], res["run"] = c, procs, run
                        rows.append(res)
                        expected = n * t
                        what = f"concurrency {c} --processes {procs} run {run}"
                        if res["requests"] != expected:
                            problems.append(f"{what}: server saw {res['requests']} requests, expected "
                                            f"{n} encounters x {t} turns = {expected}")
                        if res["completed"] != n or res["errors"] or res["records"] != n or res["bad_lines"]:
                            problems.append(f"{what}: {res['completed']} scored, {res['errors']} errors, "
                                            f"{res['records']} records, {res['bad_lines']} malformed lines (expected "
                                            f"{n} ok)")
                        if res["wrong"]:
                            problems.append(f"{what}: {len(res['wrong'])} encounters did not end by assessment at "
                                            f"turn {t}, e.g. {res['wrong'][0]}")
            finally:
                for pool in pools.values():
                    if pool is not None:
                        await pool.aclose()
    finally:
        server.stop()

    print(f"encounter-sim harness overhead: {n} encounters ({', '.join(s.scenario.id for s in scenarios)} x k={k}), "
          f"{t} agent turns each, server latency {lat * 1000:.0f} ms")
    print(f"baseline raw httpx round trip ({args.baseline} sequential POSTs, same server): mean "
          f"{base_mean * 1000:.2f} ms, median {base_p50 * 1000:.2f} ms, max {base_max * 1000:.2f} ms "
          f"=> loopback HTTP + server cost beyond the latency: {(base_mean - lat) * 1000:.2f} ms per call")
    print()
    hdr = (f"{'concurrency':>11} {'proc':>4} {'run':>3} {'encounters':>10} {'turns':>5} {'wall s':>8} {'ideal s':>8} "
           f"{'ratio':>6} {'ovh ms/turn':>11} {'requests':>8}")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        c = r["c"]
        ideal = n * t * lat / c
        ovh = (r["wall"] - ideal) * c / (n * t) * 1000
        req = f"{r['requests']}" + ("" if r["requests"] == n * t else " !!")
        print(f"{c:>11} {r['p']:>4} {r['run']:>3} {n:>10} {t:>5} {r['wall']:>8.3f} {ideal:>8.3f} "
              f"{r['wall'] / ideal:>6.3f} {ovh:>11.2f} {req:>8}")
    print()
    print("schedule-aware view (ideal = ceil(encounters / concurrency) x turns x latency; raw = the same "
          "schedule with bare httpx, aio = with bare aiohttp, no harness):")
    hdr2 = (f"{'concurrency':>11} {'proc':>4} {'run':>3} {'sched ideal s':>13} {'ratio':>6} {'ovh ms/turn':>11} "
            f"{'raw wall s':>10} {'raw ratio':>9} {'harness-raw ms/turn':>19} {'aio ratio':>9} "
            f"{'harness-aio ms/turn':>19} {'summary s':>9} {'CPU ms/turn':>11} {'raw CPU':>7} {'aio CPU':>7}")
    print(hdr2)
    print("-" * len(hdr2))
    for r in rows:
        c = r["c"]
        steps = math.ceil(n / c) * t  # sequential agent turns on the critical path
        sideal = steps * lat
        ovh = (r["wall"] - sideal) / steps * 1000
        if r["raw"] is None:
            raw = rratio = diff = rcpu = aratio = adiff = acpu = "-"
        else:
            raw, rratio = f"{r['raw']:.3f}", f"{r['raw'] / sideal:.3f}"
            diff = f"{(r['wall'] - r['raw']) / steps * 1000:.2f}"
            rcpu = f"{r['raw_cpu'] / (n * t) * 1000:.2f}"
            aratio, adiff = f"{r['aio'] / sideal:.3f}", f"{(r['wall'] - r['aio']) / steps * 1000:.2f}"
            acpu = f"{r['aio_cpu'] / (n * t) * 1000:.2f}"
        print(f"{c:>11} {r['p']:>4} {r['run']:>3} {sideal:>13.3f} {r['wall'] / sideal:>6.3f} {ovh:>11.2f} {raw:>10} "
              f"{rratio:>9} {diff:>19} {aratio:>9} {adiff:>19} {r['summarise_s']:>9.3f} "
              f"{r['cpu'] / (n * t) * 1000:>11.2f} {rcpu:>7} {acpu:>7}")
    print("(summary s: one summarise() of the finished run, which run_batch also does inside its wall time; "
          "CPU ms/turn: CPU time per agent turn of this process (all threads) and of the worker processes (proc: "
          "--processes, 0 = encounters in this process), harness, bare httpx and bare aiohttp)")
    print()
    for c, procs in ((c, p) for c in levels for p in processes):  # the goals, on the median of the repeats
        mine = [r for r in rows if r["c"] == c and r["p"] == procs]
        steps = math.ceil(n / c) * t
        of = f" (median of {len(mine)} runs)" if len(mine) > 1 else ""
        ratio = statistics.median(r["wall"] for r in mine) / (steps * lat)
        line = f"concurrency {c} --processes {procs}{of}: ratio to the schedule-aware ideal {ratio:.3f}"
        if c == GOAL_CONCURRENCY:
            line += f" (goal <= {GOAL_RATIO:.2f}: {'met' if ratio <= GOAL_RATIO else 'NOT met'})"
        if all(r["raw"] is not None for r in mine):
            diff = statistics.median((r["wall"] - r["raw"]) / steps * 1000 for r in mine)
            line += f"; harness minus bare httpx {diff:.2f} ms/turn"
            if c in GOAL_DIFF_LEVELS:
                line += f" (goal <= {GOAL_DIFF_MS:.0f} ms: {'met' if diff <= GOAL_DIFF_MS else 'NOT met'})"
            adiff = statistics.median((r["wall"] - r["aio"]) / steps * 1000 for r in mine)
            aratio = statistics.median(r["aio"] for r in mine) / (steps * lat)
            line += (f"; harness minus bare aiohttp (the agent's own transport) {adiff:.2f} ms/turn, bare aiohttp "
                     f"ratio {aratio:.3f}")
        print(line)
    if problems:
        print()
        print("!" * 78)
        for p in problems:
            print(f"!! MISMATCH: {p}")
        print("!" * 78)
        return 1
    print(f"checks: every level made exactly {n} x {t} = {n * t} requests; every encounter ended by assessment "
          f"at turn {t}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encounters", type=int, default=224,
                    help="encounters per concurrency level (default 224: full waves at 1, 8 and 32)")
    ap.add_argument("--turns", type=int, default=6, help="agent turns per encounter (default 6)")
    ap.add_argument("--latency", type=float, default=0.05, help="server latency in seconds (default 0.05)")
    ap.add_argument("--concurrency", default="1,8,32", help="comma-separated levels (default 1,8,32)")
    ap.add_argument("--processes", default="0,2",
                    help="comma-separated --processes values to measure (0 = encounters in this process, N = N "
                         "worker processes; default 0,2)")
    ap.add_argument("--scenarios", default="acs_chest_pain",
                    help="scenario ids / suites, comma-separated; encounters are split evenly (default acs_chest_pain)")
    ap.add_argument("--baseline", type=int, default=200, help="sequential raw httpx POSTs for the baseline")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per concurrency level (default 1); the goal line uses the median")
    ap.add_argument("--skip-raw", action="store_true",
                    help="skip the bare httpx and bare aiohttp runs of each level's schedule")
    ap.add_argument("--tmp-dir", default=None, help="where the temporary run directories go (default: system tmp)")
    ap.add_argument("--profile", metavar="FILE", default=None,
                    help="cProfile the highest concurrency level's harness run and dump the stats to FILE")
    args = ap.parse_args()
    if args.turns < 1 or args.encounters < 1 or args.repeat < 1 or args.latency <= 0:
        ap.error("--turns, --encounters and --repeat must be >= 1, --latency > 0")
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
