"""Issue 39: a question answers what was asked, not its neighbours.

When one matched intent belongs to several facts and the question says nothing more specific, the facts whose own
words (triggers and answer) contain the words of the cue that matched are the ones asked about. Examples invented,
not taken from the bench sets.
"""

from __future__ import annotations

import pytest

from scenarios import Scenario
from scenarios.lexicon import padded
from sim.patient._compound import only_modifies
from sim.patient.understanding import Understanding


def test_the_cue_word_picks_the_fact_it_names_among_those_sharing_an_intent(by_id: dict[str, Scenario]) -> None:
    # "leg" names the leg symptoms; the saddle numbness shares the intent but is not about the legs
    assert Understanding(by_id["mechanical_low_back_pain"]).match("Is anything going on in either leg?") == {
        "leg_symptoms": "intent"}


def test_a_question_that_names_no_fact_of_the_intent_still_reveals_the_basic_ones(by_id: dict[str, Scenario]) -> None:
    # the cue names both inhalers' facts (their answers speak of inhalers): both are asked, as before
    matched = Understanding(by_id["asthma_exacerbation_child"]).match("Is she on any inhalers?")
    assert {"preventer", "reliever_use"} <= set(matched)


def test_a_word_that_names_the_topic_of_the_asked_fact_does_not_trigger_its_neighbour(
        by_id: dict[str, Scenario]) -> None:
    u = Understanding(by_id["gi_bleed_melena"])
    # a question about past illnesses: "stomach" is the ulcer history's word here, not the abdominal pain
    assert set(u.match("Has a doctor ever told you that you had a stomach ulcer?")) == {"past_history"}
    assert set(u.match("Do you have a history of ulcers in your stomach?")) == {"past_history"}
    # asked about on its own, the same word still reveals the abdominal pain
    assert set(u.match("Is your stomach sore?")) == {"abdomen"}


def test_lint_flags_an_image_fact_that_any_question_on_its_topic_hands_over(by_id: dict[str, Scenario]) -> None:
    from sim.lint import lint_scenario

    scenario = by_id["img_lyme_rash_photo"]
    assert not [f for f in lint_scenario(scenario) if f.kind == "image without photo intent"]
    photo = next(f for f in scenario.information_tree if f.image is not None)
    assert Understanding(scenario).match("Is the rash itchy at all?").keys().isdisjoint({photo.id})
    assert photo.id in Understanding(scenario).match("Could you snap a picture of it for me?")
    old = scenario.model_copy(update={"information_tree": [
        f.model_copy(update={"intents": ["skin"]}) if f.id == photo.id else f for f in scenario.information_tree]})
    (finding,) = [f for f in lint_scenario(old) if f.kind == "image without photo intent"]
    assert finding.fact_id == photo.id and "'photo' intent" in finding.message
    assert photo.id in Understanding(old).match("Is the rash itchy at all?")  # what the lint warns about


def test_the_cue_words_beyond_a_fired_trigger_pick_the_fact(by_id: dict[str, Scenario]) -> None:
    # "testicle" triggers the testicle's pain; "sits higher" is the position's own wording, so both are asked
    understanding = Understanding(by_id["testicular_torsion_teen"])
    matched = understanding.match("Is one testicle sitting higher than the other one?")
    assert {"testicle", "position"} <= set(matched)


@pytest.mark.parametrize(("question", "asked", "not_asked"), [
    ("Which blood pressure tablets are you on?", "current_meds", "home_bp"),
    ("Any side effects from the blood pressure pills?", "side_effects", "home_bp"),
    ("What have your blood pressure readings been at home?", "home_bp", None),
    ("How is your blood pressure?", "home_bp", None),
])
def test_a_trigger_that_only_modifies_a_medicine_or_a_service_does_not_ask_its_fact(
        by_id: dict[str, Scenario], question: str, asked: str, not_asked: str | None) -> None:
    matched = set(Understanding(by_id["medication_refill_hypertension"]).match(question))
    assert asked in matched and not_asked not in matched


def test_a_list_comma_is_not_a_compound(by_id: dict[str, Scenario]) -> None:
    # "smoking, medicines?": the comma ends the smoking item; "smoking medicines" would be a compound
    matched = Understanding(by_id["subarachnoid_thunderclap"]).match("Any of these: high blood pressure, smoking, "
                                                                      "medicines?")
    assert "smoking" in matched
    assert only_modifies(padded("smoking"), "smoking medicines", set())
    assert not only_modifies(padded("smoking"), "smoking, medicines", set())
