"""The encounter list: one row per (scenario, k), updated in place."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding

from review import Encounter
from tui._format import marker_text, passed_text, score, status_text
from tui._widgets._table import RowTable


class EncounterTable(RowTable):
    """Scenario x k rows, updated in place; row keys are trace ids."""

    BINDINGS = [
        Binding("enter", "select_cursor", "Open"),
    ]
    DEFAULT_CSS = """
    EncounterTable {
        height: 1fr;
    }
    """
    COLUMNS: tuple[tuple[str, str, int], ...] = (
        ("scenario", "scenario", 34), ("k", "k", 3), ("status", "status", 8), ("composite", "composite", 9),
        ("result", "result", 6), ("turns", "turns", 5), ("worst", "worst", 8), ("safety", "gate", 8),
        ("review", "review", 10),
    )

    @staticmethod
    def signature(enc: Encounter, review: str) -> tuple[Any, ...]:
        """What the row of ``enc`` shows, comparable (its row is rewritten only when this changed).

        Args:
            enc: The encounter.
            review: Its review mark (``pass``, ``fail*``, ``noted``, or empty).

        Returns:
            The row's signature.
        """
        return (enc.status, enc.composite, enc.passed, len(enc.turns), enc.worst, enc.marker, review)

    @staticmethod
    def cells(enc: Encounter, review: str) -> list[Any]:
        """The cells of the row of ``enc``, one per column.

        Args:
            enc: The encounter.
            review: Its review mark (``pass``, ``fail*``, ``noted``, or empty).

        Returns:
            The cells, in the order of ``COLUMNS``.
        """
        review_style = "green" if review.startswith("pass") else "red" if review.startswith("fail") else "yellow"
        return [
            enc.scenario_id, str(enc.k), status_text(enc.status), Text(score(enc.composite), justify="right"),
            passed_text(enc), Text(str(len(enc.turns)), justify="right"),
            Text("▼ worst", style="bold yellow") if enc.worst else Text(""),
            marker_text(enc.marker),
            Text(review, style=review_style),
        ]

    def upsert(self, enc: Encounter, review: str) -> None:
        """Show the row of ``enc`` (keyed by its trace id), or update it if it changed.

        Args:
            enc: The encounter.
            review: Its review mark (``pass``, ``fail*``, ``noted``, or empty).
        """
        self.upsert_row(enc.trace_id, self.signature(enc, review), lambda: self.cells(enc, review))
