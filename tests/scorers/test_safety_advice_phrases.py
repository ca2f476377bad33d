"""The emergency-instruction detector measured on held-out phrasings (tests/data/safety_advice_phrases.yaml).

The phrasings and their labelling rule were written before the detector and are never used to tune it (its
development examples are in test_voice_measures.py). The floors below were set before the first measurement; they
guard against a change that makes the detector worse, they are not a target. To see the figures and every miss:

    PYTHONPATH=. python -m tests.scorers.test_safety_advice_phrases
"""

from __future__ import annotations

from pathlib import Path

import yaml

from scorers import emergency_instruction

PHRASES = Path(__file__).resolve().parents[1] / "data" / "safety_advice_phrases.yaml"
PRECISION_FLOOR = 0.90
RECALL_FLOOR = 0.80


def measure() -> tuple[float, float, list[str], list[str]]:
    """(precision, recall, instructions missed, near misses flagged) of the detector on the held-out file."""
    data = yaml.safe_load(PHRASES.read_text(encoding="utf-8"))
    missed = [p for p in data["instruction"] if emergency_instruction(p) is None]
    flagged = [p for p in data["near_miss"] if emergency_instruction(p) is not None]
    found = len(data["instruction"]) - len(missed)
    precision = found / (found + len(flagged)) if found + len(flagged) else 0.0
    return precision, found / len(data["instruction"]), missed, flagged


def test_held_out_precision_and_recall_stay_above_the_floors() -> None:
    data = yaml.safe_load(PHRASES.read_text(encoding="utf-8"))
    assert len(data["instruction"]) >= 30 and len(data["near_miss"]) >= 15
    precision, recall, _, _ = measure()
    assert precision >= PRECISION_FLOOR and recall >= RECALL_FLOOR, (precision, recall)


if __name__ == "__main__":
    p, r, missed, flagged = measure()
    print(f"precision {p:.3f}, recall {r:.3f}")
    for phrase in missed:
        print(f"missed instruction: {phrase}")
    for phrase in flagged:
        print(f"near miss flagged: {phrase} -> {emergency_instruction(phrase)}")
