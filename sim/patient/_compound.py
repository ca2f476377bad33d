"""A trigger that only modifies the head of a compound: "blood pressure tablets" are tablets, not a blood pressure.

A scenario's trigger names its fact's topic ("blood pressure" for the home readings). In a compound whose head is a
medicine or a service ("Which blood pressure tablets are you on?", "When was your last blood pressure review?",
"Any headache pills?") the trigger is only the modifier: the question is about the tablets or the review. So a
trigger followed at once by such a head does not fire for a fact that says nothing about that head (its own words:
triggers and answer); the fact about the medicine or the review is asked by its own trigger or intent.
"""

from __future__ import annotations

import re
from functools import lru_cache

from scenarios.lexicon import compiled_intents, padded

# the heads: medicines and their forms, and the services that look after a condition
HEADS = frozenset(padded("""
tablet pill capsule medicine medication drug inhaler spray cream injection prescription dose
review clinic appointment nurse team leaflet
""").split())


_BREAK = re.compile(r"[,;:()/?!.\u2013\u2014]+")  # a list's "smoking, medicines?" is no compound


@lru_cache(maxsize=4096)
def _joined(sentence: str) -> str:
    """``sentence`` padded, with a "0" where punctuation separated two words."""
    return padded(_BREAK.sub(" 0 ", sentence))


def only_modifies(trigger: str, sentence: str, own_words: set[str]) -> bool:
    """Whether every occurrence of ``trigger`` (padded) stands right before a head its fact does not own."""
    text = _joined(sentence)
    start, heads = 0, []
    while (i := text.find(trigger, start)) >= 0:
        after = text[i + len(trigger):].split(maxsplit=1)
        heads.append(after[0] if after else "")
        start = i + 1
    return bool(heads) and all(h in HEADS and h not in own_words for h in heads)


def cue_only_modifies(intent: str, sentence: str, own_words: set[str]) -> bool:
    """Whether every cue of ``intent`` the sentence hits is one phrase that only modifies a head the fact lacks."""
    text = padded(sentence)
    hit = [c.phrases for c in compiled_intents()[intent][0] if c.hit(text)]
    return bool(hit) and all(len(c) == 1 and only_modifies(c[0], sentence, own_words) for c in hit)
