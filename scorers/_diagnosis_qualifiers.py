"""What qualifies a matched diagnosis name, and whether it contradicts the expected diagnosis.

``scorers._diagnosis`` finds a name or synonym as the head of a naming clause; this module then reads the words
that qualify that occurrence (``qualifiers``) and refuses the match when they contradict the expected diagnosis
(``contradicts``), and gives the second word order of an "of" phrase (``of_variant``) that the matcher also
tries. The module doc of ``scorers._diagnosis`` ("Qualifiers that contradict") has the rules; the classes are
``scorers._diagnosis_words.CONTRASTS``.
"""

from __future__ import annotations

from functools import lru_cache

from scorers._diagnosis_text import BOUNDARY, Tokens
from scorers._diagnosis_words import (
    _CONNECTIVES,
    _COPULAS,
    _HEDGES,
    _PROSPECTIVE,
    _TRAILING_HEDGES,
    _TRAILING_NEGATORS,
    CONTRASTS,
    LOCATION,
    ORGANS,
    Contrast,
)

# a word after which an "of" phrase has ended: a connective, a hedge, a copula or modal, an exclusion, "of"
_PHRASE_END = frozenset({p[0] for p, _ in _CONNECTIVES} | {p[0] for p in _TRAILING_NEGATORS}
                        | _TRAILING_HEDGES | _COPULAS | _PROSPECTIVE | {"of"})
_HEDGE_WORDS = frozenset(w for p in _HEDGES for w in p) | _TRAILING_HEDGES
# what an aside that qualifies the name before it may hold: hedges, location words, the words of a contrast class
_ASIDE_WORDS = _HEDGE_WORDS | LOCATION | frozenset(w for c in CONTRASTS for p, _ in c.members for w in p)
# a following "with / without" clause that is itself a qualifier ("without severe features", "with aura")
_WITH_QUALIFIERS = frozenset(p for c in CONTRASTS for p, _ in c.members if p[0] in ("with", "without"))


@lru_cache(maxsize=8192)
def of_variant(tokens: Tokens) -> Tokens:
    """``tokens`` with each "X of [side/position] ORGAN" as "[side/position] ORGAN X", the last "of" first.

    "torsion of left testicular" -> "left testicular torsion"; "fracture of shaft of radial" -> "radial shaft
    fracture". The "of" phrase must be only location words ending in an organ, and end the clause.
    """
    out = list(tokens)
    j = len(out) - 2
    while j >= 1:
        if out[j] == "of" and out[j - 1] not in (BOUNDARY, "/"):
            m = j + 1
            while m < len(out) and out[m] in LOCATION:
                m += 1
            if m > j + 1 and out[m - 1] in ORGANS and (m == len(out) or out[m] in (BOUNDARY, "/")
                                                       or out[m] in _PHRASE_END):
                out[j - 1:m] = [*out[j + 1:m], out[j - 1]]
                j = min(j, len(out) - 2)
                continue
        j -= 1
    return tuple(out)


_SIDE_WORDS = frozenset({"left", "right", "bilateral", "unilateral"})
_SIDE_TAIL = frozenset({"sided", "side"})
# where a clause starts: after a boundary, "/" or a connective (its last word)
_CLAUSE_OPENERS = frozenset({BOUNDARY, "/"} | {p[-1] for p, _ in _CONNECTIVES})


@lru_cache(maxsize=8192)
def side_first(tokens: Tokens) -> Tokens:
    """``tokens`` with a side inside a clause moved to the clause's start.

    "twisted left testis" -> "left twisted testis", "acute right pyelonephritis" -> "right acute pyelonephritis";
    a heart structure's "left" stays ("left ventricular").
    """
    out = list(tokens)
    start = i = 0
    while i < len(out):
        if out[i] in _CLAUSE_OPENERS:
            start = i + 1
        elif out[i] in _SIDE_WORDS and i > start and not _structure_side(tuple(out[i:i + 3])):
            j = i + 1
            while j < len(out) and out[j] in _SIDE_TAIL:
                j += 1
            run = out[i:j]
            del out[i:j]
            out[start:start] = run
            start += len(run)
            i = j
            continue
        i += 1
    return tuple(out)


def qualifiers(tokens: Tokens, start: int, end: int) -> Tokens:
    """The words that qualify a name matched in ``tokens[start:end]`` (its clause, up to where it ends).

    That clause, then each following aside made only of location words, hedges and the words of contrast
    classes ("Stroke - right MCA territory", "Torsion (left)", "Asthma exacerbation, moderate"), and a following
    "with / without" clause that is a qualifier of a contrast class ("Pre-eclampsia without severe features",
    "Migraine without aura"). Other clauses (after "with", "due to", "in", a boundary) describe something else:
    "Stroke with right-sided weakness" is not a right-sided stroke.
    """
    words = list(tokens[start:end])
    n = len(tokens)
    k = end
    while k < n:
        m = k + 1
        while m < n and tokens[m] != BOUNDARY:
            m += 1
        part = tokens[k + 1:m]
        if tokens[k] == BOUNDARY and part and all(w in _ASIDE_WORDS for w in part):
            words += part
        elif tokens[k:m] in _WITH_QUALIFIERS:
            words += tokens[k:m]
        else:
            break
        k = m
    return tuple(words)


@lru_cache(maxsize=8192)
def _values(words: Tokens, contrast: Contrast) -> frozenset[str]:
    """The values of ``contrast`` that ``words`` hold (longest member phrase first, each word read once)."""
    found: set[str] = set()
    i = 0
    while i < len(words):
        for phrase, values in contrast.members:
            if tuple(words[i:i + len(phrase)]) == phrase:
                found |= values
                i += len(phrase)
                break
        else:
            i += 1
    return frozenset(found)


def contradicts(given: Tokens, reference: Tokens) -> bool:
    """Whether qualifiers ``given`` hold a value of a contrast class and ``reference`` holds others, none shared.

    ``reference`` is the expected diagnosis: its canonical name, the name matched and its side.
    """
    ref_words = set(reference)
    for contrast in CONTRASTS:
        if contrast.anchor and not contrast.anchor & ref_words:
            continue
        mine = _values(given, contrast)
        if mine:
            theirs = _values(reference, contrast)
            if theirs and not mine & theirs:
                return True
    return False


_SIDE = next(c for c in CONTRASTS if c.name == "side")


def sides(words: Tokens) -> frozenset[str]:
    """The sides of the body (left, right) that ``words`` name; "bilateral" is both, "left ventricular" neither."""
    return _values(words, _SIDE)


def _structure_side(words: Tokens) -> bool:
    """Whether ``words`` start with a heart structure's side ("left ventricular", "right sided heart")."""
    return any(not values and words[:len(p)] == p for p, values in _SIDE.members)
