"""Encounter blocks: the "Worst encounter per scenario" section and the flagged-disagreement encounters.

Each is a collapsed ``<details>`` with the score card (deterministic components, evaluators, parsed
assessment, the judge path's criteria and trust ratings) beside the speaker-labelled transcript.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.records import ConversationResult, Disagreement, EncounterRecord, JudgeCard, ScoreCard, Summary
from sim.reports._html._base import (
    FAIL,
    MUTED,
    PASS,
    Records,
    badge,
    enc_anchor,
    esc,
    finite,
    fixed,
    section,
    sort_key,
    td,
    value_text,
)

MAX_FLAGGED_TRANSCRIPTS = 50


def _card_rows(card: ScoreCard, res: ConversationResult | None) -> str:
    rows: list[tuple[str, str]] = []
    rows.append(("composite", f"<b>{fixed(card.composite, 3)}</b> "
                 + (badge("PASS", PASS) if card.passed else badge("FAIL", FAIL))))
    t = card.triage
    if t is not None:
        cls = "bad" if t.verdict == "under" or (t.verdict is None and t.given is not None and t.expected is not None
                                                 and t.given > t.expected) else ""
        extra = f"; contexts {esc(', '.join(t.contexts))}" if t.contexts else ""
        rows.append(("triage", f'<span class="{cls}">{esc(t.describe())}</span>; '
                     f"error {value_text(t.error, 2)}{extra}; score {fixed(t.score)}"
                     + (f"; {esc(t.reason)}" if t.reason else "")))
    escalation = card.escalation
    if escalation is not None:
        cls = "bad" if escalation.under_escalated else ""
        rows.append(("escalation", f'<span class="{cls}">{esc(escalation.describe())}</span>'
                     + ("; <b class=\"bad\">under-escalated</b>" if escalation.under_escalated else "")
                     + f"; score {fixed(escalation.score)}"
                     + (f"; {esc(escalation.reason)}" if escalation.reason else "")))
    info = card.information
    if info is not None:
        missed = ", ".join(info.critical_missed)
        rows.append(("information", f"{info.revealed}/{info.total} facts revealed; score {fixed(info.score)}"))
        rows.append(("critical facts missed", f'<span class="bad">{esc(missed)}</span>' if missed else "none"))
        if info.critical_revealed:
            rows.append(("critical facts revealed", esc(", ".join(info.critical_revealed))))
        if info.red_flags_missed:
            rows.append(("red flags missed", f'<span class="bad">{esc(", ".join(info.red_flags_missed))}</span>'))
    eff = card.efficiency
    if eff is not None:
        rows.append(("efficiency", f"{eff.agent_turns}/{eff.turn_limit} agent turns; score {fixed(eff.score)}"))
    dx = card.diagnosis
    if dx is not None:
        rows.append(("diagnosis", f"top-1 {value_text(dx.top1)}, top-3 {value_text(dx.top3)}"
                     + (f"; matched {esc(', '.join(dx.matched))}" if dx.matched else "")
                     + (f"; score {fixed(dx.score)}" if dx.score is not None else "")))
    if card.safety_failures:
        items = "".join(f"<li>{esc(s)}</li>" for s in card.safety_failures)
        rows.append(("safety failures", f'<ul class="bad">{items}</ul>'))
    if card.notes:
        rows.append(("notes", "; ".join(esc(n) for n in card.notes)))
    for ev in card.evaluators:
        rows.append((f"evaluator {esc(ev.name)}",
                     f"score {value_text(ev.score)}; passed {value_text(ev.passed)}; {len(ev.findings)} finding(s)"))
    if res is not None:
        a = res.assessment
        parsed = (f"level {value_text(a.triage_level)}, escalation {esc(a.escalation) if a.escalation else 'n/a'}"
                  + (f", diagnoses {esc('; '.join(a.diagnoses))}" if a.diagnoses else "")
                  + (f'; <span class="bad">parser: {esc("; ".join(a.problems))}</span>' if a.problems else ""))
        rows.append(("parsed assessment", parsed))
        rows.append(("ended by", f"{esc(res.termination)} after {res.agent_turns}/{res.turn_limit} agent turns; "
                     f"tokens {res.tokens.prompt} in / {res.tokens.completion} out"))
        if res.errors:
            rows.append(("errors", '<span class="bad">' + esc("; ".join(res.errors)) + "</span>"))
    return "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)


def _transcript(res: ConversationResult | None) -> str:
    if res is None or not res.turns:
        return '<p class="muted">no transcript</p>'
    items = []
    for t in res.turns:
        who = {"patient": "Patient", "agent": "Agent", "harness": "Harness"}.get(t.speaker, t.speaker)
        meta = f"agent turn {t.agent_turn}" if t.speaker == "agent" and t.agent_turn else f"message {t.index}"
        if t.latency_s:
            meta += f" \u00b7 {t.latency_s:.2f}s"
        extra = ""
        if t.revealed:
            extra += '<div class="revealed">revealed: ' + "".join(f'<span class="chip">{esc(f)}</span>'
                                                                  for f in t.revealed) + "</div>"
        if t.heard_text is not None and t.heard_text != t.text:
            extra += f'<div class="heard">heard as: {esc(t.heard_text)}</div>'
        items.append(f'<li class="turn {esc(t.speaker)}"><div class="who">{esc(who)} <span class="muted">{esc(meta)}'
                     f'</span></div><div class="text">{esc(t.text)}</div>{extra}</li>')
    gathered = (f'<p class="muted">facts gathered, in order: {esc(", ".join(res.gathered_info))}</p>'
                if res.gathered_info else '<p class="muted">no facts gathered</p>')
    return f'<ol class="transcript">{"".join(items)}</ol>{gathered}'


def _encounter_block(rec: EncounterRecord, *, anchor: str, note: str, gate: bool = False) -> str:
    """One encounter as a collapsed ``<details>``: a summary line, then its score card and transcript."""
    card, res = rec.score, rec.result
    assert card is not None
    bits = [f"composite {fixed(card.composite)}"]
    if card.triage:
        bits.append(f"triage {esc(card.triage.describe())}")
    if card.escalation:
        bits.append(f"escalation {esc(card.escalation.describe())}")
    if card.safety_failures:
        bits.append(f'<span class="bad">{len(card.safety_failures)} safety failure(s)</span>')
    sep = " \u00b7 "
    flag = badge("PASS", PASS) if card.passed else badge("FAIL", FAIL)
    if gate:
        flag += " " + badge("gate", FAIL)
    return (f'<details id="{anchor}" class="enc"><summary><b>{esc(rec.scenario_id)}</b> <span class="muted">k={rec.k} '
            f'{esc(note)}</span> {flag} <span class="sumline">{sep.join(bits)}</span></summary>'
            f'<div class="encbody"><div class="scorecard"><h3>Score card</h3>'
            f'<table class="scoretable">{_card_rows(card, res)}</table>{_judge_card(card.judge)}</div>'
            f'<div class="tx"><h3>Transcript</h3>{_transcript(res)}</div></div></details>')


def worst_encounters_section(summary: Summary, records: Records) -> tuple[str, set[str]]:
    """The section (empty when no worst encounter has a score card) and the anchors of the blocks it holds."""
    blocks, anchors = [], set()
    gate = set(summary.safety_gate.scenarios)
    for r in summary.scenarios:
        if r.worst_k_index is None:
            continue
        rec = records.get((r.id, r.worst_k_index))
        if rec is None or rec.score is None:
            continue
        anchor = enc_anchor(r.id, r.worst_k_index)
        anchors.add(anchor)
        blocks.append(_encounter_block(rec, anchor=anchor, note=f"(worst of {r.k})", gate=r.id in gate))
    if not blocks:
        return "", anchors
    body = ('<p class="intro">Each block opens to the score card and the speaker-labelled transcript of the '
            "scenario's lowest-scoring encounter.</p>" + "\n".join(blocks))
    return section("encounters", "Worst encounter per scenario", body), anchors


def flagged_encounters(items: Sequence[Disagreement], records: Records, anchors: set[str]) -> str:
    """Transcripts of flagged-disagreement encounters that are not already shown as a worst encounter.

    Adds their anchors to ``anchors``.
    """
    blocks = []
    for it in items:
        rec = records.get((it.scenario_id, it.k))
        anchor = enc_anchor(it.scenario_id, it.k)
        if rec is None or rec.score is None or anchor in anchors:
            continue
        anchors.add(anchor)
        blocks.append(_encounter_block(rec, anchor=anchor, note=f"(judge {value_text(it.judge)}, deterministic "
                                                                f"{value_text(it.deterministic)})"))
        if len(blocks) >= MAX_FLAGGED_TRANSCRIPTS:
            break
    if not blocks:
        return ""
    return "<h3>Flagged encounters</h3>" + "\n".join(blocks)


def _judge_card(jc: JudgeCard | None) -> str:
    """One encounter's judge path: scores, then every rubric criterion's votes and verdict, then the trust ratings.

    Empty when the encounter was not judged.
    """
    if jc is None:
        return ""
    head = [f"rubric {value_text(jc.rubric_score)}", f"trust {value_text(jc.trust_score)}",
            f"no verdicts {value_text(jc.no_verdicts)}"]
    if jc.judges:
        head.append(f"judges {esc(', '.join(jc.judges))}")
    sep = " \u00b7 "
    out = [f'<h3>Judge path</h3><p class="sub">{sep.join(head)}</p>']
    if jc.rubric:
        rows = []
        for c in jc.rubric:
            verdict = c.verdict
            colour = PASS if verdict == "met" else MUTED if verdict == "no_verdict" else FAIL
            points = finite(c.points)
            if points is not None and points < 0 and verdict in ("met", "unmet"):  # a met negative criterion is bad
                colour = FAIL if verdict == "met" else PASS
            votes = ", ".join(f"{esc(j)}: {esc(v)}" for j, v in c.votes.items())
            why = "; ".join(f"{esc(j)}: {esc(x)}" for j, x in c.explanations.items())
            rows.append(f"<tr><td>{esc(c.criterion)}"
                        + (f'<div class="sub">{why}</div>' if why else "")
                        + f"</td>{td(f'{points:+g}' if points is not None else 'n/a', points, 'num')}"
                        f"<td>{badge(verdict, colour)}</td><td class=\"sub\">{votes}</td></tr>")
        out.append('<table class="jtable"><thead><tr><th>criterion</th><th>points</th><th>verdict</th>'
                   f'<th>votes</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')
    if jc.trust:
        rows = []
        for t in jc.trust:
            ratings = ", ".join(f"{esc(j)}: {value_text(v)}" for j, v in t.ratings.items())
            rows.append(f"<tr><td>{esc(t.category)}</td>"
                        f"{td(value_text(t.mean, 2), sort_key(t.mean), 'num')}"
                        f'<td class="sub">{ratings}</td></tr>')
        out.append('<table class="jtable"><thead><tr><th>trust category</th><th>mean (0-3)</th><th>ratings</th></tr>'
                   f'</thead><tbody>{"".join(rows)}</tbody></table>')
    return "".join(out)
