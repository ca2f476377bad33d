"""Where an assessment starts: the marker forms ``plain``, ``markdown_label``, ``heading`` and ``table``."""

from __future__ import annotations

import re

from sim.encounter.assessment._layout import _FIELD_KINDS, ASSESSMENT_RE, _field, _fields, _Line, _lines

_LABEL_MARKER = re.compile(
    r"^(?:(?P<qualifier>my|final|clinical|overall|triage)\s+)?assessment\s*[:\-\u2013\u2014]\s*(?P<rest>.*)$",
    re.IGNORECASE)
_HEADING_MARKER = re.compile(
    r"^(?:(?:my|final|clinical|overall|triage)\s+)?assessment"
    r"(?:\s+(?:summary|(?:and|&)\s+(?:plan|recommendations?|advice|next steps)))?\s*:?$", re.IGNORECASE)
_FIELDS_WINDOW = 20  # lines after a heading in which its fields must start


def _fields_follow(lines: list[_Line], i: int) -> bool:
    return any((f := _field(line)) is not None and f.kind in _FIELD_KINDS
               for line in lines[i + 1:i + 1 + _FIELDS_WINDOW])


def _is_question(text: str) -> bool:
    return re.sub(r"[^\w?]+$", "", text).endswith("?")


def _marker_form(lines: list[_Line], i: int) -> str | None:
    line = lines[i]
    m = _LABEL_MARKER.match(line.body)
    if m:
        # a question after the marker ("Assessment: any allergies?") or a qualified label is only the
        # assessment when fields follow; the protocol's bare "Assessment:" line always is
        qualified = (m["qualifier"] or "my").lower() != "my"
        if (qualified or _is_question(m["rest"])) and not _fields_follow(lines, i):
            return None
        return "plain" if not line.table and ASSESSMENT_RE.match(line.raw) else "markdown_label"
    if _HEADING_MARKER.match(line.body) and _fields_follow(lines, i):
        return "heading"
    return None


def _find(lines: list[_Line]) -> tuple[int, str] | None:
    """The index of the line that starts the assessment and its form."""
    for i in range(len(lines)):
        form = _marker_form(lines, i)
        if form is not None:
            section = lines[i:]
            first = next((section[j] for j, f in _fields(section) if f.kind in _FIELD_KINDS), None)
            table = section[0].table or (first is not None and first.table)
            return i, "table" if table else form
    return None


def assessment_form(text: str) -> str | None:
    """How ``text`` marks its final assessment ("plain", "markdown_label", "heading", "table"), or None."""
    found = _find(_lines(text))
    return found[1] if found else None


def is_assessment(text: str) -> bool:
    """Whether ``text`` holds a final assessment (``assessment_form(text) is not None``)."""
    return assessment_form(text) is not None
