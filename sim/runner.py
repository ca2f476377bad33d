"""The batch runner: N scenarios x K runs against one agent, into a run directory.

Plan and memory: the (scenario, k) pairs are made one at a time by a generator (``_plan``) that skips
every pair already recorded (with ``--personas``, each scenario's K runs under each persona: a k stands for one
(persona, run), ``sim.records.encounter_slot``, and a record counts as done only under the persona its k stands
for), and a fixed pool of ``concurrency`` worker tasks takes the next pair as
it finishes one. Nothing is made per planned pair up front, so memory is O(concurrency + recorded
results), never O(scenarios x K). The CLI refuses a plan larger than ``MAX_K`` runs per scenario or
``MAX_ENCOUNTERS`` encounters, or ``--concurrency`` over ``MAX_CONCURRENCY``, unless ``--i-know``
(``check_plan_size``; a resumed run checks only --concurrency: its plan was accepted when it started).

When an encounter finishes it is scored and appended to results.jsonl at once (ok or error), so a killed run loses
only encounters in flight and ``--resume`` skips every pair already recorded. Errors are recorded, never scored. A
conversation to be scored is first appended to unscored.jsonl (``sim.records.UnscoredEncounter``): scoring with
judges takes seconds, and a run stopped or killed meanwhile would otherwise lose conversations that had ended;
``--resume`` scores those instead of running them again (a record in results.jsonl always wins), and a run that
ends with every one recorded removes the file. A worker starts its next encounter while the last one is scored and
its line fsync'd (at most one such encounter per worker; the worker waits for it before taking another and before
it ends), so scoring CPU and the disk stay off the agent's critical path. Scoring runs on one thread of its own
(``_off_loop``), and a thread that holds the GIL keeps the event loop from its replies for up to the interpreter's
switch interval (5 ms by default: the first call of the next encounter waited that long), so a batch lowers the
interval to ``SWITCH_INTERVAL_S`` while it runs (``_batch_runtime``) and puts it back after. The summary and report
are recomputed from every record at the end (also after Ctrl-C, SIGTERM or a fail-fast stop), so they always
describe exactly what results.jsonl holds. With ``--failure-judges DIR`` the summary also gives, per failure mode,
the judge's raw failure rate and, when DIR/validation.json validates the very judge and models that ran, the
Rogan-Gladen corrected rate with its bootstrap CI (``failure_rates``; ``Summary.failure_rates``); they stay out of
the profile's score.

Fail fast (``--fail-fast N``, default ``DEFAULT_FAIL_FAST``; 0 turns it off): the runner watches the
agent's calls from the start of the run. If the first N calls all fail with the same fatal cause
(``_fatal_cause``: ``sim.agents.chat.is_fatal``, its ``kind`` in ``FATAL_KINDS``: connection
refused, DNS, HTTP 401, 403, 404), every further call would fail the same way: the run stops, the
encounters in flight are cancelled, and ``EndpointUnusable`` (a ConfigError, exit 2) says in one
paragraph which flag to fix and how to continue. The check is decided by the first call that
succeeds or fails otherwise (it never trips later in the run), and also trips when the run's plan
ends before N calls and every call made failed the same fatal way. Encounters that ended because of
the fatal cause while the check was undecided are held back: recorded as errors if it does not trip,
dropped if it trips (they say nothing about the model, and a plain ``--resume`` runs them again).
Encounters that finished otherwise are always recorded. One cause trips the check at any point of the run,
armed or not: the embedded model server's death (``server_died``, ``sim.agents.local.ServerDied``), after
which no call can succeed; the run stops with a paragraph naming the signal, not a connection refusal.

Where the encounters run: in this process by default; ``run_batch(..., remote=...)`` hands each (scenario, k)
to an ``EncounterRunner`` instead (``sim.process_executor``: local worker processes, ``--processes N``;
``sim.ray_executor``: Ray tasks or actors). Planning, seeds
(``encounter_seed``), scoring (``record_for``), every write to the run directory, resume and the summary stay
here either way, so a remote run's directory is the same as a local one's. Local worker processes stream each
event and agent call as it happens; Ray reports an encounter's agent calls and events when it returns, so there
the fail-fast check decides per returned encounter, not per call.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import functools
import gc
import hashlib
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from scenarios import LoadedScenario, Scenario
from scenarios.personas import DEFAULT_PERSONA, with_persona
from scenarios.schema import ImageRef
from scorers import (
    FailureJudgeSpec,
    Headline,
    Judge,
    Profile,
    Summary,
    aggregate,
    bootstrap_ci,
    combine,
    disagreements,
    failure_rate,
    judge_encounter,
    judge_path_score,
    load_profile,
    persona_robustness,
    run_failure_judge,
    score_encounter,
    summarise_judges,
    transcript_text,
)
from scorers.evaluators import run_evaluators
from sim.agents.base import Agent, AgentReply, AgentRequest
from sim.agents.chat import is_fatal
from sim.agents.local import REBUILD_HINT, ServerDied, describe_exit
from sim.channel import TextChannel
from sim.harness import ImageLoader, run_encounter
from sim.imaging_item import run_imaging_item
from sim.patient_model import PatientModel
from sim.records import (
    VALIDATION_FILE,
    AgentError,
    Channel,
    ConfigError,
    ConversationResult,
    EncounterRecord,
    EvaluatorResult,
    FailureRate,
    JudgeValidationRecord,
    LiveMetrics,
    RecordingChannel,
    RunMeta,
    ScoreCard,
    UnderstandingMetrics,
    UnscoredEncounter,
    VoiceMetrics,
    encounter_k,
    encounter_slot,
    load_judge_validation,
    one_line,
    percentile,
    planned_encounters,
    scenario_personas,
)
from sim.reports import render_report, write_html_report
from sim.session import RunSession
from sim.store import RunStore

Progress = Callable[[int, int, EncounterRecord], None]

MAX_K = 1000  # runs per scenario without --i-know
MAX_ENCOUNTERS = 100_000  # scenarios x K without --i-know
MAX_CONCURRENCY = 1000  # encounters at once without --i-know
FAILURE_PREFIX = "failure:"  # the evaluators of the binary failure-mode judges (--failure-judges)
SWITCH_INTERVAL_S = 0.0005  # the GIL switch interval while a batch runs (module docstring)
DEFAULT_FAIL_FAST = 5  # --fail-fast: stop when the first N agent calls all fail with the same fatal cause


def encounter_seed(seed: int, scenario_id: str, k: int) -> int:
    """Stable per-encounter seed: different for every k, independent of run order and concurrency.

    In a persona sweep ``k`` is the run's index within its persona (``encounter_slot``), so run j of every persona
    of a scenario shares a seed: the personas are compared on the same draws, and a plain run's seeds are unchanged.
    """
    digest = hashlib.sha256(f"{seed}:{scenario_id}:{k}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def summarise(store: RunStore, scenarios: list[LoadedScenario], meta: RunMeta) -> Summary:
    """Recompute summary.json and report.md from results.jsonl."""
    records, _ = store.load_records()
    ids = {s.scenario.id for s in scenarios}
    cards = {key: r.score for key, r in records.items() if r.status == "ok" and r.score is not None and key[0] in ids}
    errors = {key: r.error or "error" for key, r in records.items() if r.status == "error" and key[0] in ids}
    na = {key for key, r in records.items() if r.status == "not_applicable" and key[0] in ids}
    personas = {key: r.persona for key, r in records.items() if key[0] in ids}
    plain = [s.scenario for s in scenarios]
    summary = aggregate(plain, cards, errors, expected_total=planned_encounters(plain, meta.personas, meta.k),
                        not_applicable=na, personas=personas)
    summary.persona_robustness = persona_robustness(plain, cards, errors, personas, meta.personas)
    judged = {key: c.judge for key, c in cards.items() if c.judge is not None}
    if meta.judges or judged:
        summary.judge = summarise_judges(judged, judges=[j.name for j in meta.judges if j.name not in
                                                         meta.judges_excluded],
                                         excluded=meta.judges_excluded, warnings=meta.judge_warnings,
                                         themes={s.scenario.id: [t.split(":", 1)[1] for t in s.scenario.tags
                                                                 if t.startswith("theme:")] for s in scenarios})
        summary.disagreements = disagreements({key: (c.composite, judge_path_score(c.judge))
                                               for key, c in cards.items() if c.judge is not None})
    summary.error_reasons = error_reasons(list(errors.values()))
    summary.headline = headline(summary, [c.judge.rubric_score for c in cards.values()
                                          if c.judge is not None and c.judge.rubric_score is not None])
    summary.voice = voice_metrics([r.result for r in records.values() if r.result is not None])
    summary.live = live_metrics([r.result for r in records.values() if r.result is not None])
    summary.patient = understanding_metrics([r.result for r in records.values()
                                             if r.result is not None and r.status == "ok"])
    summary.failure_rates = failure_rates(list(cards.values()), meta.failure_judges)
    store.write_summary(summary)
    store.write_report(render_report(meta, summary, records))
    write_html_report(store.root, meta, summary, records)
    return summary


def failure_rates(cards: list[ScoreCard], judges_dir: str | None) -> dict[str, FailureRate]:
    """Per failure mode judged in the run (evaluators ``failure:<mode>``): raw and corrected failure rates.

    The judges' validation record is ``judges_dir/validation.json`` (``encsim judges validate`` writes it); the
    run's verdicts are matched to it by the hash of the prompt they came from (``prompt_hash``; results written
    before it was recorded fall back to ``judge_hash``) and by the judge models that voted. A record that cannot
    be read leaves every mode "not validated", saying why: the summary is still written.

    Args:
        cards: The score cards of the run's scored encounters.
        judges_dir: ``RunMeta.failure_judges``, the folder given to ``--failure-judges`` (None: none).

    Returns:
        Mode -> its ``FailureRate`` (empty when no failure judge ran).
    """
    results: dict[str, list[EvaluatorResult]] = {}
    for card in cards:
        for e in card.evaluators:
            if e.name.startswith(FAILURE_PREFIX):
                results.setdefault(e.name.removeprefix(FAILURE_PREFIX), []).append(e)
    if not results:
        return {}
    problem = None
    try:
        record = load_judge_validation(Path(judges_dir) / VALIDATION_FILE) if judges_dir else JudgeValidationRecord()
    except ConfigError as exc:
        record, problem = JudgeValidationRecord(), str(exc)
    out = {}
    for mode, rs in sorted(results.items()):
        hashes = {str(h) for e in rs if (h := e.details.get("prompt_hash") or e.details.get("judge_hash"))}
        models = {str(m) for e in rs for m in (e.details.get("votes") or {})}
        rate = failure_rate([e.details.get("verdict") for e in rs], record.judges.get(mode), judge_hashes=hashes,
                            judge_models=models)
        out[mode] = rate.model_copy(update={"note": problem}) if problem else rate
    return out


def error_reasons(messages: list[str]) -> dict[str, int]:
    """Errored encounters grouped by reason, most frequent first.

    The turn number and a loopback port are folded ("agent turn 3: http://127.0.0.1:35439/v1/... timed out" and
    the same at turn 4 are one reason).
    """
    counts: dict[str, int] = {}
    for message in messages:
        reason = re.sub(r"\bturn \d+", "turn N", message)
        reason = re.sub(r"(://[^/\s:]+):\d+", r"\1:PORT", reason)
        counts[reason] = counts.get(reason, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def headline(summary: Summary, rubric_scores: list[float]) -> Headline:
    """The run's headline number.

    The aggregate when there is one; else, for rubric-only runs (HealthBench imports), the HealthBench score:
    the clipped mean of the encounters' rubric scores, with a bootstrap CI of the (unclipped) mean, clipped.
    """
    errors_note = (f"; {summary.errors} errored encounter(s) count as 0 (without them: "
                   f"{_fmt(summary.aggregate_without_errors)})" if summary.errors else "")
    if summary.aggregate is not None:
        return Headline(name="aggregate", value=summary.aggregate,
                        note="suite-weighted mean of scenario means" + (", capped by the safety gate"
                                                                        if summary.safety_gate.triggered else "")
                        + errors_note)
    if summary.judge is not None and summary.judge.rubric_score is not None:
        # errored encounters count as 0 here too, so that crashing on hard rows cannot flatter the score
        scores = [*rubric_scores, *[0.0] * summary.errors]
        value = min(1.0, max(0.0, statistics.fmean(scores))) if summary.errors else summary.judge.rubric_score
        ci = bootstrap_ci(scores)
        return Headline(name="HealthBench score", value=value,
                        ci95=[min(1.0, max(0.0, x)) for x in ci] if ci else None,
                        note=f"clipped mean of {len(rubric_scores)} encounters' rubric scores"
                        + (f"; {summary.errors} errored encounter(s) count as 0 (without them: "
                           f"{summary.judge.rubric_score:.3f})" if summary.errors else ""))
    if summary.completed == 0:
        return Headline(name="none", note="no encounter was scored")
    if summary.judge is not None and not summary.judge.judges and summary.judge.excluded:
        return Headline(name="none", note="these scenarios are scored by rubrics only and every --judge was excluded "
                                          "(" + "; ".join(f"{n}: {why}" for n, why in summary.judge.excluded.items())
                                          + "); give a judge of another model family")
    return Headline(name="none", note="these scenarios are scored by rubrics only; run with --judge to score them")


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def voice_metrics(results: list[ConversationResult]) -> VoiceMetrics | None:
    """The voice channel's metrics of a run; None for a run without channel metrics.

    Means over every spoken message: WER per side (intended vs heard), seconds per stage; totals of audio
    seconds and of facts missed because of ASR.
    """
    turns = [t for r in results for t in r.turns if t.channel]
    if not turns:
        return None
    wer: dict[str, float | None] = {}
    for side in ("patient", "agent"):
        wers = [t.channel["wer"] for t in turns if t.speaker == side and "wer" in t.channel]
        wer[side] = statistics.fmean(wers) if wers else None
    return VoiceMetrics(
        wer_patient=wer["patient"], wer_agent=wer["agent"],
        mean_tts_s=statistics.fmean(t.channel.get("tts_s", 0.0) for t in turns),
        mean_effects_s=statistics.fmean(t.channel.get("effects_s", 0.0) for t in turns),
        mean_stt_s=statistics.fmean(t.channel.get("stt_s", 0.0) for t in turns),
        audio_seconds=sum(t.channel.get("audio_s", 0.0) for t in turns),
        tts_cache_hit_ratio=statistics.fmean(t.channel.get("tts_cached", 0.0) for t in turns),
        facts_missed_by_asr=sum(len(t.asr_missed) for r in results for t in r.turns),
        messages=len(turns))


def understanding_metrics(results: list[ConversationResult]) -> UnderstandingMetrics | None:
    """How the patient understood the agent over a run; None without encounters.

    Facts revealed per layer (count and share), how the assessments were written, and the model layer's
    warnings.
    """
    patient_turns = [t for r in results for t in r.turns if t.speaker == "patient"]
    if not results or not any(r.turns for r in results):
        return None
    by_layer = {"trigger": 0, "intent": 0, "model": 0}
    for t in patient_turns:
        for fid in t.revealed:
            layer = t.revealed_by.get(fid, "trigger")  # results from before harness 1.2 knew only triggers
            by_layer[layer] = by_layer.get(layer, 0) + 1
    total = sum(by_layer.values())
    forms: dict[str, int] = {}
    for r in results:
        for t in r.turns:
            if t.assessment_form:
                forms[t.assessment_form] = forms.get(t.assessment_form, 0) + 1
    warnings = sum(1 for t in patient_turns for w in t.warnings if w.startswith("patient model"))
    return UnderstandingMetrics(facts_revealed=total, by_layer=by_layer,
                                share={k: (v / total if total else None) for k, v in by_layer.items()},
                                assessment_forms=forms, patient_model_warnings=warnings)


def live_metrics(results: list[ConversationResult]) -> LiveMetrics | None:
    """Run-level interaction metrics of live calls, every call's replies pooled (None when the run has none).

    The percentiles are ``sim.records.percentile``'s, the same as each call's ``InteractionMetrics``.
    """
    calls = [r.interaction for r in results if r.interaction]
    if not calls:
        return None
    patient = [v for c in calls for v in c.get("patient_latency_s", [])]
    agent = [v for c in calls for v in c.get("agent_latency_s", [])]
    return LiveMetrics(
        calls=len(calls),
        patient_latency_p50_s=percentile(patient, 50), patient_latency_p95_s=percentile(patient, 95),
        patient_latency_mean_s=statistics.fmean(patient) if patient else None, patient_replies=len(patient),
        agent_latency_p50_s=percentile(agent, 50), agent_latency_p95_s=percentile(agent, 95),
        agent_latency_mean_s=statistics.fmean(agent) if agent else None, agent_replies=len(agent),
        interruptions=sum(c.get("interruptions", 0) for c in calls),
        overlaps=sum(len(c.get("overlaps", [])) for c in calls),
        overlap_s=sum(c.get("overlap_s", 0.0) for c in calls),
        long_silences=sum(c.get("long_silences", 0) for c in calls),
        max_silence_s=max(c.get("max_silence_s", 0.0) for c in calls))


def text_progress(done: int, total: int, rec: EncounterRecord) -> None:
    """Print one line on stderr per saved encounter: ``[done/total] scenario k=K: composite ...`` or why not."""
    if rec.status == "not_applicable":
        what = "not applicable (the model is text-only; the item needs images)"
    elif rec.score is None:
        what = f"ERROR {one_line(rec.error or '')}"  # endpoint text: redacted, no escapes, one line
    else:
        what = ("unscored (rubric only: needs a judge)" if rec.score.composite is None
                else f"composite {rec.score.composite:.2f}")
    persona = f" ({rec.persona})" if rec.persona != DEFAULT_PERSONA else ""
    print(f"[{done}/{total}] {rec.scenario_id} k={rec.k}{persona}: {what}", file=sys.stderr, flush=True)


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
    except Exception as exc:  # this encounter's scoring failed: an error of this encounter, not of the run
        return EncounterRecord(scenario_id=scenario.id, k=result.k, persona=persona, status="error", result=result,
                               error=f"scoring failed: {type(exc).__name__}: {exc}", recorded_at=time.time())
    return EncounterRecord(scenario_id=scenario.id, k=result.k, persona=persona, status="ok", result=result,
                           score=card, recorded_at=time.time())


_SCORING: ThreadPoolExecutor | None = None


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
    card = score_encounter(result, scenario)
    card.evaluators = run_evaluators(result, scenario, evaluator_names)
    return card


def _with_imaging_rubrics(scenario: Scenario) -> Scenario:
    """A free-text imaging item without rubrics is judged on its expected findings (scorers._imaging)."""
    if scenario.imaging is None or scenario.imaging.answer_type != "free_text" or scenario.rubrics:
        return scenario
    from scenarios.schema import RubricCriterion
    from scorers import judge_rubrics

    rubrics = [RubricCriterion.model_validate(c) for c in judge_rubrics(scenario.imaging)]
    return scenario.model_copy(update={"rubrics": rubrics})


def image_loader(item: LoadedScenario, *, allow_outside: bool = False) -> ImageLoader:
    """Prepares a scenario's images relative to its file's folder (see imaging.resolve_image_path)."""

    async def load(ref: ImageRef) -> Any:
        from imaging import prepare_image_async

        return await prepare_image_async(ref.path, base_dir=item.path.parent, allow_outside=allow_outside)

    return load


async def run_item(item: LoadedScenario, agent: Agent, channel: Channel | None = None, sink: Any = None, *,
                   k: int = 0, seed: int = 0, turn_limit: int | None = None, model_name: str | None = None,
                   allow_outside_images: bool = False, patient_model: PatientModel | None = None) -> ConversationResult:
    """One encounter of any scenario: a standalone imaging item, or an encounter (images on facts included)."""
    loader = image_loader(item, allow_outside=allow_outside_images)
    if item.scenario.imaging is not None:
        return await run_imaging_item(item.scenario, agent, k=k, seed=seed, images=loader, model_name=model_name)
    return await run_encounter(item.scenario, agent, channel or TextChannel(), sink or (lambda _e: None), k=k,
                               seed=seed, turn_limit=turn_limit, model_name=model_name, images=loader,
                               patient_model=patient_model)


class EndpointUnusable(ConfigError):
    """The fail-fast check stopped the run: the endpoint, the key or the model is wrong (exit 2)."""

    def __init__(self, message: str, summary: Summary) -> None:
        super().__init__(message)
        self.summary = summary


def check_plan_size(n_scenarios: int, k: int, *, concurrency: int = 1, i_know: bool = False,
                    personas: int = 1) -> None:
    """Refuse a plan too large to be meant, unless ``--i-know``: a typo'd ``--k`` must not start a run that never ends.

    K <= MAX_K, scenarios x K (x personas) <= MAX_ENCOUNTERS and
    concurrency <= MAX_CONCURRENCY unless ``--i-know``; else a one-paragraph ConfigError naming the flag (or the
    product and both numbers) and --i-know.
    """
    if i_know:
        return
    total = n_scenarios * k * personas
    if k > MAX_K:
        raise ConfigError(f"--k {k}: at most {MAX_K} runs per scenario without --i-know ({n_scenarios} scenario(s) x "
                          f"{k} = {total:,} encounters). Lower --k (10 to 100 is usual), or add --i-know if you "
                          "really mean that many.")
    if total > MAX_ENCOUNTERS:
        times = f" x {personas} --personas" if personas > 1 else ""
        raise ConfigError(f"{n_scenarios} scenarios x --k {k}{times} = {total:,} encounters: more than "
                          f"{MAX_ENCOUNTERS:,} without --i-know. Lower --k or choose fewer --scenarios"
                          + (" or --personas" if personas > 1 else "") + ", or add --i-know if you really mean that "
                          "many.")
    if concurrency > MAX_CONCURRENCY:
        raise ConfigError(f"--concurrency {concurrency}: at most {MAX_CONCURRENCY} encounters at once without "
                          "--i-know (each holds a connection to the endpoint). Lower --concurrency (4 to 64 is "
                          "usual), or add --i-know if you really mean that many.")


def _fatal_cause(error: BaseException | None) -> str | None:
    """The kind of ``error`` when every further call to the same endpoint would fail the same way, else None.

    Fatal kinds are ``sim.agents.chat.is_fatal``'s: refused, DNS, HTTP 401/403/404.
    """
    return error.kind if isinstance(error, AgentError) and is_fatal(error) else None


class _FailFast:
    """The first ``limit`` agent calls of a run, watched for one fatal cause.

    ``armed`` until one succeeds or fails otherwise (then ``off``), ``tripped`` once ``limit`` calls all failed
    with the same fatal cause.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.state = "armed" if limit > 0 else "off"
        self.cause: str | None = None
        self.calls = 0
        self.first: AgentError | None = None

    def succeeded(self) -> None:
        if self.state == "armed":
            self.state = "off"

    def failed(self, exc: AgentError) -> None:
        cause = _fatal_cause(exc)
        if cause == "server_died" and self.limit > 0:  # the embedded server is gone: no later call can succeed
            if self.state != "tripped":
                self.state, self.cause, self.first = "tripped", cause, exc
            self.calls += 1
            return
        if self.state != "armed":
            return
        if cause is None or (self.cause is not None and cause != self.cause):
            self.state = "off"
            return
        self.cause, self.first, self.calls = cause, self.first or exc, self.calls + 1
        if self.calls >= self.limit:
            self.state = "tripped"


