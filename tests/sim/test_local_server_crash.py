"""The embedded model server that crashes: on its first inference (found by the start-up check) and mid-run (the
run stops with the signal named). The server is a real child process (tests/sim/dying_llama.py) that answers
/v1/models and then kills itself with SIGSEGV, as a native llama.cpp build does on a CPU that reports AMX without
enabling it; everything else (LlamaServer, LocalAgent, the runner, the CLI) is the product's own."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest

from sim.agents.base import AgentRequest, ChatMessage
from sim.agents.local import LlamaServer, LocalAgent, ServerDied
from sim.cli import main
from sim.records import ConfigError

FAKE = Path(__file__).with_name("dying_llama.py")


def fake_command(die_after: int, sig: str = "SIGSEGV"):
    def command(self: LlamaServer) -> list[str]:
        return [sys.executable, str(FAKE), "--port", str(self.port), "--die-after", str(die_after), "--signal", sig]
    return command


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF")
    return path


async def test_a_crash_on_the_first_inference_is_found_at_start_up(gguf: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(LlamaServer, "_command", fake_command(0))
    server = LlamaServer(gguf=gguf, startup_timeout_s=60)
    with pytest.raises(ConfigError) as info:
        await server.start()
    message = str(info.value)
    assert message.startswith("the embedded model server crashed with SIGSEGV (signal 11) on its first inference")
    assert "AMX tile config" in message  # the tail of its log
    assert "make setup" in message and "tools/llama_build.py" in message
    assert "connection refused" not in message.lower() and "--base-url" not in message and "\n" not in message
    assert not server.running


async def test_a_server_that_answers_is_started(gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(LlamaServer, "_command", fake_command(100))
    server = await LlamaServer(gguf=gguf, startup_timeout_s=60).start()
    try:
        assert server.running and server.died() is None
    finally:
        server.stop()
    assert server.died() is None  # stopped by us: not a death


@pytest.mark.parametrize(("sig", "words"), [("SIGSEGV", "crashed with SIGSEGV (signal 11)"),
                                            ("SIGKILL", "was stopped by SIGKILL (signal 9)")])
async def test_a_death_mid_run_is_server_died_not_a_refusal(gguf: Path, monkeypatch: pytest.MonkeyPatch, sig: str,
                                                            words: str) -> None:
    monkeypatch.setattr(LlamaServer, "_command", fake_command(2, sig))  # the start-up check, one reply, then dies
    agent = await LocalAgent(server=LlamaServer(gguf=gguf, startup_timeout_s=60)).start()
    request = AgentRequest(messages=[ChatMessage(role="user", content="I have chest pain.")], temperature=0.3,
                           max_tokens=64, seed=1, agent_turn=1)
    try:
        assert (await agent.respond(request)).text == "Do you have any chest pain?"
        with pytest.raises(ServerDied) as info:
            await agent.respond(request)
    finally:
        await agent.aclose()
    assert info.value.kind == "server_died" and info.value.returncode == -getattr(signal, sig)
    assert str(info.value).startswith(f"the embedded model server {words} during the run")
    assert info.value.crashed == (sig == "SIGSEGV")
    assert "connection refused" not in str(info.value).lower() and "--base-url" not in str(info.value)


def test_the_run_stops_naming_the_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """encsim run --model local whose server dies after two replies: exit 2, one paragraph naming SIGSEGV and how
    to continue; no refusal, no --base-url advice, and the encounter cut short is not recorded as the model's."""
    monkeypatch.setattr(LlamaServer, "_command", fake_command(3))
    out = tmp_path / "run"
    code = main(["run", "--model", "local", "--scenarios", "acs_chest_pain,viral_uri", "--k", "2",
                 "--concurrency", "1", "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2, err
    line = next(x for x in err.splitlines() if x.startswith("error: "))
    assert line.startswith("error: --model local: the embedded model server crashed with SIGSEGV (signal 11) during "
                           "the run, so the run stopped")
    assert "AMX tile config" in line and "make setup" in line and f"encsim run --resume {out}" in line
    assert "connection refused" not in err.lower() and "--base-url" not in err and "Traceback" not in err
    records = (out / "results.jsonl").read_text().splitlines() if (out / "results.jsonl").exists() else []
    assert not [r for r in map(json.loads, records) if r["status"] == "error"]
