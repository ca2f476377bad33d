"""The ``encsim`` parser, the dispatch to the command's handler, and the one place where user errors end.

Every command module registers its own parser (``register(subparsers)``) and sets its handler; ``main`` parses,
calls the handler, and catches the user errors (:func:`user_errors`) and Ctrl-C once, here. A command raises a
user error and lets it go: it re-raises one only to add to its message (which scenario, which flag).
"""

from __future__ import annotations

import argparse
import sys

from scenarios.errors import UserError
from sim.cli import (
    _annotations,
    _compare,
    _demo,
    _import,
    _judges,
    _live,
    _pairwise,
    _ray_head,
    _report,
    _rubrics,
    _run_command,
    _scenarios,
    _serve_agent,
    _watch,
)
from sim.cli._common import EXIT_INTERRUPTED, CliParser, quiet_pipecat, report_error

# in the order `encsim --help` lists them
COMMANDS = (_run_command, _pairwise, _report, _compare, _scenarios, _import, _rubrics, _judges, _demo, _live,
            _watch, _annotations, _serve_agent, _ray_head)

def build_parser() -> argparse.ArgumentParser:
    """The ``encsim`` parser with every command's sub-parser.

    Returns:
        The parser; a parsed command line carries its command's ``handler``.
    """
    p = CliParser(prog="encsim", description="Voice and multimodal clinical encounter simulator.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=CliParser)
    for command in COMMANDS:
        command.register(sub)
    return p


def user_errors() -> tuple[type[Exception], ...]:
    """The errors :func:`main` reports in one line (exit 2): the one root, ``scenarios.errors.UserError``.

    Every package's user-facing errors subclass it (``sim.records.EncSimError`` for those above ``scenarios``), so
    this is one class; a tuple so that a caller may add to it.

    Returns:
        The exception classes.
    """
    return (UserError,)


def main(argv: list[str] | None = None) -> int:
    """Run one ``encsim`` command line.

    Args:
        argv: The arguments after the program name (None: ``sys.argv[1:]``).

    Returns:
        The exit code: the command's own (0 done, 3 a run with errored encounters, ...), 2 for a user error
        (one line on stderr, no traceback), 130 after Ctrl-C.
    """
    started = False  # the command's handler was called (before that, nothing can have been changed)
    try:
        quiet_pipecat()
        args = build_parser().parse_args(argv)
        started = True
        return int(args.handler(args))
    except user_errors() as exc:
        return report_error(exc)  # may quote an endpoint: redacted, no escapes
    except KeyboardInterrupt:  # Ctrl-C (or SIGTERM, see encsim_entry) in any command, outside its own handling
        print("\ninterrupted." if started else "\ninterrupted before the command started; nothing was changed.",
              file=sys.stderr)
        return EXIT_INTERRUPTED