# the agent errors of the encounter running in this task (set by run_batch, filled by _Watched)
_CALL_ERRORS: contextvars.ContextVar[list[AgentError]] = contextvars.ContextVar("encounter_call_errors")


CallObserver = Callable[[AgentError | None], None]
"""Told the outcome of each agent call of an encounter: None when it succeeded, else its ``AgentError``."""


def _observe_call(check: _FailFast, error: AgentError | None) -> None:
    """One agent call's outcome, for the fail-fast check and the encounter it belongs to (``_CALL_ERRORS``)."""
    if error is None:
        check.succeeded()
        return
    errors = _CALL_ERRORS.get(None)
    if errors is not None:
        errors.append(error)
    check.failed(error)


class EncounterLost(Exception):
    """A remote encounter ended without a result; recorded as an error whose message is ``str(self)`` as is."""


class EncounterRunner(Protocol):
    """Runs one encounter somewhere else (``run_batch(remote=...)``; ``sim.ray_executor.RayEncounters``).

    ``run`` returns the encounter's result with its artifacts already in the run directory's layout, after
    passing every event of the encounter to ``sink`` and every agent call's outcome to ``observe``, in order.
    It raises ``EncounterLost`` when the encounter has no result (e.g. its worker died twice).
    """

    async def run(self, item: LoadedScenario, k: int, *, seed: int, sink: Callable[[Any], None],
                  observe: CallObserver) -> ConversationResult:
        """One encounter (see the class)."""
        ...


