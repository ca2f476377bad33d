"""The main screen: the run overview on top and the encounter list below it, with its filter."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Header, Input

from review import Key, PollResult, parse_trace_id
from tui._format import EncounterFilter
from tui._screens._base import BaseScreen
from tui._widgets import EncounterTable, Overview, StatusLine

FILTER_HELP = ("filter: words of the scenario id · status:error · gate · safety · fail · pass · worst · k:N · "
               "review:none")


class MainScreen(BaseScreen):
    """The run overview on top and the encounter list below it."""

    AUTO_FOCUS = "#encounters"
    BINDINGS = [
        Binding("slash", "filter", "Filter"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("r", "app.reliability", "Reliability"),
        Binding("l", "app.live", "Live"),
        Binding("g", "app.gate", "Gate"),
        Binding("c", "app.coding", "Coding"),
    ]
    DEFAULT_CSS = """
    MainScreen #filter {
        display: none;
    }
    MainScreen #filter.shown {
        display: block;
    }
    """

    INSTANT_FILTER_ROWS = 1000
    """Up to this many encounters the list filters as you type; above, when typing pauses or on enter."""
    FILTER_PAUSE_S = 0.3

    def __init__(self) -> None:
        super().__init__()
        self.filter = EncounterFilter()
        self._filter_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Overview(id="overview")
        yield EncounterTable(id="encounters")
        yield Input(placeholder=FILTER_HELP, id="filter")
        yield StatusLine(id="status")
        yield Footer()

    @property
    def table(self) -> EncounterTable:
        return self.query_one(EncounterTable)

    def on_mount(self) -> None:
        self.query_one(EncounterTable).border_title = "Encounters"
        self.refresh_state(PollResult(reset=True))

    def refresh_state(self, res: PollResult) -> None:
        app = self.dash
        state = app.state
        self.query_one(Overview).show(state, app.overview_renderable())
        table = self.table
        if res.reset:
            self._rebuild()
            return
        verdict_of = app.verdict_of
        for key in (*res.new, *res.changed):
            enc = state.encounters[key]
            if self.filter.matches(enc, verdict_of):
                table.upsert(enc, app.review_mark(enc.trace_id))
            elif table.has(enc.trace_id):
                table.drop(enc.trace_id)
        self._title()

    def refresh_rows(self, keys: list[Key]) -> None:
        """Re-render the rows of ``keys`` (their review mark changed)."""
        self.refresh_state(PollResult(changed=set(keys)))

    def _rebuild(self) -> None:
        app = self.dash
        table = self.table
        keep = table.highlighted_key()
        table.reset_rows()
        verdict_of = app.verdict_of
        for key in app.state.order:
            enc = app.state.encounters[key]
            if self.filter.matches(enc, verdict_of):
                table.upsert(enc, app.review_mark(enc.trace_id))
        if keep is not None:
            table.move_to(keep)
        self._title()

    def _title(self) -> None:
        table = self.table
        total = len(self.dash.state.order)
        shown = table.row_count
        title = f"Encounters {shown}" if not self.filter else f"Encounters {shown} of {total} · /{self.filter.text}"
        if table.border_title != title:
            table.border_title = title

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("shown")
        box.value = self.filter.text
        box.focus()

    def action_clear_filter(self) -> None:
        if self._filter_timer is not None:
            self._filter_timer.stop()
        box = self.query_one("#filter", Input)
        if box.has_class("shown") or self.filter:
            box.remove_class("shown")
            box.value = ""
            self.set_filter("")
            self.table.focus()

    def set_filter(self, text: str) -> None:
        new = EncounterFilter(text.strip())
        if new != self.filter:
            self.filter = new
            self._rebuild()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "filter":
            return
        if len(self.dash.state.order) <= self.INSTANT_FILTER_ROWS:
            self.set_filter(event.value)
            return
        if self._filter_timer is not None:  # a long list: filter once typing pauses
            self._filter_timer.stop()
        self._filter_timer = self.set_timer(self.FILTER_PAUSE_S, lambda: self.set_filter(event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            if self._filter_timer is not None:
                self._filter_timer.stop()
            self.set_filter(event.value)
            if not self.filter:
                event.input.remove_class("shown")
            self.table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        key = parse_trace_id(str(event.row_key.value))
        if key is not None:
            self.dash.open_encounter(key)
