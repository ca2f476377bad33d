"""The simulated patient: answers the agent from the scenario's information tree.

What the patient understands is decided by ``sim.understanding`` (normalisation, the question
filter, the scenario's triggers, the shared intent lexicon) and, optionally, by a model
(``sim.patient_model``) whose fact ids are passed in as ``model_ids``. Then:

1. Several facts can be asked for by one message; their answers are joined in the order of the
   information tree. The answers are always the scenario's scripted text.
2. A fact whose ``requires`` fact has not been revealed (before or in the same message) stays
   hidden. A fact asked about again gets the same answer again.
3. Every newly revealed fact records the layer that revealed it (``trigger``, ``intent`` or
   ``model``; the first that fired, in that order).
4. A message that reveals nothing gets a fallback line, picked by a seeded RNG so that a given seed
   always gives the same conversation.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from scenarios.schema import Fact, Scenario
from sim.understanding import Layer, Layers, Understanding, normalise, stem

__all__ = ["PatientReply", "PatientSimulator", "normalise", "stem"]


@dataclass
class PatientReply:
    """One answer: the text, the facts it newly revealed (tree order) and the layer of each."""

    text: str
    revealed: list[str] = field(default_factory=list)
    revealed_by: dict[str, Layer] = field(default_factory=dict)


class PatientSimulator:
    """Stateful patient for one encounter. Not thread-safe; one per encounter."""

    def __init__(self, scenario: Scenario, *, seed: int = 0, layers: Layers = Layers()) -> None:
        self.scenario = scenario
        self.understanding = Understanding(scenario, layers=layers)
        self._rng = random.Random(f"{scenario.id}:{seed}")
        self._order = {f.id: i for i, f in enumerate(scenario.information_tree)}
        self.gathered_info: list[str] = []
        self.revealed_by: dict[str, Layer] = {}
        self._last_fallback: int | None = None

    @property
    def opening_line(self) -> str:
        return self.scenario.opening_line

    def asked_for(self, message: str, model_ids: Iterable[str] = ()) -> dict[str, Layer]:
        """Fact id -> layer for every fact ``message`` asks for, regardless of ``requires``."""
        found = self.understanding.match(message)
        for fid in model_ids:
            if fid in self._order:
                found.setdefault(fid, "model")
        return found

    def triggered_facts(self, message: str) -> list[Fact]:
        """Facts that ``message`` asks for (deterministic layers), regardless of ``requires``."""
        return self.understanding.facts(self.asked_for(message))

    def reveal_facts(self, message: str, model_ids: Iterable[str] = ()) -> tuple[list[Fact], list[Fact]]:
        """Apply one agent message: return (newly revealed, asked again) facts and update state."""
        asked = self.asked_for(message, model_ids)
        triggered = self.understanding.facts(asked)
        pending = [f for f in triggered if f.id not in self.gathered_info]
        repeated = [f for f in triggered if f.id in self.gathered_info]
        new: list[Fact] = []
        progress = True
        while progress:  # a prerequisite asked for in the same message unlocks its dependant
            progress = False
            for fact in list(pending):
                if fact.requires is None or fact.requires in self.gathered_info:
                    self.gathered_info.append(fact.id)
                    self.revealed_by[fact.id] = asked[fact.id]
                    new.append(fact)
                    pending.remove(fact)
                    progress = True
        new.sort(key=lambda f: self._order[f.id])
        return new, repeated

    def respond(self, message: str, model_ids: Iterable[str] = ()) -> PatientReply:
        """The patient's answer to one agent message, with what it newly revealed and how."""
        new, repeated = self.reveal_facts(message, model_ids)
        if new or repeated:
            parts = sorted([*new, *repeated], key=lambda f: self._order[f.id])
            return PatientReply(" ".join(f.answer for f in parts), [f.id for f in new],
                                {f.id: self.revealed_by[f.id] for f in new})
        return PatientReply(self._fallback())

    def reply(self, message: str) -> tuple[str, list[str]]:
        """The patient's answer and the ids of the facts it newly revealed (deterministic layers only)."""
        r = self.respond(message)
        return r.text, r.revealed

    def _fallback(self) -> str:
        lines = self.scenario.fallback_lines
        choices = [i for i in range(len(lines)) if i != self._last_fallback] or [0]
        self._last_fallback = self._rng.choice(choices)
        return lines[self._last_fallback]
