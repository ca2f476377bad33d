"""Issue 35 §2: the patient understands natural questions for critical facts, by class.

Each example is invented (none comes from the bench sets) and fails without the change it covers.
"""

from __future__ import annotations

import pytest

from scenarios import Scenario
from scenarios.lexicon import padded, respelt
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



def test_an_instruction_after_a_time_clause_is_still_a_request() -> None:
    assert speech_act("Once she's awake, get her to smile for me.") == "request"
    assert speech_act("After you've been, look in the pan and tell me what you see.") == "request"
    # advice stays advice, time clause or not
    assert speech_act("When you get home, check his temperature.") == "statement"


def test_a_manoeuvre_and_tell_me_if_asks_for_the_finding_now(by_id: dict[str, Scenario]) -> None:
    assert speech_act("Lift your arm above your head and tell me if the ache spreads.") == "request"
    found = Understanding(by_id["acs_chest_pain"]).match("Take a deep breath in and tell me if the pain spreads.")
    assert "radiation" in found, found
    # a time word keeps it advice, and so does a sentence that is no manoeuvre
    assert speech_act("Lift your arm and tell me if the ache spreads overnight.") == "statement"
    assert speech_act("Keep it raised and tell me if it spreads.") == "statement"


def test_a_trigger_settles_which_of_an_intents_facts_is_meant(by_id: dict[str, Scenario]) -> None:
    # "inhaler" is the reliever's trigger: the preventer (same intent, nothing of its own said) is not asked for too
    found = Understanding(by_id["asthma_exacerbation_child"]).match("How many goes on her inhaler today?")
    assert "reliever_use" in found and "preventer" not in found, found

# --------------------------------------------------------------------------- slips of the keyboard


def test_a_slip_of_the_keyboard_in_a_long_word_is_mended(by_id: dict[str, Scenario]) -> None:
    for slip, word in [("diziness", "dizziness"), ("temperture", "temperature"), ("palpitaitons", "palpitations")]:
        assert padded(f"Any {slip}?") == padded(f"Any {word}?")
    assert "postural" in Understanding(by_id["gi_bleed_melena"]).match("Any diziness when you stand?")
    # a word the lexicon does not know but that is spelt right stays itself, and so do short words
    assert [respelt(w) for w in ("wedding", "persona", "speaker", "fals")] == ["wedding", "persona", "speaker", "fals"]


# --------------------------------------------------------------------------- lay and textbook words (the lexicon)


@pytest.mark.parametrize("scenario_id, message, fact", [
    # walking unaided, in lay idiom
    ("ankle_sprain", "Did you manage to get back to the changing room unaided?", "weight_bearing"),
    ("ankle_sprain", "Did you get home under your own steam?", "weight_bearing"),
    # talking in sentences, tested by counting in one breath
    ("asthma_exacerbation_child", "Can she count from one to ten without stopping?", "speech"),
    # thirst, as the water bottle
    ("dka_teen", "Is he forever refilling his water bottle?", "thirst_urination"),
    # alertness: answering to a name, foggy thinking, the textbook "mentation"
    ("dka_teen", "If you shout his name, does he answer you?", "drowsy"),
    ("pyelonephritis", "Does your mind feel foggy at all?", "mental_state"),
    ("pyelonephritis", "Is her mentation normal?", "mental_state"),
    # exertion before the pain
    ("dramatic_benign_chest_wall", "Did you overdo it physically recently?", "gym_onset"),
    # pressing reproduces the pain
    ("dramatic_benign_chest_wall", "If you push on the sore area, is it worse?", "reproducible"),
    # the head caught in a fall
    ("geriatric_fall_anticoagulant", "Did your head catch the table edge as you went over?", "head_strike"),
    # vomiting in lay words, and what happens on getting up
    ("gi_bleed_melena", "Has anything come up since breakfast?", "haematemesis"),
    ("gi_bleed_melena", "Do you go funny if you get up quickly?", "postural"),
    # the stool in the toilet pan
    ("gi_bleed_melena", "After you go, look in the pan and tell me what you see.", "melena"),
    # saddle sensation when wiping, and the textbook "sphincter"
    ("mechanical_low_back_pain", "Is the feeling normal when you use toilet paper?", "saddle_numbness"),
    ("mechanical_low_back_pain", "Any sphincter problems?", "bladder_bowel"),
    # home blood pressure as "numbers" or "readings"
    ("medication_refill_hypertension", "Are your numbers at home high?", "home_bp"),
        # severity against the worst attacks
    ("migraine_known", "How does today stack up?", "pain_severity"),
    # pleuritic pain: a catch on a deep breath
    ("pulmonary_embolism_postop", "Does a big breath catch you?", "chest_pain"),
    # photophobia as shielding the eyes
    ("subarachnoid_thunderclap", "Do you need sunglasses on?", "neck_light"),
    # putting means aside
    ("suicidal_ideation_plan", "Have you been setting aside any pills?", "plan"),
    # the genitals in lay euphemism
    ("testicular_torsion_teen", "Any pain between your legs?", "testicle"),
    # medicines read off the packet
    ("medication_refill_hypertension", "Can you read me the name and strength on each packet?", "current_meds"),
    ("asthma_exacerbation_child", "How often is she using her puffer?", "reliever_use"),
    # textbook signs and tests
    ("simple_uti", "Any costovertebral tenderness?", "flank"),
    ("ectopic_pregnancy", "Was the test positive?", "pregnancy_status"),
    ("migraine_known", "Any focal deficit?", "neuro"),
    # a witness to a collapse, and a one-sided headache (the second item of a bundle)
    ("subarachnoid_thunderclap", "Did your sister see anything happen?", "collapse"),
    ("migraine_known", "Any fever, and is it only one side?", "typical_pattern"),
])
def test_lay_and_textbook_wordings_reveal_their_critical_fact(by_id: dict[str, Scenario], scenario_id: str,
                                                             message: str, fact: str) -> None:
    found = Understanding(by_id[scenario_id]).match(message)
    assert fact in found, found


