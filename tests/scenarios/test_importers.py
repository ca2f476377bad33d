"""Importers: HealthBench rows and AgentClinic OSCE cases become scenario files that load and run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scenarios import load_dir, load_scenario
from scenarios.importers import (
    ImportSourceError,
    RowContext,
    RowError,
    convert_agentclinic_row,
    convert_healthbench_row,
    first_person,
    healthbench_id,
    import_agentclinic,
    import_healthbench,
    parse_demographics,
)
from scorers import score_encounter
from sim.agents.base import AgentReply, AgentRequest
from sim.agents.scripted import ReferenceAgent
from sim.cli import main
from sim.encounter import run_encounter
from sim.encounter.channel import TextChannel
from sim.patient import PatientSimulator
from tests.scenarios.test_loader import assert_every_fact_revealable

SAMPLES = Path(__file__).parent / "samples"
HB_SAMPLE = SAMPLES / "healthbench_sample.jsonl"
AC_SAMPLE = SAMPLES / "agentclinic_sample.jsonl"
CTX = RowContext(line=1, file_name="test.jsonl")


def _rows(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            out.append({})
    return out


class FixedReply:
    """Replies once with a fixed text (a replay scenario asks for exactly one reply)."""

    name = "fixed"
    vision = True

    def __init__(self, text: str) -> None:
        self.text = text
        self.requests: list[AgentRequest] = []

    async def respond(self, request: AgentRequest) -> AgentReply:
        self.requests.append(request)
        return AgentReply(text=self.text)

    async def aclose(self) -> None:
        return None


# --- HealthBench --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def hb_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("hb")
    return out, import_healthbench(HB_SAMPLE, out)


def test_healthbench_sample_converts_and_reports_failures(hb_dir) -> None:
    out, report = hb_dir
    assert report.rows == 5 and len(report.converted) == 3
    assert [f.row for f in report.failed] == [4, 5]
    assert "ends with an assistant message" in report.failed[0].reason
    assert "rubrics[0].points" in report.failed[1].reason and "less than or equal to 10" in report.failed[1].reason
    assert [(w.row, "system message dropped" in w.message) for w in report.warnings] == [(2, True)]
    assert sorted(p.name for p in out.glob("*.yaml")) == sorted(f"{i}.yaml" for i in report.converted)
    assert not list(out.glob(".*"))  # no temporary file left behind for the failed rows


def test_healthbench_scenarios_carry_conversation_and_rubric(hb_dir) -> None:
    out, report = hb_dir
    rows = {r["prompt_id"]: r for r in _rows(HB_SAMPLE)}
    loaded = {item.scenario.id: item.scenario for item in load_dir(out)}  # also checks ids/canaries unique
    assert set(loaded) == set(report.converted)
    for prompt_id, row in list(rows.items())[:3]:
        s = loaded[healthbench_id(prompt_id)]
        assert s.suite == "ddx" and s.tier == "A" and s.source == f"healthbench:{prompt_id}"
        convo = [m for m in row["prompt"] if m["role"] != "system"]
        assert [(m.role, m.content) for m in s.replay] == [
            ({"user": "patient", "assistant": "agent"}[m["role"]], m["content"]) for m in convo]
        assert [(r.criterion, r.points, r.tags) for r in s.rubrics] == [
            (r["criterion"], r["points"], r["tags"]) for r in row["rubrics"]]
        assert [r.axis for r in s.rubrics] == [
            next(t[5:] for t in r["tags"] if t.startswith("axis:")) for r in row["rubrics"]]
        assert s.expected.triage_level is None and not s.expected.diagnoses and s.information_tree == []
        assert (s.patient_profile.age, s.patient_profile.sex) == (40, "other")
        assert {"source:healthbench", "profile:unknown", *row["example_tags"]} <= set(s.tags)
        assert s.opening_line == convo[0]["content"] and len(s.chief_complaint) <= 80
    first = loaded[healthbench_id("5a1e0c6b-2f7d-4c3e-9b8a-1d2e3f4a5b60")]
    assert first.canary.startswith("encsim-sample-canary-not-a-real-healthbench-row ")
    second = loaded[healthbench_id("b7c4d2e1-0a9f-4e8d-8c7b-6a5f4e3d2c10")]  # canary "" -> derived
    assert second.canary.startswith("encsim-canary-") and second.canary.endswith("-hb")
    assert "healthbench:system_message_dropped" in second.tags
    assert healthbench_id("Sample Item/3").startswith("hb_sample_item_3_")


async def test_healthbench_replay_runs(hb_dir) -> None:
    out, report = hb_dir
    for item in load_dir(out):
        s = item.scenario
        agent = FixedReply("Please speak to your doctor today.")
        r = await run_encounter(s, agent, TextChannel())
        assert r.termination == "reply" and r.agent_turns == 1 and len(agent.requests) == 1
        assert [(t.speaker, t.text) for t in r.turns] == [
            *[(m.role, m.content) for m in s.replay], ("agent", "Please speak to your doctor today.")]
        assert [m.role for m in agent.requests[0].messages[1:]] == [
            "user" if m.role == "patient" else "assistant" for m in s.replay]
        card = score_encounter(r, s)
        assert card.composite is None  # no deterministic target: the rubric is for the judge path


def test_healthbench_row_checks() -> None:
    good = _rows(HB_SAMPLE)[0]
    convert_healthbench_row(good, CTX)
    for broken, fragment in [
        ({**good, "rubrics": []}, "'rubrics' is missing or empty"),
        ({k: v for k, v in good.items() if k != "prompt_id"}, "'prompt_id' is missing"),
        ({**good, "prompt": [{"role": "tool", "content": "x"}]}, "expected user, assistant or system"),
        ({**good, "prompt": [{"role": "user", "content": ""}]}, "content is missing or empty"),
        ({**good, "prompt": [{"role": "system", "content": "be nice"}]}, "no user or assistant message"),
        ({**good, "rubrics": [{"criterion": "x", "points": "five", "tags": []}]}, "expected a number"),
    ]:
        with pytest.raises(RowError, match=fragment):
            convert_healthbench_row(broken, CTX)


# --- AgentClinic --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ac_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("ac")
    return out, import_agentclinic(AC_SAMPLE, out)


def test_agentclinic_sample_converts_and_reports_failures(ac_dir) -> None:
    out, report = ac_dir
    assert report.rows == 5 and len(report.converted) == 3
    assert [f.row for f in report.failed] == [4, 5]
    assert "Correct_Diagnosis is missing" in report.failed[0].reason
    assert report.failed[1].reason.startswith("not valid JSON")
    assert [w.row for w in report.warnings] == [2] and "28 estimated from 'in her late twenties'" in \
        report.warnings[0].message
    assert sorted(p.name for p in out.glob("*.yaml")) == sorted(f"{i}.yaml" for i in report.converted)


def test_agentclinic_scenarios_content(ac_dir) -> None:
    out, report = ac_dir
    by_dx = {item.scenario.expected.diagnoses[0].name: item.scenario for item in load_dir(out)}
    assert set(by_dx) == {"Deep vein thrombosis", "Graves disease", "Community-acquired pneumonia (right lower lobe)"}
    dvt = by_dx["Deep vein thrombosis"]
    assert dvt.suite == "ddx" and dvt.id.startswith("ac_deep_vein_thrombosis_") and dvt.turn_limit == 20
    assert (dvt.patient_profile.age, dvt.patient_profile.sex) == (62, "male")
    assert dvt.chief_complaint == "Painful swollen left calf"
    assert dvt.opening_line == "I've come in because of my painful swollen left calf."
    assert dvt.expected.triage_level is None and dvt.expected.escalation is None
    assert dvt.source == "agentclinic:agentclinic_sample.jsonl#1"
    cats = {f.id.split("_")[0]: f.category.value for f in dvt.information_tree}
    assert cats["history"] == "history" and cats["pmh"] == "past_history" and cats["social"] == "social"
    assert (
        cats["exam"] == "exam"
        and cats["vital"] == "vitals"
        and cats["test"] == "test"
        and cats["symptom"] == "symptoms"
    )
    tests = {f.id: f for f in dvt.information_tree if f.id.startswith("test_")}
    # one fact per test or panel; the abnormal results are critical, a normal blood count is not
    assert sorted(tests) == ["test_clotting", "test_complete_blood_count", "test_compression_ultrasound"]
    assert tests["test_clotting"].critical and tests["test_compression_ultrasound"].critical
    assert not tests["test_complete_blood_count"].critical
    assert any("Singapore" in f.answer and f.answer.startswith("My left calf") for f in dvt.information_tree)
    ddimer = dvt.fact("test_clotting")
    assert (
        ddimer.answer == "The clotting results show: d dimer 2.8 mg/L FEU (elevated)." and "d dimer" in ddimer.triggers
    )
    assert {"test_blood", "investigations"} <= set(ddimer.intents)
    heart = next(f for f in dvt.information_tree if f.answer.startswith("On examination - heart sounds"))
    assert "listen to your heart" in heart.triggers and "examine" not in heart.triggers
    pneumonia = by_dx["Community-acquired pneumonia (right lower lobe)"]
    assert pneumonia.patient_profile.context.pediatric and pneumonia.patient_profile.age == 8
    assert "Community-acquired pneumonia" in pneumonia.expected.diagnoses[0].synonyms
    graves = by_dx["Graves disease"]
    profile = graves.patient_profile  # "Woman in her late twenties": an estimate, marked as one
    assert (profile.age, profile.age_detail, profile.sex) == (28, "in her late twenties", "female")
    assert "profile:age_approximate" in graves.tags and "profile:age_unknown" not in graves.tags
    assert graves.fact("test_thyroid_function_tests").answer.startswith("The thyroid function tests results show: TSH")


def test_every_imported_fact_revealable_by_its_first_trigger(ac_dir) -> None:
    out, _ = ac_dir
    assert_every_fact_revealable([item.scenario for item in load_dir(out)])


def test_generic_questions_do_not_reveal_everything(ac_dir) -> None:
    """An open question gets the story of the complaint, "anything else?" the other symptoms: never the
    examination, the tests or most of the case."""
    out, _ = ac_dir
    for item in load_dir(out):
        s = item.scenario
        for question in ["How are you feeling?", "Is there anything else?", "Can I order some tests?",
                         "When did the pain start and how bad is it?", "Thank you. Can you tell me more?"]:
            revealed = PatientSimulator(s).triggered_facts(question)
            assert len(revealed) <= len(s.information_tree) // 3, (
                f"{s.id}: {question!r} reveals {[f.id for f in revealed]}"
            )
            assert not {f.category.value for f in revealed} & {"exam", "test", "vitals"}, (s.id, question)
    dvt = next(i.scenario for i in load_dir(out) if i.scenario.id.startswith("ac_deep_vein"))
    story = PatientSimulator(dvt).triggered_facts("Thank you. Can you tell me more?")
    assert [f.id for f in story] == [f.id for f in dvt.information_tree if f.category.value == "history"]


async def test_agentclinic_encounters_run_to_the_diagnosis(ac_dir) -> None:
    out, _ = ac_dir
    for item in load_dir(out):
        s = item.scenario
        r = await run_encounter(s, ReferenceAgent(), TextChannel())
        assert r.termination == "assessment", (s.id, r.termination)
        assert set(r.gathered_info) == {f.id for f in s.information_tree}, s.id
        card = score_encounter(r, s)
        assert card.diagnosis is not None and card.diagnosis.top1, (s.id, r.assessment.diagnoses)
        assert card.triage is None and card.escalation is None
        assert card.composite is not None and card.information is not None and card.information.score == 1.0


def test_agentclinic_row_checks() -> None:
    good = _rows(AC_SAMPLE)[0]
    convert_agentclinic_row(good, CTX)
    osce = good["OSCE_Examination"]
    # no primary symptom: the chief complaint comes from the history (every public row must import)
    no_primary = {**osce, "Patient_Actor": {**osce["Patient_Actor"], "Symptoms": {"Secondary_Symptoms": []}}}
    converted = convert_agentclinic_row({"OSCE_Examination": no_primary}, CTX)
    assert converted.data["chief_complaint"] and "taken from the history" in " ".join(converted.warnings)
    nothing = {**osce, "Patient_Actor": {"Demographics": "40-year-old man", "Symptoms": {}}}
    for broken, fragment in [
        ({"image_url": "x", "question": "?"}, "no 'OSCE_Examination' object"),
        ({"OSCE_Examination": {**osce, "Correct_Diagnosis": " "}}, "Correct_Diagnosis is missing or empty"),
        ({"OSCE_Examination": {**osce, "Patient_Actor": "a man"}}, "Patient_Actor is missing"),
        ({"OSCE_Examination": nothing}, "no Primary_Symptom, History or Secondary_Symptoms"),
    ]:
        with pytest.raises(RowError, match=fragment):
            convert_agentclinic_row(broken, CTX)


def test_agentclinic_odd_shapes_still_give_a_valid_scenario(tmp_path: Path) -> None:
    """Real files vary: lists for strings, name/value lab rows, a string for a whole section."""
    row = {
        "OSCE_Examination": {
            "Patient_Actor": {
                "Demographics": None,
                "History": ["Fever for 2 days", {"Onset": "sudden"}],
                "Symptoms": {
                    "Primary_Symptom": ["Fever", "rash"],
                    "Secondary_Symptoms": "Fatigue, joint pain",
                    "Duration": "2 days",
                },
                "Medications": ["Ibuprofen 400 mg"],
                "Family_History": {"Mother": "Diabetes"},
                "Other": 5,
            },
            "Physical_Examination_Findings": "Unremarkable except for a maculopapular rash.",
            "Test_Results": {
                "Labs": [{"Name": "CRP", "Value": 40, "Unit": "mg/L"}, {"Test": "Sodium", "Result": "131"}],
                "ECG (Electrocardiogram)": "Sinus tachycardia",
                "Empty": None,
            },
            "Correct_Diagnosis": ["Dengue fever"],
        }
    }
    src = tmp_path / "odd.jsonl"
    src.write_text(json.dumps(row) + "\n")
    report = import_agentclinic(src, tmp_path / "out")
    assert len(report.converted) == 1 and not report.failed and len(report.warnings) == 2
    s = load_dir(tmp_path / "out")[0].scenario
    by_id = {f.id: f for f in s.information_tree}
    assert by_id["test_inflammatory_markers"].answer == "The inflammatory markers results show: crp 40 mg/L."
    assert by_id["test_kidney_function_and"].answer.endswith("sodium 131.")
    assert by_id["test_ecg"].triggers[:2] == ["ecg", "electrocardiogram"]
    assert by_id["medication_medications"].answer == "Ibuprofen 400 mg" and \
        by_id["medication_medications"].category.value == "medications"
    assert by_id["family_family_history"].answer == "Mother: Diabetes" and \
        by_id["family_family_history"].category.value == "family_history"
    assert {"symptom_fatigue", "symptom_joint_pain"} <= set(by_id)
    assert s.expected.diagnoses[0].name == "Dengue fever"


def test_agentclinic_ids_are_stable_and_content_derived() -> None:
    rows = _rows(AC_SAMPLE)[:3]
    ids = [convert_agentclinic_row(r, RowContext(line=i, file_name="a.jsonl")).data["id"] for i, r in enumerate(rows)]
    again = [
        convert_agentclinic_row(r, RowContext(line=9 - i, file_name="b.jsonl")).data["id"] for i, r in enumerate(rows)
    ]
    assert ids == again and len(set(ids)) == 3


@pytest.mark.parametrize(("text", "age", "sex", "context"), [
    ("45-year-old male", 45, "male", {}),
    ("A 72-year-old woman", 72, "female", {"geriatric": True}),
    ("6-month-old girl", 0.5, "female", {"pediatric": True}),
    ("3 week old boy", 0.06, "male", {"pediatric": True}),
    ("34 F", 34, "female", {}),
    ("50M", 50, "male", {}),
    ("28-year-old pregnant female at 32 weeks gestation", 28, "female", {"pregnancy": True}),
])
def test_parse_demographics(text: str, age: float, sex: str, context: dict) -> None:
    profile, warnings, tags = parse_demographics(text)
    assert (profile["age"], profile["sex"], profile.get("context", {})) == (age, sex, context)
    assert warnings == [] and tags == []
    if context.get("pregnancy"):
        assert profile["pregnant"] and profile["gestation_weeks"] == 32


def test_parse_demographics_defaults_with_warnings() -> None:
    profile, warnings, tags = parse_demographics("adult")
    assert (profile["age"], profile["age_detail"], profile["sex"]) == (40, "not stated", "other")
    assert len(warnings) == 2 and tags == ["profile:age_unknown", "profile:sex_unknown"]


@pytest.mark.parametrize(("source", "patient"), [
    ("The patient reports that his chest hurts.", "My chest hurts."),
    ("She has had a cough for two weeks.", "I have had a cough for two weeks."),
    ("He complains of pain when he breathes in.", "I have pain when I breathe in."),
    ("Smokes 10 cigarettes a day.", "I smoke 10 cigarettes a day."),
    ("Periods have become lighter.", "Periods have become lighter."),
    ("Retired teacher.", "Retired teacher."),
])
def test_first_person(source: str, patient: str) -> None:
    assert first_person(source) == patient


# --- files, folders, CLI ------------------------------------------------------------------------

def test_reimport_overwrites_the_same_files(tmp_path: Path) -> None:
    first = import_healthbench(HB_SAMPLE, tmp_path)
    victim = tmp_path / f"{first.converted[0]}.yaml"
    victim.write_text("stale")
    second = import_healthbench(HB_SAMPLE, tmp_path)
    assert second.converted == first.converted
    assert load_scenario(victim).scenario.id == first.converted[0]


def test_duplicate_rows_are_reported(tmp_path: Path) -> None:
    line = HB_SAMPLE.read_text().splitlines()[0]
    src = tmp_path / "dup.jsonl"
    src.write_text(f"{line}\n\n{line}\n[1, 2]\n")
    report = import_healthbench(src, tmp_path / "out")
    assert report.rows == 3 and len(report.converted) == 1
    assert [(f.row, f.reason.split(":")[0]) for f in report.failed] == [
        (3, "duplicate"),
        (4, "a JSON list where a JSON object was expected"),
    ]


@pytest.mark.parametrize(("content", "fragment"), [
    ("id: not json\ntitle: a yaml file\n", "not a JSON Lines file"),
    ("", "the file is empty"),
    ('[\n  {"prompt_id": "x"}\n]\n', "is one JSON array, not JSON Lines"),
    ('{\n  "prompt_id": "x"\n}\n', "one pretty-printed JSON object"),
])
def test_not_jsonl_is_one_clear_error(tmp_path: Path, content: str, fragment: str) -> None:
    src = tmp_path / "input.jsonl"
    src.write_text(content)
    with pytest.raises(ImportSourceError, match=fragment):
        import_healthbench(src, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_missing_source_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ImportSourceError, match="no such file"):
        import_agentclinic(tmp_path / "nope.jsonl", tmp_path / "out")


def test_cli_import_healthbench(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "healthbench", str(HB_SAMPLE), "--out", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == f"converted 3 of 5 rows into {tmp_path}"
    assert "row 4: not converted: the conversation ends with an assistant message" in captured.err
    assert "row 5: not converted:" in captured.err and "row 2: warning: system message dropped" in captured.err
    assert len(load_dir(tmp_path)) == 3


def test_cli_import_agentclinic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "new" / "folder"
    assert main(["import", "agentclinic", str(AC_SAMPLE), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == f"converted 3 of 5 rows into {out}"
    assert "row 5: not converted: not valid JSON" in captured.err
    assert len(load_dir(out)) == 3


def test_cli_import_nothing_converted_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "broken.jsonl"
    src.write_text(HB_SAMPLE.read_text().splitlines()[3] + "\n")
    assert main(["import", "healthbench", str(src), "--out", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert captured.out.strip() == f"converted 0 of 1 rows into {tmp_path / 'out'}"
    assert "row 1: not converted" in captured.err


def test_cli_import_not_jsonl_is_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "notes.txt"
    src.write_text("these are\nnot json lines\n")
    assert main(["import", "agentclinic", str(src), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "not a JSON Lines file" in err
    assert "\n" not in err and "Traceback" not in err


@pytest.mark.parametrize(("demographics", "history", "age", "detail", "sex"), [
    ("Newborn, female", "", 0, "newborn", "female"),
    ("Newborn, 3050-g (6-lb 12-oz) male, six hours post delivery", "", 0, "newborn", "male"),
    ("Newborn, born at 33 weeks of gestation", "The mother had an uneventful pregnancy.", 0, "newborn", "other"),
    ("1100-g (2-lb 7-oz) newborn, 31 weeks' gestation", "", 0, "newborn", "other"),
    ("4-day-old newborn", "The mother had no prenatal care; her pregnancy was at term.", 0.01, "4 days", "other"),
    ("9-month-old infant", "", 0.75, "9 months", "other"),
    ("2-week-old female newborn", "", 0.04, "2 weeks", "female"),
    ("23-year-old college student", "He was recently diagnosed with schizophrenia.", 23, None, "male"),
    ("3-year-old child", "She has had a cough for a week.", 3, None, "female"),
])
def test_newborns_infants_and_sex_from_the_history(demographics: str, history: str, age: float, detail: str | None,
                                                   sex: str) -> None:
    """Demographics as the public AgentClinic MedQA file writes them (the real rows' strings)."""
    profile, _warnings, _tags = parse_demographics(demographics, history)
    assert (profile["age"], profile.get("age_detail"), profile["sex"]) == (age, detail, sex)
    assert profile["context"]["pediatric"] is True if age < 18 else "pediatric" not in profile.get("context", {})


def test_every_row_of_the_public_agentclinic_file_has_a_real_age() -> None:
    from tests.public_data import MEDQA

    rows = [json.loads(line) for line in MEDQA.open()]
    unknown = [r["OSCE_Examination"]["Patient_Actor"]["Demographics"] for r in rows
               if "profile:age_unknown" in parse_demographics(r["OSCE_Examination"]["Patient_Actor"]["Demographics"],
                                                              r["OSCE_Examination"]["Patient_Actor"].get("History"))[2]]
    assert len(rows) == 107 and unknown == []
