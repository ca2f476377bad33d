"""Render ``report.md`` from a run's summary and records. Pure function of the run directory.

Error messages (an endpoint's error body, an evaluator's exception) are written with
``sim.records.one_line``: redacted, escape sequences made visible, and on one line, so an error body
cannot add headings, rows or fake figures to the report. ``RunStore.write_report`` redacts and
neutralises the whole text again as it writes it (newlines of multi-line text are kept).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from scorers import Summary, TriageAccuracy, verdict_text
from sim.records import EncounterRecord, RunMeta, one_line


def _f(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def understanding_lines(patient: dict[str, Any], meta: RunMeta) -> list[str]:
    """Which layer of the patient's understanding revealed the facts, and how assessments were written."""
    total = patient.get("facts_revealed", 0)
    share = patient.get("share", {})
    by = patient.get("by_layer", {})
    layers = ", ".join(f"{name} {by.get(name, 0)} ({_pct(share.get(name))})" for name in ("trigger", "intent", "model"))
    forms = patient.get("assessment_forms") or {}
    lines = ["## How the patient understood the agent", "",
             f"- facts revealed: {total}; by layer: {layers}"
             + ("" if meta.patient_model else " (no --patient-model)"),
             "- assessments by form: " + (", ".join(f"{k} {v}" for k, v in sorted(forms.items())) or "none")]
    if patient.get("patient_model_warnings"):
        lines.append(f"- patient-model warnings (the deterministic layers decided alone): "
                     f"{patient['patient_model_warnings']}")
    return [*lines, ""]


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0%}"


