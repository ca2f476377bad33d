"""Validating a failure-mode judge against people, and the Rogan-Gladen corrected failure rate (issue 16, part 3).

The judge here is simulated from a fixed confusion matrix (TPR 0.9, TNR 0.8, as the issue's loopback judge), so
the truth is known: validation must recover TPR and TNR within its intervals, and the corrected rate must
recover the run's true failure rate where the raw rate is biased.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from scipy.stats import binomtest

from scorers import corrected_failure_rate, failure_rate, judge_validity, rogan_gladen, split_of, wilson_ci
from sim.records import ModeValidation

TPR, TNR = 0.9, 0.8


def _judge(truth: np.ndarray, rng: np.random.Generator, tpr: float = TPR, tnr: float = TNR) -> np.ndarray:
    """A judge that says True for a failing trace with probability tpr and False for a passing one with tnr."""
    u = rng.random(truth.size)
    return np.where(truth, u < tpr, u >= tnr)


def test_wilson_matches_the_reference_formula_and_its_edges() -> None:
    for k, n in [(8, 10), (0, 10), (10, 10), (37, 120), (1, 3)]:
        low, high = wilson_ci(k, n)  # type: ignore[misc]
        ref = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert low == pytest.approx(ref.low, abs=1e-9) and high == pytest.approx(ref.high, abs=1e-9), (k, n)
    assert wilson_ci(0, 0) is None


def test_split_is_deterministic_independent_of_order_and_near_its_fractions() -> None:
    ids = [f"scenario_{i % 40}:{i // 40}" for i in range(2000)]
    first = {t: split_of(t) for t in ids}
    assert {t: split_of(t) for t in reversed(ids)} == first
    shares = Counter(first.values())
    assert abs(shares["train"] / 2000 - 0.2) < 0.03 and abs(shares["dev"] / 2000 - 0.4) < 0.03
    assert {t: split_of(t, seed=1) for t in ids} != first  # another seed, another split
    assert all(split_of(t, fractions=(0.0, 0.0, 1.0)) == "test" for t in ids[:50])
    with pytest.raises(ValueError, match="sum"):
        split_of("a:0", fractions=(0.5, 0.5, 0.5))


def test_validation_recovers_a_known_confusion_matrix() -> None:
    rng = np.random.default_rng(7)
    truth = rng.random(600) < 0.35
    said = _judge(truth, rng)
    ids = [f"s{i}:0" for i in range(truth.size)]
    verdicts: dict[str, bool | None] = dict(zip(ids, map(bool, said), strict=True))
    verdicts[ids[0]] = None  # one trace the judge gave no verdict on
    v = judge_validity(dict(zip(ids, map(bool, truth), strict=True)), verdicts, split="test")
    assert v.no_verdict == 1 and v.tp + v.fn + v.tn + v.fp == truth.size - 1
    assert v.tpr_ci95 is not None and v.tnr_ci95 is not None
    assert v.tpr_ci95[0] <= TPR <= v.tpr_ci95[1] and v.tnr_ci95[0] <= TNR <= v.tnr_ci95[1]
    assert v.usable and v.youden == pytest.approx(v.tpr + v.tnr - 1)  # type: ignore[operator]
    assert len(v.disagreements) == v.fn + v.fp


def test_the_corrected_rate_recovers_the_true_rate_that_the_raw_rate_misses() -> None:
    rng = np.random.default_rng(11)
    test_truth = rng.random(400) < 0.4
    test_said = _judge(test_truth, rng)
    run_truth = rng.random(1500) < 0.25  # the unlabelled run's true failure rate
    run_said = _judge(run_truth, rng)
    out = corrected_failure_rate(test_truth, test_said, run_said, n_resamples=2000, seed=3)
    assert out.ci95 is not None and out.corrected is not None and out.raw is not None
    true_rate = float(run_truth.mean())
    assert out.ci95[0] <= true_rate <= out.ci95[1]
    assert abs(out.corrected - true_rate) < 0.05
    # the raw rate is biased upwards by the false positives: 0.25 * 0.9 + 0.75 * 0.2 = 0.375
    assert out.raw == pytest.approx(0.375, abs=0.03) and not out.ci95[0] <= out.raw <= out.ci95[1]


def test_the_corrected_interval_covers_the_truth_about_95_percent_of_the_time() -> None:
    covered = 0
    trials = 120
    for seed in range(trials):
        rng = np.random.default_rng(1000 + seed)
        test_truth = rng.random(300) < 0.4
        run_truth = rng.random(800) < 0.3
        out = corrected_failure_rate(test_truth, _judge(test_truth, rng), _judge(run_truth, rng), n_resamples=800,
                                     seed=seed)
        assert out.ci95 is not None
        covered += out.ci95[0] <= 0.3 <= out.ci95[1]
    assert covered / trials >= 0.88, covered  # nominal 0.95; percentile bootstrap, finite samples


def test_a_judge_near_chance_is_unusable_and_gives_no_number() -> None:
    rng = np.random.default_rng(5)
    truth = rng.random(500) < 0.5
    said = _judge(truth, rng, tpr=0.55, tnr=0.6)
    ids = [f"s{i}:0" for i in range(truth.size)]
    v = judge_validity(dict(zip(ids, map(bool, truth), strict=True)), dict(zip(ids, map(bool, said), strict=True)),
                       split="test")
    assert not v.usable
    out = corrected_failure_rate(truth, said, _judge(rng.random(300) < 0.3, rng, 0.55, 0.6))
    assert out.corrected is None and out.ci95 is None and out.raw is not None
    assert out.unusable_reason is not None and "unusable" in out.unusable_reason
    assert rogan_gladen(0.4, 0.55, 0.6) is None


def test_rogan_gladen_by_hand_and_clipped() -> None:
    assert rogan_gladen(0.375, 0.9, 0.8) == pytest.approx(0.25)
    assert rogan_gladen(0.05, 0.9, 0.8) == 0.0  # below the false-positive floor
    assert rogan_gladen(0.99, 0.9, 0.8) == 1.0
    assert math.isclose(rogan_gladen(0.5, 1.0, 1.0) or 0, 0.5)


def test_a_test_split_without_both_labels_gives_no_number() -> None:
    out = corrected_failure_rate([True, True], [True, False], [True, False, False])
    assert out.corrected is None and out.raw == pytest.approx(1 / 3) and out.unusable_reason
    with pytest.raises(ValueError, match="pair up"):
        corrected_failure_rate([True], [True, False], [True])


def _record(labels: np.ndarray, said: np.ndarray, *, judge_hash: str = "a" * 64) -> ModeValidation:
    test = judge_validity({str(i): bool(v) for i, v in enumerate(labels)},
                          {str(i): bool(v) for i, v in enumerate(said)}, split="test")
    return ModeValidation(mode="under_escalation", judge_hash=judge_hash, judge_models=["gpt-4o"],
                          labelled_run="/runs/labelled", split=[0.2, 0.4, 0.4], test=test,
                          test_labels=[bool(v) for v in labels], test_verdicts=[bool(v) for v in said])


def test_a_run_s_failure_rate_is_corrected_only_by_the_validation_of_the_judge_that_ran() -> None:
    rng = np.random.default_rng(11)
    labels = rng.random(200) < 0.4
    record = _record(labels, _judge(labels, rng))
    truth = rng.random(800) < 0.3
    verdicts: list[bool | None] = [bool(v) for v in _judge(truth, rng)] + [None] * 5
    ran, models = {"a" * 64}, {"gpt-4o"}

    rate = failure_rate(verdicts, record, judge_hashes=ran, judge_models=models)
    assert rate.status == "corrected" and rate.judged == 800 and rate.no_verdict == 5
    assert rate.ci95 is not None and rate.ci95[0] <= truth.mean() <= rate.ci95[1]
    assert rate == failure_rate(verdicts, record, judge_hashes=ran, judge_models=models)  # seeded: the same CI again
    assert rate.tpr == record.test.tpr and "/runs/labelled" in rate.note

    missing = failure_rate(verdicts, None, judge_hashes=ran, judge_models=models)
    assert missing.status == "not validated" and missing.corrected is None and missing.raw == rate.raw
    edited = failure_rate(verdicts, record, judge_hashes={"b" * 64}, judge_models={"gpt-4o"})
    assert edited.status == "stale" and edited.corrected is None and "bbbbbbbbbbbb" in edited.note
    mixed = failure_rate(verdicts, record, judge_hashes={"a" * 64, "b" * 64}, judge_models={"gpt-4o"})
    assert mixed.status == "stale"
    other_model = failure_rate(verdicts, record, judge_hashes={"a" * 64}, judge_models={"llama-3-8b"})
    assert other_model.status == "stale" and "gpt-4o" in other_model.note and "llama-3-8b" in other_model.note
    chance = _record(labels, rng.random(200) < 0.5)
    assert chance.test.youden is not None and chance.test.youden <= 0.2
    unusable = failure_rate(verdicts, chance, judge_hashes=ran, judge_models=models)
    assert unusable.status == "unusable" and unusable.corrected is None and "TPR + TNR - 1" in unusable.note
    silent = failure_rate([None, None], record, judge_hashes=ran, judge_models=models)
    assert silent.status == "no verdicts" and silent.judged == 0 and silent.no_verdict == 2 and silent.raw is None
