"""A final assessment written as prose (form ``prose``): read when it decides and concludes, never mid-interview."""

from __future__ import annotations

import pytest

from scenarios import Scenario
from sim.encounter import run_encounter
from sim.encounter.assessment import assessment_form, parse_assessment
from sim.encounter.assessment._prose import prose_diagnoses, prose_escalation
from sim.encounter.channel import TextChannel
from tests.sim.test_harness import ReplayAgent

FINALS = [  # (reply, level, escalation, disposition, first diagnosis)
    ("Right, that gives me a clear enough view. Your symptoms point to gallstones irritating the gallbladder. I'd "
     "class this as triage level 3 and urgent: please get yourself to an urgent treatment centre this afternoon. "
     "If the pain becomes constant or you turn yellow, call 999.",
     3, "urgent", "same_day_urgent_care", "gallstones irritating the gallbladder"),
    ("Having listened to all of that, I believe this is a pulled muscle in your back. It isn't urgent, and you can "
     "look after it at home with gentle movement and ibuprofen. It should settle within a week or two.",
     None, "self_care", "self_care", "pulled muscle"),
    ("ok so here's what i think. it sounds like an allergic reaction affecting his airway, and that's an emergency, "
     "triage level one. please call nine nine nine right now and use his adrenaline pen.",
     1, "emergency", "ambulance", "allergic reaction"),
    ("<speak>Thanks. <break time=\"200ms\"/> My final answer: E S I four, routine. "
     "<prosody rate=\"slow\">This looks like a wart.</prosody> Book a normal appointment with your GP.</speak>",
     4, "routine", "routine_gp", "wart"),
    ("Thank you, I've heard enough. My diagnoses, in order: one, shingles; two, contact dermatitis. I'd rate it a "
     "triage level of four, and you should see a GP today for antiviral tablets.",
     4, "urgent", "same_day_gp", "shingles"),
    # a level stated as a decision concludes without an impression phrase; "is having a ... attack" is one
    ("Here's what to do right now:\n1. Call 999 immediately.\n2. Keep him sitting upright.\n\nThis is a triage "
     "level 1 emergency.", 1, "emergency", "ambulance", None),
    ("<speak>This is an emergency. Please call nine nine nine now. From what you have said, she is having a life "
     "threatening asthma attack. I am rating this as triage level one.</speak>",
     1, "emergency", "ambulance", "life threatening asthma attack"),
    # a clause that rules out A&E decides nothing; the scale's own "(non-urgent)" is no escalation
    ("I think the most likely thing is a chest infection. It's not something that needs A&E, but please ring your "
     "GP surgery when they open and ask to be seen today.", None, "urgent", "same_day_gp", "chest infection"),
    ("Triage: ATS 5 (non-urgent).\nIt sounds like a minor graze to the knee. Clean it and cover it; there's no "
     "need to see a doctor.", 5, "self_care", None, "minor graze to the knee"),
]

MID_INTERVIEW = [
    "Thanks. This sounds like it might be a migraine, but I want to be sure. Have you had any weakness in your arms?",
    "If the rash doesn't fade when you press a glass on it, that would be an emergency. Can you try that now?",
    "That could mean a trip to A&E, depending on what you tell me next. How high was the temperature?",
    "I'm nearly ready to give you my view; one more question first. Is the pain worse lying flat?",
    "Being thirsty and tired can point to high blood sugar, which is worth checking. When did you last eat?",
    "Based on what you've told me so far, it's probably a chest infection. Are you coughing anything up?",
    "Okay, let me ask a couple more things before I decide where you should go.",
]


@pytest.mark.parametrize("reply,level,escalation,disposition,diagnosis", FINALS)
def test_a_prose_final_is_read(reply: str, level: int | None, escalation: str, disposition: str | None,
                               diagnosis: str | None) -> None:
    assert assessment_form(reply) == "prose"
    p = parse_assessment(reply)
    assert (p.triage_level, p.escalation, p.disposition) == (level, escalation, disposition)
    assert (p.diagnoses[0].lower() if p.diagnoses else None) == diagnosis


