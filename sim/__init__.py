"""The encounter engine: patient simulator, harness, agents, channels, runner, run store, CLI.

Importing ``sim`` loads nothing else: the shared types live in the leaf ``sim.records`` (which ``scorers``,
``audio``, ``imaging`` and ``tui`` import), and the engine's parts are imported from their own modules
(``sim.encounter.harness``, ``sim.runner``, ...). The names below are kept for ``from sim import X`` and are loaded
on first use only.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_LAZY = {
    "HARNESS_VERSION": "sim.encounter.protocol", "SYSTEM_PROMPT": "sim.encounter.protocol",
    "run_encounter": "sim.encounter.harness",
    "PatientSimulator": "sim.patient", "TextChannel": "sim.encounter.channel",
    "Channel": "sim.records", "ConversationResult": "sim.records", "Delivery": "sim.records",
    "ParsedAssessment": "sim.records", "Turn": "sim.records",
}

__all__ = [
    "HARNESS_VERSION", "SYSTEM_PROMPT", "Channel", "ConversationResult", "Delivery", "ParsedAssessment",
    "PatientSimulator", "TextChannel", "Turn", "run_encounter",
]

if TYPE_CHECKING:
    from sim.encounter import HARNESS_VERSION, SYSTEM_PROMPT, run_encounter
    from sim.encounter.channel import TextChannel
    from sim.patient import PatientSimulator
    from sim.records import Channel, ConversationResult, Delivery, ParsedAssessment, Turn


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sim' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
