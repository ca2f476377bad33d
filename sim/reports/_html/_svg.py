"""The plots of report.html, drawn here in Python as inline SVG (no script, no fetched asset).

Primitives (``svg``, ``axis``, ``marker``, ``swarm``) and one function per plot: the component means bars, the
per-scenario score distributions across K, the worst-of-K bars, the findings-by-severity stacked bars, the
per-axis bars of the judge path and the deterministic-vs-judge scatter. Each plot function returns the SVG (in
its ``plotwrap`` div where the page scrolls it) and takes the typed values it draws; the sections add legends,
tables and captions around it.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from sim.records import Summary
from sim.reports._html._base import (
    CI_FILL,
    FAIL,
    GRID,
    INK,
    MEAN_FILL,
    MID_FILL,
    MUTED,
    PASS,
    SEVERITY_COLOUR,
    STRIPE,
    WARN,
    clamp01,
    esc,
    fixed,
)


def marker(x: float, y: float, suite: str, triggered: bool) -> str:
    """A small diamond before a safety-suite scenario's name: red when it triggered the gate."""
    if suite != "safety":
        return ""
    colour = FAIL if triggered else WARN
    return (f'<polygon points="{x:.1f},{y - 5:.1f} {x + 5:.1f},{y:.1f} {x:.1f},{y + 5:.1f} {x - 5:.1f},{y:.1f}" '
            f'fill="{colour}"><title>safety suite{" (triggered the gate)" if triggered else ""}</title></polygon>')


def short_label(text: str, limit: int = 34) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def axis(x0: float, width: float, top: float, bottom: float, *, threshold: float | None) -> list[str]:
    """Vertical grid lines at 0, .25, .5, .75, 1 with labels above, and the pass threshold dashed."""
    out = []
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = x0 + t * width
        out.append(f'<line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}" stroke="{GRID}" '
                   'stroke-width="1"/>')
        out.append(f'<text x="{x:.1f}" y="{top - 6:.1f}" text-anchor="middle" class="tick">{t:g}</text>')
    if threshold is not None:
        x = x0 + clamp01(threshold) * width
        out.append(f'<line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}" stroke="{WARN}" '
                   f'stroke-width="1.5" stroke-dasharray="4 3"><title>pass threshold {threshold:g}</title></line>')
    return out


def svg(width: float, height: float, body: Iterable[str], label: str) -> str:
    return (f'<svg class="plot" viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" height="{height:.0f}" '
            f'role="img" aria-label="{esc(label)}">\n' + "\n".join(body) + "\n</svg>")


def swarm(xs: Sequence[float], r: float) -> list[float]:
    """Vertical offsets so dots at (nearly) the same x stack instead of hiding each other.

    Three levels, then overlap (the plot adds a count label to a pile of more than three). Each dot goes to the
    level with the fewest dots already placed within ``2r - 0.5`` of its x (the first such level on a tie). The
    placed x of each level are kept sorted, so that count is two bisections: linear in the dots, not quadratic
    (a scenario run at K = 1000 drew in 0.3 s of its report's 0.6 s when every dot was compared with every other).
    """
    offsets = (0.0, -2 * r, 2 * r)
    reach = 2 * r - 0.5
    placed: tuple[list[float], ...] = ([], [], [])  # per level, the x of its dots, sorted
    out = []
    for x in xs:
        crowds = [bisect.bisect_left(level, x + reach) - bisect.bisect_right(level, x - reach) for level in placed]
        i = crowds.index(min(crowds))
        bisect.insort(placed[i], x)
        out.append(offsets[i])
    return out


