"""Channel effects: what happens to a voice between the patient's mouth and the agent's ear.

One :class:`ChannelEffects` config (pydantic, keyword-only, every stage optional) turns clean mono
float audio into what a phone line would deliver, and returns an :class:`EffectsReport` of what it
measurably did. Everything random is drawn from ``numpy.random.default_rng(seed)`` (one child
generator per stage, so switching one stage on or off never changes another stage's draws): the same
seed gives the same samples, bit for bit.

Samples are mono ``float32`` in ``[-1, 1]`` at any sample rate. The stages run in this order, which
follows the physical path of a call:

1. **Noise** (:class:`NoiseConfig`), the room around the talker. Noise of the same length is scaled so
   that ``10*log10(mean(signal**2) / mean(noise**2)) == snr_db`` and added. Kinds:

   - ``white``: Gaussian, flat spectrum.
   - ``pink``: Gaussian white noise shaped in the frequency domain by ``1/sqrt(f)`` in amplitude, so
     the power spectral density falls as ``1/f`` (about -3.01 dB per octave); DC is removed.
   - ``babble``: several talkers at once. No TTS voice is available to this module, so when the
     caller passes a ``babble_speech`` array (same sample rate as the input), each talker is a copy
     of it, circularly shifted to a random start, sped up or slowed down by a random factor in
     0.85-1.15 (this shifts pitch and formants together, via ``resample_poly``), tiled to length,
     and given a random gain of +/-3 dB. Without one, each talker is a *synthetic speech-like
     signal*: a sawtooth glottal source (f0 90-260 Hz, drifting slowly, with vibrato), cut into
     syllables of 120-320 ms with a raised-cosine envelope (amplitude modulation at the syllable
     rate of about 4 Hz, with pauses), each syllable filtered through three formant band-passes
     (F1/F2/F3 of a randomly chosen vowel). The talkers are summed.

   An all-zero input has no power to measure an SNR against: noise is then added at ``snr_db``
   below a -20 dBFS reference and the reported ``snr_db`` is ``None``.

2. **Gain** (``gain_db``): multiply by ``10**(gain_db/20)``, the microphone or line level.

3. **Clipping** (``clip_level``): hard clip at ``+/-clip_level`` (0 < level <= 1), an overloaded ADC.
   The report's ``clipped_fraction`` is the fraction of samples whose magnitude exceeded the level.

4. **Telephone** (:class:`TelephoneConfig`), a narrow-band G.711 call:

   - resample to 8 kHz with ``scipy.signal.resample_poly`` (polyphase, anti-aliased);
   - 300-3400 Hz Butterworth band-pass (second-order sections; ``sosfiltfilt`` zero-phase by
     default, which doubles the effective order, or causal ``sosfilt``);
   - G.711-style mu-law (mu = 255) companding: each sample is compressed with
     ``sign(x) * ln(1 + mu|x|) / ln(1 + mu)`` and quantised to one 8-bit code (1 sign bit and
     7 magnitude bits, 256 codes; this is the continuous mu-law curve, not G.711's 8-segment
     piecewise-linear approximation of it, and the bits are not inverted as on the wire), then
     expanded back with the inverse curve. See :func:`mulaw_encode` and :func:`mulaw_decode`;
   - packet loss (below) happens here, on the 8 kHz stream, as it would on the network;
   - back to the original rate with ``resample_poly`` if ``resample_back`` (the default; the length
     is then exactly the input length), else the output stays at 8 kHz.

5. **Packet loss** (:class:`PacketLossConfig`), a Gilbert-Elliott two-state channel over 20 ms packets
   (the last, shorter packet counts as one). The state moves good -> bad with probability ``p`` and
   bad -> good with probability ``r`` per packet, starting from the stationary distribution; a
   packet is lost with probability ``loss_good`` in the good state and ``loss_bad`` in the bad
   state. The stationary loss rate is ``(r * loss_good + p * loss_bad) / (p + r)`` (see
   :meth:`PacketLossConfig.expected_loss_rate`); a small ``r`` makes losses come in bursts of mean
   length about ``1 / r`` packets. Lost packets are zeroed (``conceal="zero"``) or replaced by the
   previous output packet (``conceal="repeat"``, simple packet-loss concealment).

Finally the result is limited to ``[-1, 1]`` (the report's ``limited_fraction`` counts samples this
changed) and returned as ``float32``; non-finite input is refused with :class:`EffectsError`.

Presets (:data:`PRESETS`, :func:`preset`): ``clean`` (no stage), ``phone`` (telephone only),
``noisy-phone`` (babble at 10 dB SNR, then telephone), ``bad-line`` (white noise at 15 dB, +6 dB gain
clipped at 0.8, telephone, bursty Gilbert-Elliott loss of about 12% with repeat concealment).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator
from scipy import signal

from audio._pcm import resample, rms
from sim.records import EncSimError

__all__ = [
    "PRESETS",
    "ChannelEffects",
    "EffectsError",
    "EffectsReport",
    "NoiseConfig",
    "PacketLossConfig",
    "TelephoneConfig",
    "UnknownPresetError",
    "babble_noise",
    "gilbert_elliott_losses",
    "make_noise",
    "mulaw_decode",
    "mulaw_encode",
    "pink_noise",
    "preset",
    "telephone_band",
]

MU = 255
PACKET_SECONDS = 0.020
_SILENT_REFERENCE_POWER = 10 ** (-20 / 10)  # -20 dBFS, for noise on an all-zero input


class EffectsError(EncSimError, ValueError):
    """Audio or an effects setting that cannot be used; the message says what and how to fix it."""


class UnknownPresetError(EffectsError, KeyError):
    """A preset name that is not in :data:`PRESETS`."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


