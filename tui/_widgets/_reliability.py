"""The reliability view: per scenario its K composites (sparkline, mean, worst) and the detail of one scenario."""

from __future__ import annotations

import statistics
from typing import Any

from rich.text import Text
from textual.binding import Binding

from review import RunView
from tui._format import marker_text, score, spark
from tui._widgets._table import RowTable


class ReliabilityTable(RowTable):
    """One row per scenario: its K composites as a sparkline, mean and worst; row keys are scenario ids."""

    BINDINGS = [
        Binding("enter", "select_cursor", "Open worst"),
    ]
    DEFAULT_CSS = """
    ReliabilityTable {
        height: 1fr;
    }
    """
    COLUMNS: tuple[tuple[str, str, int], ...] = (
        ("scenario", "scenario", 34), ("suite", "suite", 9), ("K", "n", 5), ("composites", "spark", 12),
        ("mean", "mean", 6), ("worst", "worst", 6), ("worst k", "worst_k", 7), ("safety", "gate", 8),
    )

    def upsert(self, scenario_id: str, row: list[Any]) -> None:
        """Show the scenario's row, or update it if it changed.

        Args:
            scenario_id: The scenario (the row key).
            row: Its cells (``reliability_row``), one per column.
        """
        self.upsert_row(scenario_id, tuple(str(c) for c in row), lambda: row)


def reliability_row(state: RunView, scenario_id: str, suite: str | None) -> list[Any]:
    """The reliability table's row of one scenario.

    Args:
        state: The followed run.
        scenario_id: The scenario.
        suite: Its suite, or None when unknown.

    Returns:
        The cells: scenario, suite, scored/K, sparkline of the composites, mean, worst, worst k, marker.
    """
    encs = state.scenario_encounters(scenario_id)
    values = [e.composite if e.status == "done" else None for e in encs]
    scored = [v for v in values if v is not None]
    worst = state.worst_key(scenario_id)
    marker = ("gate" if scenario_id in state.gate_reasons or any(e.gate for e in encs)
              else "safety" if any(e.safety_failures for e in encs) else None)
    k_total = state.planned_for(scenario_id)
    return [
        scenario_id, suite or "—", f"{len(scored)}/{k_total if k_total is not None else len(encs)}",
        Text(spark(values), style="cyan"), Text(score(state.scenario_mean(scenario_id), 2), justify="right"),
        Text(score(min(scored), 2) if scored else "—", justify="right"),
        Text(str(worst[1]) if worst else "—", justify="right"),
        marker_text(marker),
    ]


def reliability_detail(state: RunView, scenario_id: str) -> Text:
    """The detail of one scenario under the reliability table.

    Args:
        state: The followed run.
        scenario_id: The scenario.

    Returns:
        Every k's composite (or status), their mean and spread, and which k is the worst.
    """
    encs = state.scenario_encounters(scenario_id)
    text = Text(scenario_id, style="bold")
    text.append("   ")
    for e in encs:
        text.append(f"k{e.k} ")
        text.append(score(e.composite, 2) if e.status == "done" else e.status, style="bold")
        text.append("  ")
    scored = [e.composite for e in encs if e.status == "done" and e.composite is not None]
    if len(scored) >= 2:
        text.append(f"  mean {statistics.fmean(scored):.2f} · sd {statistics.pstdev(scored):.2f}", style="dim")
    worst = state.worst_key(scenario_id)
    if worst is not None:
        text.append(f"\nworst: k={worst[1]} — enter opens its transcript", style="yellow")
    return text
