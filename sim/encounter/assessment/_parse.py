"""``parse_assessment``: every field of an assessment, from its marker on."""

from __future__ import annotations

import re

from sim.encounter.assessment._diagnoses import _read_diagnoses, _split_inline
from sim.encounter.assessment._layout import _fields, _lines
from sim.encounter.assessment._marker import _find
from sim.encounter.assessment._prose import _NAME_END, prose_diagnoses, prose_disposition, prose_escalation
from sim.encounter.assessment._triage import (
    _MANCHESTER_NAMED,
    _escalation_from,
    _levels,
    _read_disposition,
    _read_escalation,
    _read_level,
    disposition_from,
)
from sim.records import ParsedAssessment

# the marker line's own value: "Assessment: Impetigo (localised).", "A - Acute urinary retention. ESI 3."
_MARKER_VALUE = re.compile(r"^(?:(?:my|final|clinical|overall)\s+)?(?:assessment|a|a\s*/\s*p"
                           r"|a\s*&\s*p)(?:\s*(?:/|&|and)\s*"
                           r"plan)?\s*(?::|[-\u2013\u2014]\s)\s*(?P<value>.+)$", re.IGNORECASE)
_SENTENCE_OPENING = re.compile(r"(?:based|given|from|with|after|because|the|your|his|her|their|our|this|these"
                               r"|that|i|you"
                               r"|we|he|she|they|it)\b", re.IGNORECASE)
_NAME_WORDS = 7  # a diagnosis, not a sentence about one


def _marker_value(marker: str) -> list[str]:
    """The diagnoses the marker line itself names, as a clinical note's "Assessment:" line does.

    The short names of its first sentence, when that sentence names no level, escalation or means of care.
    """
    m = _MARKER_VALUE.match(marker)
    if m is None:
        return []
    first = re.split(r"(?<=[A-Za-z)][.!?])\s", m["value"], maxsplit=1)[0]  # not after "1."
    # "Based on her runny nose, ...": a sentence, read as prose; "ESI 5 / self_care / pharmacist": the decision
    if _SENTENCE_OPENING.match(first) or _levels(first) or _escalation_from(first) or disposition_from(first):
        return []
    names = [_NAME_END.split(n, maxsplit=1)[0].strip() for n in _split_inline(first)]
    names = [n for n in names if n and n.lower() != "final"]
    return [n for n in names if len(n.split()) <= _NAME_WORDS]


def parse_assessment(reply: str) -> ParsedAssessment:
    """Read the agent's final assessment from its reply (see the module docstring).

    Args:
        reply: the agent's reply.

    Returns:
        The fields found from the first assessment marker on, with a note in ``problems`` for each field that
        is missing or unreadable; without a marker, empty fields and one problem saying so.
    """
    lines = _lines(reply)
    found = _find(lines)
    if found is None:
        return ParsedAssessment(problems=["no line beginning 'Assessment:' in the reply"])
    start, form = found
    section = lines[start:]
    fields = _fields(section)
    problems: list[str] = []
    text = "\n".join(line.body for line in section)
    level = _read_level(section, fields, problems, bool(_MANCHESTER_NAMED.search(reply)))
    prose = prose_escalation(text) if form == "prose" else None
    escalation = prose or _read_escalation(section, fields, problems)
    if escalation is None and (prose := prose_escalation(text)) is not None:
        problems[:] = [p for p in problems if not p.startswith(("ambiguous escalation", "no escalation"))]
        problems.append(f"escalation read from the prose: {prose}")
        escalation = prose
    disposition = _read_disposition(section, fields, escalation, problems) or \
        (prose_disposition(text, escalation) if form == "prose" else None)
    named = _marker_value(section[0].body)  # a note's "Assessment: X." names the first, before any "Ddx:" line
    diagnoses = [*named, *(d for d in _read_diagnoses(section, fields) if d.lower() not in map(str.lower, named))]
    diagnoses = diagnoses or prose_diagnoses(text)
    if not diagnoses:
        problems.append("no diagnoses (expected e.g. 'Diagnoses: 1. ...; 2. ...')")
    return ParsedAssessment(triage_level=level, escalation=escalation, disposition=disposition, diagnoses=diagnoses,
                            problems=problems, form=form)
