"""One encounter: the protocol, its two paths, the assessment reader, the channels and imaging items.

- ``sim.encounter.protocol``: the rules and their constants (``HARNESS_VERSION``, ``SYSTEM_PROMPT``, ``NUDGE``,
  ``SINGLE_TURN``, ``is_single_turn``).
- ``sim.encounter.state``: ``EncounterState``, the conversation as it is built, shared by both paths.
- ``sim.encounter.harness``: ``run_encounter``, an interview with the patient simulator (and the dispatch to a
  replay).
- ``sim.encounter.replay``: ``run_replay``, a fixed conversation the agent answers once.
- ``sim.encounter.assessment``: reads the agent's assessment (``parse_assessment``, ``assessment_form``, speech).
- ``sim.encounter.channel``: ``TextChannel`` and ``make_channel`` (a run's channel from its run.json).
- ``sim.encounter.imaging_item``: ``run_imaging_item``, one question about images.
- ``sim.encounter.item``: ``run_item``, one encounter of any scenario kind (what every executor runs).
"""

from __future__ import annotations

from sim.encounter.assessment import (
    assessment_form,
    from_speech,
    is_assessment,
    is_spoken_assessment,
    parse_assessment,
    parse_escalation_line,
)
from sim.encounter.channel import TextChannel, make_channel
from sim.encounter.harness import run_encounter
from sim.encounter.imaging_item import run_imaging_item
from sim.encounter.item import image_loader, run_item
from sim.encounter.protocol import (
    HARNESS_VERSION,
    MAX_TOKENS,
    NUDGE,
    SINGLE_TURN,
    SYSTEM_PROMPT,
    TEMPERATURE,
    ImageLoader,
    is_single_turn,
    read_unmarked,
)
from sim.encounter.replay import run_replay
from sim.encounter.state import EncounterState

__all__ = [
    "HARNESS_VERSION", "MAX_TOKENS", "NUDGE", "SINGLE_TURN", "SYSTEM_PROMPT", "TEMPERATURE", "EncounterState",
    "ImageLoader", "TextChannel", "assessment_form", "from_speech", "image_loader", "is_assessment",
    "is_single_turn", "is_spoken_assessment", "make_channel", "parse_assessment", "parse_escalation_line",
    "read_unmarked", "run_encounter", "run_imaging_item", "run_item", "run_replay",
]