@pytest.mark.parametrize("scenario_id, message, fact", [
    # a hedge inside a phrase cue ("were you doing") says nothing about what is asked
    ("acs_chest_pain", "What were you basically doing when it hit you?", "onset_exertion"),
    # the run-up to the onset, and "kicked off" for "started"
    ("acs_chest_pain", "Take me through the moments before it came on.", "onset_exertion"),
    ("acs_chest_pain", "Were you at home when it kicked off?", "onset_exertion"),
    # ongoing conditions as what the doctor keeps an eye on, or regular check-ups
    ("acs_chest_pain", "Does your doctor keep an eye on anything?", "risk_factors"),
    ("acs_chest_pain", "Do you have regular check-ups at the surgery?", "risk_factors"),
    # "on ... for you" is not "on anything for your ..." (which asks for medicines, not conditions)
    ("acs_chest_pain", "Does your doctor keep an eye on anything for you?", "risk_factors"),
    # walking, as how the person got home
    ("ankle_sprain", "Did you manage to get home by bus?", "weight_bearing"),
    # what usually works, this time
    ("anxious_patient_real_mi", "Is what usually settles it working this time?", "different_from_panic"),
    # whether the pain has stayed put
    ("appendicitis", "Is it in the same spot as when it began?", "migration"),
    # worse than ever
    ("migraine_known", "Is it worse than it has ever been?", "pain_severity"),
    # a witness noticing something happen to the patient
    ("subarachnoid_thunderclap", "Did the people at work notice anything happen to you?", "collapse"),
    # not worth carrying on
    ("suicidal_ideation_plan", "Does it feel like it's not worth carrying on?", "suicidal_thoughts"),
    # vision as watching the telly or managing books
    ("conjunctivitis", "Can he watch the telly normally?", "vision"),
    ("conjunctivitis", "Is he managing to read his books?", "vision"),
    # alertness as chatting normally
    ("dka_teen", "Is he chatting away to you like normal?", "drowsy"),
    # what has been taken, and passing urine as "going"
    ("pyelonephritis", "What have you taken so far?", "medications"),
    ("simple_uti", "Have you been going more often lately?", "frequency"),
    # drugs as what is taken at a party
    ("dramatic_benign_chest_wall", "Do you take anything when you go to a party?", "drugs"),
])
def test_everyday_wordings_reveal_their_fact(by_id: dict[str, Scenario], scenario_id: str, message: str,
                                                      fact: str) -> None:
    found = Understanding(by_id[scenario_id]).match(message)
    assert fact in found, found


# --------------------------------------------------------------------------- round 4 (dev set 9's classes)


@pytest.mark.parametrize("scenario_id, message, fact", [
    # swelling as "puffed up"; sticky eyes as "glued"
    ("conjunctivitis", "Have his lids puffed up overnight?", "eyelid_swelling"),
    ("conjunctivitis", "When he woke, were his lashes glued together?", "discharge"),
    # breathlessness as not getting air in
    ("anaphylaxis_peanut", "Can you get enough air in right now?", "breathing"),
    # bleeding noticed on wiping; what the vomit looked like; the home numbers when last checked
    ("ectopic_pregnancy", "Any blood on the tissue when you wipe?", "bleeding"),
    ("gi_bleed_melena", "When you were sick, what colour was it?", "haematemesis"),
    ("medication_refill_hypertension", "What number did the machine give you the last time you checked?",
     "home_bp"),
    # walking off, or being carried
    ("ankle_sprain", "Could you walk off by yourself or did someone have to carry you?", "weight_bearing"),
    # trips to the toilet; what happened when it came on, asked of a witness
    ("gi_bleed_melena", "How have your trips to the loo been?", "melena"),
    ("anxious_patient_real_mi", "Tell me what happened just when it came on.", "exertional_onset"),
    # means at home; a time before when it got this bad
    ("suicidal_ideation_plan", "Is there anything at home you could use to hurt yourself?", "plan"),
    ("suicidal_ideation_plan", "Was there ever a time before when it got this bad?", "previous_attempt"),
    # the course in everyday words; this episode against the usual ones; a sore head after a fall
    ("viral_uri", "How has it gone since the weekend?", "course"),
    ("migraine_known", "Is this one different from the others in any way?", "typical_pattern"),
    ("geriatric_fall_anticoagulant", "Is your head sore since you went over?", "headache_vomiting"),
])
def test_everyday_and_oblique_phrasings_of_round_four(by_id: dict[str, Scenario], scenario_id: str, message: str,
                                                      fact: str) -> None:
    assert fact in Understanding(by_id[scenario_id]).match(message)
