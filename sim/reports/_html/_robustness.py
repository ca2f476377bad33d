"""The "Persona robustness" section of a persona sweep (the cells of report.md); absent for a run under one persona."""

from __future__ import annotations

from sim.records import Summary
from sim.reports._cells import ROBUSTNESS_INTRO, robustness_header, robustness_notes, robustness_rows
from sim.reports._html._base import esc, section, table_head, table_rows


def robustness_section(summary: Summary) -> str:
    """Per scenario and overall: each persona's mean [CI], mean across, worst persona and drop from default."""
    pr = summary.persona_robustness
    if pr is None:
        return ""
    rows = [[c.strip("*") for c in row] for row in robustness_rows(pr)]  # the overall row's markdown bold
    notes = "".join(f'<p class="intro">{esc(n)}</p>' for n in robustness_notes(pr))
    body = (f'<table class="compact sortable"><thead><tr>{table_head(robustness_header(pr))}</tr></thead>'
            f"<tbody>{table_rows(rows)}</tbody></table>{notes}")
    return section("persona-robustness", "Persona robustness", body,
                   esc(f"Personas: {', '.join(pr.personas)}. {ROBUSTNESS_INTRO}"))
