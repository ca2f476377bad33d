"""The seam every executor implements: ``EncounterRunner`` runs one encounter and returns its result.

The runner (``sim.runner.run_batch``) plans, seeds, scores and records; an executor only runs an encounter
somewhere: in this process (``sim.executors.local.LocalEncounters``), in local worker processes
(``sim.executors.process.ProcessEncounters``) or on Ray (``sim.executors.ray.RayEncounters``).
"""

from __future__ import annotations

from typing import Protocol

from scenarios import LoadedScenario
from sim.fail_fast import CallObserver
from sim.records import ConversationResult, EventSink


class EncounterLost(Exception):
    """An encounter ended without a result; recorded as an error whose message is ``str(self)`` as is."""


class EncounterRunner(Protocol):
    """Runs one encounter, here or somewhere else (module docstring).

    ``run`` returns the encounter's result with its artifacts already in the run directory's layout, after
    passing every event of the encounter to ``sink`` and every agent call's outcome to ``observe``, in order.
    It raises ``EncounterLost`` when the encounter has no result (e.g. its worker died twice).
    """

    async def run(self, item: LoadedScenario, k: int, *, seed: int, sink: EventSink,
                  observe: CallObserver) -> ConversationResult:
        """One encounter (see the class)."""
        ...
