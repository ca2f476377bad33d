"""``encsim ray-head [--port N] [--num-cpus N] [--detach]``: a Ray head node on this machine, on 127.0.0.1 only.

The command stays in the foreground while the head serves, and Ctrl-C or SIGTERM stops exactly the processes of
this head (``sim.executors.ray.HeadProcesses``: its descendants and its own session folder's; not
``ray stop``, which stops every Ray of the machine): SIGTERM to each, a grace period, then SIGKILL; a second
signal skips the grace period. A signal that comes while the head starts stops it as soon as it has started.
Should the head's GCS die on its own, the rest is stopped too and the command exits 1. ``--detach`` starts the
head and returns, as before (then only ``ray stop`` stops it).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType
from typing import Any

EXIT_HEAD_DIED = 1
POLL_S = 1.0  # how often the foreground command checks that its head's GCS still runs


def register(subparsers: Any) -> None:  # argparse's _SubParsersAction is private
    """Add the ``ray-head`` parser.

    Args:
        subparsers: The ``encsim`` parser's subparsers.
    """
    head = subparsers.add_parser(
        "ray-head", help="run a Ray head node on this machine that listens on 127.0.0.1 only, until Ctrl-C or "
                         "SIGTERM (which stop this head's processes only); runs join it with --executor ray "
                         "--ray-address auto")
    head.add_argument("--port", type=int, default=6379, help="the head's port (default 6379)")
    head.add_argument("--num-cpus", type=int, default=None,
                      help="CPUs the node offers to tasks and voice actors (default: all of this machine's)")
    head.add_argument("--detach", action="store_true",
                      help="start the head and return at once (it then runs until `ray stop`, which stops every "
                           "Ray of this machine)")
    head.set_defaults(handler=cmd_ray_head)


class _Signals:
    """SIGINT and SIGTERM recorded instead of acted on, while installed (a signal ignored at start stays ignored)."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self.event = threading.Event()
        self._previous: dict[int, Any] = {}

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self.received.append(signum)
        self.event.set()

    def __enter__(self) -> _Signals:
        for signum in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(signum) is not signal.SIG_IGN:
                self._previous[signum] = signal.signal(signum, self._on_signal)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)


def cmd_ray_head(args: argparse.Namespace) -> int:
    """``encsim ray-head``: start the head node (``sim.executors.ray.start_local_head``), serve until a signal.

    Args:
        args: The parsed command line.

    Returns:
        The exit code: 0 with ``--detach``; 130 (Ctrl-C) or 143 (SIGTERM) once the head is stopped; 1 when its GCS
        died on its own.
    """
    from sim.executors.ray import HeadProcesses, become_subreaper, forget_address, start_local_head
    from sim.records import ConfigError

    if not 1 <= args.port <= 65535:
        raise ConfigError(f"--port {args.port}: give a TCP port between 1 and 65535 (default 6379).")
    if args.num_cpus is not None and args.num_cpus < 1:
        raise ConfigError(f"--num-cpus {args.num_cpus}: give at least 1, or leave it out to offer every CPU.")
    head = HeadProcesses()
    with _Signals() as signals:
        if not args.detach:
            become_subreaper()  # a worker whose raylet died first stays this process's to stop
        try:
            address, auth = start_local_head(port=args.port, num_cpus=args.num_cpus)
        except BaseException:
            head.stop()  # whatever a failed start left running
            raise
        if signals.received:
            return _stop(head, signals, address, "while it started")
        use = (f"Ray head node listening on {address} (127.0.0.1 only). Run with:\n"
               f"  encsim run --executor ray --ray-address auto ...\n"
               f"{auth}")
        if args.detach:
            print(f"{use}\nStop it with: ray stop (which stops every Ray of this machine)", flush=True)
            return 0
        print(f"{use}\nThis command keeps the head running: Ctrl-C or SIGTERM stops it (its own processes only).",
              flush=True)
        while not signals.event.wait(POLL_S):
            if not head.gcs_alive():
                print(f"error: the Ray head's GCS server at {address} exited on its own; stopping what is left "
                      "of the head (its logs: /tmp/ray/session_*/logs).", file=sys.stderr, flush=True)
                head.stop()
                forget_address(address)
                return EXIT_HEAD_DIED
        return _stop(head, signals, address, "")


def _stop(head: Any, signals: _Signals, address: str, when: str) -> int:  # head: a HeadProcesses
    """Stop the head's processes after a signal; its exit code (128 + the first signal's number)."""
    from sim.executors.ray import forget_address

    name = "Ctrl-C" if signals.received[0] == signal.SIGINT else "SIGTERM"
    print(f"\n{name}{' ' + when if when else ''}: stopping the Ray head (a second signal: SIGKILL at once) ...",
          file=sys.stderr, flush=True)
    stopped = len(head.find())
    left = head.stop(hurry=lambda: len(signals.received) > 1)
    forget_address(address)
    if left:
        print(f"error: {len(left)} of the head's processes did not exit after SIGKILL: {left}", file=sys.stderr)
        return EXIT_HEAD_DIED
    print(f"Ray head stopped ({stopped} processes).", file=sys.stderr, flush=True)
    return 128 + signals.received[0]
