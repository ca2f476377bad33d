"""The audio package's public faces: ``audio`` (lazy) and ``audio.live`` (what importers have always used)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import audio

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("numpy", "scipy", "pipecat", "faster_whisper", "piper", "pydantic", "soundfile")


def test_import_audio_loads_nothing_else() -> None:
    """The CLI and the record types import ``audio`` for nothing: it must not load the voice stack."""
    code = ("import sys; import audio; print(sorted(m for m in sys.modules if m.split('.')[0] in "
            f"{HEAVY!r} or (m.startswith('audio.'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_every_public_name_is_the_owning_modules() -> None:
    for name in audio.__all__:
        owner = importlib.import_module(audio._HOME_OF[name])
        assert getattr(audio, name) is getattr(owner, name), name
        assert name in dir(audio)
    assert audio.RATE_16K == audio.live.LIVE_RATE == audio.stt.SAMPLE_RATE == 16_000


def test_a_patched_module_attribute_shows_through_the_face(monkeypatch: pytest.MonkeyPatch) -> None:
    import audio.live

    def stand_in() -> None: ...

    monkeypatch.setattr(audio.live, "run_patient_call", stand_in)
    assert audio.run_patient_call is stand_in


def test_unknown_names_are_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        audio.no_such_name  # noqa: B018 - the lookup is the test


def test_audio_live_keeps_every_name_it_exported() -> None:
    """sim.live, sim.cli, the tests and the benches import these from audio.live; the package must keep them."""
    import audio.live

    before = ["DEFAULT_JOIN_WINDOW_S", "LIVE_RATE", "AgentBrain", "CallClock", "CallOutcome", "CallRecorder",
              "LiveError", "LiveSettings", "OriginPolicy", "PatientBrain", "interaction_metrics",
              "parse_allowed_origin", "run_agent_bot", "run_patient_call", "speakable",  # its __all__
              "FRAME_BYTES", "FRAME_S", "RealtimePacer", "Timeline", "TurnTiming", "InputTap",
              "WhisperSegmentSTT", "PiperSpeaker", "SpeakFrame", "TurnTaker", "LivePatient", "Respond",
              "NUDGE_LINE", "GOODBYE_LINE", "QUIET_RMS", "SPECULATE_AFTER_S", "SENTENCE_GAP_S",
              "MAX_AUDIO_FRAME_BYTES", "MAX_MESSAGE_BYTES", "LOOPBACK_ORIGINS", "warm_up", "Side", "EventSink"]
    missing = [name for name in before if not hasattr(audio.live, name)]
    assert missing == []
    assert set(audio.live.__all__) >= set(before)
