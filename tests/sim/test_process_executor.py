"""`encsim run --processes N`: encounters in local worker processes give the in-process run's directory and scores.

The workers are real spawned processes (``sim.executors.process``). Agents that misbehave on purpose are built in
the worker by a module-level factory (spawn pickles a function by its name, so it must be importable from here).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from scenarios import LoadedScenario
from sim.agents.scripted import ReferenceAgent
from sim.cli import main
from sim.cli._run_command import run_exit_code
from sim.encounter import HARNESS_VERSION
from sim.encounter.channel import TextChannel
from sim.executors.process import ProcessEncounters
from sim.executors.worker_spec import WorkerSpec
from sim.records import ConfigError, RunMeta, ScenarioRef, read_events
from sim.runner import run_batch
from sim.store import RunStore
from tests.fakeserver import FakeChatServer
from tests.scorers.test_triage_accuracy import REPLAY as TRIAGE_REPLAY
from tests.sim.remote_checks import (
    assert_a_refused_key_stops_the_run_early,
    assert_the_key_was_sent_and_never_written,
)

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-proc-test-4b8e1d07c2a9"


def _lines(run: Path) -> list[dict[str, Any]]:
    path = run / "results.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []


def _meta(items: list[LoadedScenario], k: int, model: str = "scripted:reference") -> RunMeta:
    return RunMeta(run_id="r", harness_version=HARNESS_VERSION, model=model, k=k, seed=0, created_at=0.0,
                   scenarios=[ScenarioRef(id=s.scenario.id, path=str(s.path), sha256=s.sha256) for s in items])


def _alive(pid: int) -> bool:
    """True while ``pid`` is a process that has not exited (a zombie counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


async def dies_on_viral_uri(spec: WorkerSpec) -> Any:
    """A reference agent whose worker process dies (exit code 3) when it is asked about viral_uri."""
    inner = ReferenceAgent()

    class DiesOnViralUri:
        name = inner.name
        vision = inner.vision

        async def respond(self, request: Any) -> Any:
            if request.scenario is not None and request.scenario.id == "viral_uri":
                os._exit(3)  # as on an out-of-memory kill
            return await inner.respond(request)

        async def aclose(self) -> None:
            await inner.aclose()

    return DiesOnViralUri()


async def cannot_be_built(spec: WorkerSpec) -> Any:
    raise ConfigError("this agent cannot be built here")


def test_worker_processes_give_the_records_and_events_of_one_process(tmp_path: Path,
                                                                    library: list[LoadedScenario]) -> None:
    """Every kind of scenario (the library's encounters and imaging items, an imported replay), two controls: the
    same scores, transcripts and events as in this process."""
    replay = tmp_path / "replay_headache_proc.yaml"
    replay.write_text(TRIAGE_REPLAY.replace("replay-headache", "replay-headache-proc")
                      .replace("id: replay_headache", "id: replay_headache_proc"))
    for control in ("scripted:reference", "scripted:shallow"):
        runs = {}
        for processes in ("0", "2"):
            out = tmp_path / f"{control.split(':')[1]}-{processes}"
            code = main(["run", "--model", control, "--scenarios", "all", "--scenarios", str(replay), "--k", "1",
                         "--concurrency", "4", "--processes", processes, "--out", str(out), "--quiet"])
            runs[processes] = (code, out)
        (code0, one), (code2, two) = runs["0"], runs["2"]
        assert code0 == code2
        here = {(x["scenario_id"], x["k"]): x for x in _lines(one)}
        there = {(x["scenario_id"], x["k"]): x for x in _lines(two)}
        assert len(here) >= 40 and here.keys() == there.keys()
        kinds = Counter("imaging" if s.scenario.imaging else "encounter" for s in library if (s.scenario.id, 0) in here)
        kinds["replay"] = int(("replay_headache_proc", 0) in here)
        assert kinds["imaging"] and kinds["replay"] and kinds["encounter"], kinds
        for key, rec in here.items():
            other = there[key]
            assert other["status"] == rec["status"], key
            assert (other["score"] or {}).get("composite") == (rec["score"] or {}).get("composite"), key
            assert [t["text"] for t in other["result"]["turns"]] == [t["text"] for t in rec["result"]["turns"]], key
        events_here, skipped_here = read_events(one / "events.jsonl")
        events_there, skipped_there = read_events(two / "events.jsonl")
        assert skipped_here == skipped_there == 0
        assert Counter(e.type for e in events_there) == Counter(e.type for e in events_here)
        # each encounter's turns are written before the line that says it finished
        finished: set[tuple[str, int]] = set()
        for e in events_there:
            if e.type == "encounter_finished":
                finished.add((e.scenario_id, e.k))
            elif e.type == "turn":
                assert (e.scenario_id, e.k) not in finished
        assert json.loads((two / "summary.json").read_text())["aggregate"] == \
            json.loads((one / "summary.json").read_text())["aggregate"]


async def test_turns_reach_the_event_log_while_the_encounter_is_still_running(tmp_path: Path,
                                                                               library: list[LoadedScenario]) -> None:
    """The dashboard follows a turn at a time: the first agent turn is in events.jsonl while the second call
    hangs; cancelling the run then stops the worker's encounter and records nothing for it."""
    items = [s for s in library if s.scenario.id == "viral_uri"]
    with FakeChatServer(script=[("ok", "How long have you had the cough?"), ("hang", 300.0)]) as server:
        meta = _meta(items, 1, model="gpt-4o-mini")
        meta.base_url = server.base_url
        store = RunStore.create(tmp_path / "r", meta)
        remote = await ProcessEncounters(WorkerSpec(model="gpt-4o-mini", base_url=server.base_url),
                                         processes=1).start()
        try:
            run = asyncio.create_task(run_batch(store, items, ReferenceAgent(), TextChannel(), meta, concurrency=1,
                                                progress=None, remote=remote))
            events = tmp_path / "r" / "events.jsonl"
            deadline = time.monotonic() + 120  # a bound on a hung test, not the synchronisation
            while '"speaker":"agent"' not in (events.read_text() if events.exists() else ""):
                assert not run.done(), run
                assert time.monotonic() < deadline
                await asyncio.sleep(0.02)
            while len(server.requests) < 2:  # the second call is in the server's hands: it will not answer
                assert time.monotonic() < deadline
                await asyncio.sleep(0.02)
            assert not _lines(tmp_path / "r")
            turns = [e for e in read_events(events)[0] if e.type == "turn"]
            assert [t.speaker for t in turns] == ["patient", "agent", "patient"]
            assert turns[1].text == "How long have you had the cough?"
            run.cancel()
            with pytest.raises(asyncio.CancelledError):
                await run
        finally:
            await remote.aclose()
            store.close()
    assert not _lines(tmp_path / "r")
    assert not [p for p in remote.pids if _alive(p)]


async def test_a_worker_that_dies_makes_its_encounter_an_error_and_the_others_go_on(
        tmp_path: Path, library: list[LoadedScenario]) -> None:
    wanted = ("simple_uti", "viral_uri", "acs_chest_pain", "appendicitis")
    items = [s for s in library if s.scenario.id in wanted]
    meta = _meta(items, 1)
    store = RunStore.create(tmp_path / "r", meta)
    remote = await ProcessEncounters(WorkerSpec(model=meta.model, agent_factory=dies_on_viral_uri),
                                     processes=2).start()
    try:
        summary = await run_batch(store, items, ReferenceAgent(), TextChannel(), meta, concurrency=1, progress=None,
                                  remote=remote)
    finally:
        await remote.aclose()
        store.close()
    by_id = {x["scenario_id"]: x for x in _lines(tmp_path / "r")}
    assert set(by_id) == set(wanted)
    assert by_id["viral_uri"]["status"] == "error"
    assert by_id["viral_uri"]["error"].startswith("worker process ") and "died (exit code 3)" in \
        by_id["viral_uri"]["error"]
    assert all(by_id[s]["status"] == "ok" for s in wanted if s != "viral_uri")  # the other worker took them
    assert summary.errors == 1 and run_exit_code(summary) == 3
    assert sum(_alive(p) for p in remote.pids) == 0


async def test_a_worker_that_cannot_build_the_agent_is_a_one_paragraph_error_and_nothing_is_left_running() -> None:
    remote = ProcessEncounters(WorkerSpec(model="scripted:reference", agent_factory=cannot_be_built), processes=2)
    with pytest.raises(ConfigError) as info:
        await remote.start()
    message = str(info.value)
    assert message.startswith("--processes 2: worker process 1 could not build the agent: ConfigError: this agent "
                              "cannot be built here.")
    assert "\n" not in message
    assert len(remote.spawned) == 2 and not [p for p in remote.spawned if _alive(p)]


class _EndsTheProcessWhenUnpickled:
    """Given as a worker's agent factory: unpickling it in the spawned worker ends that process with exit code 3,
    before it is ready (as a worker that dies while it starts, or a script without a __main__ guard)."""

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        return os._exit, (3,)


async def test_a_worker_that_exits_while_it_starts_is_named_with_its_exit_code() -> None:
    remote = ProcessEncounters(WorkerSpec(model="scripted:reference",
                                          agent_factory=_EndsTheProcessWhenUnpickled()),  # type: ignore[arg-type]
                               processes=2)
    with pytest.raises(ConfigError) as info:
        await remote.start()
    message = str(info.value)
    assert message.startswith("--processes 2: worker process 1 exited while it started (exit code 3).")
    assert "__main__" in message and "\n" not in message
    assert len(remote.spawned) == 2 and not [p for p in remote.spawned if _alive(p)]


def test_workers_that_cannot_start_leave_no_run_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers start before the run directory is made, as the agent does: a failed start is one paragraph,
    exit 2, and no directory that a second try with the same --out would call an existing run."""
    async def fails(self: ProcessEncounters) -> ProcessEncounters:
        raise ConfigError("--processes 2: worker process 1 could not build the agent: ConfigError: no. Run without "
                          "--processes to see it in this process.")

    monkeypatch.setattr(ProcessEncounters, "start", fails)
    code = main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1", "--processes", "2",
                 "--out", str(tmp_path / "r"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and "worker process 1 could not build the agent" in err
    assert not (tmp_path / "r").exists()


def _start_run(tmp_path: Path, base_url: str, k: int, output: Any) -> subprocess.Popen[Any]:
    """`python -m encsim_entry run --processes 2` against ``base_url`` into tmp_path/r, in its own process group."""
    return subprocess.Popen(
        [sys.executable, "-m", "encsim_entry", "run", "--processes", "2", "--model", "gpt-4o-mini", "--base-url",
         base_url, "--scenarios", "viral_uri", "--k", str(k), "--max-turns", "2", "--concurrency", "4",
         "--out", str(tmp_path / "r"), "--no-progress"],
        cwd=tmp_path, stdout=output, stderr=output, text=True, start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})


def _wait_for_a_result(proc: subprocess.Popen[Any], out: Path) -> list[int]:
    """Wait until the run in ``proc`` has recorded an encounter; its worker processes' ids."""
    deadline = time.monotonic() + 120  # a bound on a hung subprocess, not the synchronisation
    results = out / "results.jsonl"
    while not (results.exists() and results.read_text().count("\n") >= 1):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return [p for p in _children(proc.pid) if "spawn_main" in _cmdline(p)]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@pytest.mark.parametrize(("args", "names"), [
    (("--processes", "two"), ("--processes 'two'", "whole number from 0 to 64")),
    (("--processes", "-1"), ("--processes '-1'",)),
    (("--processes", "65"), ("--processes '65'",)),
    (("--processes", "2", "--executor", "ray"), ("--processes 2 with --executor ray",)),
    (("--processes", "2", "--mode", "voice"), ("--processes with --mode voice", "--executor ray")),
    (("--processes", "2", "--model", "local"), ("--processes with --model local",)),
    (("--processes", "2", "--patient-model", "local"), ("--processes with --patient-model",)),
])
def test_bad_processes_flags_are_one_paragraph_errors_before_anything_starts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], names: tuple[str, ...]) -> None:
    base = ["run", "--scenarios", "viral_uri", "--k", "1", "--out", str(tmp_path / "r"), "--quiet"]
    if "--model" not in args:
        base += ["--model", "scripted:reference"]
    code = main([*base, *args])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    (line,) = [x for x in err.splitlines() if x.startswith("error:")]
    for name in names:
        assert name in line, line
    assert not (tmp_path / "r").exists()


