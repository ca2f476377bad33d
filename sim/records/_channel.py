"""The channel seam's records: what one side of an encounter received, and the protocol of every channel.

``Delivery`` is what one side received; ``Channel`` is the protocol every channel implements
(``sim.encounter.channel.TextChannel``, ``audio.VoiceChannel``).

The harness hands every patient line to ``to_agent`` and every agent reply to ``to_patient`` and uses
whatever text comes back; it does not know whether speech was involved.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field


class Delivery(BaseModel):
    """What one side received. ``text`` is what it reads or heard; ``artifacts`` are files written."""

    text: str
    artifacts: dict[str, str] = Field(default={}, description="name -> path, e.g. audio files")
    warnings: list[str] = []
    metrics: dict[str, float] = Field(default={}, description="e.g. wer, tts_s, effects_s, stt_s, audio_s")


class Channel(Protocol):
    """What the harness talks through: one side's text in, what the other side received out (module docstring).

    Attributes:
        name: the channel's name (``text``, ``voice``), as run.json records it.
    """

    name: str

    async def to_agent(self, patient_text: str, *, scenario_id: str, k: int, turn: int) -> Delivery:
        """What the agent receives of the patient's line."""
        ...

    async def to_patient(self, agent_text: str, *, scenario_id: str, k: int, turn: int) -> Delivery:
        """What the patient receives of the agent's reply."""
        ...


@runtime_checkable
class RecordingChannel(Channel, Protocol):
    """A channel that records each encounter's audio (``audio.VoiceChannel``).

    The runner calls ``finish_encounter`` when an encounter's conversation has ended, before scoring,
    and adds what it returns to the encounter's artifacts (name -> path, e.g. ``recording``).
    """

    async def finish_encounter(self, scenario_id: str, k: int) -> dict[str, str]:
        """Write the encounter's recording and forget it; returns the artifacts written (name -> path)."""
        ...
