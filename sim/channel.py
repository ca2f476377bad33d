"""The channel: the seam between text and voice.

The harness hands every patient line to ``to_agent`` and every agent reply to ``to_patient`` and
uses whatever text comes back; it does not know whether speech was involved. ``TextChannel``
passes text through unchanged. ``audio.VoiceChannel`` (voice issue) speaks, degrades and
transcribes, returning the heard text and the audio it wrote. ``make_channel`` builds a run's channel
from its run.json (the CLI's local executor and the Ray executor's voice workers build it the same way).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sim.records import Channel, Delivery

if TYPE_CHECKING:
    from scenarios import LoadedScenario
    from sim.records import RunMeta


class TextChannel:
    """Text in, the same text out."""

    name = "text"

    async def to_agent(self, patient_text: str, *, scenario_id: str, k: int, turn: int) -> Delivery:
        """The patient's line, unchanged."""
        return Delivery(text=patient_text)

    async def to_patient(self, agent_text: str, *, scenario_id: str, k: int, turn: int) -> Delivery:
        """The agent's reply, unchanged."""
        return Delivery(text=agent_text)


def make_channel(meta: RunMeta, scenarios: list[LoadedScenario], audio_dir: Path) -> Channel:
    """A run's channel: ``TextChannel``, or the ``VoiceChannel`` with each scenario's preset, voice and vocabulary.

    Args:
        meta: The run's metadata (``channel``, ``voice_preset``, ``seed``).
        scenarios: The run's scenarios.
        audio_dir: Where a voice channel writes its audio (the run's ``audio/``, or a Ray worker's scratch folder).

    Returns:
        The channel.
    """
    if meta.channel != "voice":
        return TextChannel()
    from audio.channel import VoiceChannel
    from audio.effects import preset
    from audio.tts import style_for_profile
    from sim.live import scenario_vocabulary

    effects = {s.scenario.id: preset(meta.voice_preset or (s.scenario.voice.preset if s.scenario.voice else "clean"))
               for s in scenarios}
    return VoiceChannel(effects=preset("clean"), scenario_effects=effects, audio_dir=audio_dir,
                        patient_styles={s.scenario.id: style_for_profile(s.scenario.patient_profile)
                                        for s in scenarios},
                        vocabulary={s.scenario.id: scenario_vocabulary(s.scenario) for s in scenarios}, seed=meta.seed)