def test_an_endpoint_run_in_workers_reads_the_key_there_and_fails_fast_per_call(
        tmp_path: Path, fake_server: type[FakeChatServer], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENCSIM_PROC_TEST_KEY", KEY)
    server = fake_server(default=("ok", "Thanks for telling me. When did the cough start, and any fever?")).start()
    out = tmp_path / "ok"
    code = main(["run", "--processes", "2", "--model", "gpt-4o-mini", "--base-url", server.base_url,
                 "--api-key-env", "ENCSIM_PROC_TEST_KEY", "--scenarios", "viral_uri", "--k", "3", "--max-turns", "3",
                 "--concurrency", "3", "--out", str(out), "--quiet"])
    assert code in (0, 3) and len(_lines(out)) == 3
    assert_the_key_was_sent_and_never_written(server, out, KEY)
    # a key the endpoint refuses: fatal at the first call, seen by the check in this process as it happens
    assert_a_refused_key_stops_the_run_early(["--processes", "2"], fake_server, capsys, tmp_path / "refused",
                                             key_env="ENCSIM_PROC_TEST_KEY", key=KEY, k=20)


def test_ctrl_c_to_the_whole_process_group_stops_the_run_and_its_workers(tmp_path: Path) -> None:
    """As a terminal sends it: SIGINT to every process of the group. The workers ignore it; the run stops them,
    saves what finished and exits 130 with its one line."""
    out = tmp_path / "r"
    with FakeChatServer(latency_s=0.3, default=("ok", "Could you tell me how long the sore throat has lasted?")) as srv:
        proc = _start_run(tmp_path, srv.base_url, 40, subprocess.PIPE)
        try:
            workers = _wait_for_a_result(proc, out)
            assert len(workers) == 2, [(_cmdline(p)) for p in _children(proc.pid)]
            os.killpg(proc.pid, signal.SIGINT)
            _, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1] == \
        f"interrupted; finished encounters are saved in {out}. Continue with: encsim run --resume {out}"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["errors"] == 0 and 1 <= summary["completed"] == len(_lines(out)) < 40
    deadline = time.monotonic() + 30
    while [p for p in workers if _alive(p)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in workers if _alive(p)]


def test_workers_exit_when_the_run_process_is_killed(tmp_path: Path) -> None:
    """SIGKILL of `encsim run`: each worker reads the end of its socket and exits; a resume finishes the run."""
    out = tmp_path / "r"
    with FakeChatServer(latency_s=0.2, default=("ok", "Could you tell me how long the sore throat has lasted?")) as srv:
        proc = _start_run(tmp_path, srv.base_url, 30, subprocess.DEVNULL)
        try:
            workers = _wait_for_a_result(proc, out)
            assert len(workers) == 2
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            deadline = time.monotonic() + 30
            while [p for p in workers if _alive(p)] and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not [p for p in workers if _alive(p)]
            before = (out / "results.jsonl").read_text().splitlines()
            assert main(["run", "--resume", str(out), "--processes", "2", "--quiet"]) in (0, 3)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    after = (out / "results.jsonl").read_text().splitlines()
    assert after[: len(before)] == before
    keys = [(json.loads(x)["scenario_id"], json.loads(x)["k"]) for x in after]
    assert len(keys) == len(set(keys)) == 30
