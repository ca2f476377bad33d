"""`encsim compare` on rubric-only runs: HealthBench rows imported, run against a loopback model and graded by
loopback judges that behave differently, then compared on the HealthBench score (and the mixed cases)."""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main
from sim.compare import compare_runs
from sim.reports import render_comparison
from tests.fakeserver import FakeChatServer

SAMPLES = Path(__file__).parents[1] / "scenarios" / "samples" / "healthbench_sample.jsonl"
REPLY = ("It is probably a viral illness. Rest and drink fluids, and if you have trouble breathing or chest pain, "
         "this is an emergency: call 911.")


def judge(*, lenient: bool) -> Callable[[dict[str, Any]], str]:
    """A loopback judge. Strict: a criterion is met only when it mentions 'emergency'. Lenient: every criterion
    with positive points is met and no negative one (every encounter scores 1.0). Trust ratings are 2."""
    def reply(body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"].rsplit("Criterion", 1)[1]
        if "criteria_met" not in body["messages"][0]["content"]:
            return json.dumps({"explanation": "rated", "rating": 2})
        match = re.match(r"\s*\(([+-][\d.]+) points\)", prompt)
        assert match is not None, prompt
        met = float(match.group(1)) > 0 if lenient else "emergency" in prompt
        return json.dumps({"explanation": "checked", "criteria_met": met})
    return reply


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """strict (K=2), lenient (K=2), lenient_k1 (K=1): judged; unjudged (K=1): no --judge; ordinary: a library
    scenario with a scripted agent (it has an aggregate)."""
    root = tmp_path_factory.mktemp("compare_hb")
    hb = root / "hb"
    assert main(["import", "healthbench", str(SAMPLES), "--out", str(hb)]) == 0
    out = {name: root / name for name in ("strict", "lenient", "lenient_k1", "unjudged", "ordinary")}
    with FakeChatServer(default=("ok", REPLY)) as model:
        for name, lenient, k in (("strict", False, 2), ("lenient", True, 2), ("lenient_k1", True, 1)):
            with FakeChatServer(reply=judge(lenient=lenient)) as grader:
                assert main(["run", "--model", "m", "--base-url", model.base_url, "--scenarios", str(hb), "--k",
                             str(k), "--out", str(out[name]), "--quiet", "--judge", "gpt-4o", "--judge-base-url",
                             grader.base_url]) == 0
        assert main(["run", "--model", "m", "--base-url", model.base_url, "--scenarios", str(hb), "--k", "1",
                     "--out", str(out["unjudged"]), "--quiet"]) == 0
    assert main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1", "--out",
                 str(out["ordinary"]), "--quiet"]) == 0
    return out


def summary(run: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run / "summary.json").read_text())
    return data


def rubric_scores(run: Path) -> dict[str, list[float]]:
    """Scenario id -> its encounters' rubric scores, read straight from results.jsonl."""
    out: dict[str, list[float]] = {}
    for line in (run / "results.jsonl").read_text().splitlines():
        rec = json.loads(line)
        out.setdefault(rec["scenario_id"], []).append(rec["score"]["judge"]["rubric_score"])
    return out


