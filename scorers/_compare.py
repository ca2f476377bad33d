"""Statistics for comparing two runs: pure functions on lists of floats, and the typed result.

Direction: every difference is **B - A** (the second run minus the first), so a negative
difference, a negative t and a negative Cohen's d all mean that B scores lower.

- ``welch_t(a, b)``: Welch's unequal-variance t-test (``scipy.stats.ttest_ind(equal_var=False)``).
  Scripted agents are deterministic, so a scenario's K composites are often all equal; scipy
  returns NaN there, so the degenerate cases are decided first:

  - fewer than 2 values in either group: no variance to test with, ``p = None``;
  - both groups constant and equal: ``t = 0``, ``p = 1`` (nothing differs);
  - both groups constant and different: ``t = None`` (it would be infinite), ``p = 0`` with a note:
    the difference is exact, not sampled.

  "Constant" means a spread (max - min) of at most ``ZERO_SPREAD`` (1e-12), so float noise in
  identical scores does not become a vanishing variance and a huge t.
- ``cohens_d(a, b)``: ``(mean_b - mean_a) / pooled SD`` with the pooled SD
  ``sqrt(((n_a - 1) s_a^2 + (n_b - 1) s_b^2) / (n_a + n_b - 2))`` (sample variances, ddof 1).
  ``0`` when the pooled SD is 0 and the means are equal; ``None`` when the pooled SD is 0 and the
  means differ (the effect size is infinite; ``None`` keeps JSON valid) or when
  ``n_a + n_b < 3``.
- ``bonferroni(pvalues)``: ``min(1, p * m)``, where m counts the tests actually made (the p-values
  that are not ``None``); a ``None`` stays ``None``.
- ``paired_bootstrap_diff(means_a, means_b, suites)``: the aggregate difference B - A over
  scenarios present in both runs, weighted by suite exactly as ``scorers.aggregate`` weighs the
  aggregate (``SUITE_WEIGHTS``, else ``DEFAULT_SUITE_WEIGHT``), and a percentile CI from
  resampling *scenarios* with replacement (each drawn scenario contributes its own mean
  difference, so the pairing by scenario is kept). Seeded: the same inputs give the same CI.
  It works on scenario means, which are never capped: the safety gate's cap is a policy on the
  headline number, not a statistic to resample. Given per-run weights (``weights_a``,
  ``weights_b``) and/or ``clip``, the same resampling estimates the difference of the two runs'
  weighted means, each clipped: with each scenario's encounter count as its weight and
  ``clip=(0, 1)`` that is the difference of HealthBench scores (see below).
- ``drift_check(scores_a, scores_b)``: two-sample Kolmogorov-Smirnov and Mann-Whitney U on the
  encounter composites; it alerts when the aggregate moves by more than ``threshold`` (relative,
  5% by default) **and** at least one test has ``p < alpha``: a large move that a test confirms,
  not a large move on two encounters or a significant move of 0.1%.

Two metrics (``compare_scores(..., metric=...)``):

- ``"aggregate"`` (``METRIC_AGGREGATE``): the encounter scores are composites; the overall number
  is the suite-weighted mean of scenario means (``scorers.aggregate``).
- ``"HealthBench score"`` (``HEALTHBENCH_SCORE``, the ``Headline.name`` of rubric-only runs): the
  encounter scores are the judge's **unclipped** rubric scores; the overall number is their mean
  over encounters clipped to [0, 1] (``scorers._judge.clipped_mean``), so the paired bootstrap
  weighs each shared scenario by its encounter count in each run and clips each run's mean before
  taking the difference. Per-scenario tests and the drift tests are the same as for composites.
"""

from __future__ import annotations

import math
import statistics
import warnings
from collections.abc import Sequence
from typing import Final, Literal, NamedTuple

import numpy as np
from pydantic import BaseModel, Field

from scorers._aggregate import DEFAULT_SUITE_WEIGHT, SUITE_WEIGHTS
from scorers._judge import clipped_mean
from sim.records import Headline, SafetyGate

