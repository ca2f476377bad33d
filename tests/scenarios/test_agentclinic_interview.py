"""Imported AgentClinic cases can be interviewed: on the real public file, ordinary questions reveal the
case, triggers come from the OSCE fields (never fragments of the answer text), answers are the
patient's or the carer's own words, "not provided" makes no fact, and findings come as findings."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from scenarios import Scenario, load_scenario
from scenarios.importers import import_agentclinic
from sim.cli import main
from sim.patient.understanding import Understanding
from tests.public_data import MEDQA

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("case_reveal", ROOT / "bench" / "case_reveal.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["case_reveal"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Scenario]]:
    out = tmp_path_factory.mktemp("medqa")
    report = import_agentclinic(MEDQA, out)
    assert report.rows == 107 and report.failed == [] and len(report.converted) == 107
    return out, [load_scenario(out / f"{sid}.yaml").scenario for sid in report.converted]


@pytest.mark.parametrize("bank", ["ordinary_questions.yaml", "ordinary_questions_check.yaml"])
def test_ordinary_questions_reveal_most_of_every_case(imported: tuple[Path, list[Scenario]], bank: str) -> None:
    bench = _bench()
    questions = bench.load_questions(ROOT / "bench" / "data" / bank)
    figures = bench.summarise([bench.reveal(s, questions) for s in imported[1]])
    assert figures["facts_revealed"] >= 0.70 and figures["critical_revealed"] >= 0.80, figures
    assert figures["mean_case_facts"] >= 0.70 and figures["mean_case_critical"] >= 0.80, figures
    # and one question is not what does it: on average a question reveals a small share of a case
    assert figures["mean_question_share"] <= 0.10 and figures["max_question_share"] <= 0.60, figures


def test_triggers_come_from_the_fields_not_from_fragments_of_the_answers(
        imported: tuple[Path, list[Scenario]], capsys: pytest.CaptureFixture[str]) -> None:
    out, scenarios = imported
    fragments = {"information", "provided", "complete", "explicit", "s altered", "specifics", "anything else"}
    for s in scenarios:
        for f in s.information_tree:
            assert not fragments & set(f.triggers), (s.id, f.id, f.triggers)
            assert f.intents, (s.id, f.id)  # every fact is reachable through the lexicon
    main(["scenarios", "lint", str(out)])
    lint = capsys.readouterr().out
    assert ": unreachable:" not in lint and ": common-word trigger:" not in lint


def test_not_provided_makes_no_fact(imported: tuple[Path, list[Scenario]]) -> None:
    for s in imported[1]:
        for f in s.information_tree:
            assert not re.search(r"\bnot (?:provided|mentioned|specified)\b|^information\b", f.answer, re.I), \
                (s.id, f.answer)


def test_answers_are_natural_first_person_or_the_carers(imported: tuple[Path, list[Scenario]]) -> None:
    # "I has", or "I ... and has" with no clause of its own between ("I have pain that ... and has been" is right)
    broken = re.compile(r"\bI (?:has|is|reports|denies|notes|was reports)\b"
                        r"|\bI\b(?:(?!\b(?:that|which|who|whose|when|while|because)\b)[^.])* and has\b")
    for s in imported[1]:
        carer = "voice:carer" in s.tags
        # a child's parent tells it, and a relative tells the case of a patient who cannot (confused, unable to speak)
        assert carer == (s.patient_profile.age < 12 or "voice:cannot_tell" in s.tags), s.id
        assert (s.patient_profile.speaker == "patient") == (not carer), s.id
        if carer:
            assert s.opening_line.startswith("I've brought my "), s.opening_line
        for f in s.information_tree:
            assert not broken.search(f.answer), (s.id, f.answer)
            if f.category.value in ("history", "symptoms", "past_history", "social"):
                assert not re.match(r"(?:The|This) (?:patient|child|infant|newborn|baby)\b", f.answer), (s.id, f.answer)


def test_a_child_is_told_of_by_the_carer(imported: tuple[Path, list[Scenario]]) -> None:
    babies = [s for s in imported[1] if s.patient_profile.age == 0]
    assert babies
    for s in babies:
        assert "voice:carer" in s.tags and s.opening_line.startswith("I've brought my baby in")
        assert s.patient_profile.context.pediatric


def test_examination_and_tests_are_findings_revealed_by_asking_for_them(
        imported: tuple[Path, list[Scenario]]) -> None:
    myasthenia = next(s for s in imported[1] if s.id.startswith("ac_myasthenia_gravis"))
    u = Understanding(myasthenia)
    neuro = {fid for fid in u.match("Can I do a quick neurological examination?")}
    assert neuro and all(myasthenia.fact(fid).category.value == "exam" for fid in neuro)
    assert all(myasthenia.fact(fid).answer.startswith("On examination - ") for fid in neuro)
    emg = u.match("Has an EMG been done?")
    assert [myasthenia.fact(fid).category.value for fid in emg] == ["test"]
    assert myasthenia.fact(next(iter(emg))).answer.startswith("The electromyography results show: ")
    # asking about symptoms reveals no examination finding or test result
    for q in ["Any weakness in your arms?", "Do you have double vision?", "Any chest pain?"]:
        assert all(myasthenia.fact(fid).category.value not in ("exam", "test") for fid in u.match(q)), q
    counts = {c: sum(1 for s in imported[1] for f in s.information_tree if f.category.value == c)
              for c in ("exam", "test", "vitals")}
    assert all(n > 100 for n in counts.values()), counts


def test_a_row_without_a_primary_symptom_takes_its_complaint_from_the_history(tmp_path: Path) -> None:
    import json

    row = json.loads(MEDQA.read_text(encoding="utf-8").splitlines()[0])
    del row["OSCE_Examination"]["Patient_Actor"]["Symptoms"]["Primary_Symptom"]
    src = tmp_path / "no_primary.jsonl"
    src.write_text(json.dumps(row) + "\n")
    report = import_agentclinic(src, tmp_path / "out")
    assert report.failed == [] and len(report.converted) == 1
    s = load_scenario(tmp_path / "out" / f"{report.converted[0]}.yaml").scenario
    assert "double vision" in s.chief_complaint.lower()
    assert any("taken from the history" in w.message for w in report.warnings)


MIMIC = ROOT / "tests" / "scenarios" / "samples" / "agentclinic_mimiciv_sample.jsonl"


def test_the_mimic_iv_file_shape_imports_and_groups_its_analytes_into_panels(tmp_path: Path) -> None:
    """Rows 1, 3 and 6 of AgentClinic's public agentclinic_mimiciv.jsonl (same OSCE schema, MIT): an empty
    History list, "Not Provided" and empty results, and dozens of analytes as top-level keys
    ("Hemoglobin_Blood": "13.8") that a clinician orders as panels."""
    report = import_agentclinic(MIMIC, tmp_path)
    assert report.rows == 3 and report.failed == [] and len(report.converted) == 3
    by_dx = {s.expected.diagnoses[0].name.split()[0]: s for s in
             (load_scenario(tmp_path / f"{sid}.yaml").scenario for sid in report.converted)}
    polyneuritis, mono, cellulitis = by_dx["Acute"], by_dx["Mononucleosis"], by_dx["Cellulitis"]
    tests = {f.id: f for f in polyneuritis.information_tree if f.category.value == "test"}
    assert len(tests) < 25  # 60 analytes, ordered as panels
    fbc = tests["test_full_blood_count"]
    assert "hemoglobin 15.3" in fbc.answer and " blood 15.3" not in fbc.answer
    assert tests["test_lumbar_puncture"].answer.startswith("The lumbar puncture (CSF) results show: ")
    assert set(Understanding(polyneuritis).match("Can we do a lumbar puncture?")) == {"test_lumbar_puncture"}
    assert "test_full_blood_count" in Understanding(polyneuritis).match("Can I see his full blood count?")
    assert tests["test_blood_pressure"].intents[0] == "vital_signs"  # a measurement, not a blood test
    assert not any("inflammatory" in f.id or "not provided" in f.answer.lower() for f in cellulitis.information_tree)
    assert not any(f.id.startswith("test_blood_culture") for f in mono.information_tree)  # "" is no result
    assert not [f for f in mono.information_tree if f.category.value == "history"]  # "History": []
    bench = _bench()
    figures = bench.summarise([bench.reveal(s, bench.load_questions()) for s in by_dx.values()])
    assert figures["facts_revealed"] >= 0.70 and figures["critical_revealed"] >= 0.80, figures
