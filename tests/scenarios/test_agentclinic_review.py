"""AgentClinic import, the clinical review's defect classes (issue 35, part 5), on rows written for these tests in
the AgentClinic OSCE shape (none of them is in the vendored public files):

- every field the patient speaks goes through the voice (no third person left by a bypass);
- abnormal findings and results are critical by general rules, normal ones are not;
- a diagnosis's standard abbreviation / expansion and qualifier-free forms are synonyms the scorer credits;
- a fact answers a question only about its topic, not for an incidental word;
- placeholders and notes to the actor make no fact;
- a patient who cannot give a history is spoken for by a relative;
- ``--labels``: a clinician's labels set the triage target, and every bad labels file is one paragraph, exit 2.
"""

from __future__ import annotations

import copy
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from scenarios import Scenario, load_dir
from scenarios.importers import RowContext, convert_agentclinic_row, read_labels
from scenarios.importers._common import read_jsonl
from scenarios.importers._labels import labelled as with_labels
from scenarios.schema import Scenario as ScenarioModel
from scorers._diagnosis import names_condition
from sim.cli import main
from sim.patient.understanding import Understanding

CTX = RowContext(line=1, file_name="review.jsonl")


def _row(actor: dict[str, Any], exam: dict[str, Any] | None = None, tests: dict[str, Any] | None = None,
         diagnosis: str = "Acute appendicitis") -> dict[str, Any]:
    return {"OSCE_Examination": {
        "Objective_for_Doctor": "Assess and diagnose the patient.",
        "Patient_Actor": actor,
        "Physical_Examination_Findings": exam or {"Vital_Signs": {"Temperature": "36.9°C (98.4°F)"}},
        "Test_Results": tests or {"Complete_Blood_Count": {"WBC": "7,200 /μL", "Hemoglobin": "13.9 g/dL"}},
        "Correct_Diagnosis": diagnosis}}


def _scenario(row: dict[str, Any]) -> Scenario:
    return _converted(json.dumps(row))


@cache
def _converted(row: str) -> Scenario:
    return ScenarioModel.model_validate(convert_agentclinic_row(json.loads(row), CTX).data)


def _answers(s: Scenario, *categories: str) -> list[str]:
    return [f.answer for f in s.information_tree if not categories or f.category.value in categories]


COPD = _row(
    {"Demographics": "67-year-old male",
     "History": "The patient reports 2 years of progressive breathlessness on exertion and a morning cough with "
                "white sputum. He has smoked 40 pack-years.",
     "Symptoms": {"Primary_Symptom": "Breathlessness on exertion",
                  "Secondary_Symptoms": ["Chronic productive cough", "Wheeze in the winter months"]},
     "Past_Medical_History": "Hypertension.",
     "Social_History": {"Smoking": "He smokes 20 cigarettes a day", "Occupation": "He worked as a coal miner"},
     "Review_of_Systems": "Denies chest pain or ankle swelling."},
    exam={"Vital_Signs": {"Temperature": "36.8°C (98.2°F)", "Heart_Rate": "88 bpm",
                          "Oxygen_Saturation": "93% on room air"},
          "Respiratory_Examination": {"Auscultation": "Scattered expiratory wheeze, prolonged expiration",
                                      "Inspection": "Hyperinflated chest"},
          "Cardiovascular_Examination": {"Heart_Sounds": "Normal S1 and S2, no murmurs, rubs or gallops"}},
    tests={"Spirometry": {"FEV1": "52% of predicted", "FEV1/FVC_Ratio": "0.58",
                          "Bronchodilator_Response": "Minimal reversibility"},
           "Electrocardiogram": {"Findings": "Normal sinus rhythm"},
           "Chest_X-Ray": {"Findings": "No consolidation or effusion"}},
    diagnosis="Chronic obstructive pulmonary disease")


# --- every field the patient speaks goes through the voice -----------------------------------------------------

THIRD = re.compile(r"\b(?:he|she|his|her|him|himself|herself|the patient|patient's)\b", re.I)


def test_fields_the_patient_speaks_are_in_the_first_person() -> None:
    row = _row({"Demographics": "54-year-old female",
                "History": "She has had pain in her right knee for 3 days.",
                "Symptoms": {"Primary_Symptom": "Swelling of her right knee",
                             "Secondary_Symptoms": ["Stiffness of her knee in the morning",
                                                    "Patient reports that she cannot climb stairs"]},
                "Social_History": {"Smoking": "She smokes 5 cigarettes a day",
                                   "Alcohol": "She drinks wine at weekends"},
                "Review_of_Systems": {"Musculoskeletal": "She denies other joint pain"}},
               diagnosis="Septic arthritis")
    s = _scenario(row)
    spoken = [s.opening_line, *_answers(s, "history", "symptoms", "social", "past_history")]
    assert not [a for a in spoken if THIRD.search(a)], spoken
    assert "I smoke 5 cigarettes a day" in " ".join(spoken)


