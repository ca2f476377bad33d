"""PCM helpers shared by the audio package: the 16 kHz rate, resampling, RMS and int16 <-> float conversions.

Two sample formats cross the package's modules:

* **float**: mono samples in [-1, 1] (float32 from Piper, the effects and for Whisper; the effects work in
  float64 internally);
* **int16 PCM**: 16-bit signed native-endian samples (little-endian on every machine we run on), full scale
  32768, as the live wire format, the call recordings and WAV files carry them.

Resampling is always ``scipy.signal.resample_poly`` (polyphase, anti-aliased, with scipy's default Kaiser
window) between two integer rates; scipy is imported on first use, so importing this module costs numpy only.
Each conversion keeps the exact arithmetic of the code it replaced (see each function), so recordings, wire
audio and transcripts are bit-identical to what they were.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = [
    "RATE_16K",
    "float_to_int16",
    "int16_rms",
    "int16_samples",
    "pcm16",
    "resample",
    "resample_int16",
    "rms",
    "round_to_int16",
    "to_float32",
]

RATE_16K = 16_000
"""The one speech rate of the project: Whisper's input, the live wire format and every call recording."""

_INT16_MIN, _INT16_MAX = -32768, 32767


def resample(samples: npt.NDArray[np.floating], rate_from: int, rate_to: int) -> npt.NDArray[np.floating]:
    """Resample float samples from ``rate_from`` to ``rate_to`` Hz with ``scipy.signal.resample_poly``.

    Args:
        samples: 1-D float samples (float32 stays float32, float64 stays float64).
        rate_from: the samples' rate in Hz.
        rate_to: the rate wanted in Hz.

    Returns:
        The resampled samples, ``ceil(len * rate_to / rate_from)`` of them; ``samples`` itself (no copy) when the
        rates are equal or there are no samples.
    """
    if rate_from == rate_to or samples.size == 0:
        return samples
    from scipy.signal import resample_poly

    g = math.gcd(int(rate_from), int(rate_to))
    return np.asarray(resample_poly(samples, int(rate_to) // g, int(rate_from) // g))


def rms(samples: npt.NDArray[np.number]) -> float:
    """Root mean square of ``samples``, computed in their own dtype (float32 in, float32 arithmetic); 0.0 if empty."""
    return float(np.sqrt(np.mean(samples ** 2))) if samples.size else 0.0


def int16_samples(pcm: bytes) -> npt.NDArray[np.int16]:
    """The int16 samples of raw PCM bytes (a read-only view, no copy)."""
    return np.frombuffer(pcm, dtype=np.int16)


def int16_rms(pcm: bytes) -> float:
    """RMS of raw int16 PCM bytes in int16 units (full scale 32768), computed in float32; 0.0 if empty."""
    return rms(int16_samples(pcm).astype(np.float32))


def to_float32(samples: np.ndarray) -> npt.NDArray[np.float32]:
    """Float32 samples in [-1, 1).

    Integer PCM of any width is divided by its full scale (32768 for int16); float samples are only cast.
    """
    if np.issubdtype(samples.dtype, np.integer):
        scale = float(np.iinfo(samples.dtype).max) + 1.0
        samples = samples.astype(np.float32) / scale
    return np.asarray(samples, dtype=np.float32)


def float_to_int16(samples: npt.NDArray[np.floating]) -> npt.NDArray[np.int16]:
    """Float samples clipped to [-1, 1] and scaled by 32767, truncated toward zero (no rounding) to int16."""
    clipped: npt.NDArray[np.floating] = np.clip(samples, -1.0, 1.0)
    return (clipped * 32767).astype(np.int16)


def pcm16(samples: npt.NDArray[np.floating]) -> npt.NDArray[np.int16]:
    """Float samples in [-1, 1] as 16-bit PCM: scaled by 32768, rounded to the nearest step and clipped.

    The one quantisation of stored audio: the voice channel transcribes these very samples and writes them, so a
    WAV or FLAC file read back (``soundfile`` divides by 32768) is bit for bit what the recogniser heard.
    """
    return round_to_int16(np.asarray(samples, dtype=np.float32) * np.float32(32768.0))


def round_to_int16(samples: npt.NDArray[np.floating]) -> npt.NDArray[np.int16]:
    """Float samples already in int16 units, rounded to the nearest integer and clipped to the int16 range."""
    return np.clip(np.round(samples), _INT16_MIN, _INT16_MAX).astype(np.int16)


def resample_int16(samples: npt.NDArray[np.int16], rate_from: int, rate_to: int) -> npt.NDArray[np.int16]:
    """Resample int16 samples: float32 in int16 units through :func:`resample`, then :func:`round_to_int16`."""
    return round_to_int16(resample(samples.astype(np.float32), rate_from, rate_to))