@pytest.mark.parametrize("reply", MID_INTERVIEW)
def test_a_prose_turn_that_asks_defers_or_only_explains_is_not_final(reply: str) -> None:
    assert assessment_form(reply) is None


def test_the_decision_is_the_first_decisive_sentence_not_the_safety_net_or_the_story() -> None:
    # the story's "today", the course's "within a week", and the condition's 999 are not the decision
    text = ("You've had this cough since today's walk. It should clear up within a week. If you cough blood, call "
            "999. You can manage this at home.")
    assert prose_escalation(text) == "self_care"
    # a condition at the end of a list item binds that item only: the clause before it still decides
    assert prose_escalation("Go to A&E now, or call an ambulance if you can't get a lift.") == "emergency"
    assert prose_escalation("Call an ambulance if she goes floppy.") is None


def test_impressions_ruled_out_or_general_are_not_diagnoses() -> None:
    text = ("You were worried about a blood clot, but I don't think it's that. This sounds like cramp. "
            "Tiredness can point to anaemia.")
    assert prose_diagnoses(text) == ["cramp"]


def test_a_marked_assessment_without_diagnosis_lines_takes_the_prose_impression() -> None:
    p = parse_assessment("Assessment:\nTriage level: ESI 5\nEscalation: self_care\n\nThe itching between your "
                         "fingers at night is most consistent with scabies.")
    assert p.form == "plain" and p.diagnoses == ["scabies"]


async def test_a_prose_final_ends_the_encounter(by_id: dict[str, Scenario]) -> None:
    agent = ReplayAgent(["Where exactly is the pain?", FINALS[0][0], "Any vomiting?"])
    r = await run_encounter(by_id["appendicitis"], agent, TextChannel(), turn_limit=4)
    assert r.termination == "assessment" and r.agent_turns == 2
    assert [t.assessment_form for t in r.turns if t.speaker == "agent"] == [None, "prose"]
    assert (r.assessment.triage_level, r.assessment.escalation) == (3, "urgent")


NOTES_AND_DRESS = [  # (reply, form, level, escalation, first diagnosis): other dress of a final, invented here
    ("S: 52F, 3 days of burning urine and loin pain, rigors last night.\nO: Temp 38.9 on home thermometer.\n"
     "A: Acute pyelonephritis. Ddx: renal colic, cystitis.\nP: ESI 3. Same-day urgent care for antibiotics today.",
     "markdown_label", 3, "urgent", "Acute pyelonephritis"),
    ("Situation: 70M short of breath at rest since this morning.\nBackground: COPD, home oxygen.\n"
     "Assessment: Infective COPD exacerbation secondary to a chest infection.\nRecommendation: Ambulance now via 999.",
     "plain", None, "emergency", "Infective COPD exacerbation"),
    ("Manchester Triage: YELLOW\nImpression: cellulitis of the shin\nWhere to go: urgent care this evening",
     "fields", 3, "urgent", "cellulitis of the shin"),
    ("Triage outcome: P3. Likely cause: migraine with aura. Book with your GP within the week.",
     "fields", 3, "routine", "migraine with aura"),
    ('Calling tool: save_triage\nArguments: {"acuity": 4, "escalation": "routine", "diagnoses": ["Plantar fasciitis"]}',
     "json", 4, "routine", "Plantar fasciitis"),
    ('{"tool": "save_triage", "arguments": "{\\"acuity\\": 2, \\"escalation\\": \\"emergency\\", '
     '\\"diagnoses\\": [\\"Sepsis\\"]}"}', "json", 2, "emergency", "Sepsis"),
    ("alright thanks for all that so from what you've described it sounds like shingles it isn't an emergency but "
     "it does need treating today so i'd like you to get a same day appointment with your gp and if the rash spreads "
     "to your eye go to a and e straight away okay",
     "prose", None, "urgent", "shingles"),
]