# --- critical findings -----------------------------------------------------------------------------------------

def test_abnormal_findings_and_results_are_critical_and_normal_ones_are_not() -> None:
    s = _scenario(COPD)
    by_answer = {f.answer: f.critical for f in s.information_tree if f.category.value in ("exam", "test", "vitals")}
    critical = [a for a, c in by_answer.items() if c]
    normal = [a for a, c in by_answer.items() if not c]
    assert any("spirometry" in a for a in critical), by_answer
    assert any("oxygen saturation" in a for a in critical) and any("wheeze" in a for a in critical)
    assert any("electrocardiogram" in a for a in normal) and any("chest X-Ray" in a or "chest x ray" in a.lower()
                                                                  for a in normal)
    assert any("heart sounds" in a for a in normal) and any("temperature" in a for a in normal)


@pytest.mark.parametrize(("section", "finding", "critical"), [
    ({"Pelvic_Ultrasound": {"Findings": "Moderate free fluid in the pouch of Douglas"}}, "ultrasound", True),
    ({"Pelvic_Ultrasound": {"Findings": "Normal ovaries, no free fluid"}}, "ultrasound", False),
    ({"Serum_Potassium": "6.1 mmol/L (reference range 3.5-5.0)"}, "potassium", True),
    ({"Serum_Potassium": "4.2 mmol/L (reference range 3.5-5.0)"}, "potassium", False),
    ({"Echocardiogram": {"Ejection_Fraction": "30%"}}, "echocardiogram", True),
    ({"Troponin_I": "<0.01 ng/mL"}, "troponin", False),
])
def test_results_by_values_and_words(section: dict[str, Any], finding: str, critical: bool) -> None:
    s = _scenario(_row({"Demographics": "30-year-old female", "History": "She has lower abdominal pain.",
                        "Symptoms": {"Primary_Symptom": "Lower abdominal pain"}}, tests=section,
                       diagnosis="Ruptured ectopic pregnancy"))
    tests = [f for f in s.information_tree if f.category.value == "test" and finding in f.answer.lower()]
    assert tests and all(f.critical is critical for f in tests), [(f.answer, f.critical) for f in tests]


@pytest.mark.parametrize(("exam", "critical"), [
    ({"Ophthalmic_Examination": {"Visual_Acuity": "Count fingers at 2 feet in the left eye"}}, True),
    ({"Ophthalmic_Examination": {"Visual_Acuity": "20/200 in the left eye, 20/20 in the right"}}, True),
    ({"Ophthalmic_Examination": {"Visual_Acuity": "20/20 in both eyes"}}, False),
    ({"Abdominal_Examination": {"Auscultation": "Absent bowel sounds"}}, True),
    ({"Abdominal_Examination": {"Auscultation": "Bowel sounds present"}}, False),
    ({"Vital_Signs": {"Temperature": "39.1°C (102.4°F)"}}, True),
])
def test_examination_findings_by_values_and_words(exam: dict[str, Any], critical: bool) -> None:
    s = _scenario(_row({"Demographics": "58-year-old male", "History": "He noticed a change this morning.",
                        "Symptoms": {"Primary_Symptom": "A change this morning"}}, exam=exam,
                       diagnosis="Central retinal artery occlusion"))
    findings = [f for f in s.information_tree if f.category.value in ("exam", "vitals")]
    assert findings and all(f.critical is critical for f in findings), [(f.answer, f.critical) for f in findings]


# --- synonyms of the diagnosis -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "said"), [
    ("Chronic obstructive pulmonary disease", "COPD"),
    ("Post-traumatic stress disorder", "PTSD"),
    ("PTSD", "post-traumatic stress disorder"),
    ("Acute exacerbation of COPD", "acute exacerbation of chronic obstructive pulmonary disease"),
    ("Acute appendicitis", "appendicitis"),
    ("Deep vein thrombosis (left popliteal vein)", "DVT"),
    ("Malignant neoplasm of kidney, except pelvis", "malignant neoplasm of kidney"),
])
def test_standard_names_of_the_diagnosis_are_credited(name: str, said: str) -> None:
    d = _scenario(_row({"Demographics": "40-year-old male", "History": "He feels unwell.",
                        "Symptoms": {"Primary_Symptom": "Feeling unwell"}}, diagnosis=name)).expected.diagnoses[0]
    assert names_condition(said, [d.name, *d.synonyms]), (said, d)


def test_a_location_in_brackets_is_no_synonym() -> None:
    d = _scenario(_row({"Demographics": "40-year-old male", "History": "He has a cough.",
                        "Symptoms": {"Primary_Symptom": "Cough"}},
                       diagnosis="Community-acquired pneumonia (right lower lobe)")).expected.diagnoses[0]
    assert "right lower lobe" not in [s.lower() for s in d.synonyms] and "CAP" in d.synonyms


