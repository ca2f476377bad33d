"""``encsim pairwise RUN...``: judges compare the transcripts of several runs; a Bradley-Terry ranking."""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.cli._common import JudgeOptions, add_judge_args, positive
from sim.records import ConfigError, redact_json


def register(subparsers: Any) -> None:  # argparse's _SubParsersAction is private
    """Add the ``pairwise`` parser.

    Args:
        subparsers: The ``encsim`` parser's subparsers.
    """
    pw = subparsers.add_parser("pairwise", help="judges compare transcripts across runs; Bradley-Terry ranking")
    pw.add_argument("runs", nargs="+", type=Path, metavar="RUN")
    pw.add_argument("--trials", type=positive("--trials"), default=1, help="trials per order per judge (default 1)")
    pw.add_argument("--json", type=Path, metavar="PATH", help="also write every outcome and the ranking as JSON")
    add_judge_args(pw)
    pw.set_defaults(handler=cmd_pairwise)


@dataclass(frozen=True, kw_only=True)
class PairwiseOptions:
    """The flags of ``encsim pairwise``."""

    runs: list[Path]
    trials: int
    json_path: Path | None
    judges: JudgeOptions

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> PairwiseOptions:
        """Read a parsed ``pairwise`` command line.

        Args:
            args: The parsed command line.

        Returns:
            The options.
        """
        return cls(runs=args.runs, trials=args.trials, json_path=args.json, judges=JudgeOptions.from_namespace(args))


def cmd_pairwise(args: argparse.Namespace) -> int:
    """``encsim pairwise``: see :func:`run_pairwise`.

    Args:
        args: The parsed command line.

    Returns:
        The exit code (0).
    """
    return run_pairwise(PairwiseOptions.from_namespace(args))


def run_pairwise(options: PairwiseOptions) -> int:
    """Check the run directories, start the judges, compare, print the ranking (and write it as JSON).

    Args:
        options: The command's flags.

    Returns:
        The exit code (0).

    Raises:
        ConfigError: No ``--judge``, or a run directory that cannot be read.
    """
    from sim.agents import LlamaServer
    from sim.judges import load_family_map, make_judges
    from sim.pairwise import pairwise
    from sim.reports import render_pairwise
    from sim.store import RunStore

    judge = options.judges
    if not judge.models:
        raise ConfigError("encsim pairwise needs at least one --judge (with --judge-base-url, or --judge local).")
    for run_dir in options.runs:
        RunStore.open(run_dir)  # a clear error for a wrong path before any server starts

    async def go() -> str:
        families = load_family_map(judge.family_map)
        server = await LlamaServer().start() if "local" in judge.models else None
        judges = make_judges(judge.models, judge.base_urls, judge.api_key_envs,
                             local_base_url=server.base_url if server else None, families=families,
                             concurrency=judge.concurrency)
        try:
            report = await pairwise(options.runs, judges, trials=options.trials, families=families)
        finally:
            for j in judges:
                await j.aclose()
            if server is not None:
                server.stop()
        if options.json_path:
            options.json_path.write_text(redact_json(report.model_dump_json(indent=2)), encoding="utf-8")
        return render_pairwise(report)

    print(asyncio.run(go()))
    return 0
