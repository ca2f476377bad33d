"""Scenarios: the schema of a scripted patient encounter, the bundled library, and its loader.

Also the bottom layer's shared pieces: the error root (``UserError``), ``load_model_file``, which loads a YAML or
JSON file into a pydantic model and raises a one-paragraph ``UserError`` naming the file, the field and the fix, and
the checks every file a user gives goes through (size, kind of file, encoding, nesting, NaN; ``scenarios._files``).
"""

from __future__ import annotations

from scenarios._files import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    FileProblem,
    decode_checked,
    load_model_file,
    non_finite_problem,
    parse_json_checked,
    problem_paragraph,
    read_bytes_checked,
)
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
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "Disposition",
    "Escalation",
    "Fact",
    "FileProblem",
    "LoadedScenario",
    "Scenario",
    "ScenarioError",
    "UserError",
    "adaptive_turn_limit",
    "decode_checked",
    "is_red_flag_fact",
    "library_dir",
    "load_dir",
    "load_library",
    "load_model_file",
    "load_scenario",
    "non_finite_problem",
    "parse_json_checked",
    "parse_scenario",
    "problem_paragraph",
    "read_bytes_checked",
    "resolve",
    "scenario_vocabulary",
]