# --- a fact answers questions about its topic, not an incidental word -------------------------------------------

FERTILITY = _row(
    {"Demographics": "32-year-old female",
     "History": "The patient reports pelvic pain for 6 months. She and her husband have been attempting to conceive "
                "for 2 years. She noticed a small lump in her left breast last month.",
     "Symptoms": {"Primary_Symptom": "Pelvic pain", "Secondary_Symptoms": ["Recent weight loss attempt",
                                                                          "Heavy periods"]},
     "Social_History": "Works as a nurse. Enjoys cycling.",
     "Review_of_Systems": "Reports bloody discharge from the nipple."},
    tests={"Urine_Drug_Screen": {"Cocaine": "Negative", "Amphetamines": "Negative"},
           "Serology": {"Syphilis": "Negative"}},
    diagnosis="Endometriosis")


@pytest.mark.parametrize("question", [
    "Have you ever attempted suicide?", "Are you breastfeeding at the moment?", "Have you had any blood tests?",
    "Do you use cocaine?", "Have you ever had syphilis?", "Have you been feeling low in mood?"])
def test_an_unrelated_question_reveals_no_history_fact(question: str) -> None:
    s = _scenario(FERTILITY)
    revealed = [s.fact(fid) for fid in Understanding(s).match(question)]
    off = [f.answer for f in revealed if f.category.value != "test" or "test" not in question.lower()]
    assert not off, (question, off)
    _a_fact_about_the_topic_is_still_revealed()


@cache
def _a_fact_about_the_topic_is_still_revealed() -> None:
    row = copy.deepcopy(FERTILITY)
    row["OSCE_Examination"]["Patient_Actor"]["History"] += " She attempted suicide by overdose two years ago."
    s = _scenario(row)
    revealed = [s.fact(fid).answer for fid in Understanding(s).match("Have you ever attempted suicide?")]
    assert any("overdose" in a for a in revealed) and not any("conceive" in a for a in revealed), revealed
    assert any("drug screen" in s.fact(fid).answer.lower()
               for fid in Understanding(s).match("Has a urine drug screen been done?"))


# --- placeholders and notes to the actor ---------------------------------------------------------------------------

def test_placeholders_and_notes_to_the_actor_make_no_fact() -> None:
    row = _row({"Demographics": "45-year-old male",
                "History": "He has had chest pain for [insert duration]. The patient should describe the pain as "
                           "crushing. (Actor instructions: appear sweaty and anxious.) The pain radiates to his jaw.",
                "Symptoms": {"Primary_Symptom": "Chest pain", "Secondary_Symptoms": ["Sweating", "N/A"]},
                "Past_Medical_History": "To be determined",
                "Social_History": {"Smoking": "Not provided", "Alcohol": "[Insert alcohol history]"},
                "Family_History": "Unknown at this time."},
               tests={"Troponin_I": "Pending", "Electrocardiogram": {"Findings": "ST elevation in V1-V4"}},
               diagnosis="Anterior STEMI")
    s = _scenario(row)
    text = " ".join(f.answer for f in s.information_tree)
    for leftover in ("insert", "should describe", "actor", "N/A", "To be determined", "Not provided", "Pending",
                     "Unknown at this time", "[", "]"):
        assert leftover.lower() not in text.lower(), (leftover, text)
    assert "radiates to" in text and "chest pain" in text.lower()


# --- a patient who cannot give a history ------------------------------------------------------------------------

CONFUSED = _row(
    {"Demographics": "79-year-old female",
     "History": "The patient's daughter reports that her mother has become increasingly confused over 2 days. "
                "She has been drowsy and has stopped eating.",
     "Symptoms": {"Primary_Symptom": "Acute confusion", "Secondary_Symptoms": ["Drowsiness", "Poor oral intake"]},
     "Past_Medical_History": "Type 2 diabetes.", "Social_History": "Lives with her daughter."},
    exam={"Vital_Signs": {"Temperature": "38.4°C (101.1°F)", "Heart_Rate": "112 bpm"},
          "Neurological_Examination": {"Mental_Status": "Disoriented to time and place, inattentive"}},
    diagnosis="Delirium secondary to urinary tract infection")