def render_report(meta: RunMeta, summary: Summary, records: dict[tuple[str, int], EncounterRecord]) -> str:
    gate = summary.safety_gate
    total = summary.expected_total or (summary.completed + summary.errors)
    lines = [
        f"# encounter-sim report: {meta.run_id}",
        "",
        f"- model: `{meta.model}`" + (f" at `{meta.base_url}`" if meta.base_url else ""),
        f"- channel: {meta.channel}; harness {meta.harness_version}; K = {meta.k}; seed {meta.seed}",
        f"- started {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(meta.created_at))}",
        f"- encounters: {summary.completed} scored, {summary.errors} errors, of {total} planned",
        "",
        "## Headline",
        "",
        (f"**Aggregate: {_f(summary.aggregate, 3)}**"
         + (f" (capped by the safety gate; uncapped {_f(summary.aggregate_uncapped, 3)})"
            if gate.triggered and summary.aggregate != summary.aggregate_uncapped else "")
         + (f"; {summary.errors} errored encounter(s) count as 0 (score without errors: "
            f"{_f(summary.aggregate_without_errors, 3)})" if summary.errors else ""))
        if summary.headline is None or summary.headline.name == "aggregate"
        else f"**{summary.headline.text()}** ({summary.headline.note})"
        + ("; per axis: " + ", ".join(f"{a} {_f(v)}" for a, v in sorted(summary.judge.axis_scores.items()))
           if summary.judge is not None and summary.judge.axis_scores else "")
        + ("; per theme: " + ", ".join(f"{t} {_f(v)}" for t, v in sorted(summary.judge.theme_scores.items()))
           if summary.judge is not None and summary.judge.theme_scores and summary.headline.value is not None
           else ""),
        "",
        f"Safety gate: **{'TRIGGERED' if gate.triggered else 'passed'}**"
        + (f": capped at {gate.cap:.2f} because of {', '.join(gate.scenarios)}" if gate.triggered else ""),
        "",
        f"Triage QWK across {summary.qwk_pairs} encounters with a parsed level: {_f(summary.qwk, 3)} "
        "(against each scenario's best label)",
        "",
        *([f"Against the acceptable sets: triage {verdict_text(summary.verdicts['triage'])}; escalation "
           f"{verdict_text(summary.verdicts.get('escalation', {}))} (acceptable = inside the scenario's acceptable "
           "set, not its best label)", ""] if summary.verdicts.get("triage") or summary.verdicts.get("escalation")
          else []),
        "Component means: " + ", ".join(f"{k} {_f(v)}" for k, v in summary.components.items()),
        "",
    ]
    if gate.triggered:
        lines += ["## Safety gate", "", "| scenario | why |", "|---|---|"]
        lines += [f"| {sid} | {why} |" for sid, why in gate.reasons.items()]
        lines.append("")
    if summary.triage_accuracy is not None:
        lines += triage_accuracy_lines(summary.triage_accuracy)
    if summary.voice:
        v = summary.voice
        lines += ["## Voice channel", "",
                  f"- word error rate (intended vs heard): patient side {_f(v.get('wer_patient'))}, "
                  f"agent side {_f(v.get('wer_agent'))}",
                  f"- facts the agent asked for but the patient did not hear (ASR): {int(v['facts_missed_by_asr'])}",
                  f"- mean seconds per message: TTS {_f(v['mean_tts_s'], 3)}, effects {_f(v['mean_effects_s'], 3)}, "
                  f"STT {_f(v['mean_stt_s'], 3)}; {v['audio_seconds']:.0f} s of audio; TTS cache hits "
                  f"{v['tts_cache_hit_ratio']:.0%}", ""]
    if summary.patient:
        lines += understanding_lines(summary.patient, meta)
    if summary.live:
        lines += live_lines(summary.live, records)
    lines += imaging_lines(summary, records)
    if summary.profile:
        counts = ", ".join(f"{summary.status_counts.get(k, 0)} {k}" for k in ("pass", "warn", "fail"))
        lines += ["## Profile and evaluators", "",
                  f"Profile `{summary.profile}`: combined score {_f(summary.combined, 3)}"
                  + (" (capped by the safety gate)" if gate.triggered else "") + f"; encounters: {counts} "
                  "(pass >= 0.80, warn 0.60-0.79, fail < 0.60 or a fail condition).", ""]
        if summary.evaluators:
            lines += ["| evaluator | applicable | mean | failed | findings |", "|---|---|---|---|---|"]
            for name, e in summary.evaluators.items():
                found = ", ".join(f"{n} {sev}" for sev, n in e.findings.items()) or "none"
                lines.append(f"| {name} | {e.applicable} | {_f(e.mean)} | {e.failed} | {found} |")
            lines.append("")
    judge = summary.judge
    if judge is not None:
        lines += ["## Judge path", "",
                  f"- judges: {', '.join(judge.judges) or 'none'}"
                  + (f"; excluded: {', '.join(f'{n} ({why})' for n, why in judge.excluded.items())}"
                     if judge.excluded else ""),
                  *[f"- warning: {w}" for w in judge.warnings],
                  f"- encounters judged: {judge.encounters_judged}; no-verdict judgements: {judge.no_verdicts}",
                  f"- rubric score (HealthBench formula, clipped at the aggregate): {_f(judge.rubric_score, 3)}",
                  f"- clinician trust (0-1): {_f(judge.trust_score, 3)}"
                  + ("; " + ", ".join(f"{c} {_f(v)}" for c, v in judge.trust_categories.items())
                     if judge.trust_categories else ""),
                  f"- inter-judge agreement (Fleiss' kappa over {judge.kappa_items} items): "
                  f"{_f(judge.fleiss_kappa, 3)}"]
        if judge.axis_scores:
            lines.append("- per axis: " + ", ".join(f"{a} {_f(v)}" for a, v in sorted(judge.axis_scores.items())))
        lines.append("")
    if summary.disagreements:
        lines += ["## Deterministic vs judge disagreements", "",
                  "| scenario | k | deterministic | judge | judge - det. |", "|---|---|---|---|---|"]
        lines += [f"| {d.scenario_id} | {d.k} | {_f(d.deterministic)} | {_f(d.judge)} | {d.diff:+.2f} |"
                  for d in summary.disagreements]
        lines.append("")
    lines += ["## Suites", "", "| suite | weight | scenarios | mean |", "|---|---|---|---|"]
    lines += [f"| {s.suite} | {s.weight:.1f} | {s.scenarios} | {_f(s.mean)} |" for s in summary.suites]
    lines += ["", "## Scenarios", "",
              f"pass = composite >= {summary.pass_threshold} with no safety failure; worst@k and pass^k at k = n "
              "are in summary.json for every k.", "",
              "| scenario | suite | n | errors | mean | worst | std | 95% CI | esc. safety | pass | worst@2 | pass^2 |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in summary.scenarios:
        ci = f"{_f(r.ci95[0])}-{_f(r.ci95[1])}" if r.ci95 else "n/a"
        lines.append(f"| {r.id} | {r.suite} | {r.k} | {r.errors} | {_f(r.mean)} | {_f(r.worst)} | {_f(r.std)} | {ci} | "
                     f"{_f(r.escalation_safety)} | {r.pass_count}/{r.k} | {_f(r.worst_at_k.get('2'))} | "
                     f"{_f(r.pass_hat_k.get('2'))} |")
    lines += ["", "## Worst encounter per scenario", ""]
    for r in summary.scenarios:
        if r.worst_k_index is None:
            continue
        rec = records.get((r.id, r.worst_k_index))
        if rec is None or rec.score is None or rec.result is None:
            continue
        card, res = rec.score, rec.result
        issues = [*card.safety_failures, *card.notes]
        if card.information and card.information.critical_missed:
            issues.append("missed critical facts: " + ", ".join(card.information.critical_missed))
        if card.triage and card.triage.reason:
            issues.append("triage: " + card.triage.reason)
        parts = [f"composite {_f(card.composite)}"]
        if card.triage:
            parts.append(f"triage {card.triage.describe()}")
        if card.escalation:
            parts.append(f"escalation {card.escalation.describe()}")
        parts.append(f"{res.agent_turns}/{res.turn_limit} turns")
        if card.combined is not None:
            parts.append(f"status {card.combined.status}")
            issues += card.combined.fail_reasons
        lines.append(f"- **{r.id}** k={r.worst_k_index}: " + "; ".join(parts + issues))
    if summary.evaluator_errors:
        lines += ["", "## Evaluator errors (those encounters scored without the evaluator)", ""]
        lines += [f"- {e.scenario_id} k={e.k}: {e.evaluator}: {one_line(e.error)}"
                  for e in summary.evaluator_errors[:50]]
        if len(summary.evaluator_errors) > 50:
            lines.append(f"- ... and {len(summary.evaluator_errors) - 50} more in summary.json")
    errs = [rec for rec in records.values() if rec.status == "error"]
    if errs:
        lines += ["", "## Errors (not scored)", ""]
        lines += [f"- {rec.scenario_id} k={rec.k}: {one_line(rec.error or 'error')}" for rec in errs[:50]]
        if len(errs) > 50:
            lines.append(f"- ... and {len(errs) - 50} more in results.jsonl")
    return "\n".join(lines) + "\n"


def live_rows(records: Mapping[tuple[str, int], EncounterRecord]) -> list[list[str]]:
    """Per-turn timeline rows of every live call: who spoke when, and how long the reply took."""
    rows = []
    for (sid, k), rec in sorted(records.items()):
        if rec.result is None or not rec.result.interaction:
            continue
        for t in rec.result.turns:
            c = t.channel
            rows.append([f"{sid} k={k}", str(t.index), t.speaker, _f(c.get("speech_start_s"), 2),
                         _f(c.get("speech_end_s"), 2), _f(c.get("latency_s"), 3),
                         ", ".join(t.revealed) or "", "; ".join(t.warnings)])
    return rows


LIVE_HEADER = ["call", "#", "speaker", "start s", "end s", "latency s", "facts revealed", "notes"]


def live_lines(live: dict[str, Any], records: dict[tuple[str, int], EncounterRecord]) -> list[str]:
    lines = ["## Live call", "",
             f"- calls: {live['calls']}; patient voice-to-voice latency (end of agent speech to first patient "
             f"audio) p50 {_f(live.get('patient_latency_p50_s'), 3)} s, "
             f"p95 {_f(live.get('patient_latency_p95_s'), 3)} s "
             f"over {live.get('patient_replies', 0)} replies",
             f"- agent response latency (end of patient speech to first agent audio) p50 "
             f"{_f(live.get('agent_latency_p50_s'), 3)} s, p95 {_f(live.get('agent_latency_p95_s'), 3)} s "
             f"over {live.get('agent_replies', 0)} replies",
             f"- overlaps {live['overlaps']} ({live['overlap_s']:.1f} s), interruptions (a side stopped talking) "
             f"{live['interruptions']}, silences of 2 s or more {live['long_silences']} (longest "
             f"{live['max_silence_s']:.1f} s)", "",
             "| " + " | ".join(LIVE_HEADER) + " |", "|" + "---|" * len(LIVE_HEADER)]
    lines += ["| " + " | ".join(cell.replace("|", "/") for cell in row) + " |" for row in live_rows(records)]
    return lines + [""]


def imaging_rows(records: Mapping[tuple[str, int], EncounterRecord]) -> list[list[str]]:
    """One row per imaging item encounter: what was asked, what the model answered, how it scored."""
    rows = []
    for (sid, k), rec in sorted(records.items()):
        img = rec.score.imaging if rec.score is not None else None
        if rec.status == "not_applicable":
            rows.append([f"{sid} k={k}", "not applicable (text-only model)", "", "", "", ""])
        elif img is not None:
            if img.answer_type == "multiple_choice":
                got = f"answer {img.choice or 'none'} ({'right' if img.correct else 'wrong'})"
            elif img.answer_type == "findings":
                got = (f"F1 {_f(img.f1)}; missed {', '.join(img.missed) or 'none'}; "
                       f"extra {', '.join(img.extra) or 'none'}")
            else:
                got = f"recall {_f(img.recall)}; missed {', '.join(img.missed) or 'none'}"
            rows.append([f"{sid} k={k}", img.answer_type, got, img.escalation or "none",
                         ", ".join(img.critical_missed) or "", _f(rec.score.composite if rec.score else None)])
    return rows


IMAGING_HEADER = ["item", "answer type", "result", "escalation", "critical missed", "composite"]


def imaging_lines(summary: Summary, records: dict[tuple[str, int], EncounterRecord]) -> list[str]:
    rows = imaging_rows(records)
    if not rows:
        return []
    lines = ["## Imaging", ""]
    if summary.not_applicable:
        lines += [f"Not applicable to this model (it is text-only, so it was not shown these items): "
                  f"{', '.join(summary.not_applicable)}. They are not scored and not in the aggregate or the gate.", ""]
    lines += ["| " + " | ".join(IMAGING_HEADER) + " |", "|" + "---|" * len(IMAGING_HEADER)]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in rows]
    return lines + [""]


