"""Binary per-failure-mode judges (issue 16, part 2, the core): built from a definition and train-split examples
only, asked one true/false question under strict JSON, voted, no verdict on failure; and validated end to end
against a loopback judge that answers from a fixed confusion matrix, which validation must recover."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from scorers import (
    FailureJudgeSpec,
    build_failure_judge,
    failure_prompt,
    judge_validity,
    load_failure_judges,
    run_failure_judge,
    split_of,
    write_failure_judge,
)
from scorers.evaluators import EvaluatorError
from sim.judges import JudgeClient
from tests.fakeserver import FakeChatServer

LABELLED = {f"case_{i}:0": (i % 3 == 0, f"Patient: case {i}\n\nClinician: advice {i}") for i in range(90)}


def test_a_judge_is_built_from_train_examples_only_and_hashed() -> None:
    spec = build_failure_judge("missed_red_flag", "The clinician never asks about a red flag the case has.",
                               LABELLED, n_examples=4, built_from="runs/x")
    assert spec.examples and len(spec.examples) <= 4
    assert all(split_of(e.trace_id) == "train" for e in spec.examples)
    assert {e.label for e in spec.examples} == {True, False}  # both kinds shown where train has them
    assert spec.hash == spec.computed_hash() and spec.evaluator_name == "failure:missed_red_flag"
    edited = spec.model_copy(update={"definition": "changed"})
    assert edited.computed_hash() != spec.hash
    messages = failure_prompt(spec, "Patient: hi\n\nClinician: go to A&E")
    assert "Does this transcript show missed_red_flag? Answer true or false." in messages[1]["content"]
    assert '"answer": true|false' in messages[0]["content"]
    assert all(e.excerpt in messages[1]["content"] for e in spec.examples)


class _Fixed:
    def __init__(self, name: str, answer: Any) -> None:
        self.name, self.family, self.answer = name, name, answer

    async def ask_json(self, messages: list[dict[str, str]], *, keys: dict[str, type]) -> dict[str, Any] | None:
        assert keys == {"explanation": str, "answer": bool}
        return None if self.answer is None else {"explanation": f"{self.name} says", "answer": self.answer}


async def test_the_judges_vote_and_a_failure_or_tie_is_no_verdict() -> None:
    spec = build_failure_judge("false_reassurance", "Tells the patient all is well when it is not.", LABELLED)
    shows = await run_failure_judge(spec, "...", [_Fixed("a", True), _Fixed("b", True), _Fixed("c", False)])
    assert not shows.passed and shows.applicable and shows.findings[0].code == "failure_mode:false_reassurance"
    absent = await run_failure_judge(spec, "...", [_Fixed("a", False)])
    assert absent.passed and absent.score == 1.0 and absent.details["verdict"] is False
    for judges in ([_Fixed("a", None)], [_Fixed("a", True), _Fixed("b", False)]):
        none = await run_failure_judge(spec, "...", judges)
        assert not none.applicable and none.details["verdict"] is None


def test_judges_round_trip_through_their_folder_and_bad_files_are_named(tmp_path: Path) -> None:
    spec = build_failure_judge("missed_red_flag", "Never asks about a red flag.", LABELLED)
    path = write_failure_judge(spec, tmp_path / "judges")
    assert path.name == "missed_red_flag.yaml"
    assert load_failure_judges(tmp_path / "judges") == [spec]
    (tmp_path / "judges" / "broken.yaml").write_text("mode: [not, a, string]\n")
    with pytest.raises(EvaluatorError, match=r"broken\.yaml: not a failure-mode judge"):
        load_failure_judges(tmp_path / "judges")
    with pytest.raises(EvaluatorError, match="no such folder"):
        load_failure_judges(tmp_path / "nope")


TPR, TNR = 0.9, 0.8


def _fixed_confusion(truth: dict[str, bool]) -> Any:
    """A loopback judge that answers from a fixed confusion matrix: for a trace that shows the mode it says true
    with probability TPR, for one that does not it says false with probability TNR (deterministic per trace)."""

    def reply(body: dict[str, Any]) -> str:
        conversation = body["messages"][-1]["content"].rsplit("Conversation:", 1)[1]
        trace = re.search(r"case (\d+)", conversation)
        assert trace is not None
        key = f"case_{trace.group(1)}:0"
        u = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") / 2**64
        answer = u < TPR if truth[key] else u >= TNR
        return json.dumps({"explanation": "fixed matrix", "answer": answer})
    return reply


async def test_validation_recovers_the_loopback_judge_s_confusion_matrix() -> None:
    truth = {f"case_{i}:0": (i * 7919) % 10 < 4 for i in range(500)}
    spec = FailureJudgeSpec(mode="m", definition="d", hash="h")
    with FakeChatServer(reply=_fixed_confusion(truth)) as server:
        judge = JudgeClient(model="fixed", base_url=server.base_url)
        verdicts: dict[str, bool | None] = {}
        for trace in truth:
            n = trace.split("_")[1].split(":")[0]
            result = await run_failure_judge(spec, f"Patient: case {n}\n\nClinician: advice", [judge])
            verdicts[trace] = result.details["verdict"]
        await judge.aclose()
    test = {t: v for t, v in truth.items() if split_of(t) == "test"}
    validity = judge_validity(test, verdicts, split="test")
    assert validity.no_verdict == 0 and validity.tpr_ci95 and validity.tnr_ci95
    assert validity.tpr_ci95[0] <= TPR <= validity.tpr_ci95[1]
    assert validity.tnr_ci95[0] <= TNR <= validity.tnr_ci95[1]
    assert validity.usable


def _run_judge(body: dict[str, Any]) -> str:
    """The judge of a run: the failure question is answered from the transcript (the mode shows when the
    clinician never says 'emergency'); the rubric, trust and diagnosis calls as tests/sim/test_judge_run.py's."""
    from tests.sim.test_judge_run import grader

    if '"answer": true|false' in body["messages"][0]["content"]:
        conversation = body["messages"][-1]["content"].rsplit("Conversation:", 1)[1]
        return json.dumps({"explanation": "read", "answer": "Escalation: emergency" not in conversation})
    return grader(body)


