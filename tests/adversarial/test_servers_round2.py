"""Red-team cases, round 2, for the servers and sessions a user must be able to stop (issue 36, part 3).

- ``encsim ray-head --port P`` for P in Ray's default worker range (10002-19999) was refused by Ray ("a port
  number ... that is used by other components"); now the head starts there and a run joins it.
- ``encsim ray-head`` used to start the head and exit: only ``ray stop`` (every Ray of the machine) stopped it, and
  a SIGTERM left GCS and the autoscaler monitor running. Now it stays in the foreground, and SIGTERM or Ctrl-C
  stops exactly its own head's processes: another head on the same machine keeps running.
- ``encsim run --tui`` with its output piped (a CI job) never exited and wrote screen codes into the pipe; now it
  falls back to the plain progress output with a one-line note.
- an unscored.jsonl line of an encounter outside the run's plan was ignored without a word on ``--resume``; now
  it is named (file, line, why) as the other skipped lines are.

Real processes and a real Ray (started here, ``--num-cpus 1``, stopped here by the heads' own pids, never with
``ray stop``); every wait polls for a condition with a generous deadline.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.adversarial.conftest import ROOT, assert_clean, encsim_in_process

DEADLINE_S = 180.0  # a head's start or stop on a loaded 2-core machine takes seconds; this is never waited out
AUTH_ENV = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")


def _free_port(low: int = 0, high: int = 0) -> int:
    """A port that nothing listens on: any (``low`` 0), or one in [low, high]."""
    for _ in range(200):
        candidate = random.randint(low, high) if low else 0
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", candidate))
            except OSError:
                continue
            return int(s.getsockname()[1])
    raise AssertionError(f"no free port in {low}-{high}")


def _procs() -> dict[int, tuple[int, str, str]]:
    """pid -> (parent pid, state, command line) of every process."""
    out = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except (OSError, IndexError):  # a process that ended while being read
                continue
            out[int(proc.name)] = (int(fields[1]), fields[0], cmd)
    return out


def _head_pids(head: int) -> set[int]:
    """The processes of the head run by the process ``head``: its descendants, and whatever names their session
    folder (a worker re-parented when its raylet died)."""
    procs = _procs()
    mine = {head}
    grew = True
    while grew:
        children = {pid for pid, (ppid, _, _) in procs.items() if ppid in mine} - mine
        mine |= children
        grew = bool(children)
    sessions = {s for pid in mine for s in re.findall(r"/(session_\d[\w.-]*)/", procs.get(pid, (0, "", ""))[2])}
    mine |= {pid for pid, (_, _, cmd) in procs.items() if any(f"/{s}/" in cmd for s in sessions)}
    return mine - {head}


def _alive(pids: set[int]) -> set[int]:
    procs = _procs()
    return {pid for pid in pids if pid in procs and procs[pid][1] != "Z"}


def _kill_all(pids: set[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


class Head:
    """One ``encsim ray-head`` subprocess, its output in files (a pipe nobody reads could fill up)."""

    def __init__(self, tmp: Path, name: str, port: int, env: dict[str, str]) -> None:
        self.port, self.out, self.err = port, tmp / f"{name}.out", tmp / f"{name}.err"
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "sim.cli", "ray-head", "--port", str(port),
                                          "--num-cpus", "1"], env=env, cwd=tmp, stdout=out, stderr=err)
        self.pids: set[int] = set()

    def text(self) -> str:
        return self.out.read_text(errors="replace") + self.err.read_text(errors="replace")

    def wait_serving(self) -> str:
        deadline = time.monotonic() + DEADLINE_S
        while "stops it" not in self.out.read_text(errors="replace"):
            assert self.proc.poll() is None, f"encsim ray-head exited {self.proc.returncode}:\n{self.text()[-3000:]}"
            assert time.monotonic() < deadline, self.text()[-3000:]
            time.sleep(0.2)
        self.pids = _head_pids(self.proc.pid)
        return self.out.read_text(errors="replace")

    def stop(self, sig: int) -> int:
        self.proc.send_signal(sig)
        return self.proc.wait(timeout=DEADLINE_S)

    def cleanup(self) -> None:
        if self.proc.poll() is None:
            self.pids |= _head_pids(self.proc.pid)
            self.proc.kill()
            self.proc.wait(timeout=60)
        _kill_all(_alive(self.pids))


@pytest.mark.slow
def test_a_ray_head_on_a_worker_range_port_serves_a_run_and_each_signal_stops_only_its_own_head(
        tmp_path: Path) -> None:
    """Head A on a port in Ray's worker range (10002-19999) starts and a run joins it; head B on another port runs
    beside it. SIGTERM to A stops every process of A (exit 143) and none of B; Ctrl-C (SIGINT) to B stops B
    (exit 130). Before: A was refused (exit 2), and the command exited with the head left running."""
    home = tmp_path / "home"  # the heads' own ~/.ray/auth_token
    home.mkdir()
    env = {**{k: v for k, v in os.environ.items() if k not in AUTH_ENV}, "PYTHONPATH": str(ROOT), "HOME": str(home)}
    port_a = _free_port(10002, 19999)
    port_b = _free_port()
    head_a = Head(tmp_path, "a", port_a, env)
    head_b = Head(tmp_path, "b", port_b, env)
    try:
        shown = head_a.wait_serving()
        assert f"listening on 127.0.0.1:{port_a}" in shown and "Ctrl-C or SIGTERM stops it" in shown, shown
        assert "ray stop" not in shown  # Ray's own "next steps" would tell the user to stop every Ray
        head_b.wait_serving()
        assert any("gcs_server" in _procs()[p][2] for p in _alive(head_a.pids)), head_a.pids
        assert not head_a.pids & head_b.pids

        run = subprocess.run([sys.executable, "-m", "sim.cli", "run", "--executor", "ray", "--ray-address",
                              f"127.0.0.1:{port_a}", "--model", "scripted:reference", "--scenarios", "viral_uri",
                              "--k", "1", "--quiet", "--out", str(tmp_path / "run")], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        (line,) = (tmp_path / "run" / "results.jsonl").read_text().splitlines()
        assert json.loads(line)["error"] is None
        head_a.pids |= _head_pids(head_a.proc.pid)  # the run's worker too

        assert head_a.stop(signal.SIGTERM) == 143, head_a.text()[-3000:]
        assert "Ray head stopped" in head_a.text() and "Traceback" not in head_a.text(), head_a.text()[-3000:]
        deadline = time.monotonic() + 30  # the head waited for its processes; their zombies may take a moment
        while _alive(head_a.pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(head_a.pids), [_procs()[p][2][:120] for p in _alive(head_a.pids)]
        assert _alive(head_b.pids) == head_b.pids  # the other head was not touched

        assert head_b.stop(signal.SIGINT) == 130, head_b.text()[-3000:]
        assert "Ray head stopped" in head_b.text() and "Traceback" not in head_b.text(), head_b.text()[-3000:]
        deadline = time.monotonic() + 30
        while _alive(head_b.pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(head_b.pids), [_procs()[p][2][:120] for p in _alive(head_b.pids)]
    finally:
        head_a.cleanup()
        head_b.cleanup()


def test_ray_head_port_flags_keep_every_reserved_port_off_the_head_port() -> None:
    """Whatever --port, the worker range and Ray's fixed ports leave it out (Ray refuses a port used twice)."""
    from sim.executors._ray_session import RAY_CLIENT_PORT, RAY_FIXED_PORTS, port_args

    for port in (6379, 8265, 10001, 10002, 10003, 15000, 19998, 19999, 20000, 52365, 65535):
        args = dict(a.lstrip("-").split("=") for a in port_args(port, ray_client=True))
        low, high = int(args["min-worker-port"]), int(args["max-worker-port"])
        assert 1024 <= low < high and not low <= port <= high, (port, args)
        assert high - low >= 4000, (port, args)  # still thousands of worker ports
        fixed = {flag.lstrip("-"): default for flag, default in
                 {**RAY_FIXED_PORTS, "--ray-client-server-port": RAY_CLIENT_PORT}.items()}
        taken = {int(args.get(name, default)) for name, default in fixed.items()}
        assert port not in taken and not any(low <= p <= high for p in taken), (port, args)


