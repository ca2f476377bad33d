"""The "Evaluator findings" section.

Per evaluator, the encounters it ran on, how many passed, its mean score and its findings by severity (a
table and stacked bars), then every finding, most severe first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from scorers.evaluators import SEVERITIES, Finding
from sim.records import ScoreCard
from sim.reports._html._base import SEVERITY_COLOUR, badge, enc_anchor, esc, fixed, section, sort_key, td
from sim.reports._html._svg import findings_bars

MAX_FINDINGS_ROWS = 300
FINDINGS_OPEN_UP_TO = 25


@dataclass
class _Tally:
    """One evaluator over the run: encounters, passes, scores, findings per (severity rank, severity)."""

    runs: int = 0
    passed: int = 0
    scores: list[float] = field(default_factory=list)
    sev: Counter[tuple[int, str]] = field(default_factory=Counter)


def findings_section(cards: Iterable[tuple[str, int, ScoreCard]], *, anchors: set[str]) -> str:
    """Evaluator findings over every encounter.

    ``cards`` holds (scenario id, k, score card) of the scored encounters; a finding of an encounter whose
    anchor is in ``anchors`` links to its block. Empty string when no card carries evaluator results.
    """
    per_eval: dict[str, _Tally] = {}
    findings: list[tuple[int, str, str, str, int, Finding]] = []
    for sid, k, card in cards:
        for ev in card.evaluators:
            name = ev.name or "evaluator"
            st = per_eval.setdefault(name, _Tally())
            st.runs += 1
            st.passed += ev.passed
            st.scores.append(ev.score)
            for fd in ev.findings:
                rank = SEVERITIES.index(fd.severity)
                st.sev[(rank, fd.severity)] += 1
                findings.append((rank, fd.severity, name, sid, k, fd))
    if not per_eval:
        return ""
    sevs = sorted({key for st in per_eval.values() for key in st.sev})
    head = ("<tr><th>evaluator</th><th>encounters</th><th>passed</th><th>mean score</th>"
            + "".join(f"<th>{esc(s)}</th>" for _, s in sevs) + "<th>findings</th></tr>")
    rows = []
    for name, st in sorted(per_eval.items()):
        mean = sum(st.scores) / len(st.scores) if st.scores else None
        total = sum(st.sev.values())
        passed = f"{st.passed}/{st.runs}"
        rows.append(f"<tr><td>{esc(name)}</td>{td(str(st.runs), st.runs, 'num')}"
                    f"{td(passed, st.passed, 'num')}"
                    f"{td(fixed(mean, 3), sort_key(mean), 'num')}"
                    + "".join(td(str(st.sev.get(key, 0)), st.sev.get(key, 0), "num") for key in sevs)
                    + f"{td(str(total), total, 'num')}</tr>")
    counts = f'<table class="sortable"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'
    plot = findings_bars({name: st.sev for name, st in per_eval.items()}, sevs)
    findings.sort(key=lambda f: (f[0], f[2], f[3], f[4]))
    frows = []
    for rank, sev, name, sid, k, fd in findings[:MAX_FINDINGS_ROWS]:
        where = f"{esc(sid)} k={k}"
        if enc_anchor(sid, k) in anchors:
            where = f'<a href="#{enc_anchor(sid, k)}">{where}</a>'
        evidence_text = "" if fd.evidence is None else esc(fd.evidence)
        if len(evidence_text) > 400:
            evidence_text = evidence_text[:400] + "\u2026"
        frows.append(f"<tr>{td(badge(sev, SEVERITY_COLOUR[sev]), rank)}<td>{esc(name)}</td>"
                     f"<td><code>{esc(fd.code)}</code></td><td>{where}</td>"
                     f"<td>{esc(fd.message)}</td><td class=\"evidence\">{evidence_text}</td></tr>")
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
    return section("findings", "Evaluator findings", f"{plot}{counts}{listing}",
                   f"{len(findings)} finding(s) from {len(per_eval)} evaluator(s) across the run's encounters.")
