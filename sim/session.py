"""One run's lifecycle on its run directory: ``RunSession``.

Every way of running encounters (a batch of library encounters, imaging items and replays through
``sim.runner.run_batch``, a live call through ``sim.live.run_live``) goes through the same steps, in the
same order, here::

    async with RunSession(store, meta, scenarios) as session:   # opens the event log
        session.started(total=..., ...)          # run_started
        session.encounter_started(scenario_id, k)  # encounter_started
        ...                                      # the encounter writes its own events to session.events
        await session.keep_unscored(entry)       # unscored.jsonl: a finished conversation, before its scoring
        await session.record(rec)                # results.jsonl (fsync'd, off the loop), encounter_finished
    session.summary                              # summary.json, report.md, report.html, run_finished

On the way out, whether the body finished, raised or was cancelled (Ctrl-C, SIGTERM), the session summarises
what was recorded (``sim.summary.summarise`` over the run's scenarios writes summary.json and both reports; a
live run in which nobody called, marked with ``no_call``, is summarised by ``sim.summary.summarise_no_call``),
stamps ``finished_at`` in run.json only when the run was not cut short, appends ``run_finished`` (with
``interrupted``) and closes the event log.
A record whose write has started is always completed and counted, even when the task is cancelled while it
is written.

The session does not open or create the store (a new run, ``--resume`` and ``report`` take the lock in their
own ways: see ``sim.store``) and does not close it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from types import TracebackType

from scenarios import LoadedScenario
from sim.records import (
    EncounterFailed,
    EncounterFinished,
    EncounterRecord,
    EncounterStarted,
    EventLog,
    RunFinished,
    RunMeta,
    RunStarted,
    Summary,
    UnscoredEncounter,
)
from sim.store import RunStore
from sim.summary import summarise, summarise_no_call


def finished_event(rec: EncounterRecord) -> EncounterFinished | EncounterFailed:
    """The event that says how an encounter ended (scored, not applicable, or an error)."""
    if rec.status == "not_applicable":
        return EncounterFinished(scenario_id=rec.scenario_id, k=rec.k, composite=None, termination="not_applicable")
    if rec.score is not None:
        return EncounterFinished(scenario_id=rec.scenario_id, k=rec.k, composite=rec.score.composite,
                                 termination=rec.result.termination if rec.result else "",
                                 safety_failures=rec.score.safety_failures)
    return EncounterFailed(scenario_id=rec.scenario_id, k=rec.k, error=rec.error or "")


class RunSession:
    """The lifecycle of one run on ``store`` (see the module docstring).

    Args:
        store: The run directory, already created or opened (and locked) by the caller.
        meta: The run's metadata; ``finished_at`` is set and run.json rewritten when the run ends uncut.
        scenarios: The run's scenarios, which the summary is computed over (on the way out, once).
        on_saved: Called with each record once its line is written (progress counters and lines).
    """

    def __init__(self, store: RunStore, meta: RunMeta, scenarios: list[LoadedScenario], *,
                 on_saved: Callable[[EncounterRecord], None] | None = None) -> None:
        self.store = store
        self.meta = meta
        self.scenarios = scenarios
        self._no_call: EncounterRecord | None = None
        self._on_saved = on_saved
        self.events = EventLog(store.events_path)
        self.saved = 0
        self.cut_short = False
        """Set by the caller when the run stopped early for a reason of its own (the fail-fast check)."""
        self.summary: Summary | None = None

    async def __aenter__(self) -> RunSession:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        interrupted = exc_type is not None and issubclass(exc_type, (asyncio.CancelledError, KeyboardInterrupt))
        try:
            # on the loop, as before: a signal cannot cut it in two
            self.summary = summary = summarise(self.store, self.scenarios, self.meta) if self._no_call is None \
                else summarise_no_call(self.store, self.meta, self._no_call)
            if not (interrupted or self.cut_short):
                self.meta.finished_at = time.time()
                self.store.write_meta(self.meta)
            self.events(RunFinished(aggregate=summary.aggregate, gate_triggered=summary.safety_gate.triggered,
                                    completed=summary.completed, errors=summary.errors,
                                    interrupted=interrupted or self.cut_short))
        finally:
            self.events.close()

    def no_call(self, rec: EncounterRecord) -> None:
        """A live run in which nobody called (``rec`` is its one error): summarised without an aggregate."""
        self._no_call = rec

    def started(self, *, scenario_ids: list[str], k: int, total: int, resumed: bool = False,
                already_done: int = 0, planned: dict[str, int] | None = None) -> None:
        """The run starts (or resumes): ``run_started`` (``planned``: a persona sweep's encounters per scenario)."""
        self.events(RunStarted(run_id=self.meta.run_id, model=self.meta.model, scenarios=scenario_ids, k=k,
                               total=total, resumed=resumed, already_done=already_done, planned=planned or {}))

    def encounter_started(self, scenario_id: str, k: int) -> None:
        """An encounter starts: ``encounter_started``."""
        self.events(EncounterStarted(scenario_id=scenario_id, k=k))

    async def record(self, rec: EncounterRecord) -> bool:
        """Append ``rec`` to results.jsonl (one fsync'd line, written off the event loop) and say how it ended.

        Returns:
            True once the line is written. A cancellation while it is written waits for the write (milliseconds),
            counts it and then propagates; a write that failed raises its error.
        """
        write = asyncio.ensure_future(asyncio.to_thread(self.store.append, rec))
        try:
            await _finish(write)
        finally:
            if write.done() and not write.cancelled() and write.exception() is None:
                self.saved += 1
                self.events(finished_event(rec))
                if self._on_saved is not None:
                    self._on_saved(rec)
        return True

    async def keep_unscored(self, entry: UnscoredEncounter) -> None:
        """Append a finished conversation to unscored.jsonl before it is scored (fsync'd, off the event loop).

        A cancellation while it is written waits for the write, then propagates, as ``record`` does.
        """
        await _finish(asyncio.ensure_future(asyncio.to_thread(self.store.keep_unscored, entry)))


async def _finish(write: asyncio.Future[None]) -> None:
    """Await a write that has started: a cancellation waits for it to end (milliseconds), then propagates."""
    try:
        await asyncio.shield(write)
    except asyncio.CancelledError:  # the line is being written whatever happens: let it end, then stop
        while not write.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(write)
        raise
