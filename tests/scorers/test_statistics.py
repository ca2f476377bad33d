from __future__ import annotations

import itertools
import random
import statistics

import pytest

from scorers import (
    asymmetric_triage_error,
    bootstrap_ci,
    pass_hat_k,
    quadratic_weighted_kappa,
    triage_score,
    worst_at_k,
)


def _ratings_from_table(table: list[list[int]]) -> tuple[list[int], list[int]]:
    a, b = [], []
    for i, row in enumerate(table, start=1):
        for j, count in enumerate(row, start=1):
            a += [i] * count
            b += [j] * count
    return a, b


def test_qwk_on_a_hand_computed_table() -> None:
    # Rater A (rows) vs rater B (columns), levels 1-3, n = 30.
    # Observed weighted disagreement: the four cells one step off the diagonal, 2+1+1+2 = 6.
    # Row totals 12, 10, 8; column totals 11, 12, 7; expected weighted disagreement
    # = sum (i-j)^2 r_i c_j / 30 = (144 + 336 + 110 + 70 + 352 + 96) / 30 = 1108 / 30.
    # QWK = 1 - 6 / (1108 / 30) = 1 - 180 / 1108.
    a, b = _ratings_from_table([[10, 2, 0], [1, 8, 1], [0, 2, 6]])
    assert quadratic_weighted_kappa(a, b) == pytest.approx(1 - 180 / 1108, abs=1e-12)


def test_qwk_known_values() -> None:
    assert quadratic_weighted_kappa([1, 2, 3, 4, 5], [1, 2, 3, 4, 5]) == pytest.approx(1.0)
    assert quadratic_weighted_kappa([1, 5], [5, 1]) == pytest.approx(-1.0)
    assert quadratic_weighted_kappa([1, 2, 3], [1, 2, 2]) == pytest.approx(2 / 3)
    assert quadratic_weighted_kappa([], []) is None
    assert quadratic_weighted_kappa([3, 3], [3, 3]) is None  # no expected disagreement: undefined


def test_qwk_matches_pairwise_definition() -> None:
    """QWK = 1 - mean observed (a-b)^2 / mean (a_i-b_j)^2 over all pairs (an independent formula)."""
    rng = random.Random(7)
    for _ in range(20):
        a = [rng.randint(1, 5) for _ in range(25)]
        b = [min(5, max(1, x + rng.choice([-2, -1, 0, 0, 1]))) for x in a]
        obs = statistics.fmean((x - y) ** 2 for x, y in zip(a, b, strict=True))
        exp = statistics.fmean((x - y) ** 2 for x in a for y in b)
        assert quadratic_weighted_kappa(a, b) == pytest.approx(1 - obs / exp)


def test_worst_at_k_against_brute_force() -> None:
    rng = random.Random(3)
    for n in range(1, 9):
        scores = [round(rng.random(), 3) for _ in range(n)]
        for k in range(1, n + 1):
            subsets = list(itertools.combinations(scores, k))
            brute = statistics.fmean(min(s) for s in subsets)
            assert worst_at_k(scores, k) == pytest.approx(brute)
    assert worst_at_k([0.2, 0.9, 0.5], 1) == pytest.approx(statistics.fmean([0.2, 0.9, 0.5]))
    assert worst_at_k([0.2, 0.9, 0.5], 3) == pytest.approx(0.2)
    with pytest.raises(ValueError):
        worst_at_k([0.1], 2)


def test_pass_hat_k_against_brute_force() -> None:
    for n in range(1, 9):
        for c in range(n + 1):
            outcomes = [True] * c + [False] * (n - c)
            for k in range(1, n + 1):
                subsets = list(itertools.combinations(outcomes, k))
                brute = sum(all(s) for s in subsets) / len(subsets)
                assert pass_hat_k(c, n, k) == pytest.approx(brute)


def test_asymmetric_triage_error_table() -> None:
    assert asymmetric_triage_error(2, 2) == 0.0
    assert [asymmetric_triage_error(1, g) for g in (2, 3, 4, 5)] == [2.0, 5.0, 10.0, 10.0]
    assert [asymmetric_triage_error(5, g) for g in (4, 3, 2, 1)] == [0.5, 1.0, 1.0, 1.0]
    assert asymmetric_triage_error(2, 3, contexts=["pediatric"]) == pytest.approx(2.4)
    assert asymmetric_triage_error(2, 4, contexts=["pregnancy"]) == pytest.approx(6.5)
    assert asymmetric_triage_error(3, 2, contexts=["geriatric"]) == pytest.approx(0.55)
    assert triage_score(0) == 1.0 and triage_score(5.0) == 0.5 and triage_score(13.0) == 0.0


def test_bootstrap_ci_contains_mean_and_is_seeded() -> None:
    data = [0.1, 0.5, 0.9, 0.7, 0.3, 0.8]
    ci = bootstrap_ci(data)
    assert ci is not None and ci[0] < statistics.fmean(data) < ci[1]
    assert bootstrap_ci(data) == ci
    assert bootstrap_ci([0.4, 0.4]) == [0.4, 0.4]
    assert bootstrap_ci([]) is None


def test_worst_at_k_and_pass_hat_k_hold_for_thousands_of_runs() -> None:
    """K beyond ~1030 overflowed a float in C(n, k) (an --i-know run crashed its summary with a traceback); the
    running-product form agrees with the exact binomial form and stays finite."""
    from math import comb

    from scorers._reliability import pass_hat_k, worst_at_k

    scores = [((i * 37) % 101) / 100 for i in range(60)]
    ordered = sorted(scores)
    for k in (1, 2, 7, 30, 60):
        exact = sum(s * comb(60 - i, k - 1) for i, s in enumerate(ordered, start=1)) / comb(60, k)
        assert worst_at_k(scores, k) == pytest.approx(exact, rel=1e-9)
        assert pass_hat_k(45, 60, k) == pytest.approx(comb(45, k) / comb(60, k), rel=1e-9)
    big = [((i * 7919) % 1000) / 1000 for i in range(2500)]
    assert min(big) <= worst_at_k(big, 1200) <= sum(big) / len(big)
    assert worst_at_k(big, 2500) == pytest.approx(min(big))
    assert 0.0 <= pass_hat_k(2400, 2500, 1500) < 1e-20


async def test_a_scenario_with_thousands_of_runs_summarises(by_id) -> None:
    """1,100 scored runs of one scenario (beyond where the big-binomial form overflowed): the summary has a worst@k
    and pass^k for k = 1..20 and k = n, all finite."""
    from scorers import aggregate, score_encounter
    from sim.agents.scripted import ReferenceAgent
    from sim.encounter import run_encounter
    from sim.encounter.channel import TextChannel

    s = by_id["viral_uri"]
    card = score_encounter(await run_encounter(s, ReferenceAgent(), TextChannel(), lambda _e: None, k=0, seed=0), s)
    cards = {(s.id, k): card.model_copy(update={"composite": (k % 10) / 10, "passed": k % 10 >= 7})
             for k in range(1100)}
    row = aggregate([s], cards, {}).scenarios[0]
    assert row.k == 1100 and set(row.worst_at_k) == {*map(str, range(1, 21)), "1100"}
    assert row.worst_at_k["1100"] == pytest.approx(0.0) and row.worst_at_k["1"] == pytest.approx(row.mean)
    assert row.pass_hat_k["1"] == pytest.approx(0.3) and 0.0 <= row.pass_hat_k["1100"] <= 1e-300
