"""Voice encounters per minute, local and on Ray, and the driver's serial cost per encounter (issue 17, part 2).

Run from the repository root (a few minutes with the defaults)::

    .venv/bin/python bench/scale_voice.py [--scenarios viral_uri,simple_uti,acs_chest_pain] [--k 2]
        [--max-turns 3] [--repeat 2] [--actors 1,2] [--local-concurrency 4] [--warmup appendicitis]

Scale up with ``--k``, ``--max-turns`` (the driver's cost grows with the audio of longer encounters) and
``--repeat``; the README's figures are from ``--max-turns 4 --repeat 3``.

What runs: ``scripted:reference`` on ``--scenarios`` x ``--k`` voice encounters (``--max-turns`` turns each),
through the runner API the CLI uses (``sim.runner.run_batch`` into a fresh run directory, the voice channel of
``sim.encounter.channel.make_channel``), ``--repeat`` times per configuration:

- ``local``: the local executor (``encsim run --mode voice``), ``--local-concurrency`` encounters at once;
- ``ray N``: ``--executor ray --ray-actors N`` for each N of ``--actors``, on a Ray instance the bench starts
  (127.0.0.1 only, ``num_cpus=2``, no dashboard) and stops at the end.

What is timed, and what is not:

- **Warm-up is excluded.** Ray's start, the actors' start and Piper/Whisper's loading are not timed: before the
  measured runs each configuration runs one warm-up batch of ``--warmup`` (a scenario outside the measured set,
  one encounter per actor, or one locally), and the measured batches reuse the same warm process or actors.
- **Throughput** = encounters / (wall time from the call of ``run_batch`` to the moment its last encounter's line
  is saved), in encounters per minute. The summary written at the end of a run is not in it (it is a driver cost,
  below). The TTS disk cache is the user's (``~/.cache/encounter-sim/tts``), shared by every configuration; the
  scripted agent says the same lines every time, so the worker's time is mostly the channel effects and STT.
- **Worker time per encounter** ``T_worker``: the wall time of one actor call as the driver sees it
  (``RayEncounters._submit``: submit, the encounter on the actor, the result back and deserialised), median over
  the ``ray 1`` runs (one actor: no queueing for it, the other core free for the driver).
- **Driver time per encounter** ``T_driver``, the driver's serial work per returned encounter, by timing the real
  functions the driver calls during the Ray runs (wrapped here with ``time.perf_counter`` for wall and
  ``time.thread_time`` for CPU of the calling thread), per encounter, median over all Ray runs:

  - *receive*: ``ray.get`` of the returned ``Outcome`` (the ``ConversationResult``, its events and its audio
    bytes), measured after the runs on the very outcomes captured from the last Ray run: each is ``ray.put`` once
    and fetched and deserialised ``--receive-repeat`` times (median);
  - *write*: ``RunStore.append`` (the results.jsonl line, redacted, one write and an fsync), the events
    (``EventLog.__call__``), the audio files (``RayEncounters._write_audio``) and the artifact paths
    (``sim.executors.ray._relocate``);
  - *score*: ``scorers.record_for`` as ``sim.runner`` calls it (deterministic path and the profile's evaluators;
    no judge in this bench), wall including its hop to a thread; its CPU is that of
    ``scorers._conversation._score_and_evaluate`` in the thread;
  - *summarise*: ``sim.summary.summarise`` as ``sim.session`` calls it (summary.json, report.md and report.html
    from results.jsonl), once per run, divided by the run's encounters.

  Also printed: the driver process's whole CPU (``time.process_time``, every thread, Ray's own included) over the
  measured span, per encounter, and the same minus what the idle driver costs per second with Ray connected
  (``--idle`` seconds measured before the runs): the part of the process's CPU not in the split above is Ray's
  own submit/receive machinery and background threads.

From those: the serial fraction ``s = T_driver / T_worker`` and, for 10, 100 and 1000 workers, the projected
throughput ``X(N) = min(N / T_worker, 1 / T_driver)`` (``project``), the driver-bound ceiling ``1 / T_driver``, which
of the two binds, and the plain Amdahl figure without overlap, ``1 / (T_driver + T_worker / N)``. The goal: the
driver's serial cost allows at least 2,000 encounters per minute (``T_driver <= 30 ms``). Throughputs are also
printed as ratios to the local executor measured in the same run. Nothing is asserted; the machine is shared, so
figures are medians of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import logging
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GOAL_PER_MIN = 8000.0  # issue 37 (2,000 in issue 17): the driver's serial cost allows this many encounters a minute
WORKERS = (10, 100, 1000)


@dataclass(frozen=True)
class Projection:
    """The projected throughput of ``workers`` workers behind one driver, in encounters per minute.

    Attributes:
        workers: N.
        projected: ``min(N / T_worker, 1 / T_driver)``: workers in parallel, the driver's work overlapping theirs.
        ceiling: ``1 / T_driver``, what the driver's serial work allows whatever N.
        amdahl: ``1 / (T_driver + T_worker / N)``: Amdahl's law with the driver's work not overlapped at all.
        bound_by: "driver" when the ceiling binds, else "workers".
    """

    workers: int
    projected: float
    ceiling: float
    amdahl: float
    bound_by: str


def project(t_worker_s: float, t_driver_s: float, workers: int) -> Projection:
    """Throughput of ``workers`` workers (``T_worker`` s per encounter each) behind one driver (``T_driver`` s each).

    Args:
        t_worker_s: One worker's wall time per encounter, seconds.
        t_driver_s: The driver's serial time per encounter, seconds.
        workers: The number of workers.

    Returns:
        The projection, in encounters per minute.
    """
    parallel = 60.0 * workers / t_worker_s
    ceiling = 60.0 / t_driver_s
    return Projection(workers=workers, projected=min(parallel, ceiling), ceiling=ceiling,
                      amdahl=60.0 / (t_driver_s + t_worker_s / workers),
                      bound_by="driver" if ceiling < parallel else "workers")


def serial_fraction(t_driver_s: float, t_worker_s: float) -> float:
    """``s = T_driver / T_worker``: the driver's serial time per encounter over one worker's time per encounter."""
    return t_driver_s / t_worker_s


@dataclass
class Timers:
    """Accumulated wall and CPU seconds and calls per timed function, plus the outcomes captured from Ray."""

    wall: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    cpu: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    round_trips: list[float] = field(default_factory=list)
    outcomes: list[Any] = field(default_factory=list)

    def add(self, name: str, wall: float, cpu: float) -> None:
        self.wall[name] += wall
        self.cpu[name] += cpu
        self.calls[name] += 1


def _timed_sync(timers: Callable[[], Timers], name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        w, c = time.perf_counter(), time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            timers().add(name, time.perf_counter() - w, time.thread_time() - c)

    return wrapper


@contextlib.contextmanager
def instrumented(timers: Callable[[], Timers]) -> Iterator[None]:
    """Wrap the driver's real functions with accumulators into ``timers()`` (restored on the way out)."""
    import scorers._conversation as scoring_module
    import sim.executors.ray as rx
    import sim.runner as runner
    import sim.session as session_mod
    from sim.records import EventLog
    from sim.store import RunStore

    saved: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, attr: str, new: Any) -> None:
        saved.append((owner, attr, getattr(owner, attr)))
        setattr(owner, attr, new)

    record_for = runner.record_for

    @functools.wraps(record_for)
    async def timed_record_for(*args: Any, **kwargs: Any) -> Any:
        w = time.perf_counter()
        try:
            return await record_for(*args, **kwargs)
        finally:
            timers().add("score", time.perf_counter() - w, 0.0)

    submit = rx.RayEncounters._submit

    @functools.wraps(submit)
    async def timed_submit(self: Any, *args: Any, **kwargs: Any) -> Any:
        w = time.perf_counter()
        outcome = await submit(self, *args, **kwargs)
        timers().round_trips.append(time.perf_counter() - w)
        timers().outcomes.append(outcome)
        return outcome

    patch(runner, "record_for", timed_record_for)
    patch(scoring_module, "_score_and_evaluate", _timed_sync(timers, "score_cpu", scoring_module._score_and_evaluate))
    patch(session_mod, "summarise", _timed_sync(timers, "summarise", session_mod.summarise))
    patch(RunStore, "append", _timed_sync(timers, "write_results", RunStore.append))
    patch(EventLog, "__call__", _timed_sync(timers, "write_events", EventLog.__call__))
    patch(rx.RayEncounters, "_write_audio", _timed_sync(timers, "write_audio", rx.RayEncounters._write_audio))
    patch(rx, "_relocate", _timed_sync(timers, "write_paths", rx._relocate))
    patch(rx.RayEncounters, "_submit", timed_submit)
    try:
        yield
    finally:
        for owner, attr, old in reversed(saved):
            setattr(owner, attr, old)


