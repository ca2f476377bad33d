"""Profiles: weighted combination over the parts present, fail conditions, pass / warn / fail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scorers._profiles import PROFILES, ProfileError, combine, load_profile, status_of
from scorers.evaluators import EvaluatorResult, Finding


def ev(name: str, score: float, *, passed: bool = True, severities: tuple[str, ...] = ()) -> EvaluatorResult:
    return EvaluatorResult(name=name, score=score, passed=passed, fail_reasons=[] if passed else ["x"],
                           findings=[Finding(code="c", severity=s, message="m") for s in severities])  # type: ignore[arg-type]


def test_status_bands() -> None:
    assert [status_of(s, []) for s in (0.8, 0.79, 0.6, 0.59)] == ["pass", "warn", "warn", "fail"]
    assert status_of(0.99, ["red flag"]) == "fail" and status_of(None, []) == "fail"


def test_triage_profile_keeps_the_composite_and_adds_fail_conditions() -> None:
    p = PROFILES["triage"]
    ok = combine(p, deterministic=0.9, judge=0.1, evaluators=[ev("red_flags", 1.0), ev("hallucination", 1.0)])
    assert ok.score == 0.9 and ok.status == "pass" and ok.parts == {"deterministic": 0.9}
    missed = combine(p, deterministic=0.9, judge=None, evaluators=[ev("red_flags", 0.85)])
    assert missed.status == "fail" and missed.fail_reasons == ["red_flags score 0.85 < 0.90"]
    halluc = combine(p, deterministic=0.95, judge=None, evaluators=[ev("hallucination", 0.7, severities=("critical",))])
    assert halluc.status == "fail" and "critical finding" in halluc.fail_reasons[0]


def test_weights_renormalise_over_present_parts() -> None:
    p = PROFILES["clinical_decision_support"]
    c = combine(p, deterministic=0.8, judge=None, evaluators=[ev("red_flags", 1.0), ev("completeness", 0.5),
                                                               ev("escalation", 1.0)])
    assert c.score == pytest.approx((0.4 * 0.8 + 0.1 * 1.0 + 0.1 * 0.5 + 0.1 * 1.0) / 0.7)
    with_judge = combine(p, deterministic=0.8, judge=0.2, evaluators=[])
    assert with_judge.score == pytest.approx((0.4 * 0.8 + 0.3 * 0.2) / 0.7) and with_judge.status == "fail"
    esc = combine(p, deterministic=0.9, judge=None, evaluators=[ev("escalation", 0.0, passed=False)])
    assert esc.status == "fail" and esc.fail_reasons[0].startswith("escalation failed")


def test_load_profile(tmp_path: Path) -> None:
    assert load_profile(None).name == "triage" and load_profile("patient_facing").name == "patient_facing"
    f = tmp_path / "mine.json"
    f.write_text(json.dumps({"name": "mine", "weights": {"deterministic": 1, "judge": 1},
                             "fail_conditions": [{"evaluator": "red_flags", "below": 0.5}]}))
    assert load_profile(str(f)).weights == {"deterministic": 1, "judge": 1}
    with pytest.raises(ProfileError, match="not a built-in profile"):
        load_profile("nonsense")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ProfileError, match=r"bad\.json: not valid JSON .*; cannot read the scoring profile"):
        load_profile(str(bad))
