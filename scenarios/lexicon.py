"""The shared clinical intent lexicon: what kinds of question a triage interview asks, as data.

The lexicon is one YAML file, ``scenarios/intents.yaml``, shared by every scenario. Its format::

    words:                        # lay / clinical words and abbreviations -> the word(s) they mean
      tummy: abdomen              # applied to each word before stemming, on both sides of a match
      bp: blood pressure
    intents:
      radiation:                  # an intent id; a fact lists the ids it answers in ``intents:``
        description: whether the pain spreads or moves anywhere else
        cues:                     # the sentence asks for the intent when ONE cue matches:
          - spread                #   a string is a phrase: its words, contiguous, after normalisation
          - [go, anywhere]        #   a list needs all its phrases somewhere in the sentence, any order
        unless:                   # optional: cues that veto the intent in the same sentence
          - [go, hospital]
        phrasings:                # the phrasing bank: natural questions that ask for this intent.
          - Does the pain go anywhere else?   # used by the ``scripted:natural`` control and the linter
        broad: false              # optional: true for an open question ("anything else?"), which a patient
                                  # with poor recall or a minimiser does not answer with a critical fact
    statements:                   # typical statements, explanations and plans that ask for nothing;
      - I'll ask about your family in a minute.   # the linter flags triggers that they would hit
    related:                      # groups of intents about one clinical matter in different words: the
      bleeding: [vaginal_bleeding, blood_in_stool, blood_in_vomit]   # patient never answers "no" to one
                                  # of a group when one of its facts is about another (sim.patient)

Normalisation (lower case, the ``words`` table, stemming, slips of the keyboard mended) and cue matching
live here, beside the data,
so that importers can tag facts with intents without the encounter engine; ``sim.patient.understanding``
builds the patient's understanding of a message on them. Normalisation is the same for cues,
triggers and the clinician's message, so a cue is written in plain words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import snowballstemmer
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from scenarios._files import load_model_file
from scenarios.errors import UserError

Cue = str | list[str]


class LexiconError(UserError):
    """The intent lexicon file cannot be used; the message names the file and the field."""


class Intent(BaseModel):
    """One kind of question: how to recognise it (cues) and how clinicians phrase it (phrasings)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = Field(min_length=1)
    cues: list[Cue] = Field(min_length=1)
    unless: list[Cue] = []
    phrasings: list[str] = Field(min_length=1)
    broad: bool = Field(default=False, description="an open question ('anything else?', 'what brings you?', 'any "
                                                   "medicines?'): a patient with poor recall or a minimiser does not "
                                                   "give a critical fact or a red flag for it (sim.patient.persona)")

    @field_validator("cues", "unless")
    @classmethod
    def _non_blank(cls, v: list[Cue]) -> list[Cue]:
        for cue in v:
            parts = [cue] if isinstance(cue, str) else cue
            if not parts or any(not p.strip() for p in parts):
                raise ValueError("a cue is blank")
        return v


class Lexicon(BaseModel):
    """The whole lexicon file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    words: dict[str, str] = {}
    intents: dict[str, Intent] = Field(min_length=1)
    statements: list[str] = []
    related: dict[str, list[str]] = Field(default={}, description="named groups of intents that ask about the same "
                                                                  "clinical matter in different words; the patient "
                                                                  "never answers a closed-world 'no' to one of a "
                                                                  "group when a fact is about another")

    @model_validator(mode="after")
    def _groups(self) -> Lexicon:
        for name, ids in self.related.items():
            unknown = [i for i in ids if i not in self.intents]
            if unknown:
                raise ValueError(f"related.{name}: unknown intent(s) {', '.join(unknown)}")
        return self

    def related_to(self, intent: str) -> set[str]:
        """The intent and every intent that shares a ``related`` group with it."""
        out = {intent}
        for ids in self.related.values():
            if intent in ids:
                out.update(ids)
        return out

    @field_validator("intents")
    @classmethod
    def _ids(cls, v: dict[str, Intent]) -> dict[str, Intent]:
        for key in v:
            if not key.replace("_", "").isalnum() or not key.islower():
                raise ValueError(f"intent id {key!r}: use lower-case letters, digits and underscores")
        return v


def lexicon_path() -> Path:
    """The lexicon file shipped with the package."""
    return Path(str(resources.files("scenarios") / "intents.yaml"))


def _load(path: Path) -> Lexicon:
    return load_model_file(path, Lexicon, what="an intent lexicon", error=LexiconError, syntax="yaml", aliases=True,
                           fix="See the format in scenarios/lexicon.py, or restore the file from the repository.")


@lru_cache(maxsize=8)
def load_lexicon(path: Path | None = None) -> Lexicon:
    """The lexicon at ``path`` (default: the bundled ``scenarios/intents.yaml``), loaded once per process."""
    return _load(path or lexicon_path())


def broad_intents() -> frozenset[str]:
    """The ids of the bundled lexicon's open-question intents (``broad: true``)."""
    return frozenset(iid for iid, intent in load_lexicon().intents.items() if intent.broad)