def test_run_tui_without_a_terminal_falls_back_to_plain_progress_and_exits(tmp_path: Path) -> None:
    """Piped (no terminal), ``encsim run --tui`` runs with the plain progress, says so in one line, and exits 0 with
    no screen codes in its output. Before: the run finished but the process never exited (timeout here)."""
    done = subprocess.run([sys.executable, "-m", "sim.cli", "run", "--tui", "--model", "scripted:reference",
                           "--scenarios", "viral_uri", "--k", "1", "--out", str(tmp_path / "run")],
                          stdin=subprocess.DEVNULL, capture_output=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=180)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output.decode(errors="replace")[-3000:]
    assert b"\x1b" not in output, output[:500]
    notes = [x for x in done.stderr.decode().splitlines() if "--tui" in x]
    assert notes == ["note: encsim run --tui needs a terminal (stdin and stdout); showing the plain progress "
                     "instead."], notes
    assert b"viral_uri" in done.stderr  # the plain progress: one line per encounter
    (line,) = (tmp_path / "run" / "results.jsonl").read_text().splitlines()
    assert json.loads(line)["error"] is None


def test_watch_without_a_terminal_is_one_paragraph_not_a_hung_dashboard(tmp_path: Path) -> None:
    """``encsim watch`` is the dashboard alone: piped, it refuses in one paragraph (exit 2) instead of writing
    screen codes into the pipe and waiting for keys that never come."""
    from tests.adversarial.conftest import encsim_in_process

    run = tmp_path / "run"
    assert encsim_in_process("run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1",
                             "--out", str(run), "--quiet").code == 0
    done = subprocess.run([sys.executable, "-m", "sim.cli", "watch", str(run)], stdin=subprocess.DEVNULL,
                          capture_output=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=180)
    assert done.returncode == 2 and b"\x1b" not in done.stdout + done.stderr
    (error,) = done.stderr.decode().splitlines()
    assert error.startswith(f"error: encsim watch {run}: the dashboard needs a terminal") and "encsim report" in error


