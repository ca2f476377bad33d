"""The optional model layer of the patient's understanding (``--patient-model``).

A model is asked, at temperature 0 with strict JSON, whether the clinician's message asks the
patient anything and which of *this scenario's* fact ids it asks for. Only the ids are used: the
patient's answers stay the scenario's scripted text. The facts the model names join those of the
deterministic layers (``sim.patient.understanding``) and are recorded with layer ``model``.

Rules, the same as for judges (``sim.judges.JudgeClient``): strict parse, one local repair, one
repair request, retries; if nothing valid comes back there is no verdict. Then (and when the call
fails) the deterministic layers alone decide, and the turn records a warning. Ids that are not in
the scenario's tree are dropped with a warning.

Cache: ``patient_cache.jsonl`` in the run directory, one JSON object per decision::

    {"key": "<sha256 of model, scenario id and message>", "model": "...", "scenario_id": "...",
     "asks": true, "fact_ids": ["radiation"]}

Successful decisions are cached per (model, scenario, message), so a resumed or repeated run of
that directory gets the same understanding without calling the model again. Failures are not cached:
a later call may succeed. Lines are redacted as written (``sim.records.redact_json``): the ids are the
model's own words, and a model that reflects its key must not leave it in the run directory.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from scenarios.schema import Scenario
from sim.records import redact_json

INSTRUCTIONS = """\
You help a simulated patient understand a clinician. You get the patient's list of facts (id: what \
the fact is about) and one message from the clinician. Decide:
- "asks": true if the message asks the patient a question or requests information from them; false \
if it only states, explains, plans, advises, reassures, or says it will ask about something later.
- "fact_ids": the ids of the facts the message asks for (only ids from the list; [] if none or if \
"asks" is false). A broad question ("any other symptoms?") asks for no particular fact unless it \
names one.
Reply with only one JSON object: {"asks": true or false, "fact_ids": ["id", ...]}"""


class JsonAsker(Protocol):
    """What the model layer needs from a model client (``sim.judges.JudgeClient`` implements it)."""

    name: str

    async def ask_json(self, messages: list[dict[str, str]], *, keys: dict[str, type]) -> dict[str, Any] | None:
        """Ask for one JSON object with ``keys`` (of the given types); None when no valid answer came back."""
        ...


@dataclass
class ModelDecision:
    """What the model layer said about one message: ids to reveal, and any warning for the turn."""

    fact_ids: list[str] = field(default_factory=list)
    asks: bool | None = None
    cached: bool = False
    warnings: list[str] = field(default_factory=list)


def fact_list(scenario: Scenario) -> str:
    """The facts as the model sees them: id, category, and the answer (what the fact is about)."""
    return "\n".join(f"- {f.id} ({f.category.value}): {f.answer}" for f in scenario.information_tree)


def prompt(scenario: Scenario, message: str) -> list[dict[str, str]]:
    """The model layer's chat messages for one clinician message: the instructions, the facts and the message."""
    return [{"role": "system", "content": INSTRUCTIONS},
            {"role": "user", "content": f"Patient's facts:\n{fact_list(scenario)}\n\nClinician's message:\n"
                                        f"<<<\n{message}\n>>>"}]


def cache_key(model: str, scenario_id: str, message: str) -> str:
    """The cache key of one decision: the sha256 of the model, the scenario id and the message."""
    return hashlib.sha256(f"{model}\n{scenario_id}\n{message}".encode()).hexdigest()


class PatientModel:
    """The model layer for a run: one client, one cache file (or none), any number of encounters."""

    def __init__(self, client: JsonAsker, *, cache_path: Path | None = None) -> None:
        self.client = client
        self.cache_path = cache_path
        self._cache: dict[str, dict[str, Any]] = {}
        self.calls = 0
        self.failures = 0
        if cache_path is not None and cache_path.exists():
            for line in cache_path.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:  # a torn last line from a killed run
                    continue
                if isinstance(entry, dict) and isinstance(entry.get("key"), str):
                    self._cache[entry["key"]] = entry

    def _append(self, entry: dict[str, Any]) -> None:
        assert self.cache_path is not None
        with self.cache_path.open("a", encoding="utf-8") as fh:
            fh.write(redact_json(json.dumps(entry, ensure_ascii=False)) + "\n")  # ids are the model's words
            fh.flush()
            os.fsync(fh.fileno())

    async def decide(self, scenario: Scenario, message: str) -> ModelDecision:
        """The fact ids the model says ``message`` asks for (cached), or none with a warning."""
        key = cache_key(self.client.name, scenario.id, message)
        entry = self._cache.get(key)
        cached = entry is not None
        if entry is None:
            self.calls += 1
            data = await self.client.ask_json(prompt(scenario, message), keys={"asks": bool, "fact_ids": list})
            if data is None:
                self.failures += 1
                return ModelDecision(warnings=[f"patient model {self.client.name}: no valid verdict; the "
                                               "deterministic layers alone decided"])
            entry = {"key": key, "model": self.client.name, "scenario_id": scenario.id, "asks": data["asks"],
                     "fact_ids": [str(x) for x in data["fact_ids"]]}
            self._cache[key] = entry
            if self.cache_path is not None:
                await asyncio.to_thread(self._append, entry)  # fsync off the event loop
        known = {f.id for f in scenario.information_tree}
        ids = [i for i in entry["fact_ids"] if i in known] if entry["asks"] else []
        unknown = [i for i in entry["fact_ids"] if i not in known]
        warnings = [f"patient model {self.client.name}: ignored ids not in the scenario: {', '.join(unknown)}"] \
            if unknown else []
        return ModelDecision(fact_ids=ids, asks=bool(entry["asks"]), cached=cached, warnings=warnings)
