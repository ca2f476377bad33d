"""Scenarios: the schema of a scripted patient encounter, the bundled library, and its loader.

Also the bottom layer's shared pieces: the error root (``UserError``) and ``load_model_file``, which loads a YAML or
JSON file into a pydantic model and raises a one-paragraph ``UserError`` naming the file, the field and the fix.
"""

from __future__ import annotations

from scenarios._files import load_model_file
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
    "load_model_file",
    "load_scenario",
    "parse_scenario",
    "resolve",
    "scenario_vocabulary",
]
