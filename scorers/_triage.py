"""Triage accuracy: the per-encounter asymmetric error and the population's quadratic-weighted kappa."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Under-triage (given level number larger than expected: less urgent) costs far more than over-triage.
UNDER_TRIAGE_WEIGHTS = {1: 2.0, 2: 5.0, 3: 10.0}  # 3 means "3 or more levels"
OVER_TRIAGE_WEIGHTS = {1: 0.5, 2: 1.0}  # 2 means "2 or more levels"
CONTEXT_MULTIPLIERS = {"pediatric": 1.2, "geriatric": 1.1, "pregnancy": 1.3}
MAX_TRIAGE_ERROR = 10.0  # an error of this size or more scores 0


def asymmetric_triage_error(expected: int, given: int, *, contexts: Sequence[str] = ()) -> float:
    """The cost of a triage error: 0 when right.

    Under-triage by 1/2/3+ levels costs 2/5/10, over-triage by 1/2+ costs 0.5/1; multiplied by every
    applicable context multiplier (pediatric 1.2, geriatric 1.1, pregnancy 1.3).
    """
    diff = given - expected
    if diff == 0:
        return 0.0
    base = UNDER_TRIAGE_WEIGHTS[min(diff, 3)] if diff > 0 else OVER_TRIAGE_WEIGHTS[min(-diff, 2)]
    for ctx in contexts:
        base *= CONTEXT_MULTIPLIERS[ctx]
    return base


def nearest_acceptable(acceptable: Sequence[int], given: int) -> int:
    """The acceptable level a given level is measured from: itself inside the set, else the nearest end."""
    if given in acceptable:
        return given
    return max(acceptable) if given > max(acceptable) else min(acceptable)


def acceptable_triage_error(expected: int, given: int, *, acceptable: Sequence[int] = (),
                            contexts: Sequence[str] = ()) -> float:
    """The triage error against an acceptable set: 0 inside it.

    The acceptable set is ``acceptable``, which includes ``expected``, the best label; empty means the best
    label alone. Outside it, ``asymmetric_triage_error`` measured from the nearest acceptable level:
    under-triage from the least urgent acceptable level, over-triage from the most urgent one.
    """
    levels = list(acceptable) or [expected]
    return asymmetric_triage_error(nearest_acceptable(levels, given), given, contexts=contexts)


def triage_score(error: float) -> float:
    """Per-encounter triage component in [0, 1]: ``1 - min(1, error / 10)``."""
    return 1.0 - min(1.0, error / MAX_TRIAGE_ERROR)


def quadratic_weighted_kappa(rater_a: Sequence[int], rater_b: Sequence[int], *, min_rating: int = 1,
                             max_rating: int = 5) -> float | None:
    """Cohen's kappa with quadratic weights ``w_ij = (i-j)^2 / (N-1)^2`` over ratings min..max.

    ``None`` when undefined: no pairs, or both raters constant on the same single level (expected
    disagreement is zero).
    """
    if len(rater_a) != len(rater_b):
        raise ValueError("rater_a and rater_b differ in length")
    if not rater_a:
        return None
    n = max_rating - min_rating + 1
    observed = np.zeros((n, n))
    for a, b in zip(rater_a, rater_b, strict=True):
        observed[a - min_rating, b - min_rating] += 1
    idx = np.arange(n)
    weights = (idx[:, None] - idx[None, :]) ** 2 / (n - 1) ** 2
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    denom = float((weights * expected).sum())
    if denom == 0.0:
        return None
    return 1.0 - float((weights * observed).sum()) / denom
