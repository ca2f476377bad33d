"""CPU time of the built-in evaluators per encounter (issue 17, part 3: goal <= 2 ms per encounter).

The three scripted controls (``reference``, ``natural``, ``undertriage``) play every library scenario through
the text harness; then the built-in evaluators (``scorers.evaluators.run_evaluators``, a new evaluator instance
per call as in a run) score each transcript, timed with ``time.process_time`` (CPU, not wall time, so another
process on the machine does not count). Printed per evaluator and in total:

- ``cold``: the first pass, when each scenario's per-scenario work (applicable protocols, covering facts, the
  source text's n-grams) is done for the first time;
- ``warm``: the median of ``--repeat`` later passes, what the other K - 1 encounters of a scenario cost;
- ``first``: a pass over copies of the scenario objects in the warm process (the per-scenario caches miss, the
  compiled patterns are reused): what a scenario's first encounter costs in a run; and the mean over K;
- the baseline, measured in the same run: the deterministic scorer (``scorers.score_encounter``) on the same
  transcripts, and each figure's ratio to it.

Run from the repository root::

    .venv/bin/python bench/evaluator_cpu.py [--repeat 5] [--profile prof.out]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from scenarios import load_scenario  # noqa: E402
from scenarios.loader import library_dir, scenario_files  # noqa: E402
from scenarios.schema import Scenario  # noqa: E402
from scorers import score_encounter  # noqa: E402
from scorers.evaluators import evaluator_names, get_evaluator, run_evaluators  # noqa: E402
from sim.agents import make_agent  # noqa: E402
from sim.encounter import run_item  # noqa: E402
from sim.encounter.channel import TextChannel  # noqa: E402
from sim.records import ConversationResult  # noqa: E402

Pairs = list[tuple[ConversationResult, Scenario]]
CONTROLS = ("scripted:reference", "scripted:natural", "scripted:undertriage")


async def transcripts() -> Pairs:
    """Every library scenario played by each control (fresh scenario objects: the caches start cold)."""
    items = [load_scenario(p) for p in scenario_files(library_dir())]
    out = []
    for control in CONTROLS:
        agent = await make_agent(control)
        out += [(await run_item(item, agent, TextChannel()), item.scenario) for item in items]
    return out


def per_encounter_ms(pairs: Pairs, fn: Callable[[ConversationResult, Scenario], object]) -> float:
    """CPU milliseconds per encounter of one pass of ``fn`` over ``pairs``."""
    start = time.process_time()
    for result, scenario in pairs:
        fn(result, scenario)
    return (time.process_time() - start) * 1000 / len(pairs)


def main(argv: list[str] | None = None) -> int:
    """Measure and print the table (module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="warm passes; the median is printed (default 5)")
    ap.add_argument("--profile", type=Path, help="also write a cProfile of one warm pass of run_evaluators here")
    args = ap.parse_args(argv)
    pairs = asyncio.run(transcripts())
    cold = per_encounter_ms(pairs, run_evaluators)
    warm = statistics.median(per_encounter_ms(pairs, run_evaluators) for _ in range(args.repeat))
    # new scenario objects: the per-scenario caches miss, the process-wide ones (compiled patterns) do not
    first = statistics.median(per_encounter_ms([(r, s.model_copy()) for r, s in pairs], run_evaluators)
                              for _ in range(args.repeat))
    base = statistics.median(per_encounter_ms(pairs, score_encounter) for _ in range(args.repeat))
    print(f"{len(pairs)} encounters ({len({s.id for _, s in pairs})} scenarios x {len(CONTROLS)} controls); "
          f"CPU ms per encounter, median of {args.repeat} warm passes")
    print(f"{'part':22} {'ms':>7} {'x deterministic':>16}")
    print(f"{'deterministic (base)':22} {base:7.3f} {1.0:16.2f}")
    for name in evaluator_names(builtin_only=True):
        def one(result: ConversationResult, scenario: Scenario, name: str = name) -> object:
            ev = get_evaluator(name)
            applies = getattr(ev, "applies_to", None)
            return ev.evaluate(result, scenario) if applies is None or applies(scenario) else None

        ms = statistics.median(per_encounter_ms(pairs, one) for _ in range(args.repeat))
        print(f"{'  ' + name:22} {ms:7.3f} {ms / base:16.2f}")
    verdict = "met" if warm <= 2 else "NOT met"
    print(f"{'all evaluators, warm':22} {warm:7.3f} {warm / base:16.2f}   goal <= 2 ms: {verdict}")
    print(f"{'all evaluators, first':22} {first:7.3f} {first / base:16.2f}   (a scenario's first encounter in a "
          "warm process)")
    print(f"{'all evaluators, cold':22} {cold:7.3f} {cold / base:16.2f}   (the process's first pass: patterns "
          "compiled too)")
    for k in (1, 2, 10):
        mean = (first + (k - 1) * warm) / k
        print(f"  mean over a scenario's K = {k:<2} encounters: {mean:.3f} ms")
    if args.profile:
        prof = cProfile.Profile()
        prof.runcall(per_encounter_ms, pairs, run_evaluators)
        prof.dump_stats(str(args.profile))
        print(f"profile of one warm pass: {args.profile}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
