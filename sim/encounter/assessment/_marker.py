"""Where an assessment starts: a marker (``plain``, ``markdown_label``, ``heading``, ``table``), else its fields.

Without a marker, a block of labelled fields that decides the triage starts it (``fields``, ``json``).
"""

from __future__ import annotations

import re

from sim.encounter.assessment._diagnoses import _field_diagnoses
from sim.encounter.assessment._draft import _DRAFT, _DRAFT_WORDS, _NOT_WORKING, is_draft
from sim.encounter.assessment._layout import (
    _FIELD_KINDS,
    ASSESSMENT_RE,
    _block,
    _Field,
    _field,
    _field_text,
    _fields,
    _Line,
    _lines,
)
from sim.encounter.assessment._prose import _asks, asks_interview_question, is_prose_final, sentences
from sim.encounter.assessment._triage import (
    _MANCHESTER_NAMED,
    _escalation_from,
    _field_levels,
    _levels,
    decision_escalation,
    disposition_from,
)

_LABEL_MARKER = re.compile(
    r"^(?:(?P<qualifier>my|final|clinical|overall|triage)\s+)?assessment\s*[:\-\u2013\u2014]\s*(?P<rest>.*)$",
    re.IGNORECASE)
_HEADING_MARKER = re.compile(
    r"^(?:(?:my|final|clinical|overall|triage)\s+)?assessment"
    r"(?:\s+(?:summary|(?:and|&|/)\s+(?:plan|recommendations?|advice|next steps)))?\s*:?$", re.IGNORECASE)
_FIELDS_WINDOW = 20  # lines after a heading in which its fields must start


def _fields_follow(lines: list[_Line], i: int) -> bool:
    return any((f := _field(line)) is not None and f.kind in _FIELD_KINDS
               for line in lines[i + 1:i + 1 + _FIELDS_WINDOW])


def _is_question(text: str) -> bool:
    return re.sub(r"[^\w?]+$", "", text).endswith("?")


# a clinical note (SOAP, SBAR): its "A:" section is the assessment once a "S:" section stands above it
_NOTE_ASSESSMENT = re.compile(r"^(?:a|a\s*/\s*p|a\s*&\s*p)\s*(?::|[-\u2013\u2014]\s)\s*\S", re.IGNORECASE)
_NOTE_OPENING = re.compile(r"^(?:s|subjective|situation)\s*(?::|[-\u2013\u2014]\s)", re.IGNORECASE)


def _marker_form(lines: list[_Line], i: int) -> str | None:
    line = lines[i]
    if _NOTE_ASSESSMENT.match(line.body) and any(_NOTE_OPENING.match(x.body) for x in lines[:i]):
        # a note written mid-interview says so: a draft word, or a question after its assessment
        unsettled = any(_DRAFT.search(x.body) or _is_question(x.body) for x in lines[i:])
        return None if unsettled or _DRAFT.search(lines[0].body) else "markdown_label"
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


_CLUSTER_GAP = 6  # at most this many lines between two fields of one block
# a value that defers the decision is not one: "ESI 3 so far", "urgent, pending your answers"
# a value that defers the decision: the draft words, and "yet", "until", "once I", "before I", "at this stage"
_TENTATIVE = re.compile(rf"\?|\b(?:{_DRAFT_WORDS}|in_progress|yet|until|once i|before i|for the moment"
                        r"|at this stage)\b", re.IGNORECASE)
_BARE_WORDS = 14  # an unlabelled decision line is short: "ESI 5", "Urgent - go to urgent care today"
_LOOK_BACK = 8  # lines above a block in which its triage level may stand ("Triage category 4 (green).")


def _readable(lines: list[_Line], j: int, f: _Field, scale: str = "") -> str | None:
    """The field's kind when its value is readable and decided ("escalation" for a disposition), else None.

    ``scale``: "MTS " when the reply names the Manchester scale, so that a priority field's colour is a level.
    """
    text = _NOT_WORKING.sub(" ", _field_text(lines, j, f))  # "her reliever isn't working" is no working draft
    if f.kind == "diagnoses":
        return "diagnoses" if _field_diagnoses(f, _block(lines, j)[0]) else None
    if _TENTATIVE.search(text):
        return None
    if f.kind == "level" and _field_levels(scale + f.label, text):
        return "level"
    if f.kind in ("escalation", "disposition") and (_escalation_from(text) or disposition_from(text)):
        return "escalation"
    return None


def _bare(line: _Line) -> set[str]:
    """What a short line without a label decides: a level ("ESI 5", "🔴 ESI 1 - IMMEDIATE"), an escalation, both."""
    if not line.body or len(line.body.split()) > _BARE_WORDS or _TENTATIVE.search(line.body):
        return set()
    kinds = {"level"} if _levels(line.body) else set()
    return kinds | ({"escalation"} if decision_escalation(line.body) else set())


