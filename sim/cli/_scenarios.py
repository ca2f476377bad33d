"""``encsim scenarios list|validate|lint``: the scenario library, and checks of scenario files or folders."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.cli._common import EXIT_USER_ERROR, CliParser
from sim.records import ConfigError, clean

if TYPE_CHECKING:
    from scenarios import LoadedScenario


def register(subparsers: Any) -> None:  # argparse's _SubParsersAction is private
    """Add the ``scenarios`` parser and its ``list``, ``validate`` and ``lint`` actions.

    Args:
        subparsers: The ``encsim`` parser's subparsers.
    """
    sc = subparsers.add_parser("scenarios", help="list or validate scenarios")
    scs = sc.add_subparsers(dest="action", required=True, parser_class=CliParser)
    ls = scs.add_parser("list", help="list the bundled scenario library")
    ls.add_argument("--suite")
    ls.set_defaults(handler=cmd_list)
    val = scs.add_parser("validate", help="check scenario files or folders")
    val.add_argument("paths", nargs="+", type=Path)
    val.set_defaults(handler=cmd_validate)
    lint = scs.add_parser("lint", help="flag facts a natural clinician cannot reach and triggers that misfire")
    lint.add_argument("paths", nargs="+", type=Path)
    lint.set_defaults(handler=cmd_lint)


def cmd_list(args: argparse.Namespace) -> int:
    """``encsim scenarios list``: see :func:`list_scenarios`.

    Args:
        args: The parsed command line.

    Returns:
        The exit code.
    """
    return list_scenarios(args.suite)


def cmd_validate(args: argparse.Namespace) -> int:
    """``encsim scenarios validate``: see :func:`validate`.

    Args:
        args: The parsed command line.

    Returns:
        The exit code.
    """
    return validate(args.paths)


def cmd_lint(args: argparse.Namespace) -> int:
    """``encsim scenarios lint``: see :func:`lint_paths`.

    Args:
        args: The parsed command line.

    Returns:
        The exit code.
    """
    return lint_paths(args.paths)


def list_scenarios(suite: str | None) -> int:
    """``encsim scenarios list``: one line per bundled scenario.

    Args:
        suite: Only this suite's scenarios (``--suite``), or all.

    Returns:
        The exit code (0).

    Raises:
        ConfigError: No scenario is in ``suite``.
    """
    from scenarios import load_library

    rows = [s.scenario for s in load_library() if not suite or s.scenario.suite == suite]
    if not rows:
        raise ConfigError(f"--suite {suite}: no scenario in that suite.")
    print(f"{'id':34} {'suite':8} {'ESI':>3} {'escalation':10} {'turns':>5}  title")
    for s in rows:
        level = "-" if s.expected.triage_level is None else str(s.expected.triage_level)
        esc = "-" if s.expected.escalation is None else s.expected.escalation.value
        turns = "-" if s.imaging is not None else str(1 if s.replay is not None else s.max_turns)
        print(f"{s.id:34} {s.suite:8} {level:>3} {esc:10} {turns:>5}  {s.title}")
    return 0


def validate(paths: list[Path]) -> int:
    """``encsim scenarios validate``: load and check every scenario under ``paths``; every problem is reported.

    Args:
        paths: Scenario files or folders.

    Returns:
        The exit code: 0, or ``EXIT_USER_ERROR`` (2) when a file is invalid.
    """
    from scenarios.loader import RUBRICS_SUFFIX, ScenarioError, load_rubric_file, rubric_files
    from sim.lint import label_problems

    ok = failures = 0
    rubric_paths = [p for p in paths if p.name.endswith(RUBRICS_SUFFIX) and not p.is_dir()]
    rubric_paths += [f for p in paths if p.is_dir() for f in rubric_files(p)]
    for path in rubric_paths:  # rubric files (encsim rubrics generate) beside or instead of scenarios
        try:
            rubric = load_rubric_file(path)
        except ScenarioError as exc:
            failures += 1
            print(f"error: {clean(str(exc))}", file=sys.stderr)
        else:
            ok += 1
            print(f"ok: {path} (rubric of {rubric.scenario_id}, {len(rubric.rubrics)} criteria)")
    scenario_paths = [p for p in paths if p not in rubric_paths and not (p.is_dir() and rubric_files(p)
                                                                          and not _has_scenarios(p))]
    loaded, failed = _load_paths(scenario_paths) if scenario_paths else ([], 0)
    failures += failed
    for item in loaded:
        problems = label_problems(item.scenario)
        if problems:
            failures += 1
            for problem in problems:
                print(f"error: {item.path}: {problem}", file=sys.stderr)
        else:
            ok += 1
            print(f"ok: {item.path} ({item.scenario.id})")
    print(f"{ok} ok, {failures} invalid")  # stdout: stderr holds the errors, one paragraph each
    return EXIT_USER_ERROR if failures else 0


def _has_scenarios(folder: Path) -> bool:
    from scenarios.loader import ScenarioError, scenario_files

    try:
        return bool(scenario_files(folder))
    except ScenarioError:
        return False


def lint_paths(paths: list[Path]) -> int:
    """``encsim scenarios lint``: facts a natural clinician cannot reach, triggers that misfire.

    Args:
        paths: Scenario files or folders.

    Returns:
        The exit code: 0 when nothing is flagged, 1 when something is, 2 when a file cannot be loaded.
    """
    from sim.lint import lint_scenario

    loaded, broken = _load_paths(paths)
    flagged = clean = 0
    for item in loaded:
        findings = lint_scenario(item.scenario)
        flagged += len(findings)
        for f in findings:
            print(f"{item.path}: fact {f.fact_id}: {f.kind}: {f.message}")
        if not findings:
            clean += 1
            print(f"ok: {item.path} ({item.scenario.id})")
    if flagged:
        print(f"{flagged} finding(s)", file=sys.stderr)
    print(f"{clean} ok, {len(loaded) - clean} with findings, {broken} invalid")
    return EXIT_USER_ERROR if broken else (1 if flagged else 0)


def _load_paths(paths: list[Path]) -> tuple[list[LoadedScenario], int]:
    """Every scenario under ``paths`` that loads, and how many files (or unusable folders) could not be loaded.

    A folder that is missing or empty counts as one. Every failure is reported (an error line each on stderr), not
    only the first.
    """
    from scenarios import ScenarioError, load_scenario
    from scenarios.loader import load_dir_each, unique_problems

    out: dict[Path, LoadedScenario] = {}
    errors: list[ScenarioError] = []
    for path in paths:
        try:
            if path.is_dir():
                loaded, bad = load_dir_each(path)
                errors += bad
            else:
                loaded = [load_scenario(path)]
        except ScenarioError as exc:
            errors.append(exc)
            continue
        for item in loaded:
            out.setdefault(item.path.resolve(), item)
    clashes = unique_problems(list(out.values()))  # ids and canaries unique across every path given
    errors += clashes.values()
    for err in errors:
        print(f"error: {clean(str(err))}", file=sys.stderr)  # a file name may hold escape sequences
    return [s for s in out.values() if s.path not in clashes], len(errors)
