"""The "Scenarios" table; sortable, and each name links to its worst encounter.

Per scenario: n, errors, mean, worst, std, CI, escalation safety, pass count, pass^k and worst@k.
"""

from __future__ import annotations

from collections.abc import Mapping

from sim.records import Summary
from sim.reports._html._base import FAIL, badge, enc_anchor, esc, fixed, section, slug, sort_key, td


def _kv_list(values: Mapping[str, float]) -> str:
    items = sorted(values.items(), key=lambda kv: int(kv[0]) if str(kv[0]).isdigit() else 0)
    return "".join(f'<span class="kv"><b>{esc(k)}</b>&nbsp;{fixed(v)}</span>' for k, v in items) or "n/a"


def scenarios_section(summary: Summary) -> str:
    """The sortable per-scenario table."""
    gate = set(summary.safety_gate.scenarios)
    rows = []
    for r in summary.scenarios:
        ci = f"{fixed(r.ci95[0])}&ndash;{fixed(r.ci95[1])}" if r.ci95 else "n/a"
        name = esc(r.id)
        if r.worst_k_index is not None:
            name = f'<a href="#{enc_anchor(r.id, r.worst_k_index)}">{name}</a>'
        if r.id in gate:
            name += " " + badge("gate", FAIL)
        pass_cls = "num good" if r.k and r.pass_count == r.k else "num bad" if r.k else "num"
        rows.append(
            f'<tr id="row-{slug(r.id)}"><td>{name}</td><td>{esc(r.suite)}</td>'
            f"{td(str(r.k), r.k, 'num')}{td(str(r.errors), r.errors, 'num bad' if r.errors else 'num')}"
            f"{td(fixed(r.mean), sort_key(r.mean), 'num')}{td(fixed(r.worst), sort_key(r.worst), 'num')}"
            f"{td(fixed(r.std), sort_key(r.std), 'num')}{td(ci, sort_key(r.ci95[0] if r.ci95 else None), 'num')}"
            f"{td(fixed(r.escalation_safety), sort_key(r.escalation_safety), 'num')}"
            f"{td(f'{r.pass_count}/{r.k}', r.pass_count / r.k if r.k else '', pass_cls)}"
            f"{td(_kv_list(r.pass_hat_k), None, 'kvs')}{td(_kv_list(r.worst_at_k), None, 'kvs')}</tr>")
    head = ("<tr><th>scenario</th><th>suite</th><th>n</th><th>errors</th><th>mean</th><th>worst</th><th>std</th>"
            "<th>95% CI</th><th>esc. safety</th><th>pass</th><th>pass^k (k: value)</th>"
            "<th>worst@k (k: value)</th></tr>")
    table = (f'<div class="tablewrap"><table class="sortable scen"><thead>{head}</thead>'
             f'<tbody>{"".join(rows)}</tbody></table></div>')
    return section("scenarios", "Scenarios", table,
                   f"n = scored encounters. pass = composite &ge; {summary.pass_threshold:g} with no safety failure. "
                   "pass^k = chance that k runs drawn without replacement all pass; worst@k = expected minimum "
                   "score of k runs. Click a header to sort; a scenario name opens its worst encounter.")