def _decides(kinds: set[str]) -> bool:
    labelled = kinds & {"level", "escalation", "diagnoses"}
    return len(labelled) >= 2 and ("escalation" in labelled or "diagnoses" in labelled)


def _by_fields(lines: list[_Line]) -> int | None:
    """Without a marker: the first line of the first block of fields that decides the triage.

    A block is lines no more than ``_CLUSTER_GAP`` apart, each a labelled field with a decided value or a short
    unlabelled decision line (``_bare``), with at least one labelled field. It decides when it gives two of a
    triage level, an escalation (or a disposition) and a differential, one of them the escalation or the
    differential. It starts at its first line, or at a line naming the triage level up to ``_LOOK_BACK`` lines
    above it, or at a diagnoses field up to three times that far above it.
    """
    start: int | None = None
    last = -_CLUSTER_GAP - 1
    kinds: set[str] = set()
    labelled = False
    fields = dict(_fields(lines))
    scale = "MTS " if any(_MANCHESTER_NAMED.search(line.body) for line in lines) else ""
    for j, line in enumerate(lines):
        f = fields.get(j)
        if f is not None and f.kind in _FIELD_KINDS:
            found = {kind} if (kind := _readable(lines, j, f, scale)) else set()
        else:
            found = _bare(line) if f is None or f.kind == "label" or (f.kind == "other" and not f.value) else set()
        if not found:
            continue
        if j - last > _CLUSTER_GAP:
            start, kinds, labelled = j, set(), False
        last = j
        kinds |= found
        labelled = labelled or (f is not None and f.kind in _FIELD_KINDS)
        if labelled and start is not None and _decides(kinds):
            above = [k for k in range(max(0, start - _LOOK_BACK), start)
                     if _levels(scale + lines[k].body) and not _TENTATIVE.search(lines[k].body)]
            if above and "level" not in kinds:
                return above[0]
            # a differential listed first, its advice between it and the decision ("Diagnoses: ... Advice: ...
            # Escalation: urgent")
            listed = [k for k in range(max(0, start - 3 * _LOOK_BACK), start)
                      if (f := fields.get(k)) is not None and f.kind == "diagnoses" and _readable(lines, k, f)]
            return listed[0] if listed and "diagnoses" not in kinds else start
    return None


def _find(lines: list[_Line]) -> tuple[int, str] | None:
    """The index of the line that starts the assessment and its form.

    None for none, a draft, an empty template, or someone else's assessment quoted before a question.
    """
    found = _found(lines)
    if found is None or is_draft(lines, found[0]):
        return None
    section = lines[found[0]:]
    decided = [f for j, f in _fields(section) if f.kind in _FIELD_KINDS]
    if len(decided) >= 2 and not any(_field_text(section, j, f).strip(" -:") for j, f in _fields(section)
                                     if f.kind in _FIELD_KINDS):
        return None  # "<triage_level></triage_level> <escalation></escalation> ...": a template with no values
    if _quoted(lines[found[0]]) and _asks(sentences("\n".join(line.body for line in section))):
        return None  # 'the GP wrote "Final assessment: ESI 4, routine". Is the fever higher today?'
    return found


_QUOTE_OPENED = re.compile(r"[\"\u201c]\s*(?:\*\*)?(?:(?:final|my|triage|clinical)\s+)?(?:assessment|triage|esi)\b",
                           re.IGNORECASE)


def _quoted(line: _Line) -> bool:
    """Whether the line quotes the assessment: a blockquote ("> Triage level: ..."), or opened by a quotation mark."""
    return line.raw.lstrip().startswith(">") or bool(_QUOTE_OPENED.search(line.raw))


def _found(lines: list[_Line]) -> tuple[int, str] | None:
    for i in range(len(lines)):
        form = _marker_form(lines, i)
        if form is not None:
            section = lines[i:]
            first = next((section[j] for j, f in _fields(section) if f.kind in _FIELD_KINDS), None)
            if first is not None and first.json:
                return i, "json"
            table = section[0].table or (first is not None and first.table)
            return i, "table" if table else form
    start = _by_fields(lines)
    if start is None:
        named = any(f.kind == "diagnoses" and _readable(lines, j, f) for j, f in _fields(lines))
        return (0, "prose") if is_prose_final("\n".join(line.body for line in lines), named) else None
    if asks_interview_question("\n".join(line.body for line in lines[start:])):  # "Likely: X. Urgency: ... Is he ...?"
        return None
    return start, "json" if lines[start].json else "table" if lines[start].table else "fields"


def assessment_form(text: str) -> str | None:
    """How ``text`` marks its final assessment ("plain", "markdown_label", "heading", "table"), or None."""
    found = _find(_lines(text))
    return found[1] if found else None


def is_assessment(text: str) -> bool:
    """Whether ``text`` holds a final assessment (``assessment_form(text) is not None``)."""
    return assessment_form(text) is not None
