"""Local worker processes for batch runs (``encsim run --processes N``): encounters run in N processes.

Why: one Python process runs the whole harness under one GIL. With dozens of encounters at once on a small
machine (concurrency 32 on two cores), the agent calls, the patient and the scoring of the last encounter wait
for each other (the scoring thread that holds the GIL delays the replies that arrive meanwhile by up to the
interpreter's switch interval), so the harness adds time to every turn (``bench/harness_overhead.py``: a ratio
to the ideal of 1.24 in one process against 1.18 with two workers; at concurrency 8 they are equal). With worker
processes, the encounters run where the GIL is their own and the scoring stays in the ``encsim run`` process.

Who does what (the same split as the Ray executor's, ``sim.executors.ray``):

- **The ``encsim run`` process** plans the (scenario, k) pairs and their seeds, hands one encounter at a time
  to the worker with the fewest in flight (``sim.runner.run_batch(remote=ProcessEncounters(...))``), scores
  every encounter that comes back (``scorers.record_for``: evaluators, judges and profile stay here) and is the **only
  writer** of the run directory. Resume, kill-safety, the fail-fast check and the summary are therefore the
  in-process executor's.
- **Each worker** is a spawned process with its own event loop and one agent, built from a picklable
  ``WorkerSpec`` (the API key is read from the environment the worker inherits, never sent). It runs as many
  encounters at once as it is given, through the in-process executor's code path (``sim.runner.run_item``).
- **Streaming**: a worker sends each event of an encounter and the outcome of each agent call as it happens, so
  the dashboard follows a turn at a time and the fail-fast check sees every call at once, as in one process.
  A scenario travels to a worker once (per persona); the result comes back when the encounter ends.
- **Transport**: one Unix socket pair per worker, length-prefixed pickles, asyncio streams on both ends (a write
  never blocks either event loop, so neither side can wait on the other).

Failures:

- An encounter that raises in a worker is recorded as the in-process executor records it (``Type: message``).
- A worker that dies (killed, out of memory) makes its encounters in flight errors that say so ("worker process
  N died (exit code X)"); the other workers take the rest of the plan, and once every worker is gone, every
  further encounter is such an error (``--retry-errors`` runs them again).
- Ctrl-C or SIGTERM reaches the workers too (one process group); they ignore it, and the ``encsim run`` process
  cancels their encounters and stops them on its way out. When that process is killed, each worker reads the end
  of its socket and exits.

Not supported (a ConfigError says so, ``check_supported``): the voice channel (each process would load Piper
and Whisper: use ``--executor ray``, whose voice actors do that once each), ``--model local`` (its server
belongs to the ``encsim run`` process) and ``--patient-model`` (its cache is a file of the run directory).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import itertools
import multiprocessing
import os
import pickle
import signal
import socket
import struct
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from scenarios import LoadedScenario
from sim.agents.base import Agent
from sim.executors.base import EncounterLost
from sim.executors.worker_spec import WorkerSpec, check_runs_outside, make_worker_agent, run_on_worker
from sim.fail_fast import CallObserver
from sim.records import AgentError, ConfigError, ConversationResult, RunMeta

MAX_PROCESSES = 64
START_TIMEOUT_S = 120.0  # a worker that has not built its agent by then is a failed start
STOP_TIMEOUT_S = 10.0  # a worker still alive this long after "stop" is killed
_FRAME = struct.Struct("!I")


def check_processes(value: str) -> int:
    """``--processes``: a whole number from 0 to ``MAX_PROCESSES``; else a one-paragraph ConfigError."""
    n = int(value) if value.strip().isdigit() else -1
    if not 0 <= n <= MAX_PROCESSES:
        raise ConfigError(f"--processes {value[:40]!r}: give the number of worker processes, a whole number from 0 "
                          f"to {MAX_PROCESSES} (0, the default, runs every encounter in this process; 2 suits a "
                          f"2-core machine at --concurrency 16 or more).")
    return n


def check_supported(meta: RunMeta) -> None:
    """A ConfigError naming the flag when the run cannot use worker processes (module docstring)."""
    if meta.channel == "voice":
        raise ConfigError("--processes with --mode voice: every worker process would load Piper and Whisper. Use "
                          "--executor ray for voice runs (its voice actors load them once each, --ray-actors N), or "
                          "drop --processes.")
    check_runs_outside(meta, "--processes", "drop --processes")


def _frame(message: tuple[Any, ...]) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _FRAME.pack(len(data)) + data


def _send(writer: asyncio.StreamWriter, message: tuple[Any, ...]) -> None:
    writer.write(_frame(message))


class _Outbox:
    """A worker's messages, written together once per turn of its event loop (one system call, not one each)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        self._frames: list[bytes] = []

    def __call__(self, message: tuple[Any, ...]) -> None:
        if not self._frames:
            asyncio.get_running_loop().call_soon(self.flush)
        self._frames.append(_frame(message))

    def flush(self) -> None:
        if self._frames:
            data, self._frames = b"".join(self._frames), []
            self.writer.write(data)