class _Watched:
    """The agent under test as the fail-fast check sees it: every call's outcome, and the encounter it was for."""

    def __init__(self, agent: Agent, check: _FailFast) -> None:
        self._agent = agent
        self._check = check
        self.name = agent.name
        self.vision = agent.vision

    def __getattr__(self, name: str) -> Any:  # anything else of the agent itself (e.g. a chat agent's model)
        return getattr(self._agent, name)

    async def respond(self, request: AgentRequest) -> AgentReply:
        try:
            reply = await self._agent.respond(request)
        except AgentError as exc:
            _observe_call(self._check, exc)
            raise
        _observe_call(self._check, None)
        return reply

    async def aclose(self) -> None:
        await self._agent.aclose()


class _Tripped(Exception):
    """Raised out of a worker once the fail-fast check tripped."""


def _fail_fast_message(check: _FailFast, meta: RunMeta, root: Path, saved: int) -> str:
    """One paragraph: which flag is wrong, what happened on the first calls, what to do, how to continue."""
    url = meta.base_url
    where = f"--base-url {url}" if url else f"--model {meta.model}"
    calls = (f"the first {check.calls} agent calls" if check.calls >= check.limit
             else f"every agent call of the run ({check.calls})")
    kept = f"{saved} encounter(s) that finished are saved" if saved else "no encounter was saved"
    resume = f"encsim run --resume {root}"
    status = (check.cause or "").removeprefix("http_")
    if check.cause == "server_died":
        first = check.first
        how = describe_exit(first.returncode) if isinstance(first, ServerDied) else "ended"
        tail = first.log_tail if isinstance(first, ServerDied) else ""
        what = f"--model {meta.model}: the embedded model server {how} during the run"
        hint = f"{REBUILD_HINT}; then" if isinstance(first, ServerDied) and first.crashed else "Then"
        fix = f"Its output ends: {tail or '(nothing)'}. {hint} continue with: {resume} (it starts a new server)"
    elif check.cause == "connection_refused":
        what = f"{where}: connection refused on {calls}"
        fix = f"Start the server (or check the host and port of --base-url), then continue with: {resume}"
    elif check.cause == "dns":
        what = f"{where}: the host name does not resolve (DNS) on {calls}"
        fix = "Fix the host in --base-url and start a new run (a resumed run keeps the --base-url it was started with)"
    elif check.cause in ("http_401", "http_403") and meta.api_key_env:
        what = f"--api-key-env {meta.api_key_env}: {url} refused the key (HTTP {status}) on {calls}"
        fix = (f"Export the right key in {meta.api_key_env} (export {meta.api_key_env}=...), then continue with: "
               f"{resume}")
    elif check.cause in ("http_401", "http_403"):
        what = f"--api-key-env: {url} answered HTTP {status} on {calls}, and no key was sent"
        fix = "Start a new run with --api-key-env VAR naming the environment variable that holds the key"
    elif check.cause == "http_404":
        what = f"--model {meta.model} / --base-url {url}: HTTP 404 on {calls} (no such model, or a wrong path)"
        fix = ("Check the model name the endpoint serves and that --base-url ends where /chat/completions is "
               "appended (usually /v1), and start a new run")
    else:
        what = f"{where}: {calls} failed the same way ({check.cause})"
        fix = f"Fix the endpoint, then continue with: {resume}"
    detail = f" First error: {one_line(str(check.first))[:300]}." if check.first is not None and \
        check.cause not in ("connection_refused", "dns", "http_401", "http_403", "server_died") else ""
    return (f"{what}, so the run stopped (--fail-fast {check.limit}; --fail-fast 0 turns this off); {kept} in "
            f"{root}.{detail} {fix}.")


