"""The triage level, the escalation and the disposition of an assessment."""

from __future__ import annotations

import re

from sim.encounter.assessment._layout import (
    _ADVICE_LABEL,
    _block,
    _Field,
    _field_text,
    _fields,
    _Line,
    _lines,
    _norm_label,
)

_LEVEL_RE = re.compile(
    # not "pain level 3" and the like: only triage scales count
    r"(?<![a-z])(?<!pain )(?<!pain-)(?<!sugar )(?<!oxygen )(?<!energy )(?<!stress )(?<!activity )"
    r"(?:esi|ctas|triage|acuity|level|lvl|priority|category)(?:[\s\-]+(?:level|category|score|priority|esi|ctas"
    r"|value))*\)?"
    r"\s*(?:\((?:esi|ctas)\))?\s*(?:is|of|=|:|-|\u2013|\u2014|#)?\s*\(?\s*(?:(?:esi|ctas|level)[\s\-]*)?"
    r"([1-5])(?![.,]?\d)(?!\s*(?:/|out of)\s*10)",
    re.IGNORECASE,
)


_NUMBER_WORDS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5"}
# "level three", "triage level: four", "a triage level of two", "E S I five" (a speech-to-text spelling)
_SPOKEN_LEVEL = re.compile(r"\b(esi|ctas|level|category|triage(?:\s+level)?)((?:\s*[:=,\-]\s*|\s+)(?:of\s+|is\s+)?)"
                           r"(one|two|three|four|five)\b", re.IGNORECASE)
_SPELLED_ESI = re.compile(r"\b[Ee][.\s]\s?[Ss][.\s]\s?[Ii]\b\.?")  # "E.S.I.", a transcript's "e s i"


# the Manchester Triage System's colours, when the text names that scale: "MTS priority: Yellow (urgent)"
_MANCHESTER = re.compile(r"\b(?:manchester|mts)\b[^.\n]{0,40}?\b(red|orange|yellow|green|blue)\b", re.IGNORECASE)
_MANCHESTER_NAMED = re.compile(r"\b(?:manchester|mts)\b", re.IGNORECASE)
_COLOURS = {"red": "1", "orange": "2", "yellow": "3", "green": "4", "blue": "5"}
_P_LEVEL = re.compile(r"(?<![\w-])P([1-5])(?![\w.,-])")  # "non-urgent (P4)", "PRIORITY: P1"


_MTS_LABEL = re.compile(r"\b(?:priority|category|triage|colour|color)\b[^.\n]{0,20}?\b(red|orange|yellow|green|blue)\b",
                        re.IGNORECASE)


# a colour given with its Manchester name: "Triage category: GREEN (standard)", "RED - immediate"
_MTS_DESCRIBED = re.compile(r"\b(red|orange|yellow|green|blue)\b(?=\W{1,4}(?:immediate|very urgent|urgent|standard"
                            r"|non[- ]urgent)\b)", re.IGNORECASE)


def _levels(text: str) -> list[int]:
    text = _MTS_DESCRIBED.sub(lambda m: f"{m[0]} (level {_COLOURS[m[1].lower()]})", text)
    text = _MANCHESTER.sub(lambda m: f"{m[0]} (level {_COLOURS[m[1].lower()]})", text)
    if _MANCHESTER_NAMED.search(text):  # "Manchester Triage outcome ... Priority: ORANGE"
        text = _MTS_LABEL.sub(lambda m: m[0] if "(level" in text[m.end():m.end() + 8] else
                              f"{m[0]} (level {_COLOURS[m[1].lower()]})", text)
    text = _P_LEVEL.sub(r"level \1", text)
    text = _SPELLED_ESI.sub("ESI", text.replace("_", " "))
    text = _SPOKEN_LEVEL.sub(lambda m: f"{m[1]}{m[2]}{_NUMBER_WORDS[m[3].lower()]}", text)
    return [int(m.group(1)) for m in _LEVEL_RE.finditer(text)]