async def _receive(reader: asyncio.StreamReader) -> tuple[Any, ...]:
    (size,) = _FRAME.unpack(await reader.readexactly(_FRAME.size))
    message: tuple[Any, ...] = pickle.loads(await reader.readexactly(size))
    return message


# ---------------------------------------------------------------------------------------------- the worker side


async def _run_one(out: _Outbox, agent: Agent, spec: WorkerSpec, job: int, item: LoadedScenario, k: int,
                   seed: int) -> None:
    result, error = await run_on_worker(agent, spec, item, k, seed, channel=None,
                                        sink=lambda event: out(("event", job, event)),
                                        tell=lambda call: out(("call", job, call)))
    out(("done", job, result) if error is None else ("error", job, error))
    out.flush()
    await out.writer.drain()


def _forget(tasks: dict[int, asyncio.Task[None]], job: int, _task: asyncio.Task[None]) -> None:
    tasks.pop(job, None)


async def _serve(fd: int, spec: WorkerSpec) -> None:
    reader, writer = await asyncio.open_unix_connection(sock=socket.socket(fileno=fd))
    try:
        agent = await make_worker_agent(spec)
    except Exception as exc:  # told to the encsim run process, which says it in one paragraph
        _send(writer, ("fatal", f"{type(exc).__name__}: {exc}"))
        await writer.drain()
        writer.close()
        return
    gc.freeze()  # what was loaded so far (modules, the lexicon, the agent) is never garbage: no full GC walks it
    _send(writer, ("ready", os.getpid()))
    out = _Outbox(writer)
    items: dict[int, LoadedScenario] = {}
    tasks: dict[int, asyncio.Task[None]] = {}
    try:
        while True:
            try:
                message = await _receive(reader)
            except (asyncio.IncompleteReadError, ConnectionError):  # the encsim run process is gone
                break
            if message[0] == "run":
                _, job, key, item, k, seed = message
                if item is not None:
                    items[key] = item
                task = asyncio.create_task(_run_one(out, agent, spec, job, items[key], k, seed))
                tasks[job] = task
                task.add_done_callback(functools.partial(_forget, tasks, job))
            elif message[0] == "cancel":
                if (running := tasks.get(message[1])) is not None:
                    running.cancel()
            else:  # "stop"
                break
    finally:
        for task in list(tasks.values()):
            task.cancel()
        await asyncio.gather(*tasks.values(), return_exceptions=True)
        await agent.aclose()
        writer.close()


