"""``encsim run --mode call``: each encounter a real-time voice call to the agent under test (sim.executors.call).

The agent is the built-in voice agent (``sim.live.serve_agent``: the scripted reference control behind Whisper ears
and a Piper voice) on a free loopback port, reached over pipecat's protobuf websocket, exactly as a team's pipecat
bot would be, or over Twilio Media Streams (``--agent-protocol twilio``: the patient plays Twilio, the agent is a
phone bot behind pipecat's ``TwilioFrameSerializer``). Faults come from a stand-in Twilio bot on loopback.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main
from sim.cli._main import build_parser
from sim.cli._run_command import run_plan
from sim.cli._run_options import RunOptions
from sim.records import ConfigError, RunLayout, read_events

SCENARIO = "viral_uri"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _options(argv: list[str]) -> RunOptions:
    return RunOptions.from_namespace(build_parser().parse_args(["run", *argv]))


@pytest.mark.parametrize(("argv", "message"), [
    (["--mode", "call"], "--mode call needs --agent-url"),
    (["--agent-url", "ws://127.0.0.1:9"], "only apply with --mode call"),
    (["--mode", "call", "--agent-url", "http://127.0.0.1:9"], "takes a ws:// or wss:// URL"),
    (["--mode", "call", "--agent-url", "ws://127.0.0.1:9", "--processes", "2"], "--processes"),
    (["--mode", "call", "--agent-url", "ws://127.0.0.1:9", "--executor", "ray"], "--executor ray"),
    (["--mode", "call", "--agent-url", "ws://127.0.0.1:9", "--patient-model", "local"], "--patient-model"),
    (["--mode", "call", "--agent-url", "ws://127.0.0.1:9", "--voice-preset", "phone"], "--voice-preset"),
    (["--mode", "call", "--agent-url", "ws://127.0.0.1:9", "--call-time-limit", "0"], "--call-time-limit"),
    (["--agent-protocol", "twilio"], "--agent-protocol only apply with --mode call"),
    (["--agent-reply", "text", "--agent-scenario-hint"], "--agent-reply, --agent-scenario-hint only apply"),
    (["--mode", "call", "--agent-url", "ws://127.0.0.1:9", "--agent-turns", "commit"],
     "--agent-turns only applies with --agent-protocol openai-realtime"),
    (["--mode", "call", "--agent-url", "ws://127.0.0.1:9", "--agent-reply", "text"],
     "--agent-reply only applies with --agent-protocol chat-audio"),
    (["--mode", "call", "--agent-url", "ws://127.0.0.1:9/v1", "--agent-protocol", "chat-audio"],
     "--agent-protocol chat-audio takes a http:// or https:// URL"),
    (["--mode", "voice", "--agent-protocol", "pipecat"], "only apply with --mode call"),
    (["--mode", "call", "--agent-url", "ws://127.0.0.1:9", "--agent-protocol", "sip"],
     "argument --agent-protocol: invalid choice: 'sip'"),
])
def test_call_flags_that_do_not_fit_are_one_paragraph(argv: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _options(argv)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_the_agent_protocol_is_part_of_the_plan(tmp_path: Path) -> None:
    """Stored in run.json with --mode call (pipecat unless given), None otherwise; a --resume cannot change it."""
    from scenarios import load_library
    from sim.cli._run_plan import _new_meta
    from sim.executors.call import agent_protocol

    loaded = [s for s in load_library() if s.scenario.id == SCENARIO]
    call = ["--mode", "call", "--agent-url", "ws://127.0.0.1:9", "--out", str(tmp_path / "run")]
    assert _new_meta(_options(call), loaded)[0].agent_protocol == "pipecat"
    assert _new_meta(_options([*call, "--agent-protocol", "twilio"]), loaded)[0].agent_protocol == "twilio"
    assert _new_meta(_options(["--out", str(tmp_path / "text")]), loaded)[0].agent_protocol is None
    with pytest.raises(ConfigError, match="--agent-protocol cannot be combined with --resume"):
        _options(["--resume", str(tmp_path / "run"), "--agent-protocol", "twilio"])
    assert (agent_protocol(None), agent_protocol("twilio")) == ("pipecat", "twilio")  # runs made before the flag
    with pytest.raises(ConfigError, match="agent_protocol 'sip'"):
        agent_protocol("sip")


def test_an_agent_nobody_serves_is_refused_before_the_run_directory_exists(tmp_path: Path) -> None:
    """A wrong --agent-url: one paragraph naming it, exit 2, and no run directory (the probe runs first)."""
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "sim.cli", "run", "--mode", "call", "--agent-url",
                           f"ws://127.0.0.1:{_free_port()}", "--scenarios", SCENARIO, "--k", "2", "--out", str(out),
                           "--quiet"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith("error: ")]
    assert "Traceback" not in proc.stderr and "--agent-url ws://127.0.0.1:" in line and "connection refused" in line
    assert not out.exists()


def test_a_server_that_refuses_the_websocket_trips_fail_fast(tmp_path: Path) -> None:
    """Something listens, but every call's websocket handshake fails (HTTP 404): fail fast stops the run, exit 2,
    with a paragraph naming --agent-url; run.json is there and no encounter was scored."""
    code = ("import asyncio, http, websockets\n"
            "async def main():\n"
            "    refuse = lambda connection, request: connection.respond(http.HTTPStatus.NOT_FOUND, 'no bot here\\n')\n"
            "    async with websockets.serve(lambda ws: None, '127.0.0.1', 0, process_request=refuse) as server:\n"
            "        print(next(iter(server.sockets)).getsockname()[1], flush=True)\n"
            "        await asyncio.sleep(600)\n"
            "asyncio.run(main())\n")
    server = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        out = tmp_path / "run"
        proc = subprocess.run([sys.executable, "-m", "sim.cli", "run", "--mode", "call", "--agent-url",
                               f"ws://127.0.0.1:{port}/bot", "--scenarios", SCENARIO, "--k", "2", "--fail-fast", "1",
                               "--concurrency", "1", "--out", str(out), "--quiet"],
                              capture_output=True, text=True, timeout=300)
    finally:
        server.kill()
        server.wait()
    assert proc.returncode == 2, proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith("error: ")]
    assert "Traceback" not in proc.stderr and f"--agent-url ws://127.0.0.1:{port}/bot: could not connect" in line
    assert "Start the voice agent" in line
    meta = json.loads(RunLayout(out).run.read_text())
    assert meta["channel"] == "call" and meta["agent_url"] == f"ws://127.0.0.1:{port}/bot"
    assert meta["agent_protocol"] == "pipecat"
    assert not RunLayout(out).results.exists() or RunLayout(out).results.read_text().strip() == ""


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["pipecat", "twilio"])
async def test_a_batch_of_calls_to_a_voice_agent_is_recorded_and_scored(tmp_path: Path, protocol: str) -> None:
    """One call, cut short by the patient's turn limit: the call is recorded, transcribed, timed and scored.

    Over twilio the agent serves Media Streams only (pipecat's TwilioFrameSerializer behind the door): a patient
    dialling with pipecat's protobuf frames would never become its caller, and would hear nothing.
    """
    from scenarios import load_library
    from sim.agents.scripted import ReferenceAgent
    from sim.live import serve_agent

    loaded = next(s for s in load_library() if s.scenario.id == SCENARIO)
    port = _free_port()
    ready = asyncio.Event()
    bot = asyncio.create_task(serve_agent(ReferenceAgent(), scenario=loaded.scenario, port=port, calls=1,
                                          on_ready=lambda _url: ready.set(), announce=lambda _m: None,
                                          protocol="twilio" if protocol == "twilio" else "pipecat"))
    out = tmp_path / "run"
    try:
        await asyncio.wait_for(ready.wait(), 90)
        summary, root = await asyncio.wait_for(run_plan(_options(
            ["--mode", "call", "--agent-url", f"ws://127.0.0.1:{port}", "--agent-protocol", protocol, "--scenarios",
             SCENARIO, "--k", "1", "--concurrency", "1", "--max-turns", "1", "--call-time-limit", "240", "--out",
             str(out), "--quiet"])), 300)
        outcomes = await asyncio.wait_for(bot, 60)
    finally:
        if not bot.done():
            bot.cancel()
            await asyncio.gather(bot, return_exceptions=True)
    assert len(outcomes) == 1 and outcomes[0].agent_turns >= 1  # the agent heard the patient and answered
    layout = RunLayout(root)
    assert json.loads(layout.run.read_text())["agent_protocol"] == protocol
    records = [json.loads(line) for line in layout.results.read_text().splitlines()]
    assert [r["status"] for r in records] == ["ok"], records
    result: dict[str, Any] = records[0]["result"]
    agent_lines = [t["text"] for t in result["turns"] if t["speaker"] == "agent"]
    assert agent_lines and all(line.strip() for line in agent_lines)  # what the patient heard the agent say
    assert result["termination"] in {"max_turns", "assessment"} and result["interaction"]["agent_latency_s"]
    assert (layout.audio / SCENARIO / "0" / "call.flac").stat().st_size > 100_000
    assert summary.completed == 1 and summary.live is not None and summary.live.calls == 1
    vm = summary.voice_measures  # issue 34's clinical voice measures, from the call's transcript and clock
    assert vm is not None and vm.calls == 1 and vm.agent_turns == len(agent_lines)
    assert vm.agent_latency_p50_s == summary.live.agent_latency_p50_s
    assert "## Voice measures" in layout.report.read_text()
    events, _ = read_events(layout.events)
    assert any(e.type == "encounter_finished" for e in events)
    assert main(["report", str(root)]) in (0, 3)


@pytest.mark.slow
async def test_one_served_agent_takes_concurrent_calls_each_in_the_scenario_its_caller_names(tmp_path: Path) -> None:
    """serve-agent without --scenario and with room for two calls; the batch dials both at once with
    --agent-scenario-hint, so the scripted reference plays each call's own scenario (without the hint it cannot
    answer at all: it must know the scenario)."""
    from sim.agents.scripted import ReferenceAgent
    from sim.live import serve_agent

    second = "acs_chest_pain"
    port = _free_port()
    ready = asyncio.Event()
    bot = asyncio.create_task(serve_agent(ReferenceAgent(), scenario=None, port=port, calls=2, concurrency=2,
                                          on_ready=lambda _url: ready.set(), announce=lambda _m: None))
    out = tmp_path / "run"
    try:
        await asyncio.wait_for(ready.wait(), 90)
        summary, root = await asyncio.wait_for(run_plan(_options(
            ["--mode", "call", "--agent-url", f"ws://127.0.0.1:{port}", "--agent-scenario-hint", "--scenarios",
             f"{SCENARIO},{second}", "--k", "1", "--concurrency", "2", "--max-turns", "1", "--call-time-limit", "240",
             "--out", str(out), "--quiet"])), 300)
        outcomes = await asyncio.wait_for(bot, 60)
    finally:
        if not bot.done():
            bot.cancel()
            await asyncio.gather(bot, return_exceptions=True)
    assert len(outcomes) == 2 and all(o.agent_turns >= 1 and not o.errors for o in outcomes), outcomes
    first, later = sorted(outcomes, key=lambda o: o.started_at)
    assert later.started_at < first.ended_at  # the two calls were served at the same time
    assert json.loads(RunLayout(root).run.read_text())["agent_scenario_hint"] is True
    records = [json.loads(line) for line in RunLayout(root).results.read_text().splitlines()]
    assert sorted(r["result"]["scenario_id"] for r in records) == sorted([SCENARIO, second])
    assert [r["status"] for r in records] == ["ok", "ok"] and summary.completed == 2


@pytest.mark.slow
async def test_an_agent_that_never_speaks_and_one_that_hangs_up_are_recorded_not_lost(tmp_path: Path) -> None:
    """A loopback websocket that accepts the call and stays silent, then one that hangs up after two seconds.

    Neither is a traceback or a lost encounter: the silent call ends at --call-time-limit, the other on the
    hang-up, and both are in results.jsonl with their termination.
    """
    import websockets

    calls: list[str] = []

    async def agent(ws: Any) -> None:
        calls.append("call")
        if len(calls) == 1:  # never speaks: reads what the patient says until the patient ends the call
            async for _message in ws:
                pass
            return
        async def drain() -> None:  # a websocket server reads what it is sent, also while it closes
            async for _message in ws:
                pass

        reader = asyncio.create_task(drain())
        await asyncio.sleep(2.0)  # hangs up
        await ws.close()
        reader.cancel()

    out = tmp_path / "run"
    async with websockets.serve(agent, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        summary, root = await asyncio.wait_for(run_plan(_options(
            ["--mode", "call", "--agent-url", f"ws://127.0.0.1:{port}", "--scenarios", SCENARIO, "--k", "2",
             "--concurrency", "1", "--call-time-limit", "12", "--out", str(out), "--quiet"])), 240)
    records = [json.loads(line) for line in RunLayout(root).results.read_text().splitlines()]
    assert len(calls) == 2 and sorted(r["k"] for r in records) == [0, 1]
    by_k = {r["k"]: r for r in records}
    silent, hung = by_k[0]["result"], by_k[1]["result"]
    assert silent["termination"] == "time_limit" and not [t for t in silent["turns"] if t["speaker"] == "agent"]
    assert hung["termination"] == "hangup"
    assert summary.completed + summary.errors == 2


async def _twilio_bot_that_hangs_up(port: int, received: list[dict[str, Any]], *,
                                    hang_up_after_s: float | None) -> Any:
    """A stand-in phone bot that never speaks: it reads what Twilio (the patient) sends and, with
    ``hang_up_after_s``, closes the socket that long after the first media, mid-call (reading on meanwhile, as a
    bot does: a reader that stops would stall the closing handshake behind the caller's media)."""
    from websockets.asyncio.server import serve
    from websockets.exceptions import ConnectionClosed

    async def handler(websocket: Any) -> None:
        async def hang_up() -> None:
            await asyncio.sleep(hang_up_after_s or 0)
            received.append({"event": "(bot hung up)"})
            await websocket.close()

        closing: asyncio.Task[None] | None = None
        try:
            async for message in websocket:
                received.append(json.loads(message))
                if hang_up_after_s is not None and closing is None and received[-1]["event"] == "media":
                    closing = asyncio.create_task(hang_up())
        except ConnectionClosed:
            pass
        if closing is not None:
            await closing

    return await serve(handler, "127.0.0.1", port)


@pytest.mark.slow
@pytest.mark.parametrize("hang_up_after_s", [2.0, None])
async def test_a_twilio_bot_that_hangs_up_or_stays_silent_is_a_recorded_call(tmp_path: Path,
                                                                           hang_up_after_s: float | None) -> None:
    """The patient opens the stream as Twilio does; a bot that closes the socket mid-call ends it as a hangup, one
    that never speaks as the time limit (the patient then sends stop); either way one record, no traceback."""
    port, received = _free_port(), []
    server = await _twilio_bot_that_hangs_up(port, received, hang_up_after_s=hang_up_after_s)
    try:
        summary, root = await asyncio.wait_for(run_plan(_options(
            ["--mode", "call", "--agent-url", f"ws://127.0.0.1:{port}", "--agent-protocol", "twilio", "--scenarios",
             SCENARIO, "--k", "1", "--concurrency", "1", "--call-time-limit", "6", "--out", str(tmp_path / "run"),
             "--quiet"])), 240)
    finally:
        server.close()
        await server.wait_closed()
    assert [m["event"] for m in received[:3]] == ["connected", "start", "media"]
    stream = received[1]["start"]["streamSid"]
    assert {m.get("streamSid") for m in received[1:] if m["event"] != "(bot hung up)"} == {stream}
    records = [json.loads(line) for line in RunLayout(root).results.read_text().splitlines()]
    assert len(records) == 1 and summary.completed + summary.errors == 1
    result = records[0]["result"]
    assert result is not None and result["agent_turns"] == 0
    if hang_up_after_s is not None:
        # ended by the hang-up, 2 s in: before the 6 s time limit, which would have been the reason otherwise
        assert result["termination"] == "hangup" and "(bot hung up)" in [m["event"] for m in received]
    else:
        assert result["termination"] == "time_limit"
        assert received[-1]["event"] == "stop" and received[-1]["stop"]["callSid"] == received[1]["start"]["callSid"]
        assert [int(m["sequenceNumber"]) for m in received[1:]] == list(range(1, len(received)))
