"""The "Live call" section of report.html.

Voice-to-voice latencies, overlaps and silences (report.md's lines), and the per-turn timeline of every call.
"""

from __future__ import annotations

from sim.records import Summary
from sim.reports._cells import LIVE_HEADER, live_lines, live_rows
from sim.reports._html._base import Records, esc, section, table_head, table_rows


def live_section(summary: Summary, records: Records) -> str:
    """The section; empty for a run without live calls."""
    live = summary.live
    if live is None:
        return ""
    facts = "".join(f"<li>{esc(line[2:])}</li>" for line in live_lines(live, {})[2:5])
    head = table_head(LIVE_HEADER)
    body = table_rows(live_rows(records))
    return section("live", "Live call", f'<ul>{facts}</ul><table class="compact"><thead><tr>{head}</tr></thead>'
                                        f"<tbody>{body}</tbody></table>")
