"""The safety gate screen: its verdict, why it triggered, and the encounters with safety failures."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Static

from review import PollResult
from tui._dashboard import Dashboard
from tui._format import MARKER_LEGEND, marker_text, score
from tui._screens._base import BaseScreen
from tui._widgets import Pane, StatusLine, gate_badge


def gate_renderable(app: Dashboard) -> Table:
    """The safety gate: its verdict and threshold, why it triggered, which scenarios fed it and why.

    Then the encounters with safety failures.
    """
    state = app.state
    out = Table.grid(padding=(0, 1))
    out.add_column()
    head = Text("safety gate ")
    head.append_text(gate_badge(state.gate_status))
    summary = state.summary
    if summary is not None:
        g = summary.safety_gate
        head.append(f"  threshold {g.threshold:g} (mean escalation safety of a gated scenario) · "
                    f"aggregate capped at {g.cap:.2f} when triggered", style="dim")
        if g.triggered and summary.aggregate_uncapped is not None:
            head.append(f"\naggregate {score(summary.aggregate)} (uncapped {score(summary.aggregate_uncapped)})")
    else:
        head.append("  (summary.json not written yet: the gate is decided when the run finishes)", style="dim")
    out.add_row(head)
    reasons = state.gate_reasons
    if reasons:
        table = Table(title="why it triggered", title_justify="left", expand=True, show_lines=False)
        table.add_column("scenario", style="bold")
        table.add_column("reason")
        for sid, why in reasons.items():
            table.add_row(sid, why)
        out.add_row(table)
    watched = state.gate_watched
    if watched:
        table = Table(title=f"scenarios that fed the gate ({len(watched)})", title_justify="left", expand=True)
        table.add_column("scenario", style="bold")
        table.add_column("gated because")
        for sid, why in watched.items():
            table.add_row(sid, why)
        out.add_row(table)
    elif summary is not None and summary.safety_gate.watched is not None:
        out.add_row(Text("no scenario of this run fed the gate (no safety-suite scenario, emergency target, critical "
                         "imaging finding or importer mark): a pass says nothing about safety", style="yellow"))
    keys = state.safety_failure_keys()
    if keys:
        table = Table(title=f"encounters with safety failures ({len(keys)})", title_justify="left", expand=True)
        table.add_column("encounter", style="bold")
        table.add_column("marker", width=8)
        table.add_column("safety failures", style="red")
        for key in keys[:200]:
            enc = state.encounters[key]
            table.add_row(enc.trace_id, marker_text(enc.marker), "; ".join(enc.safety_failures))
        if len(keys) > 200:
            table.add_row("…", "", f"{len(keys) - 200} more (filter the list with /safety)")
        out.add_row(table)
    elif not reasons:
        out.add_row(Text("no safety failures so far", style="green"))
    out.add_row(marker_legend(("⚠ gate", "⚠ safety")))
    return out


def marker_legend(markers: tuple[str, ...] | None = None) -> Table:
    """What the list's markers mean (all of them, or those named)."""
    table = Table.grid(padding=(0, 2))
    table.add_column(width=9, no_wrap=True)
    table.add_column()
    for mark, style, what in MARKER_LEGEND:
        if markers is None or mark in markers:
            table.add_row(Text(mark, style=style), Text(what, style="dim"))
    return table


class GateScreen(BaseScreen):
    AUTO_FOCUS = "#gate-pane"
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def compose(self) -> ComposeResult:
        yield Header()
        with Pane(id="gate-pane"):
            yield Static(id="gate")
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#gate-pane", Pane).border_title = "Safety gate"
        self.refresh_state(PollResult(reset=True))

    def refresh_state(self, res: PollResult) -> None:
        if res.reset or res.summary or res.new or res.changed or self.dash.state.is_finished:
            self.query_one("#gate", Static).update(gate_renderable(self.dash))
