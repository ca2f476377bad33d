"""The encounter list: one row per (scenario, k), updated in place."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from tui._format import marker_text, passed_text, score, status_text
from tui._state import Encounter


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
