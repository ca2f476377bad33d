"""Redaction cost: what ``sim.records.redact`` costs per written line, with and without its second pass.

Every line a run writes (results.jsonl, events.jsonl, reports) goes through ``redact`` once a key is registered.
Issue 36 added a second pass (``sim.records._redact_mixed``: keys escaped a character at a time, in hex,
reversed). This prints, for lines of a run's usual sizes, the time of the first pass alone (the old path) beside
both passes (the new), best of 5 repeats, one key registered; and with no key (a run without an API key), where
``redact`` returns at once.

    .venv/bin/python bench/redaction.py
"""

from __future__ import annotations

import json
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sim.records import _redact

KEY = "sk-proj-Zq3v9XbT1mK8pL2wR7yN4cH6dF0gJ5sA"
SENTENCE = "Thanks for telling me. When did the cough start, and do you have any fever? \"Quite bad,\" she said.\n"


def _line(size: int) -> str:
    text = (SENTENCE * (size // len(SENTENCE) + 1))[:size]
    return json.dumps({"type": "turn", "speaker": "agent", "k": 0, "text": text})


def _best(text: str, number: int) -> float:
    return min(timeit.repeat(lambda: _redact.redact(text), number=number, repeat=5)) / number * 1e6


def main() -> None:
    _redact.forget_secrets()
    rows = []
    for size in (200, 1_000, 10_000, 100_000):
        line = _line(size)
        number = max(20, 200_000 // size)
        _redact.forget_secrets()
        none = _best(line, number)
        _redact.register_secret(KEY)
        both = _best(line, number)
        pattern, extend, _second = _redact._state  # type: ignore[misc]
        _redact._state = (pattern, extend, None)  # the first pass alone: the path before issue 36
        first = _best(line, number)
        rows.append((len(line), none, first, both))
    print(f"{'line chars':>10}  {'no key':>10}  {'old: first pass':>16}  {'new: both passes':>17}")
    for chars, none, first, both in rows:
        print(f"{chars:>10,}  {none:>8.1f}us  {first:>14.1f}us  {both:>15.1f}us")


if __name__ == "__main__":
    main()
