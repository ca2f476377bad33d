"""The final assessment found by its labelled fields, not by the word "assessment" (issue 35).

A chat model's final block may be headed "Triage decision", "Summary & recommendation" or nothing at all, be
announced inside a sentence ("here is my assessment"), be a JSON object, or put the differential on one line
after a pipe or an arrow. Each FIELDS case must end the encounter and parse to its level, escalation and
diagnoses; each MENTION case is a turn from the middle of an interview and must not. These examples are our own,
written from the kinds of layout the held-out review named (not from its replies).
"""

from __future__ import annotations

import pytest

from sim.encounter.assessment import assessment_form, is_assessment, parse_assessment

# reply, level, escalation, the diagnoses in order (lowercase substrings)
FIELDS: dict[str, tuple[str, int | None, str, list[str]]] = {
    "heading-triage-decision": ("""Thanks for bearing with all my questions.

### Triage decision
- **Acuity:** ESI 3
- **Urgency:** same-day urgent care
- **Likely causes:** renal colic; pyelonephritis; biliary colic

Drink water and take paracetamol for the pain while you wait to be seen.""",
                                3, "urgent", ["renal colic", "pyelonephritis", "biliary colic"]),
    "summary-and-recommendation": ("""**Summary & recommendation**

**Triage level** — 2
**Escalation** — emergency (call an ambulance)
**Differential** — pulmonary embolism, pneumonia, pneumothorax""",
                                   2, "emergency", ["pulmonary embolism", "pneumonia", "pneumothorax"]),
    "emoji-field-lines": ("""Okay, I've got what I need.

🚦 Triage level: ESI 4
🏥 Escalation: routine, book with your GP this week
🩺 Diagnoses: 1. Plantar fasciitis 2. Achilles tendinopathy 3. Stress fracture

Ice the heel and wear supportive shoes in the meantime.""",
                          4, "routine", ["plantar fasciitis", "achilles tendinopathy", "stress fracture"]),
    "sentence-then-numbered-dash": ("""Thank you, that's really helpful. Based on all you told me, here is my \
assessment of the situation:

1. **Triage level** - ESI 2
2. **Escalation** - emergency
3. **Diagnoses** - sepsis from a chest infection; urinary sepsis; influenza

Please call 999 now and tell them you think she has sepsis.""",
                                    2, "emergency", ["sepsis from a chest infection", "urinary sepsis", "influenza"]),
    "sentence-then-bold-inline": ("""I've heard enough to give you my view, so here's where I've landed.

**Triage level:** ESI 5 **|** **Escalation:** self_care

**Most likely:** tension-type headache; **others:** medication-overuse headache, sinusitis

Regular meals, water and a short walk should help.""",
                                  5, "self_care", ["tension-type headache"]),
    "json-block": ("""Here is the structured result:

```json
{
  "triage_level": "ESI 3",
  "escalation": "urgent",
  "disposition": "same_day_gp",
  "diagnoses": ["Otitis media", "Otitis externa", "Referred dental pain"]
}
```""", 3, "urgent", ["otitis media", "otitis externa", "referred dental pain"]),
    "json-nested-objects": ("""{"assessment": {"esiLevel": 1, "escalation": "emergency",
  "differential": [{"name": "Anaphylaxis", "likelihood": "high"}, {"name": "Angioedema", "likelihood": "low"}]}}""",
                            1, "emergency", ["anaphylaxis", "angioedema"]),
    "pipe-diagnoses": ("""Decision
Triage: ESI 3
Escalation: urgent
Dx: biliary colic | acute cholecystitis | peptic ulcer""", 3, "urgent",
                       ["biliary colic", "acute cholecystitis", "peptic ulcer"]),
    "arrow-diagnoses": ("""Putting that together:
ESI level: 4
Recommendation: routine GP appointment
Working diagnosis → carpal tunnel syndrome → cervical radiculopathy""", 4, "routine",
                        ["carpal tunnel syndrome", "cervical radiculopathy"]),
    "fields-no-heading-comma-dx": ("""Triage level: ESI 2
Escalation: emergency
Diagnoses: ectopic pregnancy, ovarian torsion, appendicitis
Advice: go to the emergency department now; don't drive yourself.""", 2, "emergency",
                                   ["ectopic pregnancy", "ovarian torsion", "appendicitis"]),
    "final-that-ends-with-a-question": ("""## Where we are
**Acuity:** ESI 4
**Where to go:** your GP within the next week (routine)
**Impression:** benign paroxysmal positional vertigo; vestibular neuritis

Does that plan sound okay to you?""", 4, "routine", ["benign paroxysmal positional vertigo", "vestibular neuritis"]),
    "html-breaks": ("<strong>Acuity:</strong> 2<br/><strong>Urgency:</strong> emergency, call 911<br/>"
                    "<strong>Impression:</strong> acute stroke; hypoglycaemia", 2, "emergency",
                    ["acute stroke", "hypoglycaemia"]),
    "xml-tags": ("<result>\n<acuity>4</acuity>\n<urgency>routine</urgency>\n<impression>trigger finger</impression>\n"
                 "</result>", 4, "routine", ["trigger finger"]),
    "inline-bold-labels": ("**Acuity:**3 **Urgency:**urgent **Impression:**Renal colic,Pyelonephritis", 3, "urgent",
                           ["renal colic"]),
    "bracket-tags": ("[Level 2] [EMERGENCY] [ambulance] Dx: Meningococcal sepsis\n\nStay with him until they arrive.",
                     2, "emergency", ["meningococcal sepsis"]),
    "equals-pairs": ("RESULT >> acuity=5; urgency=self_care; dx=Insect bite", 5, "self_care", ["insect bite"]),
    "slash-separated": ("ESI: 3 / Escalation: urgent / Dx: Cellulitis of the shin", 3, "urgent", ["cellulitis"]),
    "other-scale-name": ("Manchester Triage System: Priority 2 \u2013 Very urgent (orange)\nEscalation: emergency\n"
                         "Differential: sepsis", 2, "emergency", ["sepsis"]),
    "scale-level-words": ("Okay. Triage level two. Escalation: emergency, an ambulance is on the way for you.\n"
                          "Diagnoses: ectopic pregnancy", 2, "emergency", ["ectopic pregnancy"]),
    "numbered-diagnosis-rows": ("| Field | Value |\n|---|---|\n| Acuity | ESI 3 |\n| Urgency | urgent |\n"
                                "| Differential 1 | Gout |\n| Differential 2 | Septic arthritis |", 3, "urgent",
                                ["gout", "septic arthritis"]),
    "differential-includes": ("Acuity: ESI 4\nEscalation: routine, see your GP next week\n"
                              "Differential includes lateral epicondylitis and radial tunnel syndrome", 4, "routine",
                              ["lateral epicondylitis"]),
    "unlabelled-decision-lines": ("\U0001f7e1 ESI 4\n\U0001f3e5 Same-day GP appointment\n"
                                  "\U0001fa7a Diagnosis: otitis media", 4, "urgent", ["otitis media"]),
    "descriptor-is-not-escalation": ("Triage level: 3 (urgent)\nDisposition: routine GP appointment this week\n"
                                     "Diagnoses: gallstones", 3, "routine", ["gallstones"]),
    "fullwidth-cjk": ("\u3010\u7ed3\u8bba\u3011\n1\uff09Acuity\uff1aESI 3\n2\uff09Urgency\uff1aurgent\n"
                      "3\uff09Impression\uff1a\u2460 Biliary colic\uff1b\u2461 Cholecystitis", 3, "urgent",
                      ["biliary colic", "cholecystitis"]),
    "soap-note": ("S: 40F, 3 days of cough.\nO: afebrile per pt.\nA: Acuity ESI 4. Ddx:\n - Acute bronchitis\n"
                  " - Pneumonia\nP: Routine GP review if no better in 3 weeks. Disposition: routine GP.", 4, "routine",
                  ["acute bronchitis", "pneumonia"]),
    "tool-call-arguments": ('finalise(\n  acuity=2,\n  urgency="emergency",\n'
                            '  differential=["Sepsis", "Pneumonia"],\n)',
                            2, "emergency", ["sepsis", "pneumonia"]),
    "all-caps-one-line": ("RESULT. ACUITY: ESI 3. URGENCY: URGENT. IMPRESSION: 1. RENAL COLIC; 2. PYELONEPHRITIS. "
                          "ADVICE: GO TODAY.", 3, "urgent", ["renal colic", "pyelonephritis"]),
    "positional-pipes": ("ESI 4 | routine | routine_gp | Plantar fasciitis; Heel spur", 4, "routine",
                         ["plantar fasciitis", "heel spur"]),
    "combined-labels": ("ESI / urgency: 2 / emergency\nDx: Ectopic pregnancy", 2, "emergency", ["ectopic pregnancy"]),
    "html-list": ("<h3>Summary</h3>\n<ul>\n<li><b>Acuity:</b> 5</li>\n<li><b>Urgency:</b> self-care</li>\n"
                  "<li><b>Impression:</b> Common cold</li>\n</ul>", 5, "self_care", ["common cold"]),
    "xml-items": ("<Result kind=\"triage\">\n<AcuityLevel scale=\"ESI\">2</AcuityLevel>\n"
                  "<Urgency>emergency</Urgency>\n<Diagnoses>\n<entry>Pulmonary embolism</entry>\n"
                  "<entry>Pneumothorax</entry>\n</Diagnoses>\n</Result>",
                  2, "emergency", ["pulmonary embolism", "pneumothorax"]),
    "final-with-draft-words-elsewhere": ("Based on what you've told me so far, here is where I land.\n\n"
                                         "Acuity: ESI 2\nUrgency: emergency - call 999\n"
                                         "Provisional diagnosis: testicular torsion\n\nWhile you're waiting for the "
                                         "ambulance, don't let him eat or drink anything for now.", 2, "emergency",
                                         ["testicular torsion"]),
}

