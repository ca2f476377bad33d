"""Speech for encounter-sim: Piper TTS, faster-whisper STT, channel effects, the voice channel and live calls.

The package's public face. Every name below is imported from the module that owns it on first use, so
``import audio`` costs nothing: a record type or the CLI can import it without loading numpy, scipy, Piper,
faster-whisper or pipecat. The modules:

* ``audio.tts``: ``PiperTTS`` speaks a line in a ``VoiceStyle`` (deterministic by default), offline.
* ``audio.stt``: ``transcribe`` with the bundled Whisper ``tiny.en``; ``word_error_rate``.
* ``audio.effects``: ``ChannelEffects`` (telephone band, mu-law, noise, packet loss) and their ``PRESETS``.
* ``audio.channel``: ``VoiceChannel``, the harness's channel through speech (TTS, effects, STT both ways).
* ``audio.live``: real-time calls, ``run_patient_call`` and ``run_agent_bot`` with their settings
  (``PatientCallSettings``, ``AgentCallSettings``) and ``CallHooks`` (see its docstring).
* ``audio.webpage``: the local call page for a person (``start_call_page``, ``caller_line``).
* ``audio._pcm``: the PCM helpers the modules share (``RATE_16K``, resampling, RMS, int16 <-> float).

Errors a user can cause are each module's own (``TTSError``, ``STTError``, ``EffectsError``, ``LiveError``,
``CallPagePortError``). Of the project, this package imports only ``scenarios`` and ``sim.records``.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy and ruff read the name)
if TYPE_CHECKING:
    from typing import Any

    from audio._pcm import RATE_16K
    from audio.channel import CLINICIAN_STYLE, VoiceChannel
    from audio.effects import PRESETS, ChannelEffects, EffectsError, preset
    from audio.live import (
        DEFAULT_JOIN_WINDOW_S,
        AgentCallSettings,
        CallHooks,
        CallOutcome,
        InteractionMetrics,
        LiveError,
        LiveSettings,
        OriginPolicy,
        PatientCallSettings,
        parse_allowed_origin,
        run_agent_bot,
        run_patient_call,
    )
    from audio.stt import STTError, Transcript, transcribe, transcribe_async, word_error_rate
    from audio.tts import (
        DETERMINISTIC,
        PiperTTS,
        Speech,
        SynthesisSettings,
        TTSError,
        VoiceStyle,
        style_for_persona,
        style_for_profile,
    )
    from audio.webpage import CallPagePortError, caller_line, start_call_page

_HOMES: dict[str, tuple[str, ...]] = {
    "audio._pcm": ("RATE_16K",),
    "audio.channel": ("CLINICIAN_STYLE", "VoiceChannel"),
    "audio.effects": ("PRESETS", "ChannelEffects", "EffectsError", "preset"),
    "audio.live": ("DEFAULT_JOIN_WINDOW_S", "AgentCallSettings", "CallHooks", "CallOutcome", "InteractionMetrics",
                   "LiveError", "LiveSettings", "OriginPolicy", "PatientCallSettings", "parse_allowed_origin",
                   "run_agent_bot", "run_patient_call"),
    "audio.stt": ("STTError", "Transcript", "transcribe", "transcribe_async", "word_error_rate"),
    "audio.tts": ("DETERMINISTIC", "PiperTTS", "Speech", "SynthesisSettings", "TTSError", "VoiceStyle",
                  "style_for_persona", "style_for_profile"),
    "audio.webpage": ("CallPagePortError", "caller_line", "start_call_page"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "CLINICIAN_STYLE",
    "DEFAULT_JOIN_WINDOW_S",
    "DETERMINISTIC",
    "PRESETS",
    "RATE_16K",
    "AgentCallSettings",
    "CallHooks",
    "CallOutcome",
    "CallPagePortError",
    "ChannelEffects",
    "EffectsError",
    "InteractionMetrics",
    "LiveError",
    "LiveSettings",
    "OriginPolicy",
    "PatientCallSettings",
    "PiperTTS",
    "STTError",
    "Speech",
    "SynthesisSettings",
    "TTSError",
    "Transcript",
    "VoiceChannel",
    "VoiceStyle",
    "caller_line",
    "parse_allowed_origin",
    "preset",
    "run_agent_bot",
    "run_patient_call",
    "start_call_page",
    "style_for_persona",
    "style_for_profile",
    "transcribe",
    "transcribe_async",
    "word_error_rate",
]


def __getattr__(name: str) -> Any:
    """A public name, from its module, imported now (it is not kept here: a patched module attribute shows)."""
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'audio' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
