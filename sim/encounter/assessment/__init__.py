"""Find and parse the agent's final assessment (the rules below; one module per part of them).

The modules: ``_layout`` (lines, markdown, tables, JSON objects, labelled fields), ``_marker`` (where the
assessment starts), ``_prose`` (a final written as prose), ``_triage`` (triage level, escalation, disposition),
``_diagnoses``, ``_parse`` (``parse_assessment``), ``_speech`` (the spoken form) and ``_judge`` (the ``--judge``
fallback).

The harness protocol asks the agent to finish with a block such as::

    ASSESSMENT:
    Triage level: ESI 2
    Escalation: emergency
    Diagnoses: 1. Acute coronary syndrome; 2. Aortic dissection
    Advice: call an ambulance

Chat models dress that block in markdown, so every line is read with its markdown removed: emphasis
(``**``, ``__``, ``*``, ``_`` around words; ``self_care`` keeps its underscore), inline code, heading
marks ``#``, blockquote ``>``, bullet and number markers (``-``, ``*``, ``+``, ``•``, ``1.``, ``1)``)
and leading emoji. A markdown table is read row by row as ``first cell: other cells`` lines; a table
whose header names two fields or more (``| Triage level | Escalation | Diagnosis |``) is read column
by column, and one with a diagnosis column (``| # | Diagnosis | Likelihood |``) as a diagnosis list.

Other dress is read the same way: full-width forms as ASCII (NFKC; circled numbers as "1."), HTML emphasis, list
items, table cells and breaks, XML-style fields (``<triage_level>3</triage_level>``, a tag with attributes, an item
tag inside a list tag), ``key=value`` and tool-call arguments, and several fields on one line (split at ``|``,
``;``, `` / ``, an em dash or middle dot, or a sentence or dash break before the next ``Label:``; several inline
bold labels; bracketed tags ``[ESI 4] [URGENT]``; the protocol's fields in order without labels, ``ESI 5 |
self_care | ...``; combined labels ``ESI / escalation: 4 / routine``). Labels may be the protocol's or their common
variants: ``Acuity``, ``Priority``, ``Category``, a named scale (``Manchester Triage System``), ``Urgency``,
``How urgent``, ``Where to go``, ``Who to see``, ``Impression``, ``Dx``, ``Likely causes``, ``What I think it is``,
``Diagnosis 1``, ``Differential includes ...``. Spoken levels ("triage level three", "a triage level of two",
"E S I five") are numbers, and so are the Manchester Triage System's colours where the text names that scale ("MTS:
ORANGE" is 2; so is "Priority: ORANGE" under a "Manchester Triage outcome" heading) and ``P1`` to ``P5``; "within
N hours" (N up to 24) and "within the hour" are urgent.
A tool call's arguments (``Arguments: {...}``, a call ``submit_assessment({...})``, or a JSON string holding the
object, also inside a ``{"function": {"name": ..., "arguments": "..."}}`` call, a message's ``tool_calls`` list or a
Gemini reply's ``parts`` ... ``functionCall``) are read as its JSON object (a ``null`` value says nothing), an XML
tag's attributes as fields (``<final_assessment esi="3" escalation="urgent">``), and an XML parameter by its name
(``<parameter name="triage_level">2</parameter>``); a CSV header naming two fields or more reads the row under it
as fields (``esi,escalation,dx1`` then ``4,routine,Haemorrhoids``); a log line of three or more ``key=value`` pairs
is read as fields (``dx1="X" dx2="Y"`` a list); JSON with ``//`` comments is read without them, and an XML tag's
attributes count only when they are fields (not ``version="1.0"``). "lvl" is "level"; a transcript's "e s i four"
is ESI 4; a transcript's speaker ("AGENT:") and a markdown admonition's tag ("[!WARNING]") are removed; a colour with
its Manchester descriptor ("GREEN (standard)") is an MTS priority; "call 000" and "triple zero" are an ambulance,
"PCP" and "within 2 weeks" routine.

Where the assessment starts (``assessment_form``; ``is_assessment`` is ``assessment_form(...) is not
None``) is the first line that is one of these, and the form is recorded in ``ParsedAssessment.form``:

- ``"plain"``: the protocol's own line, ``ASSESSMENT_RE`` on the line as written: ``assessment:``,
  ``assessment -`` or ``my assessment:`` at the start of a line, any case.
- ``"markdown_label"``: the same rule on the line with markdown removed (``**ASSESSMENT:**``,
  ``**Assessment**:``, ``- Assessment:``, ``> My assessment -``); an en or em dash counts as ``-``.
  "Final", "Clinical", "Overall" or "Triage" before "assessment" also count, when fields follow.
- a clinical note's assessment section: "A:", "A -" or "A/P:" in a SOAP or SBAR note (an "S:" or "Situation:"
  section above it), unless a draft word or a question follows it; its value names the first diagnoses ("A: Acute
  pyelonephritis. Ddx: ..."), as the value of an "Assessment:" line that names no level, escalation or means does.
- ``"heading"``: a line that is only "Assessment" (a ``#`` heading, a bold line, a table cell or the
  bare word, any case; "My", "Final", "Clinical", "Overall" or "Triage" before it, "Summary",
  "& Plan", "& Recommendations" and a colon after it are allowed: ``## Final Assessment``,
  ``**My assessment**``, ``**Assessment and Plan:**``) followed, within the next twenty lines, by a
  field: a triage level, escalation or diagnoses label.
- ``"table"``: any of the above whose first field sits in a markdown table.
- ``"json"``: any of the above (or the fields below) read from a JSON object: a fenced code block holding one
  object, or an unfenced object; keys are read as labels (``triage_level``, ``esiLevel``, ``differential``), a
  nested object as its own block, a list of names (or of objects with a ``name``/``diagnosis``) as a list.
- ``"fields"``: no marker at all, but a block of labelled fields (at most six lines apart) that decides the
  triage: a triage level and an escalation (or a disposition), each with a decided value, or an escalation and a
  differential. The heading above them may say anything ("Triage decision", "Summary & recommendation") or
  nothing, and "here is my assessment" may sit inside a sentence. A value that defers the decision (a question,
  "so far", "pending", "once I ...", "tbd") is not decided, so a provisional level in the middle of an interview
  is not a final; nor is a block that goes on to ask about the patient ("**Likely:** croup ... So can you listen to
  him for me - is there a harsh noise?"; ``_prose.asks_interview_question``).
- ``"prose"``: no marker and no block of fields, but a final written as prose (``_prose``): a sentence that decides
  a triage level or an escalation (not a question, not conditional, hypothetical, deferring or about the illness's
  course), an impression ("this sounds like X", "most likely X", "signs of X") or concluding words ("putting it all
  together", "my final answer"), and no interview question left (closing checks such as "Does that make sense?"
  are allowed, and so is a practical question after a dispatch: "I'm sending an ambulance now ... Is the door
  unlocked?"); a reply announcing questions ("I'm going to ask a few quick questions") is not final. Voice
  transcripts and SSML are prose too: markup is removed, "level three", "E S I five" and "nine one one" are read as
  numbers. Its escalation is the first decisive sentence's, its diagnoses those of a list
  phrase ("my diagnoses, in order: X, Y", "other possibilities: Y, Z" after the impression) or of the impression
  phrases (the name after "called" or "known as": "a tear in the main artery, called an aortic dissection"; "sounds
  like your son has X", "seems to have X", "could be caused by X"), what a sentence rules out left out; "could mean
  X" in a safety-net sentence is no impression. A run-on transcript is also split before "your triage level", "the
  most likely" and the like, and "level is two" is spoken level 2. A GP named with the day ("ring your GP practice
  this morning") is a same-day GP, so urgent; "the least urgent" names no category, "there's no need to see a
  doctor" is self-care, and thanks for what happened ("thank you for calling today") decide nothing. A sentence
  that opens with "Likely", "Prob" or "Possibly" names its impression ("Likely broken ankle."), as do "you may have
  a X", "treating this as X", "sounds very much like X" and "is a possible X". An escalation field that opens with
  its category ("Urgent - attend eye casualty today") is that category whatever means it names; "call 999 if ..."
  and "without needing to see a GP" name no means; "you don't need to see anyone" is self-care, "nothing urgent"
  and "no appointment needed" name no category. "Suspected X." opens an impression like "Likely X.", and so do
  "what we're dealing with here is X" and "that's very likely X". A triage level stated as a decision ("This is a
  triage level 1 emergency.") concludes by itself; a clause that rules out emergency care ("it's not something that
  needs A&E, but ...") decides nothing, and a scale's own descriptor ("ATS 5 (non-urgent)") is no escalation.
- ``"judge"``: with ``--judge``, the judge fallback (``_judge``): a judge reads a found assessment whose level,
  escalation or diagnoses could not be read, and a reply without marker or fields that may still decide (it names
  a level, or an escalation outside a question, or it is the last turn); the judge's values are read with these
  same rules and fill only what the reader missed.

A reply that only mentions an assessment is not one: "Before I give my assessment, ...", "I'll assess
your breathing:", "To complete my assessment: ...", "Assessment of your breathing: ...",
"Reassessment: tomorrow" and "My assessment so far is ..." do not begin with the marker; a heading
with no field after it is a section title, not the assessment; and a label line whose text after the
marker is a question (``Assessment: any allergies?``) is one only when a field follows it.

``parse_assessment`` reads, from the marker on, the fields by their labels (``Label:``,
``Label - value``, or a label alone on its line with the value on the next lines, e.g. a
``### Escalation`` heading):

- triage level: the ``Triage level`` / ``Triage`` / ``ESI`` / ``Acuity`` / ``CTAS`` field
  (``ESI 2``, ``ESI-2``, ``ESI level 2``, ``Level 2 (emergent)``, ``2 - Emergent``); without one,
  any such phrase in the text. Several different levels: the first is used and ``problems`` says so.
- escalation: the first category named in the ``Escalation`` / ``Disposition`` / ``Recommendation``
  / ``Urgency`` field (keywords in ``ESCALATION_KEYWORDS``: "emergency", "call 911", "an ambulance"
  and "go to the ER/ED" are emergency, "urgent care" and "same day" urgent, "see your GP" and "book
  an appointment" routine, "self-care" and "home care" self_care; "not an emergency" names none and
  "non-urgent" is routine), so that safety-netting elsewhere ("if it gets worse, call 911") cannot
  override it. Without such a field: the category of the first sentence of the ``Advice`` /
  ``Plan`` / ``Recommendations`` field when it names exactly one (naming none, the category of the means of care it
  names: "Plan: pharmacist for a cream"), else the one category named
  outside the triage and diagnoses fields (two or more is ambiguous). An escalation field that names
  no category falls back the same way, taking the first category named when there are several. A field naming
  several ("your GP surgery today, a same-day appointment") takes the one its means of care belongs to. Where
  all this leaves the escalation open, the first decisive sentence (``_prose``) gives it.
- diagnoses: every ``Diagnoses`` / ``Differential`` / ``Most likely diagnosis`` / ``Impression``
  field in order, each once ("Most likely diagnosis: X" then "Differential: Y, Z" is X, Y, Z):
  inline (``1. X; 2. Y``, ``X; Y``, ``X, Y``, ``X | Y``, ``X -> Y``, ``X \u2192 Y``) or as the list under the
  label, nested detail bullets skipped, up to the next field, heading, or paragraph after a blank line.
  Names lose markdown, numbering, hedges ("Likely ...", "Most likely: ..."), trailing qualifiers ("(most likely)",
  "- less likely", ", likely") and an explanation after a colon; other parentheticals ("(STEMI)")
  are kept. An inline value is split at commas as well (outside parentheses), as the protocol's
  own form always was: "Lyme disease, early localized" gives two names.

What cannot be read is left ``None`` and the reason goes to ``problems``; the scorer fails that
component and records the reason.
"""

from __future__ import annotations

from sim.encounter.assessment._judge import AssessmentJudge, looks_final, needs_judge
from sim.encounter.assessment._layout import ASSESSMENT_RE
from sim.encounter.assessment._marker import assessment_form, is_assessment
from sim.encounter.assessment._parse import parse_assessment
from sim.encounter.assessment._speech import from_speech, is_spoken_assessment
from sim.encounter.assessment._triage import (
    DISPOSITION_KEYWORDS,
    ESCALATION_KEYWORDS,
    disposition_from,
    parse_escalation_line,
)

__all__ = [
    "ASSESSMENT_RE", "DISPOSITION_KEYWORDS", "ESCALATION_KEYWORDS", "AssessmentJudge", "assessment_form",
    "disposition_from", "from_speech", "is_assessment", "is_spoken_assessment", "looks_final", "needs_judge",
    "parse_assessment", "parse_escalation_line",
]