MENTIONS = {
    "asks-before-deciding": "I can't give you an urgency level yet. Before I do: is the pain worse when you breathe "
                            "in, and have you coughed up any blood?",
    "pain-score-and-level-question": "**Pain level:** you said 7/10.\n**Next question:** does anything make it "
                                     "better or worse?",
    "provisional-level-with-questions": "So far this looks like it could be ESI 3, but I need a few more answers:\n"
                                        "- Any fever?\n- Any blood in your urine?",
    "warning-list-only": "Warning signs to watch for while we talk:\n- chest pain\n- fainting\n- trouble breathing\n"
                         "Now, how long have you had the cough?",
    "plan-for-later": "Once I know a little more I'll tell you the triage level, whether you need to go in, and "
                      "what I think is going on. First, when did this start?",
    "json-question": '```json\n{"question": "Do you have any allergies?", "reason": "medication safety"}\n```',
    "conditional-advice-lines": "ESI will depend on a couple of answers.\nCall 999 if he goes floppy.\n"
                                "Likely causes: I'm not sure yet. Is he feeding?",
    "interim-notes-pending": "Interim notes\nAcuity: pending\nUrgency: to be decided after your answers\n"
                             "Working diagnosis: ?migraine\nHow long has the headache lasted?",
    "json-marked-unfinished": '{"status": "pending", "acuity": 3, "urgency": "urgent", "impression": ["Cellulitis"], '
                              '"question": "Any fever?"}',
    "provisional-fields": "Provisional acuity: ESI 3\nUrgency: urgent, provisionally\nWorking diagnosis: cellulitis\n"
                          "Is the redness spreading?",
    "draft-block": "ASSESSMENT (draft, not final)\nTriage level: ESI 3\nEscalation: urgent\nDiagnoses: renal colic\n\n"
                   "Does the pain come in waves?",
    "deferred-values": "ASSESSMENT:\nTriage level: ESI 2 or 3?\nEscalation: TBD\nDiagnoses: meningitis vs migraine\n\n"
                       "Has she had a rash anywhere?",
    "undecided-in-words": "**Acuity:** ESI 4\n**Urgency:** routine\n**Impression:** tennis elbow\n\nBefore I confirm "
                          "this, does the pain wake you at night?",
    "nested-json-not-final": '```json\n{"assessment": {"final": false, "acuity": 2, "urgency": "emergency", '
                             '"impression": ["Sepsis"]}, "next_question": "Is she passing urine?"}\n```',
    "status-footer": "Triage level: ESI 3\nEscalation: urgent\nDiagnoses: gout\nStatus: draft - one more question\n"
                     "Have you had any kidney problems?",
    "final-flag-no": "**Acuity:** 2\n**Urgency:** emergency\n**Impression:** sepsis\n**Final:** not yet\n\n"
                     "Is she passing urine?",
    "yaml-final-no": "acuity: 4\nurgency: routine\nimpression:\n  - plantar fasciitis\nfinal: no\n"
                     "Does the heel hurt first thing in the morning?",
    "xml-attribute": '<triage final="false">\n<acuity>1</acuity>\n<urgency>emergency</urgency>\n'
                     '<impression>anaphylaxis</impression>\n</triage>\nIs his tongue swelling?',
    "two-levels": "Triage level: ESI 2 or 3\nEscalation: emergency\nDiagnoses: pre-eclampsia\n"
                  "What was your blood pressure this morning?",
    "template-echo": "At the end I'll give you my view like this:\nTriage level: ESI <1-5>\n"
                     "Escalation: <emergency | urgent | routine | self_care>\nDiagnoses: <list>\n\n"
                     "What's the problem today?",
    "hypothetical": "If I had to decide now it would look like this:\nAcuity: ESI 3\nUrgency: urgent\n"
                    "Impression: biliary colic\nBut I'd like to ask more first. Any yellow in your eyes?",
    "bracket-working-tag": "[Working] ESI 4 | routine | Dx: carpal tunnel | still need to know about neck pain",
    "escalation-word-in-a-question": "**Escalation check:** has he had any trouble breathing, or gone blue around "
                                     "the lips?",
}


