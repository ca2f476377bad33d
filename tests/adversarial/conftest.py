"""Shared checks of the red-team suite (issue 14): every broken input must end in a clear error.

``encsim_in_process`` runs ``sim.cli.main`` in this process (fast; an exception escaping ``main`` is
a traceback a user would see, so it fails the test). ``encsim_subprocess`` runs the real console
entry point (for signals, stdin and exit codes as the shell sees them). ``assert_clean`` checks what
every case must satisfy: the expected exit code, no traceback, the file or flag named, and no secret
in any output or in any file of a run directory, in any escaping.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import subprocess
import sys
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
SECRET = "sk-test-SECRET-9f8e7d6c5b4a"  # the key every adversarial run is given (ENCSIM_TEST_KEY)


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def secret_forms(secret: str = SECRET) -> list[str]:
    """The forms a key can leak in: raw, JSON-escaped, URL-escaped, and base64 (alone and in Basic auth)."""
    forms = {secret, json.dumps(secret)[1:-1], urllib.parse.quote(secret, safe=""),
             urllib.parse.quote_plus(secret), base64.b64encode(secret.encode()).decode().rstrip("=")}
    for prefix in ("u:", ":"):
        forms.add(base64.b64encode((prefix + secret).encode()).decode().rstrip("="))
    return sorted(forms)


def encsim_in_process(*args: str, env: dict[str, str] | None = None) -> Outcome:
    from sim.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse exits 2 on a bad flag
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return Outcome(code, out.getvalue(), err.getvalue())


def encsim_subprocess(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
                      timeout: float = 120) -> Outcome:
    done = subprocess.run([sys.executable, "-m", "sim.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, timeout=timeout)
    return Outcome(done.returncode, done.stdout, done.stderr)


def files_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []


def assert_clean(outcome: Outcome, *, code: int | tuple[int, ...], names: tuple[str, ...] = (),
                 run_dirs: tuple[Path, ...] = (), secret: str | None = SECRET) -> None:
    """The exit code, no traceback, every name in the output, and no form of ``secret`` anywhere."""
    codes = code if isinstance(code, tuple) else (code,)
    assert outcome.code in codes, f"exit {outcome.code}, expected {codes}\n{outcome.output[-3000:]}"
    assert "Traceback" not in outcome.output, outcome.output[-3000:]
    for name in names:
        assert name in outcome.output, f"{name!r} not named in:\n{outcome.output[-3000:]}"
    if secret:
        for form in secret_forms(secret):
            assert form not in outcome.output, f"secret form {form!r} in the output"
            for folder in run_dirs:
                for path in files_under(folder):
                    assert form.encode() not in path.read_bytes(), f"secret form {form!r} in {path}"


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run of three encounters (viral_uri, scripted:reference) for each module to break copies of."""
    out = tmp_path_factory.mktemp("runs") / "base"
    outcome = encsim_in_process("run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "3",
                                "--out", str(out), "--no-progress")
    assert outcome.code == 0, outcome.output
    return out
