from __future__ import annotations

import pytest

from sim.encounter.assessment import is_assessment, parse_assessment


@pytest.mark.parametrize("text", [
    "ASSESSMENT: ESI 2",
    "Assessment - go to the ER",
    "  my assessment: this is serious",
    "Thanks for answering.\nMy Assessment:\nTriage level: ESI 3",
    "assessment:",
    "\tAssessment -",
    "**Assessment:** ESI 2",                    # markdown around the label: read with the markdown removed
])
def test_termination_regex_matches(text: str) -> None:
    assert is_assessment(text)


@pytest.mark.parametrize("text", [
    "I will give my assessment: soon",          # not at the start of a line
    "Reassessment: tomorrow",                   # another word
    "Assessment is pending",                    # no ':' or '-'
    "Can you describe the pain?",
])
def test_termination_regex_rejects(text: str) -> None:
    assert not is_assessment(text)


def test_parse_full_block() -> None:
    p = parse_assessment("Thank you.\n\nASSESSMENT:\nTriage level: ESI 2\nEscalation: emergency - call 911\n"
                         "Diagnoses: 1. Acute coronary syndrome; 2. Aortic dissection; 3. Pulmonary embolism\n"
                         "Advice: call an ambulance")
    assert (p.triage_level, p.escalation) == (2, "emergency")
    assert p.diagnoses == ["Acute coronary syndrome", "Aortic dissection", "Pulmonary embolism"]
    assert p.problems == []


def test_parse_list_diagnoses_and_field_priority() -> None:
    p = parse_assessment("Assessment:\nCTAS level 4\nEscalation: urgent (not an emergency)\n"
                         "Differential:\n1. Cystitis\n2. Pyelonephritis\n\nTake care")
    assert p.triage_level == 4 and p.escalation == "urgent"
    assert p.diagnoses == ["Cystitis", "Pyelonephritis"]


def test_parse_failures_are_explained() -> None:
    p = parse_assessment("Assessment: you are probably fine")
    assert p.triage_level is None and p.escalation is None and p.diagnoses == []
    assert any("triage level" in x for x in p.problems)
    assert any("escalation" in x for x in p.problems)
    amb = parse_assessment("Assessment: ESI 3. Could be an emergency, or routine follow-up.")
    assert amb.escalation is None and any("ambiguous" in x for x in amb.problems)
    none = parse_assessment("I think you should rest.")
    assert none.problems == ["no line beginning 'Assessment:' in the reply"]


def test_conflicting_levels_use_first_and_say_so() -> None:
    p = parse_assessment("Assessment:\nTriage level: ESI 2, maybe level 3\nEscalation: emergency\nDiagnoses: MI")
    assert p.triage_level == 2 and any("several triage levels" in x for x in p.problems)


@pytest.mark.parametrize(("listed", "read"), [
    ("1. ACS (ruled out)\n2. Musculoskeletal chest wall pain", ["Musculoskeletal chest wall pain"]),
    ("1. Acute coronary syndrome - ruled out by the history\n2. Costochondritis", ["Costochondritis"]),
    ("- Excluded: pulmonary embolism\n- Viral pleurisy", ["Viral pleurisy"]),
    ("1. No pneumothorax\n2. Pectoral muscle strain", ["Pectoral muscle strain"]),
    ("1. Not consistent with appendicitis\n2. Mesenteric adenitis", ["Mesenteric adenitis"]),
    # still to be excluded: on the differential
    ("1. Pulmonary embolism (must be excluded)\n2. Pneumonia", ["Pulmonary embolism", "Pneumonia"]),
    ("1. Ectopic pregnancy - needs excluding\n2. Miscarriage", ["Ectopic pregnancy", "Miscarriage"]),
    ("1. Non-cardiac chest pain\n2. ACS (not excluded)", ["Non-cardiac chest pain", "ACS"]),
])
def test_a_ruled_out_diagnosis_leaves_the_differential(listed: str, read: list[str]) -> None:
    parsed = parse_assessment(f"ASSESSMENT:\nTriage level: ESI 3\nEscalation: urgent\nDiagnoses:\n{listed}\n")
    assert parsed.diagnoses == read


def test_a_comma_inside_a_diagnosis_name_does_not_split_it() -> None:
    """"Hand, foot and mouth disease" is one condition: where semicolons or numbers separate the names a comma
    is part of one, and in a comma list the "X, Y and Z disease" form is rejoined."""
    from sim.encounter.assessment import parse_assessment

    for reply in ("ASSESSMENT:\nEscalation: routine\nDiagnoses: Hand, foot and mouth disease; Herpangina",
                  "ASSESSMENT:\nEscalation: routine\nDiagnoses: 1. Hand, foot and mouth disease 2. Herpangina",
                  "ASSESSMENT:\nEscalation: routine\nDiagnoses: 1. Hand, foot and mouth disease; Herpangina",
                  "ASSESSMENT:\nEscalation: routine\nDiagnoses: Hand, foot and mouth disease, herpangina"):
        assert [d.lower() for d in parse_assessment(reply).diagnoses] == ["hand, foot and mouth disease",
                                                                          "herpangina"], reply
    single = parse_assessment("ASSESSMENT:\nEscalation: routine\nDiagnoses: 1. Hand, foot and mouth disease")
    assert single.diagnoses == ["Hand, foot and mouth disease"]
    plain = parse_assessment("ASSESSMENT:\nEscalation: urgent\nDiagnoses: Sepsis, pneumonia and UTI, meningitis")
    assert plain.diagnoses == ["Sepsis", "pneumonia and UTI", "meningitis"]
