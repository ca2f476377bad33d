"""Around Ray's ``ray start`` for ``encsim ray-head``: ports apart from ``--port``, a stop of this head's processes.

**Ports.** ``ray start --head`` reserves ports of its own besides ``--port`` and refuses a ``--port`` among them
(Ray 2.60: "Ray component ... is trying to use a port number ... that is used by other components"): the workers'
range ``--min-worker-port``/``--max-worker-port`` (10002-19999), the dashboard's 8265 (reserved even with the
dashboard off), the dashboard agent's HTTP port 52365 and, with ``ray[client]`` installed, Ray Client's 10001.
``port_args`` moves whichever of them ``--port`` falls on: the worker range becomes the larger part of 10002-19999
on either side of ``--port``, and a fixed port the one next to it. Every other port of the node is chosen by Ray
at random among the ports it has not reserved, so it cannot be ``--port`` either.

**Stopping.** ``ray stop`` stops every Ray of the machine (other users' and other tests' included). A head that
``encsim ray-head`` starts in this process is a tree of this process's descendants: GCS, raylet, the autoscaler
monitor, the log monitor and the agents are its children (Ray's ``subprocess.Popen``), the workers the raylet's.
``HeadProcesses`` finds them as this process's descendants plus any process whose command line names the head's
own session folder (``/tmp/ray/session_<time>_<pid>``, unique per head); on Linux this process is also made a
*child subreaper*, so that a worker whose raylet died first is re-parented here rather than to init and is still
found. ``stop`` sends SIGTERM to all of them, waits up to a grace period, then SIGKILLs what is left, looking
again for new processes (a worker starting) on every pass. Nothing else on the machine is signalled.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

RAY_WORKER_PORTS = (10002, 19999)
"""``ray start``'s default --min-worker-port and --max-worker-port (Ray 2.60)."""
RAY_FIXED_PORTS = {"--dashboard-port": 8265, "--dashboard-agent-listen-port": 52365}
"""The fixed ports ``ray start --head`` reserves by default (Ray 2.60), by the flag that moves them."""
RAY_CLIENT_PORT = 10001  # Ray Client's server: only started (and reserved) with ray[client] installed
GRACE_S = 4.0
"""SIGTERM, then this long for the head's processes to exit, then SIGKILL (below encsim_entry's 5 s watchdog)."""
_SESSION = re.compile(r"(/\S*?/session_\d[\w.-]*)/")
_PR_SET_CHILD_SUBREAPER = 36


def port_args(port: int, *, ray_client: bool) -> list[str]:
    """The ``ray start`` flags that keep every port the head reserves off ``port`` (module docstring).

    Args:
        port: The head's ``--port``.
        ray_client: Whether ``ray[client]`` is installed (then Ray Client's server takes 10001).

    Returns:
        ``--min-worker-port``/``--max-worker-port`` always (Ray's defaults unless ``port`` is among them), and a
        fixed port's flag when ``port`` is that port.
    """
    low, high = RAY_WORKER_PORTS
    if low <= port <= high:
        low, high = (port + 1, high) if high - port >= port - low else (low, port - 1)
    args = [f"--min-worker-port={low}", f"--max-worker-port={high}"]
    fixed = dict(RAY_FIXED_PORTS)
    if ray_client:
        fixed["--ray-client-server-port"] = RAY_CLIENT_PORT
    for flag, default in fixed.items():
        if port == default:
            args.append(f"{flag}={default - 1}")  # 8264, 52364, 10000: none of them is reserved by Ray
    return args


