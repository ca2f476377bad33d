"""The run directory (issue 14): reading results.jsonl says what it skips and never rewrites the file; one
writer per run directory (an advisory lock), so two `--resume`s of one run cannot run its encounters twice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sim.records import ConfigError, EncounterRecord, RunLayout, RunMeta, ScenarioRef
from sim.store import RunStore
from tests.adversarial.conftest import ROOT, SECRET, encsim_in_process
from tests.fakeserver import FakeChatServer

ENV = {"ENCSIM_TEST_KEY": SECRET}


def meta() -> RunMeta:
    return RunMeta(run_id="r", harness_version="t", model="scripted:reference", k=3, seed=0, created_at=0.0,
                   scenarios=[ScenarioRef(id="viral_uri", path="viral_uri.yaml", sha256="0" * 64)])


def record(k: int, status: str = "error") -> str:
    return EncounterRecord(scenario_id="viral_uri", k=k, status=status, error="AgentError: agent turn 2: timed out",
                           recorded_at=1.0).model_dump_json()


def store_with(tmp_path: Path, content: bytes) -> RunStore:
    store = RunStore.create(tmp_path / "run", meta())
    store.close()
    store.results_path.write_bytes(content)
    return RunStore.open(store.root)


def test_a_bad_line_in_the_middle_is_reported_with_its_number(tmp_path: Path) -> None:
    content = "\n".join([record(0), '{"scenario_id": "viral_uri", "k": 1, "status": "ok", "recorded_at": 1.0',
                         '{"scenario_id": "viral_uri", "k": "one", "status": "ok", "recorded_at": 1.0}',
                         record(2), ""]).encode()
    seen: list[str] = []
    store = store_with(tmp_path, content)
    store.warn = seen.append
    records, bad = store.load_records()
    assert sorted(records) == [("viral_uri", 0), ("viral_uri", 2)] and bad == 2
    assert [(s.line, s.reason.split(" (")[0]) for s in store.skipped] == [(2, "not valid JSON"),
                                                                         (3, "not an encounter record")]
    assert "k: Input should be a valid integer" in store.skipped[1].reason
    assert seen == store.notices and len(seen) == 2
    assert seen[0].startswith(f"{store.results_path} line 2: skipped, not valid JSON")
    store.load_records()  # summarise reads again: no second warning
    assert len(seen) == 2
    assert store.results_path.read_bytes() == content


def test_a_torn_last_line_is_set_aside_by_readers_and_the_file_left_as_it_is(tmp_path: Path) -> None:
    content = (record(0) + "\n" + record(1) + "\n" + record(2)[:57]).encode()
    store = store_with(tmp_path, content)
    records, bad = store.load_records()
    assert sorted(k for _, k in records) == [0, 1] and bad == 0 and store.torn_line == 3
    assert "line 3: the last line is cut short" in store.notices[0] and "--resume" in store.notices[0]
    assert store.results_path.read_bytes() == content


def test_a_writer_moves_a_torn_last_line_to_a_side_file_and_says_so(tmp_path: Path) -> None:
    torn = record(2)[:57].encode()
    content = (record(0) + "\n" + record(1) + "\n").encode() + torn
    store = store_with(tmp_path, content)
    store.close()
    writer = RunStore.open(store.root, lock="encsim run --resume", append=True)
    try:
        assert writer.results_path.read_bytes() == content[: -len(torn)]
        assert writer.torn_moved_to is not None and writer.torn_moved_to.name.startswith("results.jsonl.torn-")
        assert writer.torn_moved_to.read_bytes() == torn
        assert f"line 3: the last line was cut short (a run killed mid-write); it was moved to " \
               f"{writer.torn_moved_to}" in writer.notices[0]
    finally:
        writer.close()


def test_a_complete_last_line_without_its_line_end_is_kept(tmp_path: Path) -> None:
    content = (record(0) + "\n" + record(1)).encode()
    store = store_with(tmp_path, content)
    assert sorted(k for _, k in store.load_records()[0]) == [0, 1] and not store.notices
    writer = RunStore.open(store.root, lock="encsim run --resume", append=True)
    writer.close()
    assert store.results_path.read_bytes() == content + b"\n" and not writer.notices
    assert not list(store.root.glob("results.jsonl.torn-*"))


def test_a_second_writer_is_refused_naming_the_directory_and_the_pid(tmp_path: Path) -> None:
    first = RunStore.create(tmp_path / "run", meta())
    try:
        holder = json.loads(first.layout.lock.read_text())
        assert holder["pid"] == os.getpid() and holder["command"] == "encsim run"
        with pytest.raises(ConfigError) as info:
            RunStore.open(first.root, lock="encsim run --resume", append=True)
        message = str(info.value)
        assert message.startswith(f"{first.root}: `encsim run --resume` cannot start") and "\n" not in message
        assert f"pid {os.getpid()}: `encsim run`" in message and "encsim watch" in message
        RunStore.open(first.root).load_records()  # readers take no lock
    finally:
        first.close()
    RunStore.open(first.root, lock="encsim run --resume").close()  # released by close()


def test_a_lock_left_by_a_dead_process_does_not_block(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path / "run", meta())
    store.close()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    store.layout.lock.write_text(json.dumps({"pid": int(dead.stdout), "command": "encsim run"}))
    RunStore.open(store.root, lock="encsim run --resume", append=True).close()


def test_report_on_a_run_being_written_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert encsim_in_process("run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1",
                             "--out", str(out), "--no-progress").code == 0
    before = (out / "summary.json").read_bytes()
    writer = RunStore.open(out, lock="encsim run --resume", append=True)
    try:
        outcome = encsim_in_process("report", str(out))
    finally:
        writer.close()
    assert outcome.code == 2 and "Traceback" not in outcome.output
    assert f"{out}: `encsim report` cannot start" in outcome.stderr and f"pid {os.getpid()}" in outcome.stderr
    assert (out / "summary.json").read_bytes() == before
    assert encsim_in_process("report", str(out)).code == 0  # once the writer is gone


def _wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_two_concurrent_resumes_do_not_run_the_pending_encounters_twice(tmp_path: Path) -> None:
    """A `--resume` in another process (kept busy by a slow loopback model) holds the run; a second `--resume`
    and a `report` are refused naming the pid; the first finishes every pending encounter exactly once. Without
    the lock both resumes ran all three pending encounters (six lines for three pairs)."""
    server = FakeChatServer(default=("ok", "Do you have a fever? Any cough or sore throat?")).start()
    try:
        out = tmp_path / "run"
        created = encsim_in_process("run", "--model", "m", "--base-url", server.base_url, "--api-key-env",
                                    "ENCSIM_TEST_KEY", "--scenarios", "viral_uri", "--k", "3", "--max-turns", "2",
                                    "--out", str(out), "--no-progress", env=ENV)
        assert created.code in (0, 3), created.output
        (out / "results.jsonl").write_bytes(b"")  # every pair pending again
        server.latency_s = 10.0  # the first resume's first call waits here while the second one tries
        first = subprocess.Popen([sys.executable, "-m", "sim.cli", "run", "--resume", str(out), "--no-progress",
                                  "--concurrency", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env={**os.environ, "PYTHONPATH": str(ROOT), **ENV})
        try:
            def holds() -> bool:
                text = RunLayout(out).lock.read_text() if RunLayout(out).lock.exists() else ""
                return f'"pid": {first.pid}' in text and len(server.requests) > 0

            _wait_for(lambda: holds() or first.poll() is not None, 120, "the first resume to take the lock")
            assert first.poll() is None, first.communicate()
            second = encsim_in_process("run", "--resume", str(out), "--no-progress", env=ENV)
            report = encsim_in_process("report", str(out), env=ENV)
            server.latency_s = 0.0
            stdout, stderr = first.communicate(timeout=300)
        finally:
            if first.poll() is None:
                first.kill()
        assert second.code == 2 and "Traceback" not in second.output, second.output
        assert f"{out}: `encsim run --resume` cannot start" in second.stderr
        assert f"pid {first.pid}: `encsim run --resume`" in second.stderr
        assert report.code == 2 and f"pid {first.pid}" in report.stderr, report.output
        assert first.returncode in (0, 3), stderr
        lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
        assert sorted(r["k"] for r in lines) == [0, 1, 2]
    finally:
        server.stop()


# --- the records a store has read and written are not read again (issue 17) ---------------------------------------


def _ok(k: int, text: str = "It started yesterday.") -> EncounterRecord:
    from sim.records import ConversationResult, Turn
    result = ConversationResult(scenario_id="viral_uri", k=k, seed=k, harness_version="t", model="m",
                                turns=[Turn(index=0, speaker="patient", text=text, started_at=0.0, ended_at=0.0)],
                                gathered_info=[], termination="assessment", agent_turns=1, turn_limit=8,
                                started_at=0.0, ended_at=0.0)
    return EncounterRecord(scenario_id="viral_uri", k=k, status="error", error="x", result=result, recorded_at=1.0)


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = EncounterRecord.model_validate_json

    def counting(data: str | bytes, **kw: object) -> EncounterRecord:
        calls[0] += 1
        return real(data, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(EncounterRecord, "model_validate_json", counting)
    return calls


def test_what_a_store_read_and_appended_is_not_parsed_again_and_equals_a_fresh_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = RunStore.create(tmp_path / "run", meta())
    assert store.load_records() == ({}, 0)  # the run starts (no results.jsonl yet)
    for k in range(3):
        store.append(_ok(k))
    calls = _count_parses(monkeypatch)
    records, bad = store.load_records()  # the end-of-run summary's read
    assert calls[0] == 0 and bad == 0
    fresh, _ = RunStore(store.root).load_records()
    assert calls[0] == 3
    assert {key: r.model_dump() for key, r in records.items()} == {key: r.model_dump() for key, r in fresh.items()}


def test_a_line_appended_by_another_writer_is_seen(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path / "run", meta())
    store.append(_ok(0))
    store.load_records()
    other = RunStore(store.root)  # another process's view (a resume after this one stopped, a second reader)
    other.append(_ok(1))
    assert sorted(store.load_records()[0]) == [("viral_uri", 0), ("viral_uri", 1)]
    store.append(_ok(2))  # the store no longer knows the whole file: it reads it again
    assert sorted(store.load_records()[0]) == [("viral_uri", 0), ("viral_uri", 1), ("viral_uri", 2)]


def test_a_replaced_results_file_of_the_same_size_is_read_again(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path / "run", meta())
    store.append(_ok(0, "aaaa"))
    store.load_records()
    line = store.results_path.read_bytes()
    tmp = store.results_path.with_name("new")
    tmp.write_bytes(line.replace(b"aaaa", b"bbbb"))
    os.replace(tmp, store.results_path)
    records, _ = store.load_records()
    assert records[("viral_uri", 0)].result is not None
    assert records[("viral_uri", 0)].result.turns[0].text == "bbbb"


def test_what_the_store_keeps_of_a_redacted_record_is_the_redacted_line(tmp_path: Path) -> None:
    """A key the agent echoed is [redacted] in the file: the summary and reports, made from what load_records
    returns, must never get the record as it was in memory."""
    from sim.records import register_secret
    register_secret(SECRET)
    store = RunStore.create(tmp_path / "run", meta())
    store.load_records()
    store.append(_ok(0, f"my key is {SECRET}"))
    records, _ = store.load_records()
    text = records[("viral_uri", 0)].result.turns[0].text  # type: ignore[union-attr]
    assert SECRET not in text and "[redacted]" in text
    assert SECRET not in store.results_path.read_text()


def test_a_torn_last_line_is_never_kept_in_memory(tmp_path: Path) -> None:
    content = (record(0) + "\n" + record(1)[:40]).encode()
    store = store_with(tmp_path, content)
    assert sorted(store.load_records()[0]) == [("viral_uri", 0)]
    with open(store.results_path, "ab") as fh:  # the torn line is completed behind the store's back
        fh.write(record(1)[40:].encode() + b"\n")
    assert sorted(store.load_records()[0]) == [("viral_uri", 0), ("viral_uri", 1)]
