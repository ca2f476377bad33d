"""Render ``report.html``: the run report as one self-contained page. Pure function of the run directory.

The page owns no numbers of its own: everything comes from ``summary.json`` (``scorers.Summary``)
and ``results.jsonl`` (``sim.store.EncounterRecord``), the same sources as ``report.md``, so the two
reports always agree. It is a single HTML5 document that opens from disk with no network:

- inline CSS only; plots are inline SVG drawn here in Python; no fonts, images, stylesheets or
  scripts are fetched, and the only links are ``#`` anchors inside the page. A tiny inline script
  sorts tables on a header click and opens every ``<details>`` before printing; nothing depends on it.
- every string that comes from a scenario, a transcript or the model under test is untrusted and
  goes through ``_e``: ``sim.redact.clean`` (registered keys and URL userinfo redacted, escape
  sequences and control characters made visible, newlines kept), then ``html.escape``, plus ``://``
  written as entities so the source holds no URL. The whole page is redacted and neutralised once
  more as it is written (``write_html_report``), so no key in any escaping reaches the file.

Sections: header, aggregate and safety-gate panel, suites, per-scenario score distributions across
K, worst-of-K bars, the per-scenario table, and the worst encounter of every scenario with its
transcript and score card, then errors. Three sections appear only when their data exists (fields
that other parts of the scorer may add; read with ``getattr`` or ``dict.get`` so older runs still
render): evaluator findings (``ScoreCard.evaluators``), judge agreement (``Summary.judge``) and
flagged disagreements between the deterministic and judge paths (``Summary.disagreements``).
Triage accuracy (``Summary.triage_accuracy``) appears after the gate panel when the run's scenarios
have escalation targets, with the same tables as report.md.
"""

from __future__ import annotations

import html
import math
import os
import re
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from scorers import Summary, verdict_text
from sim.redact import clean
from sim.store import EncounterRecord, RunMeta

REPORT_HTML_FILE = "report.html"

Records = Mapping[tuple[str, int], EncounterRecord]

# Colours, shared by CSS and SVG.
PASS = "#1a7f37"
FAIL = "#cf222e"
WARN = "#9a6700"
INK = "#1f2328"
MUTED = "#656d76"
GRID = "#d0d7de"
STRIPE = "#f6f8fa"
CI_FILL = "#9fb3c8"
MEAN_FILL = "#c9d7ea"
MID_FILL = "#6f93c4"

SEVERITY_RANK = {"critical": 0, "high": 1, "error": 1, "major": 1, "medium": 2, "moderate": 2, "warning": 2,
                 "warn": 2, "low": 3, "minor": 3, "info": 4, "note": 4}
SEVERITY_COLOUR = ["#82071e", FAIL, "#bc4c00", WARN, MUTED, "#8c959f"]
MAX_FINDINGS_ROWS = 300
MAX_ERRORS_ROWS = 200
FINDINGS_OPEN_UP_TO = 25
MAX_FLAGGED_TRANSCRIPTS = 50


# --------------------------------------------------------------------------------------------- helpers

def _e(value: Any) -> str:
    """Escape text for HTML element content and attributes. ``://`` becomes entities so a URL in model
    output renders as written but the page source holds no ``http://`` (nothing can mistake it for a link)."""
    return html.escape(clean(str(value)), quote=True).replace("://", ":&#47;&#47;")


def _f(x: Any, digits: int = 2) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, (int, float)):
        return f"{x:.{digits}f}"
    return _e(x)


def _val(x: Any, digits: int = 3) -> str:
    """Any value from optional data: numbers to ``digits`` decimals, ints as they are, text escaped."""
    if x is None:
        return "n/a"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        return "n/a" if math.isnan(x) else f"{x:.{digits}f}"
    if isinstance(x, (list, tuple)):
        return ", ".join(_val(v, digits) for v in x)
    return _e(x)


def _num(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return None if math.isnan(x) else float(x)


def _get(obj: Any, name: str, default: Any = None) -> Any:
    """A field of a pydantic model, a plain object or a dict; ``default`` when it is absent."""
    if obj is None:
        return default
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _as_dict(obj: Any) -> dict[str, Any]:
    if obj is None:
        return {}
    if isinstance(obj, Mapping):
        return dict(obj)
    if hasattr(obj, "model_dump"):
        return dict(obj.model_dump())
    if hasattr(obj, "__dict__"):
        return {k: v for k, v in vars(obj).items() if not k.startswith("_")}
    return {}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_-]+", "-", str(text).lower()).strip("-") or "x"


def _enc_anchor(scenario_id: str, k: int) -> str:
    return f"enc-{_slug(scenario_id)}-{k}"


def _badge(text: str, colour: str, *, big: bool = False) -> str:
    cls = "badge big" if big else "badge"
    return f'<span class="{cls}" style="background:{colour}">{_e(text)}</span>'


def _clamp01(x: float) -> float:
    return min(1.0, max(0.0, x))


def _sort_key(x: Any) -> str:
    v = _num(x)
    return "" if v is None else repr(v)


def _td(text: str, sort: Any = None, cls: str = "") -> str:
    attrs = f' data-sort="{_e(sort)}"' if sort is not None else ""
    attrs += f' class="{cls}"' if cls else ""
    return f"<td{attrs}>{text}</td>"


def _section(sid: str, title: str, body: str, intro: str = "") -> str:
    intro_html = f'<p class="intro">{intro}</p>' if intro else ""
    return f'<section id="{sid}">\n<h2>{_e(title)}</h2>\n{intro_html}\n{body}\n</section>\n'


def _marker(x: float, y: float, suite: str, triggered: bool) -> str:
    """A small diamond before a safety-suite scenario's name: red when it triggered the gate."""
    if suite != "safety":
        return ""
    colour = FAIL if triggered else WARN
    return (f'<polygon points="{x:.1f},{y - 5:.1f} {x + 5:.1f},{y:.1f} {x:.1f},{y + 5:.1f} {x - 5:.1f},{y:.1f}" '
            f'fill="{colour}"><title>safety suite{" (triggered the gate)" if triggered else ""}</title></polygon>')


def _label(text: str, limit: int = 34) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _axis(x0: float, width: float, top: float, bottom: float, *, threshold: float | None) -> list[str]:
    """Vertical grid lines at 0, .25, .5, .75, 1 with labels above, and the pass threshold dashed."""
    out = []
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = x0 + t * width
        out.append(f'<line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}" stroke="{GRID}" '
                   'stroke-width="1"/>')
        out.append(f'<text x="{x:.1f}" y="{top - 6:.1f}" text-anchor="middle" class="tick">{t:g}</text>')
    if threshold is not None:
        x = x0 + _clamp01(threshold) * width
        out.append(f'<line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}" stroke="{WARN}" '
                   f'stroke-width="1.5" stroke-dasharray="4 3"><title>pass threshold {threshold:g}</title></line>')
    return out


def _svg(width: float, height: float, body: Iterable[str], label: str) -> str:
    return (f'<svg class="plot" viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" height="{height:.0f}" '
            f'role="img" aria-label="{_e(label)}">\n' + "\n".join(body) + "\n</svg>")


# ----------------------------------------------------------------------------------------- sections

def _header(meta: RunMeta, summary: Summary) -> str:
    total = summary.expected_total or (summary.completed + summary.errors)
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(meta.created_at))
    items = [
        ("model", f"<code>{_e(meta.model)}</code>"
         + (f" at <code>{_e(meta.base_url)}</code>" if meta.base_url else "")),
        ("channel", _e(meta.channel)),
        ("harness", _e(meta.harness_version)),
        ("K", str(meta.k)),
        ("seed", str(meta.seed)),
        ("scenarios", str(len(summary.scenarios))),
        ("encounters", f"{summary.completed} scored, {summary.errors} errors, of {total} planned"),
        ("started", _e(started)),
    ]
    if meta.finished_at:
        minutes = (meta.finished_at - meta.created_at) / 60
        items.append(("finished", _e(time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(meta.finished_at)))
                      + f" ({minutes:.1f} min)"))
    if meta.turn_limit:
        items.append(("turn limit", str(meta.turn_limit)))
    dl = "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in items)
    return (f'<header>\n<h1>encounter-sim report <span class="runid">{_e(meta.run_id)}</span></h1>\n'
            f'<dl class="meta">{dl}</dl>\n</header>\n')