@dataclass
class RunFigures:
    """One measured batch."""

    label: str
    encounters: int
    seconds: float
    driver_cpu_s: float
    timers: Timers

    @property
    def per_min(self) -> float:
        return 60.0 * self.encounters / self.seconds

    def per_encounter(self, name: str, *, cpu: bool = False) -> float:
        return (self.timers.cpu if cpu else self.timers.wall).get(name, 0.0) / self.encounters


class Bench:
    """The measured configurations, sharing one scenario set, agent and meta."""

    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        from scenarios import resolve

        self.args = args
        self.work = work
        self.scenarios = resolve([args.scenarios])
        self.warm = resolve([args.warmup])
        self.current = Timers()
        self.n_runs = 0

    def meta(self, scenarios: list[Any], k: int, audio_format: str) -> Any:
        from sim.cli._run_plan import _refs
        from sim.encounter import HARNESS_VERSION
        from sim.records import RunMeta

        return RunMeta(run_id="bench", harness_version=HARNESS_VERSION, model="scripted:reference",
                       scenarios=_refs(scenarios), k=k, seed=0, turn_limit=self.args.max_turns, channel="voice",
                       audio_format=audio_format, created_at=time.time())

    async def batch(self, label: str, scenarios: list[Any], k: int, *, audio_format: str, remote: Any = None,
                    concurrency: int = 1) -> RunFigures:
        from sim.agents import make_agent
        from sim.encounter.channel import make_channel
        from sim.records import RunLayout
        from sim.runner import run_batch
        from sim.store import RunStore

        self.n_runs += 1
        out = self.work / f"{self.n_runs:02d}-{label.replace(' ', '-')}"
        meta = self.meta(scenarios, k, audio_format)
        store = RunStore.create(out, meta)
        agent = await make_agent(meta.model)
        channel = make_channel(meta, scenarios, RunLayout(out).audio)
        if remote is not None:
            remote.audio_dir = RunLayout(out).audio  # the reused actors' results go to this run's audio/
        self.current = Timers()
        saved: list[float] = []
        c0, t0 = time.process_time(), time.perf_counter()
        try:
            await run_batch(store, scenarios, agent, channel, meta, concurrency=concurrency, remote=remote,
                            progress=lambda _d, _t, _r: saved.append(time.perf_counter()))
        finally:
            store.close()
            await agent.aclose()
        return RunFigures(label, len(saved), saved[-1] - t0, time.process_time() - c0, self.current)

    async def configuration(self, label: str, *, actors: int | None, audio_format: str) -> list[RunFigures]:
        remote = None
        if actors is not None:
            from sim.executors.ray import RayEncounters, WorkerSpec

            meta = self.meta([*self.warm, *self.scenarios], self.args.k, audio_format)
            remote = RayEncounters(WorkerSpec.from_meta(meta), meta=meta, scenarios=[*self.warm, *self.scenarios],
                                   audio_dir=self.work / "unused", actors=actors)
        concurrency = actors if actors is not None else self.args.local_concurrency
        try:
            w = time.perf_counter()
            await self.batch(f"{label} warm-up", self.warm, actors or 1, audio_format=audio_format, remote=remote,
                             concurrency=concurrency)
            print(f"  {label}: warm-up (models loaded, not timed) {time.perf_counter() - w:.1f} s", flush=True)
            runs = []
            for i in range(self.args.repeat):
                fig = await self.batch(label, self.scenarios, self.args.k, audio_format=audio_format, remote=remote,
                                       concurrency=concurrency)
                print(f"  {label} #{i + 1}: {fig.encounters} encounters in {fig.seconds:.1f} s = "
                      f"{fig.per_min:.1f}/min", flush=True)
                runs.append(fig)
            return runs
        finally:
            if remote is not None:
                remote.close()


