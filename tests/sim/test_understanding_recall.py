"""Issue 35 §2: the patient understands natural questions for critical facts, by class.

Each example is invented (none comes from the bench sets) and fails without the change it covers.
"""

from __future__ import annotations

from scenarios import Scenario
from sim.patient.understanding import Understanding, asking_sentences, speech_act

# --------------------------------------------------------------------------- lists and lead-ins


def test_a_list_item_asks_with_the_lead_in_it_hangs_from(by_id: dict[str, Scenario]) -> None:
    sah = Understanding(by_id["subarachnoid_thunderclap"])
    assert "neck_light" in sah.match("Can you tell me:\n- how long it has lasted\n- whether bright lights bother you")
    refill = Understanding(by_id["medication_refill_hypertension"])
    assert "current_meds" in refill.match("I need a couple of details first:\n1. the tablets you take\n2. your GP")
    # an item that asks for itself is still read on its own
    assert "Any rash?" in asking_sentences("Can you tell me:\n- Any rash?\n- whether she is drinking")


def test_a_list_under_a_statement_heading_asks_nothing(by_id: dict[str, Scenario]) -> None:
    message = "Things to mention to the paramedics:\n- any trouble with her breathing\n- any new blotchy skin"
    assert asking_sentences(message) == []
    assert Understanding(by_id["sepsis_elderly"]).match(message) == {}
    # a question mark still asks, whatever the heading
    assert asking_sentences("Things I'd like to know:\n- Is she breathing fast?") == ["Is she breathing fast?"]


def test_a_question_that_refers_back_is_read_with_the_statement_before_it(by_id: dict[str, Scenario]) -> None:
    u = Understanding(by_id["suicidal_ideation_plan"])
    message = "A lot of people under this much strain wish they could go to sleep and not wake up. Felt like that?"
    assert "suicidal_thoughts" in u.match(message)
    # a deferral is never read with the question after it
    assert "suicidal_thoughts" not in u.match("We'll come back to dark thoughts later. Anything like that at work?")


def test_what_you_have_said_opens_a_statement_not_a_question() -> None:
    assert speech_act("What you've told me helps, and I want you to be safe tonight.") == "statement"
    assert speech_act("What you said earlier is important") == "statement"
    assert speech_act("What have you taken today") == "question"
