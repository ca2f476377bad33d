"""VoiceChannel: the harness's channel seam, through speech.

What each side receives:

- **Agent side** (``to_agent``): the patient's line is spoken by Piper in the patient's persona
  voice (pitch / rate from age, sex, anxiety), passed through the channel effects (telephone band,
  mu-law, noise, packet loss, per preset), and transcribed by Whisper. The agent under test reads
  that transcript: it hears the patient the way a phone-triage system with ASR would.
- **Patient side** (``to_patient``): the agent's reply is spoken in a distinct clinician voice
  (lower pitch, slightly slower), through the same effects, and transcribed; the patient simulator
  reacts to the transcript, so a drug name or symptom the recogniser mangles really does not reveal
  its fact.

Artifacts: ``<audio_dir>/<scenario>/<k>/<turn>-patient.<fmt>`` and ``-agent.<fmt>`` hold the audio *as
heard after the effects*; ``finish_encounter`` writes ``call.<fmt>``, a stereo recording of the whole
call (patient left, agent right, turns one after another). ``<fmt>`` is the channel's ``audio_format``
(``audio._store``: lossless FLAC by default, Ogg/Opus or WAV). Per turn the channel reports the word
error rate of intended vs heard text and the seconds spent in TTS, effects and STT. All CPU work
runs in executors; models are loaded once per process (audio.tts / audio.stt caches).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from pathlib import Path

import numpy as np

from audio._pcm import RATE_16K, pcm16, resample, to_float32
from audio._store import write_audio
from audio.effects import ChannelEffects
from audio.stt import transcribe_async, word_error_rate
from audio.tts import DETERMINISTIC, PiperTTS, SynthesisSettings, VoiceStyle
from sim.records import DEFAULT_AUDIO_FORMAT, AudioFormat, Delivery, RunLayout

CLINICIAN_STYLE = VoiceStyle(pitch_semitones=-2.0, length_scale=1.05)


def _to_recording_rate(samples: np.ndarray, rate: int) -> np.ndarray:
    return resample(samples, rate, RATE_16K).astype(np.float32)


class VoiceChannel:
    """The voice channel: each side hears the other through TTS, channel effects and STT (see the module docstring).

    Args:
        effects: the channel effects for every scenario without its own.
        scenario_effects: per scenario id, effects used instead of ``effects``.
        tts: the Piper synthesiser; a new ``PiperTTS`` if None.
        audio_dir: where each turn's audio and the call recordings are written; None writes no audio.
        patient_styles: per scenario id, the patient's voice (``VoiceStyle()`` if not given).
        vocabulary: per scenario id, words the recogniser should favour (e.g. the scenario's drug names).
        settings: Piper's synthesis settings (deterministic by default).
        beam_size: Whisper's beam width.
        seed: seeds the effects, together with the scenario, k, turn and side.
        audio_format: how the audio is stored (``flac``, ``opus`` or ``wav``; see ``audio._store``).
    """

    name = "voice"

    def __init__(self, *, effects: ChannelEffects, scenario_effects: dict[str, ChannelEffects] | None = None,
                 tts: PiperTTS | None = None,
                 audio_dir: Path | None = None, patient_styles: dict[str, VoiceStyle] | None = None,
                 vocabulary: dict[str, list[str]] | None = None, settings: SynthesisSettings = DETERMINISTIC,
                 beam_size: int = 5, seed: int = 0, audio_format: AudioFormat = DEFAULT_AUDIO_FORMAT) -> None:
        self.effects = effects
        self.scenario_effects = scenario_effects or {}
        self.tts = tts or PiperTTS()
        self.audio_dir = audio_dir
        self.patient_styles = patient_styles or {}
        self.vocabulary = vocabulary or {}
        self.settings = settings
        self.beam_size = beam_size
        self.seed = seed
        self.audio_format: AudioFormat = audio_format
        self._calls: dict[tuple[str, int], list[tuple[str, np.ndarray]]] = {}

    def _seed(self, scenario_id: str, k: int, turn: int, side: str) -> int:
        digest = hashlib.sha256(f"{self.seed}:{scenario_id}:{k}:{turn}:{side}".encode()).digest()
        return int.from_bytes(digest[:4], "big")

    async def _through(self, text: str, *, side: str, style: VoiceStyle, scenario_id: str, k: int,
                       turn: int) -> Delivery:
        t0 = time.perf_counter()
        speech = await self.tts.synthesize_async(text, settings=self.settings, style=style)
        t1 = time.perf_counter()
        effects = self.scenario_effects.get(scenario_id, self.effects)
        heard_f, rate, report = await asyncio.to_thread(effects.apply, np.asarray(speech.samples),
                                                        speech.sample_rate, seed=self._seed(scenario_id, k, turn, side))
        heard = pcm16(heard_f)  # 16-bit, as a line carries it and as it is stored: a file read back is what was heard
        t2 = time.perf_counter()
        transcript = await transcribe_async(heard, sample_rate=rate, beam_size=self.beam_size,
                                            vocabulary=self.vocabulary.get(scenario_id) or None)
        t3 = time.perf_counter()
        artifacts: dict[str, str] = {}
        if self.audio_dir is not None:
            path = RunLayout.turn_audio(self.audio_dir, scenario_id, k, turn, side, audio_format=self.audio_format)
            path.parent.mkdir(parents=True, exist_ok=True)
            await asyncio.to_thread(write_audio, path, heard, rate)
            artifacts["audio"] = str(path)
        mono16 = to_float32(heard) if rate == RATE_16K else await asyncio.to_thread(_to_recording_rate,
                                                                                     to_float32(heard), rate)
        self._calls.setdefault((scenario_id, k), []).append((side, mono16))
        warnings = [w for w in [transcript.warning] if w]
        if report.clipped_fraction > 0.01 or report.limited_fraction > 0.01:
            warnings.append(f"{side} turn {turn}: {max(report.clipped_fraction, report.limited_fraction):.1%} of the "
                            "samples clipped")
        if not transcript.text.strip():
            warnings.append(f"{side} turn {turn}: the recogniser heard nothing")
        metrics = {"wer": word_error_rate(text, transcript.text), "tts_s": t1 - t0, "effects_s": t2 - t1,
                   "stt_s": t3 - t2, "audio_s": speech.seconds, "tts_cached": float(speech.cached)}
        if report.snr_db is not None:
            metrics["snr_db"] = report.snr_db
        if report.loss_rate is not None:
            metrics["loss_rate"] = report.loss_rate
        return Delivery(text=transcript.text.strip(), artifacts=artifacts, warnings=warnings, metrics=metrics)

    async def to_agent(self, patient_text: str, *, scenario_id: str, k: int, turn: int) -> Delivery:
        """Speak the patient's line in the patient's voice, degrade it and transcribe it: what the agent hears."""
        style = self.patient_styles.get(scenario_id, VoiceStyle())
        return await self._through(patient_text, side="patient", style=style, scenario_id=scenario_id, k=k, turn=turn)

    async def to_patient(self, agent_text: str, *, scenario_id: str, k: int, turn: int) -> Delivery:
        """Speak the agent's reply in the clinician voice, degrade it and transcribe it: what the patient hears."""
        return await self._through(agent_text, side="agent", style=CLINICIAN_STYLE, scenario_id=scenario_id, k=k,
                                   turn=turn)

    async def finish_encounter(self, scenario_id: str, k: int) -> dict[str, str]:
        """Write the stereo call recording (patient left, agent right) and forget the encounter."""
        parts = self._calls.pop((scenario_id, k), [])
        if self.audio_dir is None or not parts:
            return {}
        gap = np.zeros(int(0.3 * RATE_16K), dtype=np.float32)
        left, right = [], []
        for side, samples in parts:
            silent = np.zeros_like(samples)
            left += [samples if side == "patient" else silent, gap]
            right += [samples if side == "agent" else silent, gap]
        stereo = np.stack([np.concatenate(left), np.concatenate(right)], axis=1)
        path = RunLayout.encounter_call(self.audio_dir, scenario_id, k, audio_format=self.audio_format)
        path.parent.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(write_audio, path, stereo, RATE_16K)
        return {"call": str(path)}