def _component_bars(components: Mapping[str, float | None]) -> str:
    if not components:
        return ""
    label_w, bar_w, row = 90, 180, 20
    body = []
    for i, (name, value) in enumerate(components.items()):
        y = 4 + i * row
        body.append(f'<text x="{label_w - 6}" y="{y + 12}" text-anchor="end" class="lbl">{_e(name)}</text>')
        body.append(f'<rect x="{label_w}" y="{y + 3}" width="{bar_w}" height="11" fill="{STRIPE}" stroke="{GRID}"/>')
        if value is not None:
            body.append(f'<rect x="{label_w}" y="{y + 3}" width="{_clamp01(value) * bar_w:.1f}" height="11" '
                        f'fill="{MID_FILL}"><title>{_e(name)} mean {value:.3f}</title></rect>')
        body.append(f'<text x="{label_w + bar_w + 6}" y="{y + 12}" class="val">{_f(value)}</text>')
    return _svg(label_w + bar_w + 44, 8 + row * len(components), body, "component means")


def _headline_card(summary: Summary, agg: float | None, colour: str, cap_note: str) -> str:
    """The aggregate, or for a rubric-only run the HealthBench score with its CI (never a bare n/a)."""
    h = summary.headline
    if h is None or h.name == "aggregate":
        return (f'<div class="label">aggregate</div>\n<div class="bignum" style="color:{colour}">{_f(agg, 3)}</div>\n'
                f'<div class="sub">{_e(cap_note)}</div>')
    ci = f"95% CI {h.ci95[0]:.3f}-{h.ci95[1]:.3f}; " if h.ci95 else ""
    return (f'<div class="label">{_e(h.name)}</div>\n<div class="bignum">{_f(h.value, 3)}</div>\n'
            f'<div class="sub">{_e(ci + h.note)}</div>')


def _gate_panel(summary: Summary) -> str:
    gate = summary.safety_gate
    agg, unc = summary.aggregate, summary.aggregate_uncapped
    if gate.triggered:
        capped = agg is not None and unc is not None and agg != unc
        cap_note = (f"capped at {gate.cap:.2f} by the safety gate (uncapped {_f(unc, 3)})" if capped else
                    f"uncapped {_f(unc, 3)}: already below the gate's cap of {gate.cap:.2f}")
    else:
        cap_note = f"uncapped {_f(unc, 3)}; the gate did not cap it"
    if summary.errors:
        cap_note += (f"; {summary.errors} errored encounter(s) count as 0 (score without errors: "
                     f"{_f(summary.aggregate_without_errors, 3)})")
    agg_colour = INK if agg is None else (PASS if agg >= summary.pass_threshold else FAIL if gate.triggered else WARN)
    badge = _badge("TRIGGERED", FAIL, big=True) if gate.triggered else _badge("PASSED", PASS, big=True)
    if gate.triggered:
        rows = "".join(f'<tr><td><a href="#{_enc_anchor_for(summary, sid)}">{_e(sid)}</a></td>'
                       f'<td>{_e(gate.reasons.get(sid, ""))}</td></tr>' for sid in gate.scenarios)
        why = (f'<p>The aggregate is capped at <b>{gate.cap:.2f}</b> because {len(gate.scenarios)} safety-suite '
               f'scenario(s) fell below the threshold of {gate.threshold:g}:</p>'
               '<table class="compact"><thead><tr><th>scenario</th><th>why</th></tr></thead>'
               f'<tbody>{rows}</tbody></table>')
    else:
        why = (f'<p>Every safety-suite scenario has a mean escalation safety of at least {gate.threshold:g}; '
               f'the cap of {gate.cap:.2f} does not apply.</p>')
    return f"""<section id="gate">
<h2>Aggregate and safety gate</h2>
<div class="panel">
<div class="card headline">
{_headline_card(summary, agg, agg_colour, cap_note)}
<div class="sub">suite-weighted mean of scenario means; pass = composite &ge; {summary.pass_threshold:g}
with no safety failure</div>
</div>
<div class="card gatecard">
<div class="label">safety gate</div>
<div>{badge}</div>
{why}
</div>
<div class="card">
<div class="label">triage agreement</div>
<div class="midnum">QWK {_f(summary.qwk, 3)}</div>
<div class="sub">quadratic weighted kappa over {summary.qwk_pairs} encounters with a parsed level, against each
scenario's best label</div>
<div class="sub">triage {_e(verdict_text(summary.verdicts.get("triage", {})))};
escalation {_e(verdict_text(summary.verdicts.get("escalation", {})))}
(acceptable = inside the acceptable set, not the best label)</div>
<div class="label" style="margin-top:10px">component means</div>
{_component_bars(summary.components)}
</div>
</div>
</section>
"""


def _enc_anchor_for(summary: Summary, scenario_id: str) -> str:
    for r in summary.scenarios:
        if r.id == scenario_id and r.worst_k_index is not None:
            return _enc_anchor(r.id, r.worst_k_index)
    return "scenarios"


def _imaging(summary: Summary, records: Records) -> str:
    from sim.reports._cells import IMAGING_HEADER, imaging_rows

    rows = imaging_rows(records)
    if not rows:
        return ""
    na = _get(summary, "not_applicable", [])
    intro = (f"<p>Not applicable to this text-only model (not shown, not scored, not gated): {_e(', '.join(na))}</p>"
             if na else "")
    head = "".join(f"<th>{_e(x)}</th>" for x in IMAGING_HEADER)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return _section("imaging", "Imaging", f'{intro}<table class="compact"><thead><tr>{head}</tr></thead>'
                                          f"<tbody>{body}</tbody></table>")


def _triage_accuracy(summary: Summary) -> str:
    """Escalation accuracy as symptom-checker studies report triage (the same cells as report.md)."""
    ta = _get(summary, "triage_accuracy", None)
    if ta is None:
        return ""
    from sim.reports._cells import triage_accuracy_intro, triage_accuracy_notes, triage_accuracy_tables

    if ta.scored == 0:
        return _section("triage-accuracy", "Triage accuracy",
                        "<p>No encounter with an escalation target was scored.</p>", _e(triage_accuracy_intro(ta)))
    parts = []
    for caption, header, rows in triage_accuracy_tables(ta):
        head = "".join(f"<th>{_e(h)}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
        parts.append(f'<h3>{_e(caption)}</h3><table class="compact"><thead><tr>{head}</tr></thead>'
                     f"<tbody>{body}</tbody></table>")
    parts += [f"<p>{_e(note)}</p>" for note in triage_accuracy_notes(ta)]
    return _section("triage-accuracy", "Triage accuracy", "".join(parts), _e(triage_accuracy_intro(ta)))


def _understanding(summary: Summary, meta: RunMeta) -> str:
    """Which layer of the patient's understanding revealed the facts (the same lines as report.md)."""
    patient = _get(summary, "patient", None)
    if not patient:
        return ""
    from sim.reports._cells import understanding_lines

    items = "".join(f"<li>{_e(line[2:])}</li>" for line in understanding_lines(patient, meta) if line.startswith("- "))
    return _section("patient", "Patient understanding", f"<ul>{items}</ul>")


def _live(summary: Summary, records: Records) -> str:
    live = _get(summary, "live", None)
    if not live:
        return ""
    from sim.reports._cells import LIVE_HEADER, live_lines, live_rows

    facts = "".join(f"<li>{_e(line[2:])}</li>" for line in live_lines(live, {})[2:5])
    head = "".join(f"<th>{_e(h)}</th>" for h in LIVE_HEADER)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in live_rows(records))
    return _section("live", "Live call", f'<ul>{facts}</ul><table class="compact"><thead><tr>{head}</tr></thead>'
                                         f"<tbody>{body}</tbody></table>")


def _suites(summary: Summary) -> str:
    rows = []
    for s in summary.suites:
        bar = (f'<span class="meter"><span style="width:{_clamp01(s.mean) * 100:.1f}%"></span></span>'
               if s.mean is not None else "")
        rows.append(f"<tr><td>{_e(s.suite)}</td>{_td(f'{s.weight:.1f}', s.weight, 'num')}"
                    f"{_td(str(s.scenarios), s.scenarios, 'num')}"
                    f"{_td(_f(s.mean) + bar, _sort_key(s.mean), 'num')}</tr>")
    table = ('<table class="sortable"><thead><tr><th>suite</th><th>weight</th><th>scenarios</th><th>mean</th></tr>'
             f'</thead><tbody>{"".join(rows)}</tbody></table>')
    return _section("suites", "Suites", table)


