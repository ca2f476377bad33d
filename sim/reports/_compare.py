"""Render a ``scorers.Comparison`` (``encsim compare``): the plain-text table and the ``--json`` file.

Text: per-scenario rows (Welch's t, Bonferroni-adjusted p, Cohen's d), the overall number with its CI, the
drift verdict and the notes. The overall number is the aggregate, or for two rubric-only runs the HealthBench
score with its per-axis, per-theme and per-tag breakdown (``Comparison.healthbench``); a run without an aggregate
shows its own headline instead (``Comparison.headline_a`` / ``headline_b``).

JSON (``write_comparison_json``): ``metric`` is written when it is the HealthBench score, and
``healthbench``, ``headline_a``, ``headline_b`` when set, so two ordinary runs give the same JSON
as before rubric-only runs could be compared.

Both outputs are redacted (``sim.records``: the text with ``clean``, the JSON with ``redact_json``):
model names, headline notes and run paths come from run directories that may predate redaction.
"""

from __future__ import annotations

from pathlib import Path

from scorers import METRIC_AGGREGATE, Comparison, HealthBenchComparison, ScenarioComparison
from sim.records import ConfigError, Headline, SafetyGate, clean, redact_json

_ADDED_FIELDS = ("healthbench", "headline_a", "headline_b")


def write_comparison_json(c: Comparison, path: Path) -> None:
    """Write the comparison as JSON (``encsim compare --json``), redacted.

    Fields added for rubric-only runs are written only when they say something (``metric`` when it is not
    the aggregate, the others when set), so the JSON of two ordinary runs is what it was before they existed.

    Args:
        c: The comparison, from ``sim.compare.compare_runs``.
        path: The file to write.

    Raises:
        ConfigError: The file cannot be written.
    """
    exclude = {f for f in _ADDED_FIELDS if getattr(c, f) is None}
    if c.metric == METRIC_AGGREGATE:
        exclude.add("metric")
    try:
        Path(path).write_text(redact_json(c.model_dump_json(indent=2, exclude=exclude or None)), encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--json {path}: cannot write the comparison ({exc.strerror}). "
                          "Choose a writable path.") from None


def _f(x: float | None, digits: int = 3, missing: str = "n/a") -> str:
    return missing if x is None else f"{x:.{digits}f}"


def _p(p: float | None, missing: str = "n/a") -> str:
    if p is None:
        return missing
    if p == 0.0:
        return "0"
    return f"{p:.1e}" if p < 1e-3 else f"{p:.3f}"


def _d(row: ScenarioComparison, missing: str = "n/a") -> str:
    if row.cohens_d is not None:
        return f"{row.cohens_d:+.2f}"
    # None with a defined test and a non-zero difference: the pooled SD is 0, the effect infinite.
    if row.p is not None and row.diff != 0:
        return "+inf" if row.diff > 0 else "-inf"
    return missing


def _gate(agg: float | None, uncapped: float | None, gate: SafetyGate | None) -> str:
    text = _f(agg)
    if gate is not None and gate.triggered:
        n = len(gate.scenarios)
        text += f" (safety gate TRIGGERED by {n} scenario{'s' if n != 1 else ''}"
        text += f"; uncapped {_f(uncapped)})" if uncapped != agg else ")"
    elif gate is not None:
        text += f" (safety gate {gate.state})"
    return text


def _overall_line(name: str, agg: float | None, uncapped: float | None, gate: SafetyGate | None,
                  headline: Headline | None) -> str:
    """"aggregate A: 0.812 (safety gate passed)"; a run without an aggregate shows its own headline instead."""
    if agg is None and headline is not None and headline.name != "aggregate":
        return f"{name}: {headline.text()}; no aggregate"
    return f"aggregate {name}: {_gate(agg, uncapped, gate)}"


def _ci(ci: list[float] | None) -> str:
    return f" (95% CI {ci[0]:.3f}-{ci[1]:.3f})" if ci else ""


def _table(c: Comparison, missing: str) -> list[str]:
    lines = [f"{'scenario':32} {'suite':8} {'n_a':>3} {'n_b':>3} {'mean_a':>7} {'mean_b':>7} {'diff':>7} "
             f"{'p':>8} {'p_adj':>8} {'d':>6}"]
    for r in c.scenarios:
        lines.append(f"{r.id[:32]:32} {r.suite[:8]:8} {r.n_a:>3} {r.n_b:>3} {r.mean_a:>7.3f} {r.mean_b:>7.3f} "
                     f"{r.diff:>+7.3f} {_p(r.p, missing):>8} {_p(r.p_bonferroni, missing):>8} {_d(r, missing):>6}"
                     + (" *" if r.significant else ""))
    n_sig = sum(r.significant for r in c.scenarios)
    return [*lines, f"{n_sig} of {len(c.scenarios)} scenarios differ significantly.", ""]


def _only(c: Comparison, what: str) -> list[str]:
    lines = []
    if c.only_in_a:
        lines.append(f"{what} only in A (not compared): {', '.join(c.only_in_a)}")
    if c.only_in_b:
        lines.append(f"{what} only in B (not compared): {', '.join(c.only_in_b)}")
    return [*lines, ""] if lines else []


