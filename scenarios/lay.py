"""The lay table: clinical words and the words a lay patient says instead (``scenarios/lay_words.yaml``).

The format (one mapping, ``words``) and the replacement rules are documented at the top of the YAML file.
``lay_words`` loads and validates it once per process; ``to_lay`` rewrites a text with it. The persona
behaviours (``sim.patient.persona``) use it for ``vocabulary: lay_table`` and ``language: limited``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, field_validator

from scenarios._files import load_model_file
from scenarios.errors import UserError

__all__ = ["LayTableError", "lay_table_path", "lay_words", "to_lay"]


class LayTableError(UserError):
    """The lay table file cannot be used; the message names the file and the field."""


class LayTable(BaseModel):
    """The whole lay table file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    words: dict[str, str]

    @field_validator("words")
    @classmethod
    def _non_blank(cls, v: dict[str, str]) -> dict[str, str]:
        for key, lay in v.items():
            if not key.strip() or not str(lay).strip():
                raise ValueError(f"entry {key!r}: a word and its lay word must both be non-blank")
        return v


def lay_table_path() -> Path:
    """The lay table shipped with the package."""
    return Path(str(resources.files("scenarios") / "lay_words.yaml"))


@lru_cache(maxsize=4)
def lay_words(path: Path | None = None) -> dict[str, str]:
    """The table at ``path`` (default: the bundled ``scenarios/lay_words.yaml``): clinical word -> lay word.

    Raises:
        LayTableError: the file cannot be read or does not have the format.
    """
    path = path or lay_table_path()
    table = load_model_file(path, LayTable, what="a lay table", error=LayTableError, syntax="yaml",
                            fix="See the format at the top of scenarios/lay_words.yaml, or restore the file from "
                                "the repository.")
    return dict(table.words)


@lru_cache(maxsize=4)
def _pattern(path: Path | None) -> tuple[re.Pattern[str], dict[str, str], frozenset[str]]:
    table = {k: v for k, v in lay_words(path).items() if k.lower() != v.lower()}
    keys = sorted(table, key=len, reverse=True)  # longest first: "abdominal pain" before "abdominal"
    alternatives = "|".join(re.escape(k) for k in keys)
    pattern = re.compile(rf"\b(?:(?P<article>[Aa]n?) )?(?P<word>{alternatives})\b", re.I)
    acronyms = frozenset(k.lower() for k in keys if k.isupper())
    return pattern, {k.lower(): v for k, v in table.items()}, acronyms


def to_lay(text: str, path: Path | None = None) -> str:
    """``text`` with every clinical word of the lay table replaced, whole words, keeping case."""
    pattern, table, acronyms = _pattern(path)

    def swap(m: re.Match[str]) -> str:
        word = m.group("word")
        lay = table[word.lower()]
        starts_sentence = m.start() == 0 or bool(re.search(r"[.!?]\s*[\"']?\s*$", text[: m.start()]))
        if word.lower() in acronyms:
            out = lay[0].upper() + lay[1:] if starts_sentence and not m.group("article") else lay
        elif word[:1].isupper():
            out = lay[0].upper() + lay[1:]
        else:
            out = lay
        article = m.group("article")
        if article:
            fixed = "an" if out[:1].lower() in "aeiou" else "a"
            article = fixed[0].upper() + fixed[1:] if article[0].isupper() else fixed
            return f"{article} {out}"
        return out

    return pattern.sub(swap, text)