def intent_ids() -> frozenset[str]:
    """The ids of the bundled lexicon's intents (what a fact's ``intents:`` may name)."""
    return frozenset(load_lexicon().intents)


# ------------------------------------------------------------------------------ normalisation

_STEMMER = snowballstemmer.stemmer("english")
_WORD = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Snowball stem, repeated until stable (lightheadedness -> lightheaded -> lighthead)."""
    for _ in range(3):
        nxt = _STEMMER.stemWord(word)
        if nxt == word:
            break
        word = nxt
    return word


@lru_cache(maxsize=1)
def _word_table() -> dict[str, list[str]]:
    """The bundled lexicon's ``words`` table, stemmed once per process."""
    table: dict[str, list[str]] = {}
    for raw, meant in load_lexicon().words.items():
        out = [stem(w) for w in _WORD.findall(meant.lower())]
        table[raw.lower()] = out
        table.setdefault(stem(raw.lower()), out)
    return table


@lru_cache(maxsize=1)
def _known() -> tuple[frozenset[str], frozenset[str]]:
    """The words and the stems of the words the bundled lexicon uses (cues, phrasings, statements, the table)."""
    lexicon = load_lexicon()
    texts = [*lexicon.words, *lexicon.words.values(), *lexicon.statements]
    for intent in lexicon.intents.values():
        texts += intent.phrasings
        for cue in [*intent.cues, *intent.unless]:
            texts += [cue] if isinstance(cue, str) else cue
    words = {w for t in texts for w in _WORD.findall(t.lower())}
    return frozenset(words), frozenset(stem(w) for w in words)


@lru_cache(maxsize=65536)
def respelt(word: str) -> str:
    """``word``, or the lexicon word it misspells by one slip of the keyboard ("headahces", "diziness").

    Only a long word the lexicon does not know, not even by its stem, is read as a slip: two letters swapped, one
    letter doubled or left out, never the first or the last; the first lexicon word so made wins.
    """
    words, stems = _known()
    if len(word) < 7 or not word.isalpha() or word in words or stem(word) in stems:
        return word
    n = len(word)
    swapped = (word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(1, n - 2))
    dropped = (word[:i] + word[i + 1:] for i in range(1, n - 1))
    added = (word[:i] + c + word[i:] for i in range(1, n) for c in "abcdefghijklmnopqrstuvwxyz")
    return next((guess for guess in (*swapped, *dropped, *added) if guess in words), word)


def normalise(text: str) -> list[str]:
    """Lower-cased, word-table-mapped, stemmed words of ``text`` (a slip of the keyboard mended: ``respelt``)."""
    table = _word_table()
    text = text.lower().replace("\u2019", "'")
    text = re.sub(r"(\w)'(s|re|ve|ll|d|m|t)\b", r"\1 \2", text)  # contractions split, not glued
    out: list[str] = []
    for word in _WORD.findall(text):
        mapped = table.get(word)
        if mapped is None:
            s = stem(word)
            mapped = table.get(s)
        if mapped is None:
            word = respelt(word)
            mapped = table.get(word) or [stem(word)]
        out.extend(mapped)
    return out


@lru_cache(maxsize=131072)
def padded(text: str) -> str:
    """`` word word ... `` so that a whole-word sequence test is one substring test."""
    words = normalise(text)
    return f" {' '.join(words)} " if words else ""


# ------------------------------------------------------------------------------ cue matching

@dataclass(frozen=True)
class _CompiledCue:
    phrases: tuple[str, ...]

    def hit(self, text: str) -> bool:
        return all(p in text for p in self.phrases)


def _compile(cue: Cue) -> _CompiledCue | None:
    parts = [cue] if isinstance(cue, str) else cue
    phrases = tuple(padded(p) for p in parts)
    return _CompiledCue(phrases) if all(phrases) else None


@lru_cache(maxsize=1)
def compiled_intents() -> dict[str, tuple[tuple[_CompiledCue, ...], tuple[_CompiledCue, ...]]]:
    """Each intent's (cues, vetoes), compiled once per process."""
    out = {}
    for iid, intent in load_lexicon().intents.items():
        cues = tuple(c for c in (_compile(x) for x in intent.cues) if c is not None)
        vetoes = tuple(c for c in (_compile(x) for x in intent.unless) if c is not None)
        out[iid] = (cues, vetoes)
    return out


def vetoed_intents(text: str) -> set[str]:
    """The intents whose ``unless`` cues occur in one sentence."""
    return set(_matches(padded(text))[1])


def intents_in(text: str) -> set[str]:
    """The intents one (asking) sentence matches."""
    return set(_matches(padded(text))[0])


@lru_cache(maxsize=65536)
def _matches(p: str) -> tuple[frozenset[str], frozenset[str]]:
    """(matched, vetoed) intents of a padded sentence."""
    found, vetoed = set(), set()
    for iid, (cues, vetoes) in compiled_intents().items():
        if any(v.hit(p) for v in vetoes):
            vetoed.add(iid)
        elif any(c.hit(p) for c in cues):
            found.add(iid)
    return frozenset(found), frozenset(vetoed)
