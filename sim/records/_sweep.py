"""Persona sweeps (``encsim run --personas``): which persona and which run an encounter's k stands for.

A sweep runs each scenario K times under each persona of the plan (``RunMeta.personas``), as separate
encounters of one run. Their k numbers the scenario's encounters across the sweep, persona by persona: with
``--personas default,minimiser --k 3`` a scenario's encounters are k = 0, 1, 2 (``default``, runs 0-2) and
k = 3, 4, 5 (``minimiser``, runs 0-2). So (scenario id, k) stays the one key of an encounter everywhere (the
store, resume, events, audio folders, annotations' trace ids, the reports), and a plain run (``default`` only)
numbers its encounters exactly as before sweeps existed. Every record also names its ``persona``.

Replays and imaging items have no patient whose telling could vary: they run under ``default`` only, K times,
whatever the sweep (``persona_varies``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from scenarios.personas import DEFAULT_PERSONA
from scenarios.schema import Scenario

__all__ = ["encounter_k", "encounter_seed", "encounter_slot", "persona_varies", "planned_encounters",
           "scenario_personas"]


def encounter_seed(seed: int, scenario_id: str, k: int) -> int:
    """Stable per-encounter seed: different for every k, independent of run order and concurrency.

    In a persona sweep ``k`` is the run's index within its persona (``encounter_slot``), so run j of every persona
    of a scenario shares a seed: the personas are compared on the same draws, and a plain run's seeds are unchanged.
    """
    digest = hashlib.sha256(f"{seed}:{scenario_id}:{k}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def persona_varies(scenario: Scenario) -> bool:
    """Whether a persona changes this scenario: an encounter does; a replay or an imaging item does not."""
    return scenario.replay is None and scenario.imaging is None


def scenario_personas(personas: Sequence[str], scenario: Scenario) -> list[str]:
    """The personas ``scenario`` runs under in a sweep of ``personas``: all of them, or ``default`` alone."""
    return list(personas) if persona_varies(scenario) else [DEFAULT_PERSONA]


def encounter_k(persona_index: int, run: int, runs: int) -> int:
    """The k of run ``run`` (0-based) of a scenario's ``persona_index``-th persona, with ``runs`` (K) per persona."""
    return persona_index * runs + run


def encounter_slot(personas: Sequence[str], scenario: Scenario, k: int, runs: int) -> tuple[str, int] | None:
    """The (persona, run) that encounter ``k`` of ``scenario`` stands for; None when the plan has no such k."""
    if k < 0 or runs <= 0:
        return None
    index, run = divmod(k, runs)
    names = scenario_personas(personas, scenario)
    return (names[index], run) if index < len(names) else None


def planned_encounters(scenarios: Sequence[Scenario], personas: Sequence[str], runs: int) -> int:
    """How many encounters a sweep plans: K per (scenario, persona it runs under)."""
    return sum(len(scenario_personas(personas, s)) for s in scenarios) * runs
