"""Scenarios: the schema of a scripted patient encounter, the bundled library, and its loader."""

from __future__ import annotations

from scenarios.errors import UserError
from scenarios.facts import is_red_flag_fact, scenario_vocabulary
from scenarios.loader import (
    LoadedScenario,
    ScenarioError,
    library_dir,
    load_dir,
    load_library,
    load_scenario,
    parse_scenario,
    resolve,
)
from scenarios.schema import (
    Disposition,
    Escalation,
    Fact,
    Scenario,
    adaptive_turn_limit,
)

__all__ = [
    "Disposition",
    "Escalation",
    "Fact",
    "LoadedScenario",
    "Scenario",
    "ScenarioError",
    "UserError",
    "adaptive_turn_limit",
    "is_red_flag_fact",
    "library_dir",
    "load_dir",
    "load_library",
    "load_scenario",
    "parse_scenario",
    "resolve",
    "scenario_vocabulary",
]