def _healthbench_lines(c: Comparison, hb: HealthBenchComparison) -> list[str]:
    """The overall HealthBench score lines of a rubric-only comparison; never "n/a"."""
    lines = [f"{hb.name} A: " + (f"{hb.a:.3f}{_ci(hb.ci95_a)}" if hb.a is not None else "none"),
             f"{hb.name} B: " + (f"{hb.b:.3f}{_ci(hb.ci95_b)}" if hb.b is not None else "none")]
    if hb.diff is None or hb.diff_ci95 is None:
        lines.append(f"{hb.name} difference: not computed (no scenario has rubric scores in both runs)")
    else:
        lo, hi = hb.diff_ci95
        lines.append(f"{hb.name} difference B - A: {hb.diff:+.3f}, 95% CI [{lo:+.3f}, {hi:+.3f}] (paired bootstrap "
                     f"over {hb.shared_scenarios} shared scenarios, clipped means of encounters' rubric scores): "
                     + ("SIGNIFICANT" if hb.significant else "not significant"))
    for label, rows in (("per axis", hb.axes), ("per theme", hb.themes), ("per rubric tag", hb.tags)):
        if rows:
            lines.append(f"{label} (A -> B, B - A): "
                         + "; ".join(f"{r.name} {r.a:.3f} -> {r.b:.3f} ({r.diff:+.3f})" for r in rows))
    d = c.drift
    if d is None:
        lines.append("drift: not computed (no scenario has rubric scores in both runs)")
    else:
        rel = "undefined (A is 0)" if d.relative_change is None else f"{d.relative_change:+.1%}"
        lines.append(f"drift: {hb.name} {rel} (threshold {d.threshold:.0%}); KS D={_f(d.ks_stat, missing='-')} "
                     f"p={_p(d.ks_p, '-')}; Mann-Whitney U={_f(d.mwu_stat, 1, '-')} p={_p(d.mwu_p, '-')}: "
                     + ("ALERT" if d.alert else "ok"))
    return lines


def render_comparison(c: Comparison) -> str:
    """Render a comparison as plain text (what ``encsim compare`` prints).

    Per-scenario rows, the overall number with its CI, the drift verdict and the notes. The overall number
    is the aggregate, or for two rubric-only runs the HealthBench score with its per-axis and per-tag
    breakdown; a rubric-only comparison prints "-" for a test that cannot be made, never "n/a".

    Args:
        c: The comparison, from ``sim.compare.compare_runs``.

    Returns:
        The text, ending in a newline, redacted and neutralised (``sim.records.clean``).
    """
    head = [f"A: {c.run_a}  model {c.model_a}, K={c.k_a}", f"B: {c.run_b}  model {c.model_b}, K={c.k_b}"]
    tests = (f"differences are B - A; * = significant after Bonferroni across "
             f"{sum(r.p is not None for r in c.scenarios)} scenarios (adjusted p < 0.05)")
    if c.healthbench is not None:
        lines = [*head,
                 f"metric: {c.healthbench.name} (per encounter its rubric score, unclipped; per run their mean "
                 "clipped to [0, 1])",
                 tests + "; - = no test (fewer than 2 rubric scores in a run)", "",
                 *_table(c, "-"), *_only(c, "rubric-scored"), *_healthbench_lines(c, c.healthbench)]
        if c.notes:
            lines += ["", "notes:"] + [f"- {n}" for n in c.notes]
        return clean("\n".join(lines) + "\n")
    lines = [*head, tests, "", *_table(c, "n/a"), *_only(c, "scored")]
    lines += [
        _overall_line("A", c.aggregate_a, c.aggregate_uncapped_a, c.safety_gate_a, c.headline_a),
        _overall_line("B", c.aggregate_b, c.aggregate_uncapped_b, c.safety_gate_b, c.headline_b),
    ]
    both = c.aggregate_a is not None and c.aggregate_b is not None
    if c.aggregate_diff is None or c.aggregate_ci95 is None:
        lines.append("aggregate difference: " + ("n/a" if both else "not computed (see notes)"))
    else:
        lo, hi = c.aggregate_ci95
        lines.append(f"aggregate difference B - A: {c.aggregate_diff:+.3f}, 95% CI [{lo:+.3f}, {hi:+.3f}] "
                     f"(paired bootstrap over {len(c.scenarios)} scenarios, uncapped means): "
                     + ("SIGNIFICANT" if c.aggregate_significant else "not significant"))
    if (r := c.speech_retention) is not None:
        kept = "n/a (the text run scored 0)" if r.retention is None else f"{r.retention:.1%}"
        lines.append(f"speech retention: {kept} of the text score kept over speech (run {r.speech_run} "
                     f"{c.channel_b if r.speech_run == 'B' else c.channel_a} mean {r.speech_mean:.3f} / run "
                     f"{r.text_run} text mean {r.text_mean:.3f}, over {r.scenarios} shared scenarios)")
    d = c.drift
    if d is None:
        lines.append("drift: " + ("n/a" if both else "not computed (see notes)"))
    else:
        rel = "n/a" if d.relative_change is None else f"{d.relative_change:+.1%}"
        lines.append(f"drift: aggregate {rel} (threshold {d.threshold:.0%}); KS D={_f(d.ks_stat)} p={_p(d.ks_p)}; "
                     f"Mann-Whitney U={_f(d.mwu_stat, 1)} p={_p(d.mwu_p)}: " + ("ALERT" if d.alert else "ok"))
    if c.notes:
        lines += ["", "notes:"] + [f"- {n}" for n in c.notes]
    return clean("\n".join(lines) + "\n")
