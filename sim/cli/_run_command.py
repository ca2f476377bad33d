"""``encsim run``: scenarios x K encounters against a model into a run directory (new, or ``--resume DIR``).

The flags are declared once, as the fields of ``sim.cli._run_options.RunOptions`` (the parser, the options and the
resume check are derived from them); a run's *plan* (every flag except those in ``RESUME_FLAGS``) is stored in
run.json, and ``--resume`` continues that plan, so a plan flag given with ``--resume`` is an error. ``run_plan``
plans the run (``sim.cli._run_plan.plan_run``: no network, no process, no file), starts what it needs
(``run_resources``, one exit stack) and runs the batch (``sim.runner.run_batch``).
(The module is not called ``_run``: ``sim.cli._run`` is the run coroutine, which tests drive directly.)
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scenarios.personas import DEFAULT_PERSONA
from sim.cli._common import EXIT_INTERRUPTED, EXIT_RUN_ERRORS, dashboard_possible, print_summary, report_error
from sim.cli._run_options import RESUME_FLAGS, RunOptions, add_run_flags
from sim.cli._run_plan import plan_run, run_resources
from sim.runner import run_batch, text_progress

if TYPE_CHECKING:
    from sim.records import EncounterRecord, Summary

__all__ = ["RESUME_FLAGS", "RunOptions", "cmd_run", "register", "run_exit_code", "run_plan"]


def register(subparsers: Any) -> None:
    """Add the ``run`` parser.

    Args:
        subparsers: The ``encsim`` parser's subparsers.
    """
    run = subparsers.add_parser("run", help="run scenarios x K encounters against a model into a run directory")
    add_run_flags(run)
    run.set_defaults(handler=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    """``encsim run``: run the plan, print the summary.

    Args:
        args: The parsed command line.

    Returns:
        The exit code: 0, ``EXIT_RUN_ERRORS`` (3) when encounters errored (see :func:`run_exit_code`), or
        ``EXIT_INTERRUPTED`` (130) after Ctrl-C.
    """
    started: list[Path] = []
    options: RunOptions | None = None
    try:  # from the first line: a Ctrl-C while the flags are read is still this command's to report
        options = RunOptions.from_namespace(args)
        if options.tui and not dashboard_possible("encsim run"):
            options = dataclasses.replace(options, tui=False)
        if options.tui:
            return _run_with_dashboard(options)
        summary, root = asyncio.run(run_plan(options, on_started=started.append))
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM (encsim_entry): the runner saved what finished
        where = started[-1] if started else options.resume if options is not None else None
        print(f"\ninterrupted; finished encounters are saved in {where}. Continue with: encsim run --resume {where}"
              if where else "\ninterrupted before the run directory was made; nothing was saved.", file=sys.stderr)
        return EXIT_INTERRUPTED
    print_summary(summary, root)
    return run_exit_code(summary)


def run_exit_code(summary: Summary) -> int:
    """The exit code of a finished run.

    0 only when every planned encounter was scored and every evaluator ran on it; ``EXIT_RUN_ERRORS`` (3) when
    the run finished with encounters that ended in an error, or with an evaluator that raised somewhere: the run
    is saved and scored without them, but something is broken and a script must notice.

    Args:
        summary: The finished run's summary.

    Returns:
        The exit code.
    """
    return EXIT_RUN_ERRORS if summary.errors or summary.evaluator_errors else 0


def _run_with_dashboard(options: RunOptions) -> int:
    """`encsim run --tui`: the batch runs as a worker inside the dashboard's event loop.

    The dashboard follows the run directory exactly as `encsim watch` does from another terminal.
    """
    from sim.store import new_run_id
    from tui import DashboardApp

    if not options.resume and options.out is None:
        options = dataclasses.replace(options, out=Path("runs") / new_run_id(options.model))
    run_dir = options.resume or options.out
    assert run_dir is not None
    app = DashboardApp(run_dir, job=lambda: run_plan(options), reviewer=options.reviewer)
    app.run()
    if app.job_result is None and app.job_error:
        return report_error(app.job_error)
    if app.job_result is None:
        print(f"the run did not finish; finished encounters are saved. Continue with: encsim run --resume {run_dir}",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    summary, root = app.job_result
    print_summary(summary, root)
    return run_exit_code(summary)


async def _run(args: argparse.Namespace) -> tuple[Summary, Path]:
    """:func:`run_plan` for a parsed command line (what ``encsim run --tui`` hands the dashboard as its job)."""
    return await run_plan(RunOptions.from_namespace(args))


async def run_plan(options: RunOptions, *,
                   on_started: Callable[[Path], None] | None = None) -> tuple[Summary, Path]:
    """Plan the run, start what it needs, then run every encounter into the run directory.

    Args:
        options: The run's flags.
        on_started: Called with the run directory once it exists and is locked (what an interrupted run tells
            the user to resume).

    Returns:
        The run's summary and its directory.

    Raises:
        ConfigError: The plan cannot run as given (and the other user errors of scenarios, profiles, evaluators,
            agents); nothing was written then unless the run directory had been made.
    """
    plan = await plan_run(options)
    for warning in plan.meta.judge_warnings:
        print(f"warning: {warning}", file=sys.stderr)
    async with run_resources(plan, on_started=on_started) as res:
        progress = None if options.quiet or options.tui else _Bar(not options.no_progress)
        summary = await run_batch(res.store, plan.scenarios, res.agent, res.channel, plan.meta,
                                  concurrency=res.concurrency, unusable=plan.unusable,
                                  retry_errors=options.retry_errors, judges=res.judges, profile=plan.profile,
                                  extra_evaluators=plan.extra_evaluators, progress=progress,
                                  patient_model=res.patient_model, assessment_judge=res.assessment_judge,
                                  fail_fast=options.fail_fast,
                                  failure_judges=plan.failure_judges, remote=res.remote)
        return summary, res.store.root


class _Bar:
    """A one-line progress bar on a terminal; one line per encounter otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.tty = enabled and sys.stderr.isatty()
        self.t0 = time.monotonic()

    def __call__(self, done: int, total: int, rec: EncounterRecord) -> None:
        if not self.tty:
            text_progress(done, total, rec)
            return
        width = 30
        filled = int(width * done / max(1, total))
        rate = done / max(1e-9, time.monotonic() - self.t0)
        score = rec.score.composite if rec.score else None
        shown = "ERROR" if rec.score is None else "n/a" if score is None else f"{score:.2f}"
        last = f"{rec.scenario_id} k={rec.k}" + (f" {rec.persona}" if rec.persona != DEFAULT_PERSONA else "") \
            + f" {shown}"
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {rate:.2f}/s {last[:40]:40}")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()
