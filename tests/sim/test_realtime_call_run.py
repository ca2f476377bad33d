"""``encsim run --mode call --agent-protocol openai-realtime``: calls to a Realtime agent, recorded and scored.

The agent is the built-in voice agent serving the Realtime protocol (``sim.live.serve_agent(protocol=
"openai-realtime")``: the scripted reference control behind Whisper ears and a Piper voice, its wire
``audio.live._realtime.RealtimeBotSerializer``), dialled through the ``openai`` SDK exactly as a team's Realtime
endpoint would be. Faults come from a stand-in Realtime server on loopback (``tests.audio.test_realtime``).
"""

from __future__ import annotations

import asyncio
import base64
import json
from http import HTTPStatus
from pathlib import Path
from typing import Any

import pytest
from openai.types.realtime import RealtimeError, RealtimeErrorEvent, ResponseAudioTranscriptDoneEvent

from sim.cli._run_command import run_plan
from sim.records import RunLayout
from tests.audio.test_realtime import FakeRealtime, _dump
from tests.sim.test_call_run import _free_port, _options

SCENARIO = "viral_uri"
KEY = "sk-realtime-test-NEVER-WRITTEN-7c1e"


def _records(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in RunLayout(root).results.read_text().splitlines()]


@pytest.mark.slow
@pytest.mark.parametrize("turns", ["server"])  # commit mode: tests/audio/test_realtime.py (the suite's 10 minutes)
async def test_a_call_to_a_realtime_agent_is_recorded_and_scored(tmp_path: Path, turns: str) -> None:
    """One call over the Realtime protocol, cut short by the patient's turn limit: recorded, timed and scored.

    With ``--agent-turns commit`` the patient commits its line and asks for a response; the built-in agent answers
    by its own VAD either way (``RealtimeBotSerializer``), so both calls go the same way.
    """
    from scenarios import load_library
    from sim.agents.scripted import ReferenceAgent
    from sim.live import serve_agent

    loaded = next(s for s in load_library() if s.scenario.id == SCENARIO)
    port = _free_port()
    ready = asyncio.Event()
    bot = asyncio.create_task(serve_agent(ReferenceAgent(), scenario=loaded.scenario, port=port, calls=1,
                                          on_ready=lambda _url: ready.set(), announce=lambda _m: None,
                                          protocol="openai-realtime"))
    out = tmp_path / "run"
    try:
        await asyncio.wait_for(ready.wait(), 90)
        summary, root = await asyncio.wait_for(run_plan(_options(
            ["--mode", "call", "--agent-url", f"ws://127.0.0.1:{port}/v1", "--agent-protocol", "openai-realtime",
             "--agent-turns", turns, "--scenarios", SCENARIO, "--k", "1", "--concurrency", "1", "--max-turns", "1",
             "--call-time-limit", "60", "--out", str(out), "--quiet"])), 300)
        outcomes = await asyncio.wait_for(bot, 60)
    finally:
        if not bot.done():
            bot.cancel()
            await asyncio.gather(bot, return_exceptions=True)
    assert len(outcomes) == 1 and outcomes[0].agent_turns >= 1  # the agent heard the patient and answered
    layout = RunLayout(root)
    assert json.loads(layout.run.read_text())["agent_protocol"] == "openai-realtime"
    records = _records(root)
    assert [r["status"] for r in records] == ["ok"], records
    result: dict[str, Any] = records[0]["result"]
    agent_lines = [t["text"] for t in result["turns"] if t["speaker"] == "agent"]
    assert agent_lines and all(line.strip() for line in agent_lines)  # what the patient heard the agent say
    assert [t["text"] for t in result["turns"] if t["speaker"] == "patient"]  # and what the agent heard
    assert result["termination"] in {"max_turns", "assessment"} and result["interaction"]["agent_latency_s"]
    assert not result["errors"], result["errors"]
    assert (layout.audio / SCENARIO / "0" / "call.flac").stat().st_size > 100_000
    assert summary.completed == 1 and summary.live is not None and summary.live.calls == 1