def component_bars(components: Mapping[str, float | None]) -> str:
    if not components:
        return ""
    label_w, bar_w, row = 90, 180, 20
    body = []
    for i, (name, value) in enumerate(components.items()):
        y = 4 + i * row
        body.append(f'<text x="{label_w - 6}" y="{y + 12}" text-anchor="end" class="lbl">{esc(name)}</text>')
        body.append(f'<rect x="{label_w}" y="{y + 3}" width="{bar_w}" height="11" fill="{STRIPE}" stroke="{GRID}"/>')
        if value is not None:
            body.append(f'<rect x="{label_w}" y="{y + 3}" width="{clamp01(value) * bar_w:.1f}" height="11" '
                        f'fill="{MID_FILL}"><title>{esc(name)} mean {value:.3f}</title></rect>')
        body.append(f'<text x="{label_w + bar_w + 6}" y="{y + 12}" class="val">{fixed(value)}</text>')
    return svg(label_w + bar_w + 44, 8 + row * len(components), body, "component means")


def score_distributions(summary: Summary, scores: Mapping[str, list[tuple[int, float, bool]]]) -> str:
    """The score distributions plot: one row per scenario.

    Each row has a dot per scored encounter (green passed, red failed), the mean, the 95% CI and the pass
    threshold. ``scores``: per scenario, (k, composite, passed) of its scored encounters.
    """
    gate = set(summary.safety_gate.scenarios)
    x0, width, right, row, top = 262, 640, 130, 28, 28
    total_w = x0 + width + right
    height = top + row * len(summary.scenarios) + 8
    body = [f'<rect x="{x0 - 4}" y="{top + i * row}" width="{width + 8}" height="{row}" fill="{STRIPE}"/>'
            for i in range(0, len(summary.scenarios), 2)]
    body += axis(x0, width, top, height - 8, threshold=summary.pass_threshold)
    for i, r in enumerate(summary.scenarios):
        cy = top + i * row + row / 2
        body.append(marker(10, cy, r.suite, r.id in gate))
        colour = FAIL if r.id in gate else INK
        body.append(f'<text x="20" y="{cy + 4:.1f}" class="lbl" fill="{colour}"><title>{esc(r.id)} ({esc(r.suite)})'
                    f'</title>{esc(short_label(r.id))}</text>')
        if r.ci95:
            lo, hi = x0 + clamp01(r.ci95[0]) * width, x0 + clamp01(r.ci95[1]) * width
            body.append(f'<rect x="{lo - 1:.1f}" y="{cy - 4:.1f}" width="{max(hi - lo, 0) + 2:.1f}" height="8" rx="2" '
                        f'fill="{CI_FILL}" opacity="0.7"><title>95% CI {r.ci95[0]:.3f} to {r.ci95[1]:.3f}'
                        '</title></rect>')
        if r.mean is not None:  # drawn under the dots, taller than a stack of them, so both stay visible
            x = x0 + clamp01(r.mean) * width
            body.append(f'<line x1="{x:.1f}" y1="{cy - 13:.1f}" x2="{x:.1f}" y2="{cy + 13:.1f}" stroke="{INK}" '
                        f'stroke-width="2"><title>mean {r.mean:.3f}</title></line>')
        dots = scores.get(r.id, [])
        xs = [x0 + clamp01(s) * width for _, s, _ in dots]
        for (k, s, ok), x, dy in zip(dots, xs, swarm(xs, 3.5), strict=True):
            body.append(f'<circle cx="{x:.1f}" cy="{cy + dy:.1f}" r="3.5" fill="{PASS if ok else FAIL}" '
                        f'fill-opacity="0.8" stroke="#ffffff" stroke-width="0.8"><title>{esc(r.id)} k={k}: '
                        f'{s:.3f} ({"pass" if ok else "fail"})</title></circle>')
        piles = Counter(round(x) for x in xs)
        for px, n in sorted(piles.items()):
            if n > 3:
                body.append(f'<text x="{px + 7}" y="{cy - 4:.1f}" class="val">\u00d7{n}</text>')
        if r.mean is not None:
            note = f"{r.mean:.2f} \u00b7 {r.pass_count}/{r.k} pass"
        else:
            note = "not scored"
        if r.errors:
            note += f" \u00b7 {r.errors} err"
        body.append(f'<text x="{x0 + width + 12}" y="{cy + 4:.1f}" class="val">{esc(note)}</text>')
    return f'<div class="plotwrap">{svg(total_w, height, body, "score distributions across K")}</div>'


