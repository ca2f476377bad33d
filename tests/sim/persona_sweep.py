"""A small persona sweep through the real harness and scorers (text channel), for tests and measurements.

Not the ``encsim run --personas`` sweep (that is the runner's): this runs each scenario under each preset
with ``scenarios.personas.with_persona``, scores every encounter the way ``encsim run`` does (deterministic
path, the triage profile's evaluators and combination) and aggregates each preset with ``scorers.aggregate``.
Run it as a script to print a control x persona table::

    PYTHONPATH=$PWD python -m tests.sim.persona_sweep --k 3 [--scenarios acs_chest_pain,...]
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import replace

from scenarios import LoadedScenario, load_library
from scenarios.personas import PERSONA_PRESETS, with_persona
from scorers import aggregate, load_profile, record_for
from sim.agents.scripted import SCRIPTED
from sim.encounter import run_item
from sim.encounter.channel import TextChannel
from sim.records import ScoreCard, encounter_seed


def encounter_library() -> list[LoadedScenario]:
    """The library's encounter scenarios (no replays, no standalone imaging items)."""
    return [s for s in load_library() if s.scenario.replay is None and s.scenario.imaging is None]


async def sweep(control: str, items: list[LoadedScenario], personas: list[str], k: int = 1,
                seed: int = 0) -> dict[str, float | None]:
    """Preset name -> the aggregate of ``control`` over ``items`` (k encounters each) told by that preset."""
    profile = load_profile(None)
    out: dict[str, float | None] = {}
    for name in personas:
        cards: dict[tuple[str, int], ScoreCard] = {}
        errors: dict[tuple[str, int], str] = {}
        told = [replace(item, scenario=with_persona(item.scenario, name)) for item in items]
        for item in told:
            for i in range(k):
                agent = SCRIPTED[control]()
                result = await run_item(item, agent, TextChannel(), k=i,
                                        seed=encounter_seed(seed, item.scenario.id, i))
                rec = await record_for(result, item.scenario, evaluator_names=list(profile.evaluators),
                                       judges=None, profile=profile)
                if rec.score is not None:
                    cards[(item.scenario.id, i)] = rec.score
                else:
                    errors[(item.scenario.id, i)] = rec.error or "error"
        out[name] = aggregate([t.scenario for t in told], cards, errors).aggregate
    return out


def main() -> None:
    """Print the control x persona table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, default=1)
    ap.add_argument("--scenarios", default="")
    ap.add_argument("--controls", default="reference,natural")
    ap.add_argument("--personas", default=",".join(PERSONA_PRESETS))
    args = ap.parse_args()
    items = encounter_library()
    if args.scenarios:
        wanted = set(args.scenarios.split(","))
        items = [i for i in items if i.scenario.id in wanted]
    personas = args.personas.split(",")
    print(f"{len(items)} scenarios, k={args.k}")
    print("| control | " + " | ".join(personas) + " |")
    print("|---|" + "---|" * len(personas))
    for control in args.controls.split(","):
        scores = asyncio.run(sweep(control, items, personas, args.k))
        print(f"| scripted:{control} | " + " | ".join("-" if v is None else f"{v:.3f}" for v in scores.values())
              + " |")


if __name__ == "__main__":
    main()
