"""A case write-up in the words of the person asking for advice (symptom-checker vignettes).

Published vignettes are written about the patient ("A 45-year-old man presents to the emergency
department with chest pain. He ..."); a triage chatbot is asked by the patient, or by a child's parent.
``case_sentences`` rewrites a case sentence by sentence: the opening sentence by ``case_intro`` ("I'm
a 45-year-old man and I have chest pain."; a child's: "My 4-year-old boy has ..."), the others by
``patient_statement`` (``first_person`` of ``_text``, and the patterns it leaves: "Her cough is ..." ->
"My cough is ...", "She denies X." -> "I haven't had X."). Only the grammatical person and the place
of presentation change; every clinical word is kept, in order. What no pattern recognises is kept as
written.

The rules here are this module's own (they do not reach into ``_text``'s private helpers), so that
other importers' work on ``_text`` cannot change how vignettes read.
"""

from __future__ import annotations

import re

from scenarios.importers._text import _ADVERB, _first_person_verb, _rewrite_clause, first_person, sentences, words

# Only he / she: in a case's later sentences "the patient" is handled by ``first_person`` itself.
_SUBJECT = r"(?:he|she)"
_CLAUSE = re.compile(rf"\b(?P<subj>{_SUBJECT})\s+(?P<adv>{_ADVERB})(?P<verb>[A-Za-z]+)\b(?:\s+(?P<prep>of|with)\b)?",
                     re.I)


_AGE_PHRASE = r"\d+(?:\.\d+)?\s*[- ]?\s*(?:years?|yrs?|months?|weeks?|days?)\s*[- ]?\s*old"
_VENUE = (r"(?:(?:the|his|her|their|your|a|an|our)\s+)?(?:(?:local|nearest|hospital|pediatric|paediatric|primary|"
          r"walk-in|urgent|family|general|outpatient|acute)\s+)*(?:emergency\s+(?:department|room|unit)|ED|ER|A&E|"
          r"office|clinic|surgery|practice|hospital|physician|doctor|GP|pediatrician|paediatrician|urgent\s+care|"
          r"care\s+clinic|primary\s+care(?:\s+(?:physician|doctor|provider|clinic))?|health\s+cent(?:er|re))")
_INTRO_VERBS = {
    "presents": "have", "presented": "had", "comes": "have", "came": "had", "attends": "have", "attended": "had",
    "is brought": "have", "was brought": "had", "is seen": "have", "was seen": "had", "complains": "have",
    "complained": "had", "reports": "have", "reported": "had", "develops": "develop", "developed": "developed",
    "has": "have", "had": "had", "sustains": "sustain", "sustained": "sustained", "notices": "notice",
    "noticed": "noticed", "experiences": "experience", "experienced": "experienced",
}
_INTRO_VERB = "|".join(sorted((re.escape(v).replace("\\ ", r"\s+") for v in _INTRO_VERBS), key=len, reverse=True))
_INTRO = re.compile(
    r"^(?:(?:consider|imagine)\s+)?(?:(?:a|an)\s+|(?:mr|mrs|ms|miss|dr)\.?\s+\w+\s+is\s+(?:a|an)\s+)"
    rf"(?P<who>{_AGE_PHRASE}\b.*?)(?:,?\s+who\s+|\s+)"
    rf"(?P<verb>{_INTRO_VERB})\b"
    rf"(?:\s+to\s+{_VENUE}\b)?(?P<after>.*)$", re.I | re.S)
_CONNECTOR = re.compile(r"^(?P<pre>.*?)\s*\b(?:with|because\s+of|complaining\s+of|due\s+to|for)\s+"
                        r"(?:(?:a\s+)?(?:complaints?|concerns?)\s+(?:of|about)\s+)?(?P<what>.+)$", re.I | re.S)
_CHILD_WORDS = re.compile(r"\b(?:infant|baby|toddler|newborn|neonate|child|kid)\b", re.I)
# Past tenses that are the same in the first person ("The patient went" -> "I went").
_PAST_IRREGULAR = frozenset("""went took felt saw came began became got gave ate drank fell woke thought knew left lost
found kept ran slept spent told wrote sat stood broke made heard held brought caught bought hit hurt cut put""".split())


