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

from sim.records import Channel, Delivery, RecordingChannel, encounter_slot

if TYPE_CHECKING:
    from scenarios import LoadedScenario, Scenario
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

    In a persona sweep (``meta.personas``) the patient's voice follows each persona's fields (the scenario as
    ``scenarios.personas.with_persona`` tells it): one voice channel per persona, sharing one Piper synthesiser,
    and each encounter goes through the one of the persona its k stands for (``PersonaVoices``).

    Args:
        meta: The run's metadata (``channel``, ``voice_preset``, ``seed``, ``personas``, ``k``).
        scenarios: The run's scenarios.
        audio_dir: Where a voice channel writes its audio (the run's ``audio/``, or a Ray worker's scratch folder).

    Returns:
        The channel.
    """
    if meta.channel != "voice":
        return TextChannel()
    from audio.channel import VoiceChannel
    from audio.effects import preset
    from audio.tts import PiperTTS, style_for_profile
    from scenarios import scenario_vocabulary
    from scenarios.personas import DEFAULT_PERSONA, with_persona

    effects = {s.scenario.id: preset(meta.voice_preset or (s.scenario.voice.preset if s.scenario.voice else "clean"))
               for s in scenarios}
    vocabulary = {s.scenario.id: scenario_vocabulary(s.scenario) for s in scenarios}
    tts = PiperTTS()

    def voice(persona: str) -> VoiceChannel:
        return VoiceChannel(effects=preset("clean"), scenario_effects=effects, audio_dir=audio_dir, tts=tts,
                            patient_styles={s.scenario.id: style_for_profile(
                                with_persona(s.scenario, persona).patient_profile) for s in scenarios},
                            vocabulary=vocabulary, seed=meta.seed, audio_format=meta.audio_format)

    if list(meta.personas) == [DEFAULT_PERSONA]:
        return voice(DEFAULT_PERSONA)
    return PersonaVoices({p: voice(p) for p in dict.fromkeys([DEFAULT_PERSONA, *meta.personas])}, meta=meta,
                         scenarios={s.scenario.id: s.scenario for s in scenarios})


class PersonaVoices:
    """A persona sweep's voice channel: each encounter goes through the voice channel of its persona.

    The persona is the one encounter k of the scenario stands for (``sim.records.encounter_slot``); every channel
    writes to the same ``audio/`` layout, whose folders are per (scenario, k) and so never shared.
    """

    name = "voice"

    def __init__(self, channels: dict[str, RecordingChannel], *, meta: RunMeta,
                 scenarios: dict[str, Scenario]) -> None:
        self._channels = channels
        self._meta = meta
        self._scenarios = scenarios

    def channel_for(self, scenario_id: str, k: int) -> RecordingChannel:
        """The channel of the persona that encounter ``k`` of ``scenario_id`` stands for (default if none)."""
        from scenarios.personas import DEFAULT_PERSONA

        scenario = self._scenarios.get(scenario_id)
        slot = encounter_slot(self._meta.personas, scenario, k, self._meta.k) if scenario is not None else None
        return self._channels[slot[0] if slot is not None else DEFAULT_PERSONA]

    async def to_agent(self, patient_text: str, *, scenario_id: str, k: int, turn: int) -> Delivery:
        """The patient's line in the voice of the encounter's persona."""
        return await self.channel_for(scenario_id, k).to_agent(patient_text, scenario_id=scenario_id, k=k, turn=turn)

    async def to_patient(self, agent_text: str, *, scenario_id: str, k: int, turn: int) -> Delivery:
        """The agent's reply, through the same channel as the encounter's patient lines."""
        return await self.channel_for(scenario_id, k).to_patient(agent_text, scenario_id=scenario_id, k=k, turn=turn)

    async def finish_encounter(self, scenario_id: str, k: int) -> dict[str, str]:
        """Write the encounter's recording (its persona's channel holds it)."""
        return await self.channel_for(scenario_id, k).finish_encounter(scenario_id, k)
