"""A reply as lines and labelled fields (rules in ``sim.encounter.assessment``'s docstring).

Markdown removed, markdown tables read as lines, which label is which field, and the block of lines a field's value
spans.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The protocol's own marker, on the line as written (form "plain").
ASSESSMENT_RE = re.compile(r"^\s*(?:my\s+)?assessment\s*[:\-]", re.IGNORECASE | re.MULTILINE)

_QUOTE = re.compile(r"^(?:>\s?)+")
_HEADING = re.compile(r"^#{1,6}\s+")
_LIST_MARKER = re.compile(r"^(?:[-*+•◦▪‣]|\d{1,2}[.)]|\(\d{1,2}\))\s+")
_STRONG = re.compile(r"\*\*|__|`+|~~")
# a lone '_' only around words, so that "self_care" keeps its underscore
_EMPHASIS = re.compile(r"\*|(?<!\w)_+|_+(?!\w)")
_LEADING_SYMBOLS = re.compile(r"^[^\w(\[\"'?]+")  # emoji and arrows models put before labels
_TABLE_ROW = re.compile(r"^\s*(?:>\s*)*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*(?:>\s*)*\|?(?:\s*:?-{2,}:?\s*\|?)+\s*$")
_BREAK_TAG = re.compile(r"<br\s*/?>", re.IGNORECASE)


@dataclass(frozen=True)
class _Line:
    body: str  # the text with markdown removed; "" for blank lines and horizontal rules
    raw: str = ""
    indent: int = 0
    listed: bool = False  # a bullet or numbered list item
    heading: bool = False  # a '#' heading
    table: bool = False  # read from a markdown table


def _plain(text: str) -> str:
    text = _EMPHASIS.sub("", _STRONG.sub("", text))
    return " ".join(_LEADING_SYMBOLS.sub("", text).split())


def _line(raw: str) -> _Line:
    text = raw.expandtabs(4)
    indent = len(text) - len(text.lstrip())
    s = _QUOTE.sub("", text.strip())
    heading = _HEADING.match(s) is not None
    s = _HEADING.sub("", s)
    listed = _LIST_MARKER.match(s) is not None
    s = _LIST_MARKER.sub("", s, count=1)
    return _Line(body=_plain(s), raw=raw, indent=indent, listed=listed, heading=heading)


def _cells(row: str) -> list[str]:
    s = _QUOTE.sub("", row.strip()).strip().removeprefix("|").removesuffix("|")
    return [_plain(_BREAK_TAG.sub("; ", cell)) for cell in s.split("|")]


def _table_lines(rows: list[str]) -> list[_Line]:
    """A markdown table as lines the field reader understands (see the module docstring)."""
    table = [_cells(r) for r in rows if not _TABLE_RULE.match(r)]
    if not table:
        return []
    header, data = table[0], table[1:]
    kinds = [_label_kind(cell) for cell in header]
    keyed = any(_label_kind(row[0]) in _FIELD_KINDS for row in data if row)
    if data and not keyed and sum(k in _FIELD_KINDS for k in kinds) >= 2:  # one column per field
        return [_Line(body=f"{h}: {v}", table=True) for row in data for h, v in zip(header, row, strict=False) if h]
    if data and not keyed and "diagnoses" in kinds:  # a ranked differential
        col = kinds.index("diagnoses")
        return [_Line(body="Diagnoses:", table=True)] + [
            _Line(body=row[col], listed=True, table=True) for row in data if col < len(row) and row[col]]
    lines = []
    for row in table:  # key-value rows, header included (it may be "| Assessment | |")
        rest = " \u2014 ".join(c for c in row[1:] if c)
        if row and row[0]:
            lines.append(_Line(body=f"{row[0]}: {rest}" if rest else row[0], table=True))
    return lines


def _lines(text: str) -> list[_Line]:
    out: list[_Line] = []
    rows: list[str] = []
    for raw in text.splitlines():
        if _TABLE_ROW.match(raw):
            rows.append(raw)
            continue
        if rows:
            out.extend(_table_lines(rows))
            rows = []
        out.append(_line(raw))
    if rows:
        out.extend(_table_lines(rows))
    return out


_FIELD_KINDS = ("level", "escalation", "disposition", "diagnoses")
_KNOWN_KINDS = (*_FIELD_KINDS, "other")
_LABEL = re.compile(r"^(?P<label>[^\W\d_][^:]{0,60}?)\s*:\s*(?P<value>.*)$")
_DASH_LABEL = re.compile(r"^(?P<label>[^\W\d_][^:\u2013\u2014]{0,40}?)\s+[-\u2013\u2014]\s+(?P<value>.*)$")
_LABEL_KINDS = (
    ("level", re.compile(r"^(?:esi |ctas )?(?:triage|acuity|esi|ctas|emergency severity index)"
                         r"(?: (?:level|category|score|priority|acuity|esi|ctas))*$")),
    ("escalation", re.compile(r"^(?:recommended |suggested |triage )?(?:escalation|recommendation"
                              r"|level of care|care level|urgency|where to go|action|care setting)"
                              r"(?: ?(?:/|and|&) ?(?:escalation|disposition|urgency))?(?: level)?$")),
    ("disposition", re.compile(r"^(?:recommended |suggested |triage )?(?:disposition|means of care|how to get there"
                               r"|mode of transport|transport|route to care|care pathway|pathway)$")),
    ("diagnoses", re.compile(r"^(?:(?:most|more|less) )?(?:likely |working |differential |provisional |possible "
                             r"|leading |top |primary |suspected |main |clinical |key |ranked |probable )?"
                             r"(?:diagnos[ie]s|differentials?|ddx|impression|causes?|conditions?)"
                             r"(?: ?(?:/|and|&) ?(?:differentials?|diagnos[ie]s))?"
                             r"(?: (?:to consider|to rule out|considered))?$|^(?:most likely|likely cause)$")),
)
# Labels that end a field's list: what follows the diagnoses in the protocol and in models' habits.
_OTHER_LABEL = re.compile(
    r"^(?:advice|plan|recommendations|red flags?|warning signs|safety[ -]?net\w*|next steps?|what to do|reasoning"
    r"|rationale|why|follow[ -]?up|treatment|management|instructions|home care|self[ -]?care|summary|key findings"
    r"|notes?|important|watch for|when to|return precautions|in the meantime|immediate|precautions|seek|other"
    r"|also consider|tips|supporting|explanation|disclaimer)\b")
_ADVICE_LABEL = re.compile(r"^(?:advice|plan|recommendations|next steps?|what to do(?: now)?|action plan)$")


@dataclass(frozen=True)
class _Field:
    kind: str  # one of _KNOWN_KINDS, or "label" for any other short label
    label: str
    value: str


def _norm_label(label: str) -> str:
    label = re.sub(r"\([^)]*\)", " ", label.lower())
    return " ".join(re.sub(r"[^\w/&' -]", " ", label).split())


def _label_kind(label: str) -> str | None:
    name = _norm_label(label)
    if not name:
        return None
    for kind, pattern in _LABEL_KINDS:
        if pattern.match(name):
            return kind
    if _OTHER_LABEL.match(name):
        return "other"
    return "label" if len(name.split()) <= 5 else None


def _field(line: _Line) -> _Field | None:
    """The field a line starts, if any: ``Label: value``, ``Label - value``, or a known label alone."""
    m = _LABEL.match(line.body)
    if m and (kind := _label_kind(m["label"])):
        return _Field(kind, m["label"], m["value"].strip())
    m = _DASH_LABEL.match(line.body)
    if m and (kind := _label_kind(m["label"])) in _FIELD_KINDS:
        return _Field(kind, m["label"], m["value"].strip())
    kind = _label_kind(line.body)  # "### Escalation": the value is on the next lines
    if kind is not None and (kind in _FIELD_KINDS or (kind == "other" and len(line.body.split()) <= 4)):
        return _Field(kind, line.body, "")
    return None


def _fields(section: list[_Line]) -> list[tuple[int, _Field]]:
    return [(j, f) for j, line in enumerate(section) if (f := _field(line)) is not None]


def _has_value(field: _Field) -> bool:
    """A value beyond a qualifier: "Diagnoses (most likely first):" puts its list on the next lines."""
    return bool(re.sub(r"\([^)]*\)", "", field.value).strip(" :-\u2013\u2014"))


def _block(section: list[_Line], j: int) -> tuple[list[_Line], int]:
    """The lines that continue the field on ``section[j]`` and the index after them.

    Detail bullets under an item are left out. A list or, for a field with no value of its own, a paragraph; it
    ends at the next field, heading, paragraph after a blank line, or an item outdented past the list.
    """
    head, field = section[j], _field(section[j])
    has_value = field is not None and _has_value(field)
    lines: list[_Line] = []
    item_indent: int | None = None
    blank = False
    k = j + 1
    for k in range(j + 1, len(section)):
        line = section[k]
        if not line.body:
            blank = True
            continue
        own = _field(line)
        # "- Most likely: Gout" inside a differential is an item, not the next field
        item = field is not None and field.kind == "diagnoses" and _QUALIFIER_LABEL.match(line.body) is not None
        if line.heading or (own is not None and own.kind in _KNOWN_KINDS and not item):
            break
        if line.listed:
            nested = head.listed and line.indent > head.indent
            if has_value and not nested:  # "Diagnoses: X" then a list: another list
                break
            item_indent = line.indent if item_indent is None else item_indent
            if line.indent < item_indent:
                break
            if line.indent == item_indent:
                lines.append(line)
        elif blank or has_value or lines:  # the first line is the value even if it reads "Emergency: call 999"
            break
        else:
            lines.append(line)
        blank = False
    else:
        k = len(section)
    return lines, k


def _field_text(section: list[_Line], j: int, field: _Field) -> str:
    if _has_value(field):
        return field.value
    return " ".join(line.body for line in _block(section, j)[0])




# "Most likely: X", "Less likely: Y", "Must rule out: Z" put the name after the colon
_QUALIFIER_LABEL = re.compile(
    r"^(?:(?:most|more|less|very)\s+)?(?:likely|probable|possible|unlikely|consider|also consider|leading|primary"
    r"|top|main|secondary|alternative|differential|must rule out|rule out|r/o|can'?t miss|cannot miss"
    r"|must not miss|don'?t miss|red flag|others?)(?:\s+(?:diagnosis|cause|concern|consideration|possibilit(?:y|ies)"
    r"|alternatives?|to exclude|to consider|to rule out))?\s*:\s*", re.IGNORECASE)
