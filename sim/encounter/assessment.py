"""Find and parse the agent's final assessment.

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

import re
from dataclasses import dataclass

from sim.records import ParsedAssessment

# The protocol's own marker, on the line as written (form "plain").
ASSESSMENT_RE = re.compile(r"^\s*(?:my\s+)?assessment\s*[:\-]", re.IGNORECASE | re.MULTILINE)

# ---------------------------------------------------------------------------------------------- markdown
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


# ------------------------------------------------------------------------------------------------ fields
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


# ------------------------------------------------------------------------------------------------ marker
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


# ------------------------------------------------------------------------------------------- triage level
_LEVEL_RE = re.compile(
    # not "pain level 3" and the like: only triage scales count
    r"(?<![a-z])(?<!pain )(?<!pain-)(?<!sugar )(?<!oxygen )(?<!energy )(?<!stress )(?<!activity )"
    r"(?:esi|ctas|triage|acuity|level)(?:[\s\-]+(?:level|category|score|priority|esi|ctas))*\)?"
    r"\s*(?:\((?:esi|ctas)\))?\s*(?:is|of|=|:|-|\u2013|\u2014|#)?\s*\(?\s*(?:(?:esi|ctas|level)[\s\-]*)?"
    r"([1-5])(?![.,]?\d)(?!\s*(?:/|out of)\s*10)",
    re.IGNORECASE,
)


def _levels(text: str) -> list[int]:
    return [int(m.group(1)) for m in _LEVEL_RE.finditer(text)]


def _read_level(section: list[_Line], fields: list[tuple[int, _Field]], problems: list[str]) -> int | None:
    labelled = "\n".join(f"{f.label}: {_field_text(section, j, f)}" for j, f in fields if f.kind == "level")
    levels = _levels(labelled) or _levels("\n".join(line.body for line in section))
    if not levels:
        problems.append("no triage level (expected e.g. 'Triage level: ESI 2')")
        return None
    if len(set(levels)) > 1:
        problems.append(f"several triage levels given ({', '.join(map(str, levels))}); the first, {levels[0]}, "
                        "is used")
    return levels[0]


# --------------------------------------------------------------------------------------------- escalation
# Most urgent first. Matched as words; "not an emergency" and the like are removed first (_NEGATED).
ESCALATION_KEYWORDS: dict[str, tuple[str, ...]] = {
    "emergency": ("emergency", "emergent", "911", "999", "112", "ambulance", "er now", "a&e", "immediately to the",
                  "emergency department", "emergency room", "the er", "the ed", "nearest er", "nearest ed",
                  "eye casualty", "labour ward", "labor and delivery"),
    "urgent": ("urgent", "same day", "same-day", "within 24 hours", "today", "walk-in", "urgent care", "tonight",
               "within a few hours", "next few hours", "out-of-hours", "out of hours", "minor injuries"),
    "routine": ("routine", "primary care", "gp", "family doctor", "regular doctor", "follow up", "follow-up",
                "schedule an appointment", "refill", "book an appointment", "make an appointment",
                "next few days", "within a week", "next week", "this week"),
    "self_care": ("self_care", "self care", "self-care", "home care", "at home", "rest and fluids",
                  "over the counter", "over-the-counter", "home treatment", "manage at home", "self-manage"),
}
_NEGATED = (  # phrases that name a category in order to rule it out
    (re.compile(r"\b(?:non|not|less)[\s-]+urgent\b", re.IGNORECASE), " routine "),
    (re.compile(r"\b(?:non|not\s+an?|not|no)[\s-]+emergen(?:cy|t)\b", re.IGNORECASE), " "),
    (re.compile(r"\bno\s+need\s+(?:to|for)\b[^.;,\n]*", re.IGNORECASE), " "),
)
_EMERGENCY_ABBREVIATION = re.compile(r"(?<![A-Za-z])(?:ER|ED)(?![A-Za-z])")  # case matters: "ED", not "ed"
_KEYWORD_RES = {category: [re.compile(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])") for w in words]
                for category, words in ESCALATION_KEYWORDS.items()}


def _escalation_from(text: str) -> list[str]:
    """Categories whose keywords occur in ``text``, ordered by where they first occur."""
    for pattern, replacement in _NEGATED:
        text = pattern.sub(replacement, text)
    low = f" {text.lower()} "
    first: dict[str, int] = {}
    for category, patterns in _KEYWORD_RES.items():
        for pattern in patterns:
            m = pattern.search(low)
            if m and m.start() < first.get(category, len(low)):
                first[category] = m.start()
    abbreviation = _EMERGENCY_ABBREVIATION.search(f" {text} ")
    if abbreviation and abbreviation.start() < first.get("emergency", len(low)):
        first["emergency"] = abbreviation.start()
    return sorted(first, key=first.__getitem__)


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]


def _outside_fields(section: list[_Line], fields: list[tuple[int, _Field]]) -> str:
    """The section's text without the triage and diagnoses fields.

    Their words ("ESI 3 - urgent", "hypertensive emergency") are not the escalation.
    """
    skip: set[int] = set()
    for j, f in fields:
        if f.kind in ("level", "diagnoses"):
            skip.update(range(j, _block(section, j)[1]))
    return "\n".join(line.body for k, line in enumerate(section) if k not in skip)


def _read_escalation(section: list[_Line], fields: list[tuple[int, _Field]], problems: list[str]) -> str | None:
    field = next(((j, f) for j, f in fields if f.kind == "escalation"), None)
    if field is None:  # a Disposition field names the category too ("Disposition: emergency")
        field = next(((j, f) for j, f in fields if f.kind == "disposition"), None)
        if field is not None and (named_means := disposition_from(_field_text(section, *field))):
            from scenarios.schema import Disposition

            return Disposition(named_means).escalation.value
    if field is not None and (named := _escalation_from(_field_text(section, *field))):
        return named[0]  # the field's value wins over every other mention
    advice = next(((j, f) for j, f in fields if f.kind == "other" and _ADVICE_LABEL.match(_norm_label(f.label))),
                  None)
    if advice is not None and len(named := _escalation_from(_first_sentence(_field_text(section, *advice)))) == 1:
        return named[0]
    named = _escalation_from(_outside_fields(section, fields))
    if len(named) == 1 or (field is not None and named):
        return named[0]
    if named:
        problems.append(f"ambiguous escalation: mentions {', '.join(named)}")
    else:
        problems.append("no escalation (expected e.g. 'Escalation: emergency')")
    return None


# ------------------------------------------------------------------------------------------- disposition
# How the patient gets there (scenarios.schema.Disposition). Matched as words after conditional clauses
# ("if it gets worse, call 999") are removed; the earliest match wins, the longer at one position
# ("same-day GP" over "GP"), an ambulance anywhere in the value wins over the emergency department
# ("go to the ED by ambulance"), and a pharmacist over self care ("self-care via your pharmacist").
DISPOSITION_KEYWORDS: dict[str, tuple[str, ...]] = {
    "ambulance": ("ambulance", "911", "999", "112", "paramedic", "paramedics", "emergency services", "ems",
                  "blue light"),
    "self_present_ed": ("self_present_ed", "self-present", "self present", "self-presentation", "own way",
                        "someone drive", "someone to drive", "drive you", "drive him", "drive her", "drive them",
                        "get a lift", "a taxi", "go to the ed", "go to the er", "go to a&e", "go to the emergency",
                        "go straight to", "attend a&e", "attend the emergency", "attend the ed", "emergency department",
                        "emergency room", "a&e", "the ed", "the er", "nearest ed", "nearest er", "eye casualty",
                        "labour ward", "labor and delivery", "maternity assessment"),
    "same_day_urgent_care": ("same_day_urgent_care", "urgent care", "urgent treatment centre",
                             "urgent treatment center",
                             "walk-in", "walk in centre", "minor injuries", "out-of-hours", "out of hours",
                             "same-day emergency care", "same day emergency care", "sdec", "surgical assessment",
                             "surgical assessment unit", "early pregnancy unit", "early pregnancy assessment", "epau",
                             "surgical referral", "same-day surgical", "same day surgical"),
    "crisis_team": ("crisis_team", "crisis team", "crisis resolution", "crisis assessment", "home treatment team",
                    "mental health crisis team", "crisis service"),
    "same_day_gp": ("same_day_gp", "same-day gp", "same day gp", "gp today", "gp this afternoon", "gp this morning",
                    "doctor today", "same-day appointment", "same day appointment", "urgent gp", "gp urgently",
                    "see a doctor today", "emergency gp appointment", "gp the same day", "gp appointment today",
                    "gp appointment for today", "today with your gp", "today with a gp", "gp later today"),
    "routine_gp": ("routine_gp", "routine gp", "routine appointment", "book an appointment", "make an appointment",
                   "schedule an appointment", "regular doctor", "family doctor", "primary care", "gp", "your doctor"),
    "pharmacist": ("pharmacist", "pharmacy", "chemist", "pharmacy first"),
    "self_care": ("self_care", "self-care", "self care", "at home", "home care", "manage at home", "rest at home",
                  "home treatment"),
}
_DISPOSITION_RES = {d: [re.compile(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])") for w in words]
                    for d, words in DISPOSITION_KEYWORDS.items()}
_CONDITIONAL = re.compile(r"\b(?:if|in case|unless|whenever)\b[^.;\n]*", re.IGNORECASE)
_NO_AMBULANCE = re.compile(r"\b(?:no need (?:for|to call) (?:an )?ambulance|(?:don't|do not|doesn't|does not|not) "
                           r"(?:need|require)(?: to call)? (?:an )?ambulance|without (?:an )?ambulance|"
                           r"(?:no|not an?|not by) ambulance|"
                           r"(?:an |the )?ambulance (?:isn'?t|is not|won'?t be|wouldn'?t be|"
                           r"is un)\s*(?:needed|necessary|required))\b", re.IGNORECASE)


def disposition_from(text: str) -> str | None:
    """The disposition a field value names (``DISPOSITION_KEYWORDS``), or None."""
    text = _NO_AMBULANCE.sub(" own way ", text)
    text = _CONDITIONAL.sub(" ", text)
    low = f" {text.lower()} "
    hits: list[tuple[int, int, str]] = []
    for disposition, patterns in _DISPOSITION_RES.items():
        for pattern in patterns:
            m = pattern.search(low)
            if m:
                hits.append((m.start(), -len(m.group(0)), disposition))
    abbreviation = _EMERGENCY_ABBREVIATION.search(f" {text} ")  # "go to ED", "ER now"
    if abbreviation is not None:
        hits.append((abbreviation.start(), -2, "self_present_ed"))
    if not hits:
        return None
    named = {d for *_, d in hits}
    if "ambulance" in named:  # "go to the ED by ambulance"
        return "ambulance"
    if {"pharmacist", "self_care"} <= named:  # "self-care with advice from your pharmacist"
        return "pharmacist"
    return min(hits)[2]


def _read_disposition(section: list[_Line], fields: list[tuple[int, _Field]], escalation: str | None,
                      problems: list[str]) -> str | None:
    """The means of care the section names, or None.

    The ``Disposition`` field's value; else the means the escalation field or the advice's first sentence
    names when it belongs to the escalation given ("Escalation: emergency - call 911 now"); else None.
    """
    from scenarios.schema import Disposition  # the leaf types; imported here to keep this module's load light

    field = next(((j, f) for j, f in fields if f.kind == "disposition"), None)
    if field is not None and (named := disposition_from(_field_text(section, *field))):
        category = Disposition(named).escalation.value
        if escalation is not None and category != escalation:
            problems.append(f"disposition {named} belongs to {category}, but the escalation given is {escalation}")
        return named
    candidates = [f for f in fields if f[1].kind == "escalation"]
    candidates += [f for f in fields if f[1].kind == "other" and _ADVICE_LABEL.match(_norm_label(f[1].label))]
    for j, f in candidates:
        text = _field_text(section, j, f)
        named = disposition_from(text if f.kind == "escalation" else _first_sentence(text))
        if named and escalation is not None and Disposition(named).escalation.value == escalation:
            return named
    return None


def parse_escalation_line(reply: str) -> str | None:
    """The category of an ``Escalation:`` line (the first one it names), or None."""
    lines = _lines(reply)
    fields = _fields(lines)
    field = next(((j, f) for j, f in fields if f.kind == "escalation"), None)
    named = _escalation_from(_field_text(lines, *field)) if field else []
    return named[0] if named else None


# ---------------------------------------------------------------------------------------------- diagnoses
_ITEM_NUMBER = re.compile(r"^\s*(?:\d{1,2}[.)]|\(\d{1,2}\)|#\d{1,2})\s*")
_INLINE_NUMBER = re.compile(r"\s(?=\(?\d{1,2}[.)]\s)")  # "1. X 2. Y": split before "2."
# "Most likely: X", "Less likely: Y", "Must rule out: Z" put the name after the colon
_QUALIFIER_LABEL = re.compile(
    r"^(?:(?:most|more|less|very)\s+)?(?:likely|probable|possible|unlikely|consider|also consider|leading|primary"
    r"|top|main|secondary|alternative|differential|must rule out|rule out|r/o|can'?t miss|cannot miss"
    r"|must not miss|don'?t miss|red flag|others?)(?:\s+(?:diagnosis|cause|concern|consideration|possibilit(?:y|ies)"
    r"|alternatives?|to exclude|to consider|to rule out))?\s*:\s*", re.IGNORECASE)
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
    r"\bruled[\s-]+out\b|\b(?:has been|have been|was|were|is|are|now|already)\s+(?:been\s+)?excluded\b|"
    r"(?<![\w\s])\s*excluded\b|\(\s*excluded|[-\u2013\u2014,]\s*excluded\b|^\s*excluded\s*:|"
    r"\bnegative\s+for\b|\bno\s+evidence\s+of\b|\bnot\s+(?:consistent|suggestive|compatible)\s+with\b|"
    r"^\s*(?:no|not|non)\s+(?!\w+ing\b)", re.IGNORECASE)


def _ruled_out(text: str) -> bool:
    return bool(_RULED_OUT.search(_ITEM_NUMBER.sub("", text.strip().strip("*_ "))))


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
    """``1. X; 2. Y``, ``X, Y`` or ``X; Y`` (commas inside parentheses do not split).

    Where semicolons or numbers separate the names, a comma is part of a name ("Hand, foot and mouth disease;
    Herpangina"); in a list of commas only, a one-word piece before "<word> and <word> disease|syndrome|..." is
    rejoined with it ("Hand, foot and mouth disease, herpangina" names two conditions, not three).
    """
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


def _field_diagnoses(field: _Field, block: list[_Line]) -> list[str]:
    items = _split_inline(field.value) if _has_value(field) else []
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


# ------------------------------------------------------------------------------------------------- parse
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


# --------------------------------------------------------------------------------------------- spoken form
# In a live call the patient only has what Whisper heard, e.g. "Assessment, triage level, ESI2 escalation,
# emergency diagnosis, one, acute coronary syndrome, two, aortic dissection advice, call an ambulance".
# ``from_speech`` rewrites that into the written protocol block so the same parser reads it.

_SPOKEN_START = re.compile(r"\b(?:my\s+)?assessment\b[\s,.:;\-]*", re.IGNORECASE)
_NUMBER_WORDS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
                 "eight": "8", "nine": "9", "to": "2", "too": "2", "for": "4", "won": "1"}
_SPOKEN_FIELDS = (
    ("Triage level", r"triage\s+level|triage|acuity(?:\s+level)?"),
    ("Escalation", r"escalation|disposition|recommendation"),
    ("Diagnoses", r"(?:most\s+likely\s+|working\s+|differential\s+)?diagnos[ie]s|differential"),
    ("Advice", r"advice|advise"),
)


def _spoken_level(match: re.Match[str]) -> str:
    word = match.group(2).lower()
    return f"{match.group(1)} {_NUMBER_WORDS.get(word, word)}"


def is_spoken_assessment(text: str) -> bool:
    """True when a transcript announces an assessment and gives a triage level or an escalation value.

    A question that mentions the assessment ("to finish my assessment, how would you rate your pain
    level?") is not one: the sentence that says "assessment" must not end in a question mark.
    """
    m = _SPOKEN_START.search(text)
    if m is None:
        return False
    sentence_end = re.search(r"[.!?](?:\s|$)", text[m.start():])
    if sentence_end is not None and sentence_end.group(0).startswith("?"):
        return False
    block = from_speech(text[m.start():])
    return parse_assessment(block).triage_level is not None or parse_escalation_line(block) is not None


def from_speech(text: str) -> str:
    """The written protocol block for a transcribed spoken assessment (text before it is kept as is)."""
    m = _SPOKEN_START.search(text)
    if m is None:
        return text
    head, body = text[:m.start()], text[m.end():]
    body = re.sub(r"\b(E[.\-\s]?S[.\-\s]?I\.?|CTAS|level)\s*-?\s*(\d|one|two|three|four|five|to|too|for|won)\b",
                  _spoken_level, body, flags=re.IGNORECASE)
    body = re.sub(r"\bE[.\-]\s?S[.\-]\s?I\.?", "ESI", body, flags=re.IGNORECASE)
    # "triage level, SE5": Whisper's spelling of a spoken "ESI" varies; keep the number after "level"
    body = re.sub(r"\b(level)\b[\s,.:;\-]*(?:[a-z.\-]{1,7}[\s\-]?)?(\d|one|two|three|four|five)\b",
                  lambda m: f"level ESI {_NUMBER_WORDS.get(m.group(2).lower(), m.group(2))}", body, flags=re.IGNORECASE)
    for name, pattern in _SPOKEN_FIELDS:
        body = re.sub(rf"[\s,.;:]*\b(?:{pattern})\b[\s,.;:]*", f"\n{name}: ", body, count=1, flags=re.IGNORECASE)
    lines = []
    for line in body.splitlines():
        if line.startswith("Diagnoses:"):  # "one, acute coronary syndrome, two, aortic dissection"
            value = re.sub(r"(?:^|[\s,.;])(one|two|three|four|five|1|2|3|4|5)[\s,.:]+",
                           lambda d: f"; {_NUMBER_WORDS.get(d.group(1).lower(), d.group(1))}. ",
                           " " + line[len("Diagnoses:"):])
            line = "Diagnoses: " + value.strip(" ;")
        lines.append(line.strip(" ,.;"))
    return f"{head.rstrip()}\nASSESSMENT:\n" + "\n".join(x for x in lines if x)
