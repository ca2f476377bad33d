"""Issue 40: a question or request that introduces a list asks about every item; a statement over a list asks nothing.

Each example is invented (none comes from the bench sets or from the issue's text).
"""

from __future__ import annotations

import pytest

from scenarios import Scenario
from sim.patient._wh import declarative_wh
from sim.patient.understanding import Understanding

APPENDIX = ("migration", "movement_pain", "appetite_nausea", "fever")
LEAD_INS = {
    "bullets": "Have you had any of these since it started?\n- the pain moving from your belly button to the right\n"
               "* pain when you walk or go over bumps\n\u2022 not wanting food or being sick\n- a temperature",
    "numbered": "I'm sorry you're in so much pain. Do you have any of the following?\n\n1. **Pain that has moved** "
                "from the middle to the lower right\n2) Pain that's worse walking or jolting\n(c) Loss of appetite "
                "or vomiting\n4. A high temperature\n\nTake your time.",
    "colon_comma": "Any of the following: pain that moved down to the right side, walking making it worse, going off "
                   "your food or throwing up, a fever?",
    "such_as": "Have you noticed anything else, such as the pain shifting from your belly button, it hurting more when "
               "you walk, not feeling like eating or vomiting, or running a temperature?",
    "split_lines": "Is there any of these:\npain that started by the belly button and moved,\nhurting when you walk,\n"
                   "being sick or off your food,\na fever?",
}
ADVICE = {
    "bullets": "Go to A&E straight away if you get:\n- the pain moving from your belly button to the right\n"
               "* pain when you walk or go over bumps\n\u2022 vomiting\n- a temperature",
    "numbered": "Warning signs to watch for tonight:\n1. Pain that has moved to the lower right\n2) Pain that's worse "
                "walking\n3. Vomiting\n4. A high temperature",
    "colon_comma": "Come straight back if any of these start: pain that moves to the right side, walking making it "
                   "worse, vomiting, a fever.",
    "such_as": "Seek help urgently if you notice symptoms such as the pain shifting from your belly button, it hurting "
               "more when you walk, vomiting, or a temperature.",
    "split_lines": "Please call 111 if you develop any of these:\npain that moves to the right,\nhurting when you "
                   "walk,\nvomiting,\na fever.",
}


@pytest.mark.parametrize("shape", sorted(LEAD_INS))
def test_a_lead_in_question_asks_about_every_item_of_its_list(by_id: dict[str, Scenario], shape: str) -> None:
    matched = Understanding(by_id["appendicitis"]).match(LEAD_INS[shape])
    assert set(APPENDIX) <= set(matched), (shape, sorted(matched))


@pytest.mark.parametrize("shape", sorted(ADVICE))
def test_the_same_list_under_advice_reveals_nothing(by_id: dict[str, Scenario], shape: str) -> None:
    assert Understanding(by_id["appendicitis"]).match(ADVICE[shape]) == {}, shape


def test_a_carer_asked_over_an_unmarked_list_reveals_each_item(by_id: dict[str, Scenario]) -> None:
    message = ("Has he had any of these in the last few weeks?\nReally thirsty and weeing a lot\nLosing weight\n"
               "Breathing deep and fast")
    assert {"thirst_urination", "weight_loss", "breathing"} <= set(Understanding(by_id["dka_teen"]).match(message))


def test_an_unmarked_line_is_an_item_only_under_a_lead_in_and_only_while_short(by_id: dict[str, Scenario]) -> None:
    u = Understanding(by_id["dka_teen"])
    # a sentence after the lead-in is not an item of it, and a blank line ends the list
    assert "weight_loss" not in u.match("Do you have any of these?\nI will ask about his weight later.")
    assert "weight_loss" not in u.match("Any of the following:\n\nHis weight has been steady, you said.")


def test_a_lead_in_with_a_fronted_phrase_still_asks_about_its_items(by_id: dict[str, Scenario]) -> None:
    """ "Over the past day, have you had:" is a question after a short fronted phrase; its items are asked."""
    message = ("Over the past day or so, have you had:\n- pain moving from your belly button to the right\n"
               "- being sick or off your food\n- a temperature")
    matched = Understanding(by_id["appendicitis"]).match(message)
    assert {"migration", "appetite_nausea", "fever"} <= set(matched), sorted(matched)
    # the same list under a condition is advice
    advice = ("If things change tonight, look out for:\n- pain moving from your belly button to the right\n"
              "- being sick\n- a temperature")
    assert Understanding(by_id["appendicitis"]).match(advice) == {}


