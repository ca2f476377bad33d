"""The embedded model's server leaves cores free (sim.agents.local.default_threads); not marked slow: no server
is started."""

from __future__ import annotations

import os

import pytest

from sim.agents.local import LlamaServer, default_threads


@pytest.mark.parametrize(("cpus", "threads"), [(1, 1), (2, 1), (3, 1), (8, 4), (64, 32)])
def test_the_server_leaves_cores_free(monkeypatch: pytest.MonkeyPatch, cpus: int, threads: int) -> None:
    """llama.cpp's threads spin while waiting for each other: a thread per core made a 96-token reply take 151-336 s
    instead of 1.6 s beside one busy process (bench/local_threads.py), so the server takes half the CPUs."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(cpus)), raising=False)
    assert default_threads() == threads
    assert LlamaServer().n_threads == threads
