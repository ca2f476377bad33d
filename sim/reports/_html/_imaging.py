"""The "Imaging" section.

Accuracy by image type, one row per imaging item encounter (the cells of report.md), and the items that did not apply
to a text-only model.
"""

from __future__ import annotations

from sim.records import Summary
from sim.reports._cells import (
    IMAGE_ACCURACY_HEADER,
    IMAGING_HEADER,
    image_accuracy_intro,
    image_accuracy_rows,
    imaging_rows,
)
from sim.reports._html._base import Records, esc, section, table_head, table_rows


def imaging_section(summary: Summary, records: Records) -> str:
    """The section; empty when the run has no imaging item encounter and no image accuracy."""
    rows = imaging_rows(records)
    ia = summary.image_accuracy
    if not rows and ia is None:
        return ""
    accuracy = ""
    if ia is not None:
        accuracy = (f"<h3>Accuracy by image type</h3><p>{esc(image_accuracy_intro(ia))}</p>"
                    f'<table class="compact"><thead><tr>{table_head(IMAGE_ACCURACY_HEADER)}</tr></thead>'
                    f"<tbody>{table_rows(image_accuracy_rows(ia))}</tbody></table>")
    if not rows:
        return section("imaging", "Imaging", accuracy)
    na = summary.not_applicable
    intro = (f"<p>Not applicable to this text-only model (not shown, not scored, not gated): {esc(', '.join(na))}</p>"
             if na else "")
    head = table_head(IMAGING_HEADER)
    body = table_rows(rows)
    return section("imaging", "Imaging", f'{accuracy}{intro}<table class="compact"><thead><tr>{head}</tr></thead>'
                                         f"<tbody>{body}</tbody></table>")
