"""How well the diagnosis matcher credits right answers and refuses wrong-but-close ones, class by class.

    .venv/bin/python bench/diagnosis_matching.py [--data FILE ...] [--misses]

Data (YAML; default bench/data/diagnosis_check.yaml, written blind to the matcher by someone who read no code,
from the library scenarios' expected diagnoses and facts alone, never tuned on)::

    answers:
      - {scenario: acs_chest_pain, answer: "Suspected acute coronary syndrome", credit: Acute coronary syndrome,
         class: qualifier}
      - {scenario: dka_teen, answer: "Starvation ketoacidosis", credit: null, class: lookalike}

An answer with a ``credit`` is right: it must match that expected diagnosis (``scorers.names_condition`` against the
name and its synonyms). An answer with ``credit: null`` is wrong: it must match none of the scenario's expected
diagnoses. Printed: right answers credited, wrong answers refused, and both per class.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scenarios import Scenario, load_library
from scorers._diagnosis import names_condition

DEFAULT_DATA = [Path(__file__).resolve().parent / "data" / "diagnosis_check.yaml"]


def judge(scenario: Scenario, answer: dict[str, Any]) -> tuple[bool, str]:
    """Whether the matcher gets ``answer`` right, and what it matched (for the misses)."""
    given = str(answer["answer"])
    hits = [d.name for d in scenario.expected.diagnoses if names_condition(given, [d.name, *d.synonyms], side=d.side)]
    credit = answer.get("credit")
    if credit is None:
        return not hits, ", ".join(hits) or "nothing"
    return credit in hits, ", ".join(hits) or "nothing"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, nargs="+", default=DEFAULT_DATA)
    ap.add_argument("--misses", action="store_true")
    args = ap.parse_args(argv)
    scenarios = {i.scenario.id: i.scenario for i in load_library()}
    for path in args.data:
        answers = yaml.safe_load(path.read_text(encoding="utf-8"))["answers"]
        per_class: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        right = [0, 0]
        wrong = [0, 0]
        misses: list[str] = []
        for a in answers:
            ok, hit = judge(scenarios[a["scenario"]], a)
            tally = right if a.get("credit") is not None else wrong
            tally[0] += ok
            tally[1] += 1
            per_class[a.get("class", "?")][0] += ok
            per_class[a.get("class", "?")][1] += 1
            if not ok:
                want = f"credit {a['credit']}" if a.get("credit") else "no credit"
                misses.append(f"[{a.get('class')}] {a['scenario']}: {a['answer']!r}: want {want}, matched {hit}")
        print(f"{path.name}: {len(answers)} answers")
        print(f"  right answers credited: {right[0]}/{right[1]} ({right[0] / max(1, right[1]):.1%})")
        print(f"  wrong answers refused:  {wrong[0]}/{wrong[1]} ({wrong[0] / max(1, wrong[1]):.1%})")
        for name, (ok, n) in sorted(per_class.items()):
            print(f"    {name:18} {ok}/{n}")
        if args.misses:
            print("  misses:")
            for line in misses:
                print(f"    {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
