"""``encsim run --mode call --agent-protocol chat-audio``: calls to an audio chat completions endpoint, recorded.

The agent is the built-in voice agent served as an endpoint (``sim.live.serve_agent(protocol="chat-audio")``: the
scripted reference control behind Whisper and Piper, told the scenario by ``--agent-scenario-hint``), reached
through the openai SDK as an audio LLM served by vLLM would be. Faults come from a stand-in endpoint on loopback:
a refused key, an HTTP 500, a malformed reply, a request that never returns.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from sim.cli._run_command import run_plan
from sim.records import ConfigError, RunLayout, read_events
from tests.sim.test_call_run import _free_port, _options

SCENARIO = "viral_uri"
KEY = "sk-chat-audio-secret-5f1e9a"


def test_serve_agent_refuses_calls_for_chat_audio() -> None:
    from sim.cli._serve_agent import ServeAgentOptions, serve

    options = ServeAgentOptions(model="scripted:reference", base_url=None, api_key_env=None, scenario=SCENARIO,
                                port=_free_port(), calls=1, allow_origin=[], join_window=10.0, protocol="chat-audio")
    with pytest.raises(ConfigError) as caught:
        serve(options)
    assert "--calls does not apply to --protocol chat-audio" in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.slow
async def test_a_call_to_an_audio_chat_endpoint_is_recorded_and_scored(tmp_path: Path) -> None:
    """One call, one agent turn: the patient's line goes as input_audio, the agent's WAV is played to the patient;
    the call is recorded, transcribed, timed and scored as any call."""
    from sim.agents.scripted import ReferenceAgent
    from sim.live import serve_agent

    port = _free_port()
    ready = asyncio.Event()
    bot = asyncio.create_task(serve_agent(ReferenceAgent(), scenario=None, port=port, protocol="chat-audio",
                                          on_ready=lambda _url: ready.set(), announce=lambda _m: None))
    out = tmp_path / "run"
    try:
        await asyncio.wait_for(ready.wait(), 120)
        summary, root = await asyncio.wait_for(run_plan(_options(
            ["--mode", "call", "--agent-url", f"http://127.0.0.1:{port}/v1", "--agent-protocol", "chat-audio",
             "--agent-scenario-hint", "--scenarios", SCENARIO, "--k", "1", "--concurrency", "1", "--max-turns", "1",
             "--call-time-limit", "60", "--out", str(out), "--quiet"])), 300)
    finally:
        bot.cancel()
        await asyncio.gather(bot, return_exceptions=True)
    layout = RunLayout(root)
    meta = json.loads(layout.run.read_text())
    assert meta["agent_protocol"] == "chat-audio" and meta["agent_scenario_hint"] is True
    records = [json.loads(line) for line in layout.results.read_text().splitlines()]
    assert [r["status"] for r in records] == ["ok"], records
    result: dict[str, Any] = records[0]["result"]
    agent_lines = [t["text"] for t in result["turns"] if t["speaker"] == "agent"]
    assert agent_lines and all(line.strip() for line in agent_lines)  # what the patient heard the agent say
    assert result["turns"][0]["speaker"] == "patient" and not result["errors"]
    assert result["termination"] in {"max_turns", "assessment"} and result["interaction"]["agent_latency_s"]
    assert (layout.audio / SCENARIO / "0" / "call.flac").stat().st_size > 100_000
    assert summary.completed == 1 and summary.live is not None and summary.live.calls == 1
    vm = summary.voice_measures
    assert vm is not None and vm.calls == 1 and vm.agent_turns == len(agent_lines)
    events, _ = read_events(layout.events)
    assert any(e.type == "encounter_finished" for e in events)


async def _endpoint(answer: Any, *, models_status: int = 200) -> tuple[web.AppRunner, str, list[dict[str, Any]]]:
    """A stand-in audio chat endpoint on loopback: ``answer(n)`` for the n-th completion request."""
    requests: list[dict[str, Any]] = []

    async def models(_request: web.Request) -> web.Response:
        if models_status != 200:
            return web.json_response({"error": {"message": "Incorrect API key provided"}}, status=models_status)
        return web.json_response({"object": "list", "data": []})

    async def completions(request: web.Request) -> web.Response:
        requests.append(await request.json())
        response: web.Response = await answer(len(requests))
        return response

    app = web.Application(client_max_size=64 << 20)
    app.router.add_get("/v1/models", models)
    app.router.add_post("/v1/chat/completions", completions)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}/v1", requests


@pytest.mark.slow
async def test_a_failed_turn_and_a_silent_agent_are_recorded_calls_not_lost(tmp_path: Path) -> None:
    """Three calls, each ended by its first request: an HTTP 500, a malformed reply (no choices), a request that
    never returns (the call ends on --call-time-limit). Each is a record with its reason, none a traceback."""
    never = asyncio.Event()

    async def answer(n: int) -> web.Response:
        if n == 1:
            return web.json_response({"error": {"message": "model crashed"}}, status=500)
        if n == 2:
            return web.json_response({"id": "x", "object": "chat.completion"})
        await never.wait()
        raise AssertionError("unreachable")

    runner, url, requests = await _endpoint(answer)
    try:
        summary, root = await asyncio.wait_for(run_plan(_options(
            ["--mode", "call", "--agent-url", url, "--agent-protocol", "chat-audio", "--scenarios", SCENARIO,
             "--k", "3", "--concurrency", "1", "--call-time-limit", "15", "--out", str(tmp_path / "run"),
             "--quiet"])), 400)
    finally:
        never.set()
        await runner.cleanup()
    assert len(requests) == 3 and all(r["messages"][1]["content"][0]["type"] == "input_audio" for r in requests)
    records = {r["k"]: r for r in map(json.loads, RunLayout(root).results.read_text().splitlines())}
    assert sorted(records) == [0, 1, 2] and summary.completed + summary.errors == 3
    failed, malformed, silent = (records[k]["result"] for k in range(3))
    assert failed["termination"] == "error" and any("chat-audio: HTTP 500 from POST" in e for e in failed["errors"])
    assert malformed["termination"] == "error"
    assert [records[k]["status"] for k in range(2)] == ["error", "error"] and summary.errors >= 2  # not scored
    assert any("chat-audio: a malformed reply to POST" in e for e in malformed["errors"])
    assert silent["termination"] == "time_limit" and not [t for t in silent["turns"] if t["speaker"] == "agent"]
    for result in (failed, malformed, silent):
        assert result["agent_turns"] == 0 and not any("Traceback" in e or "\n" in e for e in result["errors"])


@pytest.mark.slow
async def test_a_refused_key_is_one_line_naming_401_and_the_key_is_written_nowhere(tmp_path: Path) -> None:
    """GET /models answers 401 (and echoes nothing of the key): the run stops with one line naming HTTP 401 and
    --api-key-env; the key, given through the environment, is in no file of the run and not on stderr."""
    async def answer(_n: int) -> web.Response:
        raise AssertionError("no request with a refused key")

    runner, url, requests = await _endpoint(answer, models_status=401)
    out = tmp_path / "run"
    try:
        proc = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-m", "sim.cli", "run", "--mode", "call", "--agent-url", url,
                             "--agent-protocol", "chat-audio", "--api-key-env", "ENCSIM_TEST_AUDIO_KEY",
                             "--scenarios", SCENARIO, "--k", "1", "--fail-fast", "1", "--out", str(out), "--quiet"],
            capture_output=True, text=True, timeout=300, env={**os.environ, "ENCSIM_TEST_AUDIO_KEY": KEY})
    finally:
        await runner.cleanup()
    assert "Traceback" not in proc.stderr and KEY not in proc.stderr and KEY not in proc.stdout
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith("error: ")]
    assert "HTTP 401" in line and "--api-key-env" in line, proc.stderr
    assert proc.returncode == 2 and not requests
    files = [p for p in out.rglob("*") if p.is_file()] if out.exists() else []
    assert all(KEY.encode() not in p.read_bytes() for p in files)
