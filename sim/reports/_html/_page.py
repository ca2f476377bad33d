"""The page shell of report.html.

The document, its inline CSS and optional script, the nav of the sections present, the footer, and the
atomic write of ``<run_dir>/report.html``.

The sections, in page order, each from its own module: header (``_header``), aggregate and safety gate
(``_gate``), triage accuracy, suites, live call, voice measures (``_voice``), patient understanding, imaging, score
distributions, worst of K, the scenarios table, evaluator findings, judge agreement, flagged disagreements (with
their encounters), the worst encounter of every scenario (``_encounters``) and errors. A section with nothing to
show renders as an empty string and is left out of the page and the nav.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from sim.records import RunLayout, RunMeta, Summary, clean
from sim.reports._html._base import CI_FILL, FAIL, GRID, INK, MID_FILL, MUTED, PASS, STRIPE, WARN, Records, esc
from sim.reports._html._disagreements import disagreements_section
from sim.reports._html._distributions import distributions_section
from sim.reports._html._encounters import flagged_encounters, worst_encounters_section
from sim.reports._html._errors import errors_section
from sim.reports._html._failure_rates import failure_rates_section
from sim.reports._html._findings import findings_section
from sim.reports._html._gate import gate_section
from sim.reports._html._header import header
from sim.reports._html._imaging import imaging_section
from sim.reports._html._judge import judge_section
from sim.reports._html._live import live_section
from sim.reports._html._patient import patient_section
from sim.reports._html._robustness import robustness_section
from sim.reports._html._scenarios import scenarios_section
from sim.reports._html._suites import suites_section
from sim.reports._html._triage_accuracy import triage_accuracy_section
from sim.reports._html._voice import voice_section
from sim.reports._html._worst_of_k import worst_of_k_section

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
""" % {"ink": INK, "muted": MUTED, "grid": GRID, "stripe": STRIPE, "pass": PASS, "fail": FAIL, "warn": WARN,  # noqa: UP031  (%-format: the CSS is full of braces)
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
    """Render a run's ``report.html``: one self-contained HTML5 document (inline CSS and SVG, no network).

    Args:
        meta: The run's ``run.json``.
        summary: The run's summary (``summary.json``).
        records: Every encounter record of ``results.jsonl``, by (scenario id, k).

    Returns:
        The page. Untrusted text in it is redacted and escaped; ``write_html_report`` redacts the whole page
        once more as it writes it.
    """
    scored = [(sid, k, rec.score) for (sid, k), rec in sorted(records.items())
              if rec.status == "ok" and rec.score is not None]
    encounters, anchors = worst_encounters_section(summary, records)
    findings = findings_section(scored, anchors=set(anchors))  # links to the worst encounters only
    flagged = flagged_encounters(summary.disagreements, records, anchors)  # adds the flagged encounters' anchors
    sections = [
        ("gate", "Gate", gate_section(summary)),
        ("persona-robustness", "Persona robustness", robustness_section(summary)),
        ("triage-accuracy", "Triage accuracy", triage_accuracy_section(summary)),
        ("suites", "Suites", suites_section(summary)),
        ("live", "Live call", live_section(summary, records)),
        ("voice-measures", "Voice measures", voice_section(summary)),
        ("patient", "Patient understanding", patient_section(summary, meta)),
        ("imaging", "Imaging", imaging_section(summary, records)),
        ("distributions", "Distributions", distributions_section(summary, records)),
        ("worst-of-k", "Worst of K", worst_of_k_section(summary)),
        ("scenarios", "Scenarios", scenarios_section(summary)),
        ("findings", "Findings", findings),
        ("failure-modes", "Failure modes", failure_rates_section(summary)),
        ("judge", "Judge", judge_section(summary.judge)),
        ("disagreements", "Disagreements", disagreements_section(summary.disagreements, anchors=anchors,
                                                                 extra=flagged)),
        ("encounters", "Worst encounters", encounters),
        ("errors", "Errors", errors_section(records)),
    ]
    present = [(sid, name, body) for sid, name, body in sections if body]
    nav = "<nav>" + "".join(f'<a href="#{sid}">{esc(name)}</a>' for sid, name, _ in present) + "</nav>"
    generated = time.strftime("%Y-%m-%d %H:%M:%S")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>encounter-sim report: {esc(meta.run_id)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
        + header(meta, summary) + nav + "\n"
        + "".join(body for _, _, body in present)
        + f"<footer>Rendered {esc(generated)} from summary.json and results.jsonl by encounter-sim; the same "
          "numbers are in report.md. Self-contained: no network needed.</footer>\n"
        + f"</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n"
    )


def write_html_report(run_dir: Path, meta: RunMeta, summary: Summary, records: Records) -> Path:
    """Render ``report.html`` and write it into the run directory atomically (tmp file, then ``os.replace``).

    Args:
        run_dir: The run directory.
        meta: The run's ``run.json``.
        summary: The run's summary (``summary.json``).
        records: Every encounter record of ``results.jsonl``, by (scenario id, k).

    Returns:
        The path written, ``<run_dir>/report.html``.
    """
    path = RunLayout(Path(run_dir)).report_html
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(clean(render_html(meta, summary, records)), encoding="utf-8")
    os.replace(tmp, path)
    return path