@pytest.mark.slow
async def test_a_refused_key_is_one_line_that_never_shows_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capfd: pytest.CaptureFixture[str]) -> None:
    """HTTP 401 on every handshake: fail fast stops the run at once (not after the connect timeout) with one
    paragraph naming --api-key-env and HTTP 401; the key is in no file of the run and not on stderr or stdout."""
    from sim.executors.call import CONNECT_TIMEOUT_S
    from sim.fail_fast import EndpointUnusable

    monkeypatch.setenv("ENCSIM_TEST_REALTIME_KEY", KEY)
    out = tmp_path / "run"
    async with FakeRealtime(status=HTTPStatus.UNAUTHORIZED) as server:
        with pytest.raises(EndpointUnusable) as caught:
            await asyncio.wait_for(run_plan(_options(
                ["--mode", "call", "--agent-url", server.url(), "--agent-protocol", "openai-realtime",
                 "--api-key-env", "ENCSIM_TEST_REALTIME_KEY", "--scenarios", SCENARIO, "--k", "1", "--concurrency",
                 "1", "--call-time-limit", "30", "--out", str(out), "--quiet"])), 240)
    assert len(server.requests) == 1 and server.requests[0].headers["Authorization"] == f"Bearer {KEY}"
    message = str(caught.value)
    assert message.startswith(f"--api-key-env ENCSIM_TEST_REALTIME_KEY: ws://127.0.0.1:{server.port}/v1 refused "
                              "the key (HTTP 401)") and "\n" not in message and KEY not in message
    events = [json.loads(line) for line in RunLayout(out).events.read_text().splitlines()]
    started, finished = (next(e["t"] for e in events if e["type"] == kind) for kind in ("run_started",
                                                                                         "run_finished"))
    assert finished - started < CONNECT_TIMEOUT_S  # the refusal ended the call, not the connect timeout
    captured = capfd.readouterr()
    assert KEY not in captured.err and KEY not in captured.out and "Traceback" not in captured.err
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files and not [p for p in files if KEY.encode() in p.read_bytes()]


@pytest.mark.slow
async def test_a_realtime_agent_that_errs_hangs_up_or_never_speaks_is_a_recorded_call(tmp_path: Path) -> None:
    """Three calls to a stand-in server: an error event 2 s in, a close (1011) 2 s in, then silence to the
    time limit (6 s). Each is one record with its termination and, for the first two, one line saying what happened."""
    calls: list[int] = []

    async def misbehave(websocket: Any) -> None:
        calls.append(len(calls))
        if len(calls) == 3:
            return  # never speaks
        await asyncio.sleep(2.0)
        if len(calls) == 1:  # says (in its transcript only) what it would have said, then fails
            await websocket.send(_dump(ResponseAudioTranscriptDoneEvent(
                type="response.output_audio_transcript.done", event_id="e", response_id="r", item_id="i",
                output_index=0, content_index=0, transcript="Nurse line, what's the problem?")))
            await websocket.send(_dump(RealtimeErrorEvent(type="error", event_id="e", error=RealtimeError(
                type="server_error", code="overloaded", message="The server is overloaded."))))
        else:
            await websocket.close(1011, "internal error")

    async with FakeRealtime(then=misbehave) as server:
        summary, root = await asyncio.wait_for(run_plan(_options(
            ["--mode", "call", "--agent-url", server.url("http"), "--agent-protocol", "openai-realtime",
             "--agent-turns", "commit", "--scenarios", SCENARIO, "--k", "3", "--concurrency", "1",
             "--call-time-limit", "6", "--out", str(tmp_path / "run"), "--quiet"])), 300)
    by_k = {r["k"]: r["result"] for r in _records(root)}
    assert sorted(by_k) == [0, 1, 2] and summary.completed + summary.errors == 3 and len(calls) == 3
    shown = f"ws://127.0.0.1:{server.port}/v1/realtime"
    erred, closed, silent = by_k[0], by_k[1], by_k[2]
    assert erred["termination"] == "error" and erred["errors"] == [
        f"the agent's connection failed mid-call: an error event from {shown}: server_error/overloaded: The server "
        "is overloaded."]
    assert closed["termination"] == "error" and closed["errors"] == [
        f"the agent's connection failed mid-call: {shown} closed the connection mid-call (code 1011)"]
    assert silent["termination"] == "time_limit" and not silent["errors"]
    # the agent's own transcript is kept beside the recording (not in the turns: they are what the patient heard)
    assert erred["artifacts"]["agent_transcript"] == f"audio/{SCENARIO}/0/agent_transcript.json"
    assert json.loads((Path(root) / erred["artifacts"]["agent_transcript"]).read_text()) == [
        "Nurse line, what's the problem?"]
    assert "agent_transcript" not in closed["artifacts"] and "recording" in closed["artifacts"]
    assert not [t for r in by_k.values() for t in r["turns"] if t["speaker"] == "agent"]
    # commit turns (the patient's 10 s opening line outlasts each call, so nothing is committed here: the
    # commits are tests.audio.test_realtime's): no server VAD, and the patient's speech went out at 24 kHz
    updates = server.of_type("session.update")
    assert len(updates) == 3 and all(e.session.audio.input.turn_detection is None for e in updates)
    speech = b"".join(base64.b64decode(e.audio) for e in server.of_type("input_audio_buffer.append"))
    assert len(speech) > 24000 * 2 * 4 and any(speech)  # the first 2 s of two calls and most of the third