def receive_cost(outcomes: list[Any], repeat: int) -> tuple[float, float, float]:
    """Median wall and CPU seconds of ``ray.get`` of each captured outcome (mean over outcomes), and mean MB."""
    import pickle

    import ray

    walls, cpus, sizes = [], [], []
    for outcome in outcomes:
        ref = ray.put(outcome)
        sizes.append(len(pickle.dumps(outcome, protocol=5)) / 1e6)
        w_s, c_s = [], []
        for _ in range(repeat):
            w, c = time.perf_counter(), time.thread_time()
            ray.get(ref)
            w_s.append(time.perf_counter() - w)
            c_s.append(time.thread_time() - c)
        walls.append(statistics.median(w_s))
        cpus.append(statistics.median(c_s))
        del ref
    return statistics.fmean(walls), statistics.fmean(cpus), statistics.fmean(sizes)


def _med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def driver_cost(runs: list[RunFigures], captured: list[Any], receive_repeat: int) -> dict[str, tuple[float, float]]:
    """The driver's serial cost per encounter, part by part (wall s, CPU s), over ``runs``; with ``T_driver``."""
    recv_wall, recv_cpu, mb = receive_cost(captured, receive_repeat) if captured else (0.0, 0.0, 0.0)
    parts: dict[str, tuple[float, float]] = {"receive (ray.get)": (recv_wall, recv_cpu)}
    for name, (wall_key, cpu_key) in PARTS.items():
        parts[name] = (_med([f.per_encounter(wall_key) for f in runs]),
                       _med([f.per_encounter(cpu_key, cpu=True) for f in runs]))
    parts["T_driver"] = (sum(w for w, _ in parts.values()), sum(c for _, c in parts.values()))
    parts["outcome MB (pickled)"] = (mb, mb)
    return parts


