"""The default executor: each encounter runs in this process, on the run's event loop.

The agent is wrapped per encounter so that every call's outcome reaches ``observe`` (the fail-fast check) as it
happens; a channel that records audio (``sim.records.RecordingChannel``) finishes the encounter's recording
before the result is returned, so its artifacts are already in the run directory's layout.
"""

from __future__ import annotations

from dataclasses import dataclass

from scenarios import LoadedScenario
from sim.agents.base import Agent
from sim.encounter.assessment import AssessmentJudge
from sim.encounter.item import run_item
from sim.fail_fast import CallObserver, WatchedAgent
from sim.patient.model import PatientModel
from sim.records import Channel, ConversationResult, EventSink, RecordingChannel, RunMeta


@dataclass(frozen=True)
class LocalEncounters:
    """``EncounterRunner`` in this process: the run's agent, channel, meta, patient model and assessment judge.

    ``assessment_judge``: the judge fallback of the assessment reader (``--judge``).
    """

    agent: Agent
    channel: Channel
    meta: RunMeta
    patient_model: PatientModel | None = None
    assessment_judge: AssessmentJudge | None = None

    async def run(self, item: LoadedScenario, k: int, *, seed: int, sink: EventSink,
                  observe: CallObserver) -> ConversationResult:
        """One encounter (``sim.executors.base.EncounterRunner``)."""
        meta = self.meta
        result = await run_item(item, WatchedAgent(self.agent, observe), self.channel, sink, k=k, seed=seed,
                                turn_limit=meta.turn_limit, model_name=meta.model,
                                allow_outside_images=meta.allow_outside_images, patient_model=self.patient_model,
                                assessment_judge=self.assessment_judge)
        if isinstance(self.channel, RecordingChannel):
            result.artifacts.update(await self.channel.finish_encounter(item.scenario.id, k))
        return result
