"""Find and parse the agent's final assessment (the rules below; one module per part of them).

The modules: ``_layout`` (lines, markdown, tables, labelled fields), ``_marker`` (where the assessment starts),
``_triage`` (triage level, escalation, disposition), ``_diagnoses``, ``_parse`` (``parse_assessment``) and
``_speech`` (the spoken form).

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

Where the assessment starts (``assessment_form``; ``is_assessment`` is ``assessment_form(...) is not
None``) is the first line that is one of these, and the form is recorded in ``ParsedAssessment.form``:

- ``"plain"``: the protocol's own line, ``ASSESSMENT_RE`` on the line as written: ``assessment:``,
  ``assessment -`` or ``my assessment:`` at the start of a line, any case.
- ``"markdown_label"``: the same rule on the line with markdown removed (``**ASSESSMENT:**``,
  ``**Assessment**:``, ``- Assessment:``, ``> My assessment -``); an en or em dash counts as ``-``.
  "Final", "Clinical", "Overall" or "Triage" before "assessment" also count, when fields follow.
- ``"heading"``: a line that is only "Assessment" (a ``#`` heading, a bold line, a table cell or the
  bare word, any case; "My", "Final", "Clinical", "Overall" or "Triage" before it, "Summary",
  "& Plan", "& Recommendations" and a colon after it are allowed: ``## Final Assessment``,
  ``**My assessment**``, ``**Assessment and Plan:**``) followed, within the next twenty lines, by a
  field: a triage level, escalation or diagnoses label.
- ``"table"``: any of the above whose first field sits in a markdown table.

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
  ``Plan`` / ``Recommendations`` field when it names exactly one, else the one category named
  outside the triage and diagnoses fields (two or more is ambiguous). An escalation field that names
  no category falls back the same way, taking the first category named when there are several.
- diagnoses: every ``Diagnoses`` / ``Differential`` / ``Most likely diagnosis`` / ``Impression``
  field in order, each once ("Most likely diagnosis: X" then "Differential: Y, Z" is X, Y, Z):
  inline (``1. X; 2. Y``, ``X; Y``, ``X, Y``) or as the list under the label, nested detail bullets
  skipped, up to the next field, heading, or paragraph after a blank line. Names lose markdown,
  numbering, hedges ("Likely ...", "Most likely: ..."), trailing qualifiers ("(most likely)",
  "- less likely", ", likely") and an explanation after a colon; other parentheticals ("(STEMI)")
  are kept. An inline value is split at commas as well (outside parentheses), as the protocol's
  own form always was: "Lyme disease, early localized" gives two names.

What cannot be read is left ``None`` and the reason goes to ``problems``; the scorer fails that
component and records the reason.
"""

from __future__ import annotations

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
    "ASSESSMENT_RE", "DISPOSITION_KEYWORDS", "ESCALATION_KEYWORDS", "assessment_form", "disposition_from",
    "from_speech", "is_assessment", "is_spoken_assessment", "parse_assessment", "parse_escalation_line",
]
