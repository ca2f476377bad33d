"""Red-team cases for `encsim run`'s bounds (issue 14): plan limits and --i-know, bad --k / --concurrency /
--fail-fast, and SIGINT / SIGTERM at many moments of the real console entry (encsim_entry), each ending in one
clear paragraph or line, the right exit code, no traceback, and soon after the signal.

Signal moments are measured from the process start, but a signal is never sent before the entry has installed
its handlers (seen in /proc/PID/status): before that the interpreter itself is starting (~30 ms idle, ~110 ms on
a loaded machine) and no Python code can handle it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.conftest import ROOT, SECRET, Outcome, assert_clean, encsim_in_process
from tests.fakeserver import FakeChatServer

MINIMAL = ROOT / "tests" / "scenarios" / "valid_minimal.yaml"
ENV = {"ENCSIM_TEST_KEY": SECRET}
STOP_BOUND_S = 10.0  # generous for a loaded 2-core machine; the target is 2 s (see the report)


def _suite(folder: Path, n: int) -> Path:
    """``n`` sore-throat scenarios (distinct ids and canaries), as an imported suite would be."""
    folder.mkdir(exist_ok=True)
    text = MINIMAL.read_text()
    for i in range(n):
        (folder / f"sore_throat_{i:03}.yaml").write_text(
            text.replace("id: broken_example", f"id: sore_throat_{i:03}")
            .replace("encsim-canary-00000000-broken-example", f"encsim-canary-{i:08}-sore-throat"))
    return folder


# (id, extra args, names the message must contain); "{suite101}" is a folder of 101 scenarios
BAD: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    ("k-zero", ("--k", "0"), ("--k must be at least 1",)),
    ("k-negative", ("--k", "-5"), ("--k must be at least 1",)),
    ("k-word", ("--k", "ten"), ("--k must be a whole number", "'ten'")),
    ("k-float-exponent", ("--k", "1e6"), ("--k must be a whole number",)),
    ("k-empty", ("--k", ""), ("--k must be a whole number",)),
    ("k-just-over", ("--k", "1001"), ("--k 1001", "at most 1000", "--i-know")),
    ("k-typo-3000000", ("--k", "3000000"), ("--k 3000000", "--i-know", "3,000,000 encounters")),
    ("k-astronomic", ("--k", "9" * 30), ("--k " + "9" * 30, "--i-know")),
    ("product-101x1000", ("--scenarios", "{suite101}", "--k", "1000"),
     ("101 scenarios x --k 1000 = 101,000 encounters", "100,000", "--i-know")),
    ("product-101x991", ("--scenarios", "{suite101}", "--k", "991"), ("101 scenarios x --k 991 = 100,091", "--i-know")),
    ("concurrency-zero", ("--concurrency", "0"), ("--concurrency must be at least 1",)),
    ("concurrency-negative", ("--concurrency", "-3"), ("--concurrency must be at least 1",)),
    ("concurrency-word", ("--concurrency", "many"), ("--concurrency must be a whole number",)),
    ("concurrency-huge", ("--concurrency", "1000000"), ("--concurrency 1000000", "at most 1000", "--i-know")),
    ("fail-fast-negative", ("--fail-fast", "-1"), ("--fail-fast -1", "0 to never stop early")),
    ("fail-fast-word", ("--fail-fast", "five"), ("--fail-fast", "'five'")),
    ("fail-fast-float", ("--fail-fast", "2.5"), ("--fail-fast", "'2.5'")),
]


@pytest.mark.parametrize(("extra", "names"), [pytest.param(*c[1:], id=c[0]) for c in BAD])
def test_bad_plan_flags_are_one_clear_paragraph(tmp_path: Path, extra: tuple[str, ...],
                                                names: tuple[str, ...]) -> None:
    args = [_suite(tmp_path / "suite", 101).as_posix() if a == "{suite101}" else a for a in extra]
    if "--scenarios" not in args:
        args += ["--scenarios", "viral_uri"]
    out = tmp_path / "r"
    outcome = encsim_in_process("run", "--model", "scripted:reference", "--out", str(out), *args, env=ENV)
    assert_clean(outcome, code=2, names=names)
    errors = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("error: "), outcome.stderr  # one paragraph
    assert not out.exists()  # refused before any run directory was made


def test_resume_checks_concurrency_too(tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert encsim_in_process("run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1",
                             "--out", str(out), "--quiet").code == 0
    outcome = encsim_in_process("run", "--resume", str(out), "--concurrency", "5000")
    assert_clean(outcome, code=2, names=("--concurrency 5000", "--i-know"))


@pytest.mark.parametrize("extra", [("--k", "3000000"), ("--concurrency", "5000")], ids=["k", "concurrency"])
def test_i_know_passes_the_limit(tmp_path: Path, extra: tuple[str, ...]) -> None:
    """With --i-know the limit does not stop the command: the next check (a run already there) does."""
    out = tmp_path / "r"
    assert encsim_in_process("run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1",
                             "--out", str(out), "--quiet").code == 0
    outcome = encsim_in_process("run", "--model", "scripted:reference", "--scenarios", "viral_uri", *extra,
                                "--i-know", "--out", str(out))
    assert_clean(outcome, code=2, names=("a run already exists there",))
    assert "--i-know" not in outcome.output


def test_a_huge_i_know_run_against_a_refusing_endpoint_stops_after_a_few_calls(tmp_path: Path) -> None:
    """--k 3000000 --i-know really starts (the plan is streamed: nothing per planned pair is made), and a key the
    endpoint refuses stops it after the first calls instead of 3,000,000 errors."""
    out = tmp_path / "r"
    with FakeChatServer(default=("status", 401, {})) as server:
        started = time.monotonic()
        outcome = encsim_in_process("run", "--model", "gpt-4o-mini", "--base-url", server.base_url, "--api-key-env",
                                    "ENCSIM_TEST_KEY", "--scenarios", "viral_uri", "--k", "3000000", "--i-know",
                                    "--out", str(out), "--no-progress", env=ENV)
        took = time.monotonic() - started
        requests = len(server.requests)
    assert_clean(outcome, code=2, names=("--api-key-env ENCSIM_TEST_KEY", "HTTP 401", "--resume"), run_dirs=(out,))
    assert requests <= 8 and took < 60, (requests, took)
    started_events = sum('"encounter_started"' in line for line in (out / "events.jsonl").read_text().splitlines())
    assert started_events <= 8 and '"total":3000000' in (out / "events.jsonl").read_text().replace(" ", "")


# --- signals ---------------------------------------------------------------------------------------------------------


def _handlers_installed(pid: int) -> bool:
    """The entry has installed its SIGTERM handler (SigCgt in /proc/PID/status has SIGTERM's bit)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next((int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigCgt:")), 0)
    return bool(caught & (1 << (signal.SIGTERM - 1)))


def _signal_at(args: list[str], sig: signal.Signals, moment: float | None, cwd: Path,
               until: Any = None) -> tuple[Outcome, float, float]:
    """Start the console entry; at ``moment`` s (or when ``until()`` is true) send ``sig``; the outcome, the
    seconds from the signal to the exit, and when the signal was sent. Standard error goes to ``cwd/stderr.txt``
    (unbuffered), which ``until`` may read as it grows."""
    err = (cwd / "stderr.txt").open("w+", encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "encsim_entry", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=err, text=True, env={**os.environ, "PYTHONPATH": str(ROOT), **ENV})
    t0 = time.monotonic()
    try:
        deadline = t0 + 120
        while not _handlers_installed(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        while until is not None and not until() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        if moment is not None:
            time.sleep(max(0.0, moment - (time.monotonic() - t0)))
        assert proc.poll() is None, "the command ended before the signal"
        sent = time.monotonic()
        proc.send_signal(sig)
        stdout, _ = proc.communicate(timeout=60)
        took = time.monotonic() - sent
        err.seek(0)
        return Outcome(proc.returncode, stdout, err.read()), took, sent - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        err.close()


CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}
MOMENTS = [(sig, at) for sig in (signal.SIGINT, signal.SIGTERM) for at in (0.05, 0.2, 0.5, 1.0, 2.5)]


@pytest.mark.parametrize(("sig", "moment"), [pytest.param(s, m, id=f"{s.name}-{m}s") for s, m in MOMENTS])
def test_a_signal_at_any_moment_stops_cleanly(tmp_path: Path, sig: signal.Signals, moment: float) -> None:
    """During the imports, the set-up or the run: exit 130 (SIGINT) or 143 (SIGTERM), no traceback, one line
    saying what was kept, and soon. Whatever finished is saved and summarised."""
    out = tmp_path / "r"
    outcome, took, _ = _signal_at(["run", "--model", "scripted:reference", "--scenarios", "viral_uri,acs_chest_pain",
                                   "--k", "500", "--out", str(out), "--no-progress"], sig, moment, tmp_path)
    assert_clean(outcome, code=CODES[sig], run_dirs=(out,))
    assert took < STOP_BOUND_S, took
    said = outcome.stderr.strip().splitlines()[-1]
    assert said in ("interrupted before the command started; nothing was changed.",
                    "interrupted before the run directory was made; nothing was saved.") \
        or said == f"interrupted; finished encounters are saved in {out}. Continue with: encsim run --resume {out}"
    if (out / "summary.json").exists():
        saved = (out / "results.jsonl").read_text().splitlines() if (out / "results.jsonl").exists() else []
        assert json.loads((out / "summary.json").read_text())["completed"] == len(saved) < 1000


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_waiting_on_a_slow_endpoint(tmp_path: Path, sig: signal.Signals) -> None:
    """Calls in flight on an endpoint that takes 0.5 s: they are cancelled, not recorded as errors."""
    out = tmp_path / "r"

    def one_saved() -> bool:
        path = out / "results.jsonl"
        return path.exists() and len(path.read_text().splitlines()) >= 1

    with FakeChatServer(latency_s=0.5, default=("ok", "Could you tell me how long the sore throat has lasted?")) as srv:
        outcome, took, _ = _signal_at(["run", "--model", "gpt-4o-mini", "--base-url", srv.base_url, "--api-key-env",
                                       "ENCSIM_TEST_KEY", "--scenarios", "viral_uri", "--k", "30", "--max-turns", "2",
                                       "--concurrency", "3", "--out", str(out), "--no-progress"], sig, None, tmp_path,
                                      until=one_saved)
    assert_clean(outcome, code=CODES[sig], names=(f"encsim run --resume {out}",), run_dirs=(out,))
    assert took < STOP_BOUND_S, took
    summary = json.loads((out / "summary.json").read_text())
    assert summary["errors"] == 0 and 1 <= summary["completed"] < 30


@pytest.fixture(scope="module")
def big_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of 3000 recorded encounters (one real record of viral_uri, as K = 3000): `report` spends seconds
    loading and summarising it."""
    out = tmp_path_factory.mktemp("big") / "r"
    done = encsim_in_process("run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1",
                             "--out", str(out), "--quiet")
    assert done.code == 0
    rec = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    with open(out / "results.jsonl", "w") as fh:
        for k in range(3000):
            rec["k"] = rec["result"]["k"] = k
            fh.write(json.dumps(rec) + "\n")
    meta = json.loads((out / "run.json").read_text())
    meta["k"] = 3000
    (out / "run.json").write_text(json.dumps(meta))
    return out


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_summarise_stops_cleanly(big_run: Path, tmp_path: Path, sig: signal.Signals) -> None:
    """`encsim report` of a big run: a signal while it loads and summarises (it holds the run directory's lock
    then) stops it at once; results.jsonl is untouched. The moment is the lock, not a time, so load cannot race."""
    before = (big_run / "results.jsonl").read_bytes()

    def reporting() -> bool:  # the report process has opened the run directory: it is loading or summarising
        text = (big_run / ".lock").read_text() if (big_run / ".lock").exists() else ""
        return '"command": "encsim report"' in text

    outcome, took, _ = _signal_at(["report", str(big_run)], sig, None, tmp_path, until=reporting)
    assert_clean(outcome, code=CODES[sig])
    assert took < STOP_BOUND_S and outcome.stderr.strip().splitlines()[-1] in (
        "interrupted.", "interrupted before the command started; nothing was changed."), (took, outcome.stderr)
    assert (big_run / "results.jsonl").read_bytes() == before


def test_sigterm_stops_serve_agent_even_when_its_pipeline_does_not_cancel(tmp_path: Path) -> None:
    """`encsim serve-agent` waiting for a call (its port answers): SIGTERM ends it with 143 and no traceback, by
    the entry's watchdog if the voice pipeline's own cancellation hangs."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    def listening() -> bool:  # its port answers, and it has said so (it binds, then announces: no race on that)
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) != 0:
                return False
        return "waiting for call 1" in (tmp_path / "stderr.txt").read_text(encoding="utf-8")

    outcome, took, _ = _signal_at(["serve-agent", "--model", "scripted:reference", "--scenario", "viral_uri",
                                   "--port", str(port)], signal.SIGTERM, None, tmp_path, until=listening)
    assert_clean(outcome, code=143)
    assert "waiting for call 1" in outcome.output and took < STOP_BOUND_S, (took, outcome.output)


def test_a_signal_before_the_command_starts_says_nothing_was_changed(monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C while the CLI still sets up (CI caught it during the logging set-up at 1.0 s under load): the user
    is told nothing was changed, not a bare "interrupted." that says nothing of the run."""
    import sim.cli._main

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(sim.cli._main, "quiet_pipecat", interrupted)
    assert sim.cli._main.main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri"]) == 130
    assert capsys.readouterr().err.strip() == "interrupted before the command started; nothing was changed."
