"""The encounter details, one function per section.

The sections: information-tree checklist, red flags, triage and escalation, score card, imaging,
judge and evaluators.

``details_renderable`` stacks one function per section (``DETAILS_SECTIONS``, in order). A section
reads the encounter, its scenario and its score card from an ``EncounterDetails`` and returns its
lines, or nothing when it does not apply; its heading starts with a blank line unless it is the first
thing shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from review import Encounter, TranscriptTurn
from scenarios import Scenario
from tui._format import score


def _revealed_at(turns: Sequence[TranscriptTurn]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in turns:
        for fid in getattr(t, "revealed", []) or []:
            out.setdefault(fid, t.index)
    return out


def _heading(title: str, *, after: bool) -> Text:
    return Text(f"\n{title}" if after else title, style="bold underline")


class EncounterDetails:
    """What the sections of the details read about one encounter."""

    def __init__(self, enc: Encounter, scenario: Scenario | None) -> None:
        """Gather the encounter's record, score card and revealed facts.

        Args:
            enc: The encounter.
            scenario: Its scenario definition, or None when it cannot be found (the sections then
                fall back to what the score card says).
        """
        self.enc = enc
        self.scenario = scenario
        rec = enc.record
        self.card = rec.score if rec is not None else None
        """The score card (results.jsonl), or None before it arrives."""
        self.result = rec.result if rec is not None else None
        """The conversation result (results.jsonl), or None."""
        self.info = self.card.information if self.card is not None else None
        """The score card's information component, or None."""
        self.revealed = _revealed_at(enc.turns)
        """Fact id -> the index of the turn that first revealed it."""


class Section(Protocol):
    """One section of the details: its lines for an encounter, or none when it does not apply."""

    def __call__(self, d: EncounterDetails, *, after: bool) -> list[RenderableType]: ...


def status_section(d: EncounterDetails, *, after: bool) -> list[RenderableType]:
    """A line on the state of an encounter that is not done: an error, running, or not applicable.

    Args:
        d: The encounter's details.
        after: Whether something is shown above (unused: this line has no heading).

    Returns:
        The section's lines (none for a scored encounter).
    """
    enc = d.enc
    if enc.status == "error":
        return [Text(f"✖ error: {enc.error or 'unknown'}", style="bold red")]
    if enc.status == "running":
        return [Text("● running: the score card appears when it finishes", style="cyan")]
    if enc.status == "n/a":
        return [Text("not applicable: this item does not apply to the model (e.g. images for a text-only "
                     "model); it is neither scored nor an error", style="dim")]
    return []


def information_section(d: EncounterDetails, *, after: bool) -> list[RenderableType]:
    """The information-tree checklist, or, without the scenario, the score card's information counts.

    The checklist: every fact of the tree, critical ones starred, with the turn that revealed it.

    Args:
        d: The encounter's details.
        after: Whether something is shown above (the heading then starts with a blank line).

    Returns:
        The section's lines (none without the scenario's tree or a score card).
    """
    scenario, info, revealed = d.scenario, d.info, d.revealed
    if scenario is not None and scenario.information_tree:
        facts = scenario.information_tree
        crit = [f for f in facts if f.critical]
        head = _heading("Information tree", after=after)
        head.append(f"  {sum(f.id in revealed for f in facts)}/{len(facts)} revealed · critical "
                    f"{sum(f.id in revealed for f in crit)}/{len(crit)}", style="dim")
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
        return [head, grid]
    if info is not None:
        head = _heading("Information", after=after)
        head.append(f"  {info.revealed}/{info.total} revealed", style="dim")
        return [head, Text(f"critical revealed: {', '.join(info.critical_revealed) or '—'}\n"
                           f"critical missed: {', '.join(info.critical_missed) or '—'}")]
    return []


def red_flags_section(d: EncounterDetails, *, after: bool) -> list[RenderableType]:
    """The red flags elicited and missed: the score card's, else the scenario's against the transcript.

    Args:
        d: The encounter's details.
        after: Whether something is shown above (the heading then starts with a blank line).

    Returns:
        The section's lines (none when there are no red flags).
    """
    scenario, info, revealed = d.scenario, d.info, d.revealed
    flags = list(scenario.expected.red_flags) if scenario is not None else []
    if info is not None and (info.red_flags_elicited or info.red_flags_missed):
        elicited, missed = list(info.red_flags_elicited), list(info.red_flags_missed)
    else:
        elicited = [f for f in flags if f in revealed]
        missed = [f for f in flags if f not in revealed]
    if not (elicited or missed):
        return []
    line = Text()
    for f in elicited:
        line.append(f"✔ {f}  ", style="green")
    for f in missed:
        line.append(f"✖ {f}  ", style="bold red")
    return [_heading("Red flags", after=after), line]


def triage_section(d: EncounterDetails, *, after: bool) -> list[RenderableType]:
    """Expected against given triage level and escalation, and the diagnoses given.

    With the acceptable alternatives, under-escalation and the disposition.

    Args:
        d: The encounter's details.
        after: Whether something is shown above (the heading then starts with a blank line).

    Returns:
        The section's lines (none when neither an expectation nor an answer is known).
    """
    scenario, card, result = d.scenario, d.card, d.result
    exp_triage = scenario.expected.triage_level if scenario is not None else None
    exp_esc = scenario.expected.escalation.value if scenario is not None and scenario.expected.escalation else None
    given_triage = result.assessment.triage_level if result is not None else None
    given_esc = result.assessment.escalation if result is not None else None
    if card is not None and card.triage is not None:
        exp_triage, given_triage = card.triage.expected, card.triage.given
    if card is not None and card.escalation is not None:
        exp_esc, given_esc = card.escalation.expected, card.escalation.given
    if not any(v is not None for v in (exp_triage, given_triage, exp_esc, given_esc)):
        return []
    parts: list[RenderableType] = [_heading("Triage and escalation", after=after)]
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
    return parts


