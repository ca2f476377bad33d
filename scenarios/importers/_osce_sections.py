"""Reading an AgentClinic OSCE case's nested sections: values as text, leaves, statements, placeholders.

What the history, examination and test readers share: ``_scalar`` and ``_measurement`` turn a value or a
measurement (``{"Value": 12, "Unit": "g/dL"}``) into text, ``_leaves`` flattens nested sections into
(path, text) leaves, ``_items`` splits a field into statements, ``not_provided`` recognises a placeholder that
says nothing was given, and ``_Fact`` is the record every reader returns (``_agentclinic.py`` turns the records
into the information tree).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from scenarios.importers._text import humanise, sentences, words

MAX_TRIGGERS = 10


# --- reading the nested sections ----------------------------------------------------------------

# Notes to the actor or examiner inside a sentence, and template slots never filled in: "(actor instructions: look
# anxious)", "[insert duration]", "<add value>". They are removed; a sentence that was nothing else is left empty.
_AUTHOR_NOTE = re.compile(
    r"\s*\((?:\s*(?:actor|actors|actor's|sp|standardi[sz]ed patient|examiner|examiner's|instructions?|note to|"
    r"notes? for|for the (?:actor|examiner|student|candidate)|stage directions?|insert|placeholder|"
    r"to be (?:added|determined|filled))\b)[^()]*\)"
    r"|\s*[\[<{]\s*(?:insert|add|enter|specify|fill(?: in)?|include|placeholder|to be|tbd|tba|describe|list|give|"
    r"name of|patient'?s? name|xx+)\b[^\]>}]*[\]>}]"
    r"|\s*\[\s*[_.x\s]*\]", re.I)


_DANGLING = re.compile(r"\s+(?:for|of|since|at|on|in|with|about|to|by|from|is|was|are|were|the|a|an|and|or)"
                       r"(?=\s*(?:[.!?;,]|$))", re.I)


def clean_text(text: str) -> str:
    """``text`` on one line without notes to the actor or examiner and unfilled template slots (``_AUTHOR_NOTE``).

    Where a slot is removed, the words left hanging before it go too ("a cough for [insert duration]." -> "a cough.").
    """
    flat = " ".join(text.split())
    out = _AUTHOR_NOTE.sub("", flat)
    if out != flat:
        while (shorter := _DANGLING.sub("", out)) != out:
            out = shorter
    return " ".join(out.split())


def _scalar(value: Any) -> str | None:
    if value is None or isinstance(value, dict):
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        parts = [_scalar(v) if not isinstance(v, dict) else _measurement(v) for v in value]
        text = "; ".join(p for p in parts if p)
        return text or None
    text = clean_text(str(value))
    return text or None


_MEASUREMENT_KEYS = {"value", "unit", "units", "reference range", "normal range", "range", "interpretation",
                     "result", "findings", "flag", "normal"}


def _measurement(d: dict[str, Any]) -> str | None:
    """``{"Value": 12, "Unit": "g/dL", "Reference_Range": "13-17"}`` -> ``12 g/dL; reference range: 13-17``."""
    if len(d) == 1:  # {"Findings": "..."}: the finding itself
        return _scalar(next(iter(d.values()))) if not isinstance(next(iter(d.values())), dict) else None
    keys = {humanise(str(k)): v for k, v in d.items()}
    head = " ".join(s for s in (_scalar(keys.pop("value", None)), _scalar(keys.pop("unit", keys.pop("units", None))))
                    if s)
    rest = [f"{k}: {s}" for k, v in keys.items() if (s := _scalar(v))]
    text = "; ".join([head, *rest] if head else rest)
    return text or None


# A field written for the actor, the examiner or the reader, not about the patient: "Actor_Instructions",
# "Notes_for_Examiner", "Optional", "Objective_for_Doctor".
_AUTHOR_FIELD = re.compile(r"\b(?:instructions?|actor|actors|examiner|objective|optional|stage directions?|"
                           r"teaching points?|learning points?)\b")


def author_field(key: str) -> bool:
    """Whether a field is a note to the actor, examiner or reader (``_AUTHOR_FIELD``): no fact comes of it."""
    return bool(_AUTHOR_FIELD.search(humanise(key)))


def _leaves(value: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str]]:
    """Flatten nested sections into (path of humanised names, text) leaves, in source order."""
    if isinstance(value, dict):
        named = {humanise(str(k)): v for k, v in value.items()}
        label = next((named[k] for k in ("name", "test", "test name") if isinstance(named.get(k), str)), None)
        if label and all(k in _MEASUREMENT_KEYS | {"name", "test", "test name"} for k in named):
            rest = {k: v for k, v in value.items() if humanise(str(k)) not in ("name", "test", "test name")}
            text = _measurement(rest) if rest else None
            return [((*path, humanise(label)), text)] if text else []
        if value and all(humanise(str(k)) in _MEASUREMENT_KEYS for k in value) and path:
            text = _measurement(value)
            return [(path, text)] if text else []
        out: list[tuple[tuple[str, ...], str]] = []
        for key, sub in value.items():
            if not author_field(str(key)):
                out.extend(_leaves(sub, (*path, humanise(str(key)))))
        return out
    if isinstance(value, list) and any(isinstance(v, dict) for v in value):
        out = []
        for sub in value:  # a list of sub-sections: each under the list's own name
            out.extend(_leaves(sub, path))
        return out
    text = _scalar(value)
    return [(path, text)] if text else []


def _split_name(name: str) -> tuple[str, list[str]]:
    """``electrocardiogram (ecg)`` -> (``electrocardiogram``, [``ecg``])."""
    m = re.match(r"^(.*?)\s*\((.*?)\)\s*(.*)$", name)
    if not m:
        return name, []
    base = " ".join(f"{m.group(1)} {m.group(3)}".split())
    return (base or m.group(2)), ([m.group(2)] if base and m.group(2) else [])


def _items(value: Any, *, split_sentences: bool = True) -> list[str]:
    """A field's value as a list of statements: sentences of prose, list items, ``name: value`` pairs."""
    if isinstance(value, str):
        value = clean_text(value)
        return sentences(value) if split_sentences else ([value] if words(value) else [])
    if isinstance(value, list):
        out: list[str] = []
        for v in value:
            out.extend(_items(v, split_sentences=False) if not isinstance(v, dict) else _items(v))
        return out
    if isinstance(value, dict):
        return [f"{path[-1].capitalize()}: {text}" if path else text for path, text in _leaves(value)]
    text = _scalar(value)
    return [text] if text else []


