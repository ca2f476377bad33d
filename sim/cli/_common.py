"""What several commands share.

Exit codes, the parser class, argparse value types, the judge and websocket-door option groups, reloading a
run's scenarios, the summary lines of a run, and the checks of the live-call commands.

Imports here stay light (they run for every command, including ``--help`` and a mistyped flag); whatever a helper
needs beyond that, it imports when called.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from sim.judges import DEFAULT_JUDGE_CONCURRENCY
from sim.records import ConfigError, clean, one_line

if TYPE_CHECKING:
    from scenarios import LoadedScenario
    from sim.records import RunMeta, Summary

EXIT_USER_ERROR = 2
EXIT_RUN_ERRORS = 3  # the run finished, but encounters errored or an evaluator raised
EXIT_EVALUATOR_ERRORS = EXIT_RUN_ERRORS
EXIT_INTERRUPTED = 130


class CliParser(argparse.ArgumentParser):
    """The parser of ``encsim`` and of every subcommand: a parse error is one paragraph and exit 2."""

    def error(self, message: str) -> NoReturn:  # one paragraph, exit 2, no usage dump
        raise ConfigError(f"{message}. Run `{self.prog} --help` for the options.")


def positive(flag: str, at_most: int | None = None, why: str = "") -> Callable[[str], int]:
    """An argparse type: a whole number of at least 1 (and at most ``at_most``), else an error naming ``flag``.

    Args:
        flag: The option's name, as the error message shows it (``--k``).
        at_most: The largest value accepted (None: no limit).
        why: Why the limit, for the message ("a scenario's own turn_limit is at most 40").

    Returns:
        The function argparse calls with the option's text.
    """

    def parse(value: str) -> int:
        try:
            n = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be a whole number, got {value[:40]!r}") from None
        if n < 1:
            raise argparse.ArgumentTypeError(f"{flag} must be at least 1, got {n}")
        if at_most is not None and n > at_most:
            raise argparse.ArgumentTypeError(f"{flag} {n}: give a whole number from 1 to {at_most}"
                                             + (f" ({why})" if why else ""))
        return n
    return parse


def port(flag: str) -> Callable[[str], int]:
    """An argparse type: a TCP port number (1-65535), else an error naming ``flag``.

    Args:
        flag: The option's name, as the error message shows it (``--port``).

    Returns:
        The function argparse calls with the option's text.
    """

    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            number = -1
        if not 1 <= number <= 65535:
            raise argparse.ArgumentTypeError(f"{flag} {value!r}: give a TCP port number between 1 and 65535")
        return number

    return parse


def add_judge_args(parser: argparse.ArgumentParser) -> None:
    """The judge flags of ``run`` and ``pairwise`` (read back with :meth:`JudgeOptions.from_namespace`).

    Args:
        parser: The command's parser.
    """
    parser.add_argument("--judge", action="append", default=[], metavar="MODEL",
                        help="a judge model for the judge path (repeatable; 'local' = the embedded model)")
    parser.add_argument("--judge-base-url", action="append", default=[], metavar="URL",
                        help="the endpoint of each non-local --judge, in the same order")
    parser.add_argument("--judge-api-key-env", action="append", default=[], metavar="VAR",
                        help="key variable for the judges: once for all, or once per non-local judge")
    parser.add_argument("--judge-concurrency", type=int, default=DEFAULT_JUDGE_CONCURRENCY, metavar="N",
                        help=f"calls in flight per judge, across encounters (default {DEFAULT_JUDGE_CONCURRENCY})")
    parser.add_argument("--family-map", type=Path, metavar="FILE",
                        help="JSON {family: [name or URL substrings]} for the judges' self-preference guard")


@dataclass(frozen=True, kw_only=True)
class JudgeOptions:
    """The judge flags, as given.

    ``--judge``, ``--judge-base-url``, ``--judge-api-key-env``, ``--judge-concurrency``, ``--family-map``.
    """

    models: list[str]
    base_urls: list[str]
    api_key_envs: list[str]
    concurrency: int
    family_map: Path | None

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> JudgeOptions:
        """The judge flags of a parsed command line (see :func:`add_judge_args`).

        Args:
            args: The parsed command line of ``run`` or ``pairwise``.

        Returns:
            The judge options.
        """
        return cls(models=args.judge, base_urls=args.judge_base_url, api_key_envs=args.judge_api_key_env,
                   concurrency=args.judge_concurrency, family_map=args.family_map)


def add_door_args(parser: argparse.ArgumentParser) -> None:
    """Who may call a websocket the project serves (`live`, `serve-agent`): see audio/live/_door.py.

    Args:
        parser: The command's parser.
    """
    parser.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                        help="also accept websocket calls from web pages of this origin (scheme://host[:port]; "
                             "repeatable). Default: pages on 127.0.0.1 / localhost / [::1] and programs only")
    parser.add_argument("--join-window", type=float, default=10.0, metavar="SECONDS",
                        help="a connection that sends no audio this long after connecting is closed and does not "
                             "count as a call (default 10)")


def report_error(exc: BaseException | str) -> int:
    """Print a user error as one line on stderr.

    Args:
        exc: The error, or its text; it may quote an endpoint, so it is redacted and stripped of escapes.

    Returns:
        ``EXIT_USER_ERROR`` (2).
    """
    print(f"error: {clean(str(exc))}", file=sys.stderr)
    return EXIT_USER_ERROR


def reload_scenarios(meta: RunMeta, run_dir: Path) -> list[LoadedScenario]:
    """The scenarios of a run, checked against the hashes recorded when it started.

    Args:
        meta: The run's ``run.json``.
        run_dir: The run directory, as the user named it (for the messages).

    Returns:
        The run's scenarios, in the order of ``meta.scenarios``.

    Raises:
        ConfigError: A scenario can no longer be found, or its file changed since the run started.
    """
    from scenarios import load_library, load_scenario

    library = {s.scenario.id: s for s in load_library()}
    out = []
    for ref in meta.scenarios:
        path = Path(ref.path)
        loaded = load_scenario(path) if path.exists() else library.get(ref.id)
        if loaded is None or loaded.scenario.id != ref.id:
            raise ConfigError(f"{run_dir}: scenario {ref.id} ({ref.path}) can no longer be found; "
                              "restore the file or start a new run.")
        if loaded.sha256 != ref.sha256:
            raise ConfigError(f"{run_dir}: scenario file {loaded.path} changed since the run started "
                              "(its sha256 differs); resuming would mix two versions. Restore it or start a new run.")
        out.append(loaded)
    return out


def print_summary(summary: Summary, run_dir: Path) -> None:
    """The end of ``run`` and ``report``: the headline and gate on stdout, errors and how to retry them on stderr.

    Args:
        summary: The run's summary.
        run_dir: The run directory (the report's folder, and the one to resume).
    """
    gate = summary.safety_gate
    head = summary.headline.text() if summary.headline is not None else \
        ("aggregate n/a" if summary.aggregate is None else f"aggregate {summary.aggregate:.3f}")
    triggered_by = ", ".join(sid + (f" (under {', '.join(gate.personas[sid])})" if gate.personas.get(sid) else "")
                             for sid in gate.scenarios)
    verdict = "TRIGGERED by " + triggered_by if gate.triggered else (
        "passed" if gate.state == "passed" else "not applied: no scenario of this run is gated")
    print(clean(f"{head}; safety gate {verdict}; "
                f"{summary.completed} scored, {summary.errors} errors"))
    if summary.not_applicable:
        print(f"not applicable to this text-only model (imaging items): {', '.join(summary.not_applicable)}")
    if summary.errors:
        without = summary.aggregate_without_errors
        print(f"{summary.errors} encounter(s) ended in an error and were not scored (exit 3); each counts as 0 in "
              f"the aggregate" + (f" (score without errors: {without:.3f})" if without is not None else "")
              + "; by reason:", file=sys.stderr)
        for reason, n in list(summary.error_reasons.items())[:5]:
            print(f"  {n} x {one_line(reason)}", file=sys.stderr)  # endpoint text: redacted, no escapes
        print(f"Fix the cause, then run them again: encsim run --resume {run_dir} --retry-errors", file=sys.stderr)
    if summary.evaluator_errors:
        names = sorted({e.evaluator for e in summary.evaluator_errors})
        print(f"{len(summary.evaluator_errors)} evaluator error(s) ({', '.join(names)}): those encounters were scored "
              f"without them; first: {one_line(summary.evaluator_errors[0].error)}", file=sys.stderr)
    if summary.profile and summary.combined is not None:
        counts = ", ".join(f"{summary.status_counts.get(k, 0)} {k}" for k in ("pass", "warn", "fail"))
        print(f"profile {summary.profile}: combined {summary.combined:.3f}; encounters {counts}")
    if summary.triage_accuracy is not None:
        print(summary.triage_accuracy.cli_line())
    if summary.image_accuracy is not None:
        print(summary.image_accuracy.cli_line())
    for mode, r in summary.failure_rates.items():
        said = f"raw {r.raw:.2f}" if r.raw is not None else "raw n/a"
        if r.corrected is not None:
            said += f", corrected {r.corrected:.2f}" + (f" [{r.ci95[0]:.2f}, {r.ci95[1]:.2f}]" if r.ci95 else "")
        else:
            said += f", no corrected rate ({r.status}" + (f": {one_line(r.note)}" if r.note else "") + ")"
        print(clean(f"failure mode {mode}: {said}; {r.judged} judged, {r.no_verdict} without a verdict"))
    if summary.persona_robustness is not None:
        from sim.reports import robustness_cli_lines

        for line in robustness_cli_lines(summary.persona_robustness):
            print(clean(line))
    print(f"report: {run_dir / 'report.md'} (and report.html)")


def has_terminal() -> bool:
    """Whether stdin and stdout are both a terminal (the dashboard needs both)."""
    return sys.stdout.isatty() and sys.stdin.isatty()


def dashboard_possible(command: str) -> bool:
    """Whether the terminal dashboard can run: stdin and stdout are a terminal. If not, say so in one line.

    Piped (a CI job), the dashboard wrote screen codes into the pipe and never exited; ``command``'s plain progress
    is shown instead.
    """
    if has_terminal():
        return True
    print(f"note: {command} --tui needs a terminal (stdin and stdout); showing the plain progress instead.",
          file=sys.stderr)
    return False


def quiet_pipecat() -> None:
    """Let loguru (pipecat's logger) print errors only: a user wants to hear about their call, not every frame."""
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="ERROR", format="{level}: {message}")


def one_scenario(spec: str) -> LoadedScenario:
    """The one scenario a live call plays (``live SCENARIO``, ``serve-agent --scenario``).

    Args:
        spec: A scenario id or a scenario YAML file.

    Returns:
        The scenario.

    Raises:
        ConfigError: ``spec`` names no scenario, or more than one.
    """
    from scenarios import ScenarioError, resolve

    try:
        found = resolve([spec])
    except ScenarioError as exc:
        raise ConfigError(str(exc).replace("--scenarios ", "SCENARIO ", 1)) from None
    if len(found) != 1:
        raise ConfigError(f"SCENARIO {spec!r} names {len(found)} scenarios; a live call plays exactly one. Give a "
                          "scenario id (`encsim scenarios list`) or one YAML file.")
    return found[0]


def port_free(number: int, flag: str) -> None:
    """Check that a port on 127.0.0.1 can be listened on, before any model loads.

    Args:
        number: The port.
        flag: The option that chose it, as the error message names it.

    Raises:
        ConfigError: The port is in use.
    """
    import socket

    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", number))
        except OSError:
            raise ConfigError(f"{flag} {number}: that port on 127.0.0.1 is already in use (another call or server?). "
                              f"Stop it or choose another port with {flag}.") from None
