"""What an imported case says, and of whom: the age and sex as vignettes really write them, the case in the words
of the patient (or a child's parent) with the verbs agreeing, no study notes or footnote markers in what the
agent or the patient sees. Every case text here is written for these tests."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scenarios import load_dir
from scenarios.importers import case_in_first_person, first_person, import_vignettes, parse_demographics
from scenarios.importers._voice import carer_voice, patient_words

JSONL_MAP = "case=case,diagnosis=dx,urgency=u"
URGENCY = "em=emergency,ne=routine+urgent,sc=self_care"
# "I has", "I reports", "I is": a verb that did not agree with I
DISAGREES = re.compile(r"\bI (?:(?:also|still|never|now|then|just|often) )?(?:has|is|does|hasn't|isn't|doesn't|"
                       r"(?!always\b|sometimes\b|perhaps\b|was\b)[a-z]{2,}[^su\W']s)\b")


def _import(tmp_path: Path, rows: list[dict[str, str]], mode: str = "single-turn", mapping: str = JSONL_MAP):
    src = tmp_path / f"cases-{mode}.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / f"out-{mode}"
    report = import_vignettes(src, out, mapping=mapping, urgency_map=URGENCY, mode=mode)
    assert not report.failed, report.failed
    by_line = {int(i.scenario.source.rsplit("#", 1)[1]): i.scenario for i in load_dir(out)}  # type: ignore[union-attr]
    return report, [by_line[k] for k in sorted(by_line)]


# --- age and sex --------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "age", "detail", "sex"), [
    ("A 49 y.o. gentleman with a cough", 49, None, "male"),
    ("F, 49 y.o.", 49, None, "female"),
    ("retired plumber, aged 77 and living alone", 77, None, "other"),
    ("age 31 (female)", 31, None, "female"),
    ("F, 31", 31, None, "female"),
    ("M 83", 83, None, "male"),
    ("F/26", 26, None, "female"),
    ("A forty-three-year-old lady", 43, None, "female"),
    ("14-month-old girl", 1.17, "14 months", "female"),
    ("a 20 month old", 1.67, "20 months", "other"),
    ("9-week-old boy", 0.17, "9 weeks", "male"),
    ("an infant 5 days old", 0.01, "5 days", "other"),
    ("a 10-day-old baby girl", 0.03, "10 days", "female"),
    ("a woman in her late fifties", 58, "in her late fifties", "female"),
    ("an adolescent boy", 15, "adolescent", "male"),
    ("A 3 and a half year old", 3.5, None, "other"),
    ("14 months", 1.17, "14 months", "other"),
    ("Mr Okafor, 66 yo", 66, None, "male"),
    ("58 y/o with a temperature of 101 F", 58, None, "other"),  # a temperature is no sex letter
])
def test_age_and_sex_as_vignettes_write_them(text: str, age: float, detail: str | None, sex: str) -> None:
    profile, _warnings, tags = parse_demographics(text)
    assert (profile["age"], profile.get("age_detail"), profile["sex"]) == (age, detail, sex)
    assert "profile:age_unknown" not in tags
    assert ("profile:age_approximate" in tags) == (detail is not None and not detail[0].isdigit()
                                                   and detail != "newborn")


@pytest.mark.parametrize("text", ["adult with a 3-day history of cough", "a patient on 2 tablets a day",
                                  "presents 2 weeks after surgery"])
def test_an_age_not_stated_is_marked_not_guessed(text: str) -> None:
    profile, warnings, tags = parse_demographics(text)
    assert profile["age_detail"] == "not stated" and "profile:age_unknown" in tags
    assert any("not stated" in w and "placeholder" in w for w in warnings)


def test_ages_reach_the_profile_and_the_agent(tmp_path: Path) -> None:
    rows = [
        {"case": "Mr. Okafor is a 66 yo taxi driver who presents with palpitations since lunchtime. He feels faint "
                 "when he stands.", "dx": "Atrial fibrillation", "u": "em"},
        {"case": "A 20-month-old girl presents with a rash on her cheeks and a fever.", "dx": "Slapped cheek",
         "u": "sc"},
        {"case": "Woke at 3 am with a swollen, hot big toe. He had a large meal with beer last night.", "dx": "Gout",
         "u": "ne"},
        {"case": "81F, lives alone, with a fall at home this morning and pain in her left hip.", "dx": "Hip fracture",
         "u": "em"},
        {"case": "Ms. B is a 38 year-old woman who presents with a swollen calf. Ms. B flew home from Perth last week.",
         "dx": "Deep vein thrombosis", "u": "em"},
    ]
    report, (af, rash, gout, hip, calf) = _import(tmp_path, rows)
    assert (af.patient_profile.age, af.patient_profile.sex) == (66, "male")
    assert af.replay is not None and af.replay[0].content.startswith("I'm a 66 yo taxi driver and I have palpitations")
    assert (rash.patient_profile.age, rash.patient_profile.age_detail) == (1.67, "20 months")
    assert rash.patient_profile.speaker == "parent" and rash.replay is not None
    assert rash.replay[0].content.startswith("My 20-month-old girl has a rash on her cheeks")
    assert (hip.patient_profile.age, hip.patient_profile.sex) == (81, "female")
    assert hip.opening_line.startswith("I'm an 81-year-old woman and I live alone, with a fall at home")
    assert calf.replay is not None and calf.replay[0].content == (  # a one-letter name is not the article "a"
        "I'm a 38 year-old woman and I have a swollen calf. I flew home from Perth last week.")
    # no age anywhere in the case: not silently 40, marked and reported
    assert gout.patient_profile.age_detail == "not stated" and "profile:age_unknown" in gout.tags
    assert any(w.row == 3 and "not stated" in w.message for w in report.warnings)


def test_an_encounter_opening_says_who_is_asking(tmp_path: Path) -> None:
    rows = [{"case": "A 34-year-old woman presents with a sore throat. She has a fever.", "dx": "Tonsillitis",
             "u": "sc", "cc": "sore throat"},
            {"case": "A 14-month-old boy presents with a barking cough. He is drinking.", "dx": "Croup", "u": "ne",
             "cc": "barking cough"}]
    _report, (adult, child) = _import(tmp_path, rows, "encounter", f"{JSONL_MAP},complaint=cc")
    assert adult.opening_line == "I'm a 34-year-old woman. I'd like some advice about my sore throat."
    assert child.opening_line == "I'd like some advice about my 14-month-old boy: barking cough."


# --- the first person -----------------------------------------------------------------------------

@pytest.mark.parametrize(("written", "spoken"), [
    ("She is diabetic, takes insulin and has had two hypos this week.",
     "I am diabetic, take insulin and have had two hypos this week."),
    ("He catches his breath after a flight of stairs and wakes at night gasping.",
     "I catch my breath after a flight of stairs and wake at night gasping."),
    ("The dog bit him on the forearm and he washed it himself.",
     "The dog bit me on the forearm and I washed it myself."),
    ("She doesn't use her inhaler because it makes her shaky.", "I don't use my inhaler because it makes me shaky."),
    ("He's been coughing since he caught a cold from his grandson.",
     "I've been coughing since I caught a cold from my grandson."),
    ("Patient states her ankle gave way on the stairs.", "My ankle gave way on the stairs."),
    ("He denies blood in his stools.", "I haven't had any blood in my stools."),
    ("She reports two episodes of vomiting.", "I've had two episodes of vomiting."),
    ("He notes a lump in his groin that aches when he lifts.",
     "I've noticed a lump in my groin that aches when I lift."),
    ("Her husband noticed she was slurring her words.", "My husband noticed I was slurring my words."),
    ("Her sister had the same rash when she was a child.", "My sister had the same rash when she was a child."),
    ("He has a rash that itches and is spreading.", "I have a rash that itches and is spreading."),
    ("The pain eases when he sits forward and is worse lying flat.",
     "The pain eases when I sit forward and is worse lying flat."),
    ("Takes ramipril and walks his dog daily.", "I take ramipril and walk my dog daily."),
    ("Patient is a smoker and drinks most evenings.", "I am a smoker and drink most evenings."),
    ("Her GP told her that her thyroid was low.", "My GP told me that my thyroid was low."),
    ("The fever affected her badly, so her family called her 111.", "The fever affected me badly, so my family called "
     "me 111."),
    ("She denies smoking or drinking and is breastfeeding her 2-week-old son.",
     "I haven't been smoking or drinking and am breastfeeding my 2-week-old son."),
    ("He denies vomiting, fever or rigors.", "I haven't had any vomiting, fever or rigors."),
])
def test_third_person_becomes_the_patients_words(written: str, spoken: str) -> None:
    assert first_person(written) == spoken
    assert patient_words(written) == spoken  # the AgentClinic importer's words are the same rules


def test_a_whole_case_has_no_third_person_left_and_every_verb_agrees() -> None:
    case = ("A 52-year-old woman presents with three days of pain on passing urine. She has had a fever since "
            "yesterday and feels shivery. She describes the pain as burning and notes that her urine smells strong. "
            "Her partner says she has been more tired than usual. She denies any back pain but has vomited once. "
            "She takes no regular medicines and is allergic to trimethoprim, which gave her a rash.")
    message, who, parent = case_in_first_person(case)
    assert (who, parent) == ("52-year-old woman", False)
    assert not re.search(r"\b(?:she|her|hers|herself)\b", message, re.I), message
    assert not DISAGREES.search(message), message
    assert "I have had a fever since yesterday and feel shivery." in message
    assert "My partner says I have been more tired than usual." in message
    assert "I haven't had any back pain but have vomited once." in message
    assert "gave me a rash" in message


def test_a_childs_case_is_the_parents_words() -> None:
    case = ("A 7-month-old boy is brought in by his mother with a cough and fast breathing. The infant is feeding "
            "less than usual. His mother reports that he has had three wet nappies today. Both parents smoke.")
    message, who, parent = case_in_first_person(case)
    assert parent and who == "7-month-old boy"
    assert message == ("My 7-month-old boy has a cough and fast breathing. My son is feeding less than usual. He has "
                       "had three wet nappies today. We both smoke.")
    named = ("Tomasz's 5-year-old daughter has had earache since last night. Tomasz says he gave her paracetamol, "
             "and he thinks she is pulling at her ear.")
    message, who, parent = case_in_first_person(named)
    assert parent and who == "5-year-old daughter"
    assert message == ("My 5-year-old daughter has had earache since last night. I gave her paracetamol, and I "
                       "think she is pulling at her ear.")
    assert carer_voice("The toddler has a temperature and the child's mother says she is sleepy.", "daughter") == \
        "My daughter has a temperature and my daughter's mother says she is sleepy."


def test_imported_answers_have_no_i_has(tmp_path: Path) -> None:
    rows = [{"case": "A 61-year-old man presents with black stools for two days. He takes aspirin and ibuprofen, "
                     "drinks most nights and feels dizzy when he stands. He has lost weight and is pale. His wife "
                     "says he looks grey. On examination he is sweaty and his pulse is 118.", "dx": "Upper GI bleed",
             "u": "em"}]
    for mode in ("single-turn", "encounter"):
        _report, (bleed,) = _import(tmp_path, rows, mode)
        texts = [bleed.opening_line, *(f.answer for f in bleed.information_tree)]  # the examination finding too
        texts += [m.content for m in bleed.replay or []]
        for text in texts:
            assert not DISAGREES.search(text), text
            assert not re.search(r"\b(?:he|his|him)\b", text), text


# --- notes and footnotes --------------------------------------------------------------------------

def test_study_notes_are_kept_from_the_agent_and_kept_as_metadata(tmp_path: Path) -> None:
    rows = [
        {"case": "A 45-year-old man presents with a painful red eye and blurred vision since this morning. His "
                 "oxygen saturation is 98% and his temperature is 37.1 (normal). (62% of GPs in the survey chose "
                 "a same-day eye clinic.)", "dx": "Acute angle-closure glaucoma", "u": "em"},
        {"case": "A 23-year-old woman presents with a sore throat for four days [3]. She has no cough. Teaching "
                 "point: the Centor criteria. What is the most likely diagnosis?", "dx": "Tonsillitis", "u": "sc"},
    ]
    for mode in ("single-turn", "encounter"):
        report, (eye, throat) = _import(tmp_path, rows, mode)
        for s in (eye, throat):
            seen = " ".join([s.opening_line, *(m.content for m in s.replay or []),
                             *(f.answer for f in s.information_tree)])
            assert not re.search(r"survey|62%|Teaching|Centor|most likely|\[3\]", seen), seen
            assert "vignette:source_notes" in s.tags
        assert "62% of GPs in the survey chose a same-day eye clinic." in (eye.expected.label_rationale or "")
        assert "Teaching point" in (throat.expected.label_rationale or "")
        assert sum("left out of the case text" in w.message for w in report.warnings) == 2
    assert eye.replay is None and "98%" in " ".join(f.answer for f in eye.information_tree)  # clinical numbers stay
    assert "(normal)" in " ".join(f.answer for f in eye.information_tree)


@pytest.mark.parametrize(("written", "name"), [
    ("Pyelonephritis3", "Pyelonephritis"), ("Gout\u2020", "Gout"), ("Migraine [2]", "Migraine"),
    ("Bell's palsy (1)", "Bell's palsy"), ("Otitis externa\u00b2", "Otitis externa"),
    ("Type 2 diabetes", "Type 2 diabetes"), ("COVID-19", "COVID-19"), ("H1N1 influenza", "H1N1 influenza"),
    ("Vitamin B12 deficiency", "Vitamin B12 deficiency"), ("IgG4-related disease", "IgG4-related disease"),
    ("Trisomy 21", "Trisomy 21"), ("Parvovirus B19 infection", "Parvovirus B19 infection"),
])
def test_footnote_markers_leave_diagnosis_names(tmp_path: Path, written: str, name: str) -> None:
    case = "Mrs. Adeyemi 2is a 40-year-old woman who presents with a headache. She feels sick."
    _report, (s,) = _import(tmp_path, [{"case": case, "dx": written, "u": "ne"}])
    assert s.expected.diagnoses[0].name == name
    assert s.replay is not None and s.replay[0].content == "I'm a 40-year-old woman and I have a headache. I feel sick."