def _sentence_end(text: str) -> str:
    return text if text[-1:] in ".!?" else f"{text}."


# A value that says nothing was given: the field yields no fact.
_NOT_PROVIDED = re.compile(r"\b(?:not|no|none)\b.*\b(?:provided|mentioned|specified|available|given|documented|"
                           r"recorded|stated|obtained|performed|done|applicable|reported in the case|described)\b",
                           re.I)
_EMPTY_VALUES = {"", "n/a", "na", "none", "unknown", "not applicable", "-", "nil", "not provided", "not available",
                 "not mentioned", "not specified", "not reported", "not done", "not performed", "none reported",
                 "none noted", "none given", "none specified", "none provided", "none mentioned", "not stated",
                 "n/a n/a", "no data", "no information", "information unavailable", "data unavailable"}


_NOTHING_GIVEN = re.compile(r"^(?:(?:the\s+)?(?:details?|information|data|findings?|results?|specifics?)\s+"
                            r"(?:are|is|were|was)\s+)?not\s+(?:provided|given|available|specified|mentioned)\b|"
                            r"^(?:the\s+)?patient\s+(?:didn't|did not|does not|doesn't)\s+"
                            r"(?:provide|give|mention|report)\s+any\b", re.I)
# Not yet known or not assessable: "To be determined", "Pending", "Awaiting results", "Unknown at this time due to
# the patient's condition", "Limited due to the patient's unconscious state", "Not assessed".
_NOT_YET = re.compile(r"^(?:(?:results?\s+)?(?:to be|yet to be|still to be)\s+(?:determined|confirmed|decided|added|"
                      r"completed|obtained|reported)|tbd|tba|tbc|pending|awaiting|in progress|unknown\b|"
                      r"(?:(?:history|examination|exam|assessment|review)\s+)?(?:limited|not possible|unobtainable|"
                      r"unable to be (?:obtained|assessed)|cannot be (?:obtained|assessed))\s+(?:due to|because of|"
                      r"owing to|given|by)\s+(?:the\s+)?(?:patient'?s?\s+|(?:his|her|their)\s+)?(?:confusion|"
                      r"unconscious|intubat|sedat|condition|state|mental|cooperation|co-operation|age|language|"
                      r"level of consciousness|altered|agitation|distress))|"
                      r"^not\s+(?:yet\s+)?(?:assessed|examined|tested|measured|evaluated|checked|determined|obtained|"
                      r"done|performed|available|known)\b", re.I)
