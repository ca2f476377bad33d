"""Score one finished conversation: the composition of its score card, and the record of its encounter.

``score_conversation`` is the one place a score card is assembled, for every way of running encounters (a batch,
a live call, a persona sweep): the deterministic path (``score_encounter``) and the named evaluators run on one
dedicated scoring thread (``_off_loop``), then the judges (rubric, trust and diagnosis verdicts) and the binary
failure-mode judges are asked together, and the profile combines the paths. ``record_for`` wraps it in the
encounter's error boundary: an errored conversation is recorded as an error, never scored; a scoring that raises
makes that one encounter an error that keeps its transcript ("scoring failed: ..."), never the run's end.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from scenarios import Scenario
from scenarios.personas import DEFAULT_PERSONA
from scorers._deterministic import score_encounter
from scorers._failure_judges import FailureJudgeSpec, run_failure_judge
from scorers._judge import Judge, judge_encounter, judge_path_score, transcript_text
from scorers._profiles import Profile, combine
from sim.records import ConversationResult, EncounterRecord, ScoreCard

__all__ = ["record_for", "score_conversation"]


async def score_conversation(result: ConversationResult, scenario: Scenario, *, evaluator_names: list[str],
                             judges: Sequence[Judge] | None, profile: Profile,
                             failure_judges: Sequence[FailureJudgeSpec] = ()) -> ScoreCard:
    """The score card of a finished conversation, every path combined under ``profile``.

    The deterministic path and evaluators run on the one scoring thread; then the judges' verdicts and the
    failure-mode judges are asked, all calls together. Raises whatever a scorer or a judge call raised (a judge
    that fails on its own gives "no verdict" inside ``judge_encounter``); ``record_for`` turns that into the
    encounter's error.
    """
    card = await _off_loop(_score_and_evaluate, result, scenario, evaluator_names)  # CPU: off the loop
    if judges:  # a judge that fails gives "no verdict", never an error for the encounter
        # the rubric/trust/diagnosis calls and the binary failure-mode judges (evaluators failure:<mode>) all
        # go out together (each judge bounds its own calls in flight); a task group cancels the rest if one
        # raises, so no call outlives a failed scoring
        conversation = transcript_text(result) if failure_judges else ""
        try:
            async with asyncio.TaskGroup() as tg:
                verdict = tg.create_task(judge_encounter(result, _with_imaging_rubrics(scenario), judges))
                failures = [tg.create_task(run_failure_judge(spec, conversation, judges))
                            for spec in failure_judges]
        except ExceptionGroup as group:  # the first error, as the record's "scoring failed: ..." reason
            raise group.exceptions[0] from None
        card.judge = verdict.result()
        card.evaluators += [f.result() for f in failures]
    card.combined = combine(
        profile, deterministic=card.composite,
        judge=judge_path_score(card.judge) if card.judge else None,
        evaluators=[e for e in card.evaluators if e.applicable])
    return card


async def record_for(result: ConversationResult, scenario: Scenario, *, evaluator_names: list[str],
                     judges: Sequence[Judge] | None, profile: Profile,
                     failure_judges: Sequence[FailureJudgeSpec] = (),
                     persona: str = DEFAULT_PERSONA) -> EncounterRecord:
    """Score a finished encounter (deterministic path, evaluators, judges, profile) into its record.

    An encounter that ended in an error is recorded as an error, never scored. ``persona`` is the preset the
    patient played (``--personas``), recorded on the record.

    Scoring is inside the encounter's error boundary: a scorer or an evaluator that raises on this encounter
    (a bug, an imported case it does not expect) makes this one encounter an error that keeps its transcript
    ("scoring failed: ..."), never the run's end. (An evaluator that raises is already caught by
    ``run_evaluators`` and recorded on the card; this catches the rest.)
    """
    if result.termination == "not_applicable":
        return EncounterRecord(scenario_id=scenario.id, k=result.k, persona=persona, status="not_applicable",
                               result=result, recorded_at=time.time())
    if not result.ok:
        return EncounterRecord(scenario_id=scenario.id, k=result.k, persona=persona, status="error", result=result,
                               error="; ".join(result.errors) or result.termination, recorded_at=time.time())
    try:
        card = await score_conversation(result, scenario, evaluator_names=evaluator_names, judges=judges,
                                        profile=profile, failure_judges=failure_judges)
    except Exception as exc:  # this encounter's scoring failed: an error of this encounter, not of the run
        return EncounterRecord(scenario_id=scenario.id, k=result.k, persona=persona, status="error", result=result,
                               error=f"scoring failed: {type(exc).__name__}: {exc}", recorded_at=time.time())
    return EncounterRecord(scenario_id=scenario.id, k=result.k, persona=persona, status="ok", result=result,
                           score=card, recorded_at=time.time())


_SCORING: ThreadPoolExecutor | None = None  # the one scoring thread (_off_loop)


async def _off_loop(fn: Callable[..., ScoreCard], *args: Any) -> ScoreCard:
    """``fn(*args)`` on the one scoring thread, in the caller's context.

    One thread, not asyncio's default pool (up to 6 threads on 2 cores): scoring is pure Python, so more threads
    only take the GIL from the event loop in turn. When 32 encounters of a wave end together, six scoring threads
    made the loop wait behind each of them for the GIL, and the next wave's first requests went out 18 ms late
    on average (bench/harness_overhead.py at concurrency 32).
    """
    global _SCORING
    if _SCORING is None:
        _SCORING = ThreadPoolExecutor(max_workers=1, thread_name_prefix="encsim-scoring")
    ctx = contextvars.copy_context()
    return await asyncio.get_running_loop().run_in_executor(_SCORING, functools.partial(ctx.run, fn, *args))


def _score_and_evaluate(result: ConversationResult, scenario: Scenario, evaluator_names: list[str]) -> ScoreCard:
    from scorers.evaluators import run_evaluators  # (scorers.evaluators is heavier; not at scorers' import)

    card = score_encounter(result, scenario)
    card.evaluators = run_evaluators(result, scenario, evaluator_names)
    return card


def _with_imaging_rubrics(scenario: Scenario) -> Scenario:
    """A free-text imaging item without rubrics is judged on its expected findings (scorers._imaging)."""
    if scenario.imaging is None or scenario.imaging.answer_type != "free_text" or scenario.rubrics:
        return scenario
    from scenarios.schema import RubricCriterion
    from scorers._imaging import judge_rubrics

    rubrics = [RubricCriterion.model_validate(c) for c in judge_rubrics(scenario.imaging)]
    return scenario.model_copy(update={"rubrics": rubrics})
