"""The "Failure modes" section: the binary failure-mode judges' raw and corrected rates (the cells of report.md)."""

from __future__ import annotations

from sim.records import Summary
from sim.reports._cells import FAILURE_RATE_HEADER, FAILURE_RATE_INTRO, failure_rate_rows
from sim.reports._html._base import esc, section, table_head, table_rows


def failure_rates_section(summary: Summary) -> str:
    """Raw and corrected failure rates per mode of a run judged with ``--failure-judges``; empty without them."""
    rows = failure_rate_rows(summary)
    if not rows:
        return ""
    body = (f'<table class="compact"><thead><tr>{table_head(FAILURE_RATE_HEADER)}</tr></thead>'
            f"<tbody>{table_rows(rows)}</tbody></table>")
    return section("failure-modes", "Failure modes", body, esc(FAILURE_RATE_INTRO))
