"""The ``encsim`` console script (``[project.scripts]``): signals handled from the first moment it runs.

Importing ``sim.cli`` takes about a second (pydantic models, httpx, numpy, the intent lexicon). Under
Python's defaults a Ctrl-C in that second prints a KeyboardInterrupt traceback from deep inside an
import, and SIGTERM kills the process at any moment without saving or saying anything. This module
imports nothing of the project before it has installed its handlers, and then:

- while ``sim.cli`` is imported, SIGINT or SIGTERM ends the process at once with one line and exit
  130 (SIGINT) or 143 (SIGTERM): nothing has started, so there is nothing to save;
- while the command runs, SIGINT is Python's own (KeyboardInterrupt; inside ``asyncio.run``, asyncio's:
  the first one cancels the main task, so ``encsim run`` saves every finished encounter, recomputes the
  summary and prints the resume command; a second one interrupts at once). SIGTERM is handled like
  SIGINT (a SIGINT is raised, so whichever SIGINT handler is in force runs), and the exit code is then
  143 (128 + 15) rather than 130. ``sim.cli.main`` turns a KeyboardInterrupt in any command into one
  line and exit 130. After SIGTERM a watchdog gives the command ``GRACE_S`` (5 s) to finish its own
  cleanup, then exits 143 anyway (a supervisor's SIGTERM must end the process);
- an interrupted command (exit 130 / 143) then exits without the interpreter's shutdown: its own
  cleanup is done, and what is left (a voice pipeline's pending tasks) would only print noise; after
  any other command, a signal during shutdown ends the process at once with 128 + its number.

A signal the process was started with ignored (``nohup``, ``cmd &`` in a script) stays ignored. A
signal within the first few tens of milliseconds, while the interpreter itself starts (before any
code of this module runs), gets the interpreter's default behaviour. ``python -m sim.cli`` uses
``run_cli`` too, after its imports.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType

EXIT_SIGINT = 130  # 128 + 2
EXIT_SIGTERM = 143  # 128 + 15
_HANDLED = (signal.SIGINT, signal.SIGTERM)
GRACE_S = 5.0  # after SIGTERM, the command's own cleanup may take this long before the process exits anyway
_received: list[int] = []  # the signals this process was sent while a command ran
_stopping = threading.Event()  # SIGTERM came while a command ran
_returned = threading.Event()  # the command returned


def _stop_now(signum: int, _frame: FrameType | None) -> None:
    """Before the command starts or after it returned: nothing to save, exit at once."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed or broken stream must not stop the exit
            stream.flush()
    os._exit(128 + signum)


def _stop_now_saying(signum: int, frame: FrameType | None) -> None:
    try:
        os.write(2, b"\ninterrupted before the command started; nothing was changed.\n")
    except OSError:
        pass
    _stop_now(signum, frame)


def _terminate_like_interrupt(signum: int, _frame: FrameType | None) -> None:
    """SIGTERM while a command runs: whatever a SIGINT would do now, and the watchdog is armed."""
    _received.append(signum)
    _stopping.set()
    if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL, None):
        raise KeyboardInterrupt  # SIGINT ignored (nohup, `cmd &`): SIGTERM still stops the command
    # a real SIGINT, so that any handler in force runs: Python's, asyncio's (cancel the main task), a loop's own
    signal.raise_signal(signal.SIGINT)


def _watchdog() -> None:
    """Once SIGTERM came: exit with 143 if the command has not returned ``GRACE_S`` seconds later."""
    _stopping.wait()
    if _returned.wait(GRACE_S):
        return
    try:
        os.write(2, f"\nencsim: still busy {GRACE_S:g} s after SIGTERM; exiting now.\n".encode())
    finally:
        os._exit(EXIT_SIGTERM)


def _install(handlers: dict[int, Callable[[int, FrameType | None], None] | int]) -> None:
    for signum, handler in handlers.items():
        if signal.getsignal(signum) is not signal.SIG_IGN:  # keep what the parent asked to be ignored
            signal.signal(signum, handler)


def exit_code(code: int) -> int:
    """The command's exit code, or 143 when SIGTERM stopped it.

    143 whatever the command made of the interruption: ``run`` returns 130, the dashboard of ``watch`` just closes.
    """
    return EXIT_SIGTERM if signal.SIGTERM in _received else code


def run_cli(cli_main: Callable[[], int]) -> int:
    """Run ``cli_main`` with SIGTERM handled like SIGINT (and the watchdog); then any later signal exits at once.

    An interrupted command exits without the interpreter's shutdown (its own cleanup is done by then; what
    is left, such as a voice pipeline's pending tasks, would only print noise).
    """
    threading.Thread(target=_watchdog, name="encsim-sigterm-watchdog", daemon=True).start()
    _install({signal.SIGINT: signal.default_int_handler, signal.SIGTERM: _terminate_like_interrupt})
    try:
        code = cli_main()
    except KeyboardInterrupt:  # one that escaped the command's own handling (e.g. a second Ctrl-C)
        print("\ninterrupted.", file=sys.stderr)
        code = EXIT_SIGINT
    _returned.set()
    code = exit_code(code)
    _install(dict.fromkeys(_HANDLED, _stop_now))
    if code in (EXIT_SIGINT, EXIT_SIGTERM):
        _stop_now(code - 128, None)
    return code


def main() -> int:
    """Run the ``encsim`` command: a signal ends the import of ``sim.cli`` at once, then ``run_cli`` runs it.

    Returns:
        The command's exit code (see the module docstring).
    """
    _install(dict.fromkeys(_HANDLED, _stop_now_saying))
    from sim.cli import main as cli_main  # the slow import, under the handlers above

    return run_cli(cli_main)


if __name__ == "__main__":
    sys.exit(main())