def worst_of_k_bars(summary: Summary) -> str:
    """One row per scenario, lowest worst encounter first: the mean, worst@2 and the worst of K as nested bars."""
    rows = sorted(summary.scenarios, key=lambda r: (r.worst is None, r.worst if r.worst is not None else 0.0,
                                                    r.mean if r.mean is not None else 0.0, r.id))
    gate = set(summary.safety_gate.scenarios)
    x0, width, right, row, top = 262, 640, 150, 24, 28
    total_w = x0 + width + right
    height = top + row * len(rows) + 8
    body = [f'<rect x="{x0 - 4}" y="{top + i * row}" width="{width + 8}" height="{row}" fill="{STRIPE}"/>'
            for i in range(0, len(rows), 2)]
    body += axis(x0, width, top, height - 8, threshold=summary.pass_threshold)
    for i, r in enumerate(rows):
        cy = top + i * row + row / 2
        body.append(marker(10, cy, r.suite, r.id in gate))
        colour = FAIL if r.id in gate else INK
        body.append(f'<text x="20" y="{cy + 4:.1f}" class="lbl" fill="{colour}"><title>{esc(r.id)} ({esc(r.suite)})'
                    f'</title>{esc(short_label(r.id))}</text>')
        if r.mean is None or r.worst is None:
            body.append(f'<text x="{x0 + 4}" y="{cy + 4:.1f}" class="val">no scored encounter</text>')
            continue
        w2 = r.worst_at_k.get("2")
        body.append(f'<rect x="{x0}" y="{cy - 8:.1f}" width="{clamp01(r.mean) * width:.1f}" height="16" '
                    f'fill="{MEAN_FILL}"><title>mean {r.mean:.3f}</title></rect>')
        if w2 is not None:
            body.append(f'<rect x="{x0}" y="{cy - 5:.1f}" width="{clamp01(w2) * width:.1f}" height="10" '
                        f'fill="{MID_FILL}"><title>worst@2 {w2:.3f}</title></rect>')
        worst_colour = FAIL if r.worst < summary.pass_threshold else PASS
        body.append(f'<rect x="{x0}" y="{cy - 2:.1f}" width="{clamp01(r.worst) * width:.1f}" height="4" '
                    f'fill="{worst_colour}"><title>worst of {r.k} (= worst@{r.k}) {r.worst:.3f}</title></rect>')
        body.append(f'<text x="{x0 + width + 12}" y="{cy + 4:.1f}" class="val">worst {r.worst:.2f} \u00b7 mean '
                    f'{r.mean:.2f}</text>')
    return f'<div class="plotwrap">{svg(total_w, height, body, "worst-of-K bars")}</div>'


def findings_bars(counts: Mapping[str, Counter[tuple[int, str]]], sevs: Sequence[tuple[int, str]]) -> str:
    """Per evaluator, its findings stacked by severity, with the legend; empty when there is no finding.

    ``counts``: evaluator -> (severity rank, severity) -> findings; ``sevs``: the severities shown, in order.
    """
    totals = {name: sum(c.values()) for name, c in counts.items()}
    top = max(totals.values(), default=0)
    if top == 0:
        return ""
    x0, width, row = 200, 480, 22
    body = []
    for i, name in enumerate(sorted(counts)):
        y = 8 + i * row
        body.append(f'<text x="{x0 - 8}" y="{y + 14}" text-anchor="end" class="lbl">{esc(short_label(name, 28))}'
                    "</text>")
        x = float(x0)
        for rank, sev in sevs:
            n = counts[name].get((rank, sev), 0)
            if not n:
                continue
            w = n / top * width
            colour = SEVERITY_COLOUR[sev]
            body.append(f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="15" fill="{colour}">'
                        f'<title>{esc(name)}: {n} {esc(sev)}</title></rect>')
            x += w
        body.append(f'<text x="{x + 6:.1f}" y="{y + 14}" class="val">{totals[name]}</text>')
    legend = '<p class="legend">' + " ".join(
        f'<span class="sw bar" style="background:{SEVERITY_COLOUR[sev]}"></span>{esc(sev)}'
        for _rank, sev in sevs) + "</p>"
    return (f'<div class="plotwrap">{svg(x0 + width + 60, 16 + row * len(counts), body, "findings by severity")}'
            f"</div>{legend}")