def test_two_rubric_only_runs_compare_on_the_healthbench_score(runs: dict[str, Path]) -> None:
    sum_a, sum_b = summary(runs["strict"]), summary(runs["lenient"])
    assert sum_a["aggregate"] is None and sum_a["headline"]["name"] == "HealthBench score"
    c = compare_runs(runs["strict"], runs["lenient"])
    hb = c.healthbench
    assert c.metric == "HealthBench score" and hb is not None and hb.name == "HealthBench score"
    # Each run's number is its summary headline, CI included.
    assert hb.a == sum_a["headline"]["value"] and hb.ci95_a == sum_a["headline"]["ci95"]
    assert hb.b == sum_b["headline"]["value"] == 1.0 and hb.ci95_b == sum_b["headline"]["ci95"]
    assert hb.a is not None and hb.b is not None and hb.diff is not None
    # Every scenario is shared and every encounter scored: the paired difference is that of the headlines.
    assert hb.shared_scenarios == 3 and hb.diff == pytest.approx(hb.b - hb.a) and hb.diff > 0
    assert hb.diff_ci95 is not None and 0 < hb.diff_ci95[0] <= hb.diff <= hb.diff_ci95[1] and hb.significant
    assert c.aggregate_diff is None and c.aggregate_significant is False  # there is no aggregate to compare
    # Per scenario: the encounters' rubric scores (not composites, which are None), with the usual tests.
    scores_a, scores_b = rubric_scores(runs["strict"]), rubric_scores(runs["lenient"])
    assert {r.id for r in c.scenarios} == set(scores_a) == set(scores_b)
    for r in c.scenarios:
        assert (r.n_a, r.n_b) == (2, 2)
        assert r.mean_a == pytest.approx(statistics.fmean(scores_a[r.id]))
        assert r.mean_b == pytest.approx(statistics.fmean(scores_b[r.id])) and r.mean_b == 1.0
        assert r.p == 0.0 and r.p_bonferroni == 0.0 and r.significant  # both deterministic: an exact difference
    # Per axis and per rubric tag: every name in both summaries, with A, B and B - A.
    axes_a, axes_b = sum_a["judge"]["axis_scores"], sum_b["judge"]["axis_scores"]
    assert [x.name for x in hb.axes] == sorted(set(axes_a) & set(axes_b)) and len(hb.axes) == 4
    for row in hb.axes:
        assert (row.a, row.b) == (axes_a[row.name], axes_b[row.name])
        assert row.diff == pytest.approx(row.b - row.a)
    tags_a, tags_b = sum_a["judge"]["tag_scores"], sum_b["judge"]["tag_scores"]
    assert {x.name for x in hb.tags} == set(tags_a) & set(tags_b)
    themes_a, themes_b = sum_a["judge"]["theme_scores"], sum_b["judge"]["theme_scores"]
    assert "emergency_referrals" in themes_a and {x.name for x in hb.themes} == set(themes_a) & set(themes_b)
    assert not any(t.startswith("axis:") for t in themes_a)
    assert c.drift is not None and c.drift.alert is True and c.drift.relative_change is not None
    assert c.drift.relative_change == pytest.approx((hb.b - hb.a) / hb.a)

    text = render_comparison(c)
    assert "n/a" not in text and "aggregate" not in text and "per theme" in text
    assert f"HealthBench score A: {hb.a:.3f}" in text and f"HealthBench score B: {hb.b:.3f}" in text
    assert f"HealthBench score difference B - A: {hb.diff:+.3f}" in text and "SIGNIFICANT" in text
    assert "per axis (A -> B, B - A): accuracy" in text and "drift: HealthBench score" in text

    # The other way round: B - A is negative, and so is its whole CI.
    back = compare_runs(runs["lenient"], runs["strict"]).healthbench
    assert back is not None and back.diff is not None and back.diff_ci95 is not None
    assert back.diff == pytest.approx(-hb.diff) and back.diff_ci95[1] < 0 and back.significant


def test_rubric_only_runs_with_one_encounter_each_print_no_na(runs: dict[str, Path]) -> None:
    """K=2 against K=1: no per-scenario test (shown as -); the overall difference weighs scenarios by encounters."""
    c = compare_runs(runs["strict"], runs["lenient_k1"])
    hb = c.healthbench
    assert hb is not None and hb.b == summary(runs["lenient_k1"])["headline"]["value"]
    assert hb.a is not None and hb.b is not None and hb.diff == pytest.approx(hb.b - hb.a)
    assert all(r.p is None and (r.n_a, r.n_b) == (2, 1) for r in c.scenarios)
    text = render_comparison(c)
    assert "n/a" not in text and "- = no test" in text and "HealthBench score difference B - A" in text
    assert any("no per-scenario test" in n for n in c.notes)


def test_cli_compare_of_rubric_only_runs_names_the_metric(runs: dict[str, Path], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cmp.json"
    assert main(["compare", str(runs["strict"]), str(runs["lenient"]), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "metric: HealthBench score" in printed and "n/a" not in printed and "aggregate" not in printed
    data = json.loads(out.read_text())
    assert data["metric"] == "HealthBench score"
    head = data["healthbench"]
    assert head["name"] == "HealthBench score" and head["significant"] is True
    assert head["a"] == summary(runs["strict"])["headline"]["value"]
    assert head["b"] == summary(runs["lenient"])["headline"]["value"]
    assert {row["name"] for row in head["axes"]} == {"accuracy", "communication_quality", "completeness",
                                                     "emergency_referrals"}


def test_mixed_runs_say_so_in_one_line(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    # Rubric-only against a run with an aggregate: one note, each run's own number shown, no n/a.
    c = compare_runs(runs["strict"], runs["ordinary"])
    assert c.metric == "aggregate" and c.healthbench is None and not c.scenarios
    mixed = [n for n in c.notes if "not scored on one metric" in n]
    assert len(mixed) == 1 and "HealthBench score" in mixed[0] and "aggregate" in mixed[0]
    text = render_comparison(c)
    assert "A: HealthBench score" in text and "aggregate B:" in text and "n/a" not in text

    # A rubric-only run without a judge against one with a judge.
    c = compare_runs(runs["unjudged"], runs["strict"])
    mixed = [n for n in c.notes if "not scored on one metric" in n]
    assert len(mixed) == 1 and "run with --judge" in mixed[0] and "HealthBench score" in mixed[0]

    # Neither has a judge score.
    c = compare_runs(runs["unjudged"], runs["unjudged"])
    assert sum("neither run has a judge score" in n for n in c.notes) == 1
    assert "n/a" not in render_comparison(c)

    # The CLI: exit 0, the note printed, no traceback.
    assert main(["compare", str(runs["ordinary"]), str(runs["lenient"])]) == 0
    captured = capsys.readouterr()
    assert "not scored on one metric" in captured.out and "Traceback" not in captured.out + captured.err
