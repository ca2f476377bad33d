"""Find and parse the agent's final assessment.

The harness protocol asks the agent to finish with a block such as::

    ASSESSMENT:
    Triage level: ESI 2
    Escalation: emergency
    Diagnoses: 1. Acute coronary syndrome; 2. Aortic dissection

``ASSESSMENT_RE`` decides that a reply *is* the assessment (a line beginning ``assessment:``,
``assessment -`` or ``my assessment:``, any case). ``parse_assessment`` then reads, from that line
on: the triage level (``ESI 2``, ``triage level: 2``, ``CTAS 2``, ``level 2``), the escalation (the
``Escalation:`` field if present, else the one category whose keywords appear), and the diagnoses
(the ``Diagnoses:`` / ``Differential:`` field, one per list item or ``;`` / ``,`` separated).
What cannot be read is left ``None`` and the reason goes to ``problems``; the scorer fails that
component and records the reason.
"""

from __future__ import annotations

import re

from sim.result import ParsedAssessment

ASSESSMENT_RE = re.compile(r"^\s*(?:my\s+)?assessment\s*[:\-]", re.IGNORECASE | re.MULTILINE)

_LEVEL_RE = re.compile(
    r"\b(?:esi|ctas|triage(?:\s+level)?|acuity(?:\s+level)?|level)\s*(?:level)?\s*(?:is|of|=|:|-|#)?\s*\(?([1-5])\b",
    re.IGNORECASE,
)
_FIELD_RE = r"^\s*[*_#\-\s]*{name}[*_\s]*[:\-]\s*(?P<value>.*)$"
_ESCALATION_FIELD = re.compile(_FIELD_RE.format(name=r"(?:escalation|disposition|recommendation)"), re.I | re.M)
_DIAGNOSIS_FIELD = re.compile(
    _FIELD_RE.format(name=r"(?:(?:most\s+likely\s+|working\s+|differential\s+)?diagnos[ie]s|differential|ddx)"), re.I | re.M
)
_ANY_FIELD = re.compile(r"^\s*[*_#\-\s]*[A-Za-z][A-Za-z ]{2,30}[*_\s]*:\s", re.M)

# Most urgent first. A phrase may only count once: "not an emergency" is handled by ambiguity below.
ESCALATION_KEYWORDS: dict[str, tuple[str, ...]] = {
    "emergency": ("emergency", "911", "999", "112", "ambulance", "er now", "a&e", "immediately to the"),
    "urgent": ("urgent", "same day", "same-day", "within 24 hours", "today", "walk-in"),
    "routine": ("routine", "primary care", "gp", "family doctor", "regular doctor", "follow up", "follow-up",
                "schedule an appointment", "refill"),
    "self_care": ("self_care", "self care", "self-care", "home care", "at home", "rest and fluids", "over the counter"),
}


def is_assessment(text: str) -> bool:
    return ASSESSMENT_RE.search(text) is not None


def _escalation_from(text: str) -> list[str]:
    """Categories whose keywords occur in ``text``, ordered by where they first occur."""
    low = f" {text.lower()} "
    first: dict[str, int] = {}
    for category, words in ESCALATION_KEYWORDS.items():
        for w in words:
            m = re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", low)
            if m and m.start() < first.get(category, len(low)):
                first[category] = m.start()
    return sorted(first, key=first.__getitem__)


def _split_diagnoses(first: str, following: list[str]) -> list[str]:
    items: list[str] = []
    lines = [first] if first.strip() else []
    for line in following:
        if not line.strip() or (_ANY_FIELD.match(line) and not re.match(r"^\s*(\d+[.)]|[-*])", line)):
            break
        lines.append(line)
    for line in lines:
        line = re.sub(r"^\s*(?:\d+[.)]|[-*•])\s*", "", line)
        for part in re.split(r";|,|\s\d+[.)]\s", line):
            part = re.sub(r"^\s*(?:\d+[.)])\s*", "", part).strip(" *_.")
            if part:
                items.append(part)
    return items


def parse_escalation_line(reply: str) -> str | None:
    """The category of an ``Escalation:`` line (the most urgent one it names), or None."""
    field = _ESCALATION_FIELD.search(reply)
    found = _escalation_from(field.group("value")) if field else []
    return found[0] if found else None


def parse_assessment(reply: str) -> ParsedAssessment:
    match = ASSESSMENT_RE.search(reply)
    if match is None:
        return ParsedAssessment(problems=["no line beginning 'Assessment:' in the reply"])
    text = reply[match.start():]
    problems: list[str] = []

    levels = [int(m.group(1)) for m in _LEVEL_RE.finditer(text)]
    level = levels[0] if levels else None
    if level is None:
        problems.append("no triage level (expected e.g. 'Triage level: ESI 2')")
    elif len(set(levels)) > 1:
        problems.append(f"several triage levels given ({', '.join(map(str, levels))}); the first, {level}, is used")

    escalation = None
    field = _ESCALATION_FIELD.search(text)
    candidates = _escalation_from(field.group("value")) if field else []
    if not candidates:
        candidates = _escalation_from(text)
    if len(candidates) == 1 or (field and candidates):
        escalation = candidates[0]
    elif candidates:
        problems.append(f"ambiguous escalation: mentions {', '.join(candidates)}")
    else:
        problems.append("no escalation (expected e.g. 'Escalation: emergency')")

    diagnoses: list[str] = []
    dx = _DIAGNOSIS_FIELD.search(text)
    if dx:
        following = text[dx.end():].splitlines()[1:]
        diagnoses = _split_diagnoses(dx.group("value"), following)
    if not diagnoses:
        problems.append("no diagnoses (expected e.g. 'Diagnoses: 1. ...; 2. ...')")
    return ParsedAssessment(triage_level=level, escalation=escalation, diagnoses=diagnoses, problems=problems)


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
    parsed = parse_assessment(from_speech(text[m.start():]))
    field = _ESCALATION_FIELD.search(from_speech(text[m.start():]))
    return parsed.triage_level is not None or bool(field and _escalation_from(field.group("value")))


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
