"""Named persona presets: the same scenario told by a harder patient (``encsim run --personas``).

A preset overlays some fields of the scenario's own ``profile.persona`` (``scenarios.schema.Persona``), or of its
``voice`` block (``scenarios.schema.VoiceBlock``: how the patient takes turns on a live call), and leaves the rest,
and the facts, as written. ``default`` is the scenario as written. What each field does to
the patient's words is ``sim.patient.persona``'s business; scenarios/README.md has a worked example per behaviour.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from scenarios.errors import UserError
from scenarios.schema import Persona, Scenario, VoiceBlock

__all__ = ["DEFAULT_PERSONA", "PERSONA_PRESETS", "RELAY_MIN_AGE", "PersonaError", "PersonaPreset", "parse_personas",
           "with_persona"]

DEFAULT_PERSONA = "default"
RELAY_MIN_AGE = 5.0
"""Years. Below this a carer cannot ask the patient anything (an infant or toddler, whose parent already speaks
for them): ``relay`` then changes neither the text (``sim.patient.persona``) nor the voice (``audio.tts``)."""


class PersonaError(UserError):
    """A persona name that is not a preset (``--personas``)."""


@dataclass(frozen=True)
class PersonaPreset:
    """A named overlay of ``Persona`` fields and ``VoiceBlock`` fields, and one line saying what it does."""

    name: str
    description: str
    fields: dict[str, Any] = field(default_factory=dict)
    voice: dict[str, Any] = field(default_factory=dict)

    def apply(self, persona: Persona) -> Persona:
        """``persona`` with this preset's fields put over it (validated like a scenario's own persona)."""
        return Persona.model_validate({**persona.model_dump(), **self.fields}) if self.fields else persona

    def apply_voice(self, voice: VoiceBlock | None) -> VoiceBlock | None:
        """The scenario's ``voice`` block with this preset's voice fields put over it (None stays None without)."""
        if not self.voice:
            return voice
        return VoiceBlock.model_validate({**(voice or VoiceBlock()).model_dump(), **self.voice})


PERSONA_PRESETS: dict[str, PersonaPreset] = {p.name: p for p in (
    PersonaPreset(DEFAULT_PERSONA, "the scenario's own persona, as written"),
    PersonaPreset("poor-recall", "critical facts come out only when asked about specifically; some answers are "
                                 "vague until asked again", {"recall": "poor"}),
    PersonaPreset("minimiser", "downplays ('it's probably nothing'); red flags only on a direct question",
                  {"speaking_style": "minimiser"}),
    PersonaPreset("catastrophiser", "alarming words around benign facts", {"speaking_style": "catastrophiser"}),
    PersonaPreset("rambling", "answers carry an irrelevant sentence", {"speaking_style": "rambling_asides"}),
    PersonaPreset("lay", "clinical words replaced from a lay table ('tummy', 'heart tracing')",
                  {"vocabulary": "lay_table"}),
    PersonaPreset("carer", "a carer relays ('she says...') and must check some facts with the patient",
                  {"relay": True}),
    PersonaPreset("limited-english", "short, simple answers; long clinical words not understood until rephrased",
                  {"language": "limited"}),
    PersonaPreset("red-flag-barge-in", "live calls: cuts in while the agent talks with its most important untold "
                                       "red flag ('Sorry, but ...'); the same words as default otherwise",
                  voice={"barge_in_red_flag": True}),
)}


def with_persona(scenario: Scenario, name: str) -> Scenario:
    """``scenario`` told by the preset ``name`` (a copy; ``default`` returns ``scenario`` itself).

    Raises:
        PersonaError: ``name`` is not a preset.
    """
    preset = PERSONA_PRESETS.get(name)
    if preset is None:
        raise PersonaError(_unknown(name))
    if not preset.fields and not preset.voice:
        return scenario
    update: dict[str, Any] = {}
    if preset.fields:
        update["patient_profile"] = scenario.patient_profile.model_copy(
            update={"persona": preset.apply(scenario.patient_profile.persona)})
    if preset.voice:
        update["voice"] = preset.apply_voice(scenario.voice)
    return scenario.model_copy(update=update)


def parse_personas(text: str | Iterable[str], *, flag: str = "--personas") -> list[str]:
    """The preset names of a comma-separated list (or an iterable), in order, without repeats.

    Raises:
        PersonaError: the list is empty or names an unknown preset (the message names ``flag``).
    """
    names = [n.strip() for n in (text.split(",") if isinstance(text, str) else text)]
    names = list(dict.fromkeys(n for n in names if n))
    if not names:
        raise PersonaError(f"{flag}: give at least one persona, comma-separated, e.g. "
                           f"{flag} default,poor-recall,minimiser. Known: {', '.join(PERSONA_PRESETS)}.")
    for n in names:
        if n not in PERSONA_PRESETS:
            raise PersonaError(f"{flag}: {_unknown(n)}")
    return names


def _unknown(name: str) -> str:
    return (f"unknown persona {name!r}. Known personas: {', '.join(PERSONA_PRESETS)} "
            "(scenarios/README.md, 'Personas', says what each does).")
