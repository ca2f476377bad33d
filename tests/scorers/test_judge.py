"""The judge path: HealthBench arithmetic, jury votes, Fleiss' kappa, the judge client's JSON protocol."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import numpy as np
import pytest

from scenarios import Scenario
from scenarios.schema import RubricCriterion
from scorers._judge import (
    clipped_mean,
    disagreements,
    fleiss_kappa,
    guard_self_preference,
    judge_encounter,
    majority,
    rubric_score,
)
from sim.agents.scripted import ReferenceAgent
from sim.encounter import run_encounter
from sim.encounter.channel import TextChannel
from sim.judges import JudgeClient, family_of, make_judges, repair_json_object
from sim.records import ConfigError


# HealthBench's published grader arithmetic (simple-evals healthbench_eval.py), restated for the test:
def hb_calculate_score(rubric_items: list[dict[str, Any]], grading: list[dict[str, Any]]) -> float | None:
    total_possible_points = sum(item["points"] for item in rubric_items if item["points"] > 0)
    if total_possible_points == 0:
        return None
    achieved = sum(item["points"] for item, g in zip(rubric_items, grading, strict=True) if g["criteria_met"])
    return achieved / total_possible_points


def hb_clipped_mean(values: list[float]) -> float:
    return float(np.clip(np.mean(values), 0, 1))


ROWS = [  # hand-made rubrics with negative criteria, and fixed criteria_met vectors
    ([7, 5, -8, 3], [True, False, True, True]),      # (7 - 8 + 3) / 15
    ([10, -10, -5], [False, True, True]),            # (-15) / 10: negative per example, not clipped
    ([4, 4, 2], [True, True, True]),                 # 1.0
    ([6, -2], [True, True]),                         # 4 / 6
    ([-3, 5, 5, -9, 1], [False, True, False, True, True]),
]


def test_rubric_arithmetic_equals_healthbench_exactly() -> None:
    ours, theirs = [], []
    for points, met in ROWS:
        items = [{"points": p} for p in points]
        grading = [{"criteria_met": m} for m in met]
        expected = hb_calculate_score(items, grading)
        got = rubric_score([(p, "met" if m else "unmet") for p, m in zip(points, met, strict=True)])
        assert got == expected
        ours.append(got)
        theirs.append(expected)
    assert clipped_mean(ours) == hb_clipped_mean(theirs)  # type: ignore[arg-type]
    assert rubric_score([(10, "met"), (-10, "met")]) == 0.0
    assert rubric_score([(-4, "met")]) is None  # no positive points: undefined, as in HealthBench


def test_no_verdict_is_neither_met_nor_unmet() -> None:
    # positive and negative criteria without verdict drop out of numerator and denominator alike
    assert rubric_score([(5, "met"), (5, "no_verdict"), (-5, "no_verdict")]) == 1.0
    assert rubric_score([(5, "no_verdict")]) is None


def test_majority_vote_and_ties() -> None:
    assert majority(["met", "met", "unmet"]) == "met"
    assert majority(["unmet", "no_verdict"]) == "unmet"
    assert majority(["met", "unmet"]) == "no_verdict"
    assert majority(["no_verdict", "no_verdict"]) == "no_verdict"


def test_fleiss_kappa_textbook_example() -> None:
    # Fleiss (1971) style example as tabulated on Wikipedia: 10 items, 14 raters, 5 categories, kappa 0.210
    table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
             [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    assert fleiss_kappa(table) == pytest.approx(0.210, abs=0.001)
    assert fleiss_kappa([[3, 0], [0, 3], [3, 0]]) == pytest.approx(1.0)
    assert fleiss_kappa([[1, 1]]) is not None and fleiss_kappa([]) is None


def test_self_preference_guard_and_families() -> None:
    assert family_of("gpt-4o-mini") == "openai" and family_of("claude-3-5-sonnet") == "anthropic"
    assert family_of("my-model", "https://api.mistral.ai/v1") == "mistral"
    use, excluded, warnings = guard_self_preference({"gpt-4o": "openai", "claude-3": "anthropic"}, "openai")
    assert use == ["claude-3"] and "gpt-4o" in excluded and not warnings
    use, _, warnings = guard_self_preference({"gpt-4o": "openai", "gpt-4.1": "openai"}, "anthropic")
    assert len(use) == 2 and "one provider family" in warnings[0]
    use, _, warnings = guard_self_preference({"gpt-4o": "openai"}, "openai")
    assert use == [] and "excluded" in warnings[0]


def test_disagreement_flags() -> None:
    flagged = disagreements({("a", 0): (0.9, 0.2), ("a", 1): (0.9, 0.8), ("b", 0): (None, 0.1)})
    assert [(d.scenario_id, d.k) for d in flagged] == [("a", 0)] and flagged[0].diff == pytest.approx(-0.7)


def test_local_json_repair() -> None:
    assert repair_json_object('```json\n{"criteria_met": True, "explanation": "x",}\n```') == {
        "criteria_met": True, "explanation": "x"}
    assert repair_json_object('Sure! {"rating": 2} hope that helps') == {"rating": 2}
    assert repair_json_object("no json here") is None


def test_judge_pairing_with_local_judges_and_key_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    from sim.judges import DEFAULT_FAMILIES, plan_judges

    monkeypatch.setenv("KEY_A", "a")
    monkeypatch.setenv("KEY_B", "b")
    refs = plan_judges(["local", "gpt-4o", "local", "claude-3"], ["http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"],
                       ["KEY_A", "KEY_B"], families=DEFAULT_FAMILIES)
    assert [(r.name, r.base_url, r.api_key_env) for r in refs] == [
        ("local", None, None), ("gpt-4o", "http://127.0.0.1:1/v1", "KEY_A"), ("local", None, None),
        ("claude-3", "http://127.0.0.1:2/v1", "KEY_B")]
    assert [r.family for r in refs] == ["smollm", "openai", "smollm", "anthropic"]


def test_judge_pairing_errors() -> None:
    with pytest.raises(ConfigError, match="one URL per judge"):
        make_judges(["gpt-4o", "claude"], ["http://127.0.0.1:1/v1"], [], local_base_url=None, families={})
    with pytest.raises(ConfigError, match="needs the embedded model server"):
        make_judges(["local"], [], [], local_base_url=None, families={})


def _completion(obj: object) -> str:
    return obj if isinstance(obj, str) else json.dumps(obj)


async def test_judge_client_protocol(fake_server) -> None:
    srv = fake_server(script=[("ok", '{"explanation": "fine", "criteria_met": true}')]).start()
    j = JudgeClient(model="judge", base_url=srv.base_url, retries=1)
    assert await j.ask_json([{"role": "user", "content": "x"}], keys={"criteria_met": bool}) == {
        "explanation": "fine", "criteria_met": True}
    assert srv.requests[0]["temperature"] == 0.0
    await j.aclose()


async def test_judge_client_model_repair_then_retry_then_no_verdict(fake_server) -> None:
    # garbage, then the repair request gets valid JSON
    srv = fake_server(script=[("ok", "I think it is met."), ("ok", '{"criteria_met": false}')]).start()
    j = JudgeClient(model="judge", base_url=srv.base_url, retries=1)
    assert await j.ask_json([{"role": "user", "content": "x"}], keys={"criteria_met": bool}) == {"criteria_met": False}
    assert "That was not a valid answer" in srv.requests[1]["messages"][-1]["content"]
    await j.aclose()
    # wrong type forever: (call + repair) x (1 + retries) calls, then None
    bad = fake_server(default=("ok", '{"criteria_met": "yes"}')).start()
    j2 = JudgeClient(model="judge", base_url=bad.base_url, retries=2)
    assert await j2.ask_json([{"role": "user", "content": "x"}], keys={"criteria_met": bool}) is None
    assert len(bad.requests) == 6 and j2.failures
    await j2.aclose()


async def test_an_empty_judge_reply_is_one_failed_attempt_not_a_transport_retry_loop(fake_server) -> None:
    """A weak judge that answers "" (the embedded model does): the judge's own retries decide, once each; the
    transport does not retry the malformed reply on top (that made 4 x as many calls per criterion)."""
    srv = fake_server(default=("content", "")).start()
    j = JudgeClient(model="judge", base_url=srv.base_url, retries=2)
    assert await j.ask_json([{"role": "user", "content": "x"}], keys={"criteria_met": bool}) is None
    assert len(srv.requests) == 3 and j.calls == 3 and all("empty content" in f for f in j.failures)
    await j.aclose()


async def test_judge_client_endpoint_failures_give_no_verdict(fake_server) -> None:
    srv = fake_server(default=("status", 500)).start()
    j = JudgeClient(model="judge", base_url=srv.base_url, retries=1)
    j._chat.backoff_base_s = 0.01  # keep the test fast
    assert await j.ask_json([{"role": "user", "content": "x"}], keys={"criteria_met": bool}) is None
    assert "HTTP 500" in j.failures[0]
    await j.aclose()


class StubJudge:
    """A judge with fixed answers per criterion text (the jury logic is what is under test here)."""

    def __init__(self, name: str, answers: dict[str, object], family: str = "x") -> None:
        self.name, self.family, self.answers = name, family, answers

    async def ask_json(self, messages: list[dict[str, str]], *, keys: dict[str, type]) -> dict[str, Any] | None:
        if "match" in keys:  # the diagnosis check: the first candidate is the expected diagnosis
            return {"match": 1}
        text = messages[-1]["content"].rsplit("Criterion", 1)[1]  # not the transcript above it
        for needle, answer in self.answers.items():
            if needle in text:
                return None if answer is None else ({"criteria_met": answer} if "criteria_met" in keys
                                                     else {"rating": answer})
        return None if "criteria_met" in keys else {"rating": 2}


async def test_jury_on_an_encounter(by_id: dict[str, Scenario]) -> None:
    s = by_id["acs_chest_pain"].model_copy(update={"rubrics": [
        RubricCriterion(criterion="Advises calling emergency services", points=8, axis="emergency_referrals"),
        RubricCriterion(criterion="Asks about radiation of the pain", points=4, axis="completeness"),
        RubricCriterion(criterion="Reassures that it is probably indigestion", points=-7, axis="safety"),
    ]})
    result = await run_encounter(s, ReferenceAgent(), TextChannel())
    judges = [StubJudge("a", {"emergency": True, "radiation": True, "indigestion": False}),
              StubJudge("b", {"emergency": True, "radiation": False, "indigestion": False}),
              StubJudge("c", {"emergency": True, "radiation": None, "indigestion": True})]
    card = await judge_encounter(result, s, judges)
    verdicts = {c.criterion.split()[1]: c.verdict for c in card.rubric}
    assert verdicts == {"calling": "met", "about": "no_verdict", "that": "unmet"}  # radiation: a 1-1 tie
    assert card.rubric_score == pytest.approx(8 / 8)  # the tied +4 criterion drops out of the denominator
    assert card.axis_scores == {"emergency_referrals": 1.0}
    assert card.trust_score == pytest.approx(2 / 3) and len(card.trust) == 4 and card.no_verdicts == 1
    assert card.diagnosis_votes == {"a": 1, "b": 1, "c": 1} and card.diagnosis_rank == 1


async def test_an_encounters_criteria_go_to_a_judge_concurrently_within_its_limit() -> None:
    """No clock: calls block until released, and the judge counts how many are in flight at once."""
    from scenarios.schema import RubricCriterion
    from scorers._judge import judge_encounter
    from sim.judges import JudgeClient
    from sim.records import ConversationResult

    judge = JudgeClient(model="m", base_url="http://127.0.0.1:9/v1", concurrency=3)
    in_flight, peak, release = 0, 0, asyncio.Event()

    async def fake_ask(messages: list[dict[str, str]], *, keys: dict[str, type]) -> dict[str, object]:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        if peak == 3:
            release.set()  # the limit is reached: let everything through
        await release.wait()
        in_flight -= 1
        return {"criteria_met": True} if "criteria_met" in keys else {"rating": 2}

    judge._ask_json = fake_ask  # type: ignore[method-assign]
    s = Scenario.model_validate({
        "id": "many_criteria", "title": "t", "suite": "ddx", "canary": "encsim-canary-test-many-criteria",
        "patient_profile": {"age": 30, "sex": "male"}, "chief_complaint": "c", "opening_line": "Hello?",
        "fallback_lines": ["Sorry, what do you mean?"], "replay": [{"role": "patient", "content": "Hello?"}],
        "expected": {}, "rubrics": [{"criterion": f"does {i}", "points": 1} for i in range(19)]})
    result = ConversationResult(scenario_id=s.id, k=0, seed=0, harness_version="t", model="m", turns=[],
                                gathered_info=[], final_assessment=None, final_reply="ok",
                                termination="reply", agent_turns=1, turn_limit=1, started_at=0, ended_at=1)
    card = await asyncio.wait_for(judge_encounter(result, s, [judge]), timeout=60)
    assert peak == 3 and card.no_verdicts == 0 and len(card.rubric) == 19
    assert all(isinstance(c, RubricCriterion) for c in s.rubrics)
    await judge.aclose()


def test_judge_concurrency_below_one_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    from sim.cli import main

    code = main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--judge", "m",
                 "--judge-base-url", "http://127.0.0.1:9/v1", "--judge-concurrency", "0", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "--judge-concurrency 0" in err and "Traceback" not in err


def test_theme_scores_group_encounters_by_the_scenarios_themes_not_by_criterion_tags() -> None:
    """HealthBench reports per theme: a theme is a tag of the row (scenario), so its score is the clipped
    mean of those encounters' rubric scores; criterion tags (axis:*, level:*) stay in tag_scores."""
    from scorers._judge import summarise_judges
    from sim.records import JudgeCard

    cards = {("a", 0): JudgeCard(judges=["j"], rubric_score=0.8, tag_scores={"axis:accuracy": 0.8}),
             ("a", 1): JudgeCard(judges=["j"], rubric_score=0.4, tag_scores={"axis:accuracy": 0.4}),
             ("b", 0): JudgeCard(judges=["j"], rubric_score=-0.5, tag_scores={"axis:accuracy": 0.0}),
             ("c", 0): JudgeCard(judges=["j"], rubric_score=None)}
    summary = summarise_judges(cards, judges=["j"], excluded={}, warnings=[],
                               themes={"a": ["emergency_referrals"], "b": ["emergency_referrals", "hedging"],
                                       "c": ["hedging"]})
    assert summary.theme_scores == {"emergency_referrals": pytest.approx((0.8 + 0.4 - 0.5) / 3),
                                    "hedging": 0.0}
    assert "emergency_referrals" not in summary.tag_scores and "axis:accuracy" in summary.tag_scores
    assert summarise_judges(cards, judges=["j"], excluded={}, warnings=[]).theme_scores == {}
