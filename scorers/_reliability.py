"""Reliability statistics over the K runs of one scenario.

- ``worst_at_k(scores, k)``: the expected minimum score over a uniformly random k-subset of the n
  runs (HealthBench's worst-at-k), computed exactly: with scores sorted ascending
  ``s_1 <= ... <= s_n``, ``E[min] = sum_i s_i * C(n - i, k - 1) / C(n, k)``.
- ``pass_hat_k(c, n, k)``: the probability that k runs drawn without replacement all pass,
  ``C(c, k) / C(n, k)`` (tau-bench's pass^k), for c passing runs out of n.
- ``bootstrap_ci``: 95% percentile bootstrap CI of the mean, 1000 resamples, via scipy.
- ``cluster_bootstrap_ci``: the same CI for values grouped in clusters (the K runs of a scenario):
  clusters, not values, are resampled, because runs of one scenario are not independent.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def worst_at_k(scores: Sequence[float], k: int) -> float:
    """Expected minimum of ``k`` scores drawn without replacement.

    sum_i s_(i) C(n-i, k-1) / C(n, k) over the sorted scores. The weights are built as a running product of
    floats (w_1 = k/n, w_(i+1) = w_i (n-i-k+1)/(n-i)) rather than from big binomials, which overflow a float
    past n ~ 1030 and cost O(n) big-integer work each.
    """
    n = len(scores)
    if not 1 <= k <= n:
        raise ValueError(f"k must be in 1..{n}, got {k}")
    ordered = sorted(scores)
    total, weight = 0.0, k / n
    for i, s in enumerate(ordered, start=1):
        if weight == 0.0:
            break
        total += s * weight
        weight = weight * (n - i - k + 1) / (n - i) if n - i > 0 else 0.0
    return total


def pass_hat_k(c: int, n: int, k: int) -> float:
    """C(c, k) / C(n, k) (the chance that k draws without replacement all pass), as a product of k ratios."""
    if not 1 <= k <= n or not 0 <= c <= n:
        raise ValueError(f"need 1 <= k <= n and 0 <= c <= n, got c={c}, n={n}, k={k}")
    if c < k:
        return 0.0
    out = 1.0
    for j in range(k):
        out *= (c - j) / (n - j)
    return out


def bootstrap_ci(scores: Sequence[float], *, n_resamples: int = 1000, confidence: float = 0.95,
                 seed: int = 0) -> list[float] | None:
    """Percentile bootstrap CI of the mean of ``scores``; deterministic for a seed.

    ``None`` without scores; the mean twice when there is one score or the scores do not vary.

    Args:
        scores: the values (a scenario's K composites).
        n_resamples: bootstrap resamples.
        confidence: the CI's confidence level.
        seed: seeds the resampling.

    Returns:
        ``[low, high]``, or None.
    """
    if not scores:
        return None
    data = np.asarray(scores, dtype=float)
    if len(data) < 2 or np.ptp(data) == 0.0:
        return [float(data.mean()), float(data.mean())]
    from scipy import stats  # ~0.9 s to import: only when a CI is computed, not for every CLI command

    res = stats.bootstrap((data,), np.mean, n_resamples=n_resamples, confidence_level=confidence,
                          method="percentile", random_state=np.random.default_rng(seed))
    return [float(res.confidence_interval.low), float(res.confidence_interval.high)]


def cluster_bootstrap_ci(clusters: Sequence[Sequence[float]], *, n_resamples: int = 1000, confidence: float = 0.95,
                         seed: int = 0) -> list[float] | None:
    """95% percentile bootstrap CI of the pooled mean of values grouped in clusters (a scenario's K runs).

    Each resample draws as many clusters as there are, with replacement, and takes the mean of every value in
    the drawn clusters (sum over count, so clusters of unequal size weigh by their size, like the point
    estimate). When every cluster holds one value this is the ordinary bootstrap of the mean and
    ``bootstrap_ci`` computes it, so the two agree. ``None`` without values; the point twice when the values do
    not vary or there is a single cluster (one scenario says nothing about variation between scenarios).
    Deterministic for a seed.
    """
    groups = [np.asarray(c, dtype=float) for c in clusters if len(c)]
    if not groups:
        return None
    if all(len(g) == 1 for g in groups):
        return bootstrap_ci([float(g[0]) for g in groups], n_resamples=n_resamples, confidence=confidence, seed=seed)
    flat = np.concatenate(groups)
    point = float(flat.mean())
    if len(groups) < 2 or np.ptp(flat) == 0.0:
        return [point, point]
    sums = np.array([g.sum() for g in groups])
    counts = np.array([len(g) for g in groups], dtype=float)
    draws = np.random.default_rng(seed).integers(0, len(groups), size=(n_resamples, len(groups)))
    means = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return [float(low), float(high)]
