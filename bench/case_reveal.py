"""How much of an imported case ordinary history, examination and test questions reveal.

    .venv/bin/python bench/case_reveal.py [FILE.jsonl ...] [--format agentclinic] [--questions FILE]
        [--by-case] [--misses N] [--json]

Each source file (default: the public AgentClinic MedQA file vendored in the repository,
``tests/data/public/agentclinic/agentclinic_medqa.jsonl``) is imported into a temporary
folder with the project's importer, exactly as ``encsim import`` does. Then every message of the
question bank (default ``bench/data/ordinary_questions.yaml``: ordinary questions of a history, a
review of systems, an examination and a work-up, written for no particular case) is put to every
case's simulated patient on its own, through the same understanding the patient uses in a run
(``sim.patient.understanding``: question filter, triggers, intents; ``requires`` ignored). It prints:

- facts revealed / facts, and critical facts revealed / critical facts, pooled over cases and as the
  mean per case, with the number of cases below the goal (>= 70% of facts, >= 80% of critical ones);
- the same by fact category;
- selectivity: the mean share of a case's facts one question reveals, and the largest share any one
  question reveals (a question that reveals the whole case would make the first figures meaningless);
- with ``--misses N``: N facts no question revealed, with their answers, to see what is missing.

Exit status 0; the figures are for reading (the test tests/scenarios/test_case_reveal.py holds the goal).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scenarios import Scenario, load_scenario  # noqa: E402
from scenarios.importers import IMPORTERS  # noqa: E402
from sim.patient.understanding import Understanding  # noqa: E402

QUESTIONS = ROOT / "bench" / "data" / "ordinary_questions.yaml"
GOAL_FACTS, GOAL_CRITICAL = 0.70, 0.80


def default_source() -> Path:
    return ROOT / "tests" / "data" / "public" / "agentclinic" / "agentclinic_medqa.jsonl"


def load_questions(path: Path = QUESTIONS) -> list[str]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [q for group in data.values() for q in group]


@dataclass
class CaseReveal:
    """What the question bank revealed of one case."""

    scenario: Scenario
    revealed: set[str]
    per_question: list[int] = field(default_factory=list)

    @property
    def facts(self) -> int:
        return len(self.scenario.information_tree)

    @property
    def critical(self) -> list[str]:
        return [f.id for f in self.scenario.information_tree if f.critical]

    @property
    def fact_share(self) -> float:
        return len(self.revealed) / self.facts if self.facts else 1.0

    @property
    def critical_share(self) -> float:
        crit = self.critical
        return sum(1 for c in crit if c in self.revealed) / len(crit) if crit else 1.0


def reveal(scenario: Scenario, questions: list[str]) -> CaseReveal:
    understanding = Understanding(scenario)
    out = CaseReveal(scenario, set())
    for q in questions:
        hit = understanding.match(q)
        out.revealed.update(hit)
        out.per_question.append(len(hit))
    return out


def import_cases(sources: list[Path], fmt: str) -> tuple[list[Scenario], list[str]]:
    """Import each source with the project's importer into a temporary folder; the scenarios and the
    import's failures (as lines)."""
    scenarios: list[Scenario] = []
    failures: list[str] = []
    for src in sources:
        with tempfile.TemporaryDirectory() as tmp:
            report = IMPORTERS[fmt](src, tmp)
            failures += [f"{src.name} line {f.row}: {f.reason}" for f in report.failed]
            scenarios += [load_scenario(Path(tmp) / f"{sid}.yaml").scenario for sid in report.converted]
    return scenarios, failures


def summarise(cases: list[CaseReveal]) -> dict[str, Any]:
    facts = sum(c.facts for c in cases)
    crit = sum(len(c.critical) for c in cases)
    by_cat: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for c in cases:
        for f in c.scenario.information_tree:
            by_cat[f.category.value][1] += 1
            by_cat[f.category.value][0] += f.id in c.revealed
    shares = [n / c.facts for c in cases for n in c.per_question if c.facts]
    return {
        "cases": len(cases),
        "facts": facts,
        "facts_revealed": sum(len(c.revealed) for c in cases) / facts if facts else 0.0,
        "critical": crit,
        "critical_revealed": sum(sum(1 for i in c.critical if i in c.revealed) for c in cases) / crit if crit else 0.0,
        "mean_case_facts": sum(c.fact_share for c in cases) / len(cases) if cases else 0.0,
        "mean_case_critical": sum(c.critical_share for c in cases) / len(cases) if cases else 0.0,
        "cases_below_goal": sum(1 for c in cases if c.fact_share < GOAL_FACTS or c.critical_share < GOAL_CRITICAL),
        "by_category": {k: v[0] / v[1] for k, v in sorted(by_cat.items())},
        "mean_question_share": sum(shares) / len(shares) if shares else 0.0,
        "max_question_share": max(shares, default=0.0),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path, help="source files (default: the public AgentClinic MedQA file)")
    ap.add_argument("--format", default="agentclinic", choices=sorted(IMPORTERS))
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--by-case", action="store_true", help="one line per case")
    ap.add_argument("--misses", type=int, default=0, metavar="N", help="show N facts no question revealed")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    sources = args.files or [default_source()]
    questions = load_questions(args.questions)
    scenarios, failures = import_cases(sources, args.format)
    cases = [reveal(s, questions) for s in scenarios]
    figures = summarise(cases) | {"import_failures": failures, "questions": len(questions)}
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"{figures['cases']} cases imported ({len(failures)} rows failed), {len(questions)} questions")
    for line in failures:
        print(f"  failed: {line}")
    print(f"facts revealed:    {figures['facts_revealed']:.1%} of {figures['facts']} (mean per case "
          f"{figures['mean_case_facts']:.1%}; goal >= {GOAL_FACTS:.0%})")
    print(f"critical revealed: {figures['critical_revealed']:.1%} of {figures['critical']} (mean per case "
          f"{figures['mean_case_critical']:.1%}; goal >= {GOAL_CRITICAL:.0%})")
    print(f"cases below a goal: {figures['cases_below_goal']}")
    print("by category: " + ", ".join(f"{k} {v:.0%}" for k, v in figures["by_category"].items()))
    print(f"selectivity: one question reveals {figures['mean_question_share']:.1%} of a case on average, "
          f"at most {figures['max_question_share']:.0%}")
    if args.by_case:
        for c in sorted(cases, key=lambda c: c.fact_share):
            print(f"  {c.fact_share:5.0%} facts {c.critical_share:5.0%} critical  {c.scenario.id}")
    if args.misses:
        shown = 0
        for c in cases:
            for f in c.scenario.information_tree:
                if f.id not in c.revealed and shown < args.misses:
                    shown += 1
                    mark = "*" if f.critical else " "
                    print(f"  miss {mark} {f.category.value:12} {c.scenario.id}: {f.answer[:110]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
