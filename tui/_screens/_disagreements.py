"""The judge disagreements screen: per failure-mode judge, the traces where judge and people disagree."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Static

from review import parse_trace_id
from sim.records import JudgeValidation
from tui._screens._base import BaseScreen
from tui._widgets import DisagreementTable, StatusLine, disagreement_rows, validation_summary


class DisagreementScreen(BaseScreen):
    """Per failure-mode judge (judge_validation.json), the dev and test traces where judge and people disagree.

    People's label is derived from the annotations now (``review.mode_label``); the judge said the opposite.
    Enter opens the trace's transcript (the encounter screen).
    """

    AUTO_FOCUS = "#disagreements"
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]
    DEFAULT_CSS = """
    DisagreementScreen #dis-summary {
        height: auto;
        max-height: 8;
        padding: 0 1;
        border: round $secondary;
    }
    """

    def __init__(self, validations: list[JudgeValidation]) -> None:
        super().__init__()
        self.validations = validations

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="dis-summary")
        yield DisagreementTable(id="disagreements")
        yield StatusLine(id="status")
        yield Footer()

    @property
    def table(self) -> DisagreementTable:
        return self.query_one(DisagreementTable)

    def on_mount(self) -> None:
        self.query_one("#dis-summary", Static).border_title = "Judges against people (judge_validation.json)"
        self.render_all()

    def on_screen_resume(self) -> None:
        if self.is_mounted:  # labels may have changed in the encounter screen
            self.render_all()

    def render_all(self) -> None:
        self.query_one("#dis-summary", Static).update(validation_summary(self.validations))
        rows = disagreement_rows(self.validations, self.dash.saved)
        table = self.table
        for row in rows:
            table.upsert(row)
        table.border_title = f"Disagreements {len(rows)}: enter opens the transcript"

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        key = parse_trace_id(str(event.row_key.value).rsplit("|", 1)[-1])
        if key is None or key not in self.dash.state.encounters:
            self.dash.set_status(f"{event.row_key.value}: not an encounter of this run")
            return
        self.dash.open_encounter(key)