ZERO_SPREAD = 1e-12
ALPHA = 0.05
DRIFT_THRESHOLD = 0.05
METRIC_AGGREGATE: Final = "aggregate"
HEALTHBENCH_SCORE: Final = "HealthBench score"  # the Headline.name of rubric-only runs (sim.summary.headline)
Metric = Literal["aggregate", "HealthBench score"]


class WelchResult(NamedTuple):
    t: float | None
    p: float | None
    note: str | None = None


class BootstrapDiff(NamedTuple):
    diff: float
    ci95: list[float]


class DriftCheck(BaseModel):
    """The drift check of two runs: KS and Mann-Whitney U on encounter scores, and whether the move alerts."""

    n_a: int
    n_b: int
    ks_stat: float | None
    ks_p: float | None
    mwu_stat: float | None
    mwu_p: float | None
    relative_change: float | None = Field(description="(B - A) / A of the compared metric (the aggregate, or the "
                                                      "HealthBench score) over the shared scenarios; None if A is 0")
    threshold: float = DRIFT_THRESHOLD
    alpha: float = ALPHA
    alert: bool


SPEECH_CHANNELS = frozenset({"voice", "call", "live"})


class SpeechRetention(BaseModel):
    """The same agent over text and over speech: the spoken run's mean score as a share of the text run's.

    Over the scenarios both runs scored (each scenario's mean over its encounters, then the plain mean over
    scenarios), so that scenarios only one run has do not move it.
    """

    text_run: str = Field(description="A or B")
    speech_run: str
    text_mean: float
    speech_mean: float
    retention: float | None = Field(description="speech_mean / text_mean; None when the text mean is 0")
    scenarios: int


def speech_retention(channel_a: str | None, channel_b: str | None,
                     rows: list[ScenarioComparison]) -> SpeechRetention | None:
    """The retention of a text run against a spoken one over the shared scenarios; None unless exactly one is spoken.

    Args:
        channel_a: run A's channel (``RunMeta.channel``).
        channel_b: run B's channel.
        rows: the shared scenarios, each with both runs' means.

    Returns:
        The retention, or None (both or neither spoken, or nothing shared).
    """
    spoken_a, spoken_b = channel_a in SPEECH_CHANNELS, channel_b in SPEECH_CHANNELS
    if spoken_a == spoken_b or not rows:
        return None
    text_mean = sum(r.mean_b if spoken_a else r.mean_a for r in rows) / len(rows)
    speech_mean = sum(r.mean_a if spoken_a else r.mean_b for r in rows) / len(rows)
    return SpeechRetention(text_run="B" if spoken_a else "A", speech_run="A" if spoken_a else "B",
                           text_mean=text_mean, speech_mean=speech_mean,
                           retention=speech_mean / text_mean if text_mean > 0 else None, scenarios=len(rows))


class ScenarioComparison(BaseModel):
    """One scenario in both runs: each run's mean, B - A, Welch's t with its raw and Bonferroni p, and Cohen's d."""

    id: str
    suite: str
    n_a: int
    n_b: int
    mean_a: float
    mean_b: float
    diff: float = Field(description="mean_b - mean_a")
    t: float | None = Field(description="Welch's t, positive when B is higher; None when undefined or infinite")
    p: float | None
    p_bonferroni: float | None
    cohens_d: float | None = Field(description="(mean_b - mean_a) / pooled SD; None when undefined or infinite")
    significant: bool = Field(description="Bonferroni-adjusted p < 0.05")
    note: str | None = None


class BreakdownRow(BaseModel):
    """One rubric axis or rubric tag of two rubric-only runs: each run's clipped mean and B - A."""

    name: str
    a: float = Field(description="A's score (summary.json judge.axis_scores or judge.tag_scores)")
    b: float
    diff: float = Field(description="b - a")