@pytest.mark.parametrize("reply,form,level,escalation,diagnosis", NOTES_AND_DRESS)
def test_notes_scales_tool_calls_and_run_on_transcripts_are_read(reply: str, form: str, level: int | None,
                                                                 escalation: str, diagnosis: str) -> None:
    assert assessment_form(reply) == form
    p = parse_assessment(reply)
    assert (p.triage_level, p.escalation) == (level, escalation)
    assert p.diagnoses and p.diagnoses[0] == diagnosis


def test_a_note_written_mid_interview_is_not_final() -> None:
    note = ("S: 30M, cough for 3 weeks.\nA: Working impression: post-viral cough; asthma possible.\n"
            "P: Need to ask about night sweats and weight loss. Any night sweats?")
    assert assessment_form(note) is None


def test_a_category_named_to_rule_it_out_or_in_a_service_name_is_not_the_decision() -> None:
    assert prose_escalation("This isn't something you need the emergency department for. "
                            "Book a routine appointment.") == "routine"
    assert prose_escalation("You should see an emergency dentist today.") == "urgent"
    assert prose_escalation("You don't need an ambulance; please get a lift to urgent care today.") == "urgent"


def test_a_means_of_care_decides_before_a_bare_time_word() -> None:
    # "a pharmacist today" is self-care at a pharmacy, not same-day medical care
    assert prose_escalation("Likely a cold sore. Please see a pharmacist today for a cream.") == "self_care"
    p = parse_assessment("Assessment: Head lice.\nPlan: Pharmacist for a treatment lotion. GP if the scalp gets "
                         "infected.")
    assert p.escalation == "self_care"


THIRD_ROUND = [  # (reply, form, level, escalation, diagnoses): invented here, after dev set 5's classes
    ("I'm sending an ambulance to you now; this sounds like a stroke. Is the front door unlocked so the crew can "
     "get in?", "prose", None, "emergency", ["stroke"]),
    ("This sounds like inflammation of the thick band of tissue under your heel, called plantar fasciitis. You can "
     "look after it at home with rest, ice and calf stretches.", "prose", None, "self_care", ["plantar fasciitis"]),
    ("My impression is a kidney stone. Other possibilities: a urine infection, a pulled muscle. Please go to urgent "
     "care today.", "prose", None, "urgent", ["kidney stone", "urine infection", "pulled muscle"]),
    ('submit_assessment({"triage_level": 2, "escalation": "emergency", "diagnoses": ["Ectopic pregnancy"]})',
     "json", 2, "emergency", ["Ectopic pregnancy"]),
    ("Manchester Triage outcome\nPriority: ORANGE\nImpression: open fracture of the forearm\n"
     "Disposition: emergency department", "fields", 2, "emergency", ["open fracture of the forearm"]),
    ("Thanks, that's everything I need. It sounds like a dental abscess, and you need to see a dentist within 4 "
     "hours.", "prose", None, "urgent", ["dental abscess"]),
]


@pytest.mark.parametrize("reply,form,level,escalation,diagnoses", THIRD_ROUND)
def test_dispatch_named_conditions_other_possibilities_calls_and_colours_are_read(
        reply: str, form: str, level: int | None, escalation: str, diagnoses: list[str]) -> None:
    p = parse_assessment(reply)
    assert (p.form, p.triage_level, p.escalation, p.diagnoses) == (form, level, escalation, diagnoses)


def test_announcing_questions_is_not_final() -> None:
    assert assessment_form("Thanks for that. I'm going to ask a few quick questions to work out how urgent this "
                           "is; it could be a migraine.") is None


