"""The live call's settings: ``encsim live`` builds one ``sim.live.LiveRunSettings`` from its flags and hands it to
``run_live``, which derives the patient's ``audio.live.PatientCallSettings``; every settings value is frozen."""

from __future__ import annotations

import dataclasses
import socket
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from scenarios import LoadedScenario, Scenario
from scenarios.schema import VoiceBlock


def _free_port_pair() -> int:
    """A port P on 127.0.0.1 such that P and P+1 are free (``--serve`` puts the page on PORT+1)."""
    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = int(a.getsockname()[1])
            if port >= 65535:
                continue
            with socket.socket() as b:
                try:
                    b.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
        return port
    raise AssertionError("no two free ports in a row")


def _options(argv: list[str]) -> Any:
    from sim.cli import build_parser
    from sim.cli._live import LiveOptions

    return LiveOptions.from_namespace(build_parser().parse_args(["live", *argv]))


def test_encsim_live_builds_one_settings_value_from_its_flags_and_hands_it_to_run_live(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sim.live
    from sim.cli import build_parser
    from sim.cli._live import cmd_live

    got: list[tuple[Any, LoadedScenario]] = []

    class _Stop(Exception):
        pass

    async def fake_run_live(settings: Any, loaded: LoadedScenario, **_kw: Any) -> Any:
        got.append((settings, loaded))
        raise _Stop

    monkeypatch.setattr(sim.live, "run_live", fake_run_live)
    port = _free_port_pair()
    args = build_parser().parse_args([
        "live", "viral_uri", "--serve", "--port", str(port), "--out", str(tmp_path / "run"), "--time-limit", "90",
        "--max-turns", "7", "--wait", "20", "--barge-in-after", "2.5", "--no-yield", "--seed", "3",
        "--allow-origin", "HTTPS://Example.org:443", "--allow-origin", "http://192.168.1.20:3000",
        "--join-window", "4", "--audio-format", "opus"])
    with pytest.raises(_Stop):
        cmd_live(args)

    ((settings, loaded),) = got
    assert isinstance(settings, sim.live.LiveRunSettings)
    assert loaded.scenario.id == "viral_uri"
    assert settings.model_dump() == {
        "out": tmp_path / "run", "connect": None, "host": "127.0.0.1", "port": port, "page": True, "page_port": None,
        "time_limit_s": 90.0, "turn_limit": 7, "barge_in_after_s": 2.5, "yield_on_overlap": False,
        "connect_timeout_s": 20.0, "seed": 3, "allow_origins": ("https://example.org", "http://192.168.1.20:3000"),
        "join_window_s": 4.0, "audio_format": "opus"}
    assert settings.caller == "person (web page)" and settings.call_page_port == port + 1


def test_the_live_settings_defaults_are_the_commands_defaults() -> None:
    from sim.cli._live import live_run_settings

    settings = live_run_settings(_options(["viral_uri", "--connect", "ws://127.0.0.1:9000/agent"]),
                                 scenario_id="viral_uri", allow_origins=[])
    assert settings.out.parent == Path("runs") and settings.out.name.endswith("-live-viral-uri")
    assert (settings.connect, settings.port, settings.page) == ("ws://127.0.0.1:9000/agent", 8765, False)
    assert (settings.time_limit_s, settings.turn_limit, settings.connect_timeout_s) == (600.0, None, 300.0)
    assert (settings.barge_in_after_s, settings.yield_on_overlap) == (None, None)  # the scenario's voice block
    assert (settings.seed, settings.allow_origins, settings.join_window_s) == (0, (), 10.0)
    assert settings.audio_format == "flac"
    assert settings.caller == "ws://127.0.0.1:9000/agent"


def test_every_settings_value_is_immutable(tmp_path: Path, by_id: dict[str, Scenario]) -> None:
    from audio.live import AgentCallSettings, CallHooks, LiveSettings, PatientCallSettings
    from sim.live import LiveRunSettings

    run = LiveRunSettings(out=tmp_path / "run", allow_origins=["https://example.org"])  # type: ignore[arg-type]
    assert run.allow_origins == ("https://example.org",)  # a list given is kept as a tuple: nothing to mutate
    call = run.call_settings(by_id["viral_uri"], k=0, recording=tmp_path / "call.wav")
    for value, field in ((run, "port"), (call, "port"), (call, "turn_limit"), (call.side, "time_limit_s"),
                         (AgentCallSettings(), "join_window_s")):
        with pytest.raises(ValidationError, match="frozen"):
            setattr(value, field, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        CallHooks().log = print  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.origins.allow = ()  # type: ignore[misc]
    assert isinstance(call.vocabulary, tuple)
    # a changed copy is a new value; the original stays as it was
    assert run.model_copy(update={"port": 9000}).port == 9000 and run.port == 8765
    assert isinstance(call, PatientCallSettings) and isinstance(call.side, LiveSettings)


def test_the_patients_call_settings_come_from_the_run_settings_and_the_scenario(
        tmp_path: Path, by_id: dict[str, Scenario]) -> None:
    """What run_live hands run_patient_call: the scenario's turn limit, voice and drug names; the flags override the
    scenario's voice block; with the page served only its origins (and --allow-origin) may call."""
    from audio.live import DEFAULT_JOIN_WINDOW_S, LiveSettings, OriginPolicy
    from audio.tts import style_for_profile
    from sim.live import LiveRunSettings, scenario_vocabulary

    scenario = by_id["viral_uri"]
    wav = tmp_path / "call.wav"
    call = LiveRunSettings(out=tmp_path / "run", port=9100).call_settings(scenario, k=0, recording=wav)
    assert call.scenario_id == scenario.id and call.k == 0 and call.turn_limit == scenario.max_turns
    assert call.side == LiveSettings() and call.connect is None and (call.host, call.port) == ("127.0.0.1", 9100)
    assert call.style == style_for_profile(scenario.patient_profile) and call.recording == wav
    assert call.vocabulary == tuple(scenario_vocabulary(scenario))
    assert call.connect_timeout_s == 300.0 and call.join_window_s == DEFAULT_JOIN_WINDOW_S
    assert call.origins == OriginPolicy()  # no page: loopback pages and programs

    paged = LiveRunSettings(out=tmp_path / "run", port=9100, page=True, allow_origins=("https://example.org",),
                            turn_limit=4, time_limit_s=50, join_window_s=2.0, connect_timeout_s=None)
    call = paged.call_settings(scenario, k=2, recording=wav)
    assert call.origins == OriginPolicy(allow=("https://example.org",),
                                        pages=("http://127.0.0.1:9101", "http://localhost:9101"))
    assert (call.k, call.turn_limit, call.side.time_limit_s) == (2, 4, 50.0)
    assert (call.join_window_s, call.connect_timeout_s) == (2.0, None)

    voiced = scenario.model_copy(update={"voice": VoiceBlock(barge_in_after_s=3.0, yield_on_overlap=False)})
    side = LiveRunSettings(out=tmp_path / "run").side_settings(voiced)
    assert (side.barge_in_after_s, side.yield_on_overlap) == (3.0, False)  # the scenario's voice block
    side = LiveRunSettings(out=tmp_path / "run", barge_in_after_s=1.5, yield_on_overlap=True).side_settings(voiced)
    assert (side.barge_in_after_s, side.yield_on_overlap) == (1.5, True)  # the flags win


def test_the_agents_call_settings_keep_its_defaults() -> None:
    from audio.live import AgentCallSettings, LiveSettings, PatientCallSettings

    agent = AgentCallSettings()
    assert agent.side == LiveSettings(smart_turn_stop_s=0.45, vad_stop_s=0.6, turn_wait_s=0.0)
    assert agent.side.end_of_turn == "smart-turn" and agent.side.listening_stop_s == 0.45
    assert (agent.port, agent.connect_timeout_s, agent.style, agent.recording) == (8766, None, None, None)
    patient = PatientCallSettings(scenario_id="s", turn_limit=3)
    assert patient.side == LiveSettings() and (patient.port, patient.connect_timeout_s) == (8765, 30.0)
    with pytest.raises(ValidationError):
        PatientCallSettings(scenario_id="s", turn_limit=3, join_window_s=0)