class HealthBenchComparison(BaseModel):
    """The overall comparison of two rubric-only runs (HealthBench imports).

    Their headline HealthBench scores, the paired difference, and the per-axis and per-tag scores both
    summaries hold.
    """

    name: str = HEALTHBENCH_SCORE
    a: float | None = Field(description="A's HealthBench score: summary.json headline (clipped mean of rubric scores)")
    b: float | None
    ci95_a: list[float] | None = Field(default=None, description="A's headline CI (bootstrap over encounters)")
    ci95_b: list[float] | None = None
    diff: float | None = Field(description="clipped mean of B's rubric scores minus A's, over the shared scenarios")
    diff_ci95: list[float] | None = Field(description="paired bootstrap 95% CI of diff (resampling shared scenarios)")
    significant: bool = Field(description="diff_ci95 excludes 0")
    shared_scenarios: int = 0
    axes: list[BreakdownRow] = Field(default=[], description="axes in both summaries' judge.axis_scores")
    themes: list[BreakdownRow] = Field(default=[], description="themes (scenario theme:* tags) in both summaries' "
                                                               "judge.theme_scores")
    tags: list[BreakdownRow] = Field(default=[], description="rubric criterion tags in both summaries' "
                                                             "judge.tag_scores")


class Comparison(BaseModel):
    """Run B compared with run A (every difference is B - A): per scenario, overall, and the drift check.

    The module docstring gives the statistics and the two metrics (``metric``).
    """

    run_a: str
    run_b: str
    model_a: str
    model_b: str
    k_a: int | None = None
    k_b: int | None = None
    metric: Metric = Field(default=METRIC_AGGREGATE, description="what the encounter scores and the overall number "
                                                                 "are: composites and the aggregate, or rubric "
                                                                 "scores and the HealthBench score")
    scenarios: list[ScenarioComparison]
    aggregate_a: float | None = Field(description="summary.json aggregate of A (capped if its gate triggered); None "
                                                  "for rubric-only runs (see healthbench)")
    aggregate_b: float | None
    aggregate_uncapped_a: float | None = None
    aggregate_uncapped_b: float | None = None
    safety_gate_a: SafetyGate | None = None
    safety_gate_b: SafetyGate | None = None
    aggregate_diff: float | None = Field(
        description="suite-weighted mean of per-scenario differences B - A over shared scenarios (uncapped)")
    aggregate_ci95: list[float] | None = Field(description="paired bootstrap 95% CI of aggregate_diff")
    aggregate_significant: bool = Field(description="aggregate_ci95 excludes 0")
    healthbench: HealthBenchComparison | None = Field(default=None, description="rubric-only runs: the overall "
                                                                                "comparison in place of aggregate_*")
    headline_a: Headline | None = Field(default=None, description="A's summary.json headline when A has no "
                                                                  "aggregate (what its number is, or why it has none)")
    headline_b: Headline | None = None
    drift: DriftCheck | None
    only_in_a: list[str] = []
    only_in_b: list[str] = []
    notes: list[str] = []
    channel_a: str | None = Field(default=None, description="A's channel (run.json): text, voice, call or live")
    channel_b: str | None = None
    speech_retention: SpeechRetention | None = Field(
        default=None, description="one run spoken (voice, call, live) and the other text: how much of its text score "
                                  "the agent keeps over speech (tau-Voice's headline figure)")


def _spread(x: Sequence[float]) -> float:
    return max(x) - min(x)


def welch_t(a: Sequence[float], b: Sequence[float]) -> WelchResult:
    """Welch's t-test of B against A; see the module docstring for the zero-variance rules."""
    if len(a) < 2 or len(b) < 2:
        return WelchResult(None, None, f"too few scored encounters for a t-test (n_a={len(a)}, n_b={len(b)})")
    if _spread(a) <= ZERO_SPREAD and _spread(b) <= ZERO_SPREAD:
        if abs(statistics.fmean(a) - statistics.fmean(b)) <= ZERO_SPREAD:
            return WelchResult(0.0, 1.0, "no variance in either run and equal scores: no difference")
        return WelchResult(None, 0.0, "no variance in either run and different scores: the difference is exact")
    with warnings.catch_warnings():
        # One constant group is handled correctly by scipy but warns about precision loss.
        warnings.simplefilter("ignore", RuntimeWarning)
        from scipy import stats  # imported when needed: ~0.9 s

        res = stats.ttest_ind(np.asarray(b, dtype=float), np.asarray(a, dtype=float), equal_var=False)
    return WelchResult(float(res.statistic), float(res.pvalue))


