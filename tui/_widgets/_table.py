"""The shared base of the dashboard's tables (encounter list, reliability, latencies).

A ``RowTable`` is a ``DataTable`` with a row cursor, zebra stripes, ``j``/``k`` movement, a border
that lights up with focus, and columns declared once in ``COLUMNS``. Rows added with a key are
updated in place: ``upsert_row`` rewrites a row only when its signature changed, so a poll that
touches a few encounters of thousands costs a few cell updates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from textual.binding import Binding
from textual.widgets import DataTable


class RowTable(DataTable[Any]):
    """A row-cursor table with declared columns and rows keyed by id, updated in place.

    Subclasses set ``COLUMNS`` and their own height (and extra bindings, such as ``enter``).
    """

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]
    DEFAULT_CSS = """
    RowTable {
        border: round $panel-lighten-2;
    }
    RowTable:focus {
        border: round $accent;
    }
    """
    COLUMNS: tuple[tuple[str, str, int], ...] = ()
    """(label, column key, width) of every column, in order."""

    def __init__(self, **kwargs: Any) -> None:
        """Create the table.

        Args:
            **kwargs: Passed to ``DataTable`` (``id``, ``classes``, ...).
        """
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._signatures: dict[str, tuple[Any, ...]] = {}

    def on_mount(self) -> None:
        for label, key, width in self.COLUMNS:
            self.add_column(label, key=key, width=width)

    def upsert_row(self, key: str, signature: tuple[Any, ...], cells: Callable[[], Sequence[Any]]) -> None:
        """Add the row ``key``, or rewrite its cells, unless it is shown with the same signature.

        Args:
            key: The row key.
            signature: What the row shows, comparable: the row is rewritten only when it changed.
            cells: Makes the row's cells, one per column of ``COLUMNS``; called only when needed.
        """
        old = self._signatures.get(key)
        if old == signature:
            return
        values = cells()
        if old is None:
            self.add_row(*values, key=key)
        else:
            for (_, column, _), value in zip(self.COLUMNS, values, strict=True):
                self.update_cell(key, column, value)
        self._signatures[key] = signature

    def has(self, key: str) -> bool:
        """Whether the row ``key`` is shown."""
        return key in self._signatures

    def drop(self, key: str) -> None:
        """Remove the row ``key`` if it is shown."""
        if self._signatures.pop(key, None) is not None:
            self.remove_row(key)

    def reset_rows(self) -> None:
        """Remove every row (the columns stay)."""
        self.clear()
        self._signatures.clear()

    def keys(self) -> list[str]:
        """The keys of the rows, in the order shown."""
        return [str(row.key.value) for row in self.ordered_rows]

    def highlighted_key(self) -> str | None:
        """The key of the row under the cursor; None when the table is empty."""
        if not self.row_count:
            return None
        try:
            return str(self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value)
        except Exception:  # an empty or just-cleared table
            return None

    def move_to(self, key: str) -> bool:
        """Put the cursor on the row ``key``.

        Args:
            key: The row key.

        Returns:
            Whether the row is shown (else the cursor did not move).
        """
        if not self.has(key):
            return False
        self.move_cursor(row=self.get_row_index(key))
        return True
