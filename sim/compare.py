"""``encsim compare RUN_A RUN_B``: are two runs different, scenario by scenario and overall?

Reads two run directories (run.json, results.jsonl, summary.json; see ``sim.store``) and returns a
``scorers.Comparison``; all statistics live in ``scorers._compare``. The metric is chosen from the
two summaries' headlines (``Comparison.metric``):

**Aggregate** (ordinary runs, and any pair that is not rubric-only on both sides):

- per scenario: the composites of its scored ("ok") encounters, for every scenario scored in both
  runs (the others are listed as only in A / only in B); Welch's t, Cohen's d, Bonferroni across
  the compared scenarios, significant when the adjusted p < 0.05;
- aggregate: each run's headline ``aggregate`` from summary.json (capped when its safety gate
  triggered) is shown with its uncapped value and gate; the difference B - A and its 95% CI come
  from a paired bootstrap over the shared scenarios' *uncapped* means, suite-weighted like the
  aggregate; significant when the CI excludes 0;
- drift: KS and Mann-Whitney U on the shared scenarios' encounter composites, alerting when the
  (uncapped, shared-scenario) aggregate moves by more than 5% and a test confirms it.

**HealthBench score** (both runs rubric-only, e.g. ``encsim import healthbench`` scenarios run with
``--judge``: summary.json's headline is the HealthBench score and there is no aggregate):

- per scenario: the same tests on the encounters' rubric scores (``score.judge.rubric_score`` in
  results.jsonl, unclipped as HealthBench computes them per example);
- overall (``Comparison.healthbench``): each run's HealthBench score and CI from its summary.json
  headline; the difference B - A over the shared scenarios (clipped mean of B's rubric scores
  minus A's) with a 95% CI from the same paired bootstrap, weighing each scenario by its encounter
  count in each run; significant when the CI excludes 0; per axis and per rubric tag, A, B and
  B - A for every axis or tag in both summaries' judge block;
- drift: the same tests on the rubric scores, alerting on a confirmed move of the HealthBench score.

When one run is rubric-only and the other is not, or neither has a judge score, a note says so in
one line, the composites both runs have are compared, and a run without an aggregate shows its
headline (or why it has none) instead (``Comparison.headline_a`` / ``headline_b``).

The text and the ``--json`` file are rendered by ``sim.reports`` (``render_comparison``,
``write_comparison_json``).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from scorers import (
    HEALTHBENCH_SCORE,
    METRIC_AGGREGATE,
    Comparison,
    HealthBenchComparison,
    Metric,
    compare_breakdown,
    compare_scores,
    speech_retention,
)
from sim.records import ConfigError, EncounterRecord, Headline, RunLayout, RunMeta, Summary
from sim.store import RunStore

RunKind = Literal["aggregate", "rubric", "unjudged", "empty"]


def _load(run_dir: Path) -> tuple[RunMeta, Summary, dict[tuple[str, int], EncounterRecord], int]:
    store = RunStore.open(run_dir)
    meta = store.read_meta()
    if not store.layout.summary.exists():  # a folder or FIFO there is read below, and refused in words
        raise ConfigError(f"{run_dir}: no {RunLayout.SUMMARY_FILE} in this run directory. "
                          f"Run `encsim report {run_dir}` first.")
    try:
        summary = store.read_summary()
    except (ValidationError, ValueError) as exc:
        raise ConfigError(f"{RunLayout(run_dir).summary}: unreadable summary ({str(exc).splitlines()[0]}). "
                          f"Recompute it with `encsim report {run_dir}`.") from None
    records, bad = store.load_records()
    return meta, summary, records, bad


def _composites(meta: RunMeta, records: dict[tuple[str, int], EncounterRecord]) -> dict[str, list[float]]:
    ids = {s.id for s in meta.scenarios}
    out: dict[str, list[float]] = defaultdict(list)
    for (sid, k) in sorted(records):
        rec = records[(sid, k)]
        if sid in ids and rec.status == "ok" and rec.score is not None and rec.score.composite is not None:
            out[sid].append(rec.score.composite)
    return dict(out)


def _rubric_scores(meta: RunMeta, records: dict[tuple[str, int], EncounterRecord]) -> dict[str, list[float]]:
    """Scenario id -> the unclipped rubric scores of its scored encounters that the judge could score."""
    ids = {s.id for s in meta.scenarios}
    out: dict[str, list[float]] = defaultdict(list)
    for (sid, k) in sorted(records):
        rec = records[(sid, k)]
        card = rec.score.judge if rec.score is not None else None
        if sid in ids and rec.status == "ok" and card is not None and card.rubric_score is not None:
            out[sid].append(card.rubric_score)
    return dict(out)


def _scored(meta: RunMeta, records: dict[tuple[str, int], EncounterRecord]) -> int:
    ids = {s.id for s in meta.scenarios}
    return sum(sid in ids and r.status == "ok" and r.score is not None for (sid, _), r in records.items())


def run_kind(summary: Summary) -> RunKind:
    """What a run's headline number is.

    The aggregate; the HealthBench score of a rubric-only run; none although encounters were scored
    (rubric-only scenarios run without a judge); or none at all.
    """
    if summary.aggregate is not None:
        return "aggregate"
    head = summary.headline
    if head is not None and head.name == HEALTHBENCH_SCORE and head.value is not None:
        return "rubric"
    if summary.judge is not None and summary.judge.rubric_score is not None:
        return "rubric"  # a summary.json from before the headline existed
    return "unjudged" if summary.completed else "empty"


def _healthbench_headline(summary: Summary) -> Headline:
    """The run's HealthBench score: its summary headline, or (older summaries) the judge's rubric score, no CI."""
    if summary.headline is not None and summary.headline.name == HEALTHBENCH_SCORE:
        return summary.headline
    value = summary.judge.rubric_score if summary.judge is not None else None
    return Headline(name=HEALTHBENCH_SCORE, value=value, note="from summary.json judge.rubric_score")


def _describe(kind: RunKind, summary: Summary) -> str:
    if kind == "aggregate":
        return f"has the aggregate ({summary.aggregate:.3f})"
    if kind == "rubric":
        value = _healthbench_headline(summary).value
        return f"is scored by rubrics only (HealthBench score {value:.3f})" if value is not None else \
            "is scored by rubrics only"
    why = summary.headline.note if summary.headline is not None and summary.headline.note else \
        "neither an aggregate nor a judge rubric score"
    return f"has no headline score ({why})"


def _metric_note(kind_a: RunKind, kind_b: RunKind, sum_a: Summary, sum_b: Summary) -> str | None:
    """One line when the two runs are not scored on one metric; None when they are (or one has nothing)."""
    if kind_a == kind_b == "unjudged":
        return ("neither run has a judge score: there is no aggregate and no HealthBench score to compare (rubric-only "
                "scenarios are scored only by a judge); run both with --judge to compare their HealthBench scores.")
    if kind_a == kind_b or "empty" in (kind_a, kind_b):
        return None
    return (f"the runs are not scored on one metric: A {_describe(kind_a, sum_a)}, B {_describe(kind_b, sum_b)}; "
            "their headline numbers are not compared, only the encounter composites both runs have.")


def compare_runs(dir_a: Path, dir_b: Path, *, seed: int = 0) -> Comparison:  # noqa: C901
    """Compare run B against run A (every difference is B - A).

    On the HealthBench score when both are rubric-only, else on the composites and the aggregate (see the
    module docstring).
    """
    meta_a, sum_a, rec_a, bad_a = _load(Path(dir_a))
    meta_b, sum_b, rec_b, bad_b = _load(Path(dir_b))
    kind_a, kind_b = run_kind(sum_a), run_kind(sum_b)
    rubric = kind_a == kind_b == "rubric"
    if rubric:
        scores_a, scores_b = _rubric_scores(meta_a, rec_a), _rubric_scores(meta_b, rec_b)
    else:
        scores_a, scores_b = _composites(meta_a, rec_a), _composites(meta_b, rec_b)
    suites = {r.id: r.suite for r in sum_b.scenarios} | {r.id: r.suite for r in sum_a.scenarios}
    for sid in set(scores_a) | set(scores_b):
        suites.setdefault(sid, "?")  # not in the summary (stale): the default suite weight
    metric: Metric = HEALTHBENCH_SCORE if rubric else METRIC_AGGREGATE
    rows, boot, drift = compare_scores(scores_a, scores_b, suites, seed=seed, metric=metric)

    notes: list[str] = []
    metric_note = _metric_note(kind_a, kind_b, sum_a, sum_b)
    if metric_note:
        notes.append(metric_note)
    for name, d, meta, summary, scores, bad, records, kind in (
            ("A", dir_a, meta_a, sum_a, scores_a, bad_a, rec_a, kind_a),
            ("B", dir_b, meta_b, sum_b, scores_b, bad_b, rec_b, kind_b)):
        compared = sum(len(v) for v in scores.values())
        scored = _scored(meta, records)
        if scored != summary.completed:
            notes.append(f"{name}: summary.json counts {summary.completed} scored encounters but results.jsonl holds "
                         f"{scored}; run `encsim report {d}` to refresh the "
                         f"{'HealthBench score' if rubric else 'aggregate'}.")
        if compared < scored and (rubric or kind == "aggregate"):  # otherwise the metric note says why
            what = ("no rubric score (no judge verdict on a criterion with positive points)" if rubric else
                    "no composite (scenarios scored by rubrics only)")
            notes.append(f"{name}: {scored - compared} scored encounters have {what} and are not compared.")
        if rubric and summary.headline is None:
            notes.append(f"{name}: summary.json has no headline (it predates it), so its HealthBench score has no CI; "
                         f"run `encsim report {d}` to add it.")
        if summary.errors:
            notes.append(f"{name}: {summary.errors} encounters ended in an error and are not compared.")
        if bad:
            notes.append(f"{name}: {bad} malformed lines in results.jsonl were skipped.")
    if meta_a.harness_version != meta_b.harness_version:
        notes.append(f"harness versions differ (A {meta_a.harness_version}, B {meta_b.harness_version}).")
    if meta_a.k != meta_b.k:
        notes.append(f"K differs (A {meta_a.k}, B {meta_b.k}).")
    if meta_a.personas != meta_b.personas:  # a scenario's scores pool its personas' encounters
        notes.append(f"the persona sweeps differ (A {','.join(meta_a.personas)}; B {','.join(meta_b.personas)}): "
                     "each scenario's scores pool its personas, so the difference mixes the patients' difficulty "
                     "with the model's; compare runs with the same --personas, or read each run's persona "
                     "robustness table.")
    sha_a = {s.id: s.sha256 for s in meta_a.scenarios}
    changed = sorted(s.id for s in meta_b.scenarios if s.id in sha_a and sha_a[s.id] != s.sha256)
    if changed:
        notes.append(f"scenario files changed between the runs (sha256 differs): {', '.join(changed)}.")
    constant = [r.id for r in rows if r.note and r.note.startswith("no variance in either run")]
    if constant:
        notes.append(f"{len(constant)} scenarios have no variance within either run (a deterministic "
                     "agent): their t-test is decided exactly (p = 0 when the scores differ, 1 when equal) and "
                     "Cohen's d is infinite (shown as inf) or 0.")
    if not rows:
        notes.append("no scenario has rubric scores in both runs: nothing to compare." if rubric else
                     "no scenario has encounter composites in both runs: nothing else to compare." if metric_note else
                     "no scenario was scored in both runs: nothing to compare.")
    else:
        if rubric and all(r.p is None for r in rows):
            notes.append("every shared scenario has fewer than 2 rubric scores in A or in B (as with K=1), so there is "
                         "no per-scenario test (shown as -); the overall difference's CI, which resamples scenarios, "
                         "is the test to read.")
        if len(rows) < 5:
            notes.append(f"only {len(rows)} scenarios are shared: the bootstrap CI of the {metric} difference, which "
                         "resamples scenarios, is coarse.")

    ci = boot.ci95 if boot else None
    significant = bool(ci and (ci[0] > 0 or ci[1] < 0))
    healthbench = None
    if rubric:
        head_a, head_b = _healthbench_headline(sum_a), _healthbench_headline(sum_b)
        judge_a, judge_b = sum_a.judge, sum_b.judge
        healthbench = HealthBenchComparison(
            a=head_a.value, b=head_b.value, ci95_a=head_a.ci95, ci95_b=head_b.ci95,
            diff=boot.diff if boot else None, diff_ci95=ci, significant=significant, shared_scenarios=len(rows),
            axes=compare_breakdown(judge_a.axis_scores, judge_b.axis_scores) if judge_a and judge_b else [],
            themes=compare_breakdown(judge_a.theme_scores, judge_b.theme_scores) if judge_a and judge_b else [],
            tags=compare_breakdown(judge_a.tag_scores, judge_b.tag_scores) if judge_a and judge_b else [])
    return Comparison(
        run_a=str(dir_a), run_b=str(dir_b), model_a=meta_a.model, model_b=meta_b.model, k_a=meta_a.k, k_b=meta_b.k,
        metric=metric,
        scenarios=rows, aggregate_a=sum_a.aggregate, aggregate_b=sum_b.aggregate,
        aggregate_uncapped_a=sum_a.aggregate_uncapped, aggregate_uncapped_b=sum_b.aggregate_uncapped,
        safety_gate_a=sum_a.safety_gate, safety_gate_b=sum_b.safety_gate,
        aggregate_diff=None if rubric or not boot else boot.diff, aggregate_ci95=None if rubric else ci,
        aggregate_significant=significant and not rubric, healthbench=healthbench,
        headline_a=sum_a.headline if sum_a.aggregate is None else None,
        headline_b=sum_b.headline if sum_b.aggregate is None else None,
        drift=drift if rows else None, channel_a=meta_a.channel, channel_b=meta_b.channel,
        speech_retention=None if rubric else speech_retention(meta_a.channel, meta_b.channel, rows),
        only_in_a=sorted(set(scores_a) - set(scores_b)), only_in_b=sorted(set(scores_b) - set(scores_a)),
        notes=notes,
    )
