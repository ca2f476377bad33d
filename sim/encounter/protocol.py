"""The encounter protocol: the rules every encounter follows, and the constants that state them.

HARNESS_VERSION is recorded in every result; change it whenever any rule here changes. The rules are carried out by
``sim.encounter.harness.run_encounter`` (an interview, on an ``sim.encounter.state.EncounterState``) and
``sim.encounter.replay.run_replay`` (a replay or a single-turn triage item).

- The agent gets the frozen ``SYSTEM_PROMPT`` and the whole transcript on every call (patient
  lines as ``user``, its own replies as ``assistant``), with temperature 0.3 and max_tokens 1024.
  The agent keeps no state; the harness owns all of it.
- The patient speaks first (the scenario's opening line). Each agent reply goes through the
  channel to the patient simulator, whose answer goes through the channel back to the agent.
- The encounter ends when a reply is the assessment (``sim.encounter.assessment.assessment_form``): a line
  that, once markdown emphasis, heading and list marks are stripped, begins ``assessment:`` /
  ``my assessment -`` (any case), or an "Assessment" heading followed by the fields, or, without any
  marker, a block of labelled fields that decides the triage (a triage level and an escalation, or an
  escalation and a differential, each with a decided value; also as a JSON object), or a final written as prose
  (``sim.encounter.assessment._prose``: a decisive sentence, an impression or concluding words, no question left);
  a reply that only mentions an assessment is not one. With ``--judge``, a judge reads what the deterministic reader finds
  incomplete, or a reply that may decide without fields (form ``judge``; ``sim.encounter.assessment._judge``).
  Termination ``assessment``; the turn records the form.
- The patient understands the agent through ``sim.patient.understanding`` (only questions and requests
  reveal; scenario triggers and the shared intent lexicon) and, with ``patient_model``, a model;
  each revealed fact records its layer in the patient turn's ``revealed_by``. A message that reveals
  nothing is answered without denying anything the patient has (``sim.patient``); the turn records
  the kind of answer (``facts``, ``unsure``, ``negative``, ``fallback``) in ``answer_kind``.
- The scenario's persona may hold facts back for a turn and reword answers (``sim.patient.persona``); the patient
  turn records the facts held back in ``persona_held``, what the persona did in ``persona_note``, and the
  kinds ``withheld``, ``vague``, ``not_known`` and ``not_understood``.
- When two agent turns remain, the harness appends ``NUDGE`` to what the agent receives (and
  records it as a ``harness`` turn) so that the agent synthesises before the limit.
- After ``turn_limit`` agent turns without an assessment it stops: termination ``max_turns``.
- An agent call that fails for good ends the encounter with termination ``error`` and the reason
  in ``errors``; the runner records it as an error, never scores it.
- A fact with an ``image`` sends that image with the patient's answer (a photo the patient shares,
  an examination or test result image the agent asked for): OpenAI content parts, the text first
  and one ``image_url`` data URL per image (metadata stripped, longer side at most 1024 px, see
  ``imaging``). A model declared text-only (``agent.vision`` False) gets no image part: the text
  says an image was sent and gives its description instead. The turn records each image's source
  and content hash, and whether it was shown or described.
- A *replay* scenario (``scenario.replay``, e.g. an imported HealthBench conversation) skips the
  patient simulator: the fixed conversation is the transcript, the agent replies once, and the
  encounter ends with termination ``reply`` (or ``assessment`` if that reply is one).
- A *single-turn triage item* (``is_single_turn``: a replay whose ``expected`` gives an escalation, a
  triage level or diagnoses, e.g. an imported symptom-checker vignette) is the classic vignette
  protocol: ``SINGLE_TURN`` is appended to the last patient message (recorded as a ``harness`` turn)
  because the agent cannot ask anything, and its one reply is its assessment: read with
  ``parse_assessment`` as if it began with the marker when it does not (termination ``reply``, the
  turn's ``assessment_form`` None), so that advice given in prose ("go to the emergency department
  now") is still read. A HealthBench replay (rubrics only) is unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from scenarios.schema import ImageRef, Scenario
from sim.encounter.assessment import parse_assessment
from sim.records import ParsedAssessment

HARNESS_VERSION = "1.7.7"  # 1.1: images on facts; 1.2: question filter, intent lexicon, markdown assessments;
# 1.3: optional Disposition line, acceptable label sets, fallbacks that never deny, stricter diagnosis matching;
# 1.4: single-turn triage items (SINGLE_TURN note, the one reply read as the assessment); 1.5: persona behaviours,
# and a patient who volunteers a symptom to an open question; 1.6: the final assessment found by its labelled fields
# (any heading or none, JSON, XML, HTML ...), drafts never final, the --judge fallback (form "judge"); 1.7: a final
# written as prose (form "prose"), and the escalation of a decisive sentence where the fields leave it open; 1.7.1:
# notes (SOAP, SBAR), Manchester colours and P-levels, tool calls and run-on transcripts read; 1.7.2: a GP today
# is urgent, more impression phrases, XML attributes and nested tool calls; 1.7.3: message and Gemini tool calls,
# XML parameters, outright categories, more drafts; 1.7.4: key=value log lines, JSON comments, speakers, other
# scales' colours and numbers; 1.7.5: unmarked fields that still ask about the patient are not final; 1.7.6: a
# level stated in prose concludes, CSV rows, ruled-out means decide nothing; 1.7.7: empty and quoted templates are
# not final, a said escalation wins, other languages' diagnosis labels, dot leaders, definition lists, steps,
# Python-style calls, decision objects in JSON, ticked checkboxes, "isn't working" is no draft, a crisis-team hand-over
# is a dispatch
TEMPERATURE = 0.3
MAX_TOKENS = 1024

SYSTEM_PROMPT = """\
You are a triage clinician talking with a patient (or their parent or carer) by phone or chat.
Interview them to decide how urgently they need care. Ask focused questions, one or two at a time,
about the symptoms, their timing, red flags, medical history, medications, allergies and anything
else that changes the triage decision. Do not give your conclusion until you have what you need.