def become_subreaper() -> None:
    """Make this process adopt its orphaned descendants (Linux ``PR_SET_CHILD_SUBREAPER``; elsewhere nothing)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, start time) of a process; None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return fields[0], int(fields[1]), int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def _processes() -> dict[int, tuple[int, int, str]]:
    """Every process of this machine this user can see: pid -> (parent pid, start time, command line)."""
    found: dict[int, tuple[int, int, str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None and stat[0] != "Z":
            found[int(entry.name)] = (stat[1], stat[2], _cmdline(int(entry.name)))
    return found


class HeadProcesses:
    """The processes of the Ray head that this process started (module docstring).

    Make it before the head starts: the descendants this process has then (a test's other servers, when
    ``encsim`` runs inside a test process) are not the head's, and are never signalled.

    Args:
        root: The process whose descendants the head's processes are (this process).
    """

    def __init__(self, root: int | None = None) -> None:
        self.root = os.getpid() if root is None else root
        self.sessions: set[str] = set()
        self.known: dict[int, int] = {}  # pid -> start time, of every process found so far (a reused pid is not)
        procs = _processes()
        self.before = {pid: procs[pid][1] for pid in self._descendants(procs)}  # not the head's: left alone

    def _descendants(self, procs: dict[int, tuple[int, int, str]]) -> set[int]:
        mine = {self.root}
        grew = True
        while grew:
            children = {pid for pid, (ppid, _, _) in procs.items() if ppid in mine} - mine
            mine |= children
            grew = bool(children)
        mine.discard(self.root)
        return mine

    def find(self) -> dict[int, int]:
        """The head's processes alive now (pid -> start time); remembers the session folder and every process seen."""
        procs = _processes()
        mine = {pid for pid in self._descendants(procs) if self.before.get(pid) != procs[pid][1]}
        for pid in mine:
            self.sessions.update(m for m in _SESSION.findall(procs[pid][2]) if Path(m).is_dir())
        mine |= {pid for pid, (_, _, cmd) in procs.items() if any(s + "/" in cmd for s in self.sessions)}
        mine -= {self.root, *(pid for pid, start in self.before.items() if pid in procs and procs[pid][1] == start)}
        alive = {pid: procs[pid][1] for pid in mine}
        alive.update({pid: start for pid, start in self.known.items()
                      if pid in procs and procs[pid][1] == start})  # found before, re-parented since
        self.known.update(alive)
        return alive

    def gcs_alive(self) -> bool:
        """Whether the head's GCS server still runs (False once it died: the head is gone)."""
        return any("gcs_server" in _cmdline(pid) for pid in self.find())

    def stop(self, *, grace_s: float = GRACE_S, hurry: Callable[[], bool] = lambda: False) -> list[int]:
        """SIGTERM every process of the head, SIGKILL what is left after ``grace_s`` (or once ``hurry()``).

        Returns:
            The pids that were still there after SIGKILL (normally none).
        """
        deadline = time.monotonic() + grace_s
        sig = signal.SIGTERM
        signalled: set[int] = set()
        while True:
            alive = self.find()
            for pid in alive:
                if sig == signal.SIGKILL or pid not in signalled:
                    with contextlib.suppress(OSError):
                        os.kill(pid, sig)
                    signalled.add(pid)
            _reap(self.known)
            if not alive:
                return []
            if sig == signal.SIGKILL:
                if time.monotonic() > deadline + 5.0:
                    return sorted(alive)
            elif time.monotonic() > deadline or hurry():
                sig = signal.SIGKILL
                deadline = time.monotonic()
            time.sleep(0.1)


def _reap(pids: dict[int, int]) -> None:
    """Collect those of ``pids`` that are this process's exited children, so that none stays a zombie.

    The head's, and orphans adopted as subreaper; never another child's exit status (``waitpid(-1)`` would take it).
    """
    for pid in pids:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)


def forget_address(address: str) -> None:
    """Remove Ray's record of the latest cluster when it is ``address``, as ``ray stop`` does.

    The record (``/tmp/ray/ray_current_cluster``) is what ``--ray-address auto`` finds; one of another head is kept.
    """
    try:
        from ray._common.utils import get_ray_address_file

        path = Path(get_ray_address_file(None))
        if path.read_text().strip() == address:
            path.unlink()
    except Exception:  # a private Ray helper that moved, or no record: `auto` then says that nothing answers
        return
