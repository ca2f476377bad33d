"""The "Judge agreement" section (``sim.records.JudgeSummary``).

Fleiss' kappa between judges, rubric and trust scores, criteria without a verdict, the judges used and
excluded, warnings, and bars of the per-axis, per-theme, per-tag and trust-category scores.
"""

from __future__ import annotations

from collections.abc import Mapping

from sim.records import JudgeSummary
from sim.reports._html._base import esc, finite, section, sort_key, td, value_text
from sim.reports._html._svg import axis_bars

KAPPA_BANDS = ((0.0, "poor"), (0.2, "slight"), (0.4, "fair"), (0.6, "moderate"), (0.8, "substantial"),
               (1.0001, "almost perfect"))


def _kappa_band(k: float) -> str:
    if k < 0:
        return "poor"
    for upper, name in KAPPA_BANDS[1:]:
        if k <= upper:
            return name
    return "almost perfect"


def _breakdown(scores: Mapping[str, float], title: str) -> str:
    """Bars of one breakdown; a table instead when no score is a number (NaN) to draw."""
    values = {name: finite(v) for name, v in scores.items()}
    if all(v is None for v in values.values()):
        rows = "".join(f"<tr><td>{esc(a)}</td>{td(value_text(v), sort_key(v), 'num')}</tr>" for a, v in scores.items())
        return (f'<h3>{esc(title)}</h3><table class="sortable"><thead><tr><th>axis</th><th>value</th></tr></thead>'
                f"<tbody>{rows}</tbody></table>")
    return f"<h3>{esc(title)}</h3>{axis_bars(values, title)}"


def judge_section(judge: JudgeSummary | None) -> str:
    """The section; empty for a run without a judge."""
    if judge is None:
        return ""
    kappa = finite(judge.fleiss_kappa)
    over = f" over {judge.kappa_items} criterion verdicts" if judge.kappa_items else ""
    band = f" ({_kappa_band(kappa)})" if kappa is not None else " (needs two or more judges)"
    cls = " bad" if judge.no_verdicts else ""
    cards = [
        f'<div class="card"><div class="label">Fleiss&#39; kappa</div><div class="midnum">{value_text(kappa)}'
        f'</div><div class="sub">agreement between judges{over}{band}</div></div>',
        f'<div class="card"><div class="label">rubric score</div><div class="midnum">'
        f'{value_text(judge.rubric_score)}</div><div class="sub">HealthBench formula, clipped mean</div></div>',
        f'<div class="card"><div class="label">trust score</div><div class="midnum">'
        f'{value_text(judge.trust_score)}</div><div class="sub">mean of trust categories, 0 to 1</div></div>',
        f'<div class="card"><div class="label">no verdict</div><div class="midnum{cls}">{judge.no_verdicts}'
        f'</div><div class="sub">criteria without a usable verdict across {judge.encounters_judged} judged '
        'encounters</div></div>',
    ]
    parts = [f'<div class="panel cards">{"".join(cards)}</div>']
    if judge.judges or judge.excluded:
        used = ", ".join(f"<code>{esc(j)}</code>" for j in judge.judges) or "none"
        line = f"<p><b>Judges</b>: {used}</p>"
        if judge.excluded:
            line += ('<table class="compact"><thead><tr><th>excluded judge</th><th>why</th></tr></thead><tbody>'
                     + "".join(f"<tr><td><code>{esc(j)}</code></td><td>{esc(why)}</td></tr>"
                               for j, why in judge.excluded.items())
                     + "</tbody></table>")
        parts.append(line)
    if judge.warnings:
        parts.append('<div class="warnbox"><b>Warnings</b><ul>' + "".join(f"<li>{esc(w)}</li>" for w in judge.warnings)
                     + "</ul></div>")
    plots = [f"<div>{_breakdown(scores, title)}</div>"
             for scores, title in ((judge.axis_scores, "Rubric score per axis"),
                                   (judge.theme_scores, "Rubric score per theme"),
                                   (judge.tag_scores, "Rubric score per criterion tag"),
                                   (judge.trust_categories, "Trust per category"))
             if scores]
    if plots:
        parts.append(f'<div class="split">{"".join(plots)}</div>')
    return section("judge", "Judge agreement", "".join(parts))