# --------------------------------------------------------------------------------------------- config


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NoiseConfig(_Config):
    """Additive noise at a signal-to-noise ratio, in dB, measured on the whole signal."""

    kind: Literal["white", "pink", "babble"] = "white"
    snr_db: float = 20.0
    talkers: int = Field(default=6, ge=1, le=32, description="babble only: voices summed")


class TelephoneConfig(_Config):
    """A narrow-band G.711 call: 8 kHz, 300-3400 Hz, mu-law."""

    rate: int = Field(default=8000, gt=0)
    low_hz: float = Field(default=300.0, gt=0)
    high_hz: float = Field(default=3400.0, gt=0)
    order: int = Field(default=4, ge=1, le=12, description="Butterworth order of the band-pass prototype")
    zero_phase: bool = True
    mu_law: bool = True
    resample_back: bool = True

    @model_validator(mode="after")
    def _band_fits(self) -> TelephoneConfig:
        if not self.low_hz < self.high_hz < self.rate / 2:
            raise ValueError(
                f"telephone band {self.low_hz}-{self.high_hz} Hz must satisfy low < high < rate/2 ({self.rate / 2})"
            )
        return self


class PacketLossConfig(_Config):
    """Gilbert-Elliott packet loss over fixed-length packets."""

    p: float = Field(default=0.02, ge=0, le=1, description="per-packet probability good -> bad")
    r: float = Field(default=0.25, ge=0, le=1, description="per-packet probability bad -> good")
    loss_good: float = Field(default=0.0, ge=0, le=1)
    loss_bad: float = Field(default=1.0, ge=0, le=1)
    packet_ms: float = Field(default=PACKET_SECONDS * 1000, gt=0)
    conceal: Literal["zero", "repeat"] = "zero"

    @model_validator(mode="after")
    def _chain_moves(self) -> PacketLossConfig:
        if self.p + self.r == 0:
            raise ValueError("packet loss p and r cannot both be 0 (the channel would never change state)")
        return self

    def expected_loss_rate(self) -> float:
        """The stationary loss rate: P(bad) * loss_bad + P(good) * loss_good."""
        bad = self.p / (self.p + self.r)
        return bad * self.loss_bad + (1 - bad) * self.loss_good


class EffectsReport(_Config):
    """What :meth:`ChannelEffects.apply` measurably did."""

    stages: list[str] = Field(default_factory=list, description="stages applied, in order")
    input_rate: int
    output_rate: int
    snr_db: float | None = Field(default=None, description="measured at the noise stage; None if none added")
    loss_rate: float | None = Field(default=None, description="lost packets / packets; None without loss stage")
    lost_packets: int = 0
    total_packets: int = 0
    clipped_fraction: float = Field(default=0.0, description="fraction of samples the clip stage cut")
    limited_fraction: float = Field(default=0.0, description="fraction the final [-1, 1] limit changed")


