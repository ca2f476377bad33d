"""The patient's understanding: the question filter, word forms, the intent layer, and layer records.

Each issue example is checked twice: the patient as it was (triggers on the whole message) gets it
wrong, and the patient as it is gets it right, so these tests fail without the fix.
"""

from __future__ import annotations

import pytest

from scenarios import Scenario
from sim.patient import PatientSimulator
from sim.patient.understanding import Layers, Understanding, asking_sentences, normalise, sentences, speech_act

OLD = Layers(triggers=True, intents=False, question_filter=False)


@pytest.mark.parametrize("scenario_id, message", [
    ("acs_chest_pain", "I'm going to ask about your family later."),
    ("acs_chest_pain", "Smoking is a risk factor I'll come back to."),
    ("suicidal_ideation_plan", "I want to make a plan with you to get some sleep."),
    ("suicidal_ideation_plan", "We'll talk about your medicines and your drinking in a minute."),
    ("geriatric_fall_anticoagulant", "Blood thinners can make a head injury bleed, which is why I asked."),
])
def test_statements_reveal_nothing(by_id: dict[str, Scenario], scenario_id: str, message: str) -> None:
    scenario = by_id[scenario_id]
    unfiltered = Layers(triggers=True, intents=True, question_filter=False)
    assert Understanding(scenario, layers=unfiltered).match(message)  # the words alone would reveal facts
    assert Understanding(scenario).match(message) == {}
    text, revealed = PatientSimulator(scenario).reply(message)
    assert revealed == [] and text in scenario.fallback_lines


@pytest.mark.parametrize("scenario_id, message, fact", [
    ("acs_chest_pain", "Does the pressure go anywhere else?", "radiation"),
    ("acs_chest_pain", "What were you doing when it came on?", "onset_exertion"),
    ("sepsis_elderly", "Does she know where she is?", "confusion"),
    ("sepsis_elderly", "Do you have a BP reading?", "blood_pressure"),
    ("suicidal_ideation_plan", "Have you ever hurt yourself before?", "previous_attempt"),
    ("anaphylaxis_peanut", "Any dizziness?", "dizziness"),
    ("acs_chest_pain", "Any breathlessness?", "breathless"),
    ("pyelonephritis", "Have you felt lightheaded at all?", "dizziness"),
])
def test_natural_questions_reveal_their_fact(by_id: dict[str, Scenario], scenario_id: str, message: str,
                                            fact: str) -> None:
    found = Understanding(by_id[scenario_id]).match(message)
    assert fact in found, found


def test_issue_questions_were_missed_before(by_id: dict[str, Scenario]) -> None:
    old = Understanding(by_id["acs_chest_pain"], layers=OLD)
    assert "radiation" not in old.match("Does the pressure go anywhere else?")


def test_word_forms_are_linked() -> None:
    for a, b in [("dizziness", "dizzy"), ("lightheadedness", "lightheaded"), ("breathlessness", "breathless"),
                 ("drowsiness", "drowsy"), ("confusion", "confused"), ("severity", "severe"),
                 ("vomiting", "vomit"), ("allergies", "allergic")]:
        assert normalise(a) == normalise(b), (a, b)


@pytest.mark.parametrize("sentence, act", [
    ("Any fever?", "question"),
    ("Any fever.", "question"),
    ("Did you fall", "question"),
    ("Tell me about the pain.", "request"),
    ("Please describe the pain.", "request"),
    ("Check her temperature for me, please.", "request"),
    ("I'd like to know whether you take any blood thinners.", "request"),
    ("Walk me through what happened.", "request"),
    ("Let me know what medicines you take.", "request"),
    ("Let me know if the pain gets worse.", "statement"),
    ("I'll ask about your medications in a moment.", "statement"),
    ("We can come back to your family history.", "statement"),
    ("Call 999 if the bleeding gets heavier.", "statement"),
    ("When you get to hospital, show them your tablets.", "statement"),
    ("Chest pain like this can come from the heart.", "statement"),
    ("What to watch for:", "statement"),
    ("Thanks, that's helpful.", "statement"),
])
def test_speech_acts(sentence: str, act: str) -> None:
    assert speech_act(sentence) == act


def test_markdown_messages_split_into_questions() -> None:
    msg = ("Thanks for telling me. **A few quick questions:**\n\n1. When did it start?\n2. **Does it go anywhere "
           "else?**\n- Any sweating\n\nI'll ask about your family later.")
    assert sentences(msg)[-1] == "I'll ask about your family later."
    asked = asking_sentences(msg)
    assert any("When did it start?" in s for s in asked)
    assert "Does it go anywhere else?" in asked and "Any sweating" in asked
    assert not any("family" in s for s in asked)


def test_topic_lead_in_is_read_with_the_question(by_id: dict[str, Scenario]) -> None:
    found = Understanding(by_id["acs_chest_pain"]).match("Now, your family. Has anyone had heart trouble?")
    assert "family_history" in found


def test_revealed_facts_record_their_layer(by_id: dict[str, Scenario]) -> None:
    s = by_id["acs_chest_pain"]
    p = PatientSimulator(s)
    r = p.respond("Do you smoke? Does the pressure go anywhere else?")
    assert r.revealed_by["smoking"] == "trigger"
    assert r.revealed_by["radiation"] == "intent"
    r2 = p.respond("Hmm, okay.", model_ids=["allergies", "not_a_fact"])
    assert r2.revealed == ["allergies"] and r2.revealed_by == {"allergies": "model"}
    assert p.revealed_by == {"radiation": "intent", "smoking": "trigger", "allergies": "model"}
