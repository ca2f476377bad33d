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
    statements:                   # typical statements, explanations and plans that ask for nothing;
      - I'll ask about your family in a minute.   # the linter flags triggers that they would hit
    related:                      # groups of intents about one clinical matter in different words: the
      bleeding: [vaginal_bleeding, blood_in_stool, blood_in_vomit]   # patient never answers "no" to one
                                  # of a group when one of its facts is about another (sim.patient)

Matching happens in ``sim.understanding``; normalisation (lower case, stemming, ``words``) is the
same for cues, triggers and the clinician's message, so a cue is written in plain words.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

Cue = str | list[str]


class LexiconError(Exception):
    """The intent lexicon file cannot be used; the message names the file and the field."""


class Intent(BaseModel):
    """One kind of question: how to recognise it (cues) and how clinicians phrase it (phrasings)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = Field(min_length=1)
    cues: list[Cue] = Field(min_length=1)
    unless: list[Cue] = []
    phrasings: list[str] = Field(min_length=1)

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
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise LexiconError(f"{path}: cannot read the intent lexicon ({exc}). Restore the file from the "
                           "repository or fix its YAML.") from None
    try:
        return Lexicon.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise LexiconError(f"{path}: field {where}: {first['msg']}. See the format in scenarios/lexicon.py.") from None


@lru_cache(maxsize=8)
def load_lexicon(path: Path | None = None) -> Lexicon:
    """The lexicon at ``path`` (default: the bundled ``scenarios/intents.yaml``), loaded once per process."""
    return _load(path or lexicon_path())


def intent_ids() -> frozenset[str]:
    """The ids of the bundled lexicon's intents (what a fact's ``intents:`` may name)."""
    return frozenset(load_lexicon().intents)