FOURTH_ROUND = [  # (reply, level, escalation, diagnoses): invented here, after dev set 6's classes
    ("Right, I've heard enough. This looks like tonsillitis, so ring your GP practice this morning for an "
     "appointment.", None, "urgent", ["tonsillitis"]),
    ("I'd put this at level five, the least urgent. The itchy ring on your arm sounds like ringworm, and a "
     "pharmacist can sell you a cream for it.", 5, "self_care", ["ringworm"]),
    ("alright i've got what i need your triage level is two the most likely thing is a kidney stone i'm going to "
     "ask you to go to the emergency department now and don't drive yourself there please",
     2, "emergency", ["kidney stone"]),
    ("ok so to sum up this sounds like a tension headache you're fine to stay at home tonight with paracetamol and "
     "plenty of water", None, "self_care", ["tension headache"]),
    ("Thanks. Your daughter seems to have croup. Please take her to an urgent care centre today.",
     None, "urgent", ["croup"]),
    ("Thank you. It sounds like your grandson has hand, foot and mouth disease. It normally clears up on its own "
     "in a week, so there's no need to see a doctor.", None, "self_care", ["hand, foot and mouth disease"]),
    ("Tummy pain, vomiting and not having opened her bowels for two days could be caused by a blocked bowel. "
     "Please go to A&E now.", None, "emergency", ["blocked bowel"]),
    ("I'm worried she has pneumonia. Please see an out-of-hours doctor tonight. If she gets breathless at rest, "
     "call 999, as that could mean sepsis.", None, "urgent", ["pneumonia"]),
    ('{"type": "function", "function": {"name": "record_triage", "arguments": "{\\"esi\\": 3, \\"escalation\\": '
     '\\"urgent\\", \\"diagnoses\\": [\\"Cellulitis\\"]}"}}', 3, "urgent", ["Cellulitis"]),
    ('<triage_result acuity="4" escalation="routine">\n<diagnoses>Tennis elbow</diagnoses>\n</triage_result>',
     4, "routine", ["Tennis elbow"]),
]


@pytest.mark.parametrize("reply,level,escalation,diagnoses", FOURTH_ROUND)
def test_gp_today_spoken_levels_plain_impressions_calls_and_attributes_are_read(
        reply: str, level: int | None, escalation: str, diagnoses: list[str]) -> None:
    p = parse_assessment(reply)
    assert p.form is not None
    assert (p.triage_level, p.escalation, p.diagnoses) == (level, escalation, diagnoses)


def test_thanks_for_what_happened_today_decides_nothing() -> None:
    from sim.encounter.assessment._triage import decision_escalation
    assert decision_escalation("Thank you for completing the questions with me today.") is None
    assert assessment_form("It's a shame the queue was so long at the walk-in centre.") is None


FIFTH_ROUND = [  # (reply, level, escalation, diagnoses): invented here, after dev set 7's classes
    ('{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": '
     '"save", "arguments": "{\\"esi\\": 4, \\"escalation\\": \\"routine\\", \\"diagnoses\\": [\\"Bunion\\"]}"}}]}',
     4, "routine", ["Bunion"]),
    ('{"candidates": [{"content": {"parts": [{"functionCall": {"name": "triage", "args": {"esi_level": 2, '
     '"escalation": "emergency", "diagnoses": ["Sepsis"]}}}]}}]}', 2, "emergency", ["Sepsis"]),
    ('<invoke name="submit">\n<parameter name="triage_level">3</parameter>\n<parameter name="escalation">urgent'
     '</parameter>\n<parameter name="diagnoses">Quinsy</parameter>\n</invoke>', 3, "urgent", ["Quinsy"]),
    ("Outcome: lvl 4 / routine. Prob frozen shoulder. Book with your GP in the next fortnight.",
     4, "routine", ["frozen shoulder"]),
    ("okay i think we're done this sounds very much like a stomach bug it's an e s i five so you can look after it at "
     "home with fluids and rest", 5, "self_care", ["stomach bug"]),
    ("Triage level: 5\nWhat we think it is: Chilblains\nYour care plan: self-management at home",
     5, "self_care", ["Chilblains"]),
    ("Situation: cut to the palm from a kitchen knife.\nAssessment: deep laceration, tendon injury possible. ESI 4.\n"
     "Recommendation: Urgent - attend the emergency department or minor injuries today for closure.",
     4, "urgent", ["deep laceration"]),
    ("S: low mood for a month.\nA: Probable depression. ESI 3.\nR: Same-day call from the crisis team; call 999 if "
     "he feels unable to stay safe.", 3, "urgent", ["depression"]),
    ("Based on your answers, you may have a urine infection. A pharmacist can help without you needing to see a GP.",
     None, "self_care", ["urine infection"]),
    ("I'm treating this as a heart attack. This is ESI 2. An ambulance is on its way to you now.",
     2, "emergency", ["heart attack"]),
]


