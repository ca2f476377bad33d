"""A case write-up in the words of the person asking for advice (symptom-checker vignettes).

Published vignettes are written about the patient ("A 45-year-old man presents to the emergency
department with chest pain. He ..."); a triage chatbot is asked by the patient, or by a child's parent.
``case_sentences`` rewrites a case sentence by sentence: the opening sentence by ``case_intro`` ("I'm
a 45-year-old man and I have chest pain."; a child's: "My 4-year-old boy has ..."), the others by
``patient_statement`` (``_person.speak`` for the patient: "He has had ..." -> "I have had ...", "Her husband says
she ..." -> "My husband says I ...", "She denies X." -> "I haven't had any X."; ``_voice.carer_voice`` for a child's
parent: "The toddler is irritable" -> "My daughter is irritable", "Her parents report she is ..." -> "She is ...").
Only the grammatical person and the place of presentation change; every clinical word is kept, in order. What no
rule recognises is kept as written.

The opening sentences recognised: "A/An <who> [who] <verb> [to <venue>] ...", where ``<who>`` names an age
("64-year-old", "64 yo", "18-month-old", "in his sixties", "teenage") or a person ("man", "student", "baby") and
``<verb>`` is one a write-up opens with (presents, is brought, comes, reports, develops, has, sustained, calls to
report ...) or any other verb ("is witnessed by ..." -> "... and I am witnessed by ..."); led by "Consider",
"Imagine", "Mr. Y is a", "Mrs S. Jones is a", "The patient is a", or a named parent ("Anna's 2-year-old son has
..." -> "My 2-year-old son has ...", and later "Anna" and her pronouns are ``I``); an opening with no verb ("A
34-year-old woman with no lung disease, 12-day history of cough.") keeps its words ("I'm a 34-year-old woman ...").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scenarios.importers._demographics import AGE_PHRASE, history_sex, sex_in
from scenarios.importers._person import NOUNISH, VERBS, Speaker, speak, third_person
from scenarios.importers._text import sentences, words
from scenarios.importers._voice import carer_voice

_VENUE = (r"(?:you|(?:(?:the|his|her|their|your|a|an|our)\s+)?(?:(?:local|nearest|hospital|pediatric|paediatric|"
          r"primary|walk-in|urgent|family|general|outpatient|acute|GP|GP's|doctor's|dental|eye|after-hours)\s+)*"
          r"(?:emergency\s+(?:department|room|unit)|ED|ER|A&E|office|clinic|surgery|practice|hospital|physician|doctor|GP|pediatrician|paediatrician|urgent\s+care|"
          r"care\s+clinic|primary\s+care(?:\s+(?:physician|doctor|provider|clinic))?|health\s+cent(?:er|re)))")
_INTRO_VERBS = {
    "presents": "have", "presented": "had", "complains of": "have", "complained of": "had", "comes": "have",
    "came": "had", "attends": "have", "attended": "had",
    "is brought": "have", "was brought": "had", "is seen": "have", "was seen": "had", "complains": "have",
    "complained": "had", "reports": "have", "reported": "had", "develops": "develop", "developed": "developed",
    "has": "have", "had": "had", "sustains": "sustain", "sustained": "sustained", "notices": "notice",
    "noticed": "noticed", "experiences": "experience", "experienced": "experienced", "calls to report": "have",
    "calls about": "have", "called about": "had", "called to report": "had",
}
_INTRO_VERB = "|".join(sorted((re.escape(v).replace("\\ ", r"\s+") for v in _INTRO_VERBS), key=len, reverse=True))
# Any other verb an opening may use: the present of a known verb that is not also a plural noun ("sweats"), or a
# past tense that is not also an adjective or noun ("a tired man", "his left eye", "a cut").
_ANY_VERB = "|".join(sorted({"is", "was", "has", "had", *(third_person(v) for v in VERBS - NOUNISH),
                             *"""woke fell became began started collapsed fainted injured twisted slipped tripped ate
                             drank took went came felt developed noticed""".split()}, key=len, reverse=True))
_NOT_A_NAME = {"This", "That", "He", "She", "It", "There", "Here", "The", "Patient", "Our", "Your", "Her", "His", "A",
               "An", "I"}
_LEAD = (r"^(?:(?i:consider|imagine|meet)\s+)?(?:(?i:a|an)\s+"
         r"|(?P<title>(?i:mr|mrs|ms|miss|mx|dr)\.?\s+)?(?P<name>[A-Z][a-z]*\.?(?:\s+[A-Z][a-z]*\.?)?),?\s+is\s+(?i:a|an)\s+"
         r"|(?i:(?:the\s+)?patient\s+is\s+(?:a|an))\s+|(?P<carer>[A-Z][a-z]+)'s\s+)")
_INTRO = re.compile(rf"{_LEAD}(?P<who>.*?)(?:,?\s+(?i:who)\s+|,?\s+)(?P<verb>(?i:{_INTRO_VERB}))\b"
                    rf"(?:\s+(?:(?i:to|in|at|into)\s+)?(?i:{_VENUE})\b)?(?P<after>.*)$", re.S)
_GENERIC = re.compile(rf"{_LEAD}(?P<who>.*?)(?:,?\s+(?i:who)\s+|,?\s+)(?P<verb>(?i:{_ANY_VERB}))\b(?P<after>.*)$", re.S)
_VERBLESS = re.compile(rf"{_LEAD}(?P<who>.+)$", re.S)
_WHO = re.compile(rf"{AGE_PHRASE}|\b\d{{1,3}}\s*-?\s*(?:yo|y/o|y\.o\.)|\b(?:man|woman|male|female|boy|girl|baby|"
                  r"infant|toddler|child|kid|newborn|neonate|teen\w*|adolescent|student|gentleman|lady|son|daughter|"
                  r"person|mother|father|adult|in (?:his|her|their) (?:early |mid-?|late )?\w+ties)\b", re.I)
# Verbs of presenting, whose "with" / "for" / "because of" says what for ("presents with", "is brought ... for").
_PRESENTING = frozenset({"presents", "presented", "comes", "came", "attends", "attended", "complains", "complained",
                         "reports", "reported", "is brought", "was brought", "is seen", "was seen", "calls about",
                         "called about"})
_BROUGHT_BY = re.compile(r"^(?:in\s+|along\s+)?by\s+(?:his|her|their|a|the)\s+\w+(?:\s+and\s+(?:his|her|their)?\s*"
                         r"\w+)?\s*", re.I)
_CONNECTOR = re.compile(r"^(?P<pre>.*?)\s*\b(?:with|because\s+of|complaining\s+of|due\s+to|for)\s+"
                        r"(?:(?:a\s+)?(?:complaints?|concerns?)\s+(?:of|about)\s+)?(?P<what>.+)$", re.I | re.S)
_FIELD_LEAD = re.compile(r"^(?:(?P<n>\d{1,3})\s*(?:-?\s*(?:yo|y/o|y\.o\.))?\s*[-/]?\s*(?P<s>[MF])"
                         r"|(?P<s2>[MF])\s*[-/]?\s*(?P<n2>\d{1,3}))\b"
                         r"(?P<rest>(?:,|\s+(?:with|presents|presenting|complains|c/o)\b).*)$", re.S)
_CHILD_WORDS = re.compile(r"\b(?:infant|baby|toddler|newborn|neonate|child|kid)\b", re.I)
_BABY_WORDS = re.compile(r"\b(?:infant|baby|newborn|neonate)\b", re.I)


@dataclass(frozen=True)
class Intro:
    """A case's opening sentence read: in the teller's words, who it is about, who tells it, the names it uses."""

    rewritten: str
    who: str
    parent: bool
    names: tuple[str, ...] = ()  # what the case calls the patient ("Y" for "Mr. Y is a ...")
    carer: str | None = None  # the parent the case names ("Anna" for "Anna's 2-year-old son ...")


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


def _match(text: str) -> tuple[re.Match[str], str | None] | None:
    """The opening sentence matched, and its verb.

    The verb: a write-up's own opening verb, ``*<verb>`` for any other, None for an opening without one.
    """
    for pattern, kind in ((_INTRO, "known"), (_GENERIC, "any"), (_VERBLESS, "none")):
        m = pattern.match(text)
        name = (m.group("name") or "").split() if m else []
        if m is None or not _WHO.search(m.group("who")) or (kind != "none" and len(words(m.group("who"))) > 16) or \
                (name and not m.group("title") and name[0].rstrip(".") in _NOT_A_NAME):
            continue
        if kind == "none":
            return m, None
        verb = " ".join(m.group("verb").lower().split())
        return m, verb if kind == "known" else f"*{verb}"
    return None


def _joined(start: str, parent: bool, verb: str, after: str) -> str | None:
    """The opening's rest after ``start`` ("I'm a 45-year-old man" / "My 4-year-old boy")."""
    if verb.startswith("*"):  # any other verb: "is witnessed by ..." -> "and I am witnessed by ..."
        verb = verb[1:]
        return f"{start} {verb}{after}" if parent else f"{start} and the patient {verb}{after}"
    base = _INTRO_VERBS[verb]
    after = after.strip()
    if parent:
        base = {"have": "has", "had": "had"}.get(base, base if base.endswith("ed") else f"{base}s")
    conn = _CONNECTOR.match(after) if verb in _PRESENTING else None
    if conn and len(words(conn.group("pre"))) <= 8:
        pre = _BROUGHT_BY.sub("", conn.group("pre").strip()).strip(" ,")
        what = conn.group("what")
        return (f"{start}, {pre}, {base} {what}" if parent else f"{start} and, {pre}, I {base} {what}") if pre \
            else (f"{start} {base} {what}" if parent else f"{start} and I {base} {what}")
    after = _BROUGHT_BY.sub("", after) if verb in _PRESENTING else after
    if m := re.match(r"^(?:because|as|since)\s+(?:he|she|they)\s+(?P<rest>.+)$", after, re.I | re.S):
        # "is brought in because she has been crying" -> "My baby has been crying"; "... and I have been ..."
        return f"{start} {m.group('rest')}" if parent else f"{start} and the patient {m.group('rest')}"
    if after and base in ("have", "has", "had") and re.match(r"^\d|^(?:on|in|at|after|over|about)\b", after, re.I):
        return f"{start}, {after}"  # "presents 3 days after developing ..." -> "I'm a ..., 3 days after ..."
    if after:
        return f"{start} {base} {after}" if parent else f"{start} and I {base} {after}"
    return None


