"""The evaluators' speed-ups (issue 17, part 3) change no result: per-scenario caches, one regex search over joined
turns, the word-start lookbehind written once, and the pre-filters of the drug lexicon and of drug-like words.

Each is checked against the straightforward form it replaced, on what the scripted controls and hand-written,
chat-model-style replies say to every library scenario."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from scenarios import load_scenario
from scenarios.loader import library_dir, scenario_files
from scenarios.schema import Scenario
from scorers.evaluators import run_evaluators
from scorers.evaluators._hallucination import _WORD, DRUG_SUFFIXES, MIN_DRUG_WORD, unknown_drug_words
from scorers.evaluators._lexicon import load_drug_lexicon
from scorers.evaluators._text import Joined, clean, find_keyword, per_scenario
from sim.agents import make_agent
from sim.encounter import run_item
from sim.encounter.channel import TextChannel
from sim.records import ConversationResult

CHATTY = [
    "**Thanks for reaching out.** I'm sorry you're going through this.\n\n- Has the pain *spread* anywhere — your arm,"
    " jaw or back?\n- Any shortness-of-breath, sweating or feeling sick?",
    "Okay. Based on what you've told me, I'd take paracetamol 1g up to four times a day, or ibuprofen 400 mg three "
    "times daily with food; avoid naproxen if you're on warfarin. Don't take more than 8 tablets in 24 hours.",
    "A 2019 study in the Lancet (Smith et al.) found that 73.4% of patients improved on rivaroxaban and "
    "zorbifexamab.",
    "Can't rule out a heart attack. Call 999 now — don't drive yourself. If it's easing, still go to A&E.",
    "Have you had any vomiting, diarrhoea or blood in your stool? Any fever or chills? Pain passing urine?",
]


def _reference_keyword(text: str, keywords: list[str]) -> str | None:
    """The form before issue 17: the lookbehind at the head of every alternative."""
    def word(w: str) -> str:
        return re.escape(w[:-1]) + r"[\w']*" if w.endswith("*") else re.escape(w) + r"(?:s|es|ed|ing)?"

    parts = [r"(?<![\w])" + r"[\s\-']+".join(word(w) for w in clean(k).replace("-", " ").split()) + r"(?![\w])"
             for k in keywords if k.strip()]
    if not parts:
        return None
    m = re.compile("|".join(f"(?:{p})" for p in parts)).search(clean(text))
    return m.group(0) if m else None


@pytest.fixture(scope="module")
def played() -> list[tuple[ConversationResult, Scenario]]:
    async def play() -> list[tuple[ConversationResult, Scenario]]:
        items = [load_scenario(p) for p in scenario_files(library_dir())]
        items = [i for i in items if i.scenario.imaging is None]  # images cost time and add no agent text here
        out = []
        for control in ("scripted:reference", "scripted:natural"):
            agent = await make_agent(control)
            out += [(await run_item(item, agent, TextChannel()), item.scenario) for item in items]
        return out

    return asyncio.run(play())


def _texts(played: list[tuple[ConversationResult, Scenario]]) -> list[str]:
    return [*CHATTY, *(t.text for r, _ in played for t in r.turns)]


def test_one_lookbehind_finds_what_one_per_alternative_found(played: list[Any]) -> None:
    from scorers.evaluators._completeness import ELEMENTS
    from scorers.evaluators._protocols import shipped_protocols

    sets = [e.keywords for e in ELEMENTS] + [f.keywords for p in shipped_protocols() for f in p.flags]
    sets += [["short of breath", "radiat*", "can't"], ["sweat", "a&e"]]
    checked = hits = 0
    for text in _texts(played)[:400]:
        for kws in sets:
            want = _reference_keyword(text, kws)
            assert find_keyword(text, kws) == want, (text[:60], kws)
            checked += 1
            hits += want is not None
    assert checked > 10_000 and hits > 500  # both outcomes are well represented


def test_joined_turns_give_the_first_text_with_a_match_and_no_match_across_texts() -> None:
    texts = ["Any pain in your chest?", "How long has it been short", "of breath since this morning?", "Sweating?"]
    joined = Joined(texts)
    assert joined.first(["sweat"]) == (3, "sweating")
    assert joined.first(["chest", "sweat"]) == (0, "chest")
    assert joined.first(["short of breath"]) is None  # "short" ends one text, "of breath" starts the next
    assert Joined([]).first(["pain"]) is None
    for kws in (["breath"], ["how long", "since"], ["fever"]):
        loop = next(((i, h) for i, t in enumerate(texts) if (h := find_keyword(t, kws))), None)
        assert joined.first(kws) == loop


def test_drug_word_candidates_and_the_lexicon_prefilter_change_nothing(played: list[Any]) -> None:
    lex = load_drug_lexicon()
    pattern = lex._pattern()

    def unknown_before(text: str) -> list[tuple[str, int, int]]:
        out = []
        for m in _WORD.finditer(text.lower()):
            w = m.group(0)
            if len(w) < MIN_DRUG_WORD or lex.is_known_word(w):
                continue
            stem = w[:-1] if w.endswith("s") and not w.endswith("ss") else w
            if stem.endswith(DRUG_SUFFIXES) and stem not in DRUG_SUFFIXES:
                out.append((w, m.start(), m.end()))
        return out

    found = named = 0
    for text in _texts(played):
        assert unknown_drug_words(text, lex) == unknown_before(text)
        want = [(m.group(0), m.start()) for m in pattern.finditer(text)]
        assert [(d.text, d.start) for d in lex.mentions(text)] == want
        found += bool(unknown_before(text))
        named += bool(want)
    assert found >= 1 and named >= 3  # zorbifexamab, and paracetamol, ibuprofen, warfarin ...


def test_the_per_scenario_cache_is_keyed_on_the_object_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import scorers.evaluators._text as text_mod

    calls: list[str] = []

    @per_scenario
    def derive(scenario: Scenario) -> str:
        calls.append(scenario.id)
        return scenario.title

    s = load_scenario(scenario_files(library_dir())[0]).scenario
    assert derive(s) == derive(s) == s.title and calls == [s.id]  # once per object
    other = s.model_copy(update={"title": "changed"})  # an equal id, another object: computed again
    assert derive(other) == "changed" and len(calls) == 2
    monkeypatch.setattr(text_mod, "SCENARIO_CACHE_SIZE", 1)
    third = s.model_copy()
    derive(third)  # a new entry: everything older goes out
    assert len(text_mod._scenario_cache) == 1 and len(calls) == 3
    derive(s)
    assert len(calls) == 4  # s was evicted, so it is computed again


def test_evaluator_results_are_the_same_cold_and_warm(played: list[Any]) -> None:
    cold = [[e.model_dump() for e in run_evaluators(r, s)] for r, s in played]
    warm = [[e.model_dump() for e in run_evaluators(r, s)] for r, s in played]
    fresh = [[e.model_dump() for e in run_evaluators(r, s.model_copy())] for r, s in played]  # caches bypassed
    assert cold == warm == fresh