TRIAGE_FIGURES = (
    ("exact", "exact (given = best label)"),
    ("acceptable", "acceptable (given in the acceptable set)"),
    ("under", "under-triage (less urgent than the best label)"),
    ("over", "over-triage (more urgent than the best label)"),
    ("under_acceptable", "under-triage below the acceptable set (safety)"),
    ("over_acceptable", "over-triage above the acceptable set"),
    ("none", "no escalation given or unparsed"),
    ("unsafe", "unsafe (below the acceptable set, or none given)"),
)
FIGURE_HEADER = ["figure", "value", "95% CI", "encounters"]
CLASS_HEADER = ["best label", "n", "exact", "95% CI", "acceptable", "95% CI", "below the acceptable set"]


def _ci(ci: list[float] | None) -> str:
    return "n/a" if not ci else f"{ci[0]:.2f}-{ci[1]:.2f}"


def triage_accuracy_intro(ta: TriageAccuracy) -> str:
    """Who is counted and how the CIs were computed, in one sentence."""
    left = []
    if ta.errors:
        left.append(f"{ta.errors} ended in an error and are not scored")
    if ta.not_applicable:
        left.append(f"{ta.not_applicable} not applicable to this model are not counted")
    return (f"Escalation advice against each scenario's labels, as symptom-checker studies report triage "
            f"(Semigran et al., BMJ 2015): {ta.scored} of {ta.encounters} encounters scored"
            + (f" ({'; '.join(left)})" if left else "")
            + f", over the scenarios with an escalation target; {ta.ci_method()}.")