def test_an_unscored_line_outside_the_run_s_plan_is_named_on_resume(tmp_path: Path) -> None:
    """A kept conversation of an encounter the run never planned (another scenario, a k beyond --k, another
    persona) is named on --resume with its file and line, as results.jsonl's skipped lines are; one of a planned
    encounter that already has its record is not (it was scored before the file could be removed)."""
    from sim.records import EncounterRecord, UnscoredEncounter

    run = tmp_path / "run"
    assert_clean(encsim_in_process("run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "2",
                                   "--out", str(run), "--quiet"), code=0, secret=None)
    (first, _) = (run / "results.jsonl").read_text().splitlines()
    result = EncounterRecord.model_validate_json(first).result
    assert result is not None
    lines = [UnscoredEncounter(scenario_id="viral_uri", k=0, result=result),  # planned, recorded: silent
             UnscoredEncounter(scenario_id="acs_chest_pain", k=0, result=result),
             UnscoredEncounter(scenario_id="viral_uri", k=5, result=result),
             UnscoredEncounter(scenario_id="viral_uri", k=1, persona="minimiser", result=result)]
    path = run / "unscored.jsonl"
    path.write_text("".join(x.model_dump_json() + "\n" for x in lines))
    resumed = encsim_in_process("run", "--resume", str(run), "--quiet")
    assert_clean(resumed, code=0, secret=None)
    warned = [x for x in resumed.stderr.splitlines() if x.startswith("warning: ") and "unscored.jsonl" in x]
    plan = "is not an encounter of this run's plan (its scenarios, --k and --personas); this run never scores it."
    assert warned == [f"warning: {path} line 2: skipped, acs_chest_pain k=0 persona default {plan}",
                      f"warning: {path} line 3: skipped, viral_uri k=5 persona default {plan}",
                      f"warning: {path} line 4: skipped, viral_uri k=1 persona minimiser {plan}"], resumed.stderr
    assert len((run / "results.jsonl").read_text().splitlines()) == 2  # nothing of them was scored