# A note to the actor, examiner or reader rather than something about the patient: "The patient should describe
# the pain as ...", "Actor instructions: ...", "For your role as a patient, ...", "Imagine ...", "Can be considered
# if ..., not mandatory for diagnosis in this simulated case".
_AUTHOR_SENTENCE = re.compile(
    r"^(?:the\s+)?(?:patient|actor|sp|standardi[sz]ed patient|student|examiner|candidate|doctor|clinician|"
    r"physician)\s+(?:should|must|will need to|needs to|is to|is expected to|may want to|can be asked to|"
    r"is instructed to|should be instructed to)\b"
    r"|^(?:(?:actor|examiner|sp)(?:'s)?\s+)?(?:instructions?|notes? (?:to|for) (?:the\s+)?(?:actor|examiner|"
    r"student|candidate)|stage directions?)\s*[:-]"
    r"|^(?:for your role as|in your role as|as the (?:patient|actor)|you are (?:a|an|the)\b|imagine\b|"
    r"pretend\b|act as\b|role[- ]?play\b)"
    r"|\b(?:simulated|simulation|this (?:scenario|simulation|exercise|osce|station)|standardi[sz]ed patient|"
    r"not mandatory for (?:the\s+)?diagnosis|for (?:the\s+)?(?:actor|examiner|purposes of (?:this|the) "
    r"(?:case|scenario|exercise)))\b", re.I)


def not_provided(text: str) -> bool:
    """Whether ``text`` is a placeholder that says the source has nothing to tell.

    ``Information not provided.``, ``No additional symptoms mentioned.``, ``N/A``, ``Details are not provided
    in this scenario but imagine ...``; one that is not known yet or could not be assessed (``To be
    determined``, ``Pending``, ``Unknown at this time``, ``Not assessed``); a note to the actor or examiner
    (``The patient should describe ...``, ``Actor instructions: ...``, ``... in this simulated case``); and
    a template slot never filled in (``[insert duration]``: ``clean_text`` removes it, and nothing is left).
    """
    t = clean_text(text).strip().rstrip(".").lower()
    if t.startswith("n/a") and len(words(t)) <= 6:  # "N/A - newborn", "N/A (not applicable)"
        return True
    return t in _EMPTY_VALUES or not words(t) or bool(_NOTHING_GIVEN.match(t) or _NOT_YET.match(t)
                                                     or _AUTHOR_SENTENCE.search(t)) \
        or (len(words(t)) <= 9 and bool(_NOT_PROVIDED.search(t)))


@dataclass
class _Fact:
    prefix: str
    category: str
    answer: str
    text: str  # the source words (for ``critical`` and lay synonyms)
    triggers: list[str] = field(default_factory=list)
    intents: list[str] = field(default_factory=list)
    critical: bool = False
    origin: str = ""
