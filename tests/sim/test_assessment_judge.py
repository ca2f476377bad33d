"""The judge fallback of the assessment reader (``--judge``): a real judge client over loopback HTTP.

The judge is the OpenAI-compatible fake server (tests/fakeserver.py) answering with a JSON verdict, read by
``sim.judges.JudgeClient`` exactly as a run reads a real judge.
"""

from __future__ import annotations

import json
from typing import Any

from scenarios import Scenario
from sim.encounter import run_encounter
from sim.encounter.assessment import AssessmentJudge, looks_final, parse_assessment
from sim.encounter.assessment._judge import merged
from sim.encounter.channel import TextChannel
from sim.judges import JudgeClient
from tests.fakeserver import FakeChatServer
from tests.sim.test_harness import ReplayAgent

# decides without concluding (no impression, no "my assessment"): not a prose final the reader takes on its own
# decides an escalation but names no level and no impression: the deterministic reader leaves it to the judge
PROSE_FINAL = "Please go to the emergency department now, someone should drive you."
VERDICT = {"final": True, "triage_level": "2", "escalation": "emergency", "disposition": "self_present_ed",
           "diagnoses": ["Acute appendicitis", "Ovarian cyst"]}


def _judge_server(verdict: dict[str, Any], seen: list[str]) -> FakeChatServer:
    def reply(request: dict[str, Any]) -> str:
        seen.append(request["messages"][-1]["content"])
        return json.dumps(verdict)

    return FakeChatServer(reply=reply)


async def test_a_prose_final_is_read_by_the_judge_and_ends_the_encounter(by_id: dict[str, Scenario]) -> None:
    seen: list[str] = []
    agent = ReplayAgent(["Where exactly is the pain?", PROSE_FINAL, "Any vomiting?"])
    with _judge_server(VERDICT, seen) as server:
        judge = AssessmentJudge(JudgeClient(model="judge", base_url=server.base_url, retries=0))
        r = await run_encounter(by_id["appendicitis"], agent, TextChannel(), assessment_judge=judge)
    assert r.termination == "assessment" and r.agent_turns == 2
    assert (r.assessment.triage_level, r.assessment.escalation, r.assessment.disposition) == \
        (2, "emergency", "self_present_ed")
    assert r.assessment.diagnoses[0] == "Acute appendicitis" and r.assessment.form == "judge"
    assert [t.assessment_form for t in r.turns if t.speaker == "agent"] == [None, "judge"]
    assert len(seen) == 1 and "emergency department now" in seen[0]  # the interview question never reached the judge


async def test_without_a_judge_the_prose_final_is_not_an_assessment(by_id: dict[str, Scenario]) -> None:
    agent = ReplayAgent(["Where exactly is the pain?", PROSE_FINAL, "Any vomiting?"])
    r = await run_encounter(by_id["appendicitis"], agent, TextChannel(), turn_limit=3)
    assert r.termination == "max_turns" and r.assessment.escalation is None


async def test_a_judge_that_says_not_final_leaves_the_interview_going(by_id: dict[str, Scenario]) -> None:
    seen: list[str] = []
    agent = ReplayAgent(["It could be ESI 2 territory. Is the pain worse when you walk?", "Any vomiting?"])
    with _judge_server({**VERDICT, "final": False}, seen) as server:
        judge = AssessmentJudge(JudgeClient(model="judge", base_url=server.base_url, retries=0))
        r = await run_encounter(by_id["appendicitis"], agent, TextChannel(), turn_limit=3, assessment_judge=judge)
    assert r.termination == "max_turns" and len(seen) >= 1
    assert all(t.assessment_form is None for t in r.turns)


async def test_a_broken_judge_leaves_the_deterministic_reading(by_id: dict[str, Scenario]) -> None:
    incomplete = "ASSESSMENT:\nTriage level: ESI 3\nDiagnoses: 1. Acute appendicitis"  # no escalation
    agent = ReplayAgent(["Where exactly is the pain?", incomplete])
    with FakeChatServer(default=("malformed",)) as server:
        client = JudgeClient(model="judge", base_url=server.base_url, retries=0)
        judge = AssessmentJudge(client)
        r = await run_encounter(by_id["appendicitis"], agent, TextChannel(), assessment_judge=judge)
    assert r.termination == "assessment" and r.assessment.form == "plain"
    assert (r.assessment.triage_level, r.assessment.escalation) == (3, None) and judge.failures == 1


def test_the_judge_fills_only_what_the_reader_missed() -> None:
    parsed = parse_assessment("ASSESSMENT:\nTriage level: ESI 3\nDiagnoses: 1. Renal colic")
    out = merged(parsed, {**VERDICT, "triage_level": "1", "escalation": "same-day urgent care"})
    assert out is not None and out.form == "judge"
    assert (out.triage_level, out.escalation, out.diagnoses) == (3, "urgent", ["Renal colic"])
    assert not any(p.startswith("no escalation") for p in out.problems)
    assert "read by the judge: escalation, disposition" in out.problems


def test_a_judge_cannot_bring_a_value_the_scorer_does_not_know() -> None:
    out = merged(parse_assessment(""), {"final": True, "triage_level": "seven", "escalation": "whenever",
                                        "disposition": "helicopter", "diagnoses": []})
    assert out is None  # neither a level nor an escalation: no decision


def test_only_replies_that_may_decide_reach_the_judge() -> None:
    assert looks_final(PROSE_FINAL)
    assert looks_final("You should call 999 now.")
    assert not looks_final("Have you been to the emergency department before with this?")
    assert not looks_final("How long has the pain been there, and is it constant?")
    assert looks_final("How long has the pain been there?", last_turn=True)


def _bench() -> Any:
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "assessment_reader.py"
    spec = importlib.util.spec_from_file_location("assessment_reader", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["assessment_reader"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


async def test_the_bench_scores_the_parser_the_judge_and_both() -> None:
    bench = _bench()
    data = {"finals": [{"format": "prose", "text": PROSE_FINAL, "triage_level": 2, "escalation": "emergency",
                        "diagnoses": ["appendicitis"]},
                       {"format": "fields", "text": "Acuity: ESI 4\nUrgency: routine\nImpression: gout",
                        "triage_level": 4, "escalation": "routine", "diagnoses": ["gout"]}],
            "mentions": [{"format": "question", "text": "Is the pain worse when you walk?"}]}

    def reply(request: dict[str, Any]) -> str:  # a judge that reads the prose final and calls everything else final
        text = request["messages"][-1]["content"]
        return json.dumps(VERDICT if "emergency department now" in text else {**VERDICT, "triage_level": "3"})

    with FakeChatServer(reply=reply) as server:
        judge = AssessmentJudge(JudgeClient(model="judge", base_url=server.base_url, retries=0))
        alone: dict[str, Any] = {}
        readers = await bench.measure(data, judge, alone)
    det, jud, both = readers["deterministic"], readers["judge"], readers["both"]
    assert (det.right, det.ignored) == (1, 1)  # the fields read, the prose missed, the question ignored
    assert (jud.right, jud.ignored) == (1, 0)  # this judge misreads the level of one and takes the question as final
    assert (both.right, both.ignored) == (2, 1)  # the parser where it reads, the judge for the prose only
