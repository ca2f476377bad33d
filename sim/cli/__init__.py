"""``encsim``: the command line.

The only place that wires scenarios, agents, channels, runner and scorers together. User errors print one
paragraph and exit 2; Ctrl-C exits 130 with a resume hint.

    encsim run [--scenarios X ...] [--model M] [--k N] [--concurrency N] [--seed N] [--out DIR]
        [--patient-model M [--patient-base-url URL] [--patient-api-key-env VAR]]
    encsim run --resume DIR [--retry-errors]
    encsim report DIR
    encsim scenarios list [--suite S]
    encsim scenarios validate PATH...
    encsim scenarios lint PATH...
    encsim live SCENARIO [--connect ws://HOST:PORT/PATH | --serve] [--port N] [--out DIR]
    encsim serve-agent --model local|scripted:reference|<endpoint model> [--scenario ID] [--port N]
    encsim watch [RUN_DIR] [--reviewer NAME]
    encsim annotations export RUN_DIR [--out FILE] [--all] [--format csv|jsonl]
    encsim demo

One module per command, each with ``register(subparsers)`` (its parser and handler) and its typed options:
``_run_command`` (run), ``_report``, ``_compare``, ``_pairwise``, ``_scenarios`` (list, validate, lint),
``_import``, ``_demo``, ``_live``, ``_serve_agent``, ``_watch``, ``_annotations`` (export); ``_common`` holds what
several share. ``_main`` builds the parser, dispatches, and is the one place that catches user errors.
A command module imports what its parser needs at the top and the rest inside its handler: every command line,
``--help`` and a mistyped flag included, pays for the imports of all the parsers.
"""

from __future__ import annotations

from sim.cli._common import EXIT_EVALUATOR_ERRORS, EXIT_INTERRUPTED, EXIT_RUN_ERRORS, EXIT_USER_ERROR
from sim.cli._main import build_parser, main, user_errors
from sim.cli._run_command import RunOptions, _run, run_exit_code, run_plan

__all__ = [
    "EXIT_EVALUATOR_ERRORS",
    "EXIT_INTERRUPTED",
    "EXIT_RUN_ERRORS",
    "EXIT_USER_ERROR",
    "RunOptions",
    "_run",  # `encsim run --tui`'s job for a parsed command line (tests/tui drive it)
    "build_parser",
    "main",
    "run_exit_code",
    "run_plan",
    "user_errors",
]
