"""``encsim annotations export RUN_DIR``: the annotations made in the dashboard, for coding into failure modes."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Literal

from sim.cli._common import CliParser


def register(subparsers: Any) -> None:  # noqa: ANN401 - argparse's _SubParsersAction is private
    """Add the ``annotations`` parser and its ``export`` action.

    Args:
        subparsers: The ``encsim`` parser's subparsers.
    """
    ann = subparsers.add_parser("annotations", help="annotations made in the dashboard")
    anns = ann.add_subparsers(dest="action", required=True, parser_class=CliParser)
    exp = anns.add_parser("export",
                          help="write the failing annotations (notes, severity) for coding into failure modes")
    exp.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    exp.add_argument("--out", type=Path, help="output file (default RUN_DIR/annotations_export.csv or .jsonl)")
    exp.add_argument("--all", action="store_true", help="every annotated encounter, not only the failing ones")
    exp.add_argument("--format", choices=["csv", "jsonl"], default="csv")
    exp.set_defaults(handler=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    """``encsim annotations export``: see :func:`export`.

    Args:
        args: The parsed command line.

    Returns:
        The exit code (0).
    """
    return export(args.run_dir, out=args.out, every=args.all, fmt=args.format)


def export(run_dir: Path, *, out: Path | None, every: bool, fmt: Literal["csv", "jsonl"]) -> int:
    """Write a run's annotations to a CSV or JSON Lines file.

    Args:
        run_dir: The run directory.
        out: The output file (None: ``RUN_DIR/annotations_export.<fmt>``).
        every: Every annotated encounter (``--all``), not only the failing ones.
        fmt: ``csv`` or ``jsonl``.

    Returns:
        The exit code (0).

    Raises:
        RunWatchError: ``run_dir`` is not a run directory.
    """
    from tui import export_annotations

    out = out or run_dir / f"annotations_export.{fmt}"
    n = export_annotations(run_dir, out, only="all" if every else "fail", fmt=fmt)
    print(f"{n} annotation(s) written to {out}")
    return 0