# Verbs that often follow "and" with the same subject ("He has diabetes and smokes"); nouns ending in -s
# ("arms and legs") must not be read as verbs, so only these are rewritten.
_AND_VERB = re.compile(r"(\band\s+(?:also\s+)?)(has|is|smokes|drinks|takes|feels|works|lives|uses|gets|reports|"
                       r"denies|complains|describes|wakes|eats|walks|sleeps|coughs|vomits|needs|wants|says|does)\b")


# In an adult's case he / she / his / her mean the patient unless the sentence brings in someone else.
_PATIENT_PRONOUN = re.compile(r"\b(?:he|she|his|her|him|himself|herself)\b", re.I)
_OTHER_PERSON = re.compile(r"\b(?:husband|wife|partner|spouse|mother|father|mum|mom|dad|son|daughter|brother|sister|"
                           r"parents?|friends?|family|relatives?|doctor|physician|nurse|paramedics?|colleagues?|boss|"
                           r"boyfriend|girlfriend|child|children|baby|neighbou?r|carer|caregiver|man|woman|someone)\b",
                           re.I)


def _age_years(who: str) -> float | None:
    m = re.search(r"(\d+(?:\.\d+)?)\s*[- ]?\s*(years?|yrs?|months?|weeks?|days?)", who, re.I)
    if not m:
        return None
    n, unit = float(m.group(1)), m.group(2).lower()
    per_year = 1 if unit.startswith("y") else 12 if unit.startswith("mo") else 52 if unit.startswith("w") else 365
    return n / per_year


def told_by_parent(who: str) -> bool:
    """Whether a case about ``who`` ("4-year-old boy", "18-month-old toddler") is told by a parent.

    True for a child under 13, or one the case calls an infant, baby, toddler, newborn or child.
    """
    age = _age_years(who)
    return (age is not None and age < 13) or bool(_CHILD_WORDS.search(who))


def _person(text: str) -> str:
    """The rules of ``first_person`` applied to a clause already known to be about the patient.

    ``he/she <verb>`` -> ``I <verb>``, ``his``/``her`` -> ``my``, ``him``/``her`` -> ``me``.
    """
    def clause(m: re.Match[str]) -> str:
        if m.group("verb").lower() in _PAST_IRREGULAR and not m.group("prep"):
            return f"I {m.group('adv') or ''}{m.group('verb').lower()}"
        return _rewrite_clause(m)

    out = _CLAUSE.sub(clause, text)
    if out.startswith("I "):  # "I have ... and smokes 20 a day": a second verb of the same subject
        out = _AND_VERB.sub(lambda m: f"{m.group(1)}{_first_person_verb(m.group(2)) or m.group(2)}", out)
    out = re.sub(r"\b[Tt]he patient's\b", "my", out)
    out = re.sub(r"\b(?:his|His)\b", "my", out)
    out = re.sub(r"\b(?:her|Her)\b(?=\s+(?!to\b|and\b|at\b|in\b|on\b|for\b|with\b|from\b|that\b|as\b|by\b)[a-z])",
                 "my", out)
    out = re.sub(r"\b(?:him|her)\b", "me", out)
    return re.sub(r"\b(?:himself|herself)\b", "myself", out)


