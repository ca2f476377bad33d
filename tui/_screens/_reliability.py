"""The reliability screen: per scenario the K composites, mean and worst."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Footer, Header, Sparkline, Static

from review import PollResult
from tui._screens._base import BaseScreen
from tui._widgets import ReliabilityTable, StatusLine, reliability_detail, reliability_row


class ReliabilityScreen(BaseScreen):
    """Per scenario the K composites as a sparkline, mean and worst; enter opens the worst transcript."""

    AUTO_FOCUS = "#reliability"
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]
    DEFAULT_CSS = """
    ReliabilityScreen #rel-box {
        height: auto;
        border: round $secondary;
        padding: 0 1;
    }
    ReliabilityScreen #rel-detail {
        height: auto;
    }
    ReliabilityScreen #rel-spark {
        height: 2;
        margin-top: 1;
    }
    """

    def compose(self) -> ComposeResult:
        yield Header()
        yield ReliabilityTable(id="reliability")
        with Vertical(id="rel-box"):
            yield Static(id="rel-detail")
            yield Sparkline([], id="rel-spark")
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(ReliabilityTable).border_title = "Reliability: K composites per scenario (0 ▁ … █ 1)"
        self.query_one("#rel-box", Vertical).border_title = "Scenario: its K composites (relative scale)"
        self.refresh_state(PollResult(reset=True))

    def _suite(self, scenario_id: str) -> str | None:
        summary = self.dash.state.summary
        if summary is not None:
            for s in summary.scenarios:
                if s.id == scenario_id:
                    return s.suite
        return self.dash.catalog.suite_of(scenario_id)

    def refresh_state(self, res: PollResult) -> None:
        state = self.dash.state
        table = self.query_one(ReliabilityTable)
        if res.reset or res.summary or not table.row_count:
            sids = state.scenario_ids
        else:
            sids = list(dict.fromkeys(key[0] for key in (*res.new, *res.changed)))
        for sid in sids:
            table.upsert(sid, reliability_row(state, sid, self._suite(sid)))
        if sids:
            self._detail()

    def _detail(self) -> None:
        sid = self.query_one(ReliabilityTable).highlighted_key()
        detail = self.query_one("#rel-detail", Static)
        spark = self.query_one("#rel-spark", Sparkline)
        if sid is None:
            detail.update(Text("no scenario has started yet", style="dim"))
            spark.data = []
            return
        detail.update(reliability_detail(self.dash.state, sid))
        data = [e.composite or 0.0 for e in self.dash.state.scenario_encounters(sid) if e.status == "done"]
        spark.styles.width = min(80, max(8, 4 * len(data)))
        spark.data = data

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        sid = str(event.row_key.value)
        worst = self.dash.state.worst_key(sid)
        if worst is None:
            self.dash.set_status(f"{sid}: no scored encounter yet")
            return
        self.dash.open_encounter(worst)
