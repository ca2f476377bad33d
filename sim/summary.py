"""The summary of a run: recomputed from every record in the run directory, written with both reports.

``summarise`` is the one place a run's summary.json, report.md and report.html are made, whatever made the run (a
batch, a live call, ``encsim report``); ``sim.session.RunSession`` calls it on the way out. It aggregates the
score cards (``scorers.aggregate``), the judges' summary, the failure-mode rates of ``--failure-judges``
(``failure_rates``), the errors by reason (``error_reasons``), the headline (``headline``), the voice, live-call
and patient-understanding figures of the run's results (``voice_metrics``, ``live_metrics``,
``understanding_metrics``), and the calls' clinical voice measures (``call_measures``: ``scorers.voice_measures``
per call, pooled with the live block's latencies). ``summarise_no_call`` is a live run in which nobody called: the
error is counted, with no aggregate and no gate verdict.
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path

from scenarios import LoadedScenario
from scorers import (
    aggregate,
    bootstrap_ci,
    disagreements,
    failure_rate,
    judge_path_score,
    persona_robustness,
    summarise_judges,
    voice_measures,
    voice_summary,
)
from sim.records import (
    VALIDATION_FILE,
    ConfigError,
    ConversationResult,
    EncounterRecord,
    EvaluatorResult,
    FailureRate,
    Headline,
    JudgeValidationRecord,
    LiveMetrics,
    RunMeta,
    ScoreCard,
    Summary,
    UnderstandingMetrics,
    VoiceMetrics,
    VoiceSummary,
    load_judge_validation,
    percentile,
    planned_encounters,
)
from sim.reports import render_report, write_html_report
from sim.store import RunStore

FAILURE_PREFIX = "failure:"  # the evaluators of the binary failure-mode judges (--failure-judges)


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
    summary.voice_measures = call_measures(records, scenarios, meta, summary.live)
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


def call_measures(records: dict[tuple[str, int], EncounterRecord], scenarios: list[LoadedScenario], meta: RunMeta,
                  live: LiveMetrics | None) -> VoiceSummary | None:
    """The clinical voice measures of a run's calls, each call's and pooled; None for a run without calls.

    A call is an encounter with interaction metrics, or any encounter with turns of a ``call`` or ``live`` run; the
    response latency pooled is ``live``'s (``live_metrics``), not computed again.
    """
    by_id = {s.scenario.id: s.scenario for s in scenarios}
    calls = meta.channel in ("call", "live")
    measures = [voice_measures(r.result, by_id[sid]) for (sid, _), r in sorted(records.items())
                if r.result is not None and sid in by_id and r.result.turns and (r.result.interaction or calls)]
    return voice_summary(measures, live)


def summarise_no_call(store: RunStore, meta: RunMeta, rec: EncounterRecord) -> Summary:
    """summary.json / report.md / report.html of a live run without a call.

    The error is counted, but there is no aggregate (not a 0) and no safety-gate verdict, because nothing was
    said that could be judged.
    """
    records, _ = store.load_records()
    summary = aggregate([], {}, {(rec.scenario_id, rec.k): rec.error or "no caller joined"}, expected_total=1)
    summary.error_reasons = error_reasons([rec.error or "no caller joined"])
    summary.headline = headline(summary, [])
    store.write_summary(summary)
    store.write_report(render_report(meta, summary, records))
    write_html_report(store.root, meta, summary, records)
    return summary
