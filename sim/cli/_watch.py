"""``encsim watch [RUN_DIR]``: the terminal dashboard, following a run (or a live call) as it is written."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sim.cli._common import has_terminal
from sim.records import ConfigError


def register(subparsers: Any) -> None:  # argparse's _SubParsersAction is private
    """Add the ``watch`` parser.

    Args:
        subparsers: The ``encsim`` parser's subparsers.
    """
    watch = subparsers.add_parser("watch",
                                  help="the terminal dashboard: follow a run (or live call) as it is written")
    watch.add_argument("run_dir", nargs="?", type=Path, metavar="RUN_DIR", help="run directory (default: the newest "
                                                                               "under runs/)")
    watch.add_argument("--reviewer", help="the name annotations are saved under (default $USER)")
    watch.add_argument("--taxonomy", type=Path, metavar="FILE",
                       help="the failure taxonomy to code into: a project-level file shared by runs (default "
                            "RUN_DIR/taxonomy.json)")
    watch.set_defaults(handler=cmd_watch)


def cmd_watch(args: argparse.Namespace) -> int:
    """``encsim watch``: see :func:`watch`.

    Args:
        args: The parsed command line.

    Returns:
        The exit code (0).
    """
    return watch(args.run_dir, reviewer=args.reviewer, taxonomy_path=args.taxonomy)


def watch(run_dir: Path | None, *, reviewer: str | None, taxonomy_path: Path | None = None) -> int:
    """Open the dashboard on a run directory until the user quits it.

    Args:
        run_dir: The run directory; None: the newest under ``runs/``.
        reviewer: The name annotations are saved under (None: ``$USER``).
        taxonomy_path: The taxonomy file the coding screen writes (None: ``RUN_DIR/taxonomy.json``).

    Returns:
        The exit code (0).

    Raises:
        RunWatchError: No run directory there (or under ``runs/``).
    """
    from review import newest_run
    from tui import DashboardApp

    folder = run_dir or newest_run(Path("runs"))
    app = DashboardApp(folder, reviewer=reviewer, taxonomy_path=taxonomy_path)  # a wrong folder is said first
    if not has_terminal():  # piped, the dashboard wrote screen codes into the pipe and never exited
        raise ConfigError(f"encsim watch {folder}: the dashboard needs a terminal (stdin and stdout), and here they "
                          "are piped or redirected. Run it in a terminal, or read the run with "
                          f"`encsim report {folder}`.")
    app.run()
    return 0
