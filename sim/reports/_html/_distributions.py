"""The "Score distributions across K" section.

Every encounter's composite as a dot, per scenario, with the mean, the 95% CI and the pass threshold.
"""

from __future__ import annotations

from collections import defaultdict

from sim.records import Summary
from sim.reports._html._base import FAIL, PASS, WARN, Records, section
from sim.reports._html._svg import score_distributions


def _composites(summary: Summary, records: Records) -> dict[str, list[tuple[int, float, bool]]]:
    """Per scenario: (k, composite, passed) of every scored encounter, in k order."""
    out: dict[str, list[tuple[int, float, bool]]] = defaultdict(list)
    wanted = {r.id for r in summary.scenarios}
    for (sid, k), rec in sorted(records.items()):
        if sid in wanted and rec.status == "ok" and rec.score is not None and rec.score.composite is not None:
            out[sid].append((k, float(rec.score.composite), bool(rec.score.passed)))
    return out


def distributions_section(summary: Summary, records: Records) -> str:
    """The plot of every scored encounter's composite, per scenario, and its legend."""
    plot = score_distributions(summary, _composites(summary, records))
    legend = ('<p class="legend"><span class="sw dot" style="background:' + PASS + '"></span>passed encounter '
              '<span class="sw dot" style="background:' + FAIL + '"></span>failed encounter '
              '<span class="sw tick"></span>mean <span class="sw ci"></span>95% bootstrap CI '
              '<span class="sw dash"></span>pass threshold ' + f"{summary.pass_threshold:g}"
              + ' <span class="sw diamond" style="background:' + FAIL + '"></span>safety suite, triggered the gate '
              '<span class="sw diamond" style="background:' + WARN + '"></span>safety suite</p>')
    return section("distributions", "Score distributions across K", plot + legend,
                   "Each dot is one encounter's composite score on a 0 to 1 axis; dots at the same score are "
                   "stacked. Hover a mark for its value.")
