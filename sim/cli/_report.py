"""``encsim report RUN_DIR``: recompute summary.json, report.md and report.html of a run directory."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from sim.cli._common import print_summary, reload_scenarios


def register(subparsers: Any) -> None:  # argparse's _SubParsersAction is private
    """Add the ``report`` parser.

    Args:
        subparsers: The ``encsim`` parser's subparsers.
    """
    rep = subparsers.add_parser("report", help="recompute summary.json and report.md of a run directory")
    rep.add_argument("run_dir", type=Path)
    rep.set_defaults(handler=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    """``encsim report``: see :func:`report_run`.

    Args:
        args: The parsed command line.

    Returns:
        The exit code (0).
    """
    return report_run(args.run_dir)


def report_run(run_dir: Path) -> int:
    """Recompute summary.json, report.md and report.html from results.jsonl.

    It rewrites them, so it takes the run directory's lock: on a run still being written it is refused (exit 2,
    naming the pid; that run rewrites them when it finishes, and `encsim watch` follows it). Lines of results.jsonl
    it cannot use are warned about, one line each; it never changes results.jsonl (a torn last line is set aside by
    `encsim run --resume`).

    Args:
        run_dir: The run directory.

    Returns:
        The exit code (0).
    """
    from sim.store import RunStore
    from sim.summary import summarise

    store = RunStore.open(run_dir, lock="encsim report",
                          warn=lambda m: print(f"warning: {m}", file=sys.stderr))
    try:
        meta = store.read_meta()
        summary = summarise(store, reload_scenarios(meta, run_dir), meta)
    finally:
        store.close()
    print_summary(summary, store.root)
    return 0
