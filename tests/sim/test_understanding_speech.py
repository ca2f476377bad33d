"""A voice agent's turn as a transcript gives it: hesitations, and no punctuation (``sim.patient._speech``).

The examples are invented here; each class fails without ``_speech``.
"""

from __future__ import annotations

import pytest

from scenarios import Scenario
from sim.patient._speech import split_run, without_disfluencies
from sim.patient.understanding import Understanding, asking_sentences

ASKING = [
    "um okay so has she had a temperature at all",
    "mm okay and uh when did the pain first start",
    "okay got it uh and do you take any medicines regularly",
    "right that sounds really scary for you is she breathing okay right now",
    "that must be really worrying for you has the rash spread anywhere",
    "you mentioned the pain started this morning and has it moved at all since then",
    "thanks for bearing with me I just need to check whether she's had any fits",
]


@pytest.mark.parametrize("turn", ASKING)
def test_an_unpunctuated_transcript_still_asks(turn: str) -> None:
    assert asking_sentences(turn)


def test_hesitations_go_but_words_that_look_like_them_stay() -> None:
    assert without_disfluencies("um so uh, has he erm been sick") == "so has he been sick"
    assert without_disfluencies("go to the ER now") == "go to the ER now"  # the emergency room is no hesitation
    assert without_disfluencies("hummus and umbrella") == "hummus and umbrella"


def test_a_run_splits_before_its_question_and_a_punctuated_sentence_never() -> None:
    assert split_run("that sounds awful for you is the pain there all the time") == [
        "that sounds awful for you", "is the pain there all the time"]
    assert split_run("That sounds awful for you is the pain there all the time.") == [
        "That sounds awful for you is the pain there all the time."]
    # a clause that a word embeds is no question of its own
    assert split_run("i know that is a lot to take in") == ["i know that is a lot to take in"]


def test_a_statement_transcript_asks_nothing(by_id: dict[str, Scenario]) -> None:
    turn = "okay so um the ambulance is on its way keep her lying down and stay on the line with me"
    assert asking_sentences(turn) == []
    assert Understanding(by_id["anaphylaxis_peanut"]).match(turn) == {}


def test_a_transcript_reveals_the_critical_fact_it_asks_for(by_id: dict[str, Scenario]) -> None:
    u = Understanding(by_id["febrile_infant_6weeks"])
    assert "fever_measured" in u.match("oh that's really worrying um has she had a temperature today")
    assert "feeding" in u.match("okay thanks uh how has she been feeding")


@pytest.mark.parametrize("turn", [
    "Any child under one with a rash that doesn't fade needs to go to A&E.",  # a rule, not "Any rash?"
    "I'm going to get an ambulance out to you now.",  # calling for help is no examination
    "um try to keep sipping water and if you can't keep anything down or get drowsy ring us back",
    "okay so don't give him any food until the crew has seen him",
])
def test_rules_dispatches_and_advice_in_a_transcript_ask_nothing(turn: str) -> None:
    assert asking_sentences(turn) == []


@pytest.mark.parametrize("scenario_id,turn,fact", [
    ("stroke_facial_droop", "is what she says making sense to you", "speech"),
    ("asthma_exacerbation_child", "is she too puffed to chat", "speech"),
    ("viral_uri", "Do you feel you're on the mend yet?", "course"),
    ("pyelonephritis", "Can you concentrate on a conversation?", "mental_state"),
    ("medication_refill_hypertension", "Have the readings been steady lately?", "home_bp"),
    ("testicular_torsion_teen", "Does one side seem higher?", "position"),
    ("suicidal_ideation_plan", "Is there something you've thought about using to end your life?", "plan"),
])
def test_everyday_wordings_reveal_their_fact(by_id: dict[str, Scenario], scenario_id: str, turn: str,
                                            fact: str) -> None:
    assert fact in Understanding(by_id[scenario_id]).match(turn)


def test_a_precondition_or_a_conditional_manoeuvre_keeps_the_request(by_id: dict[str, Scenario]) -> None:
    # what the patient needs first ("if you've got a thermometer") does not make the instruction advice
    sepsis = Understanding(by_id["sepsis_elderly"])
    assert "fever_value" in sepsis.match("If you've got a thermometer handy, check her temperature and tell me what "
                                         "it says.")
    assert asking_sentences("If you get chest pain, call 999.") == []
    # a manoeuvre spoken as a condition stays with the question about it
    chest = Understanding(by_id["dramatic_benign_chest_wall"])
    assert "reproducible" in chest.match("okay if you press right on the sore bit does that make it hurt more")


@pytest.mark.parametrize("scenario_id,turn,fact", [
    ("suicidal_ideation_plan", "Some people feeling this way start to think about not being alive. Has that ever "
     "crossed your mind?", "suicidal_thoughts"),
    ("anaphylaxis_peanut", "Do you carry an allergy pen?", "epipen"),
    ("asthma_exacerbation_child", "How much has he needed the blue pump?", "reliever_use"),
    ("anaphylaxis_peanut", "Any foods you have to steer clear of?", "known_allergy"),
])
def test_a_thought_that_crossed_the_mind_pens_pumps_and_foods_to_avoid(by_id: dict[str, Scenario], scenario_id: str,
                                                                       turn: str, fact: str) -> None:
    assert fact in Understanding(by_id[scenario_id]).match(turn)
