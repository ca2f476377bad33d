"""Harness overhead benchmark: how much time encounter-sim adds on top of the agent's own latency.

What it measures
----------------
A real loopback OpenAI-compatible server (``tests.fakeserver.FakeChatServer``, an asyncio HTTP
server in a background thread of this process) answers every ``/chat/completions`` call after a
fixed latency (50 ms by default). Its reply makes every encounter last exactly ``--turns`` (T = 6)
agent turns: a question for agent turns 1..T-1 (counted from the assistant messages in the request),
then a valid ``ASSESSMENT:`` block at turn T.

``--encounters`` (200) encounters are then run through the real path, once per concurrency level
(1, 8, 32): ``ChatCompletionsAgent`` over httpx -> ``TextChannel`` -> ``run_encounter`` ->
``run_batch`` into a fresh ``RunStore`` in a temporary directory. What is timed therefore includes
the patient simulator, the event log, scoring, the fsync'd append to results.jsonl and the final
summary/report that ``run_batch`` writes.

For each level it prints:

- ``ideal``   = encounters x turns x latency / concurrency (the issue's definition)
- ``ratio``   = wall / ideal
- ``ovh/turn``= (wall - ideal) x concurrency / (encounters x turns): the time per agent turn not
  explained by the server's latency (the harness's own time plus loopback HTTP).

Because every encounter here lasts exactly the same time, encounters run in lock-step "waves" of
``concurrency``; when ``encounters`` is not a multiple of ``concurrency`` (200 / 32 = 6.25) the last
wave is partly empty and no scheduler can beat ceil(encounters / concurrency) x turns x latency.
A second table therefore also reports that schedule-aware ideal, the ratio and overhead against
it, and the wall time of the same schedule done with bare httpx POSTs (no harness at all), which
is the floor set by the HTTP client and the in-process server.

It also prints a baseline: the mean of ``--baseline`` (200) sequential raw httpx round trips to the
same server, i.e. what loopback HTTP costs beyond the configured latency.

The server's request count is checked against encounters x turns for every level, and every
encounter is checked to have ended by assessment after exactly T agent turns; a mismatch is
printed loudly. Nothing is asserted about speed: figures are only printed.

Note: the server shares this process (and its GIL) with the harness, so its own JSON work is
counted in the overhead; the raw-httpx rows carry the same cost and show how large it is.

Goals (from the issue): ratio <= 1.10 at concurrency 32, overhead < 2 ms per turn.

How to run
----------
From the repository root::

    .venv/bin/python bench/harness_overhead.py                    # 200 encounters, about 3 minutes
    .venv/bin/python bench/harness_overhead.py --encounters 40    # quicker
    .venv/bin/python bench/harness_overhead.py --turns 4 --latency 0.02 --concurrency 8,32
    .venv/bin/python bench/harness_overhead.py --concurrency 32 --repeat 5  # concurrency 32 is noisy
    .venv/bin/python bench/harness_overhead.py --profile prof.out # cProfile the highest concurrency

(or ``make bench``).
"""

from __future__ import annotations

import argparse
import asyncio
import math
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

import httpx  # noqa: E402

from scenarios import LoadedScenario, resolve  # noqa: E402
from sim.agents.chat import ChatCompletionsAgent  # noqa: E402
from sim.channel import TextChannel  # noqa: E402
from sim.harness import HARNESS_VERSION, MAX_TOKENS, SYSTEM_PROMPT, TEMPERATURE  # noqa: E402
from sim.records import RunMeta, ScenarioRef  # noqa: E402
from sim.runner import run_batch, summarise  # noqa: E402
from sim.store import RunStore  # noqa: E402
from tests.fakeserver import FakeChatServer  # noqa: E402

GOAL_RATIO = 1.10
GOAL_OVERHEAD_MS = 2.0
GOAL_CONCURRENCY = 32

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


async def raw_schedule(url: str, encounters: int, turns: int, concurrency: int) -> float:
    """Wall time of the benchmark's schedule (encounters x turns sequential POSTs under a semaphore
    of ``concurrency``) done with bare httpx: the floor without any harness code."""
    bodies = [sample_body(t) for t in range(1, turns + 1)]
    gate = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    async with httpx.AsyncClient(timeout=30.0, limits=limits) as client:
        async def one() -> None:
            async with gate:
                for body in bodies:
                    r = await client.post(url, json=body)
                    r.raise_for_status()
                    r.json()

        t0 = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(encounters)))
        return time.perf_counter() - t0


