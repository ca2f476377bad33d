"""The cells that report.md and report.html both render, so the two reports always agree.

Each function turns typed run data (``sim.records.TriageAccuracy``, ``sim.store.EncounterRecord``, the
``Summary.patient``, ``Summary.live`` and ``Summary.voice_measures`` blocks) into plain strings: report.md writes them
as markdown lines and table rows, report.html escapes them into elements. The blocks are typed
(``sim.records.UnderstandingMetrics``, ``LiveMetrics``, ``VoiceSummary``) and read field by field.
"""

from __future__ import annotations

from collections.abc import Mapping

from sim.records import (
    EncounterRecord,
    ImageAccuracy,
    LiveMetrics,
    PersonaRobustness,
    RunMeta,
    Summary,
    TriageAccuracy,
    UnderstandingMetrics,
    VoiceMeasures,
    VoiceSummary,
    one_line,
)


def _f(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0%}"


def understanding_lines(patient: UnderstandingMetrics, meta: RunMeta) -> list[str]:
    """Which layer of the patient's understanding revealed the facts, and how assessments were written."""
    by, share = patient.by_layer, patient.share
    layers = ", ".join(f"{name} {by.get(name, 0)} ({_pct(share.get(name))})" for name in ("trigger", "intent", "model"))
    lines = ["## How the patient understood the agent", "",
             f"- facts revealed: {patient.facts_revealed}; by layer: {layers}"
             + ("" if meta.patient_model else " (no --patient-model)"),
             "- assessments by form: "
             + (", ".join(f"{k} {v}" for k, v in sorted(patient.assessment_forms.items())) or "none")]
    if patient.patient_model_warnings:
        lines.append(f"- patient-model warnings (the deterministic layers decided alone): "
                     f"{patient.patient_model_warnings}")
    return [*lines, ""]


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


def live_lines(live: LiveMetrics, records: Mapping[tuple[str, int], EncounterRecord]) -> list[str]:
    """The live calls' latencies, overlaps and silences, then the per-turn timeline of every call."""
    lines = ["## Live call", "",
             f"- calls: {live.calls}; patient voice-to-voice latency (end of agent speech to first patient "
             f"audio) p50 {_f(live.patient_latency_p50_s, 3)} s, p95 {_f(live.patient_latency_p95_s, 3)} s "
             f"over {live.patient_replies} replies",
             f"- agent response latency (end of patient speech to first agent audio) p50 "
             f"{_f(live.agent_latency_p50_s, 3)} s, p95 {_f(live.agent_latency_p95_s, 3)} s "
             f"over {live.agent_replies} replies",
             f"- overlaps {live.overlaps} ({live.overlap_s:.1f} s), interruptions (a side stopped talking) "
             f"{live.interruptions}, silences of 2 s or more {live.long_silences} (longest "
             f"{live.max_silence_s:.1f} s)", "",
             "| " + " | ".join(LIVE_HEADER) + " |", "|" + "---|" * len(LIVE_HEADER)]
    lines += ["| " + " | ".join(cell.replace("|", "/") for cell in row) + " |" for row in live_rows(records)]
    return lines + [""]


def voice_measure_lines(vm: VoiceSummary) -> list[str]:
    """The calls' clinical voice measures, pooled: response latency, time to safety advice, speakability, barge-ins."""
    advice = (f"given in {vm.advice_given} of {vm.red_flag_calls} call(s) in which a red flag was revealed "
              f"(missing in {vm.advice_missing}); after p50 {_f(vm.advice_p50_s)} s, p95 {_f(vm.advice_p95_s)} s, "
              f"max {_f(vm.advice_max_s)} s; median {_f(vm.advice_turns_p50, 1)} agent turn(s)"
              if vm.red_flag_calls else "no call revealed a red-flag fact")
    if vm.advice_before_reveal:
        advice += f"; {vm.advice_before_reveal} call(s) had an emergency instruction before the reveal"
    return [
        "## Voice measures", "",
        f"- calls: {vm.calls}; agent response latency (end of patient speech to first agent audio) p50 "
        f"{_f(vm.agent_latency_p50_s, 3)} s, p95 {_f(vm.agent_latency_p95_s, 3)} s over {vm.agent_replies} replies",
        f"- time to safety advice (end of the first red-flag reveal to the start of the agent's first emergency "
        f"instruction; conditional safety-netting does not count): {advice}",
        f"- speakability (share of agent turns without markup, URL, emoji or monologue): {_f(vm.speakability)}; "
        f"{vm.flagged_turns} of {vm.agent_turns} turns flagged: written markdown {vm.markdown}, markup read aloud "
        f"{vm.spoken_markup}, URL marks {vm.urls}, emoji {vm.emoji}, monologues {vm.monologues}",
        f"- patient barge-ins {vm.patient_barge_ins}; with a red flag {vm.red_flag_barge_ins} (agent stopped "
        f"{vm.barge_in_agent_stopped}, its next turn addressed it {vm.barge_in_addressed})", ""]


