"""The spoken form: what Whisper heard of a spoken assessment, rewritten as the written block."""

from __future__ import annotations

import re

from sim.encounter.assessment._parse import parse_assessment
from sim.encounter.assessment._triage import parse_escalation_line

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