def _field_lead(text: str) -> str:
    """"64M, ..." / "F 29, ..." / "64 yo F with ..." -> "A 64-year-old man, ..." (a demographics field opening)."""
    m = _FIELD_LEAD.match(text)
    if not m:
        return text
    age, letter = m.group("n") or m.group("n2"), (m.group("s") or m.group("s2")).upper()
    return f"A {age}-year-old {'man' if letter == 'M' else 'woman'}{m.group('rest')}"


def read_intro(sentence: str, sex: str | None = None) -> Intro | None:
    """The opening sentence of a case write-up in the words of whoever asks for advice, or None.

    See ``case_intro``; the module docstring lists the openings recognised. ``sex``: the patient's, when known.
    """
    text = _field_lead(" ".join(sentence.split()))
    found = _match(text)
    if found is None:
        return None
    m, verb = found
    who = m.group("who").strip().rstrip(",")
    carer = m.group("carer")
    parent = bool(carer) or told_by_parent(who)
    names = tuple(n.rstrip(".") for n in (m.group("name") or "").split() if n.rstrip(".") not in _NOT_A_NAME)
    article = "an" if re.match(r"8|1[18](?!\d)|eight|eleven|eighteen|[aeio]|u(?!ni|s)", who, re.I) else "a"
    start = f"My {who}" if parent else f"I'm {article} {who}"
    if verb is None:  # no verb: the words as written, in the teller's person
        return Intro(_end_like(start, text), who, parent, names, carer)
    joined = _joined(start, parent, verb, m.group("after"))
    if joined is None:
        return None
    return Intro(joined if parent else speak(joined, Speaker(sex=sex, names=names)), who, parent, names, carer)