VOICE_HEADER = ["call", "agent latency p50 / p95 s", "red flag", "safety advice", "speakability",
                "markdown / read aloud / URL / emoji / monologues", "red-flag barge-ins (stopped, addressed)"]


def _advice_cell(m: VoiceMeasures) -> tuple[str, str]:
    a = m.safety_advice
    if a is None:
        return "none in scenario", ""
    if a.status == "not_revealed":
        return "not revealed", ""
    after = (f"{_f(a.seconds)} s, {a.agent_turns} turn(s): {a.phrase}" if a.status == "given" else "missing")
    return a.fact or "", after + ("; also before the reveal" if a.advised_before_reveal else "")


def voice_measure_rows(vm: VoiceSummary) -> list[list[str]]:
    """One row per call: its latency, red flag and advice, speakability and red-flag barge-ins."""
    rows = []
    for m in vm.per_call:
        s = m.speakability
        flag, advice = _advice_cell(m)
        barge = "; ".join(f"{b.at_s:.1f} s {', '.join(b.facts)}: "
                          f"{'?' if b.agent_stopped is None else 'yes' if b.agent_stopped else 'no'}, "
                          f"{'?' if b.addressed is None else 'yes' if b.addressed else 'no'}"
                          for b in m.red_flag_barge_ins)
        rows.append([f"{m.scenario_id} k={m.k}", f"{_f(m.agent_latency_p50_s)} / {_f(m.agent_latency_p95_s)}",
                     flag, advice, f"{_f(s.score)} ({s.flagged_turns}/{s.agent_turns} flagged)",
                     f"{s.markdown} / {s.spoken_markup} / {s.urls} / {s.emoji} / {s.monologues}",
                     barge or "none"])
    return rows


def voice_measures_markdown(vm: VoiceSummary | None) -> list[str]:
    """report.md's "Voice measures" section: the pooled lines, then one table row per call; none without calls."""
    if vm is None:
        return []
    lines = [*voice_measure_lines(vm), "| " + " | ".join(VOICE_HEADER) + " |", "|" + "---|" * len(VOICE_HEADER)]
    lines += ["| " + " | ".join(one_line(cell).replace("|", "/") for cell in row) + " |"
              for row in voice_measure_rows(vm)]
    return [*lines, ""]


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
IMAGE_ACCURACY_HEADER = ["image type", "items", "multiple choice", "95% CI", "encounters", "top-1", "95% CI", "top-3",
                         "95% CI"]


def image_accuracy_intro(ia: ImageAccuracy) -> str:
    """What the image accuracy table counts, in one paragraph."""
    left = []
    if ia.not_applicable:
        left.append(f"{ia.not_applicable} item encounter(s) not applicable to this text-only model are not counted")
    if ia.errors:
        left.append(f"{ia.errors} that ended in an error are not scored")
    text_only = ia.overall.text_only
    return ("Accuracy on images, as AgentClinic reports its NEJM image cases: the multiple-choice items answered "
            "right, and the encounters with an image whose expected diagnosis the agent named first (top-1) or "
            "within its first three (top-3), by image type (a case of two types counts in both)"
            + (f"; {text_only} item(s) were asked without their image (image not available)" if text_only else "")
            + (f"; {'; '.join(left)}" if left else "") + f"; {ia.ci_method()}.")


def image_accuracy_rows(ia: ImageAccuracy) -> list[list[str]]:
    """The overall row, then one per image type: items and their accuracy, encounters and their top-1 / top-3."""
    rows = []
    for t in [ia.overall, *ia.by_type]:
        items = f"{t.choice.count}/{t.choice.n}" + (f" ({t.text_only} without image)" if t.text_only else "")
        rows.append([t.image_type, items, _f(t.choice.value), _ci(t.choice.ci95), str(t.top1.n), _f(t.top1.value),
                     _ci(t.top1.ci95), _f(t.top3.value), _ci(t.top3.ci95)])
    return rows


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


