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


# ------------------------------------------------------------------ issue 35 part 2: the last misunderstood questions


@pytest.mark.parametrize("sentence", [
    "Ask him to smile for me.",
    "Please send a photo of the rash.",
    "Wiggle your toes for me.",
    "I'd like you to press where it hurts and tell me if it's sore.",
    "Try standing on your tiptoes and tell me if your legs feel weak.",
    "Get her to blow into the peak flow meter.",
    "Face: ask him to show you his teeth.",
    "Pop the cuff on her arm and read me the numbers.",
])
def test_an_instruction_to_examine_or_observe_is_a_request(sentence: str) -> None:
    assert speech_act(sentence) == "request"


@pytest.mark.parametrize("sentence", [
    "Check his sugar again in an hour and ring back if it's still high.",
    "Look out for a rash that doesn't fade under a glass.",
    "Have her sit upright while you wait for the ambulance.",
    "Count the kicks over the next few hours and call the unit if they slow down.",
])
def test_advice_is_a_statement_however_it_opens(sentence: str) -> None:
    assert speech_act(sentence) == "statement"


def test_a_list_of_advice_asks_nothing_but_a_list_of_questions_does() -> None:
    advice = "Call 999 straight away if you notice:\n- Any blue lips\n- Any pauses in his breathing\n- He won't wake"
    assert asking_sentences(advice) == []
    assert asking_sentences("**Warning signs:**\n1. any new rash\n2. any vomiting") == []
    questions = "Can I check a few things:\n1. Any blue lips?\n2. Any pauses in his breathing"
    assert {"Any blue lips?", "Any pauses in his breathing"} <= set(asking_sentences(questions))
    before_you_go = "Before you go to A&E, I need to ask a few things:\n- any allergies\n- any chest pain"
    assert {"any allergies", "any chest pain"} <= set(asking_sentences(before_you_go))


@pytest.mark.parametrize("scenario_id, message, fact", [
    ("stroke_facial_droop", "Please get him to say his address back to you.", "speech"),
    ("ankle_sprain", "Move your toes about for me and tell me whether they're pink.", "circulation"),
    ("img_lyme_rash_photo", "Please upload a picture of the mark.", "rash_photo"),
    ("sepsis_elderly", "Put the cuff on her arm and read me what the machine says.", "blood_pressure"),
    ("ankle_sprain", "Press on the knobbly bone on the outside. Does that hurt?", "bone_tenderness"),
])
def test_an_examination_request_reveals_its_finding(by_id: dict[str, Scenario], scenario_id: str, message: str,
                                                    fact: str) -> None:
    assert fact in Understanding(by_id[scenario_id]).match(message)


@pytest.mark.parametrize("scenario_id, message, fact", [
    ("ankle_sprain", "Are you able to get around on that ankle?", "weight_bearing"),
    ("febrile_infant_6weeks", "Did you get a reading of how warm she was?", "fever_measured"),
    ("anaphylaxis_peanut", "Is it hard to gulp?", "throat"),
    ("gi_bleed_melena", "Do you struggle to get food down?", "weight_swallowing"),
    ("simple_uti", "Any chance you're expecting?", "pregnancy"),
    ("subarachnoid_thunderclap", "Anything strange in your arms or legs?", "neuro"),
    ("mechanical_low_back_pain", "Have your knees been giving way?", "leg_symptoms"),
])
def test_everyday_paraphrases_reveal_their_fact(by_id: dict[str, Scenario], scenario_id: str, message: str,
                                               fact: str) -> None:
    assert fact in Understanding(by_id[scenario_id]).match(message)


@pytest.mark.parametrize("scenario_id, message, fact", [
    ("asthma_exacerbation_child", "What have her flare-ups been like in the past?", "previous_admissions"),
    ("migraine_known", "Is this attack like the ones you normally get?", "typical_pattern"),
    ("testicular_torsion_teen", "Any trouble down there previously?", "previous_episodes"),
    ("anaphylaxis_peanut", "Has this ever happened to you before?", "known_allergy"),
])
def test_history_asked_as_a_pattern_reveals_the_past_episodes(by_id: dict[str, Scenario], scenario_id: str,
                                                               message: str, fact: str) -> None:
    assert fact in Understanding(by_id[scenario_id]).match(message)


def test_each_item_of_a_bundled_question_is_understood_on_its_own(by_id: dict[str, Scenario]) -> None:
    def match(scenario_id: str, message: str) -> set[str]:
        return set(Understanding(by_id[scenario_id]).match(message))

    # "drinking" vetoes a hot drink, not the fever of the third item
    assert {"breathing", "fluids", "fever"} <= match("sepsis_elderly", "How's her breathing, is she drinking, and "
                                                                       "does she feel hot?")
    assert {"recent_surgery", "heart_rate"} <= match("pulmonary_embolism_postop",
                                                     "Did you have surgery recently / is your heart racing?")
    assert {"medications", "allergies"} <= match("appendicitis", "Any tablets at the moment, and are you allergic to "
                                                                 "any tablets?")
    # an item that continues a list, or asks about what was named before, keeps the sentence's context
    assert "mechanism" not in match("mechanical_low_back_pain", "Any problems with your bladder or bowels, like "
                                                                "trouble going, or any accidents?")
    assert "skin_rash" not in match("febrile_infant_6weeks", "Are her eyes sore, or are they itchy?")


def test_what_a_question_sets_aside_is_not_asked_for(by_id: dict[str, Scenario]) -> None:
    message = "Apart from the panic attacks, any long-term conditions?"
    found = Understanding(by_id["anxious_patient_real_mi"]).match(message)
    assert "risk_factors" in found and "different_from_panic" not in found
