"""The reports of a run and of run comparisons, rendered from the typed models.

- ``report.md`` (``render_report``) and ``report.html`` (``render_html``, ``write_html_report``) of one run, from
  its ``run.json`` (``sim.store.RunMeta``), ``summary.json`` (``sim.records.Summary``) and ``results.jsonl``
  (``sim.store.EncounterRecord``); the cells both show come from one place (``_cells``), so they agree.
  report.html is split by section (``_html``: the page shell, the SVG plots, one module per section).
  ``robustness_cli_lines``: a persona sweep's robustness as the terminal prints it (the same cells).
- ``encsim compare`` (``render_comparison``, ``write_comparison_json``) of a ``scorers.Comparison`` that
  ``sim.compare.compare_runs`` builds.
- ``encsim pairwise`` (``render_pairwise``) of the ``sim.pairwise.PairwiseReport`` that ``sim.pairwise.pairwise``
  builds.

The statistics behind them live in ``scorers``; this package only lays them out.
"""

from __future__ import annotations

from sim.reports._cells import robustness_cli_lines
from sim.reports._compare import render_comparison, write_comparison_json
from sim.reports._html import render_html, write_html_report
from sim.reports._markdown import render_report
from sim.reports._pairwise import render_pairwise

__all__ = [
    "render_comparison", "render_html", "render_pairwise", "render_report", "robustness_cli_lines",
    "write_comparison_json", "write_html_report",
]
