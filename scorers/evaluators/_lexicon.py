"""The drug lexicon data: generics, aliases and brands, drug classes, and maximum daily doses.

Read from ``scorers/data/drug_lexicon.json`` (or another file in the same format: see
scorers/evaluators/README.md). The evaluators that use it (``hallucination``, and ``escalation`` to
recognise a treatment) import this data module, not one another.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from scenarios import load_model_file
from scorers.evaluators._base import EvaluatorError


class DrugMention(BaseModel):
    text: str = Field(description="as written")
    generic: str | None = Field(description="the lexicon generic; None for an unknown drug-like word")
    start: int
    end: int


class _LexiconFile(BaseModel):
    model_config = ConfigDict(extra="ignore")

    version: int = 1
    generics: list[str] = Field(min_length=1)
    aliases: dict[str, str] = {}
    drug_classes: list[str] = []
    max_daily_mg: dict[str, float] = {}
    max_daily_notes: dict[str, str] = {}
    otc_max_daily_mg: dict[str, float] = {}
    weekly_only: list[str] = []
    not_drug_words: list[str] = []


_ALNUM = re.compile(r"[a-z0-9]+")


class DrugLexicon(BaseModel):
    """The shipped drug lexicon (or another file in the same format)."""

    model_config = ConfigDict(frozen=True)

    generics: frozenset[str]
    aliases: dict[str, str]
    drug_classes: frozenset[str] = frozenset()
    max_daily_mg: dict[str, float]
    max_daily_notes: dict[str, str] = {}
    otc_max_daily_mg: dict[str, float] = {}
    weekly_only: frozenset[str] = frozenset()
    not_drug_words: frozenset[str] = frozenset()
    source: str = ""
    _regex: re.Pattern[str] | None = PrivateAttr(default=None)
    _first: frozenset[str] = PrivateAttr(default=frozenset())

    def canonical(self, name: str) -> str | None:
        """The generic for a generic, alias or brand name (any case, hyphens or spaces); else None."""
        key = re.sub(r"[\s\-]+", " ", name.strip().lower())
        for cand in (key, key.replace(" ", "-")):
            if cand in self.generics:
                return cand
            if cand in self.aliases:
                return self.aliases[cand]
        return None

    def is_known_word(self, word: str) -> bool:
        """Whether ``word`` (or its singular) is a known drug, drug class or known non-drug word."""
        w = word.lower()
        forms = {w, w[:-1]} if w.endswith("s") and not w.endswith("ss") else {w}
        return any(self.canonical(f) or f in self.drug_classes or f in self.not_drug_words for f in forms)

    def _pattern(self) -> re.Pattern[str]:
        known = (self.__pydantic_private__ or {}).get("_regex")  # a private attribute read through __getattr__ is slow
        if known is not None:
            return known  # type: ignore[no-any-return]
        if self._regex is None:
            names = sorted({*self.generics, *self.aliases}, key=len, reverse=True)
            alts = [r"[\s\-]+".join(re.escape(part) for part in re.split(r"[\s\-]+", n)) for n in names]
            self._first = frozenset(m.group(0) for n in names if (m := _ALNUM.search(n.lower())))
            self._regex = re.compile(r"(?<![\w\-])(?:" + "|".join(alts) + r")(?![\w\-])", re.IGNORECASE)
        assert self._regex is not None
        return self._regex

    def mentions(self, text: str) -> list[DrugMention]:
        """Known drugs named in ``text`` (generics, aliases, brands), in order.

        The alternation of every name is slow to run, so a text none of whose words begins a name (most
        sentences) is passed over first: a name matched at a word boundary starts with its first run of letters
        and digits, which is then a whole such run of the text too.
        """
        pattern = self._pattern()
        first: frozenset[str] = self.__pydantic_private__["_first"]  # type: ignore[index]  # faster than self._first
        if first.isdisjoint(_ALNUM.findall(text.lower())):
            return []
        return [DrugMention(text=m.group(0), generic=self.canonical(m.group(0)), start=m.start(), end=m.end())
                for m in pattern.finditer(text)]


@lru_cache(maxsize=1)
def default_lexicon_path() -> Path:
    """The shipped lexicon's path, resolved once (importlib.resources costs ~0.07 ms a call, twice per encounter)."""
    return Path(str(resources.files("scorers") / "data" / "drug_lexicon.json"))


@lru_cache(maxsize=8)
def _load_lexicon(path: str) -> DrugLexicon:
    data = load_model_file(path, _LexiconFile, what="a drug lexicon", error=EvaluatorError, syntax="json",
                           fix="See scorers/evaluators/README.md for the format, or point to another file.")
    generics = frozenset(g.lower() for g in data.generics)
    problems = [f"alias {a!r} -> {g!r}" for a, g in data.aliases.items() if g.lower() not in generics]
    problems += [f"max_daily_mg {d!r}" for d in data.max_daily_mg if d.lower() not in generics]
    problems += [f"otc_max_daily_mg {d!r}" for d in data.otc_max_daily_mg if d.lower() not in generics]
    if problems:
        raise EvaluatorError(f"drug lexicon {path} names drugs that are not in 'generics': {', '.join(problems[:5])}"
                             f"{' ...' if len(problems) > 5 else ''}; add them to 'generics' or fix the spelling.")
    return DrugLexicon(
        generics=generics, aliases={a.lower(): g.lower() for a, g in data.aliases.items()},
        drug_classes=frozenset(c.lower() for c in data.drug_classes),
        max_daily_mg={k.lower(): v for k, v in data.max_daily_mg.items()}, max_daily_notes=data.max_daily_notes,
        otc_max_daily_mg={k.lower(): v for k, v in data.otc_max_daily_mg.items()},
        weekly_only=frozenset(w.lower() for w in data.weekly_only),
        not_drug_words=frozenset(w.lower() for w in data.not_drug_words), source=path)


def load_drug_lexicon(path: str | Path | None = None) -> DrugLexicon:
    """The lexicon in ``path`` (default: the shipped ``scorers/data/drug_lexicon.json``), cached."""
    return _load_lexicon(str(Path(path) if path is not None else default_lexicon_path()))
