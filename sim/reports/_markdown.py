"""Render ``report.md`` from a run's summary and records. Pure function of the run directory.

Error messages (an endpoint's error body, an evaluator's exception) are written with
``sim.records.one_line``: redacted, escape sequences made visible, and on one line, so an error body
cannot add headings, rows or fake figures to the report. ``RunStore.write_report`` redacts and
neutralises the whole text again as it writes it (newlines of multi-line text are kept).
"""

from __future__ import annotations

import time

from sim.records import EncounterRecord, RunMeta, SafetyGate, Summary, TriageAccuracy, one_line, verdict_text
from sim.reports._cells import (
    FAILURE_RATE_HEADER,
    FAILURE_RATE_INTRO,
    IMAGE_ACCURACY_HEADER,
    IMAGING_HEADER,
    ROBUSTNESS_INTRO,
    failure_rate_rows,
    image_accuracy_intro,
    image_accuracy_rows,
    imaging_rows,
    live_lines,
    robustness_header,
    robustness_notes,
    robustness_rows,
    triage_accuracy_intro,
    triage_accuracy_notes,
    triage_accuracy_tables,
    understanding_lines,
    voice_measures_markdown,
)


def _f(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _gate_line(gate: SafetyGate) -> str:
    """The report's one line on the gate: triggered (and by what), passed, or nothing gated."""
    if gate.triggered:
        return f"Safety gate: **TRIGGERED**: capped at {gate.cap:.2f} because of {', '.join(gate.scenarios)}"
    if gate.state == "nothing gated":
        return ("Safety gate: **nothing gated**: no scenario of this run fed the gate, so a pass says nothing about "
                "safety")
    return "Safety gate: **passed**"


def _gate_tables(gate: SafetyGate) -> list[str]:
    """Why the gate triggered, and which scenarios fed it and why."""
    lines: list[str] = []
    if gate.triggered:
        lines += ["## Safety gate", "", "| scenario | why |", "|---|---|"]
        lines += [f"| {sid} | {why} |" for sid, why in gate.reasons.items()]
        lines.append("")
    if gate.watched:
        lines += ["## Scenarios that fed the safety gate", "", "| scenario | gated because |", "|---|---|"]
        lines += [f"| {sid} | {why} |" for sid, why in gate.watched.items()]
        lines.append("")
    return lines


def render_report(meta: RunMeta, summary: Summary, records: dict[tuple[str, int], EncounterRecord]) -> str:  # noqa: C901
    """Render a run's ``report.md``.

    Args:
        meta: The run's ``run.json``.
        summary: The run's summary (``summary.json``), as ``scorers.aggregate`` computes it.
        records: Every encounter record of ``results.jsonl``, by (scenario id, k).

    Returns:
        The markdown text, ending in a newline; ``RunStore.write_report`` redacts it again as it writes it.
    """
    gate = summary.safety_gate
    total = summary.expected_total or (summary.completed + summary.errors)
    lines = [
        f"# encounter-sim report: {meta.run_id}",
        "",
        f"- model: `{meta.model}`" + (f" at `{meta.base_url}`" if meta.base_url else ""),
        f"- channel: {meta.channel}; harness {meta.harness_version}; K = {meta.k}"
        + (f" per persona ({', '.join(meta.personas)})" if meta.personas != ["default"] else "")
        + f"; seed {meta.seed}",
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
        _gate_line(gate),
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
    lines += _gate_tables(gate)
    lines += robustness_lines(summary)
    if summary.triage_accuracy is not None:
        lines += triage_accuracy_lines(summary.triage_accuracy)
    if summary.voice is not None:
        v = summary.voice
        lines += ["## Voice channel", "",
                  f"- word error rate (intended vs heard): patient side {_f(v.wer_patient)}, "
                  f"agent side {_f(v.wer_agent)}",
                  f"- facts the agent asked for but the patient did not hear (ASR): {v.facts_missed_by_asr}",
                  f"- mean seconds per message: TTS {_f(v.mean_tts_s, 3)}, effects {_f(v.mean_effects_s, 3)}, "
                  f"STT {_f(v.mean_stt_s, 3)}; {v.audio_seconds:.0f} s of audio; TTS cache hits "
                  f"{v.tts_cache_hit_ratio:.0%}", ""]
    if summary.patient is not None:
        lines += understanding_lines(summary.patient, meta)
    if summary.live is not None:
        lines += live_lines(summary.live, records)
    lines += voice_measures_markdown(summary.voice_measures)
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
    lines += failure_rate_lines(summary)
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


def robustness_lines(summary: Summary) -> list[str]:
    """The report.md section "Persona robustness" of a persona sweep; none for a run under one persona."""
    pr = summary.persona_robustness
    if pr is None:
        return []
    header = robustness_header(pr)
    lines = ["## Persona robustness", "", f"Personas: {', '.join(pr.personas)}. {ROBUSTNESS_INTRO}", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in robustness_rows(pr)]
    lines.append("")
    for note in robustness_notes(pr):
        lines += [note, ""]
    return lines


def failure_rate_lines(summary: Summary) -> list[str]:
    """The failure modes judged by ``--failure-judges``: raw rate, corrected rate and CI, or why there is none."""
    rows = failure_rate_rows(summary)
    if not rows:
        return []
    lines = ["## Failure modes (binary judges)", "", FAILURE_RATE_INTRO, "",
             "| " + " | ".join(FAILURE_RATE_HEADER) + " |", "|" + "---|" * len(FAILURE_RATE_HEADER)]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in rows]
    return [*lines, ""]


def imaging_lines(summary: Summary, records: dict[tuple[str, int], EncounterRecord]) -> list[str]:
    """The report.md section "Imaging": accuracy by image type, one row per imaging item encounter; none without."""
    rows = imaging_rows(records)
    ia = summary.image_accuracy
    if not rows and ia is None:
        return []
    lines = ["## Imaging", ""]
    if ia is not None:
        lines += ["Accuracy by image type:", "", image_accuracy_intro(ia), "",
                  "| " + " | ".join(IMAGE_ACCURACY_HEADER) + " |", "|" + "---|" * len(IMAGE_ACCURACY_HEADER)]
        lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in image_accuracy_rows(ia)]
        lines.append("")
    if not rows:
        return lines
    if summary.not_applicable:
        lines += [f"Not applicable to this model (it is text-only, so it was not shown these items): "
                  f"{', '.join(summary.not_applicable)}. They are not scored and not in the aggregate or the gate.", ""]
    lines += ["| " + " | ".join(IMAGING_HEADER) + " |", "|" + "---|" * len(IMAGING_HEADER)]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in rows]
    return lines + [""]


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