@pytest.mark.parametrize("reply,level,escalation,diagnoses", FIFTH_ROUND)
def test_nested_calls_abbreviations_labels_and_outright_categories_are_read(
        reply: str, level: int | None, escalation: str, diagnoses: list[str]) -> None:
    p = parse_assessment(reply)
    assert p.form is not None
    assert (p.triage_level, p.escalation, p.diagnoses[:len(diagnoses)]) == (level, escalation, diagnoses)


@pytest.mark.parametrize("reply", [
    "In a moment I'll give it to you as:\n\nASSESSMENT:\nTriage level / Escalation / Diagnoses\n\nBut first, is he "
    "drinking?",
    "```\nASSESSMENT (DRAFT - NOT FOR ACTION YET)\nTriage level: ESI 3\nEscalation: urgent\nDiagnoses: 1. "
    "Cellulitis\n```\nIs the redness spreading?",
    '{"type": "question", "assessment": null, "text": "Before I give my assessment: any fever?"}',
    "Situation: 70M fall.\nAssessment: possible hip fracture.\nRecommendation: to follow once I know if he hit his "
    "head.\n\nDid he hit his head?",
])
def test_templates_long_draft_titles_null_assessments_and_pending_recommendations_are_not_final(reply: str) -> None:
    assert assessment_form(reply) is None


def test_a_log_line_of_key_value_pairs_is_a_block_of_fields() -> None:
    p = parse_assessment('[triage.done] state=FINAL esi=5 escalation=self_care dx1="Hay fever" dx2="Cold" '
                         'advice="Antihistamine; nasal spray"')
    assert (p.form, p.triage_level, p.escalation, p.diagnoses) == ("fields", 5, "self_care", ["Hay fever", "Cold"])
    # a draft's pairs between separators keep their tag
    assert assessment_form("DRAFT | ESI=3 | escalation=urgent | dx=Otitis media | need: fever? Any fever?") is None


SIXTH_ROUND = [  # (reply, level, escalation, diagnoses): invented here, after dev set 8's classes
    ('```jsonc\n{\n  // the decision\n  "esi": 3, // urgent\n  "escalation": "urgent",\n  "diagnoses": ["Shingles"]\n}'
     '\n```', 3, "urgent", ["Shingles"]),
    ('<Result schema="2" id="a7">\n<Esi>4</Esi>\n<Escalation>routine</Escalation>\n<Diagnosis>Trigger finger'
     '</Diagnosis>\n</Result>', 4, "routine", ["Trigger finger"]),
    ("AGENT: okay so what we're dealing with here is hay fever\nAGENT: that's triage level five so you "
     "can look after it at home with antihistamines", 5, "self_care", ["hay fever"]),
    ("ATS CATEGORY 2 - EMERGENCY. Suspected spider bite with spreading pain. CALL 000 NOW.",
     2, "emergency", ["spider bite"]),
    ("Triage category: YELLOW (urgent).\nLikely: gallstones.\nPlan: urgent care this evening.",
     3, "urgent", ["gallstones"]),
    ("That sounds like a cold sore. You don't need to see anyone for this, and it clears in a week or so.",
     None, "self_care", ["cold sore"]),
    ("> [!CAUTION]\n> **Call 999 now - triage level ESI 1.**\n> This sounds like anaphylaxis.", 1, "emergency",
     ["anaphylaxis"]),
    ("Protocol: Rash - Adult\nDisposition: SEE PCP WITHIN 2 WEEKS\nAcuity: ESI 4\nImpression: eczema",
     4, "routine", ["eczema"]),
]