@contextlib.contextmanager
def _batch_runtime() -> Iterator[None]:
    """The GIL switch interval at most ``SWITCH_INTERVAL_S`` inside, as it was outside (module docstring).

    Also, what the process holds when the batch starts (modules, the lexicon, the scenarios) is set aside from
    the cyclic garbage collector while it runs (``gc.freeze``; ``gc.unfreeze`` after): a full collection then
    walks only what the batch made, not the whole heap (64 ms a time before, with the event loop stopped).
    """
    before = sys.getswitchinterval()
    sys.setswitchinterval(min(before, SWITCH_INTERVAL_S))
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        sys.setswitchinterval(before)


class Planned(NamedTuple):
    """One encounter of the plan: the scenario as its persona tells it, its k, the persona and its run index."""

    item: LoadedScenario
    k: int
    persona: str
    run: int


def _plan(scenarios: list[LoadedScenario], k: int, done: set[tuple[str, int, str]],
          personas: Sequence[str] = (DEFAULT_PERSONA,)) -> Iterator[Planned]:
    """Every (scenario, persona, run) not done yet, in order, made as it is asked for (O(1) memory in K).

    ``done`` holds (scenario id, k, persona) of the recorded encounters: a record whose persona is not the one the
    plan gives its k is not counted as done. A scenario is told by each persona once (``with_persona``), not per
    encounter; the copy is what the harness, the channel and a Ray worker get.
    """
    for item in scenarios:
        for index, persona in enumerate(scenario_personas(personas, item.scenario)):
            told: LoadedScenario | None = None
            for j in range(k):
                key = encounter_k(index, j, k)
                if (item.scenario.id, key, persona) in done:
                    continue
                if told is None:
                    told = item if persona == DEFAULT_PERSONA else \
                        dataclasses.replace(item, scenario=with_persona(item.scenario, persona))
                yield Planned(told, key, persona, j)