@pytest.mark.parametrize("sentence", [
    "Any pain that moves down to your right side is a warning sign.",
    "Any fever with this pain is a reason to come straight back.",
    "Any vomiting means you should be seen tonight.",
    "Over the next day, any new vomiting means you should come back.",
])
def test_a_sentence_that_says_what_any_such_thing_is_reveals_nothing(by_id: dict[str, Scenario],
                                                                     sentence: str) -> None:
    assert Understanding(by_id["appendicitis"]).match(sentence) == {}, sentence


@pytest.mark.parametrize("heading", ["What will happen next:", "What's going to happen when you get there:",
                                     "What is going to happen now:"])
def test_a_list_under_a_heading_that_explains_the_plan_reveals_nothing(by_id: dict[str, Scenario],
                                                                        heading: str) -> None:
    # the same items under "Have you had any of these:" are asked (migration, fever)
    message = (f"{heading}\n1. The doctor checks where the pain has moved to.\n2. Something for the sickness.\n"
               "3. Your temperature taken.")
    assert Understanding(by_id["appendicitis"]).match(message) == {}, heading


# Statements that open with a question word: a heading over a list, a free relative, a pseudo-cleft (sim/patient/_wh)
EXPLAINED = [
    "**Why I'm worried about your appendix:**\n- **The pain moving** from your belly button to the right\n"
    "- **Pain when you walk** or go over bumps\n- **Being sick** and off your food\n- **A temperature**",
    "What makes me think of appendicitis:\n- the pain has moved to the lower right\n- walking makes it worse\n"
    "- you have a fever",
    "Why a scan is the next step: the pain moved to the right, it hurts to walk, and you have a temperature.",
    "What usually settles this kind of pain is an operation, so the pain moving to the right side matters.",
    "What's different today is that the pain has moved and you have a fever.",
    "Let me check I've got this right:\n- the pain started by your belly button and moved to the right\n"
    "- it's worse when you walk\n- you've been sick",
    "Any temperature like that needs a doctor to examine your tummy today.",
    "Together these point to appendicitis, which is why the pain moving and the fever matter.",
]


@pytest.mark.parametrize("text", EXPLAINED)
def test_a_statement_that_opens_with_a_question_word_reveals_nothing(by_id: dict[str, Scenario], text: str) -> None:
    assert Understanding(by_id["appendicitis"]).match(text) == {}


@pytest.mark.parametrize(("text", "asked"), [
    ("Which of these have you had:\n- a fever\n- being sick", {"fever", "appetite_nausea"}),
    ("What symptoms do you have with it:\n- a temperature\n- vomiting", {"fever", "appetite_nausea"}),
    ("Could you tell me:\n- how bad the pain is now\n- whether you have had a temperature", {"fever"}),
    ("How long has the pain been in the lower right", {"migration"}),
])
def test_questions_that_open_with_a_question_word_still_ask(by_id: dict[str, Scenario], text: str,
                                                             asked: set[str]) -> None:
    assert asked <= set(Understanding(by_id["appendicitis"]).match(text))


@pytest.mark.parametrize(("sentence", "heading", "declarative"), [
    ("Why I'm concerned", False, True), ("What you've told me so far", False, True),
    ("What helps", True, True), ("What helps", False, False), ("What to expect", True, True),
    ("Why a stroke is the likely cause", False, True), ("What usually helps most is rest", False, True),
    ("What's different is how long it lasted", False, True), ("What's the plan", False, False),
    ("What is it that worries you", False, False), ("Which of these have you had", True, False),
    ("How many puffs has she had", False, False), ("How long is the pain lasting", False, False),
    ("Which one is worse", False, False), ("What kind of pain is it", False, False),
    ("Which of these is the worst", False, False), ("What is it that is bothering you", False, False),
    ("how's her breathing is it fast or is she struggling", False, False),
    ("How are you feeling", True, False), ("When did it start", False, False),
])
def test_statement_order_after_a_question_word(sentence: str, heading: bool, declarative: bool) -> None:
    assert declarative_wh(sentence, heading=heading) is declarative
