"""Voice mode end to end: real Piper, real channel effects, real Whisper, through the unchanged harness."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import soundfile as sf

from sim.cli import main


@pytest.mark.slow
def test_voice_run_clean_reveals_facts_and_writes_audio(tmp_path: Path) -> None:
    out = tmp_path / "voice"
    assert main(["run", "--mode", "voice", "--model", "scripted:reference", "--scenarios", "acs_chest_pain",
                 "--k", "1", "--out", str(out), "--quiet"]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["aggregate"] >= 0.85 and s["voice"]["messages"] > 4
    assert s["voice"]["wer_patient"] < 0.3 and s["voice"]["wer_agent"] < 0.3
    rec = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert not rec["score"]["information"]["critical_missed"]
    turns = rec["result"]["turns"]
    spoken = [t for t in turns if t["channel"]]
    assert spoken and all({"wer", "tts_s", "effects_s", "stt_s", "audio_s"} <= set(t["channel"]) for t in spoken)
    # both the intended and the heard text are kept where they differ, and audio exists per turn
    assert all(Path(t["artifacts"]["audio"]).is_file() for t in spoken)
    call, rate = sf.read(rec["result"]["artifacts"]["call"])
    assert call.ndim == 2 and call.shape[1] == 2 and rate == 16000 and abs(call).max() > 0.01
    meta = json.loads((out / "run.json").read_text())
    assert meta["channel"] == "voice"
    assert "Voice channel" in (out / "report.md").read_text()


@pytest.mark.slow
def test_voice_run_bad_line_completes_and_records_asr_losses(tmp_path: Path) -> None:
    out = tmp_path / "bad"
    assert main(["run", "--mode", "voice", "--voice-preset", "bad-line", "--model", "scripted:reference",
                 "--scenarios", "viral_uri", "--k", "1", "--max-turns", "4", "--out", str(out), "--quiet"]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["completed"] == 1 and s["errors"] == 0
    assert s["voice"]["wer_patient"] >= 0.0 and "facts_missed_by_asr" in s["voice"]
    rec = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    heard = [t for t in rec["result"]["turns"] if t["heard_text"] is not None]
    assert heard, "a bad line should change at least one message"


def test_piper_to_whisper_round_trip_keeps_key_words() -> None:
    from audio.stt import transcribe, word_error_rate
    from audio.tts import DETERMINISTIC, PiperTTS

    line = "The pain goes into my left arm and I have been sweating a lot."
    speech = PiperTTS(disk_cache=False).synthesize(line, settings=DETERMINISTIC)
    heard = transcribe(speech.samples, sample_rate=speech.sample_rate).text.lower()
    assert all(w in heard for w in ("pain", "left arm", "sweating")), heard
    assert word_error_rate(line, heard) <= 0.2


@pytest.mark.slow
def test_voice_vs_text_compare(tmp_path: Path, capsys) -> None:
    for mode in ("text", "voice"):
        assert main(["run", "--mode", mode, "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1",
                     "--max-turns", "4", "--out", str(tmp_path / mode), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "text"), str(tmp_path / "voice")]) == 0
    assert "viral_uri" in capsys.readouterr().out


async def test_audio_failure_is_recorded_and_the_batch_continues(tmp_path: Path, library) -> None:
    from audio.channel import VoiceChannel
    from audio.effects import preset
    from audio.tts import PiperTTS, default_voice_paths
    from sim.agents.scripted import ReferenceAgent
    from sim.encounter import HARNESS_VERSION
    from sim.records import RunMeta, ScenarioRef
    from sim.runner import run_batch
    from sim.store import RunStore

    onnx, config = default_voice_paths()
    bad = tmp_path / "corrupt.onnx"  # a voice file that exists but is not a model: fails at first use
    bad.write_bytes(b"not an onnx model")
    (tmp_path / "corrupt.onnx.json").write_bytes(config.read_bytes())
    broken = VoiceChannel(effects=preset("clean"), tts=PiperTTS(model_path=bad, disk_cache=False))
    chosen = [s for s in library if s.scenario.id in ("viral_uri", "simple_uti")]
    meta = RunMeta(run_id="broken-voice", harness_version=HARNESS_VERSION, model="scripted:reference",
                   scenarios=[ScenarioRef(id=s.scenario.id, path=str(s.path), sha256=s.sha256) for s in chosen],
                   k=1, seed=0, created_at=0.0, channel="voice")
    store = RunStore.create(tmp_path / "run", meta)
    summary = await run_batch(store, chosen, ReferenceAgent(), broken, meta, progress=None)
    records, _ = store.load_records()
    assert summary.errors == 2 and len(records) == 2
    assert all(r.status == "error" and r.error for r in records.values())
    assert summary.safety_gate is not None  # the summary was still written