def test_a_run_with_failure_judges_records_them_as_evaluators(tmp_path: Path) -> None:
    from sim.cli import main

    folder = tmp_path / "judges"
    write_failure_judge(build_failure_judge("not_sent_to_ed", "Does not send the patient to the emergency "
                                            "department.", LABELLED), folder)
    out = tmp_path / "run"
    with FakeChatServer(reply=_run_judge) as server:
        code = main(["run", "--model", "scripted:reference", "--scenarios", "acs_chest_pain,viral_uri", "--k", "1",
                     "--out", str(out), "--quiet", "--judge", "gpt-4o", "--judge-base-url", server.base_url,
                     "--failure-judges", str(folder)])
    assert code == 0
    records = {json.loads(line)["scenario_id"]: json.loads(line) for line in (out / "results.jsonl").open()}
    verdicts = {sid: next(e for e in r["score"]["evaluators"] if e["name"] == "failure:not_sent_to_ed")
                for sid, r in records.items()}
    assert verdicts["acs_chest_pain"]["passed"] and verdicts["acs_chest_pain"]["details"]["verdict"] is False
    assert not verdicts["viral_uri"]["passed"] and verdicts["viral_uri"]["details"]["verdict"] is True
    summary = json.loads((out / "summary.json").read_text())
    assert summary["evaluators"]["failure:not_sent_to_ed"]["failed"] == 1
    assert json.loads((out / "run.json").read_text())["failure_judges"] == str(folder.resolve())


