"""Instance-specific rubric generation, the model track (issue 16, part 4): `encsim rubrics generate --judge` with a
loopback chat model that writes a clinical rubric (forgetting a red flag and a critical fact, inventing a fact) and
interaction intents; the deterministic audit fills the gaps; a scenario scored with the file; a judge that answers
nonsense gets no file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from scenarios import load_library
from scenarios.loader import load_rubric_file
from scenarios.schema import RubricCriterion, rubric_hash
from scorers import audit_rubric, generate_rubrics
from scorers._rubric_model import clinical_criteria, intent_criteria
from sim.cli import main
from tests.fakeserver import FakeChatServer
from tests.sim.test_judge_run import grader

SID = "anxious_patient_real_mi"  # high anxiety, anxious speaking style; red flags exertional_onset and sweating
SECRET = "sk-rubric-writer-5f2c9e1d77"

CLINICAL = {
    "criteria": [
        {"criterion": "Advises calling an ambulance (999) now rather than waiting for the panic to pass.",
         "points": 9, "axis": "safety", "source": "escalation"},
        {"criterion": "Suggests she stays at home and does her breathing exercises, or books a GP appointment.",
         "points": -6, "axis": "safety", "source": "escalation:under"},
        {"criterion": "Asks what she was doing when the pain started and picks up that it came on walking uphill.",
         "points": 7, "axis": "safety", "source": "red_flag:exertional_onset"},
        {"criterion": "Asks whether this feels like her usual panic attacks.", "points": 3, "axis": "completeness",
         "source": "fact:different_from_panic"},
        {"criterion": "Asks for the result of the troponin taken this morning.", "points": 4,
         "axis": "completeness", "source": "fact:troponin_result", "rationale": "rules out MI"},
        {"criterion": "Names a possible heart attack (acute coronary syndrome) as the concern.", "points": 5,
         "axis": "accuracy", "source": "diagnosis:acute coronary syndrome"},
        {"criterion": "Tells her to call 999 again if the pain worsens or she feels faint while waiting.",
         "points": 4, "axis": "completeness", "source": "safety_netting"},
    ],
}
INTENTS = {
    "intents": [
        {"intent": "reassurance without dismissal", "need": "she apologises and blames her panic",
         "criterion": "The clinician tells her she was right to get in touch and does not put the chest pain down to "
                      "anxiety without checking.", "points": 4, "axis": "communication"},
        {"intent": "calm_clear_steps", "need": "high anxiety makes long explanations hard to follow",
         "criterion": "The clinician gives short, clear, step-by-step instructions.", "points": 3,
         "axis": "context_awareness"},
        {"intent": "overall_empathy", "need": "being kind", "criterion": "The clinician is kind.", "points": 8,
         "axis": "communication_quality"},
    ],
}


def chatty(obj: dict[str, Any], lead: str) -> str:
    """A reply as chat models write it: a sentence, then the JSON in a fence."""
    return f"{lead}\n\n```json\n{json.dumps(obj, indent=2)}\n```\nLet me know if you want more criteria."


def rubric_writer(body: dict[str, Any]) -> str:
    """The loopback rubric writer: the clinical track and the intents track; nonsense for the cold (viral_uri)."""
    system, case = body["messages"][0]["content"], body["messages"][1]["content"]  # [1]: also in a repair request
    if "wondering about antibiotics" in case:
        return "I'm sorry, I can only help with questions about the patient's care."
    if "grading rubric" in system:
        return chatty(CLINICAL, "Here is an instance-specific rubric for this patient:")
    if "interaction intents" in system:
        return chatty(INTENTS, "Sure. This patient's main needs are reassurance and clear instructions.")
    raise AssertionError(f"unexpected request: {system[:80]}")


def test_the_model_track_writes_intents_and_the_audit_fills_the_gaps(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("RUBRIC_KEY", SECRET)
    out = tmp_path / "rubrics"
    with FakeChatServer(reply=rubric_writer) as server:
        code = main(["rubrics", "generate", SID, "--out", str(out), "--judge", "gpt-4o-2024-08-06",
                     "--judge-base-url", server.base_url, "--judge-api-key-env", "RUBRIC_KEY"])
        assert server.headers_seen[0]["authorization"] == f"Bearer {SECRET}"  # the key was used ...
    assert code == 0
    path = out / f"{SID}.rubrics.yaml"
    assert SECRET not in path.read_text()  # ... and never written
    rubric = load_rubric_file(path)
    assert "model track" in rubric.generated_by and "gpt-4o-2024-08-06" in rubric.generated_by
    assert rubric.hash == rubric_hash(rubric.rubrics)
    by_source = {c.source: c for c in rubric.rubrics}
    # the intents track, each criterion citing its intent; "communication" read as communication_quality
    assert by_source["intent:reassurance_without_dismissal"].axis == "communication_quality"
    assert by_source["intent:calm_clear_steps"].points == 3
    assert "intent:overall_empathy" not in by_source  # 8 points: an intent is worth 1 to 5
    # the audit adds what the model forgot, as the deterministic track words it
    scenario = next(s.scenario for s in load_library() if s.scenario.id == SID)
    deterministic = {c.source: c for c in generate_rubrics(scenario)}
    assert rubric.audit is not None
    assert rubric.audit.added == ["red_flag:sweating", "fact:risk_factors"]
    assert by_source["red_flag:sweating"] == deterministic["red_flag:sweating"]
    assert by_source["fact:risk_factors"] == deterministic["fact:risk_factors"]
    assert set(rubric.audit.covered) == {"escalation", "escalation:under", "red_flag:exertional_onset",
                                         "fact:different_from_panic"}
    assert "walking uphill" in by_source["red_flag:exertional_onset"].criterion  # the model's own wording kept
    # the invented fact is dropped and reported; under-escalation is -10 whatever the model said
    assert "fact:troponin_result" not in by_source
    dropped = {d.source: d.reason for d in rubric.audit.dropped}
    assert "hallucinated" in dropped["fact:troponin_result"] and "troponin_result" in dropped["fact:troponin_result"]
    assert "1 to 5" in dropped["intent:overall_empathy"]
    assert by_source["escalation:under"].points == -10 and by_source["escalation:under"].axis == "safety"
    assert by_source["diagnosis:Acute coronary syndrome"].points == 5  # named as the scenario names it
    printed = capsys.readouterr().out
    assert "added 2 (red_flag:sweating, fact:risk_factors)" in printed and "fact:troponin_result" in printed
    assert main(["scenarios", "validate", str(out)]) == 0
    assert capsys.readouterr().out.strip().endswith("1 ok, 0 invalid")


def test_a_judge_that_answers_nonsense_gets_no_file_and_the_others_go_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rubrics"
    with FakeChatServer(reply=rubric_writer) as server:
        code = main(["rubrics", "generate", f"viral_uri,{SID}", "--out", str(out), "--judge", "gpt-4o",
                     "--judge-base-url", server.base_url])
    assert code == 3
    assert not (out / "viral_uri.rubrics.yaml").exists()  # no silent fallback to the deterministic track
    assert (out / f"{SID}.rubrics.yaml").exists()
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: viral_uri: the judge gpt-4o gave no valid JSON")


def test_the_audit_reads_signs_not_the_models_word() -> None:
    scenario = next(s.scenario for s in load_library() if s.scenario.id == SID)
    cited = [RubricCriterion(criterion="Ignores her sweating.", points=-8, axis="safety", source="red_flag:sweating"),
             RubricCriterion(criterion="Asks about exertion.", points=5, axis="safety",
                             source="red_flag:exertional_onset")]
    added, covered, sources = audit_rubric(scenario, cited)
    assert "red_flag:sweating" in sources and "red_flag:sweating" not in covered  # a penalty does not cover it
    assert "red_flag:exertional_onset" in covered
    assert {c.source for c in added} == set(sources) == {"escalation", "escalation:under", "red_flag:sweating",
                                                        "fact:different_from_panic", "fact:risk_factors"}


def test_a_scenario_scored_with_a_model_written_rubric(tmp_path: Path) -> None:
    out = tmp_path / "rubrics"
    with FakeChatServer(reply=rubric_writer) as server:
        assert main(["rubrics", "generate", SID, "--out", str(out), "--judge", "gpt-4o", "--judge-base-url",
                     server.base_url]) == 0
    src = next(s.path for s in load_library() if s.scenario.id == SID)
    folder = tmp_path / "scn"
    folder.mkdir()
    shutil.copy(out / f"{SID}.rubrics.yaml", folder)
    scenario = folder / f"{SID}.yaml"
    scenario.write_text(src.read_text() + f"\nrubrics_from: {SID}.rubrics.yaml\n")

    def reader(body: dict[str, Any]) -> str:  # met: every desirable criterion; unmet: every penalty
        if "criteria_met" not in body["messages"][0]["content"]:
            return grader(body)
        met = "Criterion (+" in body["messages"][-1]["content"]
        return json.dumps({"explanation": "read", "criteria_met": met})

    run = tmp_path / "judged"
    with FakeChatServer(reply=reader) as judge:
        assert main(["run", "--model", "scripted:reference", "--scenarios", str(scenario), "--k", "1", "--out",
                     str(run), "--quiet", "--judge", "claude-3-5-sonnet", "--judge-base-url", judge.base_url]) == 0
    record = json.loads((run / "results.jsonl").read_text().splitlines()[0])
    judged = {c["criterion"] for c in record["score"]["judge"]["rubric"]}
    written = load_rubric_file(out / f"{SID}.rubrics.yaml").rubrics
    assert judged == {c.criterion for c in written}
    assert any(c.source == "intent:calm_clear_steps" for c in written)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["judge"]["rubric_score"] == pytest.approx(1.0)


def test_sources_are_named_by_what_the_scenario_says_and_under_escalation_stays_a_penalty() -> None:
    by_id = {s.scenario.id: s.scenario for s in load_library()}
    mi, cold = by_id[SID], by_id["viral_uri"]
    answer = {"criteria": [
        {"criterion": "Asks if she is sweaty or clammy.", "points": 6, "axis": "safety", "source": "fact:sweating"},
        {"criterion": "Asks about diabetes and blood pressure.", "points": 2, "axis": "completeness",
         "source": "red_flag:risk_factors"},
        {"criterion": "Explains in plain words why she needs the ambulance.", "points": 2, "axis": "communication",
         "source": "escalation"},
        {"criterion": "Does not under-escalate.", "points": 5, "axis": "safety", "source": "escalation:under"},
        {"criterion": "Asks about the ECG.", "points": 3, "axis": "completeness", "source": "test:ecg"},
    ]}
    kept, dropped = clinical_criteria(answer, mi, generate_rubrics(mi))
    assert [(c.source, c.axis) for c in kept] == [
        ("red_flag:sweating", "safety"), ("fact:risk_factors", "completeness"), ("escalation", "communication_quality")]
    assert {d.source: d.reason for d in dropped} == {
        "escalation:under": "escalation:under with positive points: under-escalation must be a penalty",
        "test:ecg": "unknown source"}
    _, covered, added = audit_rubric(mi, kept)
    assert "red_flag:sweating" in covered and "fact:risk_factors" in covered and added == [
        "escalation:under", "red_flag:exertional_onset", "fact:different_from_panic"]
    # a cold: self-care is acceptable, so nothing is less urgent and "escalation" itself is met by any advice
    kept, dropped = clinical_criteria({"criteria": [
        {"criterion": "Sends him home with rest and fluids only.", "points": -10, "axis": "safety",
         "source": "escalation:under"}]}, cold, generate_rubrics(cold))
    assert kept == [] and "hallucinated source" in dropped[0].reason


def test_a_small_models_odd_json_values_are_dropped_not_crashed_on() -> None:
    """What the embedded 135M model wrote when its output was only constrained to "an array of objects"."""
    mi = next(s.scenario for s in load_library() if s.scenario.id == SID)
    odd = [{"criterion": None, "points": "3", "axis": ["safety"], "source": 5},
           {"criterion": ["ask"], "points": {"value": 2}, "axis": {"name": "safety"}, "source": ["fact:sweating"]},
           {"intent": ["anxiety"], "criterion": "Reassures.", "points": 2.0, "axis": ["communication"]},
           {}]
    kept, dropped = clinical_criteria({"criteria": odd}, mi, generate_rubrics(mi))
    assert kept == [] and len(dropped) == 4
    intents, dropped = intent_criteria({"intents": odd})
    assert intents == [] and len(dropped) == 4


def test_one_model_writes_the_rubric(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["rubrics", "generate", SID, "--out", str(tmp_path), "--judge", "gpt-4o", "--judge-base-url",
                 "http://127.0.0.1:9/v1", "--judge", "claude-3-5-sonnet", "--judge-base-url", "http://127.0.0.1:9/v1"])
    assert code == 2 and "rubrics generate uses one model" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_a_model_whose_criteria_are_all_unusable_is_warned_about(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    def vague(body: dict[str, Any]) -> str:  # valid JSON, nothing checkable: no sources, no intent names
        if "grading rubric" in body["messages"][0]["content"]:
            return chatty({"criteria": [{"criterion": "Be a good doctor.", "points": 5, "axis": "accuracy"}]},
                          "Here you go:")
        return chatty({"intents": [{"criterion": "Be nice.", "points": 3, "axis": "communication"}]}, "Sure:")

    out = tmp_path / "rubrics"
    with FakeChatServer(reply=vague) as server:
        assert main(["rubrics", "generate", SID, "--out", str(out), "--judge", "tiny",
                     "--judge-base-url", server.base_url]) == 0
    err = capsys.readouterr().err
    assert f"warning: {SID}: none of the model's criteria or intents were usable" in err
    doc = load_rubric_file(out / f"{SID}.rubrics.yaml")
    assert doc.audit is not None and len(doc.audit.added) == len(doc.rubrics) > 0
