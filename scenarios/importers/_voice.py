"""Who tells an imported case, and in what words: the patient in the first person, or a child's carer.

Case write-ups are third person ("The patient reports a 2-day history of fever. She denies cough.").
:func:`patient_words` turns a sentence into the patient's words where simple patterns allow, on top of
:func:`scenarios.importers._text.first_person`; :func:`carer_voice` turns it into what the parent of a
young child says ("My son has had a fever", the child staying "he"). Anything the patterns do not
cover is kept as written: the clinical content is never changed.
"""

from __future__ import annotations

import re

from scenarios.importers._text import _ADVERB, _SUBJECT, first_person

# Coordinated verbs after a subject turned into "I" ("I have been in hospice care and has experienced").
_COORD_VERBS = {"has": "have", "is": "am", "does": "do", "reports": "report", "denies": "deny", "notes": "note",
                "describes": "describe", "experiences": "experience", "feels": "feel", "takes": "take",
                "works": "work", "lives": "live", "smokes": "smoke", "drinks": "drink", "uses": "use",
                "notices": "notice", "complains": "complain", "mentions": "mention", "states": "state",
                "admits": "admit", "endorses": "endorse", "recalls": "recall", "presents": "present",
                "wakes": "wake", "gets": "get", "goes": "go", "needs": "need", "remains": "remain",
                "becomes": "become", "continues": "continue", "appears": "appear", "seems": "seem"}
# "The patient reports a 2-day history of ..." -> "I've had a 2-day history of ..."
_REPORTS_OBJECT = re.compile(
    rf"^{_SUBJECT}\s+{_ADVERB}(?:reports|describes|notes|mentions|endorses|complains of|presents with|"
    r"is presenting with|experiences|has been experiencing|recounts|recalls)\s+(?P<rest>.+)$", re.I)
_DENIES = re.compile(rf"^(?:{_SUBJECT}\s+)?{_ADVERB}(?:denies|denied)\s+(?:any\s+)?(?:(?:history of|experiencing)\s+)?"
                     r"(?P<rest>.+)$", re.I)


def _my(text: str) -> str:
    """The patient's own pronouns in a sentence already in the first person: his/her -> my, him -> me."""
    text = re.sub(r"\b[Tt]he patient's\b", "my", text)
    text = re.sub(r"\b(?:his|His)\b", "my", text)
    text = re.sub(r"\b(?:her|Her)\b(?=\s+(?!to\b|and\b|at\b|in\b|on\b|for\b|with\b|from\b|that\b|"
                  r"as\b|by\b)[a-z])", "my", text)
    text = re.sub(r"\b(?:him|her)\b", "me", text)
    return re.sub(r"\b(?:himself|herself)\b", "myself", text)


def _fix_coordination(text: str) -> str:
    """After ``I``: ``and has`` -> ``and have``, ``but is`` -> ``but am`` (the verbs of one subject)."""
    return re.sub(r"\b(and|but|or|yet)\s+(" + "|".join(_COORD_VERBS) + r")\b",
                  lambda m: f"{m.group(1)} {_COORD_VERBS[m.group(2).lower()]}", text)


def patient_words(sentence: str) -> str:
    """:func:`first_person`, and the forms it leaves awkward.

    A reporting verb with an object ("The patient reports a 2-day history of fever" -> "I've had a 2-day
    history of fever"), a denial ("He denies chest pain" -> "I haven't had any chest pain"), and verbs joined
    to the first ("... and has experienced" -> "... and have experienced").
    """
    text = " ".join(sentence.replace("\u2019", "'").split())
    if not text:
        return text
    if m := _DENIES.match(text):
        rest = m.group("rest")
        article = "" if re.match(r"(?i)(?:any|a|an|the)\b", rest) else "any "
        return _fix_coordination(_my(first_person(f"I haven't had {article}{rest}")))
    if (m := _REPORTS_OBJECT.match(text)) and not re.match(r"(?i)that\b", m.group("rest")):
        rest = m.group("rest")
        lead = "I've been" if re.match(r"(?i)\w+ing\b", rest) else "I've had"
        return _fix_coordination(_my(first_person(f"{lead} {rest}")))
    if m := re.match(r"^(?:the\s+)?patient's\s+(?P<rest>.+)$", text, re.I):  # "The patient's history is ..."
        return _my(f"My {m.group('rest')}")
    if m := re.match(r"^(?:the\s+)?patient and (?:her|his|their)\s+(?P<rest>.+)$", text, re.I):
        return _my(f"My {m.group('rest')}").replace(" have been ", " and I have been ", 1) \
            if " have been " in m.group("rest") else _my(f"My {m.group('rest')}")
    out = first_person(text)
    if m := re.match(r"^(?:the\s+)?patient\s+(?P<rest>.+)$", out, re.I):  # a form the patterns missed
        head, *tail = m.group("rest").split(" ", 2)
        verbs = {**_COORD_VERBS, "was": "was", "had": "had"}
        if head.lower() in verbs:
            out = " ".join(["I", verbs[head.lower()], *tail])
        elif tail and tail[0].lower() in verbs:  # "first noticed", "also has"
            out = " ".join(["I", head, verbs[tail[0].lower()], *tail[1:]])
        else:
            out = f"I {m.group('rest')}"
        out = _my(out)
    if out.startswith("I ") or out.startswith("I'm "):
        out = _fix_coordination(out)
    return out


_CHILD_SUBJECT = re.compile(r"\b(?:the|this)\s+(?:patient|child|infant|baby|newborn|neonate|toddler|boy|girl|"
                            r"young (?:boy|girl|child)|son|daughter)\b", re.I)
_CARER_REPORT = re.compile(r"^(?:the|his|her|their|the (?:patient|child|infant|baby|newborn)'s)\s+"
                           r"(?:mother|father|parents?|mom|mum|dad|caregivers?|carers?|guardians?)\s+"
                           r"(?:also\s+)?(?:reports?|states?|notes?|mentions?|says?|explains?|describes?|"
                           r"noticed|notices|reported|stated|noted|mentioned|said|adds?|recalls?)\s+(?:that\s+)?",
                           re.I)


def carer_voice(sentence: str, child: str) -> str:
    """A case write-up sentence as the carer of a child tells it.

    The child is ``my son`` (``my daughter``, ``my baby``) and stays ``he``/``she``; "The mother reports that
    ..." is the carer speaking, so the reporting clause goes ("The mother reports that he has had a fever" ->
    "He has had a fever").
    """
    text = " ".join(sentence.split())
    if not text:
        return text
    text = _CARER_REPORT.sub("", text)
    text = re.sub(r"\b(?:the|this)\s+(?:patient|child|infant|baby|newborn|neonate|toddler|boy|girl)'s\b",
                  f"my {child}'s", text, flags=re.I)
    text = re.sub(r"\b(?:her|his|their) child\b", f"my {child}", text, flags=re.I)
    text = _CHILD_SUBJECT.sub(f"my {child}", text)
    text = re.sub(r"^(?:denies|denied)\s+", "There's been no ", text, flags=re.I)
    return text[0].upper() + text[1:]
