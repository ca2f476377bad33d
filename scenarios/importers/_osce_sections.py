"""Reading an AgentClinic OSCE case's nested sections: values as text, leaves, statements, placeholders.

What the history, examination and test readers share: ``_scalar`` and ``_measurement`` turn a value or a
measurement (``{"Value": 12, "Unit": "g/dL"}``) into text, ``_leaves`` flattens nested sections into
(path, text) leaves, ``_items`` splits a field into statements, ``not_provided`` recognises a placeholder that
says nothing was given, and ``_Fact`` is the record every reader returns (``_agentclinic.py`` turns the records
into the information tree).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from scenarios.importers._text import humanise, sentences, words

MAX_TRIGGERS = 10


# --- reading the nested sections ----------------------------------------------------------------

def _scalar(value: Any) -> str | None:
    if value is None or isinstance(value, dict):
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        parts = [_scalar(v) if not isinstance(v, dict) else _measurement(v) for v in value]
        text = "; ".join(p for p in parts if p)
        return text or None
    text = " ".join(str(value).split())
    return text or None


_MEASUREMENT_KEYS = {"value", "unit", "units", "reference range", "normal range", "range", "interpretation",
                     "result", "findings", "flag", "normal"}


def _measurement(d: dict[str, Any]) -> str | None:
    """``{"Value": 12, "Unit": "g/dL", "Reference_Range": "13-17"}`` -> ``12 g/dL; reference range: 13-17``."""
    if len(d) == 1:  # {"Findings": "..."}: the finding itself
        return _scalar(next(iter(d.values()))) if not isinstance(next(iter(d.values())), dict) else None
    keys = {humanise(str(k)): v for k, v in d.items()}
    head = " ".join(s for s in (_scalar(keys.pop("value", None)), _scalar(keys.pop("unit", keys.pop("units", None))))
                    if s)
    rest = [f"{k}: {s}" for k, v in keys.items() if (s := _scalar(v))]
    text = "; ".join([head, *rest] if head else rest)
    return text or None


def _leaves(value: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str]]:
    """Flatten nested sections into (path of humanised names, text) leaves, in source order."""
    if isinstance(value, dict):
        named = {humanise(str(k)): v for k, v in value.items()}
        label = next((named[k] for k in ("name", "test", "test name") if isinstance(named.get(k), str)), None)
        if label and all(k in _MEASUREMENT_KEYS | {"name", "test", "test name"} for k in named):
            rest = {k: v for k, v in value.items() if humanise(str(k)) not in ("name", "test", "test name")}
            text = _measurement(rest) if rest else None
            return [((*path, humanise(label)), text)] if text else []
        if value and all(humanise(str(k)) in _MEASUREMENT_KEYS for k in value) and path:
            text = _measurement(value)
            return [(path, text)] if text else []
        out: list[tuple[tuple[str, ...], str]] = []
        for key, sub in value.items():
            out.extend(_leaves(sub, (*path, humanise(str(key)))))
        return out
    if isinstance(value, list) and any(isinstance(v, dict) for v in value):
        out = []
        for sub in value:  # a list of sub-sections: each under the list's own name
            out.extend(_leaves(sub, path))
        return out
    text = _scalar(value)
    return [(path, text)] if text else []


def _split_name(name: str) -> tuple[str, list[str]]:
    """``electrocardiogram (ecg)`` -> (``electrocardiogram``, [``ecg``])."""
    m = re.match(r"^(.*?)\s*\((.*?)\)\s*(.*)$", name)
    if not m:
        return name, []
    base = " ".join(f"{m.group(1)} {m.group(3)}".split())
    return (base or m.group(2)), ([m.group(2)] if base and m.group(2) else [])


def _items(value: Any, *, split_sentences: bool = True) -> list[str]:
    """A field's value as a list of statements: sentences of prose, list items, ``name: value`` pairs."""
    if isinstance(value, str):
        return sentences(value) if split_sentences else ([" ".join(value.split())] if value.strip() else [])
    if isinstance(value, list):
        out: list[str] = []
        for v in value:
            out.extend(_items(v, split_sentences=False) if not isinstance(v, dict) else _items(v))
        return out
    if isinstance(value, dict):
        return [f"{path[-1].capitalize()}: {text}" if path else text for path, text in _leaves(value)]
    text = _scalar(value)
    return [text] if text else []


def _sentence_end(text: str) -> str:
    return text if text[-1:] in ".!?" else f"{text}."


# A value that says nothing was given: the field yields no fact.
_NOT_PROVIDED = re.compile(r"\b(?:not|no|none)\b.*\b(?:provided|mentioned|specified|available|given|documented|"
                           r"recorded|stated|obtained|performed|done|applicable|reported in the case|described)\b",
                           re.I)
_EMPTY_VALUES = {"", "n/a", "na", "none", "unknown", "not applicable", "-", "nil", "not provided", "not available",
                 "not mentioned", "not specified", "not reported", "not done", "not performed"}


_NOTHING_GIVEN = re.compile(r"^(?:(?:the\s+)?(?:details?|information|data|findings?|results?|specifics?)\s+"
                            r"(?:are|is|were|was)\s+)?not\s+(?:provided|given|available|specified|mentioned)\b|"
                            r"^(?:the\s+)?patient\s+(?:didn't|did not|does not|doesn't)\s+"
                            r"(?:provide|give|mention|report)\s+any\b", re.I)


def not_provided(text: str) -> bool:
    """Whether ``text`` is a placeholder that says the source has nothing to tell.

    ``Information not provided.``, ``No additional symptoms mentioned.``, ``N/A``, ``Details are not provided
    in this scenario but imagine ...``.
    """
    t = " ".join(text.split()).strip().rstrip(".").lower()
    return t in _EMPTY_VALUES or bool(_NOTHING_GIVEN.match(t)) or (len(words(t)) <= 9 and bool(_NOT_PROVIDED.search(t)))


@dataclass
class _Fact:
    prefix: str
    category: str
    answer: str
    text: str  # the source words (for ``critical`` and lay synonyms)
    triggers: list[str] = field(default_factory=list)
    intents: list[str] = field(default_factory=list)
    critical: bool = False
    origin: str = ""