async def run_level(server: FakeChatServer, root: Path, scenarios: list[LoadedScenario], k: int, turns: int,
                    concurrency: int, turn_limit: int | None, run: int = 1) -> dict[str, Any]:
    """One concurrency level through the real harness; returns its timings and checks."""
    meta = make_meta(f"bench-c{concurrency}-{run}", scenarios, k, server.base_url, turn_limit)
    store = RunStore.create(root / meta.run_id, meta)
    agent = ChatCompletionsAgent(model=meta.model, base_url=server.base_url)
    before = len(server.requests)
    try:
        t0 = time.perf_counter()
        summary = await run_batch(store, scenarios, agent, TextChannel(), meta, concurrency=concurrency,
                                  progress=None)
        wall = time.perf_counter() - t0
    finally:
        await agent.aclose()
    requests = len(server.requests) - before
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
    return {"wall": wall, "requests": requests, "completed": summary.completed, "errors": summary.errors,
            "records": len(records), "bad_lines": bad, "wrong": wrong, "summarise_s": summarise_s}


async def main_async(args: argparse.Namespace) -> int:
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

    server = FakeChatServer(latency_s=lat, reply=make_reply(t)).start()
    url = f"{server.base_url}/chat/completions"
    problems: list[str] = []
    rows = []
    try:
        base = await raw_baseline(url, args.baseline)
        base_mean = statistics.fmean(base)
        base_p50 = statistics.median(base)
        base_max = max(base)
        server.requests.clear()

        with tempfile.TemporaryDirectory(prefix="encsim-bench-", dir=args.tmp_dir) as tmp:
            root = Path(tmp)
            for c, run in ((c, run) for c in levels for run in range(1, args.repeat + 1)):
                if args.profile and c == max(levels) and run == 1:
                    import cProfile
                    prof = cProfile.Profile()
                    prof.enable()
                    res = await run_level(server, root, scenarios, k, t, c, turn_limit, run)
                    prof.disable()
                    prof.dump_stats(args.profile)
                else:
                    res = await run_level(server, root, scenarios, k, t, c, turn_limit, run)
                res["raw"] = None if args.skip_raw else await raw_schedule(url, n, t, c)
                res["c"], res["run"] = c, run
                rows.append(res)
                expected = n * t
                if res["requests"] != expected:
                    problems.append(f"concurrency {c} run {run}: server saw {res['requests']} requests, expected "
                                    f"{n} encounters x {t} turns = {expected}")
                if res["completed"] != n or res["errors"] or res["records"] != n or res["bad_lines"]:
                    problems.append(f"concurrency {c} run {run}: {res['completed']} scored, {res['errors']} errors, "
                                    f"{res['records']} records, {res['bad_lines']} malformed lines (expected {n} ok)")
                if res["wrong"]:
                    problems.append(f"concurrency {c} run {run}: {len(res['wrong'])} encounters did not end by "
                                    f"assessment at turn {t}, e.g. {res['wrong'][0]}")
    finally:
        server.stop()

    print(f"encounter-sim harness overhead: {n} encounters ({', '.join(s.scenario.id for s in scenarios)} x k={k}), "
          f"{t} agent turns each, server latency {lat * 1000:.0f} ms")
    print(f"baseline raw httpx round trip ({args.baseline} sequential POSTs, same server): mean "
          f"{base_mean * 1000:.2f} ms, median {base_p50 * 1000:.2f} ms, max {base_max * 1000:.2f} ms "
          f"=> loopback HTTP + server cost beyond the latency: {(base_mean - lat) * 1000:.2f} ms per call")
    print()
    hdr = (f"{'concurrency':>11} {'run':>3} {'encounters':>10} {'turns':>5} {'wall s':>8} {'ideal s':>8} {'ratio':>6} "
           f"{'ovh ms/turn':>11} {'requests':>8}")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        c = r["c"]
        ideal = n * t * lat / c
        ovh = (r["wall"] - ideal) * c / (n * t) * 1000
        req = f"{r['requests']}" + ("" if r["requests"] == n * t else " !!")
        print(f"{c:>11} {r['run']:>3} {n:>10} {t:>5} {r['wall']:>8.3f} {ideal:>8.3f} {r['wall'] / ideal:>6.3f} "
              f"{ovh:>11.2f} {req:>8}")
    print()
    print("schedule-aware view (ideal = ceil(encounters / concurrency) x turns x latency; raw = the same "
          "schedule with bare httpx, no harness):")
    hdr2 = (f"{'concurrency':>11} {'run':>3} {'sched ideal s':>13} {'ratio':>6} {'ovh ms/turn':>11} {'raw wall s':>10} "
            f"{'raw ratio':>9} {'harness-raw ms/turn':>19} {'summary s':>9}")
    print(hdr2)
    print("-" * len(hdr2))
    for r in rows:
        c = r["c"]
        steps = math.ceil(n / c) * t  # sequential agent turns on the critical path
        sideal = steps * lat
        ovh = (r["wall"] - sideal) / steps * 1000
        if r["raw"] is None:
            raw = rratio = diff = "-"
        else:
            raw, rratio = f"{r['raw']:.3f}", f"{r['raw'] / sideal:.3f}"
            diff = f"{(r['wall'] - r['raw']) / steps * 1000:.2f}"
        print(f"{c:>11} {r['run']:>3} {sideal:>13.3f} {r['wall'] / sideal:>6.3f} {ovh:>11.2f} {raw:>10} {rratio:>9} "
              f"{diff:>19} {r['summarise_s']:>9.3f}")
    print("(summary s: one summarise() of the finished run, which run_batch also does inside its wall time)")
    print()
    goal_walls = [r["wall"] for r in rows if r["c"] == GOAL_CONCURRENCY]
    if not goal_walls:
        print(f"goal: concurrency {GOAL_CONCURRENCY} not run")
    else:
        wall = statistics.median(goal_walls)
        ideal = n * t * lat / GOAL_CONCURRENCY
        ratio = wall / ideal
        ovh = (wall - ideal) * GOAL_CONCURRENCY / (n * t) * 1000
        ok_r, ok_o = ratio <= GOAL_RATIO, ovh < GOAL_OVERHEAD_MS
        of = f" (median of {len(goal_walls)} runs)" if len(goal_walls) > 1 else ""
        print(f"goal at concurrency {GOAL_CONCURRENCY}{of}: ratio {ratio:.3f} <= {GOAL_RATIO:.2f}: "
              f"{'yes' if ok_r else 'NO'}; overhead {ovh:.2f} ms/turn < {GOAL_OVERHEAD_MS:.0f} ms: "
              f"{'yes' if ok_o else 'NO'}; goal met: {'yes' if ok_r and ok_o else 'NO'}")
        floor = math.ceil(n / GOAL_CONCURRENCY) * GOAL_CONCURRENCY / n
        if floor > GOAL_RATIO:
            print(f"  note: with {n} encounters of equal length at concurrency {GOAL_CONCURRENCY} the last wave "
                  f"is partly empty, so even a zero-overhead harness has ratio >= {floor:.3f} on the issue's "
                  f"ideal; see the schedule-aware table, or use --encounters "
                  f"{math.ceil(n / GOAL_CONCURRENCY) * GOAL_CONCURRENCY}.")
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
    ap.add_argument("--encounters", type=int, default=200, help="encounters per concurrency level (default 200)")
    ap.add_argument("--turns", type=int, default=6, help="agent turns per encounter (default 6)")
    ap.add_argument("--latency", type=float, default=0.05, help="server latency in seconds (default 0.05)")
    ap.add_argument("--concurrency", default="1,8,32", help="comma-separated levels (default 1,8,32)")
    ap.add_argument("--scenarios", default="acs_chest_pain",
                    help="scenario ids / suites, comma-separated; encounters are split evenly (default acs_chest_pain)")
    ap.add_argument("--baseline", type=int, default=200, help="sequential raw httpx POSTs for the baseline")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per concurrency level (default 1); the goal line uses the median")
    ap.add_argument("--skip-raw", action="store_true", help="skip the raw-httpx run of each level's schedule")
    ap.add_argument("--tmp-dir", default=None, help="where the temporary run directories go (default: system tmp)")
    ap.add_argument("--profile", metavar="FILE", default=None,
                    help="cProfile the highest concurrency level's harness run and dump the stats to FILE")
    args = ap.parse_args()
    if args.turns < 1 or args.encounters < 1 or args.repeat < 1 or args.latency <= 0:
        ap.error("--turns, --encounters and --repeat must be >= 1, --latency > 0")
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
