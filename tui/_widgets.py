"""The dashboard's widgets: each small, with its own DEFAULT_CSS, fed plain data by its screen.

Rendering is done by pure functions (``overview_text``, ``transcript_table``, ``details_renderable``,
...) that take the run state's objects and return Rich renderables, so what a widget shows depends
only on the data it is given (never on the clock or the path on disk).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.css.query import NoMatches
from textual.widgets import DataTable, ProgressBar, Static

from scenarios import Scenario
from sim.records import clean
from tui._annotations import Annotation
from tui._format import duration, marker_text, passed_text, score, spark, status_text
from tui._state import Encounter, RunState

GATE_STYLE = {"PASSED": "bold black on green", "TRIGGERED": "bold white on red", "PENDING": "bold black on yellow"}
SPEAKER_STYLE = {"patient": "bold magenta", "agent": "bold cyan", "harness": "dim italic"}


def gate_badge(status: str) -> Text:
    return Text(f" {status} ", style=GATE_STYLE.get(status, "bold"))


# ---------------------------------------------------------------------------------------------- status line
class StatusLine(Static):
    """One line for warnings and confirmations (unsaved annotations, saved, filter errors)."""

    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-warning;
    }
    """

    def on_mount(self) -> None:
        self.update(getattr(self.app, "status_text", ""))  # the latest message, also on a newly opened screen


class Pane(VerticalScroll):
    """A focusable scrolling pane; ``tab`` moves between panes, arrows and j/k scroll."""

    BINDINGS = [
        Binding("j", "scroll_down", "Down", show=False),
        Binding("k", "scroll_up", "Up", show=False),
    ]
    DEFAULT_CSS = """
    Pane {
        border: round $panel-lighten-2;
        padding: 0 1;
    }
    Pane:focus {
        border: round $accent;
    }
    """


# ---------------------------------------------------------------------------------------------- overview
def overview_text(state: RunState, *, suite_of: Callable[[str], str | None], job_error: str | None = None,
                  job_running: bool = False, waiting: bool = False) -> tuple[Text, Group]:
    """The run overview: its head line (identity and state), and the body: counts, throughput/ETA,
    aggregate, gate badge, suites, warnings, the job's error."""
    head = Text()
    head.append(state.run_id, style="bold")
    if state.model:
        head.append(f"  model {state.model}")
    if state.channel:
        head.append(f"  channel {state.channel}")
    if state.k is not None:
        head.append(f"  K={state.k}")
    head.append("   ")
    if state.is_finished:
        interrupted = state.finished is not None and state.finished.interrupted
        head.append(" INTERRUPTED " if interrupted else " FINISHED ",
                    style="bold black on yellow" if interrupted else "bold black on green")
    elif waiting:
        head.append(" WAITING FOR THE RUN ", style="bold black on yellow")
    elif job_error:
        head.append(" STOPPED ", style="bold white on red")
    else:
        head.append(" RUNNING ", style="bold black on cyan")
    lines: list[RenderableType] = []

    total = state.total
    counts = Text()
    counts.append(f"{state.done}/{total if total is not None else '?'} encounters done", style="bold")
    counts.append(f" · {len(state.running)} running · {state.errors} error{'s' if state.errors != 1 else ''}")
    rate = state.throughput()
    counts.append(f" · throughput {rate:.1f}/min" if rate is not None else " · throughput —")
    if not state.is_finished:
        counts.append(f" · ETA {duration(state.eta())}")
    counts.append(f" · elapsed {duration(state.elapsed())}")
    lines.append(counts)

    agg = Text("aggregate ")
    agg.append(score(state.aggregate), style="bold")
    agg.append(" (final)" if state.aggregate_final else " (so far: mean of finished composites)", style="dim")
    agg.append("   safety gate ")
    agg.append_text(gate_badge(state.gate_status))
    reasons = state.gate_reasons
    if reasons:
        shown = ", ".join(list(reasons)[:4]) + (f" +{len(reasons) - 4}" if len(reasons) > 4 else "")
        agg.append(f" {shown}", style="red")
    elif state.gate_status == "PENDING":
        n = len(state.safety_failure_keys())
        if n:
            agg.append(f" {n} encounter{'s' if n != 1 else ''} with safety failures so far", style="yellow")
    lines.append(agg)

    suites = state.suite_means(suite_of)
    if suites:
        st = Text("suites ")
        for i, (suite, mean) in enumerate(suites):
            if i:
                st.append(" · ")
            st.append(f"{suite} ")
            st.append(score(mean, 2), style="bold")
        lines.append(st)
    if waiting:
        lines.append(Text(f"waiting for {state.run_dir.name}/run.json to appear…", style="yellow"))
    if job_running and not waiting:
        lines.append(Text("the run is going in this window; q twice stops it", style="dim"))
    if job_error:
        lines.append(Text(f"✖ the run failed: {clean(job_error)}", style="bold red"))  # may quote an endpoint
    if state.skipped:
        warn = Text(f"⚠ {state.skipped} malformed line{'s' if state.skipped != 1 else ''} skipped", style="yellow")
        for w in state.warnings[-2:]:
            warn.append(f"\n  {w}", style="yellow")
        lines.append(warn)
    elif state.warnings:
        lines.append(Text("\n".join(f"⚠ {w}" for w in state.warnings[-2:]), style="yellow"))
    return head, Group(*lines)


