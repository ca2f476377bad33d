"""Normalising a diagnosis phrase into words for the matcher (``scorers._diagnosis``) and the lint.

``normalise(text)`` gives the words of a phrase with ``BOUNDARY`` tokens where a clause boundary stood; ``_flat``
drops the boundaries, ``_phrases`` normalises a word list (longest first), ``_contains`` finds a word sequence.

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
* Standard equivalences, so that two standard wordings of one condition become the same words:
  single words (``_WORD_EQUIVALENTS``: "bleeding" = "haemorrhage" = "bleed", "infective" = "infectious",
  "infarct" = "infarction", "embolus" = "embolism", "carcinoma" = "cancer"; an organ's noun = its adjective,
  "testis" = "testicle" = "testicular", "kidney" = "renal", "lung" = "pulmonary", "heart" = "cardiac",
  "brain" = "cerebral", "stomach" = "gastric", "aorta" = "aortic" ...; a side's abbreviation, "L"/"Lt" =
  "left", "R"/"Rt" = "right"), standard abbreviations spelled out (``_ABBREVIATION_WORDS``: GI, UGIB, MI,
  STEMI, NSTEMI, ACS, PE, DVT, SAH, ICH, CVA, TIA, MCA, UTI, URTI, LRTI, DKA, T1DM, PTX, LBP, HTN ...: "upper
  GI bleeding" = "upper gastrointestinal haemorrhage", "NSTEMI" = "non-ST elevation myocardial infarction"),
  and a few phrases (``_PHRASE_EQUIVALENTS``: "lower back" = "low back", "ST segment elevation" = "ST
  elevation", "respiratory infection" = "respiratory tract infection", "type II" = "type 2", "moderate to
  severe" = "moderate severe").
  ``of_variant`` gives a second word order of a phrase: "X of [the] [side/position] ORGAN" as "[side/position]
  ORGAN X" ("torsion of the left testicle" = "left testicular torsion", "fracture of the shaft of the radius"
  = "radial shaft fracture"); the matcher tries both orders.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Final

Tokens = tuple[str, ...]

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
# single words folded to one standard word (after spelling and plurals): standard synonyms, an organ's noun to
# its adjective, a side's abbreviation to the side
_WORD_EQUIVALENTS: Final[dict[str, str]] = {
    "bleeding": "bleed", "hemorrhage": "bleed", "infective": "infectious", "infarct": "infarction",
    "embolus": "embolism", "emboli": "embolism", "carcinoma": "cancer", "pectoralis": "pectoral",
    "testis": "testicular", "testicle": "testicular", "teste": "testicular", "kidney": "renal", "lung": "pulmonary",
    "heart": "cardiac", "brain": "cerebral", "liver": "hepatic", "stomach": "gastric", "ovary": "ovarian",
    "aorta": "aortic", "radius": "radial", "ulna": "ulnar", "fibula": "fibular", "tibia": "tibial",
    "femur": "femoral", "humerus": "humeral", "esophagus": "esophageal", "uterus": "uterine",
    "l": "left", "lt": "left", "r": "right", "rt": "right",
}
# standard abbreviations, spelled out (normalised words: "hemorrhage" is already "bleed")
_ABBREVIATION_WORDS: Final[dict[str, str]] = {
    "gi": "gastrointestinal", "ugi": "upper gastrointestinal", "ugib": "upper gastrointestinal bleed",
    "lgib": "lower gastrointestinal bleed", "mi": "myocardial infarction", "ami": "acute myocardial infarction",
    "stemi": "st elevation myocardial infarction", "nstemi": "nonst elevation myocardial infarction",
    "nonstemi": "nonst elevation myocardial infarction", "nste": "nonst elevation", "ste": "st elevation",
    "acs": "acute coronary syndrome", "pe": "pulmonary embolism", "dvt": "deep vein thrombosis",
    "vte": "venous thromboembolism", "sah": "subarachnoid bleed", "ich": "intracerebral bleed",
    "sdh": "subdural hematoma", "edh": "extradural hematoma", "cva": "cerebrovascular accident",
    "tia": "transient ischemic attack", "mca": "middle cerebral artery", "uti": "urinary tract infection",
    "urti": "upper respiratory tract infection", "uri": "upper respiratory tract infection",
    "lrti": "lower respiratory tract infection", "dka": "diabetic ketoacidosis", "t1dm": "type 1 diabetes mellitus",
    "t2dm": "type 2 diabetes mellitus", "ptx": "pneumothorax", "lbp": "low back pain", "htn": "hypertension",
    "sbi": "serious bacterial infection", "sti": "sexually transmitted infection",
    "pid": "pelvic inflammatory disease", "copd": "chronic obstructive pulmonary disease", "msk": "musculoskeletal",
}
_PHRASE_EQUIVALENTS: Final[tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]] = (
    (("lower", "back"), ("low", "back")), (("st", "segment", "elevation"), ("st", "elevation")),
    (("nonst", "segment", "elevation"), ("nonst", "elevation")),
    (("respiratory", "infection"), ("respiratory", "tract", "infection")),
    (("urinary", "infection"), ("urinary", "tract", "infection")),
    (("type", "i"), ("type", "1")), (("type", "ii"), ("type", "2")),
    (("mild", "to", "moderate"), ("mild", "moderate")), (("moderate", "to", "severe"), ("moderate", "severe")),
)
_BOUNDARY_CHARS: Final = re.compile(r"[()\[\],;:|\u2013\u2014]|\s-+\s|\s-+$|^-+\s|\.(?!\d)")
_FUNCTION_WORDS: Final = frozenset({"of", "in", "on", "with", "for", "to", "from", "by", "at", "as", "is", "was",
                                    "and", "or", "vs", "versus", "likely", "possible", "probable", "suspected",
                                    "query", "without", "after", "following", "during"})


def _fold(word: str) -> str:
    word = _fold_spelling(word)
    return _WORD_EQUIVALENTS.get(word, word)


def _fold_spelling(word: str) -> str:
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


def _equivalents(words: list[str]) -> list[str]:
    """Abbreviations spelled out and phrase equivalences applied (see the module doc)."""
    out: list[str] = []
    for w in words:
        if w in _ABBREVIATION_WORDS:
            out.extend(_fold(x) for x in _ABBREVIATION_WORDS[w].split())
        else:
            out.append(w)
    for old, new in _PHRASE_EQUIVALENTS:
        i = 0
        while i <= len(out) - len(old):
            if tuple(out[i:i + len(old)]) == old:
                out[i:i + len(old)] = new
            i += 1
    return out


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
    for w in _equivalents(words):
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


def _contains(hay: Tokens, needle: Tokens) -> bool:
    n = len(needle)
    return n > 0 and any(hay[i:i + n] == needle for i in range(len(hay) - n + 1))
