"""Scenario definitions for the encounter view: the information tree, red flags and expectations.

Loaded lazily, once per scenario id: from the path run.json recorded, else from the bundled library
by id. A scenario that cannot be found is remembered as missing (the view then falls back to what
the score card says). Also which scenarios feed the safety gate (the scorers' ``gates`` rule), for the markers.
"""

from __future__ import annotations

import re
from pathlib import Path

from scenarios import Scenario, ScenarioError, load_library, load_scenario
from scorers import gates
from sim.records import RunMeta

_SUITE_LINE = re.compile(r"^suite:\s*[\"']?([a-z_]+)[\"']?\s*(?:#.*)?$", re.MULTILINE)


class ScenarioCatalog:
    def __init__(self) -> None:
        self._paths: dict[str, str] = {}
        self._cache: dict[str, Scenario | None] = {}
        self._library: dict[str, Scenario] | None = None
        self._suites: dict[str, str | None] = {}

    def add_meta(self, meta: RunMeta | None) -> None:
        if meta is not None:
            self._paths.update({ref.id: ref.path for ref in meta.scenarios})

    def get(self, scenario_id: str) -> Scenario | None:
        if scenario_id in self._cache:
            return self._cache[scenario_id]
        found: Scenario | None = None
        path = self._paths.get(scenario_id)
        if path and Path(path).is_file():
            try:
                loaded = load_scenario(path).scenario
                found = loaded if loaded.id == scenario_id else None
            except ScenarioError:
                found = None
        if found is None:
            found = self._from_library(scenario_id)
        self._cache[scenario_id] = found
        return found

    def suite_of(self, scenario_id: str) -> str | None:
        """The scenario's suite.

        Read from its file's top-level ``suite:`` line without parsing the whole scenario, so the overview of a
        run of many scenarios stays quick.
        """
        if scenario_id in self._suites:
            return self._suites[scenario_id]
        suite: str | None = None
        cached = self._cache.get(scenario_id)
        if cached is not None:
            suite = cached.suite
        else:
            path = self._paths.get(scenario_id)
            try:
                text = Path(path).read_text(encoding="utf-8") if path else ""
            except OSError:
                text = ""
            match = _SUITE_LINE.search(text)
            if match:
                suite = match.group(1)
            else:
                scenario = self.get(scenario_id)
                suite = scenario.suite if scenario is not None else None
        self._suites[scenario_id] = suite
        return suite

    def feeds_gate(self, scenario_id: str) -> bool | None:
        """Whether the scenario feeds the safety gate (``scorers.gates``); None when it cannot be found.

        Loads the whole scenario (the imaging rule needs more than the suite), so ask only for scenarios that
        have a safety failure.
        """
        scenario = self.get(scenario_id)
        return gates(scenario) if scenario is not None else None

    def _from_library(self, scenario_id: str) -> Scenario | None:
        if self._library is None:
            try:
                self._library = {s.scenario.id: s.scenario for s in load_library()}
            except ScenarioError:
                self._library = {}
        return self._library.get(scenario_id)
