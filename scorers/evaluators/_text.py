"""Text helpers shared by the evaluators: what the agent said, keyword patterns, denials.

Keyword syntax (used by the red-flag protocols, the completeness element sets and the
escalation rules): a keyword is one or more words, matched case-insensitively on word
boundaries, with any run of spaces, hyphens or apostrophes between words. A word ending in
``*`` matches any word that starts with it (``radiat*`` = radiate, radiating, radiation);
any other word also matches with an ``s``, ``es``, ``ed`` or ``ing`` ending (``sweat`` =
sweats, sweated, sweating). So ``short of breath`` matches "Short-of-breath?".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from scenarios.schema import Fact, Scenario
from sim.records import ConversationResult, Turn

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def clean(text: str) -> str:
    """Lower case with typographic apostrophes made plain, so keywords like ``can't`` match."""
    return text.translate(_APOSTROPHES).lower()


def _word_pattern(word: str) -> str:
    if word.endswith("*"):
        return re.escape(word[:-1]) + r"[\w']*"
    return re.escape(word) + r"(?:s|es|ed|ing)?"


@lru_cache(maxsize=4096)
def _keyword_source(keyword: str) -> str:
    words = clean(keyword).replace("-", " ").split()
    return r"(?<![\w])" + r"[\s\-']+".join(_word_pattern(w) for w in words) + r"(?![\w])"


@lru_cache(maxsize=2048)
def keyword_regex(keywords: tuple[str, ...]) -> re.Pattern[str] | None:
    """One compiled alternation of ``keywords`` (see the module docstring); None for no keywords."""
    parts = [_keyword_source(k) for k in keywords if k.strip()]
    return re.compile("|".join(f"(?:{p})" for p in parts)) if parts else None


def find_keyword(text: str, keywords: Iterable[str]) -> str | None:
    """The first keyword occurrence in ``text`` (the matched text), or None."""
    rx = keyword_regex(tuple(keywords))
    if rx is None:
        return None
    m = rx.search(clean(text))
    return m.group(0) if m else None


def agent_turns(result: ConversationResult) -> list[Turn]:
    return [t for t in result.turns if t.speaker == "agent"]


def assessment_turn(result: ConversationResult) -> Turn | None:
    """The agent turn that holds the final assessment, if the encounter ended with one."""
    if result.final_assessment is None:
        return None
    for t in reversed(agent_turns(result)):
        if t.text == result.final_assessment:
            return t
    return None


def question_turns(result: ConversationResult) -> list[Turn]:
    """The agent turns before the assessment: what the agent asked (its questions and comments).

    Mentioning "radiation" in the final assessment is not asking about it, so the assessment
    turn is left out.
    """
    final = assessment_turn(result)
    return [t for t in agent_turns(result) if t is not final]


def final_text(result: ConversationResult) -> str:
    """The final assessment, or the last agent turn when the encounter ended without one."""
    if result.final_assessment is not None:
        return result.final_assessment
    turns = agent_turns(result)
    return turns[-1].text if turns else ""


_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+")


def sentences(text: str) -> list[str]:
    """Split on sentence-ending punctuation followed by space, and on line breaks.

    A decimal point is not followed by a space, so "1.5 g" stays whole.
    """
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


# --- Denials -------------------------------------------------------------------------------------
# A scenario fact's answer is a *denial* when the patient says the feature is absent or normal
# ("No, it stays right there", "Back's fine", "Crusty but not swollen"). Only the first sentence
# is read, because patients add colour afterwards ("...which is weird because I'm not hot").
# A first sentence of one or two words ending in "?" is an echo of the question ("Sweating? No.")
# and is skipped.
_LEADING_NEGATION = re.compile(
    r"^(?:(?:well|oh|um|erm|honestly|no)[,.!\s]+)?(?:no|nope|nah|not|none|nothing|never|neither|"
    r"don't|doesn't|didn't|haven't|hasn't|isn't|wasn't|aren't|can't say)\b")
_PRONOUN_NEGATION = re.compile(
    r"^(?:i|he|she|they|we|it|her|his|my)\s+(?:\w+\s+)?(?:don't|doesn't|didn't|haven't|hasn't|hadn't|isn't|"
    r"wasn't|never|has no|have no|had no)\s+(?:\w+\s+)?(?:have|has|had|get|got|notice|noticed|think|feel|seem|"
    r"complain|mention|any|been)\b")
_MINIMISING = re.compile(r"\bbut\s+(?:\w+\s+){0,2}?(?:nothing|no|not|don't|doesn't|isn't|aren't|never)\b")
# "sleepier than normal" and "not normal" are not reassurance.
_REASSURING = re.compile(r"(?<!than )(?<!not )(?<!n't )\b(?:fine|normal|okay|alright|all right)\b")


def is_denial(answer: str) -> bool:
    """True when the first sentence of ``answer`` denies or normalises the feature asked about."""
    parts = sentences(clean(answer).strip(" .\u2026"))
    while parts and parts[0].endswith("?") and len(parts[0].split()) <= 2:
        parts = parts[1:]
    if not parts:
        return False
    first = parts[0].lstrip(".\u2026 ")
    return bool(_LEADING_NEGATION.match(first) or _PRONOUN_NEGATION.match(first)
                or _MINIMISING.search(first) or _REASSURING.search(first))


def is_red_flag_fact(fact: Fact, scenario: Scenario) -> bool:
    """A fact the scenario marks as a red flag: category ``red_flag`` or listed in ``expected.red_flags``."""
    return fact.category.value == "red_flag" or fact.id in scenario.expected.red_flags


def contexts(scenario: Scenario) -> set[str]:
    ctx = scenario.patient_profile.context
    out = {name for name in ("pediatric", "geriatric", "pregnancy") if getattr(ctx, name)}
    if scenario.patient_profile.pregnant:
        out.add("pregnancy")
    return out


def complaint_text(scenario: Scenario) -> str:
    """What the patient presents with: the chief complaint and the opening line."""
    return f"{scenario.chief_complaint}\n{scenario.opening_line}"
