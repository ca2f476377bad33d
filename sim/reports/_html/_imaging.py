"""The "Imaging" section.

One row per imaging item encounter (the cells of report.md), and the items that did not apply to a
text-only model.
"""

from __future__ import annotations

from sim.records import Summary
from sim.reports._cells import IMAGING_HEADER, imaging_rows
from sim.reports._html._base import Records, esc, section, table_head, table_rows


def imaging_section(summary: Summary, records: Records) -> str:
    """The section; empty when the run has no imaging item encounter."""
    rows = imaging_rows(records)
    if not rows:
        return ""
    na = summary.not_applicable
    intro = (f"<p>Not applicable to this text-only model (not shown, not scored, not gated): {esc(', '.join(na))}</p>"
             if na else "")
    head = table_head(IMAGING_HEADER)
    body = table_rows(rows)
    return section("imaging", "Imaging", f'{intro}<table class="compact"><thead><tr>{head}</tr></thead>'
                                         f"<tbody>{body}</tbody></table>")