PARTS = {"score": ("score", "score_cpu"), "write results.jsonl (+fsync)": ("write_results", "write_results"),
         "write events": ("write_events", "write_events"), "write audio": ("write_audio", "write_audio"),
         "write artifact paths": ("write_paths", "write_paths"), "summarise (amortised)": ("summarise", "summarise")}


async def amain(args: argparse.Namespace) -> None:
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # before `import ray`: bind 127.0.0.1 only
    import ray

    from sim.records import DEFAULT_AUDIO_FORMAT

    local_format = DEFAULT_AUDIO_FORMAT if DEFAULT_AUDIO_FORMAT in args.audio_formats else args.audio_formats[-1]
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at start")
    print(f"scenarios {args.scenarios}, k={args.k}, --max-turns {args.max_turns}, repeat {args.repeat}, "
          f"warm-up {args.warmup}, audio formats {','.join(args.audio_formats)} (local: {local_format})")
    ray.init(address="local", num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False, logging_level=logging.WARNING)
    results: dict[str, list[RunFigures]] = {}
    c0, w0 = time.process_time(), time.perf_counter()
    await asyncio.sleep(args.idle)
    idle_rate = (time.process_time() - c0) / (time.perf_counter() - w0)  # CPU s per s of the idle driver
    costs: dict[str, dict[str, tuple[float, float]]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="encsim-scale-") as tmp:
            bench = Bench(args, Path(tmp))
            with instrumented(lambda: bench.current):
                results["local"] = await bench.configuration("local", actors=None, audio_format=local_format)
                for fmt in args.audio_formats:
                    for n in args.actors:
                        results[f"ray {n} {fmt}"] = await bench.configuration(f"ray {n} {fmt}", actors=n,
                                                                              audio_format=fmt)
            for fmt in args.audio_formats:
                runs = [f for label, rs in results.items() if label.endswith(f" {fmt}") for f in rs]
                costs[fmt] = driver_cost(runs, runs[-1].timers.outcomes, args.receive_repeat)
    finally:
        ray.shutdown()
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end (other processes share the machine)")

    base = _med([f.per_min for f in results["local"]])
    print("\nthroughput (warm; median of repeats)")
    print(f"{'executor':<15} {'enc/min':>8} {'ratio to local':>15} {'runs enc/min':>30}")
    for label, runs in results.items():
        per_min = _med([f.per_min for f in runs])
        print(f"{label:<15} {per_min:>8.1f} {per_min / base:>15.2f} {' '.join(f'{f.per_min:.1f}' for f in runs):>30}")

    print(f"\ndriver's serial cost per encounter, wall / CPU ms (median over each format's Ray runs; receive: "
          f"ray.get of the last run's outcomes x{args.receive_repeat})")
    print(f"{'part':<30} " + " ".join(f"{fmt:>15}" for fmt in args.audio_formats))
    for name in costs[args.audio_formats[0]]:
        scale = 1.0 if name.startswith("outcome MB") else 1e3
        print(f"{name:<30} " + " ".join(f"{costs[f][name][0] * scale:>7.2f} /{costs[f][name][1] * scale:>6.2f}"
                                        for f in args.audio_formats))
    for fmt in args.audio_formats:
        fmt_runs = [f for label, rs in results.items() if label.endswith(f" {fmt}") for f in rs]
        t_wall, t_cpu = costs[fmt]["T_driver"]
        whole = _med([f.driver_cpu_s / f.encounters for f in fmt_runs])
        busy = _med([(f.driver_cpu_s - idle_rate * f.seconds) / f.encounters for f in fmt_runs])
        one = [f for label, rs in results.items() if label == f"ray {min(args.actors)} {fmt}" for f in rs]
        t_worker = _med([rt for f in one for rt in f.timers.round_trips])
        print(f"\n{fmt}: driver process CPU per encounter, every thread: {whole * 1e3:.1f} ms; minus the idle "
              f"driver's {idle_rate * 1e3:.1f} ms CPU per second: {busy * 1e3:.1f} ms, of which "
              f"{(busy - t_cpu) * 1e3:.1f} ms not in the split above (Ray's own threads, asyncio, thread hops)")
        print(f"{fmt}: T_worker = {t_worker:.2f} s (ray {min(args.actors)} actor round trip), T_driver = "
              f"{t_wall * 1e3:.1f} ms (wall; CPU {t_cpu * 1e3:.1f} ms), serial fraction s = "
              f"{serial_fraction(t_wall, t_worker):.4f}")
        print(f"{'workers':>8} {'projected enc/min':>18} {'driver-bound ceiling':>21} {'bound by':>9} "
              f"{'Amdahl, no overlap':>19}")
        for n in (*args.actors, *WORKERS):
            p = project(t_worker, t_wall, n)
            print(f"{n:>8} {p.projected:>18.0f} {p.ceiling:>21.0f} {p.bound_by:>9} {p.amdahl:>19.0f}")
        met = 60.0 / t_wall >= GOAL_PER_MIN
        print(f"{fmt}: goal, the driver's serial cost allows >= {GOAL_PER_MIN:.0f} encounters/min (T_driver <= "
              f"{60e3 / GOAL_PER_MIN:.1f} ms): {'MET' if met else 'NOT MET'} ({60.0 / t_wall:.0f}/min)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", default="viral_uri,simple_uti,acs_chest_pain")
    ap.add_argument("--k", type=int, default=2, help="runs per scenario per measured batch")
    ap.add_argument("--max-turns", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=2, help="measured batches per configuration")
    ap.add_argument("--actors", default="1,2", help="comma-separated Ray voice pool sizes (the instance has 2 CPUs)")
    ap.add_argument("--local-concurrency", type=int, default=4, help="the local executor's --concurrency")
    ap.add_argument("--warmup", default="appendicitis", help="the warm-up scenario (outside the measured set)")
    ap.add_argument("--receive-repeat", type=int, default=5)
    ap.add_argument("--audio-formats", default="wav,flac",
                    help="comma-separated --audio-format values, each measured on Ray (the old path, wav, first); "
                         "the local executor uses flac, the default, if listed, else the last")
    ap.add_argument("--idle", type=float, default=5.0, help="seconds of idle driver CPU measured after Ray starts")
    args = ap.parse_args()
    args.actors = [int(a) for a in args.actors.split(",") if a.strip()]
    args.audio_formats = [f for f in args.audio_formats.split(",") if f.strip()]
    asyncio.run(amain(args))


if __name__ == "__main__":
    main()
