"""The live call screen: who is speaking now, per-turn latencies and the running transcript."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Static

from review import PollResult
from tui._screens._base import BaseScreen
from tui._widgets import LatencyTable, Pane, StatusLine, TranscriptView, speaking_text


class LiveScreen(BaseScreen):
    """A live call: who is speaking now, per-turn latencies and the running transcript."""

    AUTO_FOCUS = "#latencies"
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]
    DEFAULT_CSS = """
    LiveScreen #speaking {
        height: auto;
        padding: 0 1;
        border: round $secondary;
    }
    LiveScreen #latencies {
        height: 11;
    }
    LiveScreen #live-transcript-pane {
        height: 1fr;
    }
    """

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="speaking")
        yield LatencyTable(id="latencies")
        with Pane(id="live-transcript-pane"):
            yield TranscriptView(id="live-transcript")
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#speaking", Static).border_title = "Live call"
        self.query_one(LatencyTable).border_title = "Latency per reply (s)"
        self.query_one("#live-transcript-pane", Pane).border_title = "Transcript"
        self.refresh_state(PollResult(reset=True))

    def refresh_state(self, res: PollResult) -> None:
        enc = self.dash.state.live_encounter()
        if not (res.reset or res.live or (enc is not None and enc.key in res.changed)):
            return
        self.query_one("#speaking", Static).update(speaking_text(enc))
        self.query_one(LatencyTable).show(enc)
        self.query_one("#live-transcript", TranscriptView).show(enc.turns if enc else [], empty="no call yet")
        pane = self.query_one("#live-transcript-pane", Pane)
        if enc is not None and enc.status == "running":
            pane.scroll_end(animate=False)
