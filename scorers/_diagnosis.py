"""Diagnosis matching that credits a given diagnosis only when it *names* the expected condition.

``names_condition(given, names)`` decides whether one diagnosis string from the agent's assessment
(already cleaned of numbering, labels and most hedges by ``sim.encounter.assessment``) names the condition
whose canonical name is ``names[0]`` and whose synonyms are ``names[1:]``. ``match_diagnoses`` applies it
to a scenario's ranked ``expected.diagnoses``; ``synonym_problems`` lints a ``Diagnosis`` for synonyms
that would credit a vague or a different, benign answer.

Normalisation (the given string and every name go through the same steps)
-------------------------------------------------------------------------
* Lower case; apostrophes dropped ("bull's-eye" -> "bulls eye"); "r/o" -> "rule out", "w/o" -> "without",
  "h/o" -> "history of", "s/p" -> "status post", "?" -> the hedge word "query", "&" -> "and", "+" -> "with".
* Clause boundaries are kept as a token of their own: ``( ) [ ] , ; : |``, an en or em dash, a hyphen
  with a space on either side, and a full stop that ends a sentence. "/" is kept as an alternative
  ("NSTEMI/unstable angina"). Every other character that is not a letter or digit, hyphens inside a
  word included, becomes a space.
* British spellings are folded to American ones on word stems: aem -> em (haem, anaemia, ischaemia,
  bacteraemia, septicaemia ...), oedem, oesoph, oestr, foet, coeli, paed, -rrhoea, -pnoea, tumour,
  melaena, gynaec, caec, aetio, anaesth, sulph; -ise/-ised/-ising/-isation -> -iz... on words over five
  letters. Plurals are folded: -ies -> -y, and a final "s" is dropped from words over three letters
  that do not end in ss, us or ys, nor in is unless four letters long ("sticky eyes" = "sticky eye",
  "UTIs" = "UTI"; "ACS", "sepsis", "meningitis" stay).
* Prefixes are joined to the word after them when written apart or hyphenated: pre, non, post, peri,
  para, anti, sub, intra, extra ("pre-eclampsia" = "pre eclampsia" = "preeclampsia",
  "non-cardiac" = "noncardiac"). A joined "non" word is a different word: "noncardiac chest pain" does
  not contain "cardiac chest pain". A joined "post..." word after a match is read as a context clause
  ("PE post-op").
* Articles: "the" and "an" are dropped everywhere; "a" only at the start of a clause or after a
  function word ("fever in a young infant"), so "hepatitis A" and "type A dissection" keep it.

Matching (``names_condition``)
------------------------------
A given diagnosis names the condition when, for some name ``n`` in ``names``:

1. **Whole phrase**: the given phrase, boundaries ignored and leading/trailing hedges removed, equals
   ``n``. Hedges: likely, most/more/very/highly likely, probable, probably, possible, possibly,
   suspected, presumed, presumptive, provisional, query (?), questionable, working/differential
   diagnosis, consider(ing), concern(ing) for, suspicion of/for, rule out, r/o, to/need to/must rule out,
   (need) to exclude, exclude, cannot/can't exclude, cannot/can't rule out, don't/must not/not to miss.
   A rule-out is a *consideration*: in a differential "rule out X", "r/o X", "X to be excluded",
   "X not excluded" and "X cannot be excluded" all mean X is being considered, so they count (and
   ``sim.encounter.assessment`` strips "Must rule out:" labels before this function sees the name anyway).
   The past tense is different: "ruled out X", "X ruled out", "X excluded" mean X is *not* the
   diagnosis and never count.
2. **Head noun phrase**: otherwise ``n`` must occur in the given phrase as whole words, not across a
   clause boundary, as the head of its noun phrase:

   * *Before* it, back to the start of its clause (the phrase start, a boundary, or a connective:
     or, and, nor, vs, versus, v, /, query; with, due to, secondary to, caused by, from, because of,
     complicated by, leading to, causing, related to, triggered by, precipitated by, consistent with,
     compatible with, in keeping with; in, on, after, following, during, at, post; without), only
     modifiers may stand. After the leading hedges are removed they must not contain: a negation
     or exclusion (not, no, non, never, without, ruled out, excluded, negative for, unlikely, less
     likely, not likely, improbable, doubtful, absent, absence of, free of, resolved, history of,
     history, hx, previous, prior, past, old, remote, treated, status post, mimic(king), pseudo,
     rather than, instead of, other than, except); a preposition (of, for, about, to, at, by, into,
     than, like, over, under, towards, regarding, re) - then ``n`` is the object of a preposition, not
     the head ("history of MI", "risk of sepsis", "torsion of the appendix testis" vs "testis"); a word
     that makes it a different structure (appendix, appendage, appendices, hydatid: "appendix testis");
     or a *contrasting* modifier: a word from one of these classes while ``names[0]`` or ``n`` holds
     another word of the same class and not this one: etiology (viral, bacterial, allergic, fungal,
     parasitic, atopic, irritant, chemical, autoimmune; adenoviral/herpetic count as viral,
     streptococcal/staphylococcal/pneumococcal/meningococcal/gonococcal/chlamydial as bacterial,
     candidal as fungal), upper/lower, acute/chronic, benign/malignant, primary/secondary,
     complicated/uncomplicated. So "allergic conjunctivitis" does not name "Acute bacterial
     conjunctivitis" through its synonym "conjunctivitis", "lower GI bleed" does not name "Upper
     gastrointestinal haemorrhage" through "GI bleed", but "bacterial meningitis" names "Meningitis".
   * The clause must be a *naming* clause: the first clause, one after a boundary (an aside or
     restatement: "Intracranial haemorrhage (SAH)"), after an alternative ("NSTEMI vs unstable angina")
     or after a cause/complication connective ("Chest pain secondary to ACS", "UTI with sepsis"). A
     clause after a context connective (in, on, after, following, during, at, post) describes a setting,
     not a diagnosis, and one after "without" is negated.
   * Negation carries forward along a chain of clauses linked by alternatives or cause connectives:
     "no evidence of pneumothorax or PE" names neither, "not consistent with ACS" does not name ACS,
     "without sepsis or shock" names neither; and across a boundary from a clause that is nothing but
     a negation, a label: "Ruled out: ACS", "Excluded - PE".
   * *After* it, only this may follow before the end of the phrase, a boundary or a connective: laterality
     (left, right, bilateral, unilateral, sided, side, both), trailing hedges (likely, probable, possible,
     suspected, presumed, query, most, more, very, highly), copulas (is, was), "until proven otherwise",
     and "of" + laterality or unknown/undetermined/uncertain/unclear + the rest of the clause ("cellulitis
     of the right leg", "sepsis of unknown source"); or copulas and modals leading to an exclusion word
     (judged next: "ACS is unlikely", "ACS to be ruled out"). Any other word means ``n`` modifies what
     follows ("appendix testis", "ACS features", "torsion of the appendix testis" vs "torsion").
   * Then, past boundaries and copulas (is, are, was, were, be, been, being, has, have, had, now,
     already, considered, felt, thought, deemed, clinically, essentially, effectively, largely, also,
     very, much, far), and past alternatives ("ACS or PE ruled out"), it must not be followed by an
     exclusion: ruled out, excluded, unlikely, less likely, not likely, improbable, doubtful, negative,
     not suspected, not supported, not favoured/favored, not present, absent, resolved, not found, not
     seen, not the diagnosis, not the cause - unless a modal or a negation stands between them (to,
     must, should, need(s), cannot, can't, can, not, yet, still, will, may, might, until: "ACS to be
     ruled out", "ACS not excluded", "torsion until excluded").
3. **Generic names** (``GENERIC``: a symptom, sign, finding, organ or category word such as "fever",
   "torsion", "hypertension", "chest pain", "aneurysm", "appendix") are held to more: they match only as
   the whole phrase, or as a head whose modifiers are all neutral (``NEUTRAL``: acute, severe, mild,
   moderate, high, low, uncontrolled, poorly controlled, known, new onset, recurrent, persistent,
   left, right, bilateral ...) with nothing after it but laterality before the end or a boundary. So
   "viral fever" does not name a condition listed as "fever", "abdominal aortic aneurysm" does not name
   one listed as "aneurysm", but "poorly controlled hypertension" names one listed as "hypertension".
   ``GENERIC`` holds symptoms and signs (pain, fever, headache, chest pain, bleeding, rash, syncope,
   anxiety ...), findings (hypertension, hyperglycaemia, low blood sugar ...), categories, mechanisms
   and lesions (infection, viral illness, injury, fracture, torsion, aneurysm, dissection, ulcer, cyst,
   shock ...), and an organ or adjective used as a noun (appendix, ectopic). A broad name of a real
   diagnosis is not generic: sepsis, pneumonia, meningitis, migraine, conjunctivitis.

The reverse direction (the given phrase contained in a name) is never a match: "headache" does not
name "thunderclap headache", "UTI" does not name "upper UTI", "hypertension" does not name
"pregnancy induced hypertension".

Limits: the rules read words, not meaning. A modifier list is open-ended, so a pre-modifier that
changes the condition but is in no contrast class ("inferior STEMI" for an anterior one, "mild"
for a severe exacerbation) still matches; severity and territory are judged by the triage scores,
not here. Negation reaches across "or"/"and"/"with" but not across commas: "no pneumothorax, PE or
pneumonia" names PE (``sim.encounter.assessment`` splits such lists before this function sees them). "of" after
a name is accepted only before a side or "unknown ..." ("cellulitis of the right leg", "sepsis of
unknown source"), so "cellulitis of the leg" does not match "cellulitis" (add the synonym). The
contrast classes need the contrasting word in the canonical name or the matched synonym: a synonym
"conjunctivitis" on a name without "bacterial" would credit "allergic conjunctivitis" -
``synonym_problems`` flags exactly such synonyms. Negations that
``sim.encounter.assessment`` has already removed (it strips "(ruled out)" / "- unlikely" tails and "Unlikely:"
labels as qualifiers) cannot be seen here.

Linting (``synonym_problems``)
------------------------------
The *heads* of a diagnosis are what its canonical name itself is: the main phrase (before any parenthesis,
neutral modifiers aside), each part of it joined by and/or, and their lay equivalents
(``_GENERIC_EQUIVALENTS``): "Hypoglycaemia (stroke mimic)" is hypoglycaemia = low blood sugar, "Syncope and
collapse" is syncope = faint = blackout, and collapse. A name or synonym is flagged when (a) it is in
``GENERIC`` (it names no specific condition; it still matches, but only as described in rule 3) and is the
canonical name or not one of the heads; or (b) a diagnosis in ``COMMON_BENIGN`` contains it as a word sequence
(compared with and without prefix joining, so "non-cardiac chest pain" contains "cardiac chest pain") and that
benign diagnosis is not itself a name or synonym of the same diagnosis and contains neither the canonical name
nor a head (then it is a subtype: "viral gastroenteritis" of "Gastroenteritis", "vasovagal syncope" of
"Syncope and collapse"). A diagnosis that is itself common and benign (its canonical name ends with a
``COMMON_BENIGN`` phrase: "Acute uncomplicated cystitis", "Panic attack", "Essential hypertension") is not
linted: crediting a vague or a neighbouring benign answer there is a scoring nuance, not a missed emergency,
and its lay synonyms ("high blood pressure") are usually the diagnosis itself. Each message names the entry,
the benign diagnoses that contain it, and a fix: the shortest specific entry of the same diagnosis that
contains it, else the canonical name. The lint cannot know abbreviations: "UTI" on a "Urinary tract infection"
is flagged because "simple UTI" contains it, although a simple UTI is a urinary tract infection (a "lower
urinary tract infection" is recognised as a subtype).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Final, Literal

from scenarios.schema import Diagnosis, Scenario
from sim.records import DiagnosisMatch

Tokens = tuple[str, ...]
ClauseKind = Literal["start", "boundary", "alt", "cause", "context", "neg"]

BOUNDARY: Final = "|"

# ------------------------------------------------------------------------------------------ normalisation
_SPELLING: Final[tuple[tuple[str, str], ...]] = (
    ("aem", "em"), ("oedem", "edem"), ("oesoph", "esoph"), ("oestr", "estr"), ("foet", "fet"), ("coeli", "celi"),
    ("paed", "ped"), ("rrhoe", "rrhe"), ("pnoe", "pne"), ("tumour", "tumor"), ("melaen", "melen"),
    ("gynaec", "gynec"), ("caec", "cec"), ("aetio", "etio"), ("anaesth", "anesth"), ("sulph", "sulf"),
)
_ISE: Final = re.compile(r"(?<=[a-z]{3})is(e|ed|es|ing|ation|ations)$")
PREFIXES: Final = frozenset({"pre", "non", "post", "peri", "para", "anti", "sub", "intra", "extra"})
_ABBREVIATIONS: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    (re.compile(r"\br\s*/\s*o\b"), " rule out "),
    (re.compile(r"\bw\s*/\s*o\b"), " without "),
    (re.compile(r"\bh\s*/\s*o\b"), " history of "),
    (re.compile(r"\bs\s*/\s*p\b"), " status post "),
    (re.compile(r"\bc\s*/\s*o\b"), " complaining of "),
)
_BOUNDARY_CHARS: Final = re.compile(r"[()\[\],;:|\u2013\u2014]|\s-+\s|\s-+$|^-+\s|\.(?!\d)")
_FUNCTION_WORDS: Final = frozenset({"of", "in", "on", "with", "for", "to", "from", "by", "at", "as", "is", "was",
                                    "and", "or", "vs", "versus", "likely", "possible", "probable", "suspected",
                                    "query", "without", "after", "following", "during"})


def _fold(word: str) -> str:
    for british, american in _SPELLING:
        word = word.replace(british, american)
    if len(word) > 5:
        word = _ISE.sub(lambda m: "iz" + m.group(1), word)
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "ys")) \
            and (len(word) <= 4 or not word.endswith("is")):  # "utis", "stis" but "-itis", "sepsis"
        return word[:-1]
    return word


@lru_cache(maxsize=8192)  # pure, and the same names are normalised for every encounter (about 1 ms of each)
def normalise(text: str, *, join_prefixes: bool = True) -> Tokens:
    """``text`` as normalised words, with ``BOUNDARY`` tokens where a clause boundary stood (see the module doc).

    Cached (the result is an immutable tuple): scoring matches every given diagnosis against the same expected
    names and synonyms, encounter after encounter.
    """
    low = text.lower().replace("\u2019", "'").replace("'", "")
    for pattern, repl in _ABBREVIATIONS:
        low = pattern.sub(repl, low)
    low = low.replace("?", " query ").replace("&", " and ").replace("+", " with ").replace("/", " / ")
    low = _BOUNDARY_CHARS.sub(f" {BOUNDARY} ", low)
    raw = re.findall(rf"[a-z0-9]+|/|\{BOUNDARY}", low)
    words: list[str] = []
    i = 0
    while i < len(raw):
        w = raw[i]
        nxt = raw[i + 1] if i + 1 < len(raw) else None
        if join_prefixes and w in PREFIXES and nxt is not None and nxt not in (BOUNDARY, "/"):
            words.append(w + _fold(nxt))
            i += 2
            continue
        words.append(w if w in (BOUNDARY, "/") else _fold(w))
        i += 1
    out: list[str] = []
    for w in words:
        if w in ("the", "an"):
            continue
        if w == "a" and (not out or out[-1] in (BOUNDARY, "/") or out[-1] in _FUNCTION_WORDS):
            continue
        if w == BOUNDARY and (not out or out[-1] == BOUNDARY):
            continue
        out.append(w)
    while out and out[-1] == BOUNDARY:
        out.pop()
    return tuple(out)


def _phrases(items: Iterable[str]) -> tuple[Tokens, ...]:
    """Normalised phrases, longest first (so "less likely" is tried before "likely")."""
    return tuple(sorted({normalise(s) for s in items}, key=len, reverse=True))


def _flat(tokens: Tokens) -> Tokens:
    return tuple(t for t in tokens if t != BOUNDARY)


# -------------------------------------------------------------------------------------------- word lists
_HEDGES: Final = _phrases([
    "likely", "most likely", "more likely", "very likely", "highly likely", "probable", "probably", "possible",
    "possibly", "suspected", "suspect", "presumed", "presumptive", "provisional", "query", "questionable",
    "working diagnosis", "differential diagnosis", "differential", "diagnosis", "impression", "clinical",
    "consider", "considering", "concern for", "concerning for", "suspicion of", "suspicion for",
    "high suspicion of", "high suspicion for", "suspicious for", "rule out", "to rule out", "need to rule out",
    "must rule out", "exclude", "to exclude", "need to exclude", "must exclude", "cannot exclude",
    "can not exclude", "cant exclude", "cannot rule out", "can not rule out", "cant rule out", "dont miss",
    "do not miss", "must not miss", "not to miss", "cant miss", "cannot miss", "early features of",
])
_TRAILING_HEDGES: Final = frozenset({"likely", "probable", "possible", "suspected", "presumed", "query", "most",
                                     "more", "very", "highly", "is", "was"})
_NEGATORS: Final = _phrases([
    "not", "no", "non", "never", "without", "ruled out", "excluded", "negative for", "unlikely",
    "less likely", "not likely", "improbable", "doubtful", "absent", "absence of", "free of", "resolved",
    "history of", "history", "hx", "previous", "prior", "past", "old", "remote", "treated", "status post",
    "mimic", "mimicking", "pseudo", "rather than", "instead of", "other than", "except", "excluding",
])
# negation words that are part of a consideration, masked before looking for a negator
_CONSIDERATIONS: Final = _phrases([
    "cannot exclude", "can not exclude", "cant exclude", "cannot rule out", "can not rule out", "cant rule out",
    "not excluded", "not ruled out", "not yet excluded", "not yet ruled out", "dont miss", "do not miss",
    "must not miss", "not to miss", "cannot be excluded", "can not be excluded", "cant be excluded",
    "cannot be ruled out", "can not be ruled out", "cant be ruled out",
])
_TRAILING_NEGATORS: Final = _phrases([
    "ruled out", "excluded", "unlikely", "less likely", "not likely", "improbable", "doubtful", "negative",
    "not suspected", "not supported", "not favoured", "not favored", "not present", "absent", "resolved",
    "not found", "not seen", "not diagnosis", "not cause", "not consistent", "not in keeping",
])
_COPULAS: Final = frozenset({"is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "now",
                             "already", "considered", "felt", "thought", "deemed", "clinically", "essentially",
                             "effectively", "largely", "also", "very", "much", "far"})
_PROSPECTIVE: Final = frozenset({"to", "must", "should", "need", "needs", "cannot", "cant", "can", "not", "yet",
                                 "still", "will", "may", "might", "until"})
_UNTIL_PROVEN: Final = normalise("until proven otherwise")
_OF_UNKNOWN: Final = frozenset({"unknown", "undetermined", "uncertain", "unclear"})
_PREPOSITIONS: Final = frozenset({"of", "for", "about", "to", "at", "by", "into", "than", "like", "over", "under",
                                  "toward", "towards", "regarding", "re", "concerning", "complaining"})
_OTHER_STRUCTURE: Final = frozenset({"appendix", "appendage", "appendice", "hydatid"})
_LATERALITY: Final = frozenset({"left", "right", "bilateral", "unilateral", "sided", "side", "both"})


def _connectives(kind: ClauseKind, *phrases: str) -> list[tuple[Tokens, ClauseKind]]:
    return [(normalise(p), kind) for p in phrases]


_CONNECTIVES: Final[tuple[tuple[Tokens, ClauseKind], ...]] = tuple(sorted(
    [*_connectives("alt", "or", "and", "nor", "vs", "versus", "v", "/", "query"),
     *_connectives("cause", "with", "due to", "secondary to", "caused by", "from", "because of", "complicated by",
                   "leading to", "causing", "related to", "triggered by", "precipitated by", "consistent with",
                   "compatible with", "in keeping with"),
     *_connectives("context", "in", "on", "after", "following", "during", "at", "post"),
     *_connectives("neg", "without")],
    key=lambda c: len(c[0]), reverse=True))
_CONTRAST: Final[tuple[dict[str, str], ...]] = (
    {"viral": "viral", "adenoviral": "viral", "herpetic": "viral", "bacterial": "bacterial",
     "streptococcal": "bacterial", "staphylococcal": "bacterial", "pneumococcal": "bacterial",
     "meningococcal": "bacterial", "gonococcal": "bacterial", "chlamydial": "bacterial", "allergic": "allergic",
     "fungal": "fungal", "candidal": "fungal", "parasitic": "parasitic", "atopic": "atopic", "irritant": "irritant",
     "chemical": "chemical", "autoimmune": "autoimmune"},
    {"upper": "upper", "lower": "lower"},
    {"acute": "acute", "chronic": "chronic"},
    {"benign": "benign", "malignant": "malignant"},
    {"primary": "primary", "secondary": "secondary"},
    {"complicated": "complicated", "uncomplicated": "uncomplicated"},
)

# What names no specific condition on its own. Diagnoses that name one are not here even when broad ("sepsis",
# "pneumonia", "meningitis", "migraine", "conjunctivitis": the last is caught by COMMON_BENIGN instead).
GENERIC_TERMS: Final[tuple[str, ...]] = (
    # symptoms and signs
    "pain", "ache", "fever", "pyrexia", "high temperature", "temperature", "febrile", "headache", "head pain",
    "chest pain", "abdominal pain", "abdo pain", "stomach pain", "stomach ache", "tummy ache", "belly pain",
    "back pain", "pelvic pain", "bleeding", "bleed", "hemorrhage", "blood loss", "rash", "cough", "wheeze",
    "wheezing", "vomiting", "nausea", "diarrhea", "dizziness", "vertigo", "syncope", "collapse", "faint",
    "fainting", "blackout", "fall", "weakness", "fatigue", "tiredness", "malaise", "swelling", "lump", "mass",
    "shortness of breath", "breathlessness", "dyspnea", "palpitation", "tachycardia", "sore throat", "earache",
    "confusion", "anxiety", "panic", "stress", "distress", "low mood",
    # findings
    "hypertension", "high blood pressure", "hypotension", "low blood pressure", "hyperglycemia",
    "high blood sugar", "hypoglycemia", "low blood sugar", "hypoxia",
    # categories, mechanisms and lesions that name no specific condition
    "infection", "bacterial infection", "viral infection", "viral illness", "illness", "inflammation", "injury",
    "trauma", "fracture", "sprain", "strain", "torsion", "aneurysm", "dissection", "ulcer", "cyst", "lesion",
    "tumor", "growth", "clot", "blood clot", "shock", "disease", "syndrome", "condition", "emergency",
    # organs and adjectives used as nouns
    "appendix", "ectopic",
)
GENERIC: Final = frozenset(normalise(t) for t in GENERIC_TERMS)
# a generic term and its lay equivalents: a diagnosis whose name *is* the term may list them (see synonym_problems)
_GENERIC_EQUIVALENTS: Final = tuple(frozenset(normalise(t) for t in group) for group in (
    ("hypertension", "high blood pressure"), ("hypotension", "low blood pressure"),
    ("hyperglycemia", "high blood sugar"), ("hypoglycemia", "low blood sugar"),
    ("fever", "pyrexia", "high temperature"), ("dyspnea", "shortness of breath", "breathlessness"),
    ("syncope", "faint", "fainting", "blackout"),
))
NEUTRAL: Final = frozenset({"acute", "severe", "mild", "moderate", "high", "low", "very", "significant",
                            "uncontrolled", "controlled", "poorly", "well", "known", "new", "onset", "recurrent",
                            "persistent", "ongoing", "worsening", "sudden", "isolated", "prolonged", "intractable",
                            "refractory", "stage", "grade", "1", "2", "3", "4", *_LATERALITY})

# Common, usually self-limiting or primary-care diagnoses that an agent names *instead of* a serious one. A name
# that ends with one of these makes its diagnosis benign for the lint; keep organ-qualified serious forms out
# (no bare "colic": renal colic; no "contusion": pulmonary contusion).
COMMON_BENIGN_TERMS: Final[tuple[str, ...]] = (
    "viral fever", "viral illness", "viral infection", "viral syndrome", "viral URI", "viral URTI",
    "upper respiratory tract infection", "common cold", "head cold", "flu", "influenza like illness",
    "tension headache", "tension type headache", "migraine", "non-cardiac chest pain", "musculoskeletal chest pain",
    "chest wall pain", "costochondritis", "muscle strain", "pulled muscle", "musculoskeletal pain",
    "mechanical back pain", "simple back pain", "mechanical low back pain", "anxiety", "anxiety attack",
    "panic attack", "health anxiety", "stress", "hyperventilation", "allergic conjunctivitis",
    "viral conjunctivitis", "simple UTI", "lower UTI", "lower urinary tract infection", "cystitis",
    "bladder infection", "essential hypertension", "white coat hypertension", "gastroenteritis",
    "viral gastroenteritis", "stomach bug", "food poisoning", "constipation", "indigestion", "dyspepsia",
    "acid reflux", "GORD", "GERD", "heartburn", "irritable bowel syndrome", "functional abdominal pain",
    "benign positional vertigo", "BPPV", "vasovagal syncope", "simple faint", "ankle sprain", "sprained ankle",
    "soft tissue injury", "bruise", "minor head injury", "otitis media", "sinusitis", "pharyngitis",
    "tonsillitis", "viral rash", "eczema", "contact dermatitis", "insect bite", "urticaria", "hives", "hay fever",
    "allergic rhinitis", "teething", "infant colic", "period pain", "dysmenorrhea", "ovulation pain",
)
COMMON_BENIGN: Final = frozenset(normalise(t) for t in COMMON_BENIGN_TERMS)
# (term, normalised, normalised without prefix joining)
_BENIGN_FORMS: Final = tuple((t, normalise(t), normalise(t, join_prefixes=False)) for t in COMMON_BENIGN_TERMS)


# ----------------------------------------------------------------------------------------------- helpers
def _phrase_at(tokens: Tokens, i: int, phrases: Iterable[Tokens]) -> Tokens | None:
    """The first (longest) phrase of ``phrases`` that starts at ``tokens[i]``."""
    for p in phrases:
        if p and tuple(tokens[i:i + len(p)]) == p:
            return p
    return None


def _strip_leading_hedges(words: Tokens) -> Tokens:
    changed = True
    while changed and words:
        changed = False
        p = _phrase_at(words, 0, _HEDGES)
        if p is not None:
            words, changed = words[len(p):], True
    return words


def _strip_hedges(words: Tokens) -> Tokens:
    words = _strip_leading_hedges(words)
    while words and words[-1] in _TRAILING_HEDGES - {"is", "was"}:
        words = words[:-1]
    return words


def _contains(hay: Tokens, needle: Tokens) -> bool:
    n = len(needle)
    return n > 0 and any(hay[i:i + n] == needle for i in range(len(hay) - n + 1))


def _negated(words: Tokens) -> bool:
    """Whether ``words`` hold a negation or exclusion that is not part of a consideration ("cannot exclude")."""
    masked = list(words)
    for i in range(len(masked)):
        p = _phrase_at(tuple(masked), i, _CONSIDERATIONS)
        if p is not None:
            masked[i:i + len(p)] = ["_"] * len(p)
    m = tuple(masked)
    return any(_phrase_at(m, i, _NEGATORS) is not None for i in range(len(m)))


def _connective_ending_at(tokens: Tokens, k: int) -> tuple[int, ClauseKind] | None:
    """(start index, kind) of the longest connective that ends at ``tokens[k]``."""
    for phrase, kind in _CONNECTIVES:
        start = k - len(phrase) + 1
        if start >= 0 and tokens[start:k + 1] == phrase:
            return start, kind
    return None


def _connective_at(tokens: Tokens, k: int) -> tuple[int, ClauseKind] | None:
    """(length, kind) of the longest connective that starts at ``tokens[k]``."""
    for phrase, kind in _CONNECTIVES:
        if tokens[k:k + len(phrase)] == phrase:
            return len(phrase), kind
    if tokens[k].startswith("post") and len(tokens[k]) > 4:  # a joined "post-op", "post-surgery"
        return 1, "context"
    return None


def _clause_start(tokens: Tokens, i: int) -> tuple[int, ClauseKind, int]:
    """For the word at ``i``: (first word of its clause, how the clause starts, index of that connective or -1)."""
    k = i - 1
    while k >= 0:
        if tokens[k] == BOUNDARY:
            return k + 1, "boundary", k
        conn = _connective_ending_at(tokens, k)
        if conn is not None:
            return k + 1, conn[1], conn[0]
        k -= 1
    return 0, "start", -1


def _only_negation(words: Tokens) -> bool:
    """Whether ``words`` are nothing but negations or exclusions (a label: "Ruled out: X", "Excluded - X")."""
    k = 0
    while k < len(words):
        p = _phrase_at(words, k, _NEGATORS) or _phrase_at(words, k, _TRAILING_NEGATORS)
        if p is None or _phrase_at(words, k, _CONSIDERATIONS) is not None:
            return False
        k += len(p)
    return k > 0


def _inherits_negation(tokens: Tokens, kind: ClauseKind, conn_start: int) -> bool:
    """Whether a clause inherits a negation from the left.

    Through an alternative or cause connective from any negated clause, through a boundary from a clause that
    is only a negation (a label).
    """
    if kind == "boundary" and conn_start > 0:
        start, _, _ = _clause_start(tokens, conn_start)
        return _only_negation(tokens[start:conn_start])
    while kind in ("alt", "cause") and conn_start > 0:
        start, prev_kind, prev_conn = _clause_start(tokens, conn_start)
        if _negated(tokens[start:conn_start]) or (prev_kind == "neg" and kind == "alt"):
            return True
        kind, conn_start = prev_kind, prev_conn
    return False


def _contrasts(modifiers: Tokens, reference: Tokens) -> bool:
    """A modifier of one contrast class while ``reference`` holds another member of that class and not this one."""
    for cls in _CONTRAST:
        given = {cls[w] for w in modifiers if w in cls}
        ref = {cls[w] for w in reference if w in cls}
        if given and ref and not given & ref:
            return True
    return False


def _followed_ok(tokens: Tokens, j: int, *, generic: bool) -> int | None:
    """Past the trailing words a head may carry, the index where the clause ends.

    None if ``tokens[j:]`` continues the noun phrase (the match is a modifier).
    """
    k = j
    n = len(tokens)
    if not generic and k + 1 < n and tokens[k] == "of" and tokens[k + 1] in _LATERALITY | _OF_UNKNOWN:
        k += 1
        while k < n and tokens[k] != BOUNDARY and _connective_at(tokens, k) is None:
            k += 1
        return k
    skippable = _LATERALITY if generic else _LATERALITY | _TRAILING_HEDGES
    while k < n and tokens[k] in skippable:
        k += 1
    if not generic and tokens[k:k + len(_UNTIL_PROVEN)] == _UNTIL_PROVEN:
        k += len(_UNTIL_PROVEN)
    if k == n or tokens[k] == BOUNDARY:
        return k
    if not generic and _connective_at(tokens, k) is not None:
        return k
    q = k  # a trailing exclusion or consideration ("ACS ruled out", "ACS cannot be excluded"): judged by the caller
    while q < n and (tokens[q] in _COPULAS or tokens[q] in _PROSPECTIVE):
        q += 1
    if q < n and _phrase_at(tokens, q, _TRAILING_NEGATORS) is not None:
        return k
    return None


def _excluded_after(tokens: Tokens, k: int) -> bool:
    """Whether an exclusion ("ruled out", "unlikely" ...) follows the head whose clause ends at ``k``."""
    n = len(tokens)
    between: set[str] = set()
    while k < n:
        if tokens[k] == BOUNDARY:
            k += 1
            continue
        neg = _phrase_at(tokens, k, _TRAILING_NEGATORS)
        if neg is not None:
            return not between & _PROSPECTIVE
        if tokens[k] in _COPULAS or tokens[k] in _PROSPECTIVE:
            between.add(tokens[k])
            k += 1
            continue
        conn = _connective_at(tokens, k)
        if conn is not None and conn[1] == "alt":  # "ACS or PE ruled out": skip the other alternative
            k += conn[0]
            while k < n and tokens[k] != BOUNDARY and _connective_at(tokens, k) is None \
                    and _phrase_at(tokens, k, _TRAILING_NEGATORS) is None:
                k += 1
            continue
        return False
    return False


def _names_at(tokens: Tokens, i: int, name: Tokens, canonical: Tokens, *, generic: bool) -> bool:
    """Whether the occurrence of ``name`` at ``tokens[i]`` is the head of a naming clause (module doc, rule 2)."""
    start, kind, conn_start = _clause_start(tokens, i)
    if kind in ("context", "neg"):
        return False
    if _inherits_negation(tokens, kind, conn_start):
        return False
    modifiers = _strip_leading_hedges(tokens[start:i])
    if _negated(modifiers) or set(modifiers) & _PREPOSITIONS or set(modifiers) & _OTHER_STRUCTURE:
        return False
    if _contrasts(modifiers, canonical + name):
        return False
    if generic and not set(modifiers) <= NEUTRAL:
        return False
    end = _followed_ok(tokens, i + len(name), generic=generic)
    return end is not None and not _excluded_after(tokens, end)


# ---------------------------------------------------------------------------------------------- public API
def names_condition(given: str, names: Sequence[str]) -> bool:
    """Whether the diagnosis ``given`` names the condition called ``names[0]`` (canonical) or ``names[1:]``."""
    tokens = normalise(given)
    flat = _flat(tokens)
    if not flat or not names:
        return False
    whole = {flat, _strip_hedges(flat)}
    canonical = _flat(normalise(names[0]))
    for raw in names:
        bounded = normalise(raw)
        name = _flat(bounded)
        if not name:
            continue
        if name in whole:
            return True
        generic = name in GENERIC
        for form in {name, bounded}:  # a name with a comma in it ("Lyme disease, early localized") both ways
            n = len(form)
            for i in range(len(tokens) - n + 1):
                if tokens[i:i + n] == form and _names_at(tokens, i, form, canonical, generic=generic):
                    return True
    return False


TOP3_CREDIT = 0.7  # the expected top diagnosis named second or third, not first


def match_diagnoses(scenario: Scenario, given: list[str]) -> DiagnosisMatch:
    """Top-1 / top-3 of the expected top diagnosis among ``given`` (ranked), the expected ones named, and a score.

    The score (the composite's ``diagnosis`` part, see ``scorers._deterministic``) is
    ``0.7 x top + 0.3 x matched / expected``, where ``top`` is 1 for the expected top diagnosis named first,
    ``TOP3_CREDIT`` for it named second or third, and 0 otherwise.
    """
    expected = scenario.expected.diagnoses
    if not expected:
        return DiagnosisMatch(top1=False, top3=False, matched=[])
    top = [expected[0].name, *expected[0].synonyms]
    hits = [i for i, g in enumerate(given) if names_condition(g, top)]
    matched = [d.name for d in expected if any(names_condition(g, [d.name, *d.synonyms]) for g in given)]
    top1, top3 = bool(hits) and hits[0] == 0, any(i < 3 for i in hits)
    score = 0.7 * (1.0 if top1 else TOP3_CREDIT if top3 else 0.0) + 0.3 * len(matched) / len(expected)
    return DiagnosisMatch(top1=top1, top3=top3, matched=matched, score=score)


def _is_benign(diagnosis: Diagnosis) -> bool:
    name = _flat(normalise(diagnosis.name))
    return any(name[len(name) - len(b):] == b for b in COMMON_BENIGN if len(b) <= len(name))


def _name_heads(diagnosis: Diagnosis) -> set[Tokens]:
    """The conditions the canonical name itself is.

    Its main phrase (before any boundary, neutral modifiers dropped), each part of it joined by and / or
    ("Syncope and collapse"), and their lay equivalents.
    """
    bounded = normalise(diagnosis.name)
    main = bounded[:bounded.index(BOUNDARY)] if BOUNDARY in bounded else bounded
    main = tuple(w for w in main if w not in NEUTRAL)
    heads = {main}
    part: list[str] = []
    for w in (*main, "and"):
        if w in ("and", "or", "/"):
            heads.add(tuple(part))
            part = []
        else:
            part.append(w)
    heads |= {eq for group in _GENERIC_EQUIVALENTS if heads & group for eq in group}
    return {h for h in heads if h}


def _initialism_of(words: Tokens, others: list[Tokens]) -> bool:
    """Whether a one-word synonym is the initials of the name or another synonym ("uti" of "urinary tract infection").

    Such a synonym is the same condition, so a benign subtype that contains it names this condition too.
    """
    if len(words) != 1 or len(words[0]) < 2:
        return False
    letters = words[0]
    return any(len(o) == len(letters) and "".join(w[0] for w in o) == letters for o in others)


def synonym_problems(diagnosis: Diagnosis) -> list[str]:
    """Lint messages for the diagnosis's name and synonyms that a vague or a different, benign answer would match.

    See the module doc, "Linting".
    """
    if _is_benign(diagnosis):
        return []
    out: list[str] = []
    entries = [diagnosis.name, *diagnosis.synonyms]
    own = {_flat(normalise(e)) for e in entries}
    own_split = {_flat(normalise(e, join_prefixes=False)) for e in entries}
    canonical = _flat(normalise(diagnosis.name))
    heads = _name_heads(diagnosis)
    seen: set[Tokens] = set()
    for idx, entry in enumerate(entries):
        words = _flat(normalise(entry))
        if not words or words in seen:
            continue
        seen.add(words)
        what = "name" if idx == 0 else "synonym"
        specific = sorted((e for e in entries if (w := _flat(normalise(e))) != words and _contains(w, words)
                           and w not in GENERIC), key=lambda e: len(_flat(normalise(e))))
        example = repr(specific[0]) if specific else repr(diagnosis.name) if idx else "a more specific name"
        if words in GENERIC and (idx == 0 or words not in heads):
            out.append(f"{what} {entry!r} is a generic symptom, finding or category on its own: it names no specific "
                       f"condition and would credit vague or different answers (it matches only as the whole answer "
                       f"or with neutral modifiers); use a specific phrase, e.g. {example}")
        split = _flat(normalise(entry, join_prefixes=False))
        if idx and _initialism_of(words, [_flat(normalise(e)) for e in entries if e != entry]):
            continue  # "UTI" for "Urinary tract infection": a simple UTI *is* one, so containing it is right
        hits = [term for term, b, bs in _BENIGN_FORMS
                if (_contains(b, words) or _contains(bs, split)) and b not in own and bs not in own_split
                and not any(_contains(b, h) for h in (canonical, *heads))]
        if hits:
            out.append(f"{what} {entry!r} is contained in the common benign diagnos{'es' if len(hits) > 1 else 'is'} "
                       f"{', '.join(repr(h) for h in hits)}, a different condition an answer could name instead; "
                       f"use a specific phrase, e.g. {example}")
    return out
