"""``encsim run``'s flags declared once, its pure plan, and the one exit stack of what a run starts."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sim.cli._main import build_parser
from sim.cli._run_options import RESUME_FLAGS, FlagSpec, GroupSpec, RunOptions
from sim.cli._run_plan import plan_run, run_resources
from sim.records import ConfigError
from sim.store import RunStore

# a value other than the default for every flag of the plan and of how to carry it out (not --resume/--out, which
# exclude each other, nor --tui): each must reach its field
NON_DEFAULT = {
    "--scenarios": "acs_chest_pain", "--model": "scripted:natural", "--base-url": "http://127.0.0.1:9/v1",
    "--api-key-env": "SOME_KEY", "--call-timeout": "12", "--gguf": "x.gguf", "--k": "3", "--concurrency": "2",
    "--i-know": None, "--fail-fast": "2", "--personas": "minimiser", "--seed": "7", "--max-turns": "9",
    "--out": "runs/x", "--executor": "local", "--processes": "1", "--no-progress": None, "--quiet": None,
    "--reviewer": "ann", "--judge": "j1", "--judge-base-url": "http://127.0.0.1:9/v1",
    "--judge-api-key-env": "JK", "--judge-concurrency": "3", "--family-map": "fam.json",
    "--patient-model": "pm", "--patient-base-url": "http://127.0.0.1:9/v1", "--patient-api-key-env": "PK",
    "--mode": "voice", "--voice-preset": "phone", "--audio-format": "opus", "--text-only": None,
    "--allow-outside-images": None,
    "--profile": "patient_facing", "--evaluator-module": "my.mod", "--failure-judges": "fj",
}


def _options(argv: list[str]) -> RunOptions:
    return RunOptions.from_namespace(build_parser().parse_args(["run", *argv]))


def test_every_field_is_a_flag_and_every_flag_reaches_its_field() -> None:
    specs = [f.metadata.get("flag") or f.metadata.get("group") for f in dataclasses.fields(RunOptions)]
    assert all(isinstance(s, FlagSpec | GroupSpec) for s in specs), "a RunOptions field without its flag"
    argv = [x for flag, value in NON_DEFAULT.items() for x in ([flag] if value is None else [flag, value])]
    options, defaults = _options(argv), _options([])
    unchanged = [f.name for f in dataclasses.fields(RunOptions)
                 if f.name not in {"resume", "retry_errors", "tui", "ray_address", "ray_actors", "agent_url",
                                   "agent_protocol", "call_time_limit", "agent_turns", "agent_reply",
                                   "agent_scenario_hint"}
                 and getattr(options, f.name) == getattr(defaults, f.name) and f.name != "executor"]
    assert unchanged == []
    assert options.processes == 1 and options.personas == ["minimiser"] and options.evaluator_modules == ["my.mod"]
    assert options.judges.models == ["j1"] and options.judges.concurrency == 3
    assert defaults.personas == ["default"] and defaults.processes == 0
    calls = _options(["--mode", "call", "--agent-url", "ws://127.0.0.1:9", "--agent-protocol", "twilio",
                      "--call-time-limit", "60"])
    assert (calls.mode, calls.agent_url, calls.agent_protocol, calls.call_time_limit) == (
        "call", "ws://127.0.0.1:9", "twilio", 60.0)
    realtime = _options(["--mode", "call", "--agent-url", "ws://127.0.0.1:9/v1", "--agent-protocol",
                         "openai-realtime", "--agent-turns", "commit", "--agent-scenario-hint"])
    assert (realtime.agent_turns, realtime.agent_scenario_hint, defaults.agent_scenario_hint) == ("commit", True, False)
    chat = _options(["--mode", "call", "--agent-url", "http://127.0.0.1:9/v1", "--agent-protocol", "chat-audio",
                     "--agent-reply", "text"])
    assert (chat.agent_reply, defaults.agent_reply, defaults.agent_turns) == ("text", None, None)


def test_a_field_default_is_the_parsed_default() -> None:
    """RunOptions() made directly equals the options of an empty command line."""
    parsed = _options([])
    made = RunOptions(judges=parsed.judges)
    assert made == parsed


def test_resume_flags_come_from_the_table() -> None:
    marked = {spec.dest for f in dataclasses.fields(RunOptions) if isinstance(spec := f.metadata.get("flag"), FlagSpec)
              and spec.resume}
    assert marked <= RESUME_FLAGS and "judge_concurrency" in RESUME_FLAGS and "k" not in RESUME_FLAGS
    with pytest.raises(ConfigError, match=r"--k, --seed cannot be combined with --resume.*Only --concurrency.*"
                                          r"--judge-concurrency apply to a resume"):
        _options(["--resume", "runs/x", "--k", "2", "--seed", "3"])
    assert _options(["--resume", "runs/x", "--concurrency", "2", "--judge-concurrency", "2"]).concurrency == 2


@pytest.fixture
def no_side_effects(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Any network connection or process start fails the test (recorded, then refused)."""
    attempts: list[str] = []

    def connect(self: socket.socket, address: Any) -> None:
        attempts.append(f"connect {address}")
        raise AssertionError(f"plan_run connected to {address}")

    def popen(*args: Any, **kwargs: Any) -> None:
        attempts.append(f"process {args[:1]}")
        raise AssertionError("plan_run started a process")

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(subprocess.Popen, "__init__", popen)
    return attempts


