"""Text helpers shared by the evaluators: what the agent said, keyword patterns, denials.

Keyword syntax (used by the red-flag protocols, the completeness element sets and the
escalation rules): a keyword is one or more words, matched case-insensitively on word
boundaries, with any run of spaces, hyphens or apostrophes between words. A word ending in
``*`` matches any word that starts with it (``radiat*`` = radiate, radiating, radiation);
any other word also matches with an ``s``, ``es``, ``ed`` or ``ing`` ending (``sweat`` =
sweats, sweated, sweating). So ``short of breath`` matches "Short-of-breath?".
"""

from __future__ import annotations

import bisect
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from functools import lru_cache, wraps
from typing import Any, TypeVar

from scenarios.schema import Scenario  # re-exported: an evaluator module may use it
from sim.records import ConversationResult, Turn

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


@lru_cache(maxsize=8192)
def clean(text: str) -> str:
    """Lower case with typographic apostrophes made plain, so keywords like ``can't`` match.

    Cached: one turn's text is searched for many keyword sets.
    """
    return text.translate(_APOSTROPHES).lower()


# --- Per-scenario caches -------------------------------------------------------------------------
# What an evaluator derives from the scenario alone (the protocols that apply, which facts cover which red flag
# or completeness element, the source text's n-grams) is the same for all K encounters of a run, so it is
# computed once per scenario object rather than per encounter. The cache is keyed on the object's identity and
# holds a reference to it, so an id is never reused while its entry lives; it is bounded (least recently used
# out first) and guarded by a lock, since evaluators run in worker threads. A scenario must not be changed in
# place after it is scored (the loader gives a fresh object per load; tests and benches use ``model_copy``).

SCENARIO_CACHE_SIZE = 1024
_scenario_cache: OrderedDict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] = OrderedDict()
_scenario_lock = threading.Lock()
_R = TypeVar("_R")


def per_scenario(fn: Callable[..., _R]) -> Callable[..., _R]:
    """Cache ``fn(scenario, *others)`` on the identity of each argument (see the comment above)."""

    @wraps(fn)
    def cached(*args: Any) -> _R:  # the arguments are the wrapped function's
        key = (fn, *map(id, args))
        with _scenario_lock:
            hit = _scenario_cache.get(key)
            if hit is not None and all(a is b for a, b in zip(hit[0], args, strict=True)):
                _scenario_cache.move_to_end(key)
                return hit[1]  # type: ignore[no-any-return]
        value = fn(*args)
        with _scenario_lock:
            _scenario_cache[key] = (args, value)
            while len(_scenario_cache) > SCENARIO_CACHE_SIZE:
                _scenario_cache.popitem(last=False)
        return value

    return cached


def _word_pattern(word: str) -> str:
    if word.endswith("*"):
        return re.escape(word[:-1]) + r"[\w']*"
    return re.escape(word) + r"(?:s|es|ed|ing)?"


_WORD_START = r"(?<![\w])"


@lru_cache(maxsize=4096)
def _keyword_body(keyword: str) -> str:
    words = clean(keyword).replace("-", " ").split()
    return r"[\s\-']+".join(_word_pattern(w) for w in words) + r"(?![\w])"


@lru_cache(maxsize=2048)
def keyword_regex(keywords: tuple[str, ...]) -> re.Pattern[str] | None:
    """One compiled alternation of ``keywords`` (see the module docstring); None for no keywords.

    The word-start lookbehind is written once in front of the alternation, not at the head of every alternative:
    the matches are the same, and the search is about 20 times faster on a 20-keyword set, because the engine no
    longer runs the lookbehind once per alternative at every position of the text.
    """
    parts = [_keyword_body(k) for k in keywords if k.strip()]
    return re.compile(_WORD_START + "(?:" + "|".join(f"(?:{p})" for p in parts) + ")") if parts else None


def find_keyword(text: str, keywords: Iterable[str]) -> str | None:
    """The first keyword occurrence in ``text`` (the matched text), or None."""
    rx = keyword_regex(tuple(keywords))
    if rx is None:
        return None
    m = rx.search(clean(text))
    return m.group(0) if m else None


TURN_SEPARATOR = "\n|\n"
"""Between the texts of ``Joined``: not a word character, and not the space, hyphen or apostrophe a keyword's words
may be separated by, so no keyword match spans two texts."""


class Joined:
    """Several texts searched as one: the first keyword match, and which text it is in.

    One regex search over the joined texts finds what a search of each text in turn would find first (the leftmost
    match lies in the earliest text that has one), with far fewer calls.
    """

    def __init__(self, texts: Iterable[str]) -> None:
        """Join the cleaned texts (``clean``) with ``TURN_SEPARATOR``, remembering where each starts."""
        cleaned = [clean(t) for t in texts]
        self.starts: list[int] = []
        at = 0
        for text in cleaned:
            self.starts.append(at)
            at += len(text) + len(TURN_SEPARATOR)
        self.text = TURN_SEPARATOR.join(cleaned)

    def first(self, keywords: Iterable[str]) -> tuple[int, str] | None:
        """(index of the text, matched text) of the first keyword occurrence, or None."""
        rx = keyword_regex(tuple(keywords))
        m = rx.search(self.text) if rx is not None and self.starts else None
        if m is None:
            return None
        return bisect.bisect_right(self.starts, m.start()) - 1, m.group(0)

    def hits(self, keywords: Iterable[str]) -> set[int]:
        """The indices of the texts that contain a keyword occurrence.

        No match spans two texts, so scanning the joined text for successive matches finds one in every text that
        has any.
        """
        rx = keyword_regex(tuple(keywords))
        if rx is None or not self.starts:
            return set()
        return {bisect.bisect_right(self.starts, m.start()) - 1 for m in rx.finditer(self.text)}


@per_scenario
def fact_texts(scenario: Scenario) -> tuple[Joined, list[str]]:
    """Every fact's triggers and its id (underscores as spaces), joined, and the fact id of each of those texts.

    What ``any(find_keyword(t, keywords) for t in (*fact.triggers, fact.id.replace("_", " ")))`` asks of each fact
    becomes one search for all of them: ``{owners[i] for i in joined.hits(keywords)}``.
    """
    texts, owners = [], []
    for fact in scenario.information_tree:
        for text in (*fact.triggers, fact.id.replace("_", " ")):
            texts.append(text)
            owners.append(fact.id)
    return Joined(texts), owners


def facts_matching(scenario: Scenario, keywords: Iterable[str]) -> set[str]:
    """The ids of the facts one of whose triggers, or whose id, contains one of ``keywords``."""
    joined, owners = fact_texts(scenario)
    return {owners[i] for i in joined.hits(keywords)}


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


def contexts(scenario: Scenario) -> set[str]:
    ctx = scenario.patient_profile.context
    out = {name for name in ("pediatric", "geriatric", "pregnancy") if getattr(ctx, name)}
    if scenario.patient_profile.pregnant:
        out.add("pregnancy")
    return out


def complaint_text(scenario: Scenario) -> str:
    """What the patient presents with: the chief complaint and the opening line."""
    return f"{scenario.chief_complaint}\n{scenario.opening_line}"
