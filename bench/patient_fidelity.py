"""How well the simulated patient understands natural clinician questions, layer by layer.

    .venv/bin/python bench/patient_fidelity.py [--data FILE ...] [--misses] [--by-scenario] [--sample N]
        [--patient-model MODEL --patient-base-url URL [--patient-api-key-env VAR] | --patient-model local]

Data (YAML; default: bench/data/patient_dev.yaml, the set we tune on, bench/data/patient_check.yaml, written apart
and never tuned on, and bench/data/patient_heldout.yaml, written from the facts alone by a helper who read no code
and no triggers, never tuned on)::

    questions:                      # each asks for the listed facts of that library scenario
      - {scenario: acs_chest_pain, text: "Does the pressure go anywhere else?", facts: [radiation]}
    statements:                     # explanations, plans, deferrals, advice: must reveal nothing
      - {scenario: acs_chest_pain, text: "I'll ask about your family later."}

For each layer combination it prints, per file:

- recall: facts asked for that the patient revealed / facts asked for (critical: the same over critical facts);
- precision: revealed facts that were asked for / facts revealed by the questions;
- leak rate: statements that revealed any fact / statements.

``requires`` ordering is ignored (each utterance is judged on its own, as if every prerequisite were
known). The combinations are cumulative: triggers only on the whole message (the patient before
harness 1.2); + intents; + the question filter (the default patient); + the model layer when given.
Goal for the deterministic layers: recall >= 0.95, precision >= 0.97, leaks <= 1%.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scenarios import Scenario, load_library
from sim.patient.understanding import Layers, Understanding

DATA = Path(__file__).resolve().parent / "data"
DEFAULT_FILES = [DATA / "patient_dev.yaml", DATA / "patient_check.yaml", DATA / "patient_heldout.yaml"]
COMBINATIONS: list[tuple[str, Layers]] = [
    ("triggers only", Layers(triggers=True, intents=False, question_filter=False)),
    ("+ intents", Layers(triggers=True, intents=True, question_filter=False)),
    ("+ question filter", Layers(triggers=True, intents=True, question_filter=True)),
]


@dataclass
class Scores:
    asked: int = 0
    hit: int = 0
    revealed: int = 0
    statements: int = 0
    leaked: int = 0
    critical_asked: int = 0
    critical_hit: int = 0

    @property
    def recall(self) -> float:
        return self.hit / self.asked if self.asked else float("nan")

    @property
    def critical_recall(self) -> float:
        return self.critical_hit / self.critical_asked if self.critical_asked else float("nan")

    @property
    def precision(self) -> float:
        return self.hit / self.revealed if self.revealed else float("nan")

    @property
    def leak_rate(self) -> float:
        return self.leaked / self.statements if self.statements else float("nan")


def load_data(path: Path, scenarios: dict[str, Scenario]) -> dict[str, list[dict[str, Any]]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for item in [*data.get("questions", []), *data.get("statements", [])]:
        sid = item["scenario"]
        if sid not in scenarios:
            raise SystemExit(f"{path}: scenario {sid!r} is not in the library")
        for fid in item.get("facts", []):
            if fid not in {f.id for f in scenarios[sid].information_tree}:
                raise SystemExit(f"{path}: fact {fid!r} is not in scenario {sid}")
    return {"questions": data.get("questions", []), "statements": data.get("statements", [])}


def evaluate(data: dict[str, list[dict[str, Any]]], scenarios: dict[str, Scenario], layers: Layers,
             model: dict[tuple[str, str], list[str]] | None = None, misses: list[str] | None = None) -> Scores:
    """Scores of one layer combination; ``model`` adds the model layer's ids per (scenario, text)."""
    cache: dict[str, Understanding] = {}
    s = Scores()

    def found(sid: str, text: str) -> set[str]:
        u = cache.setdefault(sid, Understanding(scenarios[sid], layers=layers))
        ids = set(u.match(text))
        if model is not None:
            ids |= set(model.get((sid, text), []))
        return ids

    for q in data["questions"]:
        got, want = found(q["scenario"], q["text"]), set(q["facts"])
        critical = {f.id for f in scenarios[q["scenario"]].information_tree if f.critical} & want
        s.asked += len(want)
        s.hit += len(got & want)
        s.critical_asked += len(critical)
        s.critical_hit += len(got & critical)
        s.revealed += len(got)
        if misses is not None and got != want:
            why = cache[q["scenario"]].explain(q["text"])
            misses.append(f"  {q['scenario']}: {q['text']!r}\n      missed {sorted(want - got)} "
                          f"extra {sorted(got - want)}"
                          + "".join(f"\n        {w}" for w in why if w.split(" <- ")[0] in got - want))
    for st in data["statements"]:
        got = found(st["scenario"], st["text"])
        s.statements += 1
        s.leaked += bool(got)
        if misses is not None and got:
            why = cache[st["scenario"]].explain(st["text"])
            misses.append(f"  LEAK {st['scenario']}: {st['text']!r} -> {sorted(got)}"
                          + "".join(f"\n        {w}" for w in why))
    return s