def triage_accuracy_tables(ta: TriageAccuracy) -> list[tuple[str, list[str], list[list[str]]]]:
    """(caption, header, rows) of each table: figures, per class, confusion matrix, diagnosis.

    report.md and report.html render the same cells.
    """
    figures = [[label, _f(getattr(ta, name).value), _ci(getattr(ta, name).ci95),
                f"{getattr(ta, name).count}/{getattr(ta, name).n}"] for name, label in TRIAGE_FIGURES]
    classes = [[cat, str(c.n), _f(c.exact.value), _ci(c.exact.ci95), _f(c.acceptable.value), _ci(c.acceptable.ci95),
                _f(c.under_acceptable.value)] for cat, c in ta.per_class.items()]
    columns = list(next(iter(ta.confusion.values()), {}))
    confusion = [[best, *(str(row.get(col, 0)) for col in columns)] for best, row in ta.confusion.items()]
    given = [c if c != "none" else "none/unparsed" for c in columns]
    tables = [("Figures", FIGURE_HEADER, figures),
              ("Per urgency class (the scenario's best label)", CLASS_HEADER, classes),
              ("Confusion matrix (rows: best label; columns: escalation given)", ["best label", *given], confusion)]
    dx = ta.diagnosis
    if dx is not None:
        shown = [("top-1 diagnosis", dx.top1), ("top-3 diagnosis", dx.top3)]
        if dx.judge_top1 is not None and dx.judge_top3 is not None:
            shown += [("top-1 diagnosis (judge)", dx.judge_top1), ("top-3 diagnosis (judge)", dx.judge_top3)]
        rows = [[label, _f(r.value), _ci(r.ci95), f"{r.count}/{r.n}"] for label, r in shown]
        tables.append(("Diagnosis (scenarios with an expected diagnosis)", FIGURE_HEADER, rows))
    return tables