@pytest.mark.parametrize(("reply", "level", "escalation", "diagnoses"),
                         [pytest.param(*c, id=k) for k, c in FIELDS.items()])
def test_final_found_by_its_fields(reply: str, level: int | None, escalation: str, diagnoses: list[str]) -> None:
    assert is_assessment(reply)
    parsed = parse_assessment(reply)
    assert (parsed.triage_level, parsed.escalation) == (level, escalation), parsed
    got = [d.lower() for d in parsed.diagnoses]
    assert len(got) >= len(diagnoses) and all(want in g for want, g in zip(diagnoses, got, strict=False)), got


@pytest.mark.parametrize("reply", [pytest.param(v, id=k) for k, v in MENTIONS.items()])
def test_a_mention_does_not_end_the_encounter(reply: str) -> None:
    assert assessment_form(reply) is None


def test_forms_name_the_layout() -> None:
    assert assessment_form(FIELDS["json-block"][0]) == "json"
    assert assessment_form(FIELDS["json-nested-objects"][0]) == "json"
    assert assessment_form(FIELDS["emoji-field-lines"][0]) == "fields"
    assert assessment_form(FIELDS["heading-triage-decision"][0]) == "fields"


def test_one_field_alone_is_not_a_final_assessment() -> None:
    # a level with nothing else, or an escalation with nothing else, is a mention, however it is labelled
    assert assessment_form("Triage level: probably ESI 3 so far. Have you had a fever?") is None
    assert assessment_form("**Urgency:** I'll decide that once I know whether you can keep fluids down.") is None