class ChannelEffects(_Config):
    """A chain of optional channel stages; ``ChannelEffects()`` is a clean channel.

    Example:
        >>> effects = ChannelEffects(noise=NoiseConfig(kind="pink", snr_db=15), telephone=TelephoneConfig())
        >>> out, rate, report = effects.apply(samples, 22050, seed=7)  # doctest: +SKIP
    """

    noise: NoiseConfig | None = None
    gain_db: float | None = None
    clip_level: float | None = Field(default=None, gt=0, le=1)
    telephone: TelephoneConfig | None = None
    packet_loss: PacketLossConfig | None = None

    def apply(
        self,
        samples: np.ndarray,
        sample_rate: int,
        *,
        seed: int,
        babble_speech: np.ndarray | None = None,
    ) -> tuple[np.ndarray, int, EffectsReport]:
        """Run the chain on mono audio.

        Args:
            samples: mono float audio, nominally in ``[-1, 1]``.
            sample_rate: its rate in Hz.
            seed: seeds every random draw; same seed, same output.
            babble_speech: optional mono speech at ``sample_rate`` to build babble from.

        Returns:
            ``(float32 samples in [-1, 1], output rate, report)``.

        Raises:
            EffectsError: the audio is not 1-D, not finite, or the rate is not a positive integer.
        """
        x = _as_mono(samples, "samples")
        if not isinstance(sample_rate, (int, np.integer)) or isinstance(sample_rate, bool) or sample_rate <= 0:
            raise EffectsError(f"sample_rate must be a positive integer in Hz, got {sample_rate!r}")
        sample_rate = int(sample_rate)
        noise_rng, loss_rng = np.random.default_rng(seed).spawn(2)
        stages: list[str] = []
        found: dict[str, float | int | None] = {}
        n_in = x.size
        rate = sample_rate

        if self.noise is not None:
            speech = None if babble_speech is None else _as_mono(babble_speech, "babble_speech")
            noise = make_noise(self.noise.kind, x.size, rate, noise_rng, talkers=self.noise.talkers, speech=speech)
            x, found["snr_db"] = _add_at_snr(x, noise, self.noise.snr_db)
            stages.append(f"noise:{self.noise.kind}")
        if self.gain_db is not None:
            x = x * 10 ** (self.gain_db / 20)
            stages.append("gain")
        if self.clip_level is not None:
            found["clipped_fraction"] = float(np.mean(np.abs(x) > self.clip_level)) if x.size else 0.0
            x = np.clip(x, -self.clip_level, self.clip_level)
            stages.append("clip")
        if self.telephone is not None:
            x = _resample(x, rate, self.telephone.rate)
            rate = self.telephone.rate
            stages.append(f"resample:{rate}")
            x = telephone_band(
                x, rate, low_hz=self.telephone.low_hz, high_hz=self.telephone.high_hz,
                order=self.telephone.order, zero_phase=self.telephone.zero_phase,
            )
            stages.append("bandpass")
            if self.telephone.mu_law:
                x = mulaw_decode(mulaw_encode(x))
                stages.append("mulaw")
        if self.packet_loss is not None:
            x, lost = _drop_packets(x, rate, self.packet_loss, loss_rng)
            found["lost_packets"], found["total_packets"] = int(lost.sum()), int(lost.size)
            found["loss_rate"] = float(lost.mean()) if lost.size else 0.0
            stages.append(f"packet_loss:{self.packet_loss.conceal}")
        if self.telephone is not None and self.telephone.resample_back and rate != sample_rate:
            x = _resample(x, rate, sample_rate, length=n_in)
            rate = sample_rate
            stages.append("resample_back")

        limited = np.abs(x) > 1.0
        found["limited_fraction"] = float(limited.mean()) if x.size else 0.0
        out = np.clip(x, -1.0, 1.0).astype(np.float32)
        report = EffectsReport(stages=stages, input_rate=sample_rate, output_rate=rate, **found)  # type: ignore[arg-type]
        return out, rate, report


# ---------------------------------------------------------------------------------------------- stages


def mulaw_encode(x: np.ndarray, mu: int = MU) -> np.ndarray:
    """Compress ``x`` (clipped to [-1, 1]) to 8-bit mu-law codes: bit 7 is the sign, bits 0-6 magnitude."""
    x = np.clip(np.asarray(x, dtype=np.float64), -1.0, 1.0)
    magnitude = np.log1p(mu * np.abs(x)) / np.log1p(mu)
    code = np.rint(magnitude * 127).astype(np.uint8)
    sign: np.ndarray = np.where(x < 0, 0x80, 0).astype(np.uint8)
    encoded: np.ndarray = code | sign
    return encoded


def mulaw_decode(code: np.ndarray, mu: int = MU) -> np.ndarray:
    """Expand 8-bit codes from :func:`mulaw_encode` back to floats in [-1, 1]."""
    code = np.asarray(code, dtype=np.uint8)
    magnitude = (code & 0x7F).astype(np.float64) / 127
    value = np.expm1(magnitude * np.log1p(mu)) / mu
    decoded: np.ndarray = np.where(code & 0x80, -value, value)
    return decoded