def cohens_d(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Cohen's d of B against A with the pooled SD; ``None`` when undefined or infinite."""
    na, nb = len(a), len(b)
    if na < 1 or nb < 1 or na + nb < 3:
        return None
    diff = statistics.fmean(b) - statistics.fmean(a)
    va = statistics.variance(a) if na > 1 else 0.0
    vb = statistics.variance(b) if nb > 1 else 0.0
    pooled = math.sqrt(((na - 1) * va + (nb - 1) * vb) / (na + nb - 2))
    if pooled <= ZERO_SPREAD:
        return 0.0 if abs(diff) <= ZERO_SPREAD else None
    return diff / pooled


def bonferroni(pvalues: Sequence[float | None]) -> list[float | None]:
    """Bonferroni-adjusted p-values; m is the number of p-values that are not None."""
    m = sum(p is not None for p in pvalues)
    return [None if p is None else min(1.0, p * m) for p in pvalues]


def suite_weight(suite: str) -> float:
    return SUITE_WEIGHTS.get(suite, DEFAULT_SUITE_WEIGHT)


def weighted_aggregate(means: Sequence[float], suites: Sequence[str]) -> float | None:
    """The aggregate as ``scorers.aggregate`` computes it (uncapped): suite-weighted mean of scenario means."""
    if not means:
        return None
    w = [suite_weight(s) for s in suites]
    return sum(wi * m for wi, m in zip(w, means, strict=True)) / sum(w)


def paired_bootstrap_diff(means_a: Sequence[float], means_b: Sequence[float], suites: Sequence[str] | None = None,
                          *, weights_a: Sequence[float] | None = None, weights_b: Sequence[float] | None = None,
                          clip: tuple[float, float] | None = None, n_resamples: int = 1000, confidence: float = 0.95,
                          seed: int = 0) -> BootstrapDiff | None:
    """Weighted difference B - A over shared scenarios and its percentile CI, resampling scenarios.

    By default (suite weights, no clip) the estimate is the suite-weighted mean of the per-scenario
    differences: the difference of the uncapped aggregates. With ``weights_b`` or ``clip`` it is the
    difference of the two runs' own weighted means, each clipped to ``clip``:
    ``clip(sum(wb * mb) / sum(wb)) - clip(sum(wa * ma) / sum(wa))``; with encounter counts as weights
    and ``clip=(0, 1)`` that is the difference of HealthBench scores. Either way each resample draws
    scenarios with replacement and keeps both runs' values of a drawn scenario together (paired).

    Args:
        means_a: per-scenario mean score in run A (uncapped, unclipped).
        means_b: the same scenarios' means in run B, in the same order.
        suites: each scenario's suite, for the aggregate's weights; needed unless ``weights_a`` is given.
        weights_a: each scenario's weight in A (and in B when ``weights_b`` is None), instead of its suite's.
        weights_b: each scenario's weight in B, when it differs from A's (e.g. encounter counts).
        clip: ``(low, high)`` bounds applied to each run's weighted mean before the difference.
        n_resamples: bootstrap resamples.
        confidence: CI level.
        seed: the resampling seed.

    Returns:
        ``(diff, [low, high])``, or ``None`` when no scenario is shared.
    """
    if weights_a is None:
        if suites is None:
            raise ValueError("give suites or weights_a")
        weights_a = [suite_weight(s) for s in suites]
    if not (len(means_a) == len(means_b) == len(weights_a)
            == len(weights_a if weights_b is None else weights_b)):
        raise ValueError("means_a, means_b and the weights (or suites) must have the same length")
    m = len(means_a)
    if m == 0:
        return None
    a, b = np.asarray(means_a, dtype=float), np.asarray(means_b, dtype=float)
    w = np.asarray(weights_a, dtype=float)
    if weights_b is None and clip is None:
        d = b - a
        point = float((w * d).sum() / w.sum())
        if m == 1 or np.ptp(d) == 0.0:
            return BootstrapDiff(point, [point, point])
        idx = np.random.default_rng(seed).integers(0, m, size=(n_resamples, m))
        estimates = (w[idx] * d[idx]).sum(axis=1) / w[idx].sum(axis=1)
    else:
        wb = w if weights_b is None else np.asarray(weights_b, dtype=float)
        low_clip, high_clip = clip if clip is not None else (-np.inf, np.inf)

        def estimate(i: np.ndarray) -> np.ndarray:
            mean_a = (w[i] * a[i]).sum(axis=-1) / w[i].sum(axis=-1)
            mean_b = (wb[i] * b[i]).sum(axis=-1) / wb[i].sum(axis=-1)
            return np.asarray(np.clip(mean_b, low_clip, high_clip) - np.clip(mean_a, low_clip, high_clip))

        point = float(estimate(np.arange(m)))
        if m == 1 or (np.ptp(a) == 0.0 and np.ptp(b) == 0.0):
            return BootstrapDiff(point, [point, point])
        estimates = estimate(np.random.default_rng(seed).integers(0, m, size=(n_resamples, m)))
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(estimates, [tail, 100 - tail])
    return BootstrapDiff(point, [float(low), float(high)])


def drift_check(scores_a: Sequence[float], scores_b: Sequence[float], threshold: float = DRIFT_THRESHOLD,
                alpha: float = ALPHA, *, aggregate_a: float | None = None,
                aggregate_b: float | None = None) -> DriftCheck:
    """KS and Mann-Whitney U on encounter composites; alert on a confirmed move of the aggregate.

    Args:
        scores_a: every encounter composite of run A.
        scores_b: every encounter composite of run B.
        threshold: the relative move of the aggregate that counts as drift (0.05 = 5%).
        alpha: significance level for the two tests.
        aggregate_a: A's aggregate; the mean of ``scores_a`` when not given.
        aggregate_b: B's aggregate; the mean of ``scores_b`` when not given.

    The relative change is ``(aggregate_b - aggregate_a) / aggregate_a``; when A's aggregate is 0 it
    is undefined (``None``) and the alert uses the absolute change against ``threshold`` instead.
    """
    na, nb = len(scores_a), len(scores_b)
    if na == 0 or nb == 0:
        return DriftCheck(n_a=na, n_b=nb, ks_stat=None, ks_p=None, mwu_stat=None, mwu_p=None, relative_change=None,
                          threshold=threshold, alpha=alpha, alert=False)
    from scipy import stats

    ks = stats.ks_2samp(scores_a, scores_b)
    mwu = stats.mannwhitneyu(scores_a, scores_b, alternative="two-sided")
    agg_a = statistics.fmean(scores_a) if aggregate_a is None else aggregate_a
    agg_b = statistics.fmean(scores_b) if aggregate_b is None else aggregate_b
    if abs(agg_a) > ZERO_SPREAD:
        change = (agg_b - agg_a) / abs(agg_a)
        rel: float | None = change
        moved = abs(change) > threshold
    else:
        rel = 0.0 if abs(agg_b) <= ZERO_SPREAD else None
        moved = abs(agg_b - agg_a) > threshold
    ks_p, mwu_p = float(ks.pvalue), float(mwu.pvalue)
    confirmed = ks_p < alpha or mwu_p < alpha
    return DriftCheck(n_a=na, n_b=nb, ks_stat=float(ks.statistic), ks_p=ks_p, mwu_stat=float(mwu.statistic),
                      mwu_p=mwu_p, relative_change=rel, threshold=threshold, alpha=alpha,
                      alert=bool(moved and confirmed))


def compare_scenario(scenario_id: str, suite: str, a: Sequence[float], b: Sequence[float]) -> ScenarioComparison:
    """One scenario's comparison before the Bonferroni step (``p_bonferroni`` is filled in later)."""
    t = welch_t(a, b)
    mean_a, mean_b = statistics.fmean(a), statistics.fmean(b)
    return ScenarioComparison(id=scenario_id, suite=suite, n_a=len(a), n_b=len(b), mean_a=mean_a, mean_b=mean_b,
                              diff=mean_b - mean_a, t=t.t, p=t.p, p_bonferroni=None, cohens_d=cohens_d(a, b),
                              significant=False, note=t.note)


def compare_scores(scores_a: dict[str, list[float]], scores_b: dict[str, list[float]], suites: dict[str, str], *,
                   alpha: float = ALPHA, seed: int = 0, metric: Metric = METRIC_AGGREGATE,
                   ) -> tuple[list[ScenarioComparison], BootstrapDiff | None, DriftCheck]:
    """Per-scenario tests with Bonferroni, the paired bootstrap and the drift check, from raw encounter scores.

    Args:
        scores_a: scenario id -> encounter scores of run A (scenarios with none are left out): composites
            for ``metric="aggregate"``, unclipped rubric scores for ``metric="HealthBench score"``.
        scores_b: the same for run B.
        suites: scenario id -> suite (for the aggregate's weights; only labels for the HealthBench score).
        alpha: family-wise significance level for the per-scenario tests and the drift tests.
        seed: the bootstrap's seed.
        metric: the overall number whose difference is bootstrapped and whose move the drift check
            measures: the uncapped suite-weighted aggregate, or the HealthBench score (mean over
            encounters, clipped to [0, 1]).

    Only scenarios with scores in both runs are compared; the drift check uses their encounters,
    and its relative change is that of the overall number over the same scenarios.
    """
    shared = sorted(set(scores_a) & set(scores_b))
    rows = [compare_scenario(sid, suites[sid], scores_a[sid], scores_b[sid]) for sid in shared]
    for row, adj in zip(rows, bonferroni([r.p for r in rows]), strict=True):
        row.p_bonferroni = adj
        row.significant = adj is not None and adj < alpha
    flat_a = [x for sid in shared for x in scores_a[sid]]
    flat_b = [x for sid in shared for x in scores_b[sid]]
    if metric == HEALTHBENCH_SCORE:
        boot = paired_bootstrap_diff([r.mean_a for r in rows], [r.mean_b for r in rows],
                                     weights_a=[r.n_a for r in rows], weights_b=[r.n_b for r in rows], clip=(0.0, 1.0),
                                     confidence=1 - alpha, seed=seed)
        overall_a, overall_b = clipped_mean(flat_a), clipped_mean(flat_b)
    else:
        boot = paired_bootstrap_diff([r.mean_a for r in rows], [r.mean_b for r in rows], [r.suite for r in rows],
                                     confidence=1 - alpha, seed=seed)
        overall_a = weighted_aggregate([r.mean_a for r in rows], [r.suite for r in rows])
        overall_b = weighted_aggregate([r.mean_b for r in rows], [r.suite for r in rows])
    drift = drift_check(flat_a, flat_b, alpha=alpha, aggregate_a=overall_a, aggregate_b=overall_b)
    return rows, boot, drift


def compare_breakdown(a: dict[str, float], b: dict[str, float]) -> list[BreakdownRow]:
    """A row per key in both ``a`` and ``b`` (axis or tag -> score), sorted by key; ``diff`` is B - A."""
    return [BreakdownRow(name=k, a=a[k], b=b[k], diff=b[k] - a[k]) for k in sorted(set(a) & set(b))]