def test_a_confused_patient_is_spoken_for_by_a_relative() -> None:
    s = _scenario(CONFUSED)
    assert s.patient_profile.speaker == "caregiver" and "voice:carer" in s.tags
    assert s.opening_line.startswith("I've brought my mother in"), s.opening_line
    spoken = _answers(s, "history", "symptoms")
    assert not [a for a in spoken if re.match(r"I(?:'ve| have| am|'m)\b", a)], spoken
    assert any(a.startswith(("She has", "My mother", "Yes, she")) for a in spoken), spoken
    # a patient alert now tells their own story, whatever happened before
    row = _row({"Demographics": "45-year-old male",
                "History": "His wife found him unconscious on the kitchen floor. He regained consciousness after a "
                           "minute without any confusion.",
                "Symptoms": {"Primary_Symptom": "Brief loss of consciousness"}},
               exam={"Neurological_Examination": {"Mental_Status": "Alert and oriented to time, place and person"}},
               diagnosis="Vasovagal syncope")
    s = _scenario(row)
    assert s.patient_profile.speaker == "patient" and "voice:carer" not in s.tags


# --- clinician labels -------------------------------------------------------------------------------------------

@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (COPD, CONFUSED)) + "\n", encoding="utf-8")
    return path


def test_clinician_labels_set_the_triage_target(source: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text("case,triage_level,escalation,disposition,rationale,labeller\n"
                      "2,2,emergency,self_present_ed,\"Delirium with fever and tachycardia, possible sepsis\",Dr X\n",
                      encoding="utf-8")
    assert main(["import", "agentclinic", str(source), "--out", str(tmp_path / "out"), "--labels", str(labels)]) == 0
    assert "labelled 1 of them" in capsys.readouterr().out
    by_speaker = {i.scenario.patient_profile.speaker: i.scenario for i in load_dir(tmp_path / "out")}
    spoken_for, plain = by_speaker["caregiver"], by_speaker["patient"]
    e = spoken_for.expected
    assert (e.triage_level, e.escalation.value, [d.value for d in e.dispositions], e.label_source) == \
        (2, "emergency", ["self_present_ed"], "clinician")
    assert "Dr X" in (e.label_rationale or "") and "labels:clinician" in spoken_for.tags
    assert plain.expected.label_source is None and plain.expected.escalation is None
    # the same label by scenario id, in YAML
    yaml_labels = tmp_path / "labels.yaml"
    yaml_labels.write_text(f"labeller: Dr Y\nlabels:\n  - case: {plain.id}\n    triage_level: 3\n"
                           "    escalation: urgent\n    rationale: Hypoxic on room air.\n", encoding="utf-8")
    convert, lines = with_labels(convert_agentclinic_row, read_labels(yaml_labels), read_jsonl(source))
    assert list(lines) == [1] and convert(COPD, CTX).data["expected"]["label_source"] == "clinician"


BAD_LABELS = [
    ("missing.yaml", None, "no such file"),
    ("bad.yaml", "labels: [case: 1, triage_level: 2\n", "not valid YAML"),
    ("bad.csv", "case,level,escalation\n1,2,urgent\n", "no column triage_level"),
    ("unknown.yaml", "labeller: Dr Z\nlabels:\n  - {case: 9, triage_level: 2, escalation: urgent, rationale: r}\n",
     "which the source file does not have"),
    ("unknown_id.yaml", "labeller: Dr Z\nlabels:\n  - {case: ac_nothing_1234, triage_level: 2, escalation: urgent, "
                        "rationale: r}\n", "which the source file does not have"),
    ("level.yaml", "labeller: Dr Z\nlabels:\n  - {case: 1, triage_level: 7, escalation: urgent, rationale: r}\n",
     "1 (most urgent) to 5"),
    ("escalation.csv", "case,triage_level,escalation,rationale,labeller\n1,2,asap,r,Dr Z\n", "escalation"),
    ("disposition.yaml", "labeller: Dr Z\nlabels:\n  - {case: 1, triage_level: 2, escalation: urgent, "
                         "disposition: ambulance, rationale: r}\n", "belongs to escalation emergency"),
    ("labeller.yaml", "labels:\n  - {case: 1, triage_level: 2, escalation: urgent, rationale: r}\n", "no labeller"),
    ("twice.yaml", "labeller: Dr Z\nlabels:\n  - {case: 1, triage_level: 2, escalation: urgent, rationale: r}\n"
                   "  - {case: 1, triage_level: 3, escalation: urgent, rationale: r}\n", "labelled twice"),
]


@pytest.mark.parametrize(("name", "content", "fragment"), BAD_LABELS, ids=[b[0] for b in BAD_LABELS])
def test_a_bad_labels_file_is_one_paragraph_and_exit_2(source: Path, tmp_path: Path, name: str, content: str | None,
                                                       fragment: str, capsys: pytest.CaptureFixture[str]) -> None:
    labels = tmp_path / name
    if content is not None:
        labels.write_text(content, encoding="utf-8")
    out = tmp_path / "out"
    assert main(["import", "agentclinic", str(source), "--out", str(out), "--labels", str(labels)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {labels}") and fragment in err, err
    assert "\n" not in err and "Traceback" not in err
    assert not out.exists()  # nothing imported
