"""A clinician's words as a speech-to-text transcript gives them: disfluencies and unpunctuated runs.

A voice agent's turn, transcribed, often has no punctuation at all and carries the speaker's hesitations: "um okay
so has she had a temperature", "that must be really worrying for you has the rash spread anywhere". Two things make
such a turn readable by the question filter (``sim.patient.understanding``):

- **disfluencies** ("um", "uh", "erm", "mhm", "uh-huh", and "er" where it opens a clause) are removed wherever they
  stand, so that the question's own opening words open the sentence;
- an **unpunctuated run** (no ``.``, ``?`` or ``!`` at its end) is split before the first place where a question
  or a request opens after some words of acknowledgement or empathy: an auxiliary before a pronoun ("... for you
  has the rash spread"), a question word before its verb ("... okay when did it start"), "any" before a noun, or
  an asking phrase ("can you tell me", "I just need to check"). The words before that place are a statement; the
  rest is read as a sentence of its own. A punctuated sentence is never split here: its writer placed its ends.
"""

from __future__ import annotations

import re

_DISFLUENCY = re.compile(r"(?<![\w'-])(?:u+m+|u+h+m*|e+r+m+|mhm+|uh-huh|hmm+)(?![\w'-]),?\s*|"
                         r"(?:^|(?<=\band )|(?<=\bso )|(?<=\bokay )|(?<=\bok )|(?<=\bright ))er\b,?\s*", re.I)

_SUBJECT = r"(?:he|she|they|you|it|there|your|his|her|their|the|this|that|anyone|anything|anybody|we|i)"
_OPENING = re.compile(
    rf"\b(?:(?:is|are|was|were|has|have|had|does|do|did|can|could|will|would)\s+{_SUBJECT}\b"
    r"|(?:how|when|where|what|which|who|why|whereabouts)\s+(?:is|are|was|were|has|have|had|does|do|did|can|could"
    r"|would|long|much|many|often|old|bad|far|kind|sort|exactly|time|happened|about|type)\b"
    r"|any\s+(?!of\b|more\b|longer\b)\w+"
    r"|(?:can|could|would) you (?:tell|describe|explain|let me know|show|check)\b|tell me\b"
    r"|i (?:just |also )?(?:need|want|have) to (?:ask|know|check)\b"
    r"|i(?:'d| would) (?:just |also )?like to (?:ask|know|check)\b)", re.I)
# a word that makes what follows part of its own clause ("I know what is wrong", "tell them if there is ...")
_EMBEDS = frozenset("what that which who whom where when how if whether because why than as not to".split())
# a word that takes "any ..." as its object ("don't give him any food", "without any help")
_TAKES_ANY = frozenset("no him her them me us it of for with without in on at from about give take have has had eat "
                       "drink need get keep use using taking giving eating drinking".split())
_MIN_PREFIX = 2  # words before the split: "okay so" alone is a filler the filter strips anyway
_MIN_REST = 3  # words of the question after it


def without_disfluencies(line: str) -> str:
    """``line`` without the speaker's hesitations ("um", "uh", "erm" ...)."""
    return _DISFLUENCY.sub("", line).strip()


def split_run(sentence: str) -> list[str]:
    """An unpunctuated run split before the question it holds (the module docstring); else ``[sentence]``."""
    if sentence.rstrip(" )\"'*_").endswith((".", "?", "!", ":")):
        return [sentence]
    for m in _OPENING.finditer(sentence):
        before = sentence[:m.start()].split()
        if len(before) < _MIN_PREFIX:
            continue
        word = before[-1].lower().strip(",'")
        if word in _EMBEDS or (m[0].lower().startswith("any") and word in _TAKES_ANY) \
                or len(sentence[m.start():].split()) < _MIN_REST:
            continue
        return [sentence[:m.start()].rstrip(" ,"), sentence[m.start():]]
    return [sentence]
