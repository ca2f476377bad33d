"""``encsim compare RUN_A RUN_B``: per-scenario tests, aggregate CI and drift between two run directories."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:  # argparse's _SubParsersAction is private
    """Add the ``compare`` parser.

    Args:
        subparsers: The ``encsim`` parser's subparsers.
    """
    cmp_ = subparsers.add_parser("compare",
                                 help="compare two run directories: per-scenario tests, aggregate CI, drift")
    cmp_.add_argument("run_a", type=Path, metavar="RUN_A", help="the baseline run directory")
    cmp_.add_argument("run_b", type=Path, metavar="RUN_B",
                      help="the run compared against it (differences are B - A)")
    cmp_.add_argument("--json", type=Path, metavar="PATH", help="also write the comparison as JSON to PATH")
    cmp_.set_defaults(handler=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    """``encsim compare``: see :func:`compare`.

    Args:
        args: The parsed command line.

    Returns:
        The exit code (0).
    """
    return compare(args.run_a, args.run_b, json_path=args.json)


def compare(run_a: Path, run_b: Path, *, json_path: Path | None) -> int:
    """Print the comparison of ``run_b`` against the baseline ``run_a`` (and write it as JSON).

    Args:
        run_a: The baseline run directory.
        run_b: The run compared against it (differences are B - A).
        json_path: Where to also write the comparison as JSON, if anywhere.

    Returns:
        The exit code (0).
    """
    from sim.compare import compare_runs
    from sim.reports import render_comparison, write_comparison_json

    comparison = compare_runs(run_a, run_b)
    print(render_comparison(comparison), end="")
    if json_path:
        write_comparison_json(comparison, json_path)
    return 0
