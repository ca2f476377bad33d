"""Stored audio: a run's recordings written as WAV, FLAC or Ogg/Opus, chosen by the file's suffix.

``sim.records.RunLayout`` names every audio file of a run with the suffix of the run's ``audio_format``
(``.wav``, ``.flac``, ``.opus``); :func:`write_audio` writes by that suffix, and every reader
(``soundfile.read``, ``audio.stt.load_audio``) takes the three alike, so old WAV runs and new ones read the same.

- **flac** (the default of new runs): lossless 16-bit, the very samples Whisper heard, about 0.4 of the WAV's
  bytes for speech and about 0.04 s of encoding per encounter.
- **opus**: Ogg/Opus at libsndfile's default bitrate, about a tenth of the WAV, fine for listening and for
  Whisper (the WER read back is measured in ``bench/audio_formats.py``), but lossy and slower to encode (about
  2 s of CPU per encounter on the 2-core machine). Opus takes 8, 12, 16, 24 or 48 kHz only: other rates (Piper's
  22.05 kHz) are resampled to the next rate up (``opus_rate``) before encoding.
- **wav**: 16-bit PCM, as runs before the format existed stored it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from audio._pcm import pcm16, resample

__all__ = ["OPUS_RATES", "opus_rate", "write_audio"]

OPUS_RATES = (8_000, 12_000, 16_000, 24_000, 48_000)
"""The sample rates an Opus stream can carry."""

_BY_SUFFIX = {".wav": ("WAV", "PCM_16"), ".flac": ("FLAC", "PCM_16"), ".opus": ("OGG", "OPUS")}


def opus_rate(rate: int) -> int:
    """The Opus rate ``rate`` is stored at: itself when Opus carries it, else the next one up (48 kHz at most)."""
    return next((r for r in OPUS_RATES if r >= rate), OPUS_RATES[-1])


def write_audio(path: Path, samples: npt.NDArray[np.generic], rate: int) -> Path:
    """Write ``samples`` (mono ``(n,)`` or ``(n, channels)``; float in [-1, 1] or int16) to ``path`` by its suffix.

    Float samples go to WAV and FLAC through ``audio._pcm.pcm16`` (libsndfile's own conversion rounds differently
    for the two), so both formats store the same 16-bit samples.

    Args:
        path: ``.wav``, ``.flac`` or ``.opus`` (``RunLayout`` names them).
        samples: The audio.
        rate: Its sample rate in Hz.

    Returns:
        ``path``.

    Raises:
        ValueError: a suffix other than the three.
    """
    import soundfile as sf

    try:
        container, subtype = _BY_SUFFIX[path.suffix.lower()]
    except KeyError:
        raise ValueError(f"{path}: audio is stored as .wav, .flac or .opus, not {path.suffix!r}") from None
    data = np.asarray(samples)
    if subtype == "PCM_16" and data.dtype != np.int16:
        data = pcm16(data)  # the project's rounding, so WAV and FLAC hold the same samples (libsndfile's differ)
    if subtype == "OPUS":
        to = opus_rate(rate)
        if to != rate:
            if data.dtype == np.int16:
                data = data.astype(np.float32) / 32768.0
            data = np.asarray(resample(data.astype(np.float32, copy=False), rate, to) if data.ndim == 1
                              else np.stack([resample(data[:, c].astype(np.float32, copy=False), rate, to)
                                             for c in range(data.shape[1])], axis=1))
            rate = to
    sf.write(str(path), data, rate, format=container, subtype=subtype)
    return path