def telephone_band(
    x: np.ndarray,
    rate: int,
    *,
    low_hz: float = 300.0,
    high_hz: float = 3400.0,
    order: int = 4,
    zero_phase: bool = True,
) -> np.ndarray:
    """Butterworth band-pass ``low_hz``-``high_hz`` at ``rate`` (second-order sections)."""
    if x.size == 0:
        return x
    sos = signal.butter(order, [low_hz, high_hz], btype="bandpass", fs=rate, output="sos")
    if zero_phase:
        # sosfiltfilt needs the signal longer than its padding; short clips fall back to causal.
        padlen = 3 * (2 * len(sos) + 1)
        if x.size > padlen:
            both: np.ndarray = signal.sosfiltfilt(sos, x)
            return both
    causal: np.ndarray = signal.sosfilt(sos, x)
    return causal


def pink_noise(n: int, rng: np.random.Generator) -> np.ndarray:
    """Gaussian noise with a 1/f power spectrum (-3 dB/octave), zero mean, unit RMS."""
    if n < 2:
        return np.zeros(n)
    spectrum = np.fft.rfft(rng.standard_normal(n))
    k = np.arange(spectrum.size, dtype=np.float64)
    k[0] = np.inf  # no DC
    noise = np.fft.irfft(spectrum / np.sqrt(k), n=n)
    return _unit_rms(noise)


def babble_noise(
    n: int,
    rate: int,
    rng: np.random.Generator,
    *,
    talkers: int = 6,
    speech: np.ndarray | None = None,
) -> np.ndarray:
    """Several overlapping talkers, unit RMS.

    Shifted, re-pitched copies of ``speech`` if given, else synthetic speech-like signals (see the module docstring).
    """
    total = np.zeros(n)
    for _ in range(talkers):
        if speech is not None and speech.size and np.any(speech):
            voice = _shifted_copy(speech, n, rng)
        else:
            voice = _synthetic_talker(n, rate, rng)
        total += _unit_rms(voice) * 10 ** (rng.uniform(-3, 3) / 20)
    return _unit_rms(total)


def make_noise(
    kind: str,
    n: int,
    rate: int,
    rng: np.random.Generator,
    *,
    talkers: int = 6,
    speech: np.ndarray | None = None,
) -> np.ndarray:
    """Unit-RMS noise of ``kind`` ("white", "pink" or "babble"), ``n`` samples long."""
    if kind == "white":
        return _unit_rms(rng.standard_normal(n))
    if kind == "pink":
        return pink_noise(n, rng)
    if kind == "babble":
        return babble_noise(n, rate, rng, talkers=talkers, speech=speech)
    raise EffectsError(f"unknown noise kind {kind!r}; choose one of: white, pink, babble")


def gilbert_elliott_losses(n_packets: int, config: PacketLossConfig, rng: np.random.Generator) -> np.ndarray:
    """One boolean per packet, True where the packet is lost."""
    lost = np.zeros(n_packets, dtype=bool)
    if n_packets == 0:
        return lost
    stay = rng.random(n_packets)
    drop = rng.random(n_packets)
    bad = bool(rng.random() < config.p / (config.p + config.r))  # stationary start
    for i in range(n_packets):
        lost[i] = drop[i] < (config.loss_bad if bad else config.loss_good)
        bad = (stay[i] >= config.r) if bad else (stay[i] < config.p)
    return lost


# ------------------------------------------------------------------------------------------- internals


def _as_mono(samples: np.ndarray, name: str) -> np.ndarray:
    x = np.asarray(samples)
    if x.ndim == 2 and 1 in x.shape:
        x = x.reshape(-1)
    if x.ndim != 1:
        raise EffectsError(f"{name} must be mono (1-D), got an array of shape {x.shape}; mix down first")
    if not np.issubdtype(x.dtype, np.floating) and not np.issubdtype(x.dtype, np.integer):
        raise EffectsError(f"{name} must be numeric audio, got dtype {x.dtype}")
    x = x.astype(np.float64)
    if not np.all(np.isfinite(x)):
        raise EffectsError(f"{name} contains NaN or infinite samples; fix the source audio")
    return x


def _unit_rms(x: np.ndarray) -> np.ndarray:
    level = rms(x)
    return x / level if level > 0 else x


def _add_at_snr(x: np.ndarray, noise: np.ndarray, snr_db: float) -> tuple[np.ndarray, float | None]:
    power = float(np.mean(x**2)) if x.size else 0.0
    reference = power if power > 0 else _SILENT_REFERENCE_POWER
    scaled = noise * np.sqrt(reference / 10 ** (snr_db / 10))  # noise has unit power
    noisy = x + scaled
    added = float(np.mean((noisy - x) ** 2)) if x.size else 0.0
    measured = 10 * np.log10(power / added) if power > 0 and added > 0 else None
    return noisy, measured