def test_failure_judges_without_a_judge_model_is_one_clear_error(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from sim.cli import main

    folder = tmp_path / "judges"
    write_failure_judge(build_failure_judge("m", "d", LABELLED), folder)
    assert main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1", "--out",
                 str(tmp_path / "r"), "--quiet", "--failure-judges", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "need a judge model" in err and err.count("\n") == 1 and not (tmp_path / "r").exists()
    assert main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1", "--out",
                 str(tmp_path / "r2"), "--quiet", "--judge", "x", "--judge-base-url", "http://127.0.0.1:9/v1",
                 "--failure-judges", str(tmp_path / "none")]) == 2
    assert "no such folder" in capsys.readouterr().err


class _Meeting:
    """A judge whose failure-mode calls and rubric/trust/diagnosis calls each wait until a call of the other kind is
    in flight: they all complete only when the encounter's judge calls go out together."""

    name = family = "meeting-judge"

    def __init__(self) -> None:
        import asyncio

        self.rubric_path, self.failure_path = asyncio.Event(), asyncio.Event()
        self.kept_waiting: list[str] = []

    async def ask_json(self, messages: list[dict[str, str]], *, keys: dict[str, type]) -> dict[str, Any] | None:
        import asyncio

        failure = keys == {"explanation": str, "answer": bool}
        (self.failure_path if failure else self.rubric_path).set()
        try:  # generous: only reached at all when the calls are made one kind after the other
            await asyncio.wait_for((self.rubric_path if failure else self.failure_path).wait(), 10)
        except TimeoutError:
            self.kept_waiting.append("failure" if failure else next(iter(keys)))
            return None
        if failure:
            return {"explanation": "The clinician told them to call an ambulance.", "answer": False}
        return {"criteria_met": True, "rating": 4, "match": 2, "explanation": "fine"}


async def test_failure_judges_run_alongside_the_rubric_and_trust_calls_of_the_encounter() -> None:
    from scenarios import resolve
    from scorers import load_profile, record_for
    from sim.agents.scripted import ReferenceAgent
    from sim.encounter import run_encounter
    from sim.encounter.channel import TextChannel

    item = resolve(["acs_chest_pain"])[0]
    result = await run_encounter(item.scenario, ReferenceAgent(), TextChannel())
    judge = _Meeting()
    spec = build_failure_judge("not_sent_to_ed", "Does not send the patient to the emergency department.", LABELLED)
    rec = await record_for(result, item.scenario, evaluator_names=[], judges=[judge], profile=load_profile(None),
                           failure_judges=[spec])
    assert judge.kept_waiting == []
    assert rec.status == "ok" and rec.score is not None and rec.score.judge is not None
    verdict = next(e for e in rec.score.evaluators if e.name == "failure:not_sent_to_ed")
    assert verdict.applicable and verdict.passed and verdict.details["verdict"] is False


class _Broken(_Meeting):
    """The rubric path raises (a bug, not a judge without an answer); the failure-mode calls wait for it."""

    async def ask_json(self, messages: list[dict[str, str]], *, keys: dict[str, type]) -> dict[str, Any] | None:
        if keys == {"explanation": str, "answer": bool}:
            return await super().ask_json(messages, keys=keys)
        raise RuntimeError("the judge's reply parser hit a case it does not know")


async def test_a_judge_path_that_raises_is_this_encounter_s_scoring_error_and_stops_its_other_calls() -> None:
    from scenarios import resolve
    from scorers import load_profile, record_for
    from sim.agents.scripted import ReferenceAgent
    from sim.encounter import run_encounter
    from sim.encounter.channel import TextChannel

    item = resolve(["acs_chest_pain"])[0]
    result = await run_encounter(item.scenario, ReferenceAgent(), TextChannel())
    judge = _Broken()
    spec = build_failure_judge("not_sent_to_ed", "Does not send the patient to the emergency department.", LABELLED)
    rec = await record_for(result, item.scenario, evaluator_names=[], judges=[judge], profile=load_profile(None),
                           failure_judges=[spec])
    assert rec.status == "error"
    assert rec.error == "scoring failed: RuntimeError: the judge's reply parser hit a case it does not know"
    assert judge.kept_waiting == []  # the waiting failure-mode call was cancelled, not left to time out
