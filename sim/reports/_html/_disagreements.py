"""The "Flagged disagreements" section (``Summary.disagreements``).

Encounters where the deterministic path and the judge disagree, as a scatter of the two scores and a
table, largest difference first.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.records import Disagreement
from sim.reports._html._base import enc_anchor, esc, finite, section, sort_key, td, value_text
from sim.reports._html._svg import agreement_scatter


def disagreements_section(items: Sequence[Disagreement], *, anchors: set[str], extra: str = "") -> str:
    """The section; an encounter whose anchor is in ``anchors`` links to its block.

    ``extra`` (the flagged encounters' blocks) follows the table. Empty when nothing was flagged.
    """
    if not items:
        return ""
    rows = sorted(items, key=lambda it: (-abs(finite(it.diff) or 0.0), it.scenario_id, it.k))
    trs = []
    for it in rows:
        where = f"{esc(it.scenario_id)} k={it.k}"
        if enc_anchor(it.scenario_id, it.k) in anchors:
            where = f'<a href="#{enc_anchor(it.scenario_id, it.k)}">{where}</a>'
        diff = finite(it.diff)
        trs.append(f"<tr><td>{where}</td>{td(value_text(it.deterministic), sort_key(it.deterministic), 'num')}"
                   f"{td(value_text(it.judge), sort_key(it.judge), 'num')}"
                   f"{td(value_text(it.diff), sort_key(abs(diff) if diff is not None else None), 'num')}</tr>")
    table = ('<table class="sortable"><thead><tr><th>encounter</th><th>deterministic</th><th>judge</th>'
             '<th>diff (judge &minus; deterministic)</th></tr></thead>'
             f'<tbody>{"".join(trs)}</tbody></table>')
    points = [(it.scenario_id, it.k, d, j) for it in rows
              if (d := finite(it.deterministic)) is not None and (j := finite(it.judge)) is not None]
    plot = agreement_scatter(points) if points else ""
    return section("disagreements", f"Flagged disagreements ({len(rows)})",
                   f'<div class="split">{plot}{table}</div>{extra}',
                   "Encounters where the deterministic score and the judge's score differ enough to be flagged; "
                   "points off the dashed diagonal disagree.")