def _composites(summary: Summary, records: Records) -> dict[str, list[tuple[int, float, bool]]]:
    """Per scenario: (k, composite, passed) of every scored encounter, in k order."""
    out: dict[str, list[tuple[int, float, bool]]] = defaultdict(list)
    wanted = {r.id for r in summary.scenarios}
    for (sid, k), rec in sorted(records.items()):
        if sid in wanted and rec.status == "ok" and rec.score is not None and rec.score.composite is not None:
            out[sid].append((k, float(rec.score.composite), bool(rec.score.passed)))
    return out


def _swarm(xs: Sequence[float], r: float) -> list[float]:
    """Vertical offsets so dots at (nearly) the same x stack instead of hiding each other: three levels,
    then overlap (the plot adds a count label to a pile of more than three)."""
    offsets = (0.0, -2 * r, 2 * r)
    placed: list[tuple[float, float]] = []
    out = []
    for x in xs:
        def crowd(off: float, x: float = x) -> int:
            return sum(1 for px, po in placed if po == off and abs(x - px) < 2 * r - 0.5)
        chosen = min(offsets, key=lambda off: (crowd(off), offsets.index(off)))
        placed.append((x, chosen))
        out.append(chosen)
    return out


def _distributions(summary: Summary, records: Records) -> str:
    scores = _composites(summary, records)
    gate = set(summary.safety_gate.scenarios)
    x0, width, right, row, top = 262, 640, 130, 28, 28
    total_w = x0 + width + right
    height = top + row * len(summary.scenarios) + 8
    body = [f'<rect x="{x0 - 4}" y="{top + i * row}" width="{width + 8}" height="{row}" fill="{STRIPE}"/>'
            for i in range(0, len(summary.scenarios), 2)]
    body += _axis(x0, width, top, height - 8, threshold=summary.pass_threshold)
    for i, r in enumerate(summary.scenarios):
        cy = top + i * row + row / 2
        body.append(_marker(10, cy, r.suite, r.id in gate))
        colour = FAIL if r.id in gate else INK
        body.append(f'<text x="20" y="{cy + 4:.1f}" class="lbl" fill="{colour}"><title>{_e(r.id)} ({_e(r.suite)})'
                    f'</title>{_e(_label(r.id))}</text>')
        if r.ci95:
            lo, hi = x0 + _clamp01(r.ci95[0]) * width, x0 + _clamp01(r.ci95[1]) * width
            body.append(f'<rect x="{lo - 1:.1f}" y="{cy - 4:.1f}" width="{max(hi - lo, 0) + 2:.1f}" height="8" rx="2" '
                        f'fill="{CI_FILL}" opacity="0.7"><title>95% CI {r.ci95[0]:.3f} to {r.ci95[1]:.3f}'
                        '</title></rect>')
        if r.mean is not None:  # drawn under the dots, taller than a stack of them, so both stay visible
            x = x0 + _clamp01(r.mean) * width
            body.append(f'<line x1="{x:.1f}" y1="{cy - 13:.1f}" x2="{x:.1f}" y2="{cy + 13:.1f}" stroke="{INK}" '
                        f'stroke-width="2"><title>mean {r.mean:.3f}</title></line>')
        dots = scores.get(r.id, [])
        xs = [x0 + _clamp01(s) * width for _, s, _ in dots]
        for (k, s, ok), x, dy in zip(dots, xs, _swarm(xs, 3.5), strict=True):
            body.append(f'<circle cx="{x:.1f}" cy="{cy + dy:.1f}" r="3.5" fill="{PASS if ok else FAIL}" '
                        f'fill-opacity="0.8" stroke="#ffffff" stroke-width="0.8"><title>{_e(r.id)} k={k}: '
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
        body.append(f'<text x="{x0 + width + 12}" y="{cy + 4:.1f}" class="val">{_e(note)}</text>')
    legend = ('<p class="legend"><span class="sw dot" style="background:' + PASS + '"></span>passed encounter '
              '<span class="sw dot" style="background:' + FAIL + '"></span>failed encounter '
              '<span class="sw tick"></span>mean <span class="sw ci"></span>95% bootstrap CI '
              '<span class="sw dash"></span>pass threshold ' + f"{summary.pass_threshold:g}"
              + ' <span class="sw diamond" style="background:' + FAIL + '"></span>safety suite, triggered the gate '
              '<span class="sw diamond" style="background:' + WARN + '"></span>safety suite</p>')
    plot = f'<div class="plotwrap">{_svg(total_w, height, body, "score distributions across K")}</div>'
    return _section("distributions", "Score distributions across K", plot + legend,
                    "Each dot is one encounter's composite score on a 0 to 1 axis; dots at the same score are "
                    "stacked. Hover a mark for its value.")


def _worst_bars(summary: Summary) -> str:
    rows = sorted(summary.scenarios, key=lambda r: (r.worst is None, r.worst if r.worst is not None else 0.0,
                                                    r.mean if r.mean is not None else 0.0, r.id))
    gate = set(summary.safety_gate.scenarios)
    x0, width, right, row, top = 262, 640, 150, 24, 28
    total_w = x0 + width + right
    height = top + row * len(rows) + 8
    body = [f'<rect x="{x0 - 4}" y="{top + i * row}" width="{width + 8}" height="{row}" fill="{STRIPE}"/>'
            for i in range(0, len(rows), 2)]
    body += _axis(x0, width, top, height - 8, threshold=summary.pass_threshold)
    for i, r in enumerate(rows):
        cy = top + i * row + row / 2
        body.append(_marker(10, cy, r.suite, r.id in gate))
        colour = FAIL if r.id in gate else INK
        body.append(f'<text x="20" y="{cy + 4:.1f}" class="lbl" fill="{colour}"><title>{_e(r.id)} ({_e(r.suite)})'
                    f'</title>{_e(_label(r.id))}</text>')
        if r.mean is None or r.worst is None:
            body.append(f'<text x="{x0 + 4}" y="{cy + 4:.1f}" class="val">no scored encounter</text>')
            continue
        w2 = r.worst_at_k.get("2")
        body.append(f'<rect x="{x0}" y="{cy - 8:.1f}" width="{_clamp01(r.mean) * width:.1f}" height="16" '
                    f'fill="{MEAN_FILL}"><title>mean {r.mean:.3f}</title></rect>')
        if w2 is not None:
            body.append(f'<rect x="{x0}" y="{cy - 5:.1f}" width="{_clamp01(w2) * width:.1f}" height="10" '
                        f'fill="{MID_FILL}"><title>worst@2 {w2:.3f}</title></rect>')
        worst_colour = FAIL if r.worst < summary.pass_threshold else PASS
        body.append(f'<rect x="{x0}" y="{cy - 2:.1f}" width="{_clamp01(r.worst) * width:.1f}" height="4" '
                    f'fill="{worst_colour}"><title>worst of {r.k} (= worst@{r.k}) {r.worst:.3f}</title></rect>')
        body.append(f'<text x="{x0 + width + 12}" y="{cy + 4:.1f}" class="val">worst {r.worst:.2f} \u00b7 mean '
                    f'{r.mean:.2f}</text>')
    legend = ('<p class="legend"><span class="sw bar" style="background:' + MEAN_FILL + '"></span>mean '
              '<span class="sw bar" style="background:' + MID_FILL + '"></span>worst@2 (expected minimum of 2 runs) '
              '<span class="sw thin" style="background:' + FAIL + '"></span>worst of K (= worst@n), below the pass '
              'threshold <span class="sw thin" style="background:' + PASS + '"></span>worst of K, at or above it '
              '<span class="sw diamond" style="background:' + WARN + '"></span>safety suite</p>')
    plot = f'<div class="plotwrap">{_svg(total_w, height, body, "worst-of-K bars")}</div>'
    return _section("worst-of-k", "Worst of K", plot + legend,
                    "Scenarios sorted by their worst encounter, lowest first: a model is only as safe as its worst "
                    "run. worst@k for every k is in the table below.")


def _kv_list(values: Mapping[str, float]) -> str:
    items = sorted(values.items(), key=lambda kv: int(kv[0]) if str(kv[0]).isdigit() else 0)
    return "".join(f'<span class="kv"><b>{_e(k)}</b>&nbsp;{_f(v)}</span>' for k, v in items) or "n/a"


def _scenario_table(summary: Summary) -> str:
    gate = set(summary.safety_gate.scenarios)
    rows = []
    for r in summary.scenarios:
        ci = f"{_f(r.ci95[0])}&ndash;{_f(r.ci95[1])}" if r.ci95 else "n/a"
        name = _e(r.id)
        if r.worst_k_index is not None:
            name = f'<a href="#{_enc_anchor(r.id, r.worst_k_index)}">{name}</a>'
        if r.id in gate:
            name += " " + _badge("gate", FAIL)
        pass_cls = "num good" if r.k and r.pass_count == r.k else "num bad" if r.k else "num"
        rows.append(
            f'<tr id="row-{_slug(r.id)}"><td>{name}</td><td>{_e(r.suite)}</td>'
            f"{_td(str(r.k), r.k, 'num')}{_td(str(r.errors), r.errors, 'num bad' if r.errors else 'num')}"
            f"{_td(_f(r.mean), _sort_key(r.mean), 'num')}{_td(_f(r.worst), _sort_key(r.worst), 'num')}"
            f"{_td(_f(r.std), _sort_key(r.std), 'num')}{_td(ci, _sort_key(r.ci95[0] if r.ci95 else None), 'num')}"
            f"{_td(_f(r.escalation_safety), _sort_key(r.escalation_safety), 'num')}"
            f"{_td(f'{r.pass_count}/{r.k}', r.pass_count / r.k if r.k else '', pass_cls)}"
            f"{_td(_kv_list(r.pass_hat_k), None, 'kvs')}{_td(_kv_list(r.worst_at_k), None, 'kvs')}</tr>")
    head = ("<tr><th>scenario</th><th>suite</th><th>n</th><th>errors</th><th>mean</th><th>worst</th><th>std</th>"
            "<th>95% CI</th><th>esc. safety</th><th>pass</th><th>pass^k (k: value)</th>"
            "<th>worst@k (k: value)</th></tr>")
    table = (f'<div class="tablewrap"><table class="sortable scen"><thead>{head}</thead>'
             f'<tbody>{"".join(rows)}</tbody></table></div>')
    return _section("scenarios", "Scenarios", table,
                    f"n = scored encounters. pass = composite &ge; {summary.pass_threshold:g} with no safety failure. "
                    "pass^k = chance that k runs drawn without replacement all pass; worst@k = expected minimum "
                    "score of k runs. Click a header to sort; a scenario name opens its worst encounter.")


def _card_rows(card: Any, res: Any) -> str:
    rows: list[tuple[str, str]] = []
    rows.append(("composite", f"<b>{_f(card.composite, 3)}</b> "
                 + (_badge("PASS", PASS) if card.passed else _badge("FAIL", FAIL))))
    t = card.triage
    if t is not None:
        cls = "bad" if t.verdict == "under" or (t.verdict is None and t.given is not None and t.expected is not None
                                                 and t.given > t.expected) else ""
        extra = f"; contexts {_e(', '.join(t.contexts))}" if t.contexts else ""
        rows.append(("triage", f'<span class="{cls}">{_e(t.describe())}</span>; '
                     f"error {_val(t.error, 2)}{extra}; score {_f(t.score)}"
                     + (f"; {_e(t.reason)}" if t.reason else "")))
    esc = card.escalation
    if esc is not None:
        cls = "bad" if esc.under_escalated else ""
        rows.append(("escalation", f'<span class="{cls}">{_e(esc.describe())}</span>'
                     + ("; <b class=\"bad\">under-escalated</b>" if esc.under_escalated else "")
                     + f"; score {_f(esc.score)}" + (f"; {_e(esc.reason)}" if esc.reason else "")))
    info = card.information
    if info is not None:
        missed = ", ".join(info.critical_missed)
        rows.append(("information", f"{info.revealed}/{info.total} facts revealed; score {_f(info.score)}"))
        rows.append(("critical facts missed", f'<span class="bad">{_e(missed)}</span>' if missed else "none"))
        if info.critical_revealed:
            rows.append(("critical facts revealed", _e(", ".join(info.critical_revealed))))
        if info.red_flags_missed:
            rows.append(("red flags missed", f'<span class="bad">{_e(", ".join(info.red_flags_missed))}</span>'))
    eff = card.efficiency
    if eff is not None:
        rows.append(("efficiency", f"{eff.agent_turns}/{eff.turn_limit} agent turns; score {_f(eff.score)}"))
    dx = card.diagnosis
    if dx is not None:
        rows.append(("diagnosis", f"top-1 {_val(dx.top1)}, top-3 {_val(dx.top3)}"
                     + (f"; matched {_e(', '.join(dx.matched))}" if dx.matched else "")))
    if card.safety_failures:
        items = "".join(f"<li>{_e(s)}</li>" for s in card.safety_failures)
        rows.append(("safety failures", f'<ul class="bad">{items}</ul>'))
    if card.notes:
        rows.append(("notes", "; ".join(_e(n) for n in card.notes)))
    for ev in _get(card, "evaluators", None) or []:
        findings = _get(ev, "findings", None) or []
        rows.append((f"evaluator {_e(_get(ev, 'name', '?'))}",
                     f"score {_val(_get(ev, 'score'))}; passed {_val(_get(ev, 'passed'))}; {len(findings)} finding(s)"))
    if res is not None:
        a = res.assessment
        parsed = (f"level {_val(a.triage_level)}, escalation {_e(a.escalation) if a.escalation else 'n/a'}"
                  + (f", diagnoses {_e('; '.join(a.diagnoses))}" if a.diagnoses else "")
                  + (f'; <span class="bad">parser: {_e("; ".join(a.problems))}</span>' if a.problems else ""))
        rows.append(("parsed assessment", parsed))
        rows.append(("ended by", f"{_e(res.termination)} after {res.agent_turns}/{res.turn_limit} agent turns; "
                     f"tokens {res.tokens.prompt} in / {res.tokens.completion} out"))
        if res.errors:
            rows.append(("errors", '<span class="bad">' + _e("; ".join(res.errors)) + "</span>"))
    return "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)


def _transcript(res: Any) -> str:
    if res is None or not res.turns:
        return '<p class="muted">no transcript</p>'
    items = []
    for t in res.turns:
        who = {"patient": "Patient", "agent": "Agent", "harness": "Harness"}.get(t.speaker, t.speaker)
        meta = f"agent turn {t.agent_turn}" if t.speaker == "agent" and t.agent_turn else f"message {t.index}"
        if t.latency_s:
            meta += f" \u00b7 {t.latency_s:.2f}s"
        extra = ""
        if t.revealed:
            extra += '<div class="revealed">revealed: ' + "".join(f'<span class="chip">{_e(f)}</span>'
                                                                  for f in t.revealed) + "</div>"
        if t.heard_text is not None and t.heard_text != t.text:
            extra += f'<div class="heard">heard as: {_e(t.heard_text)}</div>'
        items.append(f'<li class="turn {_e(t.speaker)}"><div class="who">{_e(who)} <span class="muted">{_e(meta)}'
                     f'</span></div><div class="text">{_e(t.text)}</div>{extra}</li>')
    gathered = (f'<p class="muted">facts gathered, in order: {_e(", ".join(res.gathered_info))}</p>'
                if res.gathered_info else '<p class="muted">no facts gathered</p>')
    return f'<ol class="transcript">{"".join(items)}</ol>{gathered}'


def _encounter_block(rec: EncounterRecord, *, anchor: str, note: str, gate: bool = False) -> str:
    """One encounter as a collapsed ``<details>``: a summary line, then its score card and transcript."""
    card, res = rec.score, rec.result
    assert card is not None
    bits = [f"composite {_f(card.composite)}"]
    if card.triage:
        bits.append(f"triage {_e(card.triage.describe())}")
    if card.escalation:
        bits.append(f"escalation {_e(card.escalation.describe())}")
    if card.safety_failures:
        bits.append(f'<span class="bad">{len(card.safety_failures)} safety failure(s)</span>')
    sep = " \u00b7 "
    flag = _badge("PASS", PASS) if card.passed else _badge("FAIL", FAIL)
    if gate:
        flag += " " + _badge("gate", FAIL)
    return (f'<details id="{anchor}" class="enc"><summary><b>{_e(rec.scenario_id)}</b> <span class="muted">k={rec.k} '
            f'{_e(note)}</span> {flag} <span class="sumline">{sep.join(bits)}</span></summary>'
            f'<div class="encbody"><div class="scorecard"><h3>Score card</h3>'
            f'<table class="scoretable">{_card_rows(card, res)}</table>{_judge_card(_get(card, "judge", None))}</div>'
            f'<div class="tx"><h3>Transcript</h3>{_transcript(res)}</div></div></details>')


def _worst_encounters(summary: Summary, records: Records) -> tuple[str, set[str]]:
    blocks, anchors = [], set()
    gate = set(summary.safety_gate.scenarios)
    for r in summary.scenarios:
        if r.worst_k_index is None:
            continue
        rec = records.get((r.id, r.worst_k_index))
        if rec is None or rec.score is None:
            continue
        anchor = _enc_anchor(r.id, r.worst_k_index)
        anchors.add(anchor)
        blocks.append(_encounter_block(rec, anchor=anchor, note=f"(worst of {r.k})", gate=r.id in gate))
    if not blocks:
        return "", anchors
    body = ('<p class="intro">Each block opens to the score card and the speaker-labelled transcript of the '
            "scenario's lowest-scoring encounter.</p>" + "\n".join(blocks))
    return _section("encounters", "Worst encounter per scenario", body), anchors


def _flagged_encounters(items: Iterable[Any] | None, records: Records, anchors: set[str]) -> str:
    """Transcripts of flagged-disagreement encounters that are not already shown as a worst encounter."""
    blocks = []
    for it in items or []:
        sid, k = str(_get(it, "scenario_id", "")), _get(it, "k")
        rec = records.get((sid, k)) if isinstance(k, int) else None
        anchor = _enc_anchor(sid, k) if isinstance(k, int) else ""
        if rec is None or rec.score is None or anchor in anchors:
            continue
        anchors.add(anchor)
        blocks.append(_encounter_block(rec, anchor=anchor, note=f"(judge {_val(_get(it, 'judge'))}, deterministic "
                                                                f"{_val(_get(it, 'deterministic'))})"))
        if len(blocks) >= MAX_FLAGGED_TRANSCRIPTS:
            break
    if not blocks:
        return ""
    return "<h3>Flagged encounters</h3>" + "\n".join(blocks)


def _judge_card(jc: Any) -> str:
    """One encounter's judge path (``scorers.JudgeCard`` or a dict): scores, then every rubric criterion's
    votes and verdict, then the trust ratings."""
    data = _as_dict(jc)
    if not data:
        return ""
    head = [f"rubric {_val(data.get('rubric_score'))}", f"trust {_val(data.get('trust_score'))}",
            f"no verdicts {_val(data.get('no_verdicts'))}"]
    judges = data.get("judges") or []
    if judges:
        head.append(f"judges {_e(', '.join(map(str, judges)))}")
    sep = " \u00b7 "
    out = [f'<h3>Judge path</h3><p class="sub">{sep.join(head)}</p>']
    rubric = data.get("rubric") or []
    if rubric:
        rows = []
        for c in rubric:
            c = _as_dict(c)
            verdict = str(c.get("verdict", ""))
            colour = PASS if verdict == "met" else MUTED if verdict == "no_verdict" else FAIL
            points = _num(c.get("points"))
            if points is not None and points < 0 and verdict in ("met", "unmet"):  # a met negative criterion is bad
                colour = FAIL if verdict == "met" else PASS
            votes = ", ".join(f"{_e(j)}: {_e(v)}" for j, v in _as_dict(c.get("votes")).items())
            why = "; ".join(f"{_e(j)}: {_e(x)}" for j, x in _as_dict(c.get("explanations")).items())
            rows.append(f"<tr><td>{_e(c.get('criterion', ''))}"
                        + (f'<div class="sub">{why}</div>' if why else "")
                        + f"</td>{_td(f'{points:+g}' if points is not None else 'n/a', points, 'num')}"
                        f"<td>{_badge(verdict or '?', colour)}</td><td class=\"sub\">{votes}</td></tr>")
        out.append('<table class="jtable"><thead><tr><th>criterion</th><th>points</th><th>verdict</th>'
                   f'<th>votes</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')
    trust = data.get("trust") or []
    if trust:
        rows = []
        for t in trust:
            t = _as_dict(t)
            ratings = ", ".join(f"{_e(j)}: {_val(v)}" for j, v in _as_dict(t.get("ratings")).items())
            rows.append(f"<tr><td>{_e(t.get('category', ''))}</td>"
                        f"{_td(_val(t.get('mean'), 2), _sort_key(t.get('mean')), 'num')}"
                        f'<td class="sub">{ratings}</td></tr>')
        out.append('<table class="jtable"><thead><tr><th>trust category</th><th>mean (0-3)</th><th>ratings</th></tr>'
                   f'</thead><tbody>{"".join(rows)}</tbody></table>')
    return "".join(out)


def _errors(records: Records) -> str:
    errs = sorted((rec for rec in records.values() if rec.status == "error"), key=lambda r: (r.scenario_id, r.k))
    if not errs:
        return ""
    items = [f"<li><b>{_e(r.scenario_id)}</b> k={r.k}: <code>{_e(r.error or 'error')}</code></li>"
             for r in errs[:MAX_ERRORS_ROWS]]
    if len(errs) > MAX_ERRORS_ROWS:
        items.append(f"<li>... and {len(errs) - MAX_ERRORS_ROWS} more in results.jsonl</li>")
    return _section("errors", f"Errors ({len(errs)}, not scored)", f'<ul class="errors">{"".join(items)}</ul>')


# ----------------------------------------------------------------------------- optional sections

def _severity(value: Any) -> tuple[int, str]:
    name = str(value or "unspecified").lower()
    return SEVERITY_RANK.get(name, 5), name


def findings_section(cards: Iterable[tuple[str, int, Any]], *, anchors: set[str] | None = None) -> str:
    """Evaluator findings over every encounter: counts by severity per evaluator (table and stacked bars)
    and every finding, most severe first. ``cards`` holds (scenario id, k, score card or dict) and each
    card's ``evaluators`` is a list of {name, score, passed, findings: [{code, severity, message,
    evidence}]}. Empty string when no card carries evaluators."""
    anchors = anchors or set()
    per_eval: dict[str, dict[str, Any]] = {}
    findings: list[tuple[int, str, str, str, int, Any]] = []
    for sid, k, card in cards:
        for ev in _get(card, "evaluators", None) or []:
            name = str(_get(ev, "name", None) or "evaluator")
            st = per_eval.setdefault(name, {"runs": 0, "passed": 0, "scores": [], "sev": Counter()})
            st["runs"] += 1
            st["passed"] += bool(_get(ev, "passed", False))
            if (s := _num(_get(ev, "score"))) is not None:
                st["scores"].append(s)
            for fd in _get(ev, "findings", None) or []:
                rank, sev = _severity(_get(fd, "severity"))
                st["sev"][(rank, sev)] += 1
                findings.append((rank, sev, name, sid, k, fd))
    if not per_eval:
        return ""
    sevs = sorted({key for st in per_eval.values() for key in st["sev"]})
    head = ("<tr><th>evaluator</th><th>encounters</th><th>passed</th><th>mean score</th>"
            + "".join(f"<th>{_e(s)}</th>" for _, s in sevs) + "<th>findings</th></tr>")
    rows = []
    for name, st in sorted(per_eval.items()):
        mean = sum(st["scores"]) / len(st["scores"]) if st["scores"] else None
        total = sum(st["sev"].values())
        passed = f"{st['passed']}/{st['runs']}"
        rows.append(f"<tr><td>{_e(name)}</td>{_td(str(st['runs']), st['runs'], 'num')}"
                    f"{_td(passed, st['passed'], 'num')}"
                    f"{_td(_f(mean, 3), _sort_key(mean), 'num')}"
                    + "".join(_td(str(st["sev"].get(key, 0)), st["sev"].get(key, 0), "num") for key in sevs)
                    + f"{_td(str(total), total, 'num')}</tr>")
    counts = f'<table class="sortable"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'
    plot = _findings_bars(per_eval, sevs)
    findings.sort(key=lambda f: (f[0], f[2], f[3], f[4]))
    frows = []
    for rank, sev, name, sid, k, fd in findings[:MAX_FINDINGS_ROWS]:
        where = f"{_e(sid)} k={k}"
        if _enc_anchor(sid, k) in anchors:
            where = f'<a href="#{_enc_anchor(sid, k)}">{where}</a>'
        evidence = _get(fd, "evidence")
        evidence_text = "" if evidence is None else _val(evidence)
        if len(evidence_text) > 400:
            evidence_text = evidence_text[:400] + "\u2026"
        frows.append(f"<tr>{_td(_badge(sev, SEVERITY_COLOUR[min(rank, 5)]), rank)}<td>{_e(name)}</td>"
                     f"<td><code>{_e(_get(fd, 'code', '') or '')}</code></td><td>{where}</td>"
                     f"<td>{_e(_get(fd, 'message', '') or '')}</td><td class=\"evidence\">{evidence_text}</td></tr>")
    more = (f'<p class="muted">... and {len(findings) - MAX_FINDINGS_ROWS} more findings in results.jsonl</p>'
            if len(findings) > MAX_FINDINGS_ROWS else "")
    listing = ('<div class="tablewrap"><table class="sortable findings"><thead><tr><th>severity</th><th>evaluator</th>'
               '<th>code</th><th>encounter</th><th>message</th><th>evidence</th></tr></thead><tbody>'
               + "".join(frows) + "</tbody></table></div>" + more)
    if not findings:
        listing = "<p>No findings.</p>"
    else:  # a long list starts folded so the counts above stay the first thing read
        opened = " open" if len(findings) <= FINDINGS_OPEN_UP_TO else ""
        listing = (f'<details class="enc"{opened}><summary><b>All {len(findings)} finding(s), most severe first'
                   f'</b></summary><div class="encbody">{listing}</div></details>')
    return _section("findings", "Evaluator findings", f"{plot}{counts}{listing}",
                    f"{len(findings)} finding(s) from {len(per_eval)} evaluator(s) across the run's encounters.")


def _findings_bars(per_eval: Mapping[str, Mapping[str, Any]], sevs: Sequence[tuple[int, str]]) -> str:
    totals = {name: sum(st["sev"].values()) for name, st in per_eval.items()}
    top = max(totals.values(), default=0)
    if top == 0:
        return ""
    x0, width, row = 200, 480, 22
    body = []
    for i, name in enumerate(sorted(per_eval)):
        y = 8 + i * row
        body.append(f'<text x="{x0 - 8}" y="{y + 14}" text-anchor="end" class="lbl">{_e(_label(name, 28))}</text>')
        x = float(x0)
        for rank, sev in sevs:
            n = per_eval[name]["sev"].get((rank, sev), 0)
            if not n:
                continue
            w = n / top * width
            colour = SEVERITY_COLOUR[min(rank, 5)]
            body.append(f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="15" fill="{colour}">'
                        f'<title>{_e(name)}: {n} {_e(sev)}</title></rect>')
            x += w
        body.append(f'<text x="{x + 6:.1f}" y="{y + 14}" class="val">{totals[name]}</text>')
    legend = '<p class="legend">' + " ".join(
        f'<span class="sw bar" style="background:{SEVERITY_COLOUR[min(rank, 5)]}"></span>{_e(sev)}'
        for rank, sev in sevs) + "</p>"
    return (f'<div class="plotwrap">{_svg(x0 + width + 60, 16 + row * len(per_eval), body, "findings by severity")}'
            f"</div>{legend}")


KAPPA_BANDS = ((0.0, "poor"), (0.2, "slight"), (0.4, "fair"), (0.6, "moderate"), (0.8, "substantial"),
               (1.0001, "almost perfect"))


def _kappa_band(k: float) -> str:
    if k < 0:
        return "poor"
    for upper, name in KAPPA_BANDS[1:]:
        if k <= upper:
            return name
    return "almost perfect"


AXIS_VALUE_KEYS = ("fleiss_kappa", "kappa", "agreement", "score", "mean", "value")


def _axis_value(v: Any) -> tuple[float | None, str | None]:
    """The number to plot for one axis, and the name of the field it came from (None for a bare number)."""
    if (n := _num(v)) is not None:
        return n, None
    d = _as_dict(v)
    for key in AXIS_VALUE_KEYS:
        if (n := _num(d.get(key))) is not None:
            return n, key
    return None, None


def judge_section(judge: Any) -> str:
    """The judge path (``scorers.JudgeSummary``, or any object or dict with those fields): Fleiss' kappa
    between judges, rubric and trust scores, verdict gaps, judges used and excluded, warnings, and
    bars for the per-axis, per-tag and trust-category scores (and a ``per_axis`` mapping if given).
    Unknown scalar fields are listed too. Empty string when there is no judge data."""
    data = _as_dict(judge)
    if not data:
        return ""
    cards = []
    if "fleiss_kappa" in data:
        kappa = _num(data.get("fleiss_kappa"))
        items = data.get("kappa_items")
        over = f" over {_val(items)} criterion verdicts" if items else ""
        band = f" ({_kappa_band(kappa)})" if kappa is not None else " (needs two or more judges)"
        cards.append(f'<div class="card"><div class="label">Fleiss&#39; kappa</div><div class="midnum">{_val(kappa)}'
                     f'</div><div class="sub">agreement between judges{over}{band}</div></div>')
    if "rubric_score" in data:
        cards.append(f'<div class="card"><div class="label">rubric score</div><div class="midnum">'
                     f'{_val(data.get("rubric_score"))}</div><div class="sub">HealthBench formula, clipped mean'
                     '</div></div>')
    if "trust_score" in data:
        cards.append(f'<div class="card"><div class="label">trust score</div><div class="midnum">'
                     f'{_val(data.get("trust_score"))}</div><div class="sub">mean of trust categories, 0 to 1'
                     '</div></div>')
    if "no_verdicts" in data:
        nv = data.get("no_verdicts")
        shown = len(nv) if isinstance(nv, (list, tuple, dict)) else nv
        cls = " bad" if shown else ""
        judged = data.get("encounters_judged")
        of = f" across {_val(judged)} judged encounters" if judged is not None else ""
        cards.append(f'<div class="card"><div class="label">no verdict</div><div class="midnum{cls}">{_val(shown)}'
                     f'</div><div class="sub">criteria without a usable verdict{of}</div></div>')
    known = {"fleiss_kappa", "kappa_items", "rubric_score", "trust_score", "no_verdicts", "encounters_judged",
             "warnings", "per_axis", "axis_scores", "tag_scores", "theme_scores", "trust_categories", "judges",
             "excluded"}
    other = [(k, v) for k, v in data.items()
             if k not in known and (v is None or isinstance(v, (int, float, str, bool)))]
    if other:
        dl = "".join(f"<div><dt>{_e(k)}</dt><dd>{_val(v)}</dd></div>" for k, v in other)
        cards.append(f'<div class="card"><div class="label">details</div><dl class="meta tight">{dl}</dl></div>')
    parts = [f'<div class="panel cards">{"".join(cards)}</div>'] if cards else []
    judges = data.get("judges") or []
    excluded = _as_dict(data.get("excluded")) if isinstance(data.get("excluded"), Mapping) else {}
    if judges or excluded:
        used = ", ".join(f"<code>{_e(j)}</code>" for j in judges) or "none"
        line = f"<p><b>Judges</b>: {used}</p>"
        if excluded:
            line += ('<table class="compact"><thead><tr><th>excluded judge</th><th>why</th></tr></thead><tbody>'
                     + "".join(f"<tr><td><code>{_e(j)}</code></td><td>{_e(why)}</td></tr>"
                               for j, why in excluded.items())
                     + "</tbody></table>")
        parts.append(line)
    warnings = data.get("warnings") or []
    if isinstance(warnings, str):
        warnings = [warnings]
    if warnings:
        parts.append('<div class="warnbox"><b>Warnings</b><ul>' + "".join(f"<li>{_e(w)}</li>" for w in warnings)
                     + "</ul></div>")
    plots = []
    for key, title in (("axis_scores", "Rubric score per axis"), ("theme_scores", "Rubric score per theme"),
                       ("tag_scores", "Rubric score per criterion tag"),
                       ("trust_categories", "Trust per category"), ("per_axis", "Per axis")):
        block = data.get(key)
        if isinstance(block, (list, tuple)):
            block = {str(_get(a, "axis", None) or _get(a, "name", None) or i): a for i, a in enumerate(block)}
        if isinstance(block, Mapping) and block:
            plots.append(f"<div>{_per_axis(block, title)}</div>")
    if plots:
        parts.append(f'<div class="split">{"".join(plots)}</div>')
    if not parts:
        return ""
    return _section("judge", "Judge agreement", "".join(parts))


def _per_axis(per_axis: Mapping[str, Any], title: str = "Per axis") -> str:
    cols: list[str] = []
    for v in per_axis.values():
        for key in _as_dict(v):
            if key not in cols and key not in ("axis", "name"):
                cols.append(key)
    if cols:
        head = "<tr><th>axis</th>" + "".join(f"<th>{_e(c)}</th>" for c in cols) + "</tr>"
        rows = "".join(f"<tr><td>{_e(a)}</td>" + "".join(_td(_val(_as_dict(v).get(c)), _sort_key(_as_dict(v).get(c)),
                                                              "num") for c in cols) + "</tr>"
                       for a, v in per_axis.items())
    else:
        head = "<tr><th>axis</th><th>value</th></tr>"
        rows = "".join(f"<tr><td>{_e(a)}</td>{_td(_val(v), _sort_key(v), 'num')}</tr>" for a, v in per_axis.items())
    table = f'<table class="sortable"><thead>{head}</thead><tbody>{rows}</tbody></table>'
    picked = {a: _axis_value(v) for a, v in per_axis.items()}
    values = {a: v for a, (v, _) in picked.items()}
    keys = sorted({key for _, key in picked.values() if key})
    nums = [v for v in values.values() if v is not None]
    if not nums:
        return f"<h3>{_e(title)}</h3>{table}"
    lo, hi = min(0.0, *nums), max(1.0, *nums)
    x0, width, row = 150, 300, 22
    zero = x0 + (0 - lo) / (hi - lo) * width
    body = [f'<line x1="{zero:.1f}" y1="4" x2="{zero:.1f}" y2="{8 + row * len(values)}" stroke="{MUTED}"/>']
    for i, (axis, v) in enumerate(values.items()):
        y = 6 + i * row
        body.append(f'<text x="{x0 - 8}" y="{y + 14}" text-anchor="end" class="lbl">{_e(_label(str(axis), 28))}</text>')
        if v is None:
            continue
        x = x0 + (v - lo) / (hi - lo) * width
        colour = FAIL if v < 0.2 else WARN if v < 0.6 else PASS
        body.append(f'<rect x="{min(x, zero):.1f}" y="{y + 3}" width="{abs(x - zero):.1f}" height="15" fill="{colour}">'
                    f"<title>{_e(axis)}: {v:.3f}</title></rect>")
        body.append(f'<text x="{max(x, zero) + 6:.1f}" y="{y + 14}" class="val">{v:.2f}</text>')
    plot = f'<div class="plotwrap">{_svg(x0 + width + 60, 12 + row * len(values), body, title)}</div>'
    caption = f'<p class="legend">bars: {_e(", ".join(keys))}</p>' if keys else ""
    if not cols:  # one number per axis: the labelled bars say it all
        return f"<h3>{_e(title)}</h3>{plot}"
    return f"<h3>{_e(title)}</h3>{plot}{caption}{table}"


def disagreements_section(items: Iterable[Any] | None, *, anchors: set[str] | None = None, extra: str = "") -> str:
    """Encounters where the deterministic path and the judge disagree: a scatter of the two scores and a
    table, largest difference first. Each item has scenario_id, k, deterministic, judge and diff (diff is
    computed when missing). Empty string when there are none."""
    anchors = anchors or set()
    rows = []
    for it in items or []:
        det, jud = _get(it, "deterministic"), _get(it, "judge")
        diff = _get(it, "diff")
        if diff is None and _num(det) is not None and _num(jud) is not None:
            diff = float(jud) - float(det)
        rows.append((str(_get(it, "scenario_id", "?")), _get(it, "k"), det, jud, diff, it))
    if not rows:
        return ""
    rows.sort(key=lambda r: (-abs(_num(r[4]) or 0.0), r[0], r[1] if isinstance(r[1], int) else 0))
    has_notes = any(_get(it, "reason") or _get(it, "note") for *_, it in rows)
    trs = []
    for sid, k, det, jud, diff, it in rows:
        where = f"{_e(sid)}" + (f" k={_e(k)}" if k is not None else "")
        if isinstance(k, int) and _enc_anchor(sid, k) in anchors:
            where = f'<a href="#{_enc_anchor(sid, k)}">{where}</a>'
        note = f"<td>{_e(_get(it, 'reason') or _get(it, 'note') or '')}</td>" if has_notes else ""
        diff_num = _num(diff)
        trs.append(f"<tr><td>{where}</td>{_td(_val(det), _sort_key(det), 'num')}{_td(_val(jud), _sort_key(jud), 'num')}"
                   f"{_td(_val(diff), _sort_key(abs(diff_num) if diff_num is not None else None), 'num')}"
                   f"{note}</tr>")
    table = ('<table class="sortable"><thead><tr><th>encounter</th><th>deterministic</th><th>judge</th>'
             f'<th>diff (judge &minus; deterministic)</th>{"<th>note</th>" if has_notes else ""}</tr></thead>'
             f'<tbody>{"".join(trs)}</tbody></table>')
    nums = [(sid, k, _num(det), _num(jud)) for sid, k, det, jud, _, _ in rows]
    pts = [(sid, k, d, j) for sid, k, d, j in nums if d is not None and j is not None]
    plot = ""
    if pts:
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
        for sid, k, d, j in pts:
            body.append(f'<circle cx="{pad + _clamp01(d) * size:.1f}" cy="{8 + size - _clamp01(j) * size:.1f}" r="4.5" '
                        f'fill="{FAIL}" fill-opacity="0.75" stroke="#ffffff"><title>{_e(sid)} k={_e(k)}: '
                        f'deterministic {d:.3f}, judge {j:.3f}</title></circle>')
        plot = f'<div class="plotwrap">{_svg(pad + size + 12, size + 44, body, "deterministic vs judge")}</div>'
    return _section("disagreements", f"Flagged disagreements ({len(rows)})",
                    f'<div class="split">{plot}{table}</div>{extra}',
                    "Encounters where the deterministic score and the judge's score differ enough to be flagged; "
                    "points off the dashed diagonal disagree.")


# ------------------------------------------------------------------------------------------- page

CSS = """
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #ffffff; color: %(ink)s;
  font: 14px/1.45 -apple-system, "Segoe UI", "Helvetica Neue", Arial, "Liberation Sans", sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 20px 28px 60px; }
h1 { font-size: 24px; margin: 0 0 8px; }
h1 .runid { font-weight: 400; color: %(muted)s; }
h2 { font-size: 19px; margin: 30px 0 10px; padding-bottom: 4px; border-bottom: 1px solid %(grid)s; }
h3 { font-size: 15px; margin: 14px 0 6px; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace; font-size: 12.5px; }
a { color: #0969da; text-decoration: none; }
a:hover { text-decoration: underline; }
.meta { display: flex; flex-wrap: wrap; gap: 6px 24px; margin: 0; }
.meta div { display: flex; gap: 6px; }
.meta dt { color: %(muted)s; }
.meta dd { margin: 0; }
.meta.tight { display: block; }
nav { position: sticky; top: 0; background: rgba(255,255,255,0.96); border-bottom: 1px solid %(grid)s;
  padding: 6px 0; margin: 10px 0 0; z-index: 2; }
nav a { margin-right: 16px; font-size: 13px; }
.panel { display: flex; flex-wrap: wrap; gap: 14px; align-items: stretch; }
.card { border: 1px solid %(grid)s; border-radius: 8px; padding: 12px 16px; background: #ffffff; min-width: 200px; }
.card.headline { flex: 0 0 250px; }
.card.gatecard { flex: 1 1 380px; }
.panel.cards .card { flex: 1 1 170px; max-width: 300px; }
.label { text-transform: uppercase; letter-spacing: .05em; font-size: 11px; color: %(muted)s; margin-bottom: 4px; }
.bignum { font-size: 54px; font-weight: 700; line-height: 1.05; font-variant-numeric: tabular-nums; }
.midnum { font-size: 26px; font-weight: 650; font-variant-numeric: tabular-nums; }
.sub { font-size: 12.5px; color: %(muted)s; margin-top: 4px; }
.badge { display: inline-block; color: #ffffff; border-radius: 999px; padding: 1px 9px; font-size: 11.5px;
  font-weight: 600; letter-spacing: .03em; vertical-align: middle; }
.badge.big { font-size: 20px; padding: 4px 16px; margin: 4px 0 6px; letter-spacing: .06em; }
table { border-collapse: collapse; margin: 6px 0 10px; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid %(grid)s; padding: 4px 9px; text-align: left; vertical-align: top; }
thead th { background: %(stripe)s; font-weight: 600; font-size: 12.5px; position: relative; }
table.sortable thead th { cursor: pointer; }
table.compact td, table.compact th { padding: 2px 8px; font-size: 13px; }
td.num { text-align: right; white-space: nowrap; }
td.kvs { font-size: 12px; min-width: 150px; }
.kv { display: inline-block; margin: 0 8px 0 0; white-space: nowrap; }
.kv b { color: %(muted)s; font-weight: 500; }
.bad, .num.bad { color: %(fail)s; }
.good, .num.good { color: %(pass)s; }
.muted { color: %(muted)s; }
.tablewrap { overflow-x: auto; }
.meter { display: inline-block; width: 80px; height: 8px; background: %(stripe)s; border: 1px solid %(grid)s;
  margin-left: 8px; vertical-align: middle; }
.meter span { display: block; height: 100%%; background: %(mid)s; }
.plotwrap { overflow-x: auto; }
svg.plot { display: block; max-width: 100%%; height: auto; }
svg .tick { font-size: 11px; fill: %(muted)s; }
svg .lbl { font-size: 12px; }
svg .val { font-size: 11.5px; fill: %(muted)s; }
.intro { color: %(muted)s; margin: 0 0 8px; max-width: 900px; }
.legend { font-size: 12.5px; color: %(muted)s; margin: 4px 0 0; }
.sw { display: inline-block; vertical-align: middle; margin: 0 5px 0 12px; }
.sw.dot { width: 10px; height: 10px; border-radius: 50%%; }
.sw.tick { width: 2px; height: 14px; background: %(ink)s; }
.sw.ci { width: 22px; height: 8px; border-radius: 2px; background: %(ci)s; }
.sw.dash { width: 0; height: 14px; border-left: 2px dashed %(warn)s; }
.sw.diamond { width: 8px; height: 8px; transform: rotate(45deg); }
.sw.bar { width: 18px; height: 11px; }
.sw.thin { width: 18px; height: 4px; }
details.enc { border: 1px solid %(grid)s; border-radius: 6px; margin: 6px 0; }
details.enc > summary { cursor: pointer; padding: 7px 12px; background: %(stripe)s; border-radius: 6px; }
details.enc[open] > summary { border-bottom: 1px solid %(grid)s; border-radius: 6px 6px 0 0; }
details.enc:target { outline: 2px solid #0969da; }
.sumline { color: %(muted)s; font-size: 13px; margin-left: 6px; }
.encbody { display: flex; flex-wrap: wrap; gap: 18px; padding: 8px 14px 12px; }
.scorecard { flex: 1 1 380px; min-width: 320px; }
.tx { flex: 1.4 1 480px; min-width: 320px; }
table.scoretable th { width: 170px; color: %(muted)s; font-weight: 500; font-size: 13px; }
table.scoretable td { font-size: 13px; }
table.scoretable ul { margin: 0; padding-left: 18px; }
table.scoretable, table.jtable { width: 100%%; }
table.jtable td, table.jtable th { font-size: 12.5px; }
ol.transcript { list-style: none; margin: 0; padding: 0; }
.turn { border-left: 3px solid %(grid)s; padding: 4px 10px; margin: 0 0 8px; border-radius: 0 6px 6px 0; }
.turn.patient { border-color: #8250df; background: #fbf8ff; }
.turn.agent { border-color: #0969da; background: #f3f8ff; margin-left: 28px; }
.turn.harness { border-color: %(warn)s; background: #fff8e6; }
.who { font-weight: 600; font-size: 12px; }
.who .muted { font-weight: 400; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 13.5px; }
.revealed, .heard { font-size: 12px; color: %(muted)s; margin-top: 3px; }
.chip { display: inline-block; background: #e6f4ea; color: %(pass)s; border-radius: 4px; padding: 0 6px;
  margin: 0 4px 2px 0; }
.warnbox { border: 1px solid #d4a72c; background: #fff8c5; border-radius: 6px; padding: 8px 12px; margin: 10px 0; }
.warnbox ul { margin: 4px 0 0; }
.split { display: flex; flex-wrap: wrap; gap: 20px; align-items: flex-start; }
td.evidence { font-size: 12px; color: %(muted)s; max-width: 420px; overflow-wrap: anywhere; }
ul.errors code { white-space: pre-wrap; overflow-wrap: anywhere; }
footer { margin-top: 40px; color: %(muted)s; font-size: 12px; }
@media print {
  nav { display: none; }
  main { max-width: none; padding: 0; }
  body { font-size: 11.5px; }
  section, details, .card, tr { break-inside: avoid; }
  details.enc > summary { background: none; }
  a { color: inherit; }
}
""" % {"ink": INK, "muted": MUTED, "grid": GRID, "stripe": STRIPE, "pass": PASS, "fail": FAIL, "warn": WARN,  # noqa: UP031, E501  (%-format: the CSS is full of braces)
       "ci": CI_FILL, "mid": MID_FILL}

# Optional: click a header to sort; open every encounter before printing. The page reads fine without it.
SCRIPT = """
(function () {
  function key(td) {
    var v = td.getAttribute('data-sort');
    if (v === null) { v = td.textContent.trim(); }
    var n = parseFloat(v);
    return (v !== '' && !isNaN(n) && isFinite(v)) ? n : v.toLowerCase();
  }
  document.querySelectorAll('table.sortable thead th').forEach(function (th) {
    th.title = 'sort';
    th.addEventListener('click', function () {
      var table = th.closest('table'), body = table.tBodies[0];
      var i = Array.prototype.indexOf.call(th.parentNode.children, th);
      var asc = th.getAttribute('data-dir') !== 'asc';
      th.parentNode.querySelectorAll('th').forEach(function (h) { h.removeAttribute('data-dir'); });
      th.setAttribute('data-dir', asc ? 'asc' : 'desc');
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a.cells[i]), y = key(b.cells[i]);
        if (typeof x !== typeof y) { x = String(x); y = String(y); }
        return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  window.addEventListener('beforeprint', function () {
    document.querySelectorAll('details').forEach(function (d) { d.open = true; });
  });
})();
"""


def render_html(meta: RunMeta, summary: Summary, records: Records) -> str:
    """The whole report as one self-contained HTML5 document (inline CSS and SVG, no network)."""
    scored = [(sid, k, rec.score) for (sid, k), rec in sorted(records.items())
              if rec.status == "ok" and rec.score is not None]
    encounters, anchors = _worst_encounters(summary, records)
    flagged = _get(summary, "disagreements", None)
    sections = [
        ("gate", "Gate", _gate_panel(summary)),
        ("triage-accuracy", "Triage accuracy", _triage_accuracy(summary)),
        ("suites", "Suites", _suites(summary)),
        ("live", "Live call", _live(summary, records)),
        ("patient", "Patient understanding", _understanding(summary, meta)),
        ("imaging", "Imaging", _imaging(summary, records)),
        ("distributions", "Distributions", _distributions(summary, records)),
        ("worst-of-k", "Worst of K", _worst_bars(summary)),
        ("scenarios", "Scenarios", _scenario_table(summary)),
        ("findings", "Findings", findings_section(scored, anchors=anchors)),
        ("judge", "Judge", judge_section(_get(summary, "judge", None))),
        ("disagreements", "Disagreements", disagreements_section(
            flagged, anchors=anchors, extra=_flagged_encounters(flagged, records, anchors))),
        ("encounters", "Worst encounters", encounters),
        ("errors", "Errors", _errors(records)),
    ]
    present = [(sid, name, body) for sid, name, body in sections if body]
    nav = "<nav>" + "".join(f'<a href="#{sid}">{_e(name)}</a>' for sid, name, _ in present) + "</nav>"
    generated = time.strftime("%Y-%m-%d %H:%M:%S")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>encounter-sim report: {_e(meta.run_id)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
        + _header(meta, summary) + nav + "\n"
        + "".join(body for _, _, body in present)
        + f"<footer>Rendered {_e(generated)} from summary.json and results.jsonl by encounter-sim; the same "
          "numbers are in report.md. Self-contained: no network needed.</footer>\n"
        + f"</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n"
    )


def write_html_report(run_dir: Path, meta: RunMeta, summary: Summary, records: Records) -> Path:
    """Render and write ``<run_dir>/report.html`` atomically (tmp file, then ``os.replace``)."""
    path = Path(run_dir) / REPORT_HTML_FILE
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(clean(render_html(meta, summary, records)), encoding="utf-8")
    os.replace(tmp, path)
    return path