def test_a_diagnosis_judged_unlikely_is_not_on_the_differential() -> None:
    # as the scorer reads "X unlikely"; "less likely" is a lower rank, and one still to be excluded stays
    block = "ASSESSMENT:\nTriage level: ESI 3\nEscalation: urgent\nDiagnoses: "
    assert parse_assessment(block + "1. Renal colic; 2. AAA - unlikely; 3. Pyelonephritis (unlikely)").diagnoses \
        == ["Renal colic"]
    assert parse_assessment(block + "1. Renal colic 2. Unlikely to be appendicitis").diagnoses == ["Renal colic"]
    assert parse_assessment(block + "1. Renal colic; 2. AAA (unlikely, but must be ruled out)").diagnoses \
        == ["Renal colic", "AAA"]
    assert len(parse_assessment(block + "Renal colic; pyelonephritis, less likely").diagnoses) == 2


def test_a_csv_header_and_its_row_are_fields() -> None:
    reply = ("esi,escalation,disposition,dx1,dx2,advice\n"
             "4,routine,routine_gp,Haemorrhoids,Anal fissure,\"Book a GP appointment; fibre, fluids\"")
    p = parse_assessment(reply)
    assert p.form == "fields" and (p.triage_level, p.escalation, p.disposition) == (4, "routine", "routine_gp")
    assert p.diagnoses[:2] == ["Haemorrhoids", "Anal fissure"]
    # a header that names no fields is a CSV of something else
    assert assessment_form("name,dose,times\nparacetamol,1g,4") is None