# a level field's own value: "5 (lowest)", "Category 3", "P2", "ESI=4"
_FIELD_LEVEL = re.compile(r"^\s*(?:(?:esi|ctas|ats|mts|level|category|cat|priority|p)\s*[-:=#]?\s*)?([1-5])(?![.,]?\d)"
                          r"(?!\s*(?:/|out of)\s*10)\b", re.IGNORECASE)


def _field_levels(label: str, value: str) -> list[int]:
    """The levels a level field gives: its label and value read together, else a bare number opening the value."""
    levels = _levels(f"{label}: {value}")
    if not levels and (m := _FIELD_LEVEL.match(value)):
        levels = [int(m.group(1))]
    return levels


def _read_level(section: list[_Line], fields: list[tuple[int, _Field]], problems: list[str],
                manchester: bool = False) -> int | None:
    """The section's level.

    ``manchester``: the reply names that scale above the section (a "Manchester Triage outcome" heading), so a
    priority field's colour is an MTS priority.
    """
    scale = "MTS " if manchester else ""
    levels = [n for j, f in fields if f.kind == "level"
              for n in _field_levels(scale + f.label, _field_text(section, j, f))]
    levels = levels or _levels(scale + "\n".join(line.body for line in section))
    if not levels:
        problems.append("no triage level (expected e.g. 'Triage level: ESI 2')")
        return None
    if len(set(levels)) > 1:
        problems.append(f"several triage levels given ({', '.join(map(str, levels))}); the first, {levels[0]}, "
                        "is used")
    return levels[0]


