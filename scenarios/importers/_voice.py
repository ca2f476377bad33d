"""Who tells an imported case, and in what words: the patient in the first person, or a child's carer.

Case write-ups are third person ("The patient reports a 2-day history of fever. She denies cough.").
:func:`patient_words` turns a sentence into the patient's words (:func:`scenarios.importers._person.speak`: "I've
had a 2-day history of fever.", "I haven't had any cough.", the verbs agreeing with ``I``); :func:`carer_voice` turns
it into what the parent of a young child says ("My son has had a fever", the child staying "he"; a carer the case
names, "Anna", becomes ``I``). Both importers (AgentClinic and vignettes) use them. Anything the rules do not cover is
kept as written: the clinical content is never changed.
"""

from __future__ import annotations

import re

from scenarios.importers._person import Speaker, speak

_CHILD_WORDS = "patient|child|infant|baby|newborn|neonate|toddler|boy|girl|kid"
_CHILD_NOUNS = f"(?:{_CHILD_WORDS})"
_CHILD_SUBJECT = re.compile(rf"\b(?:the|this)\s+(?:{_CHILD_WORDS}|young (?:boy|girl|child)|son|daughter)\b", re.I)
_CARERS = r"(?:mother|father|parents?|mom|mum|dad|caregivers?|carers?|guardians?)"
_CARER_REPORT = re.compile(rf"^(?:the|his|her|their|the {_CHILD_NOUNS}'s)\s+{_CARERS}\s+"
                           r"(?:also\s+)?(?:reports?|states?|notes?|mentions?|says?|explains?|describes?|"
                           r"noticed|notices|reported|stated|noted|mentioned|said|adds?|recalls?)\s+(?:that\s+)?",
                           re.I)
_ACCORDING = re.compile(rf"^according to (?:the|his|her|their) {_CARERS},?\s+", re.I)
_PARENTS = re.compile(r"\b(?:both\s+(?:of\s+)?(?:his|her|the|their)?\s*parents|(?:his|her|the|their)\s+parents)\b"
                      r"(?P<after>\s+(?P<next>\w+))?", re.I)
_PLURAL_VERBS = re.compile(r"(?:are|were|have|had|do|did|can|could|will|would|\w+ed|smoke|drink|work|live|think|feel|"
                           r"report|say|noticed|both)$", re.I)


def patient_words(sentence: str, *, sex: str | None = None) -> str:
    """The patient's own words for a write-up sentence about them (``_person.speak``).

    ``sex``: the patient's, when known, so that "his" / "her" are resolved without guessing.

    "The patient reports a 2-day history of fever" -> "I've had a 2-day history of fever"; "He denies chest
    pain" -> "I haven't had any chest pain"; "I have been in hospice care and has experienced" -> "... and have
    experienced" (verbs joined to the first agree with ``I``).
    """
    return speak(sentence, Speaker(sex=sex))


def _we(match: re.Match[str]) -> str:
    """"both parents smoke" -> "we both smoke"; "his parents" as a subject -> "we", as an object -> "us"."""
    both = match.group(0).lower().startswith("both")
    after = match.group("after") or ""
    if match.group("next") and _PLURAL_VERBS.search(match.group("next")):
        return ("we both" if both else "we") + after
    return ("both of us" if both else "us") + after


def carer_voice(sentence: str, child: str, *, carer: Speaker | None = None) -> str:
    """A case write-up sentence as the carer of a child tells it.

    The child is ``my son`` (``my daughter``, ``my baby``) and stays ``he``/``she``; "The mother reports that
    ..." is the carer speaking, so the reporting clause goes ("The mother reports that he has had a fever" ->
    "He has had a fever"); "both parents smoke" -> "we both smoke". ``carer``: how the case names the carer
    ("Anna", her sex when the child's pronouns are the other ones): that name and those pronouns become ``I``
    (``_person.speak``: "Anna worries, so she gives him juice" -> "I worry, so I give him juice").
    """
    text = " ".join(sentence.split())
    if not text:
        return text
    text = _ACCORDING.sub("", _CARER_REPORT.sub("", text))
    text = re.sub(rf"\b(?:the|this)\s+{_CHILD_NOUNS}'s\b", f"my {child}'s", text, flags=re.I)
    text = re.sub(r"\b(?:her|his|their) child\b", f"my {child}", text, flags=re.I)
    text = _CHILD_SUBJECT.sub(f"my {child}", text)
    text = _PARENTS.sub(_we, text)
    text = re.sub(r"^(?:denies|denied)\s+", "There's been no ", text, flags=re.I)
    if carer is not None and (carer.names or carer.sex):
        text = speak(text, Speaker(sex=carer.sex, names=carer.names, patient_words=False, subjectless=False))
    return text[0].upper() + text[1:]