def _resample(x: np.ndarray, rate_from: int, rate_to: int, *, length: int | None = None) -> np.ndarray:
    x = resample(x, rate_from, rate_to)  # x itself when the rates are equal or it is empty
    if length is not None and x.size != length:
        x = x[:length] if x.size > length else np.pad(x, (0, length - x.size))
    return x


def _drop_packets(
    x: np.ndarray, rate: int, config: PacketLossConfig, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    size = max(1, round(rate * config.packet_ms / 1000))
    n_packets = -(-x.size // size)
    lost = gilbert_elliott_losses(n_packets, config, rng)
    out = x.copy()
    for i in map(int, np.flatnonzero(lost)):
        start, stop = i * size, min((i + 1) * size, x.size)
        if config.conceal == "repeat" and i > 0:
            out[start:stop] = out[start - size : start - size + (stop - start)]
        else:
            out[start:stop] = 0.0
    return out, lost


def _shifted_copy(speech: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    ratio = Fraction(float(rng.uniform(0.85, 1.15))).limit_denominator(40)
    voice = signal.resample_poly(speech, ratio.denominator, ratio.numerator)  # faster = higher pitch
    voice = np.roll(voice, int(rng.integers(voice.size)))
    return np.resize(voice, n)  # tiles when shorter


_VOWEL_FORMANTS = (  # F1, F2, F3 in Hz, adult averages
    (730.0, 1090.0, 2440.0),  # a
    (270.0, 2290.0, 3010.0),  # i
    (300.0, 870.0, 2240.0),  # u
    (530.0, 1840.0, 2480.0),  # e
    (570.0, 840.0, 2410.0),  # o
    (660.0, 1720.0, 2410.0),  # ae
)


def _synthetic_talker(n: int, rate: int, rng: np.random.Generator) -> np.ndarray:
    t = np.arange(n) / rate
    f0_mean = rng.uniform(90, 260)
    drift = np.interp(t, np.linspace(0, t[-1] if n else 0, 8), rng.uniform(-0.12, 0.12, 8))
    f0 = f0_mean * (1 + drift + 0.01 * np.sin(2 * np.pi * rng.uniform(4, 6) * t))
    phase = 2 * np.pi * np.cumsum(f0) / rate
    source = signal.sawtooth(phase + rng.uniform(0, 2 * np.pi)) + 0.05 * rng.standard_normal(n)
    out = np.zeros(n)
    start = int(rng.integers(0, max(1, int(0.3 * rate))))
    nyquist = rate / 2
    while start < n:
        length = int(rng.uniform(0.12, 0.32) * rate)
        stop = min(start + length, n)
        if rng.random() > 0.15:  # else a pause
            segment = source[start:stop]
            voiced = np.zeros(stop - start)
            vowel = _VOWEL_FORMANTS[int(rng.integers(len(_VOWEL_FORMANTS)))]
            for gain, formant in zip((1.0, 0.6, 0.3), vowel, strict=False):
                if formant * 1.15 < nyquist:
                    sos = signal.butter(2, [formant * 0.87, formant * 1.15], btype="bandpass", fs=rate, output="sos")
                    voiced += gain * signal.sosfilt(sos, segment)
            out[start:stop] = voiced * np.hanning(length)[: stop - start]
        start = stop
    return out


# --------------------------------------------------------------------------------------------- presets

PRESETS: dict[str, ChannelEffects] = {
    "clean": ChannelEffects(),
    "phone": ChannelEffects(telephone=TelephoneConfig()),
    "noisy-phone": ChannelEffects(noise=NoiseConfig(kind="babble", snr_db=10.0), telephone=TelephoneConfig()),
    "bad-line": ChannelEffects(
        noise=NoiseConfig(kind="white", snr_db=15.0),
        gain_db=6.0,
        clip_level=0.8,
        telephone=TelephoneConfig(),
        packet_loss=PacketLossConfig(p=0.05, r=0.3, loss_good=0.01, loss_bad=0.8, conceal="repeat"),
    ),
}


def preset(name: str) -> ChannelEffects:
    """The preset called ``name``; :class:`UnknownPresetError` lists the valid names otherwise."""
    try:
        return PRESETS[name]
    except KeyError:
        raise UnknownPresetError(
            f"unknown channel-effects preset {name!r}; choose one of: {', '.join(sorted(PRESETS))}"
        ) from None
