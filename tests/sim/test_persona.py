"""Persona behaviours (sim.patient.persona) through the patient simulator, asked in words written for these tests.

The questions are a clinician's own phrasings, not the scenarios' trigger lists; each behaviour is checked
against the same question put to the scenario as written (the default persona), so a test fails when the
behaviour is missing.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from scenarios import Scenario
from scenarios.lay import to_lay
from scenarios.lexicon import intents_in
from scenarios.personas import PERSONA_PRESETS, with_persona
from sim.agents.scripted import SCRIPTED, reply_problems
from sim.encounter import run_encounter
from sim.encounter.channel import TextChannel
from sim.patient import NEGATIVE_LINES, UNSURE_LINES, PatientSimulator
from sim.patient.persona import ASIDES, RELAY_MIN_AGE, hard_words
from sim.patient.understanding import Layers, Understanding
from sim.records import Turn
from tests.sim.persona_sweep import encounter_library, sweep

GOLDEN = Path(__file__).parent.parent / "data" / "persona_default_golden.json"


def told(scenario: Scenario, preset: str, seed: int = 0) -> PatientSimulator:
    return PatientSimulator(with_persona(scenario, preset), seed=seed)


# ------------------------------------------------------------------------------------------ default


def test_default_persona_says_exactly_what_it_said_before(by_id: dict[str, Scenario]) -> None:
    """The golden file was written by the code before the behaviours (main at cf6c1d9), same questions, and
    rewritten once for volunteering (an open question about symptoms now brings one up; the seeded lines that
    follow shift with it): a persona that changes no text must keep saying exactly this."""
    golden = json.loads(GOLDEN.read_text())
    for sid, rows in golden["scenarios"].items():
        p = told(by_id[sid], "default", seed=golden["seed"])
        assert p.persona is None
        assert p.opening_line == rows[0]["text"]
        for row in rows[1:]:
            r = p.respond(row["q"])
            assert (r.text, r.revealed, r.kind) == (row["text"], row["revealed"], row["kind"]), (sid, row["q"])
            assert r.held == [] and r.persona_note is None


# ------------------------------------------------------------------------------------------ poor recall


def test_poor_recall_keeps_a_critical_fact_from_an_open_question(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["acs_chest_pain"]
    broad = "Have you been diagnosed with any conditions in the past?"
    assert told(scenario, "default").respond(broad).revealed == ["risk_factors"]  # the scenario as written gives it
    p = told(scenario, "poor-recall")
    r = p.respond(broad)
    assert r.revealed == [] and r.kind == "withheld" and r.held == ["risk_factors"]
    assert "withheld: risk_factors" in (r.persona_note or "")
    assert r.text not in NEGATIVE_LINES and not re.match(r"no\b", r.text, re.I)  # holding back is not denying
    r = p.respond("Has a doctor ever said you have diabetes or high blood pressure?")
    assert r.revealed == ["risk_factors"] and r.kind == "facts"


def test_poor_recall_is_vague_first_and_full_when_asked_again(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["acs_chest_pain"]
    seed = next(s for s in range(50) if "smoking" in told(scenario, "poor-recall", s).persona.vague)  # type: ignore[union-attr]
    p = told(scenario, "poor-recall", seed)
    first = p.respond("How many cigarettes a day do you get through?")
    assert first.kind == "vague" and first.revealed == [] and first.held == ["smoking"]
    assert "pack a day" not in first.text and reply_problems(first.text, scenario) == {"vague"}
    again = p.respond("Roughly how much do you smoke, would you say?")
    assert again.revealed == ["smoking"] and "About a pack a day" in again.text


def test_recall_poor_in_the_library_acts(by_id: dict[str, Scenario]) -> None:
    """geriatric_fall_anticoagulant declares recall: poor: an open question about medicines no longer gives
    the blood thinner; a direct question does."""
    p = told(by_id["geriatric_fall_anticoagulant"], "default")
    r = p.respond("Are you taking any regular medicines at the moment?")
    assert "anticoagulant" not in r.revealed and "anticoagulant" in r.held
    assert "anticoagulant" in p.respond("Do you take anything to thin your blood?").revealed


# ------------------------------------------------------------------------------------------ minimiser


def test_minimiser_downplays_and_keeps_red_flags_for_a_direct_question(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["acs_chest_pain"]
    broad = "Have you had any other symptoms with it?"
    assert told(scenario, "default").respond(broad).revealed == ["sweating_nausea"]
    p = told(scenario, "minimiser")
    assert re.search(r"probably nothing", p.opening_line, re.I)
    assert scenario.opening_line[1:] in p.opening_line  # the complaint itself is still said
    r = p.respond(broad)
    assert r.revealed == [] and r.held == ["sweating_nausea"] and r.kind == "withheld"
    assert not re.match(r"no\b", r.text, re.I)
    r = p.respond("Have you felt clammy or broken out in a cold sweat?")
    assert r.revealed == ["sweating_nausea"] and "sweating a lot" in r.text
    benign = p.respond("What is the discomfort like - crushing, sharp, burning?")
    assert benign.revealed == ["character"] and re.search(r"nothing|not that bad", benign.text, re.I)


# ------------------------------------------------------------------------------------------ catastrophiser


def test_catastrophiser_alarms_around_benign_facts_without_changing_them(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["appendicitis"]
    plain = told(scenario, "default").respond("Have your bowels been normal?")
    p = told(scenario, "catastrophiser")
    assert re.search(r"scared|frightened", p.opening_line, re.I)
    r = p.respond("Have your bowels been normal?")
    assert r.revealed == plain.revealed == ["bowels"]
    assert r.text.startswith(plain.text) and r.text != plain.text
    assert re.search(r"terrified|worst|really bad", r.text, re.I)


# ------------------------------------------------------------------------------------------ rambling


def test_rambling_adds_one_aside_that_reveals_nothing(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["acs_chest_pain"]
    question = "Does the pain travel anywhere, like into your arm?"
    plain = told(scenario, "default").respond(question)
    r = told(scenario, "rambling").respond(question)
    assert r.revealed == plain.revealed and r.text.startswith(plain.text)
    extra = r.text[len(plain.text):].strip()
    assert extra in ASIDES


def test_asides_carry_no_clinical_content(by_id: dict[str, Scenario]) -> None:
    for aside in ASIDES:
        assert intents_in(aside) == set(), aside
        for scenario in by_id.values():  # as if said by the clinician, without the question filter
            assert Understanding(scenario, layers=Layers(question_filter=False)).match(aside) == {}, (aside,
                                                                                                        scenario.id)


# ------------------------------------------------------------------------------------------ lay table


def test_lay_table_replaces_whole_words_keeping_case() -> None:
    assert to_lay("I had an ECG for the abdominal pain.") == "I had a heart tracing for the tummy ache."
    assert to_lay("ECG was normal. Abdomen soft.") == "Heart tracing was normal. Tummy soft."
    assert to_lay("Painful urination, no haematuria.") == "Painful waterworks, no blood in the wee."
    assert to_lay("Her abdomens and abdominally") == "Her abdomens and abdominally"  # whole words only


def test_lay_persona_uses_the_table(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["appendicitis"]
    question = "Have your bowels been normal?"
    assert "diarrhoea" in told(scenario, "default").respond(question).text
    r = told(scenario, "lay").respond(question)
    assert r.revealed == ["bowels"] and "diarrhoea" not in r.text and "runny poo" in r.text


# ------------------------------------------------------------------------------------------ carer


def test_carer_relays_and_checks_with_the_patient(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["acs_chest_pain"]  # a 58-year-old man speaking for himself: the carer quotes him
    mine = {"smoking": "Are you a smoker?", "character": "What is the discomfort like - crushing, sharp, burning?",
            "medications": "Do you take anything regularly from the doctor?"}
    seed = next(s for s in range(50) if set(mine) & told(scenario, "carer", s).persona.not_known)  # type: ignore[operator,union-attr]
    p = told(scenario, "carer", seed)
    assert p.opening_line.startswith("Hello, I'm ringing for him") and scenario.opening_line in p.opening_line
    fid = sorted(set(mine) & p.persona.not_known)[0]  # type: ignore[union-attr]
    r = p.respond(mine[fid])
    assert r.kind == "not_known" and r.revealed == [] and r.held == [fid]
    assert re.search(r"ask him|check with him", r.text)
    assert reply_problems(r.text, scenario) == {"not_known"}
    r = p.respond("Could you ask him for me?")
    assert r.revealed == [fid] and re.match(r"(He says|He's telling me|I asked him, and he says), \"", r.text)
    shared = [f for f in set(mine) - p.persona.not_known]  # type: ignore[operator]
    if shared:
        assert re.match(r"(He says|He's telling me|I asked him)", p.respond(mine[shared[0]]).text)


def test_carer_asking_again_also_reveals(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["acs_chest_pain"]
    seed = next(s for s in range(50) if "smoking" in told(scenario, "carer", s).persona.not_known)  # type: ignore[union-attr]
    p = told(scenario, "carer", seed)
    assert p.respond("Are you a smoker?").kind == "not_known"
    assert p.respond("Does he smoke at all?").revealed == ["smoking"]


def test_carer_below_the_minimum_age_is_the_scenario_as_written(by_id: dict[str, Scenario]) -> None:
    infant = by_id["febrile_infant_6weeks"]
    assert infant.patient_profile.age < RELAY_MIN_AGE
    a, b = told(infant, "default", 2), told(infant, "carer", 2)
    assert a.opening_line == b.opening_line
    for q in ("Is she feeding as well as usual?", "Have you checked her temperature?", "Is she floppy or sleepy?"):
        ra, rb = a.respond(q), b.respond(q)
        assert (ra.text, ra.revealed) == (rb.text, rb.revealed)


# ------------------------------------------------------------------------------------------ limited English


def test_limited_english_does_not_understand_long_clinical_words(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["acs_chest_pain"]
    assert told(scenario, "default").respond("Does the pain radiate anywhere?").revealed == ["radiation"]
    p = told(scenario, "limited-english")
    r = p.respond("Does the pain radiate anywhere?")
    assert r.kind == "not_understood" and r.revealed == [] and r.held == ["radiation"]
    assert "understand" in r.text and reply_problems(r.text, scenario) == {"not_understood"}
    r = p.respond("Does the pain go anywhere else, like into your arm?")
    assert r.revealed == ["radiation"]


def test_limited_english_answers_short_and_keeps_plain_questions(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["acs_chest_pain"]
    p = told(scenario, "limited-english")
    assert p.opening_line == "I've got this pressure in my chest."
    r = p.respond("Is there any dyspnoea? And are you a smoker?")  # one hard sentence, one plain
    assert r.revealed == ["smoking"] and "breathless" in r.held and "understand" in r.text
    assert hard_words("Any haemoptysis, paraesthesia or palpitations?") == ["haemoptysis", "paraesthesia",
                                                                            "palpitations"]
    assert hard_words("Do you feel sick, or have you been coughing up anything?") == []


# ------------------------------------------------------------------------------------------ determinism, records


@pytest.mark.parametrize("preset", list(PERSONA_PRESETS))
def test_each_preset_is_deterministic_for_a_seed(by_id: dict[str, Scenario], preset: str) -> None:
    questions = ["Can you tell me what's happening?", "Does the pain travel anywhere?", "Are you a smoker?",
                 "Have you been diagnosed with any conditions in the past?", "Do you get out of breath?",
                 "Could you ask him?", "Are you a smoker?"]

    def conversation(seed: int) -> list[tuple[str, list[str], str]]:
        p = told(by_id["acs_chest_pain"], preset, seed)
        return [(p.opening_line, [], "")] + [(r.text, r.revealed, r.kind) for r in map(p.respond, questions)]

    assert conversation(4) == conversation(4)


def test_presets_vary_across_seeds(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["acs_chest_pain"]
    asides = {told(scenario, "rambling", s).respond("Are you a smoker?").text for s in range(8)}
    assert len(asides) > 1
    chosen = {frozenset(told(scenario, "carer", s).persona.not_known) for s in range(8)}  # type: ignore[union-attr]
    assert len(chosen) > 1


def test_turns_record_what_the_persona_held_and_old_records_load(by_id: dict[str, Scenario]) -> None:
    scenario = with_persona(by_id["acs_chest_pain"], "poor-recall")

    class Broad:
        name, vision = "broad", False

        async def respond(self, request):  # type: ignore[no-untyped-def]
            from sim.agents.base import AgentReply
            lines = ["Have you been diagnosed with any conditions in the past?",
                     "ASSESSMENT:\nTriage level: ESI 3\nEscalation: urgent"]
            return AgentReply(text=lines[min(request.agent_turn, 2) - 1])

        async def aclose(self) -> None:
            return None

    result = asyncio.run(run_encounter(scenario, Broad(), TextChannel()))
    patient = [t for t in result.turns if t.speaker == "patient"]
    assert patient[1].persona_held == ["risk_factors"] and "withheld" in (patient[1].persona_note or "")
    assert patient[1].answer_kind == "withheld" and "risk_factors" not in result.gathered_info
    old = patient[1].model_dump(exclude={"persona_held", "persona_note"})
    restored = Turn.model_validate(old)
    assert restored.persona_held == [] and restored.persona_note is None


# ------------------------------------------------------------------------------------------ the controls


def test_reply_problems_reads_meaning_not_the_simulators_lines() -> None:
    assert reply_problems("Honestly I can't recall exactly when, my memory's hopeless.") == {"vague"}
    assert reply_problems("I'll need to check with her, she's in the other room.") == {"not_known"}
    assert reply_problems("Sorry, what does that mean? Can you say it more simply?") == {"not_understood"}
    assert reply_problems("I can't think of anything else.") == {"withheld"}
    for line in (*UNSURE_LINES, *NEGATIVE_LINES, "It goes into my left arm and up into my jaw."):
        assert reply_problems(line) == set(), line


CONTROL_SCENARIOS = ["acs_chest_pain", "geriatric_fall_anticoagulant", "stroke_facial_droop", "appendicitis",
                     "asthma_exacerbation_child", "medication_refill_hypertension"]


@pytest.mark.parametrize("control", ["reference", "natural"])
def test_controls_stay_at_0_9_under_every_preset(control: str) -> None:
    items = [i for i in encounter_library() if i.scenario.id in CONTROL_SCENARIOS]
    assert len(items) == len(CONTROL_SCENARIOS)
    scores = asyncio.run(sweep(control, items, list(PERSONA_PRESETS), k=2))
    assert all(v is not None and v >= 0.9 for v in scores.values()), scores


def test_controls_ask_again_and_gather_every_fact_under_each_preset(by_id: dict[str, Scenario]) -> None:
    for preset in ("poor-recall", "carer", "limited-english", "minimiser"):
        for sid in CONTROL_SCENARIOS:
            scenario = with_persona(by_id[sid], preset)
            for control in ("reference", "natural"):
                result = asyncio.run(run_encounter(scenario, SCRIPTED[control](), TextChannel(), seed=5))
                critical = {f.id for f in scenario.information_tree if f.critical}
                assert critical <= set(result.gathered_info), (preset, sid, control)
                assert result.termination == "assessment"


def test_specific_questions_are_told_from_open_ones(by_id: dict[str, Scenario]) -> None:
    understanding = Understanding(by_id["geriatric_fall_anticoagulant"])
    open_question = "Are you on any medicines at the moment?"
    assert "anticoagulant" in understanding.match(open_question)  # the trigger "medicines" matches it...
    assert "anticoagulant" not in understanding.specific(open_question)  # ...but it is an open question
    assert "anticoagulant" in understanding.specific("Are you on warfarin or any other blood thinner?")
    assert "anticoagulant" in understanding.specific("Do you take anything to thin your blood?")


def test_a_partner_speaking_keeps_their_words_and_still_checks(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["stroke_facial_droop"]  # the partner already speaks for him
    seed = next(s for s in range(50) if "allergies" in told(scenario, "carer", s).persona.not_known)  # type: ignore[union-attr]
    p = told(scenario, "carer", seed)
    assert p.opening_line == scenario.opening_line
    r = p.respond("Does he react badly to any drugs, like penicillin?")
    assert r.kind == "not_known" and re.search(r"\bhim\b", r.text)
    r = p.respond("Can you check with him?")
    assert r.revealed == ["allergies"] and r.text == scenario.fact("allergies").answer


def test_limited_english_does_not_understand_jargon_it_has_no_fact_for(by_id: dict[str, Scenario]) -> None:
    question = "Any haemoptysis?"
    assert told(by_id["appendicitis"], "default").respond(question).kind in ("negative", "fallback", "unsure")
    r = told(by_id["appendicitis"], "limited-english").respond(question)
    assert r.kind == "not_understood" and r.revealed == [] and "understand" in r.text


# ------------------------------------------------------------------------------------------ volunteering

OPEN = ["So tell me, what's been happening today?", "Is there anything else you've noticed?",
        "Any other problems at all?", "Has anything else changed?", "Anything else you're worried about?"]


def test_an_open_question_brings_up_one_symptom_critical_first_up_to_three(by_id: dict[str, Scenario]) -> None:
    """Real patients answer "anything else?": the default patient brings up the next symptom, critical first, to
    an open question (in words not taken from the scenarios), and at most three in an encounter."""
    from sim.patient import NOTHING_MORE_LINES, VOLUNTEER_MAX

    for sid in ("stroke_facial_droop", "anaphylaxis_peanut", "appendicitis"):
        scenario = by_id[sid]
        p = told(scenario, "default")
        offered = []
        for q in OPEN:
            r = p.respond(q)
            if r.revealed:
                assert len(r.revealed) == 1 and r.revealed_by == {r.revealed[0]: "volunteered"} and r.kind == "facts"
                offered += r.revealed
            else:  # after the third: never a "no" while there is more to tell
                assert r.text in NOTHING_MORE_LINES and r.kind == "unsure", (sid, q, r.text)
        assert len(offered) == VOLUNTEER_MAX, (sid, offered)
        # which: the symptoms and history of the complaint, critical ones first, each in the tree's order
        kinds = [f for f in scenario.information_tree if f.category.value in ("symptoms", "red_flag", "history")]
        ranked = [f for f in kinds if f.critical] + [f for f in kinds if not f.critical]
        expected: list[str] = []
        while len(expected) < VOLUNTEER_MAX:
            expected.append(next(f.id for f in ranked if f.id not in expected
                                 and (f.requires is None or f.requires in expected)))
        assert offered == expected, (sid, offered, expected)
        # a specific question is answered as before: volunteering adds nothing to it
        q = told(scenario, "default").respond("Have you taken anything for it?")
        assert "volunteered" not in q.revealed_by.values()


def test_poor_recall_and_the_minimiser_do_not_volunteer_what_they_keep_back(by_id: dict[str, Scenario]) -> None:
    from sim.patient.persona import red_flag_ids

    for sid in ("acs_chest_pain", "stroke_facial_droop", "anaphylaxis_peanut", "sepsis_elderly"):
        scenario = by_id[sid]
        critical = {f.id for f in scenario.information_tree if f.critical}
        poor, minimiser = told(scenario, "poor-recall"), told(scenario, "minimiser")
        for q in OPEN:
            assert not set(poor.respond(q).revealed) & critical, (sid, q)
            assert not set(minimiser.respond(q).revealed) & red_flag_ids(scenario), (sid, q)
        assert any(told(scenario, "default").respond(q).revealed for q in OPEN[:1])  # the default does bring one up