def _tree(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in sorted(root.rglob("*"))}


def test_plan_run_makes_no_call_starts_nothing_and_writes_nothing(tmp_path: Path, no_side_effects: list[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOME_KEY", "sk-test")
    options = _options(["--model", "remote-model", "--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "SOME_KEY",
                        "--judge", "j1", "--judge-base-url", "http://127.0.0.1:9/v1", "--processes", "1",
                        "--scenarios", "acs_chest_pain", "--k", "2", "--out", str(tmp_path / "run")])
    before = _tree(tmp_path)
    plan = asyncio.run(plan_run(options))
    assert no_side_effects == [] and _tree(tmp_path) == before and not (tmp_path / "run").exists()
    assert plan.meta.model == "remote-model" and [r.name for r in plan.meta.judges] == ["j1"]
    assert [s.scenario.id for s in plan.scenarios] == ["acs_chest_pain"] and not plan.resumed
    assert plan.run_dir == tmp_path / "run"


def test_plan_run_of_a_resume_reads_the_stored_plan_and_touches_nothing(tmp_path: Path,
                                                                         no_side_effects: list[str]) -> None:
    from sim.cli import main

    out = tmp_path / "run"
    assert main(["run", "--model", "scripted:reference", "--scenarios", "acs_chest_pain", "--k", "1", "--out",
                 str(out), "--quiet"]) == 0
    before = _tree(tmp_path)
    plan = asyncio.run(plan_run(_options(["--resume", str(out)])))
    assert plan.resumed and plan.meta.model == "scripted:reference" and plan.meta.k == 1
    assert no_side_effects == [] and _tree(tmp_path) == before


class _Boom(Exception):
    pass


def test_run_resources_stops_everything_it_started_when_the_run_raises(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent, each judge client and the run directory's lock are released by the exit stack, in reverse."""
    from sim.agents.scripted import ReferenceAgent
    from sim.judges import JudgeClient

    closed: list[str] = []
    agent_close, judge_close = ReferenceAgent.aclose, JudgeClient.aclose

    async def close_agent(self: ReferenceAgent) -> None:
        closed.append("agent")
        await agent_close(self)

    async def close_judge(self: JudgeClient) -> None:
        closed.append(f"judge {self.name}")
        await judge_close(self)

    monkeypatch.setattr(ReferenceAgent, "aclose", close_agent)
    monkeypatch.setattr(JudgeClient, "aclose", close_judge)
    out = tmp_path / "run"
    options = _options(["--model", "scripted:reference", "--scenarios", "acs_chest_pain", "--k", "1", "--quiet",
                        "--judge", "j1", "--judge", "j2", "--judge-base-url", "http://127.0.0.1:9/v1",
                        "--judge-base-url", "http://127.0.0.1:9/v1", "--out", str(out)])

    async def run() -> None:
        plan = await plan_run(options)
        async with run_resources(plan) as res:
            assert res.store.root == out and [j.name for j in res.judges] == ["j1", "j2"]
            with pytest.raises(ConfigError, match="holds"):  # locked while the block runs
                RunStore.open(out, lock="another writer")
            raise _Boom

    with pytest.raises(_Boom):
        asyncio.run(run())
    assert closed == ["judge j2", "judge j1", "agent"]
    RunStore.open(out, lock="after the run").close()  # the lock was released