def score_card_section(d: EncounterDetails, *, after: bool) -> list[RenderableType]:
    """The score card: component scores, composite and verdict (and the profile's), safety failures, notes.

    Args:
        d: The encounter's details.
        after: Whether something is shown above (the heading then starts with a blank line).

    Returns:
        The section's lines (none before the score card arrives).
    """
    card = d.card
    if card is None:
        return []
    parts: list[RenderableType] = [_heading("Score card", after=after)]
    comp = Text()
    for part in ("triage", "information", "escalation", "efficiency", "diagnosis", "imaging"):
        c = getattr(card, part)
        if c is None or c.score is None:
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
    return parts


def imaging_section(d: EncounterDetails, *, after: bool) -> list[RenderableType]:
    """The imaging component.

    Answer type, score, correct or not, the choice, findings matched and missed, critical ones missed.

    Args:
        d: The encounter's details.
        after: Whether something is shown above (the heading then starts with a blank line).

    Returns:
        The section's lines (none without an imaging component).
    """
    if d.card is None or d.card.imaging is None:
        return []
    im = d.card.imaging
    line = Text(f"{im.answer_type} · score {score(im.score, 2)}")
    if im.correct is not None:
        line.append(f" · {'correct' if im.correct else 'incorrect'}", style="green" if im.correct else "red")
    if im.choice:
        line.append(f" · chose {im.choice}")
    if im.matched or im.missed:
        line.append(f"\nmatched {', '.join(im.matched) or '—'} · missed {', '.join(im.missed) or '—'}")
    if im.critical_missed:
        line.append(f"\ncritical missed: {', '.join(im.critical_missed)}", style="bold red")
    return [_heading("Imaging", after=after), line]


def judge_section(d: EncounterDetails, *, after: bool) -> list[RenderableType]:
    """The judges' verdicts: rubric and trust scores, the rubric's criteria (first 12), the trust ratings.

    Args:
        d: The encounter's details.
        after: Whether something is shown above (the heading then starts with a blank line).

    Returns:
        The section's lines (none without a judge card).
    """
    if d.card is None or d.card.judge is None:
        return []
    j = d.card.judge
    parts: list[RenderableType] = [_heading("Judge", after=after)]
    parts.append(Text(f"judges {', '.join(j.judges) or '—'} · rubric {score(j.rubric_score, 2)}"
                      f" · trust {score(j.trust_score, 2)}"))
    for c in j.rubric[:12]:
        style = {"met": "green" if c.points > 0 else "red", "unmet": "dim"}.get(c.verdict, "yellow")
        parts.append(Text(f"  {c.verdict:<10} {c.points:+g}  {c.criterion[:90]}", style=style))
    for t in j.trust:
        parts.append(Text(f"  trust {t.category}: {score(t.mean, 1)}/3", style="dim"))
    return parts


def evaluators_section(d: EncounterDetails, *, after: bool) -> list[RenderableType]:
    """The evaluators: each one's score, ok or FAIL, and its first reason.

    Args:
        d: The encounter's details.
        after: Whether something is shown above (the heading then starts with a blank line).

    Returns:
        The section's lines (none without evaluator results).
    """
    if d.card is None or not d.card.evaluators:
        return []
    parts: list[RenderableType] = [_heading("Evaluators", after=after)]
    for ev in d.card.evaluators:
        line = Text(f"{ev.name} {score(ev.score, 2)} ")
        line.append("ok" if ev.passed else "FAIL", style="green" if ev.passed else "bold red")
        if ev.fail_reasons:
            line.append(f" — {ev.fail_reasons[0][:100]}", style="dim")
        parts.append(line)
    return parts


def provisional_score_section(d: EncounterDetails, *, after: bool) -> list[RenderableType]:
    """The composite of a finished encounter whose score card has not arrived yet (events.jsonl only).

    Args:
        d: The encounter's details.
        after: Whether something is shown above (the heading then starts with a blank line).

    Returns:
        The section's lines (none once the score card is there, or before the encounter is done).
    """
    if d.card is not None or d.enc.status != "done":
        return []
    return [_heading("Score", after=after),
            Text(f"composite {score(d.enc.composite)} (the full score card arrives with results.jsonl)")]


DETAILS_SECTIONS: tuple[Section, ...] = (
    status_section, information_section, red_flags_section, triage_section, score_card_section, imaging_section,
    judge_section, evaluators_section, provisional_score_section,
)
"""The sections of the details, top to bottom."""


def details_renderable(enc: Encounter, scenario: Scenario | None) -> RenderableType:
    """The details of one encounter: the sections of ``DETAILS_SECTIONS`` that apply, stacked.

    Information-tree checklist, red flags, expected vs given triage/escalation, score card, imaging,
    judge verdicts and evaluators.

    Args:
        enc: The encounter.
        scenario: Its scenario definition, or None when it cannot be found.

    Returns:
        The sections of ``DETAILS_SECTIONS`` that apply, stacked.
    """
    details = EncounterDetails(enc, scenario)
    parts: list[RenderableType] = []
    for section in DETAILS_SECTIONS:
        parts += section(details, after=bool(parts))
    return Group(*parts)


class DetailsView(Static):
    """The details pane's content: ``details_renderable`` of the encounter shown."""

    DEFAULT_CSS = """
    DetailsView {
        height: auto;
    }
    """

    def show(self, enc: Encounter, scenario: Scenario | None) -> None:
        """Show the details of ``enc``.

        Args:
            enc: The encounter.
            scenario: Its scenario definition, or None when it cannot be found.
        """
        self.update(details_renderable(enc, scenario))
