"""The coding screen's tables: the failing annotations to code, and the failure modes to code them with."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding

from tui._widgets._table import RowTable

SUGGESTED_STYLE = "italic magenta"
"""How a judge's suggested mode is shown: never like a code (bold)."""
SHORT_SEVERITY = {"clinician_would_notice": "notice", "subtle_issue": "subtle", "cosmetic": "cosmetic"}


class CodingTable(RowTable):
    """One row per failing annotation (latest per trace id): trace id, severity, failure mode, notes.

    An uncoded one with a judge's suggestion shows "suggested: <mode>" in ``SUGGESTED_STYLE`` instead of "uncoded".
    """

    BINDINGS = [
        Binding("enter", "select_cursor", "Pick mode"),
    ]
    DEFAULT_CSS = """
    CodingTable {
        height: 1fr;
        width: 1fr;
    }
    """
    COLUMNS: tuple[tuple[str, str, int], ...] = (
        ("trace", "trace", 18), ("severity", "severity", 8), ("failure mode", "mode", 26), ("notes", "notes", 60),
    )

    def upsert(self, trace_id: str, severity: str | None, mode: str | None, notes: str,
               suggested: str | None = None) -> None:
        """Show the row of ``trace_id``, or update it if it changed.

        Args:
            trace_id: The trace (the row key).
            severity: Its severity tag, or None.
            mode: Its failure mode, or None while uncoded.
            notes: The reviewer's notes.
            suggested: A judge's suggested mode for an uncoded trace: shown marked, in its own style.
        """
        if mode:
            shown_mode = Text(mode, style="bold")
        elif suggested:
            shown_mode = Text(f"suggested: {suggested}", style=SUGGESTED_STYLE)
        else:
            shown_mode = Text("uncoded", "dim")
        cells: list[Any] = [trace_id, SHORT_SEVERITY.get(severity or "", severity or ""), shown_mode,
                            " ".join(notes.split())]
        self.upsert_row(trace_id, (severity, mode, notes, suggested), lambda: cells)


class ModeTable(RowTable):
    """One row per failure mode of the taxonomy: name, how many failing traces have it, definition."""

    BINDINGS = [
        Binding("enter", "select_cursor", "Assign"),
    ]
    DEFAULT_CSS = """
    ModeTable {
        height: 1fr;
        width: 48;
    }
    """
    COLUMNS: tuple[tuple[str, str, int], ...] = (
        ("failure mode", "mode", 20), ("n", "count", 3), ("definition", "definition", 50),
    )

    def upsert(self, name: str, count: int, definition: str, *, in_taxonomy: bool = True) -> None:
        """Show the row of mode ``name``, or update it if it changed.

        Args:
            name: The mode (the row key).
            count: Failing traces coded with it.
            definition: Its definition ("" while there is none).
            in_taxonomy: False for a code the taxonomy file lacks.
        """
        what = definition or ("(not in the taxonomy file)" if not in_taxonomy else "(no definition yet)")
        cells: list[Any] = [name, Text(str(count), justify="right"),
                            Text(what, style="" if definition else "dim")]
        self.upsert_row(name, (count, definition, in_taxonomy), lambda: cells)
