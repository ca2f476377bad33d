"""Bounded work in `encsim run` (issue 14): plan limits, a streamed plan, fail fast on a wrong endpoint, and
SIGINT / SIGTERM at any moment (the signal cases at many moments are in tests/adversarial/test_run_limits.py)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from scenarios import LoadedScenario
from sim.agents.scripted import ReferenceAgent
from sim.cli import main
from sim.encounter import HARNESS_VERSION
from sim.encounter.channel import TextChannel
from sim.fail_fast import EndpointUnusable, fatal_cause
from sim.records import AgentError, EncounterRecord, RunMeta, ScenarioRef, read_events
from sim.runner import MAX_ENCOUNTERS, MAX_K, run_batch
from sim.store import RunStore
from tests.fakeserver import FakeChatServer
from tests.sim.test_judge_run import grader

ROOT = Path(__file__).parents[2]
MINIMAL = ROOT / "tests" / "scenarios" / "valid_minimal.yaml"
KEY = "sk-proj-4kQ9vT2mX7bN1cR8yL5wE3jH"


def clinician(body: dict[str, Any]) -> str:
    """A chat model playing the clinician: two questions, then a structured assessment."""
    turn = sum(m["role"] == "assistant" for m in body["messages"]) + 1
    if turn == 1:
        return "I'm sorry you're feeling unwell. When did this start, and have you had a fever or any chills?"
    if turn == 2:
        return "Thanks. Any trouble swallowing or breathing, or a rash? Do you take any regular medicines?"
    return ("Thank you, that helps.\n\nASSESSMENT:\nTriage level: ESI 5\nEscalation: self_care\n"
            "Diagnoses: 1. Viral upper respiratory infection; 2. Allergic rhinitis\n"
            "Advice: Rest, fluids, paracetamol for discomfort; seek care if you get short of breath.")


def closed_port() -> int:
    """A port bound and closed again: nothing listens there (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def results(out: Path) -> list[dict[str, Any]]:
    """The finished lines of results.jsonl. While a run is writing, the last line may be half written: a reader polling
    mid-run counts only the lines that end in a newline."""
    path = out / "results.jsonl"
    text = path.read_text() if path.exists() else ""
    return [json.loads(x) for x in text.split("\n")[:-1] if x]


def unscored(out: Path) -> list[dict[str, Any]]:
    path = out / "unscored.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []


def started(out: Path) -> int:
    events, _ = read_events(out / "events.jsonl")
    return sum(e.type == "encounter_started" for e in events)


# --- limits -----------------------------------------------------------------------------------------------------


@pytest.mark.timeout(120)  # without the limit this run would go on for hours
def test_k_over_the_limit_is_refused_naming_k_and_i_know(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r"
    code = main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "3000000",
                 "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    line = err.strip()
    assert line.startswith("error: --k 3000000") and "--i-know" in line and f"at most {MAX_K}" in line
    assert "\n" not in line and not out.exists()  # one paragraph, refused before anything was made


@pytest.mark.timeout(120)  # without the limit this run would go on for hours
def test_a_product_over_the_limit_names_both_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """101 scenarios x K 1000: each number allowed, the product (101,000 encounters) is not."""
    folder = tmp_path / "suite"
    folder.mkdir()
    text = MINIMAL.read_text()
    for i in range(101):
        (folder / f"sore_throat_{i:03}.yaml").write_text(
            text.replace("id: broken_example", f"id: sore_throat_{i:03}")
            .replace("encsim-canary-00000000-broken-example", f"encsim-canary-{i:08}-sore-throat"))
    code = main(["run", "--model", "scripted:reference", "--scenarios", str(folder), "--k", "1000",
                 "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "101 scenarios x --k 1000 = 101,000 encounters" in err and f"{MAX_ENCOUNTERS:,}" in err
    assert "--i-know" in err and not (tmp_path / "r").exists()


def test_i_know_lets_a_large_plan_through(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With --i-know the limit is not what stops the command: here the next check (an existing run) does."""
    out = tmp_path / "r"
    assert main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1", "--out", str(out),
                 "--quiet"]) == 0
    capsys.readouterr()
    code = main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "3000000", "--i-know",
                 "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "a run already exists there" in err and "--i-know" not in err


def test_help_documents_i_know_and_fail_fast(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--i-know" in text and "--fail-fast N" in text and f"at most {MAX_K}" in text


@pytest.mark.parametrize(("flag", "value"), [("--fail-fast", "-1"), ("--fail-fast", "five"), ("--fail-fast", "2.5")])
def test_bad_fail_fast_is_a_clear_error(flag: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", flag, value])
    err = capsys.readouterr().err
    assert code == 2 and flag in err and "Traceback" not in err


# --- the plan is streamed ----------------------------------------------------------------------------------------


def _meta(items: list[LoadedScenario], k: int) -> RunMeta:
    return RunMeta(run_id="stream", harness_version=HARNESS_VERSION, model="scripted:reference",
                   scenarios=[ScenarioRef(id=s.scenario.id, path=str(s.path), sha256=s.sha256) for s in items],
                   k=k, seed=0, created_at=0.0)


async def _run_until(store: RunStore, items: list[LoadedScenario], meta: RunMeta, stop_after: int,
                     concurrency: int) -> tuple[int, int]:
    """run_batch until ``stop_after`` encounters finished, then cancel it as Ctrl-C does; the most asyncio tasks
    alive at any progress callback, and how many encounters finished."""
    peak = 0
    seen = 0
    runner: asyncio.Task[Any] | None = None

    def progress(done: int, total: int, rec: EncounterRecord) -> None:
        nonlocal peak, seen
        peak = max(peak, len(asyncio.all_tasks()))
        seen += 1
        if seen == stop_after and runner is not None:
            runner.cancel()

    runner = asyncio.create_task(run_batch(store, items, ReferenceAgent(), TextChannel(), meta,
                                           concurrency=concurrency, progress=progress))
    with pytest.raises(asyncio.CancelledError):
        await runner
    return peak, seen


async def test_the_plan_is_streamed_not_materialised(tmp_path: Path, library: list[LoadedScenario]) -> None:
    """K = 100,000: tasks alive stay at the pool size (the old runner made one task per planned pair), the
    events still plan the whole run, a cancelled run keeps what finished, and a resume continues after it."""
    items = [s for s in library if s.scenario.id in ("viral_uri", "acs_chest_pain")]
    meta = _meta(items, 100_000)
    store = RunStore.create(tmp_path / "r", meta)
    peak, seen = await _run_until(store, items, meta, stop_after=12, concurrency=3)
    records, _ = store.load_records()
    # 3 workers, each with the scoring task of its last encounter and that task's result write (pipelined), and
    # the keeping of its newest conversation in unscored.jsonl and that write; this test's task and the runner's:
    # bounded by the pool, not by the 200,000 planned pairs
    assert peak <= 3 * 5 + 2, peak
    assert seen >= 12 and len(records) == seen and all(r.status == "ok" for r in records.values())
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["completed"] == seen
    # in plan order: the first scenario's first pairs (3 were in flight when the run was cancelled)
    assert {sid for sid, _ in records} == {items[0].scenario.id} and max(k for _, k in records) < seen + 3
    events, _ = read_events(store.events_path)
    first = next(e for e in events if e.type == "run_started")
    assert first.total == 200_000 and first.already_done == 0
    assert events[-1].type == "run_finished" and events[-1].interrupted

    peak, again = await _run_until(store, items, meta, stop_after=5, concurrency=2)  # a resume of the same run
    resumed = [e for e in read_events(store.events_path)[0] if e.type == "run_started"][-1]
    assert resumed.already_done == seen and resumed.resumed and peak <= 5 * 2 + 2
    lines = results(tmp_path / "r")
    keys = [(x["scenario_id"], x["k"]) for x in lines]
    assert len(keys) == len(set(keys)) == seen + again  # nothing run twice


async def test_the_next_encounter_talks_to_the_agent_while_the_last_one_is_scored(
        tmp_path: Path, library: list[LoadedScenario], monkeypatch: pytest.MonkeyPatch) -> None:
    """Scoring and the fsync'd write are off the agent's critical path (issue 17): with one worker, encounter k=0's
    scoring waits until encounter k=1 has made its first agent call. A runner that scores before taking the next
    encounter never makes that call, and k=0 ends as "scoring failed". Every record is kept, in plan order."""
    import threading

    import scorers._conversation as scoring_module
    from sim.records import encounter_seed

    items = [s for s in library if s.scenario.id == "viral_uri"]
    meta = _meta(items, 3)
    second = encounter_seed(meta.seed, "viral_uri", 1)
    called = threading.Event()
    real = scoring_module._score_and_evaluate

    def scoring(result: Any, scenario: Any, names: list[str]) -> Any:
        if result.k == 0 and not called.wait(30):
            raise AssertionError("encounter k=1 made no agent call while k=0 was scored")
        return real(result, scenario, names)

    class Watching(ReferenceAgent):
        async def respond(self, request: Any) -> Any:
            if request.seed == second:
                called.set()
            return await super().respond(request)

    monkeypatch.setattr(scoring_module, "_score_and_evaluate", scoring)
    store = RunStore.create(tmp_path / "r", meta)
    summary = await run_batch(store, items, Watching(), TextChannel(), meta, concurrency=1, progress=None)
    assert summary.completed == 3 and summary.errors == 0
    assert [x["k"] for x in results(tmp_path / "r")] == [0, 1, 2]
    assert all(x["status"] == "ok" for x in results(tmp_path / "r"))


async def test_a_batch_hands_the_gil_back_to_the_event_loop_quickly_and_restores_the_interval_after(
        tmp_path: Path, library: list[LoadedScenario]) -> None:
    """A scoring thread that holds the GIL keeps the loop from the next agent reply for up to the switch interval:
    inside a batch it is at most ``SWITCH_INTERVAL_S`` (0.5 ms, not Python's 5 ms), and afterwards it is again
    what it was, also when the batch raised. What the process held before the batch is frozen out of the cyclic
    garbage collector during it (a full collection does not walk it), and unfrozen after."""
    import gc

    from sim.runner import SWITCH_INTERVAL_S

    seen: list[float] = []
    frozen: list[int] = []
    frozen_before = gc.get_freeze_count()

    class Watching(ReferenceAgent):
        async def respond(self, request: Any) -> Any:
            seen.append(sys.getswitchinterval())
            frozen.append(gc.get_freeze_count())
            return await super().respond(request)

    items = [s for s in library if s.scenario.id == "viral_uri"]
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    try:
        store = RunStore.create(tmp_path / "r", _meta(items, 2))
        summary = await run_batch(store, items, Watching(), TextChannel(), _meta(items, 2), concurrency=2,
                                  progress=None)
        assert summary.completed == 2
        assert seen and max(seen) <= SWITCH_INTERVAL_S < 0.005
        assert sys.getswitchinterval() == 0.005
        assert min(frozen) > frozen_before + 10_000  # the modules, the lexicon, the scenarios ...
        assert gc.get_freeze_count() == frozen_before

        class Refused(ReferenceAgent):
            async def respond(self, request: Any) -> Any:
                raise AgentError("connection refused", kind="connection_refused")

        with pytest.raises(EndpointUnusable):  # the fail-fast check stops the batch: it raises out of run_batch
            await run_batch(RunStore.create(tmp_path / "b", _meta(items, 3)), items, Refused(), TextChannel(),
                            _meta(items, 3), concurrency=1, progress=None, fail_fast=1)
        assert sys.getswitchinterval() == 0.005 and gc.get_freeze_count() == frozen_before
    finally:
        sys.setswitchinterval(before)


def test_a_ctrl_c_while_run_reads_its_flags_says_nothing_was_saved(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The signal-at-any-moment tests once ended with a bare "interrupted.": the interrupt came after the command
    had started but before `run` had read its flags. That moment is the run command's too."""
    from sim.cli import _run_command

    def interrupted(args: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(_run_command.RunOptions, "from_namespace", staticmethod(interrupted))
    code = main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 130 and "Traceback" not in err
    assert err.strip().splitlines()[-1] == "interrupted before the run directory was made; nothing was saved."
    assert not (tmp_path / "r").exists()


# --- fail fast ---------------------------------------------------------------------------------------------------


def _run_endpoint(url: str, out: Path, *extra: str, k: int = 10, scenarios: str = "viral_uri,simple_uti") -> int:
    os.environ["ENCSIM_LIMITS_KEY"] = KEY
    try:
        return main(["run", "--model", "gpt-4o-mini", "--base-url", url, "--api-key-env", "ENCSIM_LIMITS_KEY",
                     "--scenarios", scenarios, "--k", str(k), "--max-turns", "4", "--out", str(out), "--no-progress",
                     *extra])
    finally:
        del os.environ["ENCSIM_LIMITS_KEY"]


def test_a_refused_connection_stops_the_run_early(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    out = tmp_path / "r"
    code = _run_endpoint(url, out, "--concurrency", "2", "--fail-fast", "3")
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    (line,) = [x for x in err.splitlines() if x.startswith("error:")]
    assert f"--base-url {url}: connection refused on the first 3 agent calls" in line
    assert f"encsim run --resume {out}" in line and "Start the server" in line
    assert results(out) == []  # nothing about the model was learnt; a plain --resume runs everything
    assert started(out) <= 3 + 2 < 20  # far from the 20 planned encounters
    assert json.loads((out / "summary.json").read_text())["errors"] == 0


def test_a_refused_key_stops_the_run_after_the_first_calls(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r"
    with FakeChatServer(default=("status", 401, {})) as server:
        code = _run_endpoint(server.base_url, out)  # defaults: --fail-fast 5, --concurrency 4
        requests = len(server.requests)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and KEY not in err
    assert "--api-key-env ENCSIM_LIMITS_KEY" in err and "HTTP 401" in err and "first 5 agent calls" in err
    assert "export ENCSIM_LIMITS_KEY=" in err and f"encsim run --resume {out}" in err
    assert 5 <= requests <= 5 + 4 - 1  # the five that decided it, and at most three more in flight; 20 planned
    assert results(out) == []


def test_a_404_model_names_model_and_base_url(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r"
    with FakeChatServer(default=("status", 404, {})) as server:
        code = _run_endpoint(server.base_url, out, "--concurrency", "1")
        requests = len(server.requests)
    err = capsys.readouterr().err
    assert code == 2 and requests == 5
    assert "--model gpt-4o-mini / --base-url" in err and "HTTP 404" in err and "start a new run" in err


def test_every_call_of_a_short_plan_refused_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One encounter planned, fewer calls than --fail-fast: still every call failed the same fatal way."""
    out = tmp_path / "r"
    with FakeChatServer(default=("status", 403, {})) as server:
        code = _run_endpoint(server.base_url, out, k=1, scenarios="viral_uri")
    err = capsys.readouterr().err
    assert code == 2 and "every agent call of the run (1)" in err and "HTTP 403" in err


def test_different_failures_do_not_stop_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r"
    script: list[tuple[Any, ...]] = [("status", 401, {}), ("status", 404, {})]
    with FakeChatServer(script=script, default=("status", 401, {})) as server:
        code = _run_endpoint(server.base_url, out, "--concurrency", "1", k=3)
        requests = len(server.requests)
    err = capsys.readouterr().err
    assert code == 3 and requests == 6  # every planned encounter tried, each recorded as an error
    recs = results(out)
    assert len(recs) == 6 and all(r["status"] == "error" for r in recs)
    assert "HTTP 404" in recs[1]["error"] and "6 encounter(s) ended in an error" in err


def test_a_success_among_the_first_calls_keeps_the_run_going(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The first call is refused (held while the check is undecided), the second succeeds: the check is off, the
    held encounter is recorded as the error it is, and the rest of the run goes on."""
    out = tmp_path / "r"
    with FakeChatServer(script=[("status", 401, {})], reply=clinician) as server:
        code = _run_endpoint(server.base_url, out, "--concurrency", "1", k=2, scenarios="viral_uri")
    err = capsys.readouterr().err
    assert code == 3, err
    recs = results(out)
    assert [(r["k"], r["status"]) for r in recs] == [(0, "error"), (1, "ok")]
    assert "HTTP 401" in recs[0]["error"] and "[1/2] viral_uri k=0: ERROR" in err


def test_fail_fast_0_records_every_refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r"
    with FakeChatServer(default=("status", 401, {})) as server:
        code = _run_endpoint(server.base_url, out, "--fail-fast", "0", k=4, scenarios="viral_uri")
        requests = len(server.requests)
    capsys.readouterr()
    assert code == 3 and requests == 4 and len(results(out)) == 4


def test_fatal_cause_reads_the_agent_errors_kind() -> None:
    assert fatal_cause(AgentError("HTTP 401", kind="http_401")) == "http_401"
    assert fatal_cause(AgentError("refused", kind="connection_refused")) == "connection_refused"
    assert fatal_cause(AgentError("timed out", kind="timeout", retryable=True)) is None
    assert fatal_cause(AgentError("HTTP 400", kind="http_400")) is None
    assert fatal_cause(AgentError("TLS", kind="tls")) is None  # a certificate problem is not in FATAL_KINDS
    assert fatal_cause(RuntimeError("boom")) is None and fatal_cause(None) is None


# --- signals mid-run -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_mid_run_saves_what_finished_and_says_how_to_resume(tmp_path: Path, sig: signal.Signals) -> None:
    """Against a slow endpoint (0.5 s a call): the signal comes once two encounters are saved; the process exits
    130 / 143 without a traceback, soon, with the saved encounters summarised and the resume command printed."""
    out = tmp_path / "r"
    with FakeChatServer(latency_s=0.5, reply=clinician) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "encsim_entry", "run", "--model", "gpt-4o-mini", "--base-url", server.base_url,
             "--scenarios", "viral_uri", "--k", "40", "--concurrency", "2", "--out", str(out), "--no-progress"],
            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(results(out)) < 2:
            time.sleep(0.05)
        sent = time.monotonic()
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
        took = time.monotonic() - sent
    assert proc.returncode == (130 if sig == signal.SIGINT else 143), stderr
    assert "Traceback" not in stderr and took < 10, (took, stderr)
    assert f"Continue with: encsim run --resume {out}" in stderr
    saved = results(out)
    assert 2 <= len(saved) < 40
    summary = json.loads((out / "summary.json").read_text())
    assert summary["completed"] == len(saved) and summary["errors"] == 0  # the cancelled ones are not errors


@pytest.mark.parametrize("processes", ["0", "2"])
def test_a_run_killed_while_it_scores_keeps_the_finished_conversations_for_resume(tmp_path: Path,
                                                                                   processes: str) -> None:
    """A SIGKILL while finished encounters wait for a judge that does not answer: their conversations are in
    unscored.jsonl, and --resume scores them without asking the agent again, then removes the file. The same
    with the encounters in worker processes (the run process keeps them)."""
    out = tmp_path / "r"
    with FakeChatServer(reply=clinician) as agent, FakeChatServer(latency_s=600, reply=grader) as judge:
        proc = subprocess.Popen(
            [sys.executable, "-m", "encsim_entry", "run", "--model", "llama-3.1-8b-instruct", "--base-url",
             agent.base_url, "--scenarios", "viral_uri", "--k", "5", "--concurrency", "2", "--judge", "gpt-4o",
             "--judge-base-url", judge.base_url, "--out", str(out), "--no-progress", "--processes", processes],
            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True)
        # each worker: its first encounter waits for the judge; its second finishes and waits for the first's
        # scoring; the fifth never starts
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(unscored(out)) < 4 and proc.poll() is None:
            time.sleep(0.05)
        proc.kill()
        _, stderr = proc.communicate(timeout=60)
        kept = unscored(out)
        assert len(kept) == 4 and not results(out), stderr
        kept_seeds = {e["result"]["seed"] for e in kept}
        asked = len(agent.requests)

        judge.latency_s = 0.0
        assert main(["run", "--resume", str(out), "--no-progress"]) == 0

        again = agent.requests[asked:]
        assert again and kept_seeds.isdisjoint(r.get("seed") for r in again)  # only the fifth encounter ran
        saved = {(x["scenario_id"], x["k"]): x for x in results(out)}
        assert len(saved) == 5 and all(x["status"] == "ok" and x["score"]["judge"] for x in saved.values())
        for e in kept:  # scored as it was kept: the same conversation
            assert saved[(e["scenario_id"], e["k"])]["result"]["turns"] == e["result"]["turns"]
        assert not (out / "unscored.jsonl").exists()


def test_unscored_lines_torn_by_a_kill_are_skipped_and_the_next_line_starts_on_its_own(tmp_path: Path) -> None:
    from sim.records import ConversationResult, UnscoredEncounter

    store = RunStore(tmp_path)
    entry = UnscoredEncounter(scenario_id="viral_uri", k=0, result=ConversationResult(
        scenario_id="viral_uri", k=0, seed=1, harness_version=HARNESS_VERSION, model="m", turns=[],
        gathered_info=[], termination="assessment", agent_turns=1, turn_limit=8, started_at=0.0, ended_at=1.0))
    store.keep_unscored(entry)
    with open(tmp_path / "unscored.jsonl", "ab") as fh:  # a write cut short by a kill
        fh.write(entry.model_copy(update={"k": 1}).model_dump_json().encode()[:40])
    assert set(RunStore(tmp_path).load_unscored()) == {("viral_uri", 0, "default")}
    RunStore(tmp_path).keep_unscored(entry.model_copy(update={"k": 2}))
    assert set(RunStore(tmp_path).load_unscored()) == {("viral_uri", 0, "default"), ("viral_uri", 2, "default")}
    with open(tmp_path / "unscored.jsonl", "ab") as fh:  # a whole line that is not a kept conversation
        fh.write(b'{"scenario_id": "viral_uri", "k": 3}\n')
    warned: list[str] = []
    assert len(RunStore(tmp_path, warn=warned.append).load_unscored()) == 2
    path = tmp_path / "unscored.jsonl"  # the torn line, ended by the next write, is a whole line now: named too
    assert warned == [f"{path} line 2: not valid JSON; it is left out and its encounter runs again.",
                      f"{path} line 4: not a kept conversation (result: Field required); it is left out and its "
                      "encounter runs again."]
    RunStore(tmp_path).drop_unscored()
    assert RunStore(tmp_path).load_unscored() == {}


async def test_encounters_are_scored_on_one_thread_not_on_asyncio_s_pool(
        tmp_path: Path, library: list[LoadedScenario], monkeypatch: pytest.MonkeyPatch) -> None:
    """Scoring is pure Python: with asyncio's default pool (up to 6 threads on 2 cores), the encounters of a wave
    that ended together were scored by several threads at once, each taking the GIL from the event loop in turn,
    and the next wave's first requests waited behind them. One scoring thread: at most one scoring at a time, in
    the scoring context, and every encounter still scored."""
    import threading

    import scorers._conversation as scoring_module

    active: list[int] = []
    names: set[str] = set()
    most = 0
    real = scoring_module._score_and_evaluate

    def watched(*args: Any) -> Any:
        nonlocal most
        active.append(1)
        most = max(most, len(active))
        names.add(threading.current_thread().name)
        try:
            time.sleep(0.02)  # a scoring that takes a while: several would overlap on a pool
            return real(*args)
        finally:
            active.pop()

    monkeypatch.setattr(scoring_module, "_score_and_evaluate", watched)
    items = [s for s in library if s.scenario.id in ("viral_uri", "acs_chest_pain")]
    store = RunStore.create(tmp_path / "r", _meta(items, 4))
    summary = await run_batch(store, items, ReferenceAgent(), TextChannel(), _meta(items, 4), concurrency=8,
                              progress=None)
    assert summary.completed == 8 and summary.errors == 0
    assert most == 1 and len(names) == 1 and next(iter(names)).startswith("encsim-scoring")
    assert all(r.status == "ok" and r.score is not None for r in store.load_records()[0].values())