@pytest.mark.parametrize("reply,level,escalation,diagnoses", SIXTH_ROUND)
def test_comments_speakers_admonitions_other_scales_and_plain_outcomes_are_read(
        reply: str, level: int | None, escalation: str, diagnoses: list[str]) -> None:
    p = parse_assessment(reply)
    assert p.form is not None
    assert (p.triage_level, p.escalation, p.diagnoses[:len(diagnoses)]) == (level, escalation, diagnoses)


def test_an_assessment_that_cannot_say_yet_is_not_final() -> None:
    assert assessment_form("Situation: dizzy since lunch.\nBackground: on insulin.\nAssessment: maybe a hypo, but I "
                           "can't say yet.\nRecommendation: I need a reading first - can you check his sugar?") is None


def test_unmarked_fields_that_still_ask_about_the_patient_are_mid_interview() -> None:
    reply = ("**Likely:** croup in your 3-year-old. **Urgency right now:** I'd say urgent, GP or out-of-hours today. "
             "**What could change that:** noisy breathing at rest. So can you listen to him for me - is there a harsh "
             "noise when he breathes in?")
    assert assessment_form(reply) is None
    # a heading or a hedged diagnosis with a question mark is no question to the patient
    assert assessment_form("How urgent is this?\nTriage: ESI 4\nEscalation: routine\nDx: anaemia?") == "fields"


SEVENTH_ROUND = [  # (reply, level, escalation, diagnoses): invented here, after dev set 10's classes
    ("**Evaluación final**\n- Nivel ESI: 4\n- Escalation: routine\n- Diagnóstico: Tendinitis de Quervain",
     4, "routine", ["Tendinitis de Quervain"]),
    ("Abschließend:\n- Triage: ESI 3\n- Escalation: urgent\n- Verdachtsdiagnose: Gürtelrose", 3, "urgent",
     ["Gürtelrose"]),
    ("**Triage level:** ESI 3\n**Escalation category:** routine\n**Disposition:** GP today if you can\n"
     "**Diagnoses:** Ingrown toenail", 3, "routine", ["Ingrown toenail"]),
    ("My final assessment - ESI 3 (routine escalation).\nDisposition: go to the ED if you prefer.\n"
     "Diagnoses: Ganglion cyst", 3, "routine", ["Ganglion cyst"]),
    ("Done: ESI 4, routine, routine GP; dx: Plantar fasciitis.", 4, "routine", ["Plantar fasciitis"]),
    ("------------------\nTRIAGE SUMMARY\nAcuity (ESI) ...... 5\nEscalation ........ SELF_CARE\n"
     "Impression .. Sunburn", 5, "self_care", ["Sunburn"]),
    ("Triage Assistant (AI): Here is my final assessment.\nTriage Assistant (AI): Level - ESI 5. Escalation - "
     "self_care.\nTriage Assistant (AI): Most likely: Mouth ulcer.", 5, "self_care", ["Mouth ulcer"]),
    ("Final assessment:\nStep 1 - Urgency: ESI 2, emergency.\nStep 2 - What it probably is: Testicular torsion.",
     2, "emergency", ["Testicular torsion"]),
    ("<h3>Triage decision</h3>\n<dl>\n<dt>ESI level</dt><dd>3</dd>\n<dt>Escalation</dt><dd>urgent</dd>\n"
     "<dt>Diagnosis</dt><dd>Quinsy</dd>\n</dl>", 3, "urgent", ["Quinsy"]),
    ("Putting it together, I'd put this at ESI 4 and routine: the pins and needles fit best with a trapped ulnar "
     "nerve. Book an appointment with your GP.", 4, "routine", ["trapped ulnar nerve"]),
    ("I'm treating this as an emergency, ESI 2. My primary concern is a perforated ulcer. Call 999 now.",
     2, "emergency", ["perforated ulcer"]),
    ("**Final Assessment:** From what you describe this appears to be a **Paper cut**. ESI level of 5, escalation "
     "self_care.", 5, "self_care", ["Paper cut"]),
]


