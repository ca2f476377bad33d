"""The diagnoses of an assessment: inline or listed, without numbering, hedges, qualifiers or ruled-out names."""

from __future__ import annotations

import re

from sim.encounter.assessment._layout import _LABEL, _QUALIFIER_LABEL, _block, _Field, _has_value, _Line

_LIST_SEPARATOR = re.compile(r"\s*(?:\||-->|->|=>|[\u2192\u21d2\u2794\u279c\u27a1\u27f6\u2022])\s*|\s+[>/]\s+")
_ITEM_NUMBER = re.compile(r"^\s*(?:\d{1,2}[.)]|\(\d{1,2}\)|#\d{1,2})\s*")
_INLINE_NUMBER = re.compile(r"\s(?=\(?\d{1,2}[.)]\s)")  # "1. X 2. Y": split before "2."
_HEDGE = re.compile(r"^(?:(?:most|more|less|very)\s+)?(?:likely|probably|probable|possible|possibly|suspected"
                    r"|query|presumed|\?)\s+|^(?:a|an|the)\s+", re.IGNORECASE)
_QUALIFIER_PAREN = re.compile(
    r"\s*\((?=[^)]*(?:\b(?:likel|unlikel|probab|possib|rule|exclu|leading|primary|top\b|consider|less|concern|suspect"
    r"|risk|must|need|can'?t|cannot|given)|%))[^)]*\)\s*$", re.IGNORECASE)
# where a trailing qualifier starts: "X - likely", "X -- needs excluding", "X, less likely" (any dash)
_QUALIFIER_TAIL = re.compile(
    r"\s+[-\u2013\u2014]\s+|,\s*(?:(?:most|less|very)\s+)?(?:likely|probable|possible|unlikely)\b", re.IGNORECASE)


def _split_outside_parens(text: str, sep: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if ch == sep and depth <= 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def _without_tail(text: str) -> str:
    """``text`` up to its first trailing qualifier outside parentheses ("(most likely - recent flight)" stays)."""
    for m in _QUALIFIER_TAIL.finditer(text):
        if m.start() > 0 and text.count("(", 0, m.start()) <= text.count(")", 0, m.start()):
            return text[:m.start()]
    return text


# A diagnosis the clinician has ruled out is not on the differential ("ACS (ruled out)", "Excluded: PE",
# "No pneumothorax"); one still to be excluded is ("PE - needs excluding", "cannot exclude PE", "r/o PE").
_RULED_OUT = re.compile(
    r"(?<!\bbe\s)\bruled[\s-]+out\b|\b(?:has been|have been|was|were|is|are|now|already)\s+(?:been\s+)?excluded\b|"
    r"(?<![\w\s])\s*excluded\b|\(\s*excluded|[-\u2013\u2014,]\s*excluded\b|^\s*excluded\s*:|"
    r"\bnegative\s+for\b|\bno\s+evidence\s+of\b|\bnot\s+(?:consistent|suggestive|compatible)\s+with\b|"
    r"^\s*(?:no|not|non)\s+(?!\w+ing\b)", re.IGNORECASE)


# judged against, as the scorer's matcher reads "X unlikely" (scorers._diagnosis_qualifiers): "X - unlikely",
# "X (unlikely)", "unlikely to be X"; not "less likely", and not one still to be excluded ("unlikely, but rule out")
_UNLIKELY = re.compile(r"(?<!less\s)(?<!more\s)\bunlikely\b", re.IGNORECASE)
_STILL_TO_EXCLUDE = re.compile(r"\b(?:rule\s+out|r/o|exclude|excluding|must\s+not\s+miss|can'?t\s+miss|cannot\s+miss"
                               r"|need[s]?\s+to|must)\b", re.IGNORECASE)


def _ruled_out(text: str) -> bool:
    text = _ITEM_NUMBER.sub("", text.strip().strip("*_ "))
    return bool(_RULED_OUT.search(text)) or (bool(_UNLIKELY.search(text)) and not _STILL_TO_EXCLUDE.search(text))


def _clean_diagnosis(text: str) -> str:
    if _ruled_out(text):
        return ""
    text = _ITEM_NUMBER.sub("", text.strip())
    qualifier = _QUALIFIER_LABEL.match(text)
    if qualifier:
        text = text[qualifier.end():]
    else:  # "Acute coronary syndrome: crushing pain, sweating" names the diagnosis before the colon
        m = _LABEL.match(text)
        if m and len(m["label"].split()) <= 8 and m["value"]:
            text = m["label"]
    text = _without_tail(text)
    while (stripped := _QUALIFIER_PAREN.sub("", text)) != text:
        text = stripped
    while (stripped := _HEDGE.sub("", text)) != text:
        text = stripped
    return re.sub(r"[^\w)\]]+$", "", text.strip(" *_.:;,"))


def _split_inline(value: str) -> list[str]:
    """``1. X; 2. Y``, ``X, Y``, ``X; Y`` or ``X | Y`` / ``X -> Y`` (commas inside parentheses do not split).

    Where semicolons or numbers separate the names, a comma is part of a name ("Hand, foot and mouth disease;
    Herpangina"); in a list of commas only, a one-word piece before "<word> and <word> disease|syndrome|..." is
    rejoined with it ("Hand, foot and mouth disease, herpangina" names two conditions, not three).
    """
    value = _LIST_SEPARATOR.sub(";", value)  # "X | Y", "X -> Y", "X \u2192 Y" separate like semicolons
    chunks = [p for c in _split_outside_parens(value, ";") for p in _INLINE_NUMBER.split(c) if p.strip(" .,")]
    if len(chunks) > 1 or any(re.match(r"\s*\(?\d{1,2}[.)]\s", c) for c in chunks):  # "1. Hand, foot and ..."
        return [d for d in map(_clean_diagnosis, chunks) if d]
    pieces = [p for c in chunks for p in _split_outside_parens(c, ",")]
    parts: list[str] = []
    for piece in pieces:
        if parts and len(parts[-1].split()) == 1 and \
                re.match(r"\s*\w+\s+and\s+\w+\s+(?:disease|syndrome|fever|infection|disorder)\b", piece, re.I):
            parts[-1] = f"{parts[-1]},{piece}"
        else:
            parts.append(piece)
    return [d for d in map(_clean_diagnosis, parts) if d]


_NEXT_SENTENCE = re.compile(r"(?<=[a-z)])\.\s+(?=[A-Z][a-z])")  # "Likely cause: migraine. Book with your GP ..."


def _field_diagnoses(field: _Field, block: list[_Line]) -> list[str]:
    items = _split_inline(_NEXT_SENTENCE.split(field.value, maxsplit=1)[0]) if _has_value(field) else []
    if not items:
        for line in block:
            items.extend([_clean_diagnosis(line.body)] if line.listed else _split_inline(line.body))
    return [d for d in items if d]


def _read_diagnoses(section: list[_Line], fields: list[tuple[int, _Field]]) -> list[str]:
    """Every diagnoses field's names in order, once each.

    "Most likely diagnosis: X" then "Differential: Y, Z" is X, Y, Z. A field inside another's list ("- Most
    likely: X" under "Differential:") is read with it.
    """
    names: list[str] = []
    covered = 0
    for j, f in fields:
        if f.kind != "diagnoses" or j < covered:
            continue
        block, covered = _block(section, j)
        for name in _field_diagnoses(f, block):
            if name.lower() not in (n.lower() for n in names):
                names.append(name)
    return names
