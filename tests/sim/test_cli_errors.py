"""Every input a user can get wrong: one paragraph naming the flag or file and the fix, exit 2, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
BROKEN = ROOT / "tests" / "scenarios" / "broken"


def encsim(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, timeout=60)


CASES = [
    (["run", "--k", "0"], "--k must be at least 1"),
    (["run", "--k", "many"], "--k must be a whole number"),
    (["run", "--concurrency", "-3"], "--concurrency must be at least 1"),
    (["run", "--model", "scripted:nobody"], "unknown scripted control"),
    (["run", "--model", "gpt-x"], "needs --base-url"),
    (["run", "--model", "gpt-x", "--base-url", "localhost:8000"], "must start with http"),
    (["run", "--model", "gpt-x", "--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "ENCSIM_NO_SUCH_VAR"],
     "ENCSIM_NO_SUCH_VAR is not set"),
    (["run", "--scenarios", "no_such_scenario"], "not a scenario file, folder, scenario id or suite name"),
    (["run", "--scenarios", str(BROKEN / "bad_icd10.yaml")], "expected.diagnoses[0].icd10"),
    (["run", "--resume", "/nonexistent/run"], "not a run directory"),
    (["run", "--retry-errors"], "--retry-errors only applies with --resume"),
    (["run", "--model", "local", "--gguf", "/nonexistent/model.gguf"], "no such model file"),
    (["run", "--model", "scripted:reference", "--gguf", "x.gguf"], "--gguf only applies with --model local"),
    (["report", "/nonexistent/run"], "not a run directory"),
    (["scenarios", "list", "--suite", "nonsense"], "no scenario in that suite"),
    (["scenarios", "validate", str(BROKEN / "pregnant_male.yaml")], "patient_profile.pregnant"),
    (["frobnicate"], "invalid choice"),
    (["run", "--audio-format", "opus"], "--audio-format opus only applies with --mode voice or --mode call"),
    (["run", "--mode", "voice", "--audio-format", "mp3"], "invalid choice"),
    (["live", "viral_uri", "--audio-format", "aac"], "invalid choice"),
]


@pytest.mark.parametrize(("args", "fragment"), CASES, ids=[" ".join(a)[:50] for a, _ in CASES])
def test_user_error_is_one_clear_paragraph(tmp_path: Path, args: list[str], fragment: str,
                                           monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """In this process (the CLI's own error handling; the process exit and the console script's are covered by the
    subprocess tests below and by tests/adversarial)."""
    from sim.cli import main

    monkeypatch.chdir(tmp_path)
    code = main(args)
    assert code == 2, (code, capsys.readouterr())
    err = capsys.readouterr().err.strip()
    assert fragment in err, err
    assert "Traceback" not in err and err.startswith("error: ")
    assert err.count("\n") == 0, err


def _user_error_in_a_process(tmp_path: Path, args: list[str], fragment: str) -> None:
    done = encsim(*args, cwd=tmp_path)
    assert done.returncode == 2, (done.returncode, done.stderr)
    err = done.stderr.strip()
    assert fragment in err, err
    assert "Traceback" not in err and err.startswith("error: ")
    assert err.count("\n") == 0, err


def test_existing_out_dir_is_not_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert encsim("run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1", "--out", str(out),
                  cwd=tmp_path).returncode == 0
    again = encsim("run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1", "--out", str(out),
                   cwd=tmp_path)
    assert again.returncode == 2 and "--resume" in again.stderr


def test_api_key_never_reaches_run_dir(tmp_path: Path) -> None:
    from tests.fakeserver import FakeChatServer
    secret = "sk-live-DO-NOT-LEAK-42"
    with FakeChatServer(default=("status", 401)) as srv:
        done = encsim("run", "--model", "m", "--base-url", srv.base_url, "--api-key-env", "ENCSIM_KEY", "--scenarios",
                      "viral_uri", "--k", "1", "--out", str(tmp_path / "r"), "--fail-fast", "0", cwd=tmp_path,
                      env={"ENCSIM_KEY": secret})  # --fail-fast 0: the 401 is recorded (else exit 2, nothing saved)
        assert srv.headers_seen[0]["authorization"] == f"Bearer {secret}"
    assert done.returncode == 3  # the encounter ended in an error (401): saved, never scored
    for f in (tmp_path / "r").iterdir():
        assert secret not in f.read_text(), f
    assert secret not in done.stdout + done.stderr
    assert "HTTP 401" in (tmp_path / "r" / "results.jsonl").read_text()


LIVE_CASES = [
    (["live", "no_such_scenario"], "SCENARIO 'no_such_scenario': not a scenario file"),
    (["live", "triage"], "a live call plays exactly one"),
    (["live", "viral_uri", "--connect", "http://127.0.0.1:9000"], "not a websocket URL"),
    (["live", "viral_uri", "--connect", "ws://127.0.0.1:99999/x"], "port is not a number"),
    (["live", "viral_uri", "--port", "0"], "--port '0': give a TCP port number"),
    (["live", "viral_uri", "--serve", "--connect", "ws://127.0.0.1:9000"], "not allowed with argument"),
    (["live", "viral_uri", "--barge-in-after", "-1", "--port", "18901"], "--barge-in-after -1.0"),
    (["serve-agent", "--model", "scripted:nobody", "--scenario", "viral_uri"], "unknown scripted control"),
    (["serve-agent", "--model", "gpt-x"], "needs --base-url"),
]


@pytest.mark.parametrize(("args", "fragment"), LIVE_CASES, ids=[" ".join(a)[:50] for a, _ in LIVE_CASES])
def test_live_user_error_is_one_clear_paragraph(tmp_path: Path, args: list[str], fragment: str) -> None:
    _user_error_in_a_process(tmp_path, args, fragment)


def test_live_port_in_use_is_named(tmp_path: Path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        for args in (["live", "viral_uri", "--port", str(port)], ["serve-agent", "--model", "scripted:reference",
                                                                   "--scenario", "viral_uri", "--port", str(port)]):
            done = encsim(*args, cwd=tmp_path)
            assert done.returncode == 2, done.stderr
            assert f"--port {port}: that port on 127.0.0.1 is already in use" in done.stderr
            assert "Traceback" not in done.stderr


def test_live_call_nobody_calls_is_recorded_as_error(tmp_path: Path) -> None:
    """No caller within --wait: exit 3 (a run whose encounter errored), recorded as an error, never scored."""
    import json
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = tmp_path / "live"
    done = encsim("live", "viral_uri", "--port", str(port), "--wait", "1", "--out", str(out), cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr and "nobody connected within 1 s" in done.stdout
    (rec,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert rec["status"] == "error" and rec["score"] is None
    assert json.loads((out / "summary.json").read_text())["errors"] == 1
    assert json.loads((out / "run.json").read_text())["channel"] == "live"


DASHBOARD_CASES = [
    (["watch", "/nonexistent/run"], "/nonexistent/run: no such run directory"),
    (["watch"], "runs: no such folder of runs"),
    (["annotations", "export", "/nonexistent/run"], "no such run directory"),
    (["annotations", "export"], "the following arguments are required: RUN_DIR"),
    (["annotations", "taxonomy", "/nonexistent/run"], "annotations taxonomy: /nonexistent/run: no such run directory"),
    (["annotations", "taxonomy"], "the following arguments are required: RUN_DIR"),
]


@pytest.mark.parametrize(("args", "fragment"), DASHBOARD_CASES, ids=[" ".join(a)[:50] for a, _ in DASHBOARD_CASES])
def test_dashboard_user_error_is_one_clear_paragraph(tmp_path: Path, args: list[str], fragment: str) -> None:
    _user_error_in_a_process(tmp_path, args, fragment)


def test_annotations_export_from_the_cli(tmp_path: Path) -> None:
    import csv
    import json

    out = tmp_path / "r"
    assert encsim("run", "--model", "scripted:undertriage", "--scenarios", "acs_chest_pain,viral_uri", "--k", "1",
                  "--out", str(out), "--quiet", cwd=tmp_path).returncode == 0
    lines = [{"trace_id": "acs_chest_pain:0", "verdict": "fail", "notes": "missed the radiation question",
              "failure_mode": None, "severity": "clinician_would_notice", "reviewer": "dr a", "timestamp": 1.0,
              "review_pass": 1},
             {"trace_id": "viral_uri:0", "verdict": "pass", "notes": "", "failure_mode": None, "severity": None,
              "reviewer": "dr a", "timestamp": 2.0, "review_pass": 1}]
    (out / "annotations.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines) + "{torn")
    done = encsim("annotations", "export", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "1 annotation(s) written" in done.stdout
    rows = list(csv.DictReader((out / "annotations_export.csv").open()))
    assert len(rows) == 1 and rows[0]["notes"] == "missed the radiation question"
    assert rows[0]["severity"] == "clinician_would_notice"


def test_a_user_error_does_not_load_the_voice_stack() -> None:
    """Catching a typo'd command imported every audio module (scipy.signal, pipecat) for their error classes: 2.5 s
    on every user error. An audio error can only come from an audio module that is already loaded."""
    code = ("import sys; from sim.cli import main; rc = main(['frobnicate']); "
            "print(rc, sorted(m for m in ('audio.live', 'audio.effects', 'scipy.signal') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).parents[2])
    assert done.stdout.split("\n")[0] == "2 []", (done.stdout, done.stderr)
    assert "invalid choice: 'frobnicate'" in done.stderr
