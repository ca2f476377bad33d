"""The help screen: every key, and what the list markers mean."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Static

from tui._format import MARKER_LEGEND
from tui._screens._base import BaseScreen
from tui._widgets import Pane, StatusLine

KEYS: tuple[tuple[str, str, str], ...] = (
    ("everywhere", "?", "this help"),
    ("everywhere", "q / ctrl+q", "quit (with unsaved annotations or a run going: the first q warns, the second "
                                 "quits)"),
    ("everywhere", "tab / shift+tab", "switch pane"),
    ("everywhere", "↑ ↓ / j k", "move in a list, scroll a pane"),
    ("everywhere", "r", "reliability: K composites per scenario"),
    ("everywhere", "l", "live call: who is speaking, latencies, transcript"),
    ("everywhere", "g", "safety gate details: why it triggered"),
    ("everywhere", "c", "coding: failing annotations get failure modes (taxonomy.json)"),
    ("everywhere", "v", "judges vs people: where they disagree; enter opens the transcript"),
    ("everywhere", "escape", "back (or: clear the filter, cancel the note)"),
    ("encounter list", "enter", "open the encounter"),
    ("encounter list", "/", "filter: words of the scenario id, status:error, gate (⚠ gate), safety (any safety "
                            "failure), fail, pass, worst, k:N, review:none; enter keeps it, escape clears"),
    ("encounter", "1 / 2", "verdict pass / fail"),
    ("encounter", "n", "write a note (enter keeps it, escape cancels)"),
    ("encounter", "t", "cycle severity: clinician_would_notice, subtle_issue, cosmetic, none"),
    ("encounter", "s", "save the annotation to annotations.jsonl"),
    ("encounter", "] / [", "next / previous encounter of the list"),
    ("reliability", "enter", "open the worst encounter of the scenario"),
    ("coding", "enter · n · a", "pick / assign a mode · type a new one · accept the judge's suggestion"),
    ("coding", "e · m · d · p · f", "rename · merge into another · definition · pass example · fail example"),
)


def help_renderable() -> Table:
    table = Table(expand=True, title="encsim dashboard keys", title_justify="left")
    table.add_column("where", style="dim", width=16)
    table.add_column("key", style="bold cyan", width=18)
    table.add_column("does")
    for where, key, what in KEYS:
        table.add_row(where, key, what)
    for mark, style, what in MARKER_LEGEND:
        table.add_row("list marker", Text(mark, style=style), what)
    return table


class HelpScreen(BaseScreen):
    AUTO_FOCUS = "#help-pane"
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def compose(self) -> ComposeResult:
        yield Header()
        with Pane(id="help-pane"):
            yield Static(help_renderable(), id="help")
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#help-pane", Pane).border_title = "Help"
