"""Comparing two runs: the statistics against hand-computed values, and `encsim compare` end to end."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from scorers import bonferroni, cohens_d, drift_check, paired_bootstrap_diff, welch_t
from sim.cli import main
from sim.compare import compare_runs
from sim.reports import render_comparison

# --- statistics ---------------------------------------------------------------------------------


def test_cohens_d_hand_computed() -> None:
    # a = 1, 2, 3 (mean 2, s^2 1); b = 3, 4, 5 (mean 4, s^2 1); pooled SD 1: d = (4 - 2) / 1.
    assert cohens_d([1, 2, 3], [3, 4, 5]) == pytest.approx(2.0)
    # a = 2, 4, 6, 8 (mean 5, s^2 20/3); b = 1, 3 (mean 2, s^2 2);
    # pooled variance (3 * 20/3 + 1 * 2) / (4 + 2 - 2) = 22 / 4; d = (2 - 5) / sqrt(5.5).
    assert cohens_d([2, 4, 6, 8], [1, 3]) == pytest.approx(-3 / math.sqrt(5.5))
    assert cohens_d([3, 4, 5], [1, 2, 3]) == pytest.approx(-2.0)  # direction: B - A


def test_cohens_d_zero_variance() -> None:
    assert cohens_d([0.9, 0.9, 0.9], [0.9, 0.9, 0.9]) == 0.0
    assert cohens_d([0.9, 0.9, 0.9], [0.3, 0.3, 0.3]) is None  # infinite: documented as None
    assert cohens_d([0.5], [0.5]) is None  # n_a + n_b - 2 = 0: undefined
    assert cohens_d([0.2, 0.2, 0.2], [0.1, 0.2, 0.3]) == pytest.approx(0.0)


def test_bonferroni() -> None:
    assert bonferroni([0.01, 0.02, 0.5]) == pytest.approx([0.03, 0.06, 1.0])
    # None is not a test: m = 2 here, and the None stays.
    assert bonferroni([0.01, None, 0.04]) == [pytest.approx(0.02), None, pytest.approx(0.08)]
    assert bonferroni([]) == []
    assert bonferroni([0.0, 0.0]) == [0.0, 0.0]


def test_welch_matches_the_formula() -> None:
    a = [0.61, 0.72, 0.55, 0.80, 0.67, 0.70]
    b = [0.52, 0.49, 0.66, 0.41, 0.58]
    va, vb = statistics.variance(a), statistics.variance(b)
    se2_a, se2_b = va / len(a), vb / len(b)
    t = (statistics.fmean(b) - statistics.fmean(a)) / math.sqrt(se2_a + se2_b)
    df = (se2_a + se2_b) ** 2 / (se2_a**2 / (len(a) - 1) + se2_b**2 / (len(b) - 1))
    p = 2 * stats.t.sf(abs(t), df)
    res = welch_t(a, b)
    assert res.t == pytest.approx(t) and res.t < 0  # B is lower: negative t
    assert res.p == pytest.approx(p)


def test_welch_zero_variance_and_small_samples() -> None:
    same = welch_t([0.97, 0.97, 0.97], [0.97, 0.97, 0.97])
    assert (same.t, same.p) == (0.0, 1.0)
    exact = welch_t([0.97, 0.97, 0.97], [0.30, 0.30, 0.30])
    assert exact.p == 0.0 and exact.t is None and exact.note and "exact" in exact.note
    assert welch_t([0.5], [0.4, 0.6]).p is None
    # One constant group: still Welch's formula (the other group carries the variance).
    one = welch_t([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    assert one.t == pytest.approx(1 / math.sqrt(1 / 3)) and one.p == pytest.approx(0.2254033307585166)


def test_paired_bootstrap_weights_and_ci() -> None:
    # A triage scenario (weight 3) moves by -0.4, a safety one (weight 1) by 0: -0.4 * 3 / 4 = -0.3.
    point = paired_bootstrap_diff([0.9, 0.8], [0.5, 0.8], ["triage", "safety"])
    assert point is not None and point.diff == pytest.approx(-0.3)
    rng = np.random.default_rng(7)
    means_a = list(rng.uniform(0.6, 0.9, 20))
    means_b = [m - 0.1 + rng.normal(0, 0.05) for m in means_a]
    suites = ["triage", "safety", "ddx", "refill"] * 5
    res = paired_bootstrap_diff(means_a, means_b, suites, seed=3)
    assert res is not None and res.ci95[0] < res.diff < res.ci95[1] < 0
    assert paired_bootstrap_diff(means_a, means_b, suites, seed=3) == res  # seeded
    w = np.array([3.0 if s == "triage" else 1.0 for s in suites])
    assert res.diff == pytest.approx(float((w * (np.array(means_b) - np.array(means_a))).sum() / w.sum()))
    flat = paired_bootstrap_diff([0.9, 0.8, 0.7], [0.9, 0.8, 0.7], ["safety"] * 3)
    assert flat is not None and flat.diff == 0.0 and flat.ci95 == [0.0, 0.0]
    assert paired_bootstrap_diff([], [], []) is None


def test_paired_bootstrap_of_healthbench_scores() -> None:
    """Per-run weights (encounters per scenario) and a clip: the difference of the clipped weighted means."""
    # A: (1 * 0.2 + 3 * 0.5) / 4 = 0.425; B: (2 * 1.2 + 2 * 1.5) / 4 = 1.35, clipped to 1: 1 - 0.425.
    res = paired_bootstrap_diff([0.2, 0.5], [1.2, 1.5], weights_a=[1, 3], weights_b=[2, 2], clip=(0.0, 1.0))
    assert res is not None and res.diff == pytest.approx(0.575)
    # Every resample is a clipped mean too: B's stays 1, A's lies between its scenario means.
    assert res.ci95[0] == pytest.approx(0.5) and res.ci95[1] == pytest.approx(0.8)
    # Without the clip B's mean is not capped.
    unclipped = paired_bootstrap_diff([0.2, 0.5], [1.2, 1.5], weights_a=[1, 3], weights_b=[2, 2])
    assert unclipped is not None and unclipped.diff == pytest.approx(1.35 - 0.425)
    # One weight list serves both runs when B's is not given: resamples give 0.2, 0.3 (mixed) or 0.4.
    same = paired_bootstrap_diff([0.2, 0.5], [0.4, 0.9], weights_a=[1, 1], clip=(0.0, 1.0), seed=5)
    assert same is not None and same.diff == pytest.approx(0.3) and same.ci95 == pytest.approx([0.2, 0.4])
    with pytest.raises(ValueError):
        paired_bootstrap_diff([0.2], [0.4])  # neither suites nor weights


def test_drift_check() -> None:
    rng = np.random.default_rng(0)
    a = list(rng.normal(0.80, 0.05, 200))
    same = drift_check(a, a)
    assert same.alert is False and same.ks_p == pytest.approx(1.0) and same.relative_change == 0.0
    moved = drift_check(a, [x - 0.08 for x in a])  # -10%, and both tests see it
    assert moved.alert is True and moved.relative_change == pytest.approx(-0.1, abs=0.005)
    assert moved.ks_p < 0.05 and moved.mwu_p < 0.05
    small = drift_check(a, [x - 0.016 for x in a])  # -2%: maybe significant, but under the 5% threshold
    assert small.alert is False
    unconfirmed = drift_check([1.0, 1.0], [0.5, 0.5])  # -50% on two encounters: no test confirms it
    assert unconfirmed.relative_change == pytest.approx(-0.5) and unconfirmed.alert is False
    assert unconfirmed.ks_p > 0.05 and unconfirmed.mwu_p > 0.05
    # The aggregate may be given (the suite-weighted one) instead of the plain mean of the scores.
    assert drift_check(a, a, aggregate_a=0.8, aggregate_b=0.7).relative_change == pytest.approx(-0.125)
    empty = drift_check([], [0.5])
    assert empty.alert is False and empty.ks_p is None


# --- end to end ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("compare")
    out = {}
    for name in ("reference", "undertriage"):
        out[name] = root / name
        assert main(["run", "--model", f"scripted:{name}", "--k", "3", "--out", str(out[name]), "--quiet"]) == 0
    return out


def test_reference_against_undertriage_differs(runs: dict[str, Path]) -> None:
    c = compare_runs(runs["reference"], runs["undertriage"])
    assert c.model_a == "scripted:reference" and c.model_b == "scripted:undertriage"
    assert len(c.scenarios) >= 24 and not c.only_in_a and not c.only_in_b
    assert c.aggregate_significant is True
    assert c.aggregate_diff is not None and c.aggregate_ci95 is not None and c.aggregate_ci95[1] < 0
    safety = [r for r in c.scenarios if r.suite == "safety"]
    assert sum(r.significant for r in safety) > len(safety) / 2
    assert c.drift is not None and c.drift.alert is True and c.drift.relative_change is not None
    assert c.drift.relative_change < -0.05
    assert c.safety_gate_a is not None and not c.safety_gate_a.triggered
    assert c.safety_gate_b is not None and c.safety_gate_b.triggered
    # The paired difference over all scenarios is exactly the difference of the uncapped aggregates.
    assert c.aggregate_uncapped_a is not None and c.aggregate_uncapped_b is not None
    assert c.aggregate_diff == pytest.approx(c.aggregate_uncapped_b - c.aggregate_uncapped_a)
    text = render_comparison(c)
    assert "ALERT" in text and "SIGNIFICANT" in text and "acs_chest_pain" in text and " *" in text


def test_run_against_itself_shows_nothing(runs: dict[str, Path]) -> None:
    c = compare_runs(runs["reference"], runs["reference"])
    assert not any(r.significant for r in c.scenarios)
    assert all(r.p == 1.0 and r.cohens_d == 0.0 for r in c.scenarios)
    assert c.aggregate_diff == 0.0 and c.aggregate_ci95 is not None
    assert c.aggregate_ci95[0] <= 0.0 <= c.aggregate_ci95[1] and c.aggregate_significant is False
    assert c.drift is not None and c.drift.alert is False
    text = render_comparison(c)
    assert "ALERT" not in text and "not significant" in text and "0 of" in text


def test_cli_compare_prints_and_writes_json(runs: dict[str, Path], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cmp.json"
    assert main(["compare", str(runs["reference"]), str(runs["undertriage"]), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "aggregate difference B - A" in printed and "ALERT" in printed
    data = json.loads(out.read_text())
    assert data["aggregate_significant"] is True and data["drift"]["alert"] is True
    assert {"id", "suite", "n_a", "n_b", "mean_a", "mean_b", "diff", "t", "p", "p_bonferroni", "cohens_d",
            "significant"} <= set(data["scenarios"][0])


def test_cli_compare_user_errors(runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(tmp_path), str(runs["reference"])]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "not a run directory" in err and str(tmp_path) in err
    assert "Traceback" not in err and "\n" not in err

    # A run directory without summary.json: point to `encsim report`.
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "run.json").write_text((runs["reference"] / "run.json").read_text())
    (bare / "results.jsonl").write_text((runs["reference"] / "results.jsonl").read_text())
    assert main(["compare", str(runs["reference"]), str(bare)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"encsim report {bare}" in err and "\n" not in err

    assert main(["compare", str(runs["reference"])]) == 2
    assert "RUN_B" in capsys.readouterr().err