@pytest.mark.parametrize("reply,level,escalation,diagnoses", SEVENTH_ROUND)
def test_other_languages_leaders_speakers_steps_definition_lists_and_said_escalations_are_read(
        reply: str, level: int | None, escalation: str, diagnoses: list[str]) -> None:
    p = parse_assessment(reply)
    assert p.form is not None
    assert (p.triage_level, p.escalation, p.diagnoses[:len(diagnoses)]) == (level, escalation, diagnoses)


@pytest.mark.parametrize("reply", [
    "When I'm done it will look like this:\nESI level: [1-5]\nEscalation: [emergency / urgent / routine]\n"
    "Diagnoses: [one to three]\nFirst, though - how long has the rash been there?",
    "<triage>\n  <esi></esi>\n  <escalation></escalation>\n  <diagnoses></diagnoses>\n</triage>\n"
    "Before I fill that in: any fever?",
    'Your notes from the walk-in centre say "Assessment: ESI 4, routine, sprain". Can you put weight on it now?',
    "The paramedic's handover you read out:\n\n> ESI: 2\n> Disposition: ambulance\n> Impression: seizure\n\n"
    "Has he had another one since then?",
])
def test_templates_and_quoted_assessments_before_a_question_are_not_final(reply: str) -> None:
    assert assessment_form(reply) is None


@pytest.mark.parametrize("reply,level,escalation,diagnoses", [
    # a Python-style call with keyword arguments
    ('submit(esi=4, escalation="routine", dx=["Tennis elbow", "Radial tunnel syndrome"])', 4, "routine",
     ["Tennis elbow"]),
    # decision objects: their value, level or category, not their wording
    ('{"triage": {"scale": "ESI", "value": 1, "label": "Resuscitation"}, "escalation": {"category": "emergency", '
     '"why": "not breathing"}, "dx": ["Cardiac arrest"]}', 1, "emergency", ["Cardiac arrest"]),
    ('{"priority": {"esi": 5}, "escalation_level": "self_care", "conditions": {"primary": "Nappy rash"}}', 5,
     "self_care", ["Nappy rash"]),
    # ticked boxes
    ("Final assessment\n- [ ] ESI 2 - [x] ESI 4 - [ ] ESI 5\n- Escalation: [ ] urgent [x] routine [ ] self_care\n"
     "- Diagnosis: Bunion", 4, "routine", ["Bunion"]),
    # a treatment that "isn't working" is no working (draft) diagnosis
    ("Final assessment.\n\n**Triage level**\nESI 2 - her nebuliser isn't working and she is tiring.\n\n"
     "**Escalation**\nEmergency.\n\n**Diagnoses**\n* Life-threatening asthma", 2, "emergency",
     ["Life-threatening asthma"]),
])
def test_calls_decision_objects_checkboxes_and_failing_treatments_are_read(
        reply: str, level: int | None, escalation: str, diagnoses: list[str]) -> None:
    p = parse_assessment(reply)
    assert p.form is not None
    assert (p.triage_level, p.escalation, p.diagnoses[:len(diagnoses)]) == (level, escalation, diagnoses)


def test_a_hand_over_to_the_crisis_team_concludes_a_prose_final_before_a_practical_question() -> None:
    reply = ("You've told me you have a plan for tonight, so I'm treating this as an emergency, ESI 2. I'm going to "
             "connect you with the crisis team now. My assessment is suicidal ideation with a plan. While they call "
             "you, could you put the rope somewhere you can't get to it?")
    p = parse_assessment(reply)
    assert (p.form, p.triage_level, p.escalation) == ("prose", 2, "emergency")
    assert p.diagnoses[0].startswith("suicidal ideation")  # a name ends before "with ..."
