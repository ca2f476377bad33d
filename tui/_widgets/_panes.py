"""Generic chrome: the one-line status line and the focusable scrolling pane."""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static


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