def axis_bars(values: Mapping[str, float | None], title: str) -> str:
    """One bar per name from 0 (red below 0.2, amber below 0.6, green above); the axis spans at least 0 to 1.

    A missing value gets its label and no bar. Needs at least one value.
    """
    nums = [v for v in values.values() if v is not None]
    lo, hi = min(0.0, *nums), max(1.0, *nums)
    x0, width, row = 150, 300, 22
    zero = x0 + (0 - lo) / (hi - lo) * width
    body = [f'<line x1="{zero:.1f}" y1="4" x2="{zero:.1f}" y2="{8 + row * len(values)}" stroke="{MUTED}"/>']
    for i, (name, v) in enumerate(values.items()):
        y = 6 + i * row
        body.append(f'<text x="{x0 - 8}" y="{y + 14}" text-anchor="end" class="lbl">{esc(short_label(str(name), 28))}'
                    "</text>")
        if v is None:
            continue
        x = x0 + (v - lo) / (hi - lo) * width
        colour = FAIL if v < 0.2 else WARN if v < 0.6 else PASS
        body.append(f'<rect x="{min(x, zero):.1f}" y="{y + 3}" width="{abs(x - zero):.1f}" height="15" fill="{colour}">'
                    f"<title>{esc(name)}: {v:.3f}</title></rect>")
        body.append(f'<text x="{max(x, zero) + 6:.1f}" y="{y + 14}" class="val">{v:.2f}</text>')
    return f'<div class="plotwrap">{svg(x0 + width + 60, 12 + row * len(values), body, title)}</div>'


def agreement_scatter(points: Sequence[tuple[str, int, float, float]]) -> str:
    """Deterministic score (x) against the judge's (y), with the diagonal of agreement dashed.

    One point per (scenario id, k, deterministic, judge).
    """
    size, pad = 260, 46
    body = [f'<rect x="{pad}" y="8" width="{size}" height="{size}" fill="{STRIPE}" stroke="{GRID}"/>',
            f'<line x1="{pad}" y1="{8 + size}" x2="{pad + size}" y2="8" stroke="{MUTED}" stroke-dasharray="4 3"/>']
    for t in (0.0, 0.5, 1.0):
        body.append(f'<text x="{pad + t * size:.1f}" y="{size + 22}" text-anchor="middle" '
                    f'class="tick">{t:g}</text>')
        body.append(f'<text x="{pad - 6}" y="{8 + size - t * size + 4:.1f}" text-anchor="end" '
                    f'class="tick">{t:g}</text>')
    body.append(f'<text x="{pad + size / 2:.0f}" y="{size + 36}" text-anchor="middle" '
                'class="lbl">deterministic</text>')
    body.append(f'<text x="10" y="{8 + size / 2:.0f}" text-anchor="middle" class="lbl" '
                f'transform="rotate(-90 10 {8 + size / 2:.0f})">judge</text>')
    for sid, k, d, j in points:
        body.append(f'<circle cx="{pad + clamp01(d) * size:.1f}" cy="{8 + size - clamp01(j) * size:.1f}" r="4.5" '
                    f'fill="{FAIL}" fill-opacity="0.75" stroke="#ffffff"><title>{esc(sid)} k={k}: '
                    f'deterministic {d:.3f}, judge {j:.3f}</title></circle>')
    return f'<div class="plotwrap">{svg(pad + size + 12, size + 44, body, "deterministic vs judge")}</div>'