async def model_decisions(data: dict[str, list[dict[str, Any]]], scenarios: dict[str, Scenario],
                          args: argparse.Namespace) -> dict[tuple[str, str], list[str]]:
    from sim.agents.local import LlamaServer
    from sim.judges import JudgeClient
    from sim.patient.model import PatientModel

    server = None
    if args.patient_model == "local":
        server = await LlamaServer().start()
        # one attempt and a short answer: the decision is a small JSON object, and the embedded model is slow
        client = JudgeClient(model="smollm2-135m-instruct", base_url=server.base_url, timeout_s=120.0, retries=0,
                             max_tokens=96)
    else:
        import os

        key = os.environ.get(args.patient_api_key_env) if args.patient_api_key_env else None
        client = JudgeClient(model=args.patient_model, base_url=args.patient_base_url, api_key=key)
    layer = PatientModel(client)
    out: dict[tuple[str, str], list[str]] = {}
    try:
        for item in [*data["questions"], *data["statements"]]:
            decision = await layer.decide(scenarios[item["scenario"]], item["text"])
            out[(item["scenario"], item["text"])] = decision.fact_ids
    finally:
        await client.aclose()
        if server is not None:
            server.stop()
    print(f"model layer: {layer.calls} calls, {layer.failures} without a verdict")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, action="append", help="utterance file(s) (default: dev and check sets)")
    ap.add_argument("--misses", action="store_true", help="list every miss, extra fact and leak (full layers)")
    ap.add_argument("--by-scenario", action="store_true", help="full-layer figures per scenario")
    ap.add_argument("--sample", type=int, metavar="N",
                    help="use every k-th question and statement so that about N of each are scored (for slow models)")
    ap.add_argument("--patient-model")
    ap.add_argument("--patient-base-url")
    ap.add_argument("--patient-api-key-env")
    args = ap.parse_args()
    scenarios = {s.scenario.id: s.scenario for s in load_library()}
    for path in args.data or DEFAULT_FILES:
        data = load_data(path, scenarios)
        if args.sample:
            data = {key: items[:: max(1, len(items) // args.sample)][: args.sample] for key, items in data.items()}
        n_scen = len({q["scenario"] for q in data["questions"]})
        print(f"\n{path.name}: {len(data['questions'])} questions ({sum(len(q['facts']) for q in data['questions'])} "
              f"facts asked) over {n_scen} scenarios, {len(data['statements'])} statements")
        print(f"{'layers':28} {'recall':>7} {'critical':>8} {'precision':>9} {'leak rate':>9}")
        rows = [(name, evaluate(data, scenarios, layers)) for name, layers in COMBINATIONS]
        if args.patient_model:
            decisions = asyncio.run(model_decisions(data, scenarios, args))
            rows.append(("+ model layer", evaluate(data, scenarios, COMBINATIONS[-1][1], model=decisions)))
        for name, s in rows:
            print(f"{name:28} {s.recall:7.3f} {s.critical_recall:8.3f} {s.precision:9.3f} {s.leak_rate:9.3f}   "
                  f"({s.hit}/{s.asked} asked, {s.revealed} revealed, {s.leaked}/{s.statements} statements leaked)")
        if args.by_scenario:
            for sid in sorted({q["scenario"] for q in data["questions"]}):
                sub = {k: [x for x in v if x["scenario"] == sid] for k, v in data.items()}
                s = evaluate(sub, scenarios, COMBINATIONS[-1][1])
                print(f"  {sid:32} recall {s.recall:.3f} precision {s.precision:.3f} leaks {s.leaked}/{s.statements}")
        if args.misses:
            misses: list[str] = []
            evaluate(data, scenarios, COMBINATIONS[-1][1], misses=misses)
            print("\n".join(misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