class Overview(VerticalScroll):
    """The run overview pane: a progress bar and the overview text."""

    DEFAULT_CSS = """
    Overview {
        height: auto;
        max-height: 12;
        border: round $primary;
        border-title-color: $text;
        padding: 0 1;
    }
    Overview:focus {
        border: round $accent;
    }
    Overview > Horizontal {
        height: 1;
    }
    Overview ProgressBar {
        width: auto;
        margin-right: 2;
    }
    Overview #ov-count {
        width: auto;
    }
    Overview #ov-text, Overview #ov-head {
        height: auto;
    }
    """

    def compose(self) -> Any:
        yield Static(id="ov-head")
        with Horizontal():
            yield ProgressBar(total=None, show_eta=False, show_percentage=True, id="ov-bar")
            yield Static(id="ov-count")
        yield Static(id="ov-text")

    def on_mount(self) -> None:
        self.border_title = "Run overview"
        self.query_one("#ov-bar", ProgressBar).display = False

    def show(self, state: RunState, text: tuple[Text, RenderableType]) -> None:
        try:
            self._show(state, text)
        except NoMatches:  # a poll that lands while the overview is composed or removed (a screen switch)
            return

    def _show(self, state: RunState, text: tuple[Text, RenderableType]) -> None:
        bar = self.query_one("#ov-bar", ProgressBar)
        total = state.total
        if total:
            bar.display = True
            bar.update(total=total, progress=min(state.done, total))
            self.query_one("#ov-count", Static).update(f"{state.done}/{total}")
        else:
            bar.display = False
            self.query_one("#ov-count", Static).update("")
        self.query_one("#ov-head", Static).update(text[0])
        self.query_one("#ov-text", Static).update(text[1])


