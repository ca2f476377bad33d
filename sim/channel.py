"""The channel: the seam between text and voice.

The harness hands every patient line to ``to_agent`` and every agent reply to ``to_patient`` and
uses whatever text comes back; it does not know whether speech was involved. ``TextChannel``
passes text through unchanged. ``audio.VoiceChannel`` (voice issue) speaks, degrades and
transcribes, returning the heard text and the audio it wrote.
"""

from __future__ import annotations

from sim.records import Delivery


class TextChannel:
    """Text in, the same text out."""

    name = "text"

    async def to_agent(self, patient_text: str, *, scenario_id: str, k: int, turn: int) -> Delivery:
        """The patient's line, unchanged."""
        return Delivery(text=patient_text)

    async def to_patient(self, agent_text: str, *, scenario_id: str, k: int, turn: int) -> Delivery:
        """The agent's reply, unchanged."""
        return Delivery(text=agent_text)
