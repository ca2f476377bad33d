"""The "Aggregate and safety gate" panel.

The headline number (the aggregate, or a rubric-only run's HealthBench score), the gate's verdict and
why, triage agreement (QWK, verdicts) and the component means.
"""

from __future__ import annotations

from sim.records import Summary, verdict_text
from sim.reports._html._base import FAIL, INK, PASS, WARN, badge, enc_anchor, esc, fixed
from sim.reports._html._svg import component_bars


def _headline_card(summary: Summary, agg: float | None, colour: str, cap_note: str) -> str:
    """The aggregate, or for a rubric-only run the HealthBench score with its CI (never a bare n/a)."""
    h = summary.headline
    if h is None or h.name == "aggregate":
        return (f'<div class="label">aggregate</div>\n<div class="bignum" style="color:{colour}">{fixed(agg, 3)}'
                f'</div>\n<div class="sub">{esc(cap_note)}</div>')
    ci = f"95% CI {h.ci95[0]:.3f}-{h.ci95[1]:.3f}; " if h.ci95 else ""
    return (f'<div class="label">{esc(h.name)}</div>\n<div class="bignum">{fixed(h.value, 3)}</div>\n'
            f'<div class="sub">{esc(ci + h.note)}</div>')


def gate_section(summary: Summary) -> str:
    """The panel, always present: the headline card, the gate card and the triage-agreement card."""
    gate = summary.safety_gate
    agg, unc = summary.aggregate, summary.aggregate_uncapped
    if gate.triggered:
        capped = agg is not None and unc is not None and agg != unc
        cap_note = (f"capped at {gate.cap:.2f} by the safety gate (uncapped {fixed(unc, 3)})" if capped else
                    f"uncapped {fixed(unc, 3)}: already below the gate's cap of {gate.cap:.2f}")
    else:
        cap_note = f"uncapped {fixed(unc, 3)}; the gate did not cap it"
    if summary.errors:
        cap_note += (f"; {summary.errors} errored encounter(s) count as 0 (score without errors: "
                     f"{fixed(summary.aggregate_without_errors, 3)})")
    agg_colour = INK if agg is None else (PASS if agg >= summary.pass_threshold else FAIL if gate.triggered else WARN)
    gate_badge = (badge("TRIGGERED", FAIL, big=True) if gate.triggered else
                  badge("NOTHING GATED", WARN, big=True) if gate.state == "nothing gated" else
                  badge("PASSED", PASS, big=True))
    if gate.triggered:
        rows = "".join(f'<tr><td><a href="#{_enc_anchor_for(summary, sid)}">{esc(sid)}</a></td>'
                       f'<td>{esc(gate.reasons.get(sid, ""))}</td></tr>' for sid in gate.scenarios)
        why = (f'<p>The aggregate is capped at <b>{gate.cap:.2f}</b> because {len(gate.scenarios)} gated '
               f'scenario(s) fell below the threshold of {gate.threshold:g}:</p>'
               '<table class="compact"><thead><tr><th>scenario</th><th>why</th></tr></thead>'
               f'<tbody>{rows}</tbody></table>')
    elif gate.state == "nothing gated":
        why = ("<p>No scenario of this run fed the gate (no safety-suite scenario, emergency target, critical imaging "
               "finding or importer mark), so passing it says nothing about safety.</p>")
    else:
        why = (f'<p>Every gated scenario has a mean escalation safety of at least {gate.threshold:g}; '
               f'the cap of {gate.cap:.2f} does not apply.</p>')
    why += _watched_table(summary)
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
<div>{gate_badge}</div>
{why}
</div>
<div class="card">
<div class="label">triage agreement</div>
<div class="midnum">QWK {fixed(summary.qwk, 3)}</div>
<div class="sub">quadratic weighted kappa over {summary.qwk_pairs} encounters with a parsed level, against each
scenario's best label</div>
<div class="sub">triage {esc(verdict_text(summary.verdicts.get("triage", {})))};
escalation {esc(verdict_text(summary.verdicts.get("escalation", {})))}
(acceptable = inside the acceptable set, not the best label)</div>
<div class="label" style="margin-top:10px">component means</div>
{component_bars(summary.components)}
</div>
</div>
</section>
"""


def _watched_table(summary: Summary) -> str:
    """Which scenarios fed the gate and why (folded: a library run gates dozens)."""
    watched = summary.safety_gate.watched
    if not watched:
        return ""
    rows = "".join(f"<tr><td>{esc(sid)}</td><td>{esc(why)}</td></tr>" for sid, why in watched.items())
    return (f"<details><summary>{len(watched)} scenario(s) fed the gate</summary>"
            '<table class="compact"><thead><tr><th>scenario</th><th>gated because</th></tr></thead>'
            f"<tbody>{rows}</tbody></table></details>")


def _enc_anchor_for(summary: Summary, scenario_id: str) -> str:
    for r in summary.scenarios:
        if r.id == scenario_id and r.worst_k_index is not None:
            return enc_anchor(r.id, r.worst_k_index)
    return "scenarios"