# ---------------------------------------------------------------------------------------------- encounter list
class EncounterTable(DataTable[Any]):
    """Scenario x k rows, updated in place; row keys are trace ids."""

    BINDINGS = [
        Binding("enter", "select_cursor", "Open"),
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]
    DEFAULT_CSS = """
    EncounterTable {
        height: 1fr;
        border: round $panel-lighten-2;
    }
    EncounterTable:focus {
        border: round $accent;
    }
    """
    COLUMNS: tuple[tuple[str, str, int], ...] = (
        ("scenario", "scenario", 34), ("k", "k", 3), ("status", "status", 8), ("composite", "composite", 9),
        ("result", "result", 6), ("turns", "turns", 5), ("worst", "worst", 8), ("safety", "gate", 8),
        ("review", "review", 10),
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._signatures: dict[str, tuple[Any, ...]] = {}

    def on_mount(self) -> None:
        for label, key, width in self.COLUMNS:
            self.add_column(label, key=key, width=width)

    @staticmethod
    def signature(enc: Encounter, review: str) -> tuple[Any, ...]:
        return (enc.status, enc.composite, enc.passed, len(enc.turns), enc.worst, enc.marker, review)

    @staticmethod
    def cells(enc: Encounter, review: str) -> list[Any]:
        review_style = "green" if review.startswith("pass") else "red" if review.startswith("fail") else "yellow"
        return [
            enc.scenario_id, str(enc.k), status_text(enc.status), Text(score(enc.composite), justify="right"),
            passed_text(enc), Text(str(len(enc.turns)), justify="right"),
            Text("▼ worst", style="bold yellow") if enc.worst else Text(""),
            marker_text(enc.marker),
            Text(review, style=review_style),
        ]

    def has(self, tid: str) -> bool:
        return tid in self._signatures

    def upsert(self, enc: Encounter, review: str) -> None:
        tid = enc.trace_id
        sig = self.signature(enc, review)
        old = self._signatures.get(tid)
        if old == sig:
            return
        cells = self.cells(enc, review)
        if old is None:
            self.add_row(*cells, key=tid)
        else:
            for (_, column, _), value in zip(self.COLUMNS, cells, strict=True):
                self.update_cell(tid, column, value)
        self._signatures[tid] = sig

    def drop(self, tid: str) -> None:
        if self._signatures.pop(tid, None) is not None:
            self.remove_row(tid)

    def reset_rows(self) -> None:
        self.clear()
        self._signatures.clear()

    def keys(self) -> list[str]:
        return [str(row.key.value) for row in self.ordered_rows]

    def highlighted_key(self) -> str | None:
        if not self.row_count:
            return None
        try:
            return str(self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value)
        except Exception:  # an empty or just-cleared table
            return None


# ---------------------------------------------------------------------------------------------- transcript
def transcript_table(turns: Sequence[Any], *, empty: str = "no turns yet") -> RenderableType:
    """Turns by speaker; when the channel changed a message (voice), both said and heard text."""
    if not turns:
        return Text(empty, style="dim")
    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(width=4, justify="right", style="dim")
    grid.add_column(width=7)
    grid.add_column(ratio=1)
    for t in turns:
        speaker = str(t.speaker)
        body = Text(t.text or "")
        heard = getattr(t, "heard_text", None)
        if heard is not None and heard.strip() != (t.text or "").strip():
            body = Text("said  ", style="dim")
            body.append(t.text or "")
            body.append("\nheard ", style="dim")
            body.append(heard, style="italic yellow")
        revealed = list(getattr(t, "revealed", []) or [])
        if revealed:
            body.append(f"\n↳ revealed {', '.join(revealed)}", style="green")
        grid.add_row(f"[{t.index}]", Text(speaker, style=SPEAKER_STYLE.get(speaker, "bold")), body)
    return grid


class TranscriptView(Static):
    DEFAULT_CSS = """
    TranscriptView {
        height: auto;
    }
    """

    def show(self, turns: Sequence[Any], *, empty: str = "no turns yet") -> None:
        self.update(transcript_table(turns, empty=empty))


# ---------------------------------------------------------------------------------------------- details
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


# ---------------------------------------------------------------------------------------------- annotation bar
def annotation_text(draft: Annotation, *, dirty: bool, saved: Annotation | None) -> Text:
    text = Text("review  ", style="bold")
    verdict = draft.verdict
    text.append("verdict ")
    text.append(verdict.upper() if verdict else "—",
                style={"pass": "bold green", "fail": "bold red"}.get(verdict or "", "dim"))
    text.append("  severity ")
    text.append(draft.severity or "none", style="bold yellow" if draft.severity else "dim")
    text.append("  notes ")
    text.append(f"“{draft.notes}”" if draft.notes else "—", style="italic" if draft.notes else "dim")
    text.append("   ")
    if dirty:
        text.append(" UNSAVED ", style="bold black on yellow")
        text.append(" s saves", style="dim")
    elif saved is not None:
        text.append(f"saved (pass {saved.review_pass}, {saved.reviewer})", style="green")
    else:
        text.append("not reviewed", style="dim")
    return text


class AnnotationBar(Static):
    DEFAULT_CSS = """
    AnnotationBar {
        height: auto;
        padding: 0 1;
        border: round $secondary;
    }
    """


# ---------------------------------------------------------------------------------------------- reliability
class ReliabilityTable(DataTable[Any]):
    """One row per scenario: its K composites as a sparkline, mean and worst."""

    BINDINGS = [
        Binding("enter", "select_cursor", "Open worst"),
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]
    DEFAULT_CSS = """
    ReliabilityTable {
        height: 1fr;
        border: round $panel-lighten-2;
    }
    ReliabilityTable:focus {
        border: round $accent;
    }
    """
    COLUMNS: tuple[tuple[str, str, int], ...] = (
        ("scenario", "scenario", 34), ("suite", "suite", 9), ("K", "n", 5), ("composites", "spark", 12),
        ("mean", "mean", 6), ("worst", "worst", 6), ("worst k", "worst_k", 7), ("safety", "gate", 8),
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._signatures: dict[str, tuple[Any, ...]] = {}

    def on_mount(self) -> None:
        for label, key, width in self.COLUMNS:
            self.add_column(label, key=key, width=width)

    def upsert(self, scenario_id: str, row: list[Any]) -> None:
        sig = tuple(str(c) for c in row)
        old = self._signatures.get(scenario_id)
        if old == sig:
            return
        if old is None:
            self.add_row(*row, key=scenario_id)
        else:
            for (_, column, _), value in zip(self.COLUMNS, row, strict=True):
                self.update_cell(scenario_id, column, value)
        self._signatures[scenario_id] = sig


def reliability_row(state: RunState, scenario_id: str, suite: str | None) -> list[Any]:
    encs = state.scenario_encounters(scenario_id)
    values = [e.composite if e.status == "done" else None for e in encs]
    scored = [v for v in values if v is not None]
    worst = state.worst_key(scenario_id)
    marker = ("gate" if scenario_id in state.gate_reasons or any(e.gate for e in encs)
              else "safety" if any(e.safety_failures for e in encs) else None)
    k_total = state.k
    return [
        scenario_id, suite or "—", f"{len(scored)}/{k_total if k_total is not None else len(encs)}",
        Text(spark(values), style="cyan"), Text(score(state.scenario_mean(scenario_id), 2), justify="right"),
        Text(score(min(scored), 2) if scored else "—", justify="right"),
        Text(str(worst[1]) if worst else "—", justify="right"),
        marker_text(marker),
    ]


def reliability_detail(state: RunState, scenario_id: str) -> Text:
    encs = state.scenario_encounters(scenario_id)
    text = Text(scenario_id, style="bold")
    text.append("   ")
    for e in encs:
        text.append(f"k{e.k} ")
        text.append(score(e.composite, 2) if e.status == "done" else e.status, style="bold")
        text.append("  ")
    scored = [e.composite for e in encs if e.status == "done" and e.composite is not None]
    if len(scored) >= 2:
        text.append(f"  mean {statistics.fmean(scored):.2f} · sd {statistics.pstdev(scored):.2f}", style="dim")
    worst = state.worst_key(scenario_id)
    if worst is not None:
        text.append(f"\nworst: k={worst[1]} — enter opens its transcript", style="yellow")
    return text


# ---------------------------------------------------------------------------------------------- live
def speaking_text(enc: Encounter | None) -> Text:
    if enc is None:
        return Text("no live call in this run (the live view follows `encsim live` calls)", style="dim")
    text = Text(f"{enc.scenario_id} k={enc.k}   ", style="bold")
    if enc.status != "running":
        text.append(f" CALL ENDED ({enc.termination or enc.status}) ", style="bold black on green")
    elif not enc.speaking:
        text.append("○ silence", style="dim")
    else:
        names = sorted(enc.speaking)
        text.append("● " + " + ".join(names) + " speaking", style="bold green" if len(names) == 1 else "bold red")
        if len(names) > 1:
            text.append("  (overlap)", style="red")
    by_side: dict[str, list[float]] = {}
    for lat in enc.latencies:
        by_side.setdefault(lat.side, []).append(lat.total_s)
    text.append(f"   turns {len(enc.turns)} · overlaps {len(enc.overlaps)}")
    for side, values in sorted(by_side.items()):
        text.append(f" · {side} latency median {statistics.median(values):.2f} s")
    return text


class LatencyTable(DataTable[Any]):
    """Per reply: side, turn, voice-to-voice total and the stages (seconds)."""

    STAGES = ("vad_stop", "stt", "decide", "first_tts", "playout")
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]
    DEFAULT_CSS = """
    LatencyTable {
        height: 11;
        border: round $panel-lighten-2;
    }
    LatencyTable:focus {
        border: round $accent;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._shown: tuple[Any, int] = (None, 0)

    def on_mount(self) -> None:
        self.add_column("turn", key="turn", width=4)
        self.add_column("side", key="side", width=7)
        self.add_column("total s", key="total", width=7)
        for stage in self.STAGES:
            self.add_column(stage, key=stage, width=9)

    def show(self, enc: Encounter | None) -> None:
        key = enc.key if enc is not None else None
        shown_key, count = self._shown
        if key != shown_key:
            self.clear()
            count = 0
        lats = enc.latencies if enc is not None else []
        for lat in lats[count:]:
            cells: list[Any] = [Text(str(lat.turn), justify="right"), lat.side,
                                Text(f"{lat.total_s:.2f}", justify="right",
                                     style="bold red" if lat.total_s > 2.0 else "")]
            cells += [Text(f"{lat.stages[s]:.3f}" if s in lat.stages else "—", justify="right") for s in self.STAGES]
            self.add_row(*cells)
        if len(lats) > count:
            self.move_cursor(row=len(lats) - 1)  # follow the newest reply
        self._shown = (key, len(lats))
