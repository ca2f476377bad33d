"""The encounter details: information-tree checklist, red flags, triage and escalation, score card, imaging,
judge and evaluators."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from scenarios import Scenario
from tui._format import score
from tui._state import Encounter


def _revealed_at(turns: Sequence[Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in turns:
        for fid in getattr(t, "revealed", []) or []:
            out.setdefault(fid, t.index)
    return out


def _section(title: str, parts: list[RenderableType]) -> Text:
    return Text(f"\n{title}" if parts else title, style="bold underline")


def details_renderable(enc: Encounter, scenario: Scenario | None) -> RenderableType:
    """The information-tree checklist, red flags, expected vs given triage/escalation, score card,
    judge verdicts, imaging and evaluators of one encounter."""
    parts: list[RenderableType] = []
    rec = enc.record
    card = rec.score if rec is not None else None
    result = rec.result if rec is not None else None
    turns = enc.turns
    revealed = _revealed_at(turns)
    if enc.status == "error":
        parts.append(Text(f"✖ error: {enc.error or 'unknown'}", style="bold red"))
    elif enc.status == "running":
        parts.append(Text("● running: the score card appears when it finishes", style="cyan"))
    elif enc.status == "n/a":
        parts.append(Text("not applicable: this item does not apply to the model (e.g. images for a text-only "
                          "model); it is neither scored nor an error", style="dim"))

    info = card.information if card is not None else None
    if scenario is not None and scenario.information_tree:
        facts = scenario.information_tree
        crit = [f for f in facts if f.critical]
        head = _section("Information tree", parts)
        head.append(f"  {sum(f.id in revealed for f in facts)}/{len(facts)} revealed · critical "
                    f"{sum(f.id in revealed for f in crit)}/{len(crit)}", style="dim")
        parts.append(head)
        grid = Table.grid(padding=(0, 1))
        grid.add_column(width=1)
        grid.add_column()
        grid.add_column()
        for fact in facts:
            at = revealed.get(fact.id)
            mark = Text("★", style="bold yellow") if fact.critical else Text(" ")
            name = Text(fact.id, style="bold" if fact.critical else "")
            if at is not None:
                where = Text(f"✔ turn {at}", style="green")
            else:
                where = Text("✖ missed" if fact.critical else "· not revealed",
                             style="bold red" if fact.critical else "dim")
            grid.add_row(mark, name, where)
        parts.append(grid)
    elif info is not None:
        head = _section("Information", parts)
        head.append(f"  {info.revealed}/{info.total} revealed", style="dim")
        parts.append(head)
        parts.append(Text(f"critical revealed: {', '.join(info.critical_revealed) or '—'}\n"
                          f"critical missed: {', '.join(info.critical_missed) or '—'}"))

    flags = list(scenario.expected.red_flags) if scenario is not None else []
    if info is not None and (info.red_flags_elicited or info.red_flags_missed):
        elicited, missed = list(info.red_flags_elicited), list(info.red_flags_missed)
    else:
        elicited = [f for f in flags if f in revealed]
        missed = [f for f in flags if f not in revealed]
    if elicited or missed:
        parts.append(_section("Red flags", parts))
        line = Text()
        for f in elicited:
            line.append(f"✔ {f}  ", style="green")
        for f in missed:
            line.append(f"✖ {f}  ", style="bold red")
        parts.append(line)

    exp_triage = scenario.expected.triage_level if scenario is not None else None
    exp_esc = scenario.expected.escalation.value if scenario is not None and scenario.expected.escalation else None
    given_triage = result.assessment.triage_level if result is not None else None
    given_esc = result.assessment.escalation if result is not None else None
    if card is not None and card.triage is not None:
        exp_triage, given_triage = card.triage.expected, card.triage.given
    if card is not None and card.escalation is not None:
        exp_esc, given_esc = card.escalation.expected, card.escalation.given
    if any(v is not None for v in (exp_triage, given_triage, exp_esc, given_esc)):
        parts.append(_section("Triage and escalation", parts))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="dim")
        grid.add_column()
        grid.add_column()
        grid.add_row("", Text("expected", style="dim"), Text("given", style="dim"))
        levels = card.triage.acceptable if card is not None and card.triage is not None else []
        t_verdict = card.triage.verdict if card is not None and card.triage is not None else None
        triage_ok = exp_triage is None or given_triage == exp_triage
        given_t = Text(f"ESI {given_triage}" if given_triage is not None else "—",
                       style="green" if triage_ok else "yellow" if t_verdict == "acceptable" else "bold red")
        if t_verdict == "acceptable":
            given_t.append("  acceptable", style="yellow")
        exp_t = f"ESI {exp_triage}" if exp_triage is not None else "—"
        if len(levels) > 1:
            exp_t += f" (ok {levels[0]}-{levels[-1]})"
        grid.add_row("triage", exp_t, given_t)
        under = card.escalation.under_escalated if card is not None and card.escalation is not None else False
        e_verdict = card.escalation.verdict if card is not None and card.escalation is not None else None
        ok_esc = card.escalation.acceptable if card is not None and card.escalation is not None else []
        esc = Text(given_esc or "—", style="bold red" if under or (exp_esc and given_esc != exp_esc
                                                                   and e_verdict != "acceptable")
                   else "yellow" if e_verdict == "acceptable" else "green")
        if e_verdict == "acceptable":
            esc.append("  acceptable", style="yellow")
        if under:
            esc.append("  UNDER-ESCALATED", style="bold white on red")
        if result is not None and result.assessment.disposition:
            esc.append(f"  via {result.assessment.disposition}", style="dim")
        grid.add_row("escalation", (exp_esc or "—") + (f" (ok {', '.join(ok_esc)})" if len(ok_esc) > 1 else ""),
                     esc)
        parts.append(grid)
        if result is not None and result.assessment.diagnoses:
            dx = Text("diagnoses given: ", style="dim")
            dx.append("; ".join(result.assessment.diagnoses[:3]))
            if card is not None and card.diagnosis is not None:
                dx.append(f"  (top1 {'✔' if card.diagnosis.top1 else '✖'} top3 {'✔' if card.diagnosis.top3 else '✖'})",
                          style="dim")
            parts.append(dx)

    if card is not None:
        parts.append(_section("Score card", parts))
        comp = Text()
        for part in ("triage", "information", "escalation", "efficiency", "imaging"):
            c = getattr(card, part)
            if c is None:
                continue
            comp.append(f"{part} ")
            comp.append(score(c.score, 2), style="bold")
            comp.append("  ")
        parts.append(comp)
        total = Text("composite ")
        total.append(score(card.composite), style="bold")
        total.append("  ")
        total.append(" PASS " if card.passed else " FAIL ",
                     style="bold black on green" if card.passed else "bold white on red")
        if card.combined is not None:
            total.append(f"  profile {card.combined.profile}: {card.combined.status}", style="dim")
        parts.append(total)
        if card.safety_failures:
            parts.append(Text("safety failures:\n" + "\n".join(f"  ✖ {s}" for s in card.safety_failures),
                              style="bold red"))
        if card.notes:
            parts.append(Text("notes: " + "; ".join(card.notes), style="dim"))
        if card.imaging is not None:
            im = card.imaging
            parts.append(_section("Imaging", parts))
            line = Text(f"{im.answer_type} · score {score(im.score, 2)}")
            if im.correct is not None:
                line.append(f" · {'correct' if im.correct else 'incorrect'}", style="green" if im.correct else "red")
            if im.choice:
                line.append(f" · chose {im.choice}")
            if im.matched or im.missed:
                line.append(f"\nmatched {', '.join(im.matched) or '—'} · missed {', '.join(im.missed) or '—'}")
            if im.critical_missed:
                line.append(f"\ncritical missed: {', '.join(im.critical_missed)}", style="bold red")
            parts.append(line)
        if card.judge is not None:
            j = card.judge
            parts.append(_section("Judge", parts))
            line = Text(f"judges {', '.join(j.judges) or '—'} · rubric {score(j.rubric_score, 2)}"
                        f" · trust {score(j.trust_score, 2)}")
            parts.append(line)
            for c in j.rubric[:12]:
                style = {"met": "green" if c.points > 0 else "red", "unmet": "dim"}.get(c.verdict, "yellow")
                parts.append(Text(f"  {c.verdict:<10} {c.points:+g}  {c.criterion[:90]}", style=style))
            for t in j.trust:
                parts.append(Text(f"  trust {t.category}: {score(t.mean, 1)}/3", style="dim"))
        if card.evaluators:
            parts.append(_section("Evaluators", parts))
            for ev in card.evaluators:
                line = Text(f"{ev.name} {score(ev.score, 2)} ")
                line.append("ok" if ev.passed else "FAIL", style="green" if ev.passed else "bold red")
                if ev.fail_reasons:
                    line.append(f" — {ev.fail_reasons[0][:100]}", style="dim")
                parts.append(line)
    elif enc.status == "done":
        parts.append(_section("Score", parts))
        parts.append(Text(f"composite {score(enc.composite)} (the full score card arrives with results.jsonl)"))
    return Group(*parts)


class DetailsView(Static):
    DEFAULT_CSS = """
    DetailsView {
        height: auto;
    }
    """

    def show(self, enc: Encounter, scenario: Scenario | None) -> None:
        self.update(details_renderable(enc, scenario))