def case_intro(sentence: str) -> tuple[str, str, bool] | None:
    """The opening sentence of a case write-up in the words of whoever asks for advice, or None.

    None when it does not open like one ("A/An <age>-old <who> [with ...] presents [to the <venue>] with <what>").

    Returns (the sentence rewritten, ``who`` as written, whether a parent tells it). An adult speaks for
    themselves: "A 45-year-old man presents to the emergency department with chest pain." -> "I'm a
    45-year-old man and I have chest pain."; a child's parent speaks for the child (``told_by_parent``):
    "A 4-year-old boy presents with bloody diarrhoea." -> "My 4-year-old boy has bloody diarrhoea." Only
    the grammatical person and the place of presentation change ("to the emergency department" is left
    out: the person is asking where to go, and saying where they already are would answer it); every
    clinical word is kept in its order.
    """
    text = " ".join(sentence.split())
    m = _INTRO.match(text)
    if not m:
        return None
    who = m.group("who").strip().rstrip(",")
    verb = " ".join(m.group("verb").lower().split())
    after = m.group("after").strip()
    parent = told_by_parent(who)
    article = "an" if re.match(r"8|1[18](?!\d)", who) else "a"  # an 8-, 11-, 18-, 80-year-old
    start = f"My {who}" if parent else f"I'm {article} {who}"
    base = _INTRO_VERBS[verb]
    if parent:
        base = {"have": "has", "had": "had"}.get(base, base if base.endswith("ed") else f"{base}s")
    conn = _CONNECTOR.match(after) if base in ("have", "had", "has") else None
    if conn and len(words(conn.group("pre"))) <= 8:
        pre = re.sub(r"^by\s+(?:his|her|their)\s+\w+\s*", "", conn.group("pre").strip(), flags=re.I).strip(" ,")
        what = conn.group("what")
        joined = (f"{start}, {pre}, {base} {what}" if parent else f"{start} and, {pre}, I {base} {what}") if pre \
            else (f"{start} {base} {what}" if parent else f"{start} and I {base} {what}")
    elif after:
        joined = f"{start} {base} {after}" if parent else f"{start} and I {base} {after}"
    else:
        return None
    return (joined if parent else _person(joined)), who, parent


def patient_statement(sentence: str, *, by_parent: bool = False) -> str:
    """A later sentence of a case in the words of whoever tells it.

    A parent tells a child's case as written (he, she and the child's name are right in a parent's mouth). An
    adult's: ``first_person``, and where that leaves the sentence unchanged, one whose he / she / his / her can
    only be the patient (no one else is named in it: "Her cough is ...", "Ten days ago she had ...") or that
    says what the patient denies ("She denies chest pain.") is rewritten the same way ("My cough is ...", "I
    haven't had chest pain."). Anything else is kept as written.
    """
    text = " ".join(sentence.split())
    if by_parent or not text:
        return text
    denies = re.match(r"^(?:he|she|the patient|patient)\s+(?:also\s+)?denies\s+(?:any\s+)?(?P<what>.+)$", text, re.I)
    if denies:
        return f"I haven't had {denies.group('what')}"
    rewritten = first_person(text)
    if rewritten == text and _PATIENT_PRONOUN.search(text) and not _OTHER_PERSON.search(text):
        rewritten = _person(text)  # "Ten days ago she had ...", "There is no blood in his stools."
    if rewritten == text and re.match(r"^(?:the\s+)?patient\s+[a-z]", text, re.I):  # "The patient went ..."
        rewritten = _person(re.sub(r"^(?:the\s+)?patient\b", "she", text, flags=re.I))
        rewritten = text if rewritten.startswith("she ") else rewritten
    if rewritten.startswith("I "):
        rewritten = _AND_VERB.sub(lambda m: f"{m.group(1)}{_first_person_verb(m.group(2)) or m.group(2)}", rewritten)
    return rewritten[0].upper() + rewritten[1:] if rewritten else rewritten


def case_sentences(text: str) -> tuple[list[tuple[str, str]], str | None, bool]:
    """A case write-up sentence by sentence, each as written and in the words of the person asking.

    Returns ([(as written, rewritten), ...], ``who`` of the opening sentence or None, whether a parent tells it).
    The opening sentence goes through ``case_intro``, the others through ``patient_statement``; when the
    opening sentence is not recognised every sentence is kept as written.
    """
    parts = sentences(text)
    intro = case_intro(parts[0]) if parts else None
    if intro is None:
        return [(p, p) for p in parts], None, False
    first, who, parent = intro
    return [(parts[0], first), *((p, patient_statement(p, by_parent=parent)) for p in parts[1:])], who, parent


def case_in_first_person(text: str) -> tuple[str, str | None, bool]:
    """A whole case write-up as the message of the person asking for advice.

    Returns (message, ``who`` of the opening sentence or None, whether a parent tells it), from
    ``case_sentences`` re-joined with single spaces (line breaks inside sentences, as PDF extracts have them,
    are dropped).
    """
    pairs, who, parent = case_sentences(text)
    if not pairs:
        return " ".join(text.split()), None, False
    return " ".join(rewritten for _, rewritten in pairs), who, parent
