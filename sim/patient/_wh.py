"""Sentences that open with a question word and still ask nothing: headings, free relatives and pseudo-clefts.

A question puts an auxiliary before its subject ("Why **is the pain** worse?", "How long **has it** been?", "Which
of these **have you** had?"). A clinician's summary or explanation opens with the same words in statement order:

- a **free relative** with its subject right after the question word: "Why I'm concerned", "What you've told me",
  "How we'll treat it";
- a **pseudo-cleft**, whose copula comes after a clause and before what it identifies: "What usually helps most is
  staying active", "What's different is how long it has lasted", "Why a stroke is the likely cause";
- a **heading** over a list (it ends with a colon) without an inversion: "What helps:", "Why I'm taking this
  seriously:".

Only sentences without a question mark get here (the question filter reads "?" first), so "What helps?" still asks.
A heading that says it asks ("What I need to know:") is the filter's to read (``_QUESTION_HEADING``).
"""

from __future__ import annotations

import re

_WH = frozenset("what why how where which who".split())
_AUX = frozenset("am is are was were do does did has have had can could will would should shall may might must".split())
_COPULA = frozenset("is are was were".split())
_PRONOUN = frozenset("i you he she they it we there".split())
_DETERMINER = frozenset("a an the this that these those your his her their my our its".split())
_CONTRACTION = {"'s": "is", "'m": "am", "'re": "are", "'ve": "have", "'ll": "will", "'d": "would", "n't": "not"}
_WORD = re.compile(r"[a-z]+(?:n't|'[a-z]+)?")


def _tokens(sentence: str) -> list[str]:
    """Lower-case words with contractions spelt out: "What's" -> what is, "I'm" -> i am, "isn't" -> is not."""
    out: list[str] = []
    for word in _WORD.findall(sentence.lower().replace("\u2019", "'")):
        for ending, full in _CONTRACTION.items():
            if word.endswith(ending) and len(word) > len(ending):
                out += [word[: -len(ending)], full]
                break
        else:
            out.append(word)
    return out


def _at(words: list[str], i: int) -> str:
    return words[i] if i < len(words) else ""


def declarative_wh(sentence: str, *, heading: bool = False) -> bool:
    """Whether ``sentence``, opening with a question word, is in statement order (see the module docstring).

    Args:
        sentence: one sentence without a question mark.
        heading: it ends with a colon, over a list: then any opening without an inversion is a heading.
    """
    words = _tokens(sentence)
    if len(words) < 2 or words[0] not in _WH:
        return False
    rest = words[1:]
    if rest[0] in _PRONOUN:  # "Why I'm concerned", "What you told me"
        return True
    aux = next((i for i, w in enumerate(rest[:7]) if w in _AUX), None)
    if aux is None:  # "What helps": a heading, or a question whose question mark the filter did not see
        return heading
    if aux == 0:  # "What's the plan" asks; "What's different today is that ..." identifies, "What is it that is" asks
        cop = next((i for i, w in enumerate(rest[1:5], 1) if w in _AUX), None)
        # ... and "how's her breathing is it fast" is two questions run together (a transcript without punctuation)
        return (cop is not None and rest[cop] in _COPULA and not any(w in _PRONOUN for w in rest[1:cop])
                and _at(rest, cop + 1) not in _PRONOUN)
    if rest[0] in _DETERMINER:  # "Why a stroke is the likely cause": the subject stands before its verb
        return True
    # a clause before the copula ("What usually helps most is staying active", "What settles this kind of pain is an
    # operation"), not a question word's phrase before an inverted subject ("How long has it been", "Which one is
    # worse", "Which of these is the worst", "What kind of pain is it")
    if aux < 2 or rest[aux] not in _COPULA:
        return False
    after = _at(rest, aux + 1)
    return not (after in _PRONOUN or (aux == 2 and after in _DETERMINER))
