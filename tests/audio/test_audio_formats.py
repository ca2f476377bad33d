"""Stored audio as FLAC (the default), Ogg/Opus or WAV: what is written, what reads back, and old WAV runs alike."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audio._store import opus_rate, write_audio
from sim.cli import main

REAL_SPEECH = Path(__file__).parents[1] / "data" / "public" / "speech" / "whisper_jfk.flac"


def _speech() -> tuple[np.ndarray, int]:
    """A public recording as float samples with values between the 16-bit steps, as the channel effects give them."""
    samples, rate = sf.read(str(REAL_SPEECH), dtype="float32")
    return (samples * np.float32(0.7311)).astype(np.float32), rate


def test_wav_and_flac_store_the_same_16_bit_samples(tmp_path: Path) -> None:
    """libsndfile rounds float to 16 bits differently for WAV and FLAC; the stored samples must not depend on it."""
    samples, rate = _speech()
    wav = sf.read(str(write_audio(tmp_path / "a.wav", samples, rate)), dtype="int16")[0]
    flac = sf.read(str(write_audio(tmp_path / "a.flac", samples, rate)), dtype="int16")[0]
    assert np.array_equal(wav, flac)
    assert np.array_equal(flac, np.clip(np.round(samples * np.float32(32768.0)), -32768, 32767).astype(np.int16))
    assert (tmp_path / "a.flac").stat().st_size < 0.7 * (tmp_path / "a.wav").stat().st_size


def test_flac_stereo_int16_round_trips_exactly(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    stereo = np.stack([rng.integers(-30000, 30000, 16000), np.zeros(16000)], axis=1).astype(np.int16)
    back, rate = sf.read(str(write_audio(tmp_path / "call.flac", stereo, 16000)), dtype="int16")
    assert rate == 16000 and np.array_equal(back, stereo)


def test_opus_is_small_and_takes_any_rate(tmp_path: Path) -> None:
    from audio._pcm import resample

    samples, rate = _speech()
    assert rate == 44100 and opus_rate(22050) == 24000 and opus_rate(16000) == 16000 and opus_rate(96000) == 48000
    for to, stored in ((16000, 16000), (22050, 24000), (44100, 48000)):
        x = resample(samples, rate, to).astype(np.float32)
        path = write_audio(tmp_path / f"{to}.opus", x, to)
        back, back_rate = sf.read(str(path), dtype="float32")
        info = sf.info(str(path))
        assert (info.format, info.subtype, back_rate) == ("OGG", "OPUS", stored)
        assert abs(len(back) / stored - len(x) / to) < 0.05
        assert path.stat().st_size < 0.2 * write_audio(tmp_path / f"{to}.wav", x, to).stat().st_size


def test_an_unknown_suffix_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not '.mp3'"):
        write_audio(tmp_path / "a.mp3", np.zeros(10, dtype=np.float32), 16000)


def test_an_old_run_json_without_the_field_is_a_wav_run() -> None:
    from sim.records import RunLayout, RunMeta

    meta = RunMeta.model_validate({"run_id": "old", "harness_version": "1.7.0", "model": "m", "scenarios": [],
                                   "k": 1, "seed": 0, "channel": "voice", "created_at": 0.0})
    assert meta.audio_format == "wav"
    assert RunLayout.turn_audio(Path("a"), "s", 0, 3, "agent", audio_format="wav").name == "003-agent.wav"
    assert RunLayout.encounter_call(Path("a"), "s", 1, audio_format="opus").name == "call.opus"


def test_audio_format_cannot_change_on_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r"
    assert main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1", "--max-turns", "2",
                 "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["run", "--resume", str(out), "--audio-format", "wav"]) == 2
    err = capsys.readouterr().err
    assert "--audio-format cannot be combined with --resume" in err and err.count("\n") == 1


@pytest.mark.slow
def test_voice_runs_store_flac_by_default_opus_on_request_and_read_like_old_wav_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from audio.stt import transcribe
    from scenarios import resolve, scenario_vocabulary

    runs = {}
    for fmt in ("default", "opus", "wav"):
        out = tmp_path / fmt
        flags = [] if fmt == "default" else ["--audio-format", fmt]
        assert main(["run", "--mode", "voice", "--model", "scripted:reference", "--scenarios", "viral_uri",
                     "--k", "1", "--max-turns", "3", "--out", str(out), "--quiet", *flags]) == 0
        runs[fmt] = out
    capsys.readouterr()
    sizes = {fmt: sum(p.stat().st_size for p in (out / "audio").rglob("*") if p.is_file())
             for fmt, out in runs.items()}
    assert json.loads((runs["default"] / "run.json").read_text())["audio_format"] == "flac"
    assert {p.suffix for p in (runs["default"] / "audio").rglob("*.*")} == {".flac"}
    assert {p.suffix for p in (runs["opus"] / "audio").rglob("*.*")} == {".opus"}
    assert sizes["default"] < 0.5 * sizes["wav"] and sizes["opus"] < 0.2 * sizes["wav"]

    # lossless: every stored message, transcribed again, is word for word what the run heard
    vocabulary = scenario_vocabulary(resolve(["viral_uri"])[0].scenario)
    rec = json.loads((runs["default"] / "results.jsonl").read_text().splitlines()[0])
    spoken = [t for t in rec["result"]["turns"] if t["channel"]]
    assert len(spoken) >= 5
    for turn in spoken:
        path = Path(turn["artifacts"]["audio"])
        assert path.suffix == ".flac" and path.is_file()
        heard = turn["heard_text"] if turn["heard_text"] is not None else turn["text"]
        assert transcribe(path, vocabulary=vocabulary).text.strip() == heard
    call, rate = sf.read(rec["result"]["artifacts"]["call"])
    assert rec["result"]["artifacts"]["call"].endswith("call.flac") and call.shape[1] == 2 and rate == 16000

    # a run from before the field (its run.json has no audio_format) reads, reports and compares like a new one
    meta = json.loads((runs["wav"] / "run.json").read_text())
    del meta["audio_format"]
    (runs["wav"] / "run.json").write_text(json.dumps(meta))
    for out in runs.values():
        assert main(["report", str(out)]) == 0
    assert main(["compare", str(runs["wav"]), str(runs["default"])]) == 0
    assert main(["compare", str(runs["default"]), str(runs["opus"])]) == 0
    shown = capsys.readouterr().out
    assert "viral_uri" in shown