def _worker_main(sock: socket.socket, spec: WorkerSpec) -> None:
    """A worker process (spawned): serve encounters on ``sock`` until told to stop or the other end closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the encsim run process decides what a Ctrl-C stops
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    asyncio.run(_serve(sock.detach(), spec))


# ---------------------------------------------------------------------------------------------- the parent side


@contextlib.contextmanager
def _real_stderr() -> Iterator[None]:
    """``sys.stderr`` as the process's own stream while processes are spawned.

    multiprocessing hands ``sys.stderr.fileno()`` to the resource tracker it starts with the first spawned process;
    the dashboard (``encsim run --tui``) replaces sys.stderr with a stream whose fileno() is -1, which made the
    spawn fail with "bad value(s) in fds_to_keep".
    """
    replaced = sys.stderr
    try:
        valid = replaced is not None and replaced.fileno() >= 0
    except (AttributeError, OSError, ValueError):
        valid = False
    if not valid and sys.__stderr__ is not None:
        sys.stderr = sys.__stderr__
    try:
        yield
    finally:
        sys.stderr = replaced


@dataclass
class _Job:
    sink: Callable[[Any], None]
    observe: CallObserver
    done: asyncio.Future[ConversationResult]


@dataclass
class _Worker:
    index: int
    process: Any  # multiprocessing's SpawnProcess
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    jobs: dict[int, _Job] = field(default_factory=dict)
    sent: set[int] = field(default_factory=set)
    alive: bool = True
    listener: asyncio.Task[None] | None = None


class ProcessEncounters:
    """``sim.runner.EncounterRunner`` on ``processes`` local worker processes (module docstring).

    ``await start()`` spawns the workers and waits until each has built its agent (a ConfigError if one cannot);
    ``await aclose()`` stops them. ``pids``: the ready workers' process ids; ``spawned``: every process started.
    """

    def __init__(self, spec: WorkerSpec, *, processes: int) -> None:
        self.spec = spec
        self.processes = processes
        self._workers: list[_Worker] = []
        self._jobs = itertools.count(1)
        self._items: dict[int, LoadedScenario] = {}  # kept alive, so that an id() names one scenario for the run
        self.pids: list[int] = []
        self.spawned: list[int] = []

    async def start(self) -> ProcessEncounters:
        """Spawn the workers; returns once every one is ready (see the class)."""
        ctx = multiprocessing.get_context("spawn")
        try:
            for index in range(self.processes):
                mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
                process = ctx.Process(target=_worker_main, args=(theirs, self.spec), daemon=True,
                                      name=f"encsim-worker-{index + 1}")
                with _real_stderr():
                    process.start()
                self.spawned.append(process.pid or 0)  # set once started
                theirs.close()
                reader, writer = await asyncio.open_unix_connection(sock=mine)
                self._workers.append(_Worker(index + 1, process, reader, writer))
            for worker in self._workers:
                try:
                    async with asyncio.timeout(START_TIMEOUT_S):
                        hello = await _receive(worker.reader)
                except TimeoutError:
                    raise ConfigError(f"--processes {self.processes}: worker process {worker.index} did not start "
                                      f"within {START_TIMEOUT_S:g} s. Run without --processes to see the error in "
                                      f"this process.") from None
                except (asyncio.IncompleteReadError, ConnectionError):  # it ended before it was ready
                    await asyncio.to_thread(worker.process.join, STOP_TIMEOUT_S)
                    raise ConfigError(f"--processes {self.processes}: worker process {worker.index} exited while it "
                                      f"started (exit code {worker.process.exitcode}). Run without --processes to "
                                      "see the error in this process; a script that starts runs itself must do so "
                                      "under `if __name__ == \"__main__\":`, because workers are spawned.") from None
                if hello[0] == "fatal":
                    raise ConfigError(f"--processes {self.processes}: worker process {worker.index} could not build "
                                      f"the agent: {hello[1]}. Run without --processes to see it in this process.")
                self.pids.append(hello[1])
                worker.listener = asyncio.create_task(self._listen(worker))
        except BaseException:
            await self.aclose()
            raise
        return self

    async def run(self, item: LoadedScenario, k: int, *, seed: int, sink: Callable[[Any], None],
                  observe: CallObserver) -> ConversationResult:
        """One encounter on the least busy live worker (see ``sim.runner.EncounterRunner``)."""
        live = [w for w in self._workers if w.alive]
        if not live:
            raise EncounterLost("every worker process has died; nothing ran this encounter")
        worker = min(live, key=lambda w: len(w.jobs))
        job = next(self._jobs)
        done: asyncio.Future[ConversationResult] = asyncio.get_running_loop().create_future()
        worker.jobs[job] = _Job(sink, observe, done)
        key = id(item)
        self._items[key] = item
        _send(worker.writer, ("run", job, key, None if key in worker.sent else item, k, seed))
        worker.sent.add(key)
        try:
            return await done
        except asyncio.CancelledError:  # the run stops (Ctrl-C, fail-fast): the encounter is not wanted any more
            if worker.alive:
                with contextlib.suppress(Exception):
                    _send(worker.writer, ("cancel", job))
            raise
        finally:
            worker.jobs.pop(job, None)

    async def _listen(self, worker: _Worker) -> None:
        """Pass a worker's messages to the encounters they belong to, until it stops or dies."""
        try:
            while True:
                kind, job_id, payload = await _receive(worker.reader)
                job = worker.jobs.get(job_id)
                if job is None or job.done.done():  # an encounter cancelled here that the worker still reported
                    continue
                if kind == "event":
                    job.sink(payload)
                elif kind == "call":
                    job.observe(None if payload is None else AgentError(payload[1], kind=payload[0],
                                                                        retryable=payload[2]))
                elif kind == "done":
                    job.done.set_result(payload)
                else:  # "error": what the encounter raised, recorded as the in-process executor records it
                    job.done.set_exception(EncounterLost(payload))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            worker.alive = False
            if worker.jobs:
                await asyncio.to_thread(worker.process.join, 1.0)  # for its exit code
                lost = EncounterLost(f"worker process {worker.index} died (exit code {worker.process.exitcode})")
                for job in worker.jobs.values():
                    if not job.done.done():
                        job.done.set_exception(lost)

    async def aclose(self) -> None:
        """Stop the workers: each finishes nothing more, closes its agent and exits; one that does not is killed."""
        for worker in self._workers:
            worker.alive = False
            with contextlib.suppress(Exception):
                _send(worker.writer, ("stop",))
                await worker.writer.drain()
        for worker in self._workers:
            await asyncio.to_thread(worker.process.join, STOP_TIMEOUT_S)
            if worker.process.is_alive():
                worker.process.kill()
                await asyncio.to_thread(worker.process.join, STOP_TIMEOUT_S)
            worker.writer.close()
            if worker.listener is not None:
                worker.listener.cancel()
                await asyncio.gather(worker.listener, return_exceptions=True)
        self._workers = []