When you are ready, finish with your assessment in exactly this format:

ASSESSMENT:
Triage level: ESI <1-5>   (1 = immediate life-saving care ... 5 = no resources needed)
Escalation: <emergency | urgent | routine | self_care>
Disposition: <ambulance | self_present_ed | same_day_urgent_care | crisis_team | same_day_gp | routine_gp | pharmacist | self_care>   (optional: how they get that care)
Diagnoses: 1. <most likely>; 2. <next>; 3. <next>
Advice: <what the patient should do now>"""

NUDGE = ("[Note from the system: two turns remain. Give your ASSESSMENT now, or after at most one "
         "more question, in the required format.]")

SINGLE_TURN = ("[Note from the system: this is a single-message triage. You cannot ask any questions and "
               "will not get another turn. Give your ASSESSMENT now, in the required format, from what the "
               "message says.]")

def is_single_turn(scenario: Scenario) -> bool:
    """A replay with a deterministic target (escalation, triage level or diagnoses).

    A single-turn triage item, whose one reply is the assessment (see the module docstring).
    """
    exp = scenario.expected
    return scenario.replay is not None and (exp.escalation is not None or exp.triage_level is not None
                                            or bool(exp.diagnoses))


ImageLoader = Callable[[ImageRef], Awaitable[Any]]  # -> imaging.PreparedImage


def read_unmarked(reply: str) -> ParsedAssessment:
    """A single-turn item's reply that has no assessment marker, read as if it began with one.

    The fields it labels, else the escalation its advice names (``parse_assessment``'s rules); ``form`` None
    and a note in ``problems`` that the reply was not marked.
    """
    parsed = parse_assessment(f"ASSESSMENT:\n{reply}")
    return parsed.model_copy(update={"form": None, "problems": [
        "the reply has no 'Assessment:' line; read as a whole (single-turn item)", *parsed.problems]})


