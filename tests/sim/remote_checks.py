"""Checks shared by the tests of the executors that run encounters outside the ``encsim run`` process.

The Ray executor (``test_ray_executor.py``) and the local worker processes (``test_process_executor.py``) must
both read the API key where the agent is built, never write it, and stop a run whose key the endpoint refuses.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.cli import main
from tests.fakeserver import FakeChatServer


def assert_the_key_was_sent_and_never_written(server: FakeChatServer, out: Path, key: str) -> None:
    """Every request carried the key; no file of the run directory ``out`` holds it."""
    assert server.headers_seen and all(h.get("authorization") == f"Bearer {key}" for h in server.headers_seen)
    written = [p for p in out.rglob("*") if p.is_file()]
    assert written and not [p for p in written if key.encode() in p.read_bytes()]


def assert_a_refused_key_stops_the_run_early(executor_flags: list[str], fake_server: type[FakeChatServer],
                                             capsys: pytest.CaptureFixture[str], out: Path, *, key_env: str,
                                             key: str, k: int) -> None:
    """An endpoint that answers 401: fatal at the first call, so ``--fail-fast 3`` stops the run (exit 2, one
    line naming the status and the flag, the key nowhere) after fewer than 10 of the 2 x ``k`` planned calls."""
    refused = fake_server(default=("status", 401, {})).start()
    capsys.readouterr()
    code = main(["run", *executor_flags, "--model", "gpt-4o-mini", "--base-url", refused.base_url,
                 "--api-key-env", key_env, "--scenarios", "viral_uri,simple_uti", "--k", str(k), "--max-turns", "3",
                 "--fail-fast", "3", "--concurrency", "2", "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and key not in err
    (line,) = [x for x in err.splitlines() if x.startswith("error:")]
    assert "HTTP 401" in line and "--fail-fast 3" in line
    assert len(refused.requests) < 10  # stopped well before the planned encounters
