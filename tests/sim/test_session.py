"""RunSession: the one lifecycle of a run (issue 15, item 3): events in order, summary and reports on the way out
whatever ends the run, finished_at only for a run that was not cut short, and a record being written when the
task is cancelled is still saved and counted."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from scenarios import resolve
from sim.records import EncounterRecord, Event, RunFinished, RunMeta, ScenarioRef, Summary, read_events
from sim.session import RunSession
from sim.store import RunStore


def _meta() -> RunMeta:
    return RunMeta(run_id="r", harness_version="t", model="scripted:reference", k=2, seed=0, created_at=0.0,
                   scenarios=[ScenarioRef(id="viral_uri", path="viral_uri.yaml", sha256="0" * 64)])


def _error(k: int) -> EncounterRecord:
    return EncounterRecord(scenario_id="viral_uri", k=k, status="error", error="AgentError: timed out",
                           recorded_at=1.0)


def _session(tmp_path: Path, **kw: Any) -> tuple[RunSession, RunStore, RunMeta]:
    store = RunStore.create(tmp_path / "run", meta := _meta())
    loaded = resolve(["viral_uri"])
    return RunSession(store, meta, loaded, **kw), store, meta


def _events(store: RunStore) -> list[Event]:
    events, bad = read_events(store.events_path)
    assert bad == 0
    return events


def _kinds(store: RunStore) -> list[str]:
    return [e.type for e in _events(store)]


async def test_a_whole_run_writes_every_step_in_order(tmp_path: Path) -> None:
    seen: list[int] = []
    session, store, meta = _session(tmp_path, on_saved=lambda rec: seen.append(rec.k))
    async with session:
        session.started(scenario_ids=["viral_uri"], k=2, total=2)
        for k in (0, 1):
            session.encounter_started("viral_uri", k)
            assert await session.record(_error(k))
    assert _kinds(store) == ["run_started", "encounter_started", "encounter_failed", "encounter_started",
                             "encounter_failed", "run_finished"]
    assert seen == [0, 1] and session.saved == 2
    assert isinstance(session.summary, Summary) and session.summary.errors == 2
    assert store.layout.summary.is_file() and store.layout.report.is_file() and store.layout.report_html.is_file()
    assert store.read_meta().finished_at is not None
    finished = _events(store)[-1]
    assert isinstance(finished, RunFinished) and not finished.interrupted


async def test_a_cancelled_run_is_summarised_but_not_marked_finished(tmp_path: Path) -> None:
    session, store, meta = _session(tmp_path)
    entered = asyncio.Event()

    async def run() -> None:
        async with session:
            session.started(scenario_ids=["viral_uri"], k=2, total=2)
            await session.record(_error(0))
            entered.set()
            await asyncio.sleep(3600)

    task = asyncio.create_task(run())
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert session.summary is not None and session.summary.completed + session.summary.errors == 1
    assert store.layout.summary.is_file()
    assert store.read_meta().finished_at is None  # a resume continues it
    finished = _events(store)[-1]
    assert isinstance(finished, RunFinished) and finished.interrupted


async def test_a_run_cut_short_by_its_caller_is_not_marked_finished(tmp_path: Path) -> None:
    session, store, _ = _session(tmp_path)
    async with session:
        session.started(scenario_ids=["viral_uri"], k=2, total=2)
        session.cut_short = True  # the fail-fast check tripped
    assert store.read_meta().finished_at is None
    finished = _events(store)[-1]
    assert isinstance(finished, RunFinished) and finished.interrupted


async def test_a_record_being_written_when_cancelled_is_saved_and_counted(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    session, store, _ = _session(tmp_path, on_saved=lambda rec: seen.append(rec.k))
    writing, release = threading.Event(), threading.Event()
    append = store.append

    def slow_append(rec: EncounterRecord) -> None:
        writing.set()
        release.wait(30)
        append(rec)

    monkeypatch.setattr(store, "append", slow_append)

    async def run() -> None:
        async with session:
            await session.record(_error(0))

    task = asyncio.create_task(run())
    await asyncio.to_thread(writing.wait, 30)
    task.cancel()
    await asyncio.sleep(0)  # the cancellation reaches record() while the line is being written
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == [0] and session.saved == 1
    records, _ = store.load_records()
    assert list(records) == [("viral_uri", 0)]
    assert "encounter_failed" in _kinds(store)


async def test_a_live_run_without_a_call_is_summarised_without_an_aggregate(tmp_path: Path) -> None:
    session, store, _ = _session(tmp_path)
    rec = EncounterRecord(scenario_id="viral_uri", k=0, status="error", error="no caller joined", recorded_at=1.0)
    async with session:
        await session.record(rec)
        session.no_call(rec)
    assert session.summary is not None and session.summary.errors == 1 and session.summary.aggregate is None
    assert session.summary.error_reasons == {"no caller joined": 1}
    assert json.loads(store.layout.summary.read_text())["errors"] == 1