def _end_like(text: str, source: str) -> str:
    return text if text[-1:] in ".!?" or source[-1:] not in ".!?" else text + source[-1]


def case_intro(sentence: str) -> tuple[str, str, bool] | None:
    """The opening sentence of a case write-up in the words of whoever asks for advice, or None.

    None when it does not open like one (the module docstring lists the openings recognised).

    Returns (the sentence rewritten, ``who`` as written, whether a parent tells it). An adult speaks for
    themselves: "A 45-year-old man presents to the emergency department with chest pain." -> "I'm a
    45-year-old man and I have chest pain."; a child's parent speaks for the child (``told_by_parent``):
    "A 4-year-old boy presents with bloody diarrhoea." -> "My 4-year-old boy has bloody diarrhoea." Only
    the grammatical person and the place of presentation change ("to the emergency department" is left
    out: the person is asking where to go, and saying where they already are would answer it); every
    clinical word is kept in its order.
    """
    intro = read_intro(sentence)
    return None if intro is None else (intro.rewritten, intro.who, intro.parent)


def child_word(sex: str | None, who: str | None) -> str:
    """What a parent calls the child: "son", "daughter", else "baby" (an infant) or "child"."""
    if sex in ("male", "female"):
        return "son" if sex == "male" else "daughter"
    age = _age_years(who or "")
    return "baby" if (age is not None and age < 1) or _BABY_WORDS.search(who or "") else "child"


