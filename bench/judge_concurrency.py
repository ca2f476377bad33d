"""How long the judge path takes for one HealthBench-sized encounter, serial against concurrent.

A real loopback HTTP judge (``tests.fakeserver.FakeChatServer`` on 127.0.0.1) answers every call after
``--latency`` seconds (default 0.2) with a valid verdict. One encounter with ``--criteria`` rubric criteria
(default 19, a large HealthBench row) plus the three default trust criteria goes to one judge, first with
``--judge-concurrency 1`` (the baseline: the calls one after another, as before), then with the default 8
and with 32, each measured in the same run. Prints wall time per setting and the speed-up against the
baseline::

    .venv/bin/python bench/judge_concurrency.py [--criteria 19] [--latency 0.2] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from scenarios.schema import RubricCriterion, Scenario  # noqa: E402
from scorers import judge_encounter  # noqa: E402
from sim.judges import DEFAULT_JUDGE_CONCURRENCY, JudgeClient  # noqa: E402
from sim.records import ConversationResult, ParsedAssessment, Turn  # noqa: E402
from tests.fakeserver import FakeChatServer  # noqa: E402


def _reply(body: dict[str, Any]) -> str:
    prompt = json.dumps(body.get("messages", []))
    return '{"rating": 2, "explanation": "ok"}' if '\\"rating\\"' in prompt or "rating" in prompt \
        else '{"criteria_met": true, "explanation": "ok"}'


def _encounter(n_criteria: int) -> tuple[ConversationResult, Scenario]:
    scenario = Scenario.model_validate({
        "id": "bench_judge", "title": "judge bench", "suite": "ddx", "canary": "encsim-canary-bench-judge-0000",
        "patient_profile": {"age": 40, "sex": "female"}, "chief_complaint": "a question",
        "opening_line": "Is this rash anything to worry about?", "fallback_lines": ["Sorry, what do you mean?"],
        "replay": [{"role": "patient", "content": "Is this rash anything to worry about?"}],
        "expected": {}, "rubrics": [{"criterion": f"Criterion {i}: the reply does thing {i}.", "points": 1 + i % 5}
                                    for i in range(n_criteria)]})
    turns = [Turn(index=0, speaker="patient", text="Is this rash anything to worry about?", started_at=0, ended_at=0),
             Turn(index=1, speaker="agent", text="Probably not, but here is what to watch for.", started_at=1,
                  ended_at=1, agent_turn=1)]
    result = ConversationResult(scenario_id=scenario.id, k=0, seed=0, harness_version="bench", model="m",
                                turns=turns, gathered_info=[], final_assessment=None, final_reply=turns[1].text,
                                assessment=ParsedAssessment(), termination="reply", agent_turns=1, turn_limit=1,
                                started_at=0, ended_at=1)
    assert all(isinstance(r, RubricCriterion) for r in scenario.rubrics)
    return result, scenario


async def _timed(base_url: str, concurrency: int, result: ConversationResult, scenario: Scenario) -> float:
    judge = JudgeClient(model="bench-judge", base_url=base_url, concurrency=concurrency)
    try:
        t0 = time.perf_counter()
        card = await judge_encounter(result, scenario, [judge])
        elapsed = time.perf_counter() - t0
    finally:
        await judge.aclose()
    assert card.no_verdicts == 0 and len(card.rubric) == len(scenario.rubrics), card
    return elapsed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--criteria", type=int, default=19)
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    result, scenario = _encounter(args.criteria)
    calls = args.criteria + 3
    with FakeChatServer(latency_s=args.latency, reply=_reply) as server:
        settings = [1, DEFAULT_JUDGE_CONCURRENCY, 32]
        times: dict[int, list[float]] = {c: [] for c in settings}
        for _ in range(args.repeats):  # interleaved, so drift hits every setting alike
            for c in settings:
                times[c].append(asyncio.run(_timed(server.base_url, c, result, scenario)))
    base = statistics.median(times[1])
    print(f"one encounter: {args.criteria} rubric + 3 trust criteria = {calls} judge calls, 1 judge, "
          f"loopback latency {args.latency * 1000:.0f} ms, median of {args.repeats}")
    print(f"{'concurrency':>11}  {'seconds':>8}  {'speed-up vs 1':>13}")
    for c in settings:
        med = statistics.median(times[c])
        print(f"{c:>11}  {med:8.2f}  {base / med:13.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