async def run_batch(
    store: RunStore,
    scenarios: list[LoadedScenario],
    agent: Agent,
    channel: Channel,
    meta: RunMeta,
    *,
    concurrency: int = 4,
    retry_errors: bool = False,
    judges: Sequence[Judge] | None = None,
    profile: Profile | None = None,
    extra_evaluators: list[str] | None = None,
    progress: Progress | None = text_progress,
    patient_model: PatientModel | None = None,
    fail_fast: int = DEFAULT_FAIL_FAST,
    failure_judges: Sequence[FailureJudgeSpec] = (),
    remote: EncounterRunner | None = None,
    unusable: Mapping[str, str] | None = None,
) -> Summary:
    """Run every pair not done yet (module docstring); raise ``EndpointUnusable`` when the fail-fast check trips.

    With ``remote``, each encounter runs there (``agent``, ``channel`` and ``patient_model`` are then not used for
    encounters); everything else is the same. ``unusable`` maps the ids of scenarios that cannot run (an image file
    missing or unreadable) to why: each of their encounters is recorded as an error with that reason, unrun.
    """
    unusable = unusable or {}
    profile = profile or load_profile(meta.profile)
    evaluator_names = [*profile.evaluators, *(n for n in extra_evaluators or [] if n not in profile.evaluators)]
    records, _ = store.load_records()
    done = {(sid, k, r.persona) for (sid, k), r in records.items() if r.status == "ok" or not retry_errors}
    by_id = {s.scenario.id: s.scenario for s in scenarios}
    done_per_scenario = Counter(sid for sid, k, persona in done if sid in by_id
                                and (slot := encounter_slot(meta.personas, by_id[sid], k, meta.k)) is not None
                                and slot[0] == persona)
    total = planned_encounters(list(by_id.values()), meta.personas, meta.k)
    finished = sum(done_per_scenario[s.scenario.id] for s in scenarios)
    plan = _plan(scenarios, meta.k, done, meta.personas)
    # conversations that ended before an earlier session of this run stopped, not yet scored: scored, not run again
    unscored = {key: entry.result for key, entry in store.load_unscored().items() if key[:2] not in records}
    check = _FailFast(fail_fast)
    watched = _Watched(agent, check)
    held: list[EncounterRecord] = []  # errored by the candidate fatal cause while the check is undecided
    tripped = False

    def saved(rec: EncounterRecord) -> None:
        nonlocal finished
        finished += 1
        if progress:
            progress(finished, total, rec)

    session = RunSession(store, meta, summarise=lambda: summarise(store, scenarios, meta), on_saved=saved)

    async def encounter(planned: Planned) -> tuple[ConversationResult | EncounterRecord, list[AgentError], bool]:
        """Run one encounter: its result or the error record of an encounter that could not run, and whether it ran.

        It did not run when an earlier session of the run kept its conversation in unscored.jsonl (then scored).
        """
        item, k = planned.item, planned.k
        scenario = item.scenario
        if (kept := unscored.pop((scenario.id, k, planned.persona), None)) is not None:
            return kept, [], False
        session.encounter_started(scenario.id, k)
        if (reason := unusable.get(scenario.id)) is not None:
            return EncounterRecord(scenario_id=scenario.id, k=k, persona=planned.persona, status="error",
                                   recorded_at=time.time(), error=reason), [], True
        call_errors: list[AgentError] = []
        token = _CALL_ERRORS.set(call_errors)
        seed = encounter_seed(meta.seed, scenario.id, planned.run)
        try:
            if remote is not None:
                result = await remote.run(item, k, seed=seed, sink=session.events,
                                          observe=lambda error: _observe_call(check, error))
            else:
                result = await run_item(item, watched, channel, session.events, k=k, seed=seed,
                                        turn_limit=meta.turn_limit, model_name=meta.model,
                                        allow_outside_images=meta.allow_outside_images, patient_model=patient_model)
                if isinstance(channel, RecordingChannel):
                    result.artifacts.update(await channel.finish_encounter(scenario.id, k))
        except Exception as exc:  # a bug or channel failure must not lose the rest of the batch
            return EncounterRecord(scenario_id=scenario.id, k=k, persona=planned.persona, status="error",
                                   recorded_at=time.time(),
                                   error=str(exc) if isinstance(exc, EncounterLost) else f"{type(exc).__name__}: {exc}"
                                   ), call_errors, True
        finally:
            _CALL_ERRORS.reset(token)
        return result, call_errors, True

    def keep(planned: Planned, outcome: ConversationResult | EncounterRecord,
             ran_now: bool) -> asyncio.Task[None] | None:
        """Start writing a conversation that is to be scored to unscored.jsonl (not one that came from there).

        Scoring, with judge calls, can take seconds, and the next conversation of the worker waits for the last
        one's scoring: a run stopped meanwhile (Ctrl-C, a kill) must lose neither.
        """
        if not ran_now or isinstance(outcome, EncounterRecord) or not outcome.ok \
                or outcome.termination == "not_applicable":
            return None
        return asyncio.create_task(session.keep_unscored(UnscoredEncounter(
            scenario_id=planned.item.scenario.id, k=planned.k, persona=planned.persona, result=outcome)))

    async def settle(planned: Planned, outcome: ConversationResult | EncounterRecord,
                     call_errors: list[AgentError], kept: asyncio.Task[None] | None) -> None:
        """Score a finished encounter and record it (or hold it back while the fail-fast check is undecided)."""
        if kept is not None:
            await kept  # its line in unscored.jsonl comes first (a write that failed fails the run, as a record's)
        rec = outcome if isinstance(outcome, EncounterRecord) else await record_for(
            outcome, planned.item.scenario, evaluator_names=evaluator_names, judges=judges, profile=profile,
            failure_judges=failure_judges, persona=planned.persona)
        if (rec.status == "error" and call_errors and check.cause is not None
                and _fatal_cause(call_errors[-1]) == check.cause and check.state != "off"):
            if check.state == "armed":
                held.append(rec)  # recorded if the check disarms, dropped if it trips
            return
        while held and check.state == "off":  # the check is off: what it held back is recorded, in order
            await session.record(held.pop(0))
        await session.record(rec)

    async def worker() -> None:
        # Pipelined: while encounter n+1 talks to the agent, encounter n is scored and its line fsync'd (CPU and
        # disk off the agent's critical path). At most one finished encounter per worker waits for that, and the
        # worker awaits it before it ends (a trip or the end of the plan), so nothing finished is left unrecorded.
        # Each finished conversation is kept in unscored.jsonl at once (``keep``), so a run stopped while one is
        # scored or waits for the last one's scoring loses neither: --resume scores them.
        pending: asyncio.Task[None] | None = None
        kept: asyncio.Task[None] | None = None
        try:
            for planned in plan:  # one shared generator: each encounter is taken by exactly one worker
                if check.state == "tripped":
                    break
                outcome, call_errors, ran_now = await encounter(planned)
                kept = keep(planned, outcome, ran_now)
                if pending is not None:
                    await pending
                pending, kept = asyncio.create_task(settle(planned, outcome, call_errors, kept)), None
            if pending is not None:
                await pending
        finally:
            if pending is not None and not pending.done():  # this worker was cancelled: so is its scoring
                pending.cancel()
                await asyncio.gather(pending, return_exceptions=True)
            if kept is not None:  # a conversation being kept when the worker was cancelled: its write ends first
                await asyncio.gather(kept, return_exceptions=True)
        if check.state == "tripped":
            raise _Tripped

    with _batch_runtime():
        async with session:
            session.started(scenario_ids=[s.scenario.id for s in scenarios], k=meta.k, total=total,
                            planned={s.scenario.id: meta.k * len(scenario_personas(meta.personas, s.scenario))
                                     for s in scenarios} if len(meta.personas) > 1 else None,
                            resumed=bool(records), already_done=finished)
            workers = [asyncio.create_task(worker()) for _ in range(max(0, min(concurrency, total - finished)))]
            try:
                all_ended = False
                try:
                    await asyncio.gather(*workers)
                    all_ended = True  # each worker recorded every conversation it kept (not so after a trip:
                except _Tripped:  # the other workers' are cancelled below, and stay in unscored.jsonl for --resume)
                    tripped = True
                if check.state == "armed" and check.calls:  # the plan ran out first: every call failed the same way
                    check.state, tripped = "tripped", True
                while held and check.state == "off":
                    await session.record(held.pop(0))
                if all_ended and not unscored:  # every conversation kept for scoring has its record now
                    store.drop_unscored()
            finally:
                for t in workers:
                    t.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
                session.cut_short = tripped
    summary = session.summary
    assert summary is not None  # the session summarised on the way out
    if tripped:
        raise EndpointUnusable(_fail_fast_message(check, meta, store.root, session.saved), summary)
    return summary