FAILURE_RATE_INTRO = ("Raw: the share of judged encounters the judge said show the mode. Corrected: Rogan-Gladen, for "
                      "the judge's TPR and TNR on the test split of its validation, with a bootstrap 95% CI (test "
                      "labels and this run resampled).")
FAILURE_RATE_HEADER = ["failure mode", "judged", "no verdict", "raw", "corrected (95% CI)", "TPR / TNR", "status"]


def failure_rate_rows(summary: Summary) -> list[list[str]]:
    """One row per failure mode judged by ``--failure-judges`` (``FAILURE_RATE_HEADER``); none without them."""
    rows = []
    for mode, r in summary.failure_rates.items():
        corrected = (_f(r.corrected) + (f" ({r.ci95[0]:.2f}-{r.ci95[1]:.2f})" if r.ci95 else "")
                     if r.corrected is not None else "-")
        measured = f"{_f(r.tpr)} / {_f(r.tnr)}" if r.tpr is not None or r.tnr is not None else "-"
        status = r.status + (f": {one_line(r.note)}" if r.status != "corrected" and r.note else "")
        rows.append([mode, str(r.judged), str(r.no_verdict), _f(r.raw), corrected, measured, status])
    return rows


ROBUSTNESS_INTRO = ("Each scenario ran K times under each persona, as separate encounters. Per persona: the mean "
                    "composite (an errored encounter counts 0) with its bootstrap 95% CI; mean across = the mean of "
                    "the persona means; worst = the persona with the lowest mean; drop = the default persona's mean "
                    "minus the worst persona's. CIs resample encounters within each (scenario, persona); overall, a "
                    "persona's mean is the plain mean of its scenario means.")


def _ci_text(value: float | None, ci: list[float] | None) -> str:
    """"0.82 [0.75, 0.90]", "0.82" without a CI, "n/a" without a value."""
    if value is None:
        return "n/a"
    return f"{value:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def robustness_header(pr: PersonaRobustness) -> list[str]:
    """The robustness table's header: scenario, one column per persona, mean across, worst persona, drop."""
    return ["scenario", *pr.personas, "mean across", "worst persona", "drop from default"]


def robustness_rows(pr: PersonaRobustness) -> list[list[str]]:
    """One row per varied scenario, then ``overall``: each persona's mean [CI], mean across, worst and drop."""
    rows = []
    for row in [*pr.scenarios, pr.overall]:
        cells = {p.persona: _ci_text(p.mean, p.ci95) for p in row.personas}
        worst = f"{row.worst_persona} {_ci_text(row.worst, row.worst_ci95)}" if row.worst_persona else "n/a"
        rows.append([f"**{row.id}**" if row is pr.overall else row.id, *(cells.get(p, "n/a") for p in pr.personas),
                     _ci_text(row.mean, row.mean_ci95), worst, row.drop_text()])
    return rows


def robustness_notes(pr: PersonaRobustness) -> list[str]:
    """What the table leaves out: scenarios without a patient to vary, and a sweep without the default persona."""
    notes = []
    if not pr.has_default:
        notes.append("The sweep has no `default` persona, so there is no drop from default: n/a.")
    if pr.not_varied:
        notes.append("Run under the default persona only (replays and imaging items have no patient to vary), so "
                     "not in these figures: " + ", ".join(pr.not_varied) + ".")
    return notes


def robustness_cli_lines(pr: PersonaRobustness) -> list[str]:
    """The terminal's lines: per persona overall, then mean across, worst and drop (with CIs)."""
    o = pr.overall
    per = ", ".join(f"{p.persona} {_ci_text(p.mean, p.ci95)}" for p in o.personas)
    worst = f"{o.worst_persona} {_ci_text(o.worst, o.worst_ci95)}" if o.worst_persona else "n/a"
    return [f"persona robustness ({len(pr.scenarios)} scenarios): {per}",
            f"persona robustness: mean across personas {_ci_text(o.mean, o.mean_ci95)}; worst persona {worst}; "
            f"drop from default {o.drop_text()}"]
