"""The "Triage accuracy" section.

Escalation accuracy as symptom-checker studies report triage, with the same tables and notes as report.md.
"""

from __future__ import annotations

from sim.records import Summary
from sim.reports._cells import triage_accuracy_intro, triage_accuracy_notes, triage_accuracy_tables
from sim.reports._html._base import esc, section, table_head, table_rows


def triage_accuracy_section(summary: Summary) -> str:
    """Escalation accuracy as symptom-checker studies report triage (the same cells as report.md)."""
    ta = summary.triage_accuracy
    if ta is None:
        return ""
    if ta.scored == 0:
        return section("triage-accuracy", "Triage accuracy",
                       "<p>No encounter with an escalation target was scored.</p>", esc(triage_accuracy_intro(ta)))
    parts = []
    for caption, header, rows in triage_accuracy_tables(ta):
        head = table_head(header)
        body = table_rows(rows)
        parts.append(f'<h3>{esc(caption)}</h3><table class="compact"><thead><tr>{head}</tr></thead>'
                     f"<tbody>{body}</tbody></table>")
    parts += [f"<p>{esc(note)}</p>" for note in triage_accuracy_notes(ta)]
    return section("triage-accuracy", "Triage accuracy", "".join(parts), esc(triage_accuracy_intro(ta)))
