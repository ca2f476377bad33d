"""Reading the means of care (Disposition) from assessments written as clinicians and chat models write them."""

from __future__ import annotations

import pytest

from scenarios.schema import Disposition
from sim.encounter.assessment import disposition_from, parse_assessment

# (assessment, escalation read, disposition read)
CASES: list[tuple[str, str | None, str | None]] = [
    # the protocol's optional line, enum values and words
    ("ASSESSMENT:\nTriage level: ESI 1\nEscalation: emergency\nDisposition: ambulance\nDiagnoses: 1. Anaphylaxis",
     "emergency", "ambulance"),
    ("ASSESSMENT:\nTriage level: ESI 2\nEscalation: emergency\nDisposition: self_present_ed\n"
     "Diagnoses: 1. Appendicitis",
     "emergency", "self_present_ed"),
    ("**ASSESSMENT:**\n**Triage level:** ESI 3\n**Escalation:** urgent\n**Disposition:** crisis_team\n"
     "**Diagnoses:** 1. Suicidal ideation", "urgent", "crisis_team"),
    # markdown, words a model uses
    ("## Assessment\n- **Triage:** ESI 2 (emergent)\n- **Escalation:** Emergency\n- **Disposition:** Call 999 for an "
     "ambulance now. Unlock the front door.\n- **Differential:**\n  1. Stroke", "emergency", "ambulance"),
    ("## Assessment\n- **Triage:** ESI 2\n- **Escalation:** Emergency\n- **Disposition:** Get someone to drive you "
     "to A&E straight away (an ambulance isn't needed)\n- **Diagnoses:** 1. Ectopic pregnancy",
     "emergency", "self_present_ed"),
    ("**Assessment**\n\n| Field | Value |\n|---|---|\n| ESI | 3 |\n| Escalation | Urgent |\n"
     "| Disposition | Same-day GP appointment |\n| Diagnosis | Otitis media |", "urgent", "same_day_gp"),
    ("Assessment:\nTriage level: ESI 4\nEscalation: urgent\nHow to get there: an urgent treatment centre or walk-in "
     "clinic this evening\nDiagnoses: 1. Ankle fracture", "urgent", "same_day_urgent_care"),
    ("Assessment:\nTriage level: ESI 5\nDisposition: Pharmacy First - speak to your local pharmacist today\n"
     "Diagnoses: 1. Uncomplicated cystitis", "self_care", "pharmacist"),
    ("Assessment:\nTriage level: ESI 5\nEscalation: self-care\nDiagnoses: 1. Common cold\n"
     "Advice: Rest at home, fluids and paracetamol; call back if you get short of breath.", "self_care", "self_care"),
    ("Assessment:\nTriage level: ESI 4\nEscalation: routine\nDiagnoses: 1. Mechanical back pain\n"
     "Advice: Book an appointment with your GP in the next week. If you lose bladder control, call 999.",
     "routine", "routine_gp"),
    # the means named by the escalation or the advice, when it fits the escalation given
    ("Assessment:\nTriage level: ESI 2\nEscalation: emergency - call an ambulance now\nDiagnoses: 1. STEMI",
     "emergency", "ambulance"),
    ("Assessment:\nTriage level: ESI 2\nEscalation: emergency\nDiagnoses: 1. ACS\n"
     "Advice: Have someone take you to the emergency department now. If the pain worsens on the way, call 911.",
     "emergency", "self_present_ed"),
    ("Assessment:\nTriage level: ESI 2\nEscalation: emergency\nDiagnoses: 1. ACS\n"
     "Advice: Go to the ED by ambulance.", "emergency", "ambulance"),
    # safety-netting never names the means
    ("Assessment:\nTriage level: ESI 3\nEscalation: urgent\nDiagnoses: 1. Pyelonephritis\n"
     "Advice: If you become confused or faint, call 999 immediately.", "urgent", None),
    ("Assessment:\nTriage level: ESI 2\nEscalation: emergency\nDiagnoses: 1. SAH", "emergency", None),
    # no Escalation line: the disposition's category is the escalation
    ("Assessment:\nTriage level: ESI 2\nDisposition: please call an ambulance\nDiagnoses: 1. Sepsis",
     "emergency", "ambulance"),
    ("Assessment:\nTriage level: ESI 3\nDisposition: emergency\nDiagnoses: 1. x", "emergency", None),
]


@pytest.mark.parametrize(("text", "escalation", "disposition"), CASES)
def test_disposition_is_read(text: str, escalation: str | None, disposition: str | None) -> None:
    parsed = parse_assessment(text)
    assert (parsed.escalation, parsed.disposition) == (escalation, disposition), parsed.problems


def test_a_disposition_that_contradicts_the_escalation_is_reported() -> None:
    parsed = parse_assessment("Assessment:\nTriage level: ESI 3\nEscalation: urgent\nDisposition: ambulance\n"
                              "Diagnoses: 1. x")
    assert parsed.escalation == "urgent" and parsed.disposition == "ambulance"
    assert any("disposition ambulance belongs to emergency" in p for p in parsed.problems)


@pytest.mark.parametrize("d", list(Disposition))
def test_each_disposition_reads_back_from_its_value_and_its_words(d: Disposition) -> None:
    assert disposition_from(d.value) == d.value
    assert disposition_from(d.label) == d.value