def triage_accuracy_notes(ta: TriageAccuracy) -> list[str]:
    """The lines under the tables: how diagnoses were matched, and what was left out."""
    dx = ta.diagnosis
    if dx is None:
        return []
    notes = [f"Diagnoses matched by the {dx.method}."]
    if dx.judge:
        notes.append(f"Judge rows: the jury said which of the first three diagnoses names the expected one "
                     f"(another name or a more specific form counts); {dx.judge_n} of {dx.n} encounters got a "
                     "verdict.")
    else:
        notes.append("Run with --judge for the judge path (a jury decides whether a diagnosis names the expected "
                     "one under another name).")
    if dx.imaging_excluded:
        notes.append(f"{dx.imaging_excluded} imaging encounter(s) with an expected diagnosis are scored on "
                     "findings, not a differential, and are not in the diagnosis figures.")
    return notes


def triage_accuracy_lines(ta: TriageAccuracy) -> list[str]:
    """The report.md section "Triage accuracy"."""
    lines = ["## Triage accuracy", "", triage_accuracy_intro(ta), ""]
    if ta.scored == 0:
        return [*lines, "No encounter with an escalation target was scored.", ""]
    for caption, header, rows in triage_accuracy_tables(ta):
        lines += [f"{caption}:", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in rows]
        lines.append("")
    for note in triage_accuracy_notes(ta):
        lines += [note, ""]
    return lines