# Most urgent first. Matched as words; "not an emergency" and the like are removed first (_NEGATED).
ESCALATION_KEYWORDS: dict[str, tuple[str, ...]] = {
    "emergency": ("emergency", "emergent", "911", "999", "112", "call 000", "triple zero", "nine one one",
                  "nine-one-one", "nine nine nine",
                  "ambulance", "a and e", "er now", "a&e", "immediately to the",
                  "emergency department", "emergency room", "the er", "the ed", "nearest er", "nearest ed",
                  "eye casualty", "labour ward", "labor and delivery"),
    "urgent": ("urgent", "same day", "same-day", "within 24 hours", "within 12 hours", "within 6 hours",
               "within 4 hours", "within 2 hours", "within an hour", "within the hour", "today", "walk-in",
               "urgent care", "tonight",
               "within a few hours", "next few hours", "out-of-hours", "out of hours", "minor injuries"),
    "routine": ("routine", "primary care", "gp", "pcp", "family doctor", "regular doctor", "follow up", "follow-up",
                "within 2 weeks", "within two weeks", "within a few weeks",
                "schedule an appointment", "refill", "book an appointment", "make an appointment",
                "next few days", "within a week", "next week", "this week"),
    "self_care": ("self_care", "self care", "self-care", "home care", "at home", "rest and fluids",
                  "over the counter", "over-the-counter", "home treatment", "manage at home", "self-manage",
                  "self-management"),
}
_NEGATED = (  # phrases that name a category in order to rule it out
    (re.compile(r"\b(?:non|not|less)[\s-]+urgent\b", re.IGNORECASE), " routine "),
    (re.compile(r"\bleast[\s-]+urgent\b", re.IGNORECASE), " "),
    (re.compile(r"\b(?:non|not\s+an?|not|no)[\s-]+emergen(?:cy|t)\b", re.IGNORECASE), " "),
    (re.compile(r"\bno\s+need\s+(?:to\s+(?:see|visit|call|contact)|for)\s+(?:a|the|your)\s+(?:doctor|gp)\b",
                re.IGNORECASE), " self-care "),
    (re.compile(r"\b(?:don'?t|do not|won'?t|will not)\s+need\s+to\s+(?:see|call|contact|visit)\s+(?:anyone|anybody"
                r"|a doctor|a gp|your gp)\b", re.IGNORECASE), " self-care "),
    (re.compile(r"\bno\s+(?:gp\s+)?(?:appt|appointment|prescription)s?\s+(?:is\s+)?needed\b|\bnothing\s+urgent\b",
                re.IGNORECASE), " "),
    (re.compile(r"\bno\s+need\s+(?:to|for)\b[^.;,\n]*", re.IGNORECASE), " "),
    (re.compile(r"\bwithout\s+(?:you\s+|him\s+|her\s+|them\s+)?(?:needing|having)\s+to\b[^.;,\n]*",
                re.IGNORECASE), " "),
    (re.compile(r"\b(?:isn'?t|is not|not)\s+(?:something|anything)\s+(?:that\s+)?(?:you|he|she|they|we)\s+"
                r"(?:need|require)\b[^.;,\n\u2013\u2014]*", re.IGNORECASE), " "),
    # the emergency dentist is same-day dental care, not the emergency department
    (re.compile(r"\bemergency\s+(?=dentist|dental)", re.IGNORECASE), "urgent "),
    (re.compile(r"\b(?:don'?t|do not|doesn'?t|does not|won'?t|will not|wouldn'?t|shouldn'?t)\s+(?:need|require)\b"
                r"[^.;,\n\u2013\u2014]*", re.IGNORECASE), " "),
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


def _decided_line(section: list[_Line], fields: list[tuple[int, _Field]]) -> str | None:
    """The escalation of the first short unlabelled line, or level field, that decides one (``decision_escalation``).

    "ESI 5 - self-care", "Final triage: ESI 3 -> emergency", the marker line's own "Assessment: ESI 4, urgent".
    """
    labelled = dict(fields)
    for j, line in enumerate(section):
        f = labelled.get(j)
        bare = f is None or (f.kind == "other" and not f.value)  # "Self-care" alone on its line
        if not bare and f is not None and f.kind not in ("level", "label") and j > 0:
            continue
        if bare or f is None or (j == 0 and f.kind == "label"):
            text = line.body
        else:
            text = f"{f.label}: {f.value}"
        if len(text.split()) <= 24 and (decided := decision_escalation(text)) is not None:
            return decided
    return None


# a value that opens with its category says it outright, whatever means it then names
_OPENING_CATEGORY = re.compile(r"^\W*(emergency|urgent|routine|self[-_ ]care)\b(?![-\s]+(?:care|treatment|department"
                               r"|room|dentist|dental|services?|gp|appointment|centre|center|clinic|team|line|number))",
                               re.IGNORECASE)


def _read_escalation(section: list[_Line], fields: list[tuple[int, _Field]], problems: list[str]) -> str | None:
    from scenarios.schema import Disposition

    field = next(((j, f) for j, f in fields if f.kind == "escalation"), None)
    said = [m for line in section[:_SAID_LINES] if (m := _SAID_ESCALATION.search(line.body))]
    if field is None and said:  # "Final assessment - ESI 2 (urgent escalation).", whatever means it then names
        return (said[0][1] or said[0][2]).lower().replace("-", "_").replace(" ", "_")
    if field is None:  # a Disposition field names the category too ("Disposition: emergency")
        field = next(((j, f) for j, f in fields if f.kind == "disposition"), None)
        if field is not None and (named_means := disposition_from(_field_text(section, *field))):
            return Disposition(named_means).escalation.value
    if field is not None and (opening := _OPENING_CATEGORY.match(_field_text(section, *field))) is not None:
        return opening[1].lower().replace("-", "_").replace(" ", "_")  # "Urgent - attend eye casualty today"
    if field is not None and (named := _escalation_from(_field_text(section, *field))):
        # the field's value wins over every other mention; naming several ("your GP surgery today, a same-day
        # appointment"), the means it names settles which
        means = disposition_from(_field_text(section, *field)) if len(named) > 1 else None
        settled = Disposition(means).escalation.value if means else None
        return settled if settled in named else named[0]
    if field is None and (decided := _decided_line(section, fields)) is not None:
        return decided
    advice = next(((j, f) for j, f in fields if f.kind == "other" and _ADVICE_LABEL.match(_norm_label(f.label))),
                  None)
    if advice is not None and len(named := _escalation_from(_first_sentence(_field_text(section, *advice)))) == 1:
        return named[0]
    if advice is not None and not named and (means := disposition_from(_first_sentence(_field_text(section, *advice)))):
        return Disposition(means).escalation.value  # "Plan: Pharmacist for a cream. GP if spreading."
    named = _escalation_from(_outside_fields(section, fields))
    if len(named) == 1 or (field is not None and named):
        return named[0]
    if named:
        problems.append(f"ambiguous escalation: mentions {', '.join(named)}")
    else:
        problems.append("no escalation (expected e.g. 'Escalation: emergency')")
    return None


# How the patient gets there (scenarios.schema.Disposition). Matched as words after conditional clauses
# ("if it gets worse, call 999") are removed; the earliest match wins, the longer at one position
# ("same-day GP" over "GP"), an ambulance anywhere in the value wins over the emergency department
# ("go to the ED by ambulance"), and a pharmacist over self care ("self-care via your pharmacist").
DISPOSITION_KEYWORDS: dict[str, tuple[str, ...]] = {
    "ambulance": ("ambulance", "911", "999", "112", "call 000", "triple zero", "nine one one", "nine-one-one",
                  "nine nine nine", "paramedic",
                  "paramedics", "emergency services", "ems",
                  "blue light"),
    "self_present_ed": ("self_present_ed", "self-present", "self present", "self-presentation", "own way",
                        "someone drive", "someone to drive", "drive you", "drive him", "drive her", "drive them",
                        "get a lift", "a taxi", "go to the ed", "go to the er", "go to a&e", "go to the emergency",
                        "go straight to", "attend a&e", "attend the emergency", "attend the ed", "emergency department",
                        "emergency room", "a&e", "a and e", "the ed", "the er", "nearest ed", "nearest er",
                        "eye casualty",
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
# a GP named with the day it is wanted: "contact your GP practice today", not "it doesn't need to be today"
_SAME_DAY = re.compile(r"\b(?:today|same[- ]day|this (?:morning|afternoon|evening)|urgently)\b")
_NOT_TODAY = re.compile(r"\b(?:not|n'?t|no need)\b[^.;,\n]{0,30}?\b(?:today|same[- ]day)\b")
_CALL_IF = re.compile(r"\b(?:call|ring|phone|dial)\s+(?:999|911|112|000|an ambulance|nine[- ]nine[- ]nine"
                      r"|nine[- ]one[- ]one)\s+(?:if|should|unless|in case|whenever)\b", re.IGNORECASE)
_CONDITIONAL = re.compile(r"\b(?:if|in case|unless|whenever)\b[^.;\n]*", re.IGNORECASE)
_NO_AMBULANCE = re.compile(r"\b(?:no need (?:for|to call) (?:an )?ambulance|(?:don't|do not|doesn't|does not|not) "
                           r"(?:need|require)(?: to call)? (?:an )?ambulance|without (?:an )?ambulance|"
                           r"(?:no|not an?|not by) ambulance|"
                           r"(?:an |the )?ambulance (?:isn'?t|is not|won'?t be|wouldn'?t be|"
                           r"is un)\s*(?:needed|necessary|required))\b", re.IGNORECASE)


def disposition_from(text: str) -> str | None:
    """The disposition a field value names (``DISPOSITION_KEYWORDS``), or None."""
    text = _NO_AMBULANCE.sub(" own way ", text)
    text = _CALL_IF.sub(" ", text)  # "... and call 999 if he feels unsafe": safety-netting, not the means
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
    first = min(hits)[2]
    if first == "routine_gp" and _SAME_DAY.search(_NOT_TODAY.sub(" ", low)):  # "call your GP surgery today"
        return "same_day_gp"
    return first


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


# the scale's own name for a level is not an escalation: "ESI 3 - urgent", "Level 2 (Emergent)", "Category 4: green"
_DESCRIPTORS = {1: r"resuscitation|immediate", 2: r"emergent|very urgent", 3: r"urgent",
                4: r"less[\s-]+urgent|semi[\s-]+urgent", 5: r"non[\s-]+urgent|not\s+urgent"}
_LEVEL_DESCRIPTOR = {level: re.compile(
    rf"\s*[-\u2013\u2014:,(]?\s*\(?(?:{words}|standard|red|orange|yellow|green|blue|high|moderate|low|lowest)\b\)?",
    re.IGNORECASE) for level, words in _DESCRIPTORS.items()}
_QUESTION = re.compile(r"\?\s*$")
_THANKS = re.compile(r"\bthank(?:s| you)(?: so much| very much)? for\b[^.;!\n]*", re.IGNORECASE)
_CONDITION_WORD = re.compile(r"\b(?:if|unless|in case|whenever|should (?:it|he|she|they|you|things)|otherwise)\b",
                             re.IGNORECASE)


_CATEGORY = r"(emergency|urgent|routine|self[-_ ]care)"
_SAID_LINES = 3  # the marker line and the two after it
_SAID_ESCALATION = re.compile(rf"\b{_CATEGORY}\s+escalation\b|\bescalation(?:\s+category)?(?:\s+(?:is|of)|\s*[:=])\s*"
                              rf"{_CATEGORY}\b", re.IGNORECASE)


def decision_escalation(text: str) -> str | None:
    """The escalation a line without a label decides ("ESI 5 - self-care at home", "Urgent: go today"), or None.

    A category said to be the escalation ("urgent escalation", "escalation: routine") is it. Conditional clauses
    ("if it gets worse, call 999"), a question, and a level's own descriptor are not one; a line
    naming several categories decides only when the means it names belongs to one of them ("see a GP today": the
    same-day GP settles urgent over the GP's routine).
    """
    from scenarios.schema import Disposition

    if _QUESTION.search(text):
        return None
    if (said := _SAID_ESCALATION.search(text)) is not None:  # "ESI 2 (urgent escalation)": said outright
        return (said[1] or said[2]).lower().replace("-", "_").replace(" ", "_")
    # a sentence or clause with a condition is safety-netting as a whole ("Call 999 if he turns blue"); thanks for
    # what happened decide nothing ("Thank you for completing Tom's triage today")
    text = _THANKS.sub(" ", text)
    text = "; ".join(c for c in re.split(r"[.;!\n]+", text) if not _CONDITION_WORD.search(c))
    kept, pos = [], 0
    for m in _LEVEL_RE.finditer(text):
        kept.append(text[pos:m.start()])
        descriptor = _LEVEL_DESCRIPTOR[int(m.group(1))].match(text, m.end())
        pos = descriptor.end() if descriptor else m.end()
    text = " ".join([*kept, text[pos:]])
    named = _escalation_from(text)
    if named == ["routine"] and disposition_from(text) == "same_day_gp":  # "ring your GP this morning"
        return "urgent"
    if len(named) > 1:  # "Urgent | Same-day GP" names urgent (and "GP", routine): the means settles it
        means = disposition_from(text)
        settled = Disposition(means).escalation.value if means is not None else None
        return settled if settled in named else None
    return named[0] if named else None


def parse_escalation_line(reply: str) -> str | None:
    """The category of an ``Escalation:`` line (the first one it names), or None."""
    lines = _lines(reply)
    fields = _fields(lines)
    field = next(((j, f) for j, f in fields if f.kind == "escalation"), None)
    named = _escalation_from(_field_text(lines, *field)) if field else []
    return named[0] if named else None
