"""The "Voice measures" section of report.html: the calls' clinical voice measures (report.md's lines and rows)."""

from __future__ import annotations

from sim.records import Summary
from sim.reports._cells import VOICE_HEADER, voice_measure_lines, voice_measure_rows
from sim.reports._html._base import esc, section, table_head, table_rows


def voice_section(summary: Summary) -> str:
    """The section; empty for a run without calls."""
    vm = summary.voice_measures
    if vm is None:
        return ""
    items = "".join(f"<li>{esc(line[2:])}</li>" for line in voice_measure_lines(vm) if line.startswith("- "))
    return section("voice-measures", "Voice measures",
                   f'<ul>{items}</ul><div class="tablewrap"><table class="compact"><thead><tr>'
                   f"{table_head(VOICE_HEADER)}</tr></thead><tbody>{table_rows(voice_measure_rows(vm))}</tbody>"
                   "</table></div>")