def patient_statement(sentence: str, *, by_parent: bool = False, sex: str | None = None, child: str = "child",
                      carer: Speaker | None = None, names: tuple[str, ...] = ()) -> str:
    """A later sentence of a case in the words of whoever tells it.

    An adult's: ``_person.speak`` for the patient (``sex`` and ``names``: what the case says of them), e.g. "Her
    cough is ..." -> "My cough is ...", "She denies chest pain." -> "I haven't had any chest pain.". A child's
    (``by_parent``): ``_voice.carer_voice``: the child is ``my <child>`` and stays he / she, a parent's reporting
    clause goes, and a parent the case names (``carer``) is ``I``. Anything else is kept as written.
    """
    text = " ".join(sentence.split())
    if not text:
        return text
    if by_parent:
        return carer_voice(text, child, carer=carer)
    return speak(text, Speaker(sex=sex, names=names))


def _carer(intro: Intro | None, child_sex: str | None, text: str) -> Speaker | None:
    """The parent the case names, with their sex when the case's other pronouns can only be theirs."""
    if intro is None or intro.carer is None:
        return None
    other = {"male": "female", "female": "male"}.get(child_sex or "")
    uses = {"female": r"\b(?:she|her)\b", "male": r"\b(?:he|his|him)\b"}
    sex = other if other and re.search(uses[other], text, re.I) else None
    return Speaker(sex=sex, names=(intro.carer,), patient_words=False, subjectless=False)


def case_sentences(text: str, *, sex: str | None = None,
                   parent: bool | None = None) -> tuple[list[tuple[str, str]], str | None, bool]:
    """A case write-up sentence by sentence, each as written and in the words of the person asking.

    Returns ([(as written, rewritten), ...], ``who`` of the opening sentence or None, whether a parent tells it).
    The opening sentence goes through ``read_intro``, the others through ``patient_statement``; an opening not
    recognised is kept as written, the other sentences still rewritten. ``sex``: the patient's, when known (else
    read from the opening and the case); ``parent``: whether a parent tells it, when known (else from the opening).
    """
    parts = sentences(text.replace("\u2019", "'"))
    sex = sex if sex in ("male", "female") else None
    if sex is None and parts:
        sex = sex_in(parts[0]) or history_sex(text)
    intro = read_intro(parts[0], sex) if parts else None
    by_parent = parent if parent is not None else bool(intro and intro.parent)
    who = intro.who if intro else None
    kwargs = {"by_parent": by_parent, "sex": sex, "child": child_word(sex, who), "carer": _carer(intro, sex, text),
              "names": intro.names if intro else ()}
    rest = [(p, patient_statement(p, **kwargs)) for p in parts[1:]]  # type: ignore[arg-type]
    if intro is None:
        first = [(p, patient_statement(p, **kwargs)) for p in parts[:1]]  # type: ignore[arg-type]
        return [*first, *rest], None, by_parent
    opening = intro.rewritten if intro.parent == by_parent else parts[0]
    return [(parts[0], opening), *rest], who, by_parent


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
