"""Two reviewers' processes changing one shared project-level taxonomy file at the same moment (issue 16).

Every change is a read-modify-write: read taxonomy.json, add or change a mode, save. The save is atomic (a
temporary file renamed over the target), so the file is never torn, but without a lock two processes that both
read before either saves each write "the old modes + my mode", and the later rename silently drops the earlier
one's mode. ``taxonomy_lock`` (an flock on ``<file>.lock``) makes each read-modify-write exclusive; these tests
run REAL processes (multiprocessing, 'spawn': fresh interpreters, no shared state but the file system) and
synchronise them with a barrier and events, never with sleeps. (With the lock made a no-op, the first test lost
modes in 3 runs out of 3 on a 2-core machine: the window between read and rename is wide enough.)
"""

from __future__ import annotations

import multiprocessing as mp
from multiprocessing.synchronize import Barrier, Event
from pathlib import Path

import pytest

from review import code, rename_mode
from sim.records import TaxonomyError, load_taxonomy, taxonomy_lock
from tests.tui.runs import batch_run

N_PROCESSES = 2
MODES_EACH = 10
CTX = mp.get_context("spawn")


def _reviewer(run: str, taxonomy: str, who: str, start: Barrier) -> None:
    """One reviewer coding the encounters of their own run with ten new modes of their own, all in one burst."""
    start.wait(timeout=60)  # both processes begin together, so their read-modify-writes interleave
    for i in range(MODES_EACH):
        code(Path(run), f"fx_chest_pain:{i % 3}", f"{who}_slip_{i}", taxonomy_path=Path(taxonomy), reviewer=who)


def _holder(taxonomy: str, held: Event, release: Event) -> None:
    """Another process in the middle of a change: it holds the taxonomy's lock until told to let go."""
    with taxonomy_lock(Path(taxonomy)):
        held.set()
        release.wait(timeout=60)


def test_concurrent_reviewers_lose_no_mode(tmp_path: Path) -> None:
    shared = tmp_path / "project" / "taxonomy.json"
    runs = [batch_run(tmp_path, f"run-{n}") for n in range(N_PROCESSES)]  # each reviewer codes their own run
    start = CTX.Barrier(N_PROCESSES)
    procs = [CTX.Process(target=_reviewer, args=(str(run), str(shared), f"rev{n}", start))
             for n, run in enumerate(runs)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0] * N_PROCESSES
    names = load_taxonomy(shared).names
    expected = {f"rev{n}_slip_{i}" for n in range(N_PROCESSES) for i in range(MODES_EACH)}
    assert set(names) == expected and len(names) == N_PROCESSES * MODES_EACH


def test_a_lock_held_too_long_is_one_clear_error_and_nothing_is_changed(tmp_path: Path) -> None:
    run = batch_run(tmp_path)
    shared = tmp_path / "project" / "taxonomy.json"
    code(run, "fx_chest_pain:1", "missed_red_flag", taxonomy_path=shared)
    held, release = CTX.Event(), CTX.Event()
    holder = CTX.Process(target=_holder, args=(str(shared), held, release))
    holder.start()
    try:
        assert held.wait(timeout=60)
        with pytest.raises(TaxonomyError) as err:  # the holder keeps it until released: no race on the timeout
            code(run, "fx_chest_pain:2", "sent_home_unsafely", taxonomy_path=shared, lock_timeout=0.2)
        message = str(err.value)
        assert str(shared) in message and "lock" in message and "\n" not in message
        with pytest.raises(TaxonomyError):
            rename_mode(run, "missed_red_flag", "no_red_flag_questions", taxonomy_path=shared, lock_timeout=0.1)
        assert load_taxonomy(shared).names == ["missed_red_flag"]  # neither change was made
    finally:
        release.set()
        holder.join(timeout=60)
    assert holder.exitcode == 0
    code(run, "fx_chest_pain:2", "sent_home_unsafely", taxonomy_path=shared)  # released: the change goes through
    assert load_taxonomy(shared).names == ["missed_red_flag", "sent_home_unsafely"]
