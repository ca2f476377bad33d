"""Linting a diagnosis's name and synonyms for entries that would credit a vague or a different, benign answer.

``synonym_problems(diagnosis)`` returns one message per problem (``encsim scenarios lint`` shows them); the
matcher it protects is ``scorers._diagnosis``.

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
urinary tract infection" is recognised as a subtype); the standard abbreviations that ``normalise`` spells out
("UTI" is "urinary tract infection") are compared spelled out.

A generic synonym that is the canonical name clipped is not flagged: to its modifier, "ectopic" for "Ectopic
pregnancy" as clinicians write it ("?ectopic"), or to the finding it is named with, "gangrene" for "Diabetic foot
ulcer with gangrene". As a generic name it matches only alone or with neutral modifiers ("left ectopic", not
"ventricular ectopics"; "gangrene", not "gas gangrene").

Sides (``side_problems``, also run on common benign diagnoses): the diagnosis's side is its ``side`` field, else
the one side (left or right) its canonical name names. A name or synonym naming the other side is flagged, and so
is a synonym naming a side when the diagnosis has none ("left pneumothorax" without ``side: left``): set the
side, so that the matcher refuses an answer naming the other one.
"""

from __future__ import annotations

from scenarios.schema import Diagnosis
from scorers._diagnosis_qualifiers import sides
from scorers._diagnosis_text import BOUNDARY, Tokens, _contains, _flat, normalise
from scorers._diagnosis_words import _BENIGN_FORMS, _GENERIC_EQUIVALENTS, COMMON_BENIGN, GENERIC, NEUTRAL


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


def _clipped(words: Tokens, diagnosis: Diagnosis) -> bool:
    """Whether ``words`` is the canonical name clipped.

    Without its head noun ("ectopic" of "Ectopic pregnancy"), or the finding it is named "with" ("gangrene" of
    "Diabetic foot ulcer with gangrene").
    """
    bounded = normalise(diagnosis.name)
    main = bounded[:bounded.index(BOUNDARY)] if BOUNDARY in bounded else bounded
    main = tuple(w for w in main if w not in NEUTRAL)
    with_part = main[main.index("with") + 1:] if "with" in main else ()
    return (len(main) == 2 and words == main[:1]) or words == with_part


def side_problems(diagnosis: Diagnosis) -> list[str]:
    """Names and synonyms that name a side the diagnosis is not on, or a side while the diagnosis has none.

    The diagnosis's side is ``side``, else the one side its canonical name names.
    """
    named = sides(normalise(diagnosis.name))
    side = {diagnosis.side} if diagnosis.side else set(named) if len(named) == 1 else set()
    out: list[str] = []
    for idx, entry in enumerate([diagnosis.name, *diagnosis.synonyms]):
        mine = sides(normalise(entry))
        what = "name" if idx == 0 else "synonym"
        if side and mine and not mine & side:
            out.append(f"{what} {entry!r} names the {'/'.join(sorted(mine))} side, but the diagnosis is on the "
                       f"{next(iter(side))}: an answer naming that side would be credited")
        elif not side and mine and idx:
            out.append(f"synonym {entry!r} names the {'/'.join(sorted(mine))} side, but the diagnosis has no side: "
                       f"set `side: {sorted(mine)[0]}` so that an answer naming the other side is not credited, or "
                       f"drop the side from the synonym")
    return out


def synonym_problems(diagnosis: Diagnosis) -> list[str]:
    """Lint messages for the diagnosis's name and synonyms that a vague or a different, benign answer would match.

    See the module doc, "Linting".
    """
    if _is_benign(diagnosis):
        return side_problems(diagnosis)
    out: list[str] = side_problems(diagnosis)
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
        if words in GENERIC and (idx == 0 or words not in heads) and not (idx and _clipped(words, diagnosis)):
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
