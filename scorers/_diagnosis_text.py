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


def _contains(hay: Tokens, needle: Tokens) -> bool:
    n = len(needle)
    return n > 0 and any(hay[i:i + n] == needle for i in range(len(hay) - n + 1))
