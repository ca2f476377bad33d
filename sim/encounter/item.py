"""One encounter of any scenario kind: the dispatch the runner and every executor's workers share.

An imaging item goes to ``sim.encounter.imaging_item.run_imaging_item``; an encounter or a replay to
``sim.encounter.harness.run_encounter``, with the scenario's images prepared relative to its file's folder.
"""

from __future__ import annotations

from typing import Any

from scenarios import LoadedScenario
from scenarios.schema import ImageRef
from sim.agents.base import Agent
from sim.encounter.assessment import AssessmentJudge
from sim.encounter.channel import TextChannel
from sim.encounter.harness import run_encounter
from sim.encounter.imaging_item import run_imaging_item
from sim.encounter.protocol import ImageLoader
from sim.patient.model import PatientModel
from sim.records import Channel, ConversationResult, EventSink


def image_loader(item: LoadedScenario, *, allow_outside: bool = False) -> ImageLoader:
    """Prepares a scenario's images relative to its file's folder (see imaging.resolve_image_path)."""

    async def load(ref: ImageRef) -> Any:
        from imaging import prepare_image_async

        return await prepare_image_async(ref.path, base_dir=item.path.parent, allow_outside=allow_outside)

    return load


async def run_item(item: LoadedScenario, agent: Agent, channel: Channel | None = None, sink: EventSink | None = None, *,
                   k: int = 0, seed: int = 0, turn_limit: int | None = None, model_name: str | None = None,
                   allow_outside_images: bool = False, patient_model: PatientModel | None = None,
                   assessment_judge: AssessmentJudge | None = None) -> ConversationResult:
    """One encounter of any scenario: a standalone imaging item, or an encounter (images on facts included)."""
    loader = image_loader(item, allow_outside=allow_outside_images)
    if item.scenario.imaging is not None:
        return await run_imaging_item(item.scenario, agent, k=k, seed=seed, images=loader, model_name=model_name)
    return await run_encounter(item.scenario, agent, channel or TextChannel(), sink or (lambda _e: None), k=k,
                               seed=seed, turn_limit=turn_limit, model_name=model_name, images=loader,
                               patient_model=patient_model, assessment_judge=assessment_judge)
