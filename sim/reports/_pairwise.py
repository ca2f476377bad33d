"""Render a pairwise ranking (``encsim pairwise``): the Bradley-Terry table, one row per model (run).

The report itself (judges' votes, outcomes, the ranking with bootstrap CIs) is built by ``sim.pairwise`` with the
statistics of ``scorers``; the table is redacted and neutralised (``sim.records.clean``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sim.records import clean

if TYPE_CHECKING:  # the report's type only: importing sim.pairwise at run time would load the judges' clients
    from sim.pairwise import PairwiseReport


def render_pairwise(report: PairwiseReport) -> str:
    """Render a pairwise report as plain text (what ``encsim pairwise`` prints).

    Args:
        report: The comparisons and the ranking, from ``sim.pairwise.pairwise``.

    Returns:
        The header line, the ranking table (strongest first) and one line per skipped pair of runs, with no
        trailing newline, redacted and neutralised.
    """
    lines = [f"pairwise: {len(report.outcomes)} comparisons, {report.trials} trial(s) x 2 orders per judge, "
             f"judges: {', '.join(report.judges)}", "",
             f"{'model (run)':50} {'BT strength':>11}  {'95% CI':>17}  {'wins':>6}/{'n':<4}"]
    for r in report.ranking:
        lines.append(f"{r.model[:50]:50} {r.strength:>+11.3f}  [{r.ci95[0]:+.2f}, {r.ci95[1]:+.2f}]  "
                     f"{r.wins:>6.1f}/{r.comparisons:<4}")
    lines += [f"skipped: {s}" for s in report.skipped]
    return clean("\n".join(lines))
