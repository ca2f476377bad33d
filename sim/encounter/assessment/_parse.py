"""``parse_assessment``: every field of an assessment, from its marker on."""

from __future__ import annotations

from sim.encounter.assessment._diagnoses import _read_diagnoses
from sim.encounter.assessment._layout import _fields, _lines
from sim.encounter.assessment._marker import _find
from sim.encounter.assessment._triage import _read_disposition, _read_escalation, _read_level
from sim.records import ParsedAssessment


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
    level = _read_level(section, fields, problems)
    escalation = _read_escalation(section, fields, problems)
    disposition = _read_disposition(section, fields, escalation, problems)
    diagnoses = _read_diagnoses(section, fields)
    if not diagnoses:
        problems.append("no diagnoses (expected e.g. 'Diagnoses: 1. ...; 2. ...')")
    return ParsedAssessment(triage_level=level, escalation=escalation, disposition=disposition, diagnoses=diagnoses,
                            problems=problems, form=form)
