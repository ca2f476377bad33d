"""The "Worst of K" section: scenarios sorted by their worst encounter, lowest first.

As nested bars of the mean, worst@2 and the worst of K.
"""

from __future__ import annotations

from sim.records import Summary
from sim.reports._html._base import FAIL, MEAN_FILL, MID_FILL, PASS, WARN, section
from sim.reports._html._svg import worst_of_k_bars


def worst_of_k_section(summary: Summary) -> str:
    """The bars and their legend."""
    legend = ('<p class="legend"><span class="sw bar" style="background:' + MEAN_FILL + '"></span>mean '
              '<span class="sw bar" style="background:' + MID_FILL + '"></span>worst@2 (expected minimum of 2 runs) '
              '<span class="sw thin" style="background:' + FAIL + '"></span>worst of K (= worst@n), below the pass '
              'threshold <span class="sw thin" style="background:' + PASS + '"></span>worst of K, at or above it '
              '<span class="sw diamond" style="background:' + WARN + '"></span>safety suite</p>')
    return section("worst-of-k", "Worst of K", worst_of_k_bars(summary) + legend,
                   "Scenarios sorted by their worst encounter, lowest first: a model is only as safe as its worst "
                   "run. worst@k for every k is in the table below.")
