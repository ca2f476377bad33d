"""The shape of ``sim.cli``: one module per command, each registering its parser and handler; one root of the
user errors that ``main`` catches; a start-up that does not load what only some commands need."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

# one valid command line per handler (parsed, never run)
COMMAND_LINES = [
    ["run"], ["pairwise", "a"], ["report", "a"], ["compare", "a", "b"], ["scenarios", "list"],
    ["scenarios", "validate", "a"], ["scenarios", "lint", "a"], ["import", "healthbench", "f", "--out", "d"],
    ["import", "agentclinic", "f", "--out", "d"], ["import", "vignettes", "f", "--out", "d", "--map", "case=c"],
    ["rubrics", "generate", "all", "--out", "d"], ["judges", "build", "a"], ["judges", "validate", "a"],
    ["demo"], ["live", "viral_uri"], ["watch"], ["annotations", "export", "a"], ["serve-agent"], ["ray-head"],
    ["annotations", "taxonomy", "a", "--json", "--taxonomy", "t.json"], ["watch", "r", "--taxonomy", "t.json"],
    ["annotations", "suggest-codes", "a", "--judge", "m", "--judge-base-url", "http://127.0.0.1:9/v1"],
]


def test_the_face_keeps_what_callers_import() -> None:
    import sim.cli

    for name in ("main", "build_parser", "_run", "run_exit_code", "EXIT_USER_ERROR", "EXIT_RUN_ERRORS",
                 "EXIT_EVALUATOR_ERRORS", "EXIT_INTERRUPTED"):
        assert hasattr(sim.cli, name), name
    assert callable(sim.cli._run)  # the run coroutine (tests/tui), not a module of the package
    assert (sim.cli.EXIT_USER_ERROR, sim.cli.EXIT_RUN_ERRORS, sim.cli.EXIT_INTERRUPTED) == (2, 3, 130)


def test_every_command_module_registers_its_parser_and_handler() -> None:
    from sim.cli._main import COMMANDS, build_parser

    assert all(callable(getattr(module, "register", None)) for module in COMMANDS)
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert list(commands) == ["run", "pairwise", "report", "compare", "scenarios", "import", "rubrics", "judges",
                              "demo", "live", "watch", "annotations", "serve-agent", "ray-head"]
    assert {line[0] for line in COMMAND_LINES} == set(commands)
    for line in COMMAND_LINES:
        assert callable(parser.parse_args(line).handler), line


# The user errors of every package (docs/ARCHITECTURE.md: one root, caught once by the CLI), by (module, class name)
USER_ERRORS = [
    ("scenarios", "ScenarioError"), ("scenarios.importers", "ImportSourceError"), ("scenarios.lexicon", "LexiconError"),
    ("imaging", "ImagingError"), ("sim.records", "ConfigError"), ("sim.records", "AgentError"),
    ("scorers", "ProfileError"), ("scorers.evaluators", "EvaluatorError"), ("review", "RunWatchError"),
    ("audio.tts", "TTSError"), ("audio.stt", "STTError"), ("audio.effects", "EffectsError"),
    ("audio.live", "LiveError"), ("audio.webpage", "CallPagePortError"),
]


@pytest.mark.parametrize(("module", "name"), USER_ERRORS)
def test_each_package_s_user_error_ends_in_one_line_and_exit_2(
        module: str, name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Raised by a command's handler, each reaches main's one handler: one line on stderr, exit 2, no traceback."""
    import sim.cli._main as cli_main

    cls = getattr(importlib.import_module(module), name)
    message = f"{name}: the file named here cannot be used; fix it and run again."

    def handler(_args: argparse.Namespace) -> int:
        raise cls(98, message) if name == "CallPagePortError" else cls(message)

    parser = cli_main.build_parser()
    monkeypatch.setattr(parser, "parse_args", lambda _argv=None: argparse.Namespace(handler=handler))
    monkeypatch.setattr(cli_main, "build_parser", lambda: parser)
    assert cli_main.main(["scenarios", "list"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1, err


def test_the_table_reaches_an_error_raised_in_a_module_loaded_by_the_command(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`encsim watch` on a wrong folder (tui's RunWatchError, raised in a module only that command loads): one line,
    exit 2."""
    from sim.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["watch", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no such run directory" in err and err.count("\n") == 1


def test_a_user_error_loads_neither_the_dashboard_nor_the_voice_stack() -> None:
    """A command module imports what only its handler needs inside the handler: a mistyped path costs no
    Textual, no pipecat."""
    code = ("import sys; from sim.cli import main; rc = main(['scenarios', 'validate', '/nonexistent']); "
            "print(rc, sorted(m for m in ('tui', 'textual', 'pipecat', 'scipy.signal', 'audio.tts', 'sim.live', "
            "'imaging', 'sim.compare', 'sim.pairwise', 'scenarios.importers') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.stdout.split("\n")[-2] == "2 []", (done.stdout, done.stderr)
