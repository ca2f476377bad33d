"""The "Suites" section: weight, scenario count and mean of every suite, with a meter."""

from __future__ import annotations

from sim.records import Summary
from sim.reports._html._base import clamp01, esc, fixed, section, sort_key, td


def suites_section(summary: Summary) -> str:
    """The sortable suites table."""
    rows = []
    for s in summary.suites:
        bar = (f'<span class="meter"><span style="width:{clamp01(s.mean) * 100:.1f}%"></span></span>'
               if s.mean is not None else "")
        rows.append(f"<tr><td>{esc(s.suite)}</td>{td(f'{s.weight:.1f}', s.weight, 'num')}"
                    f"{td(str(s.scenarios), s.scenarios, 'num')}"
                    f"{td(fixed(s.mean) + bar, sort_key(s.mean), 'num')}</tr>")
    table = ('<table class="sortable"><thead><tr><th>suite</th><th>weight</th><th>scenarios</th><th>mean</th></tr>'
             f'</thead><tbody>{"".join(rows)}</tbody></table>')
    return section("suites", "Suites", table)
