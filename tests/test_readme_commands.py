"""Every `encsim` command in the README's code blocks runs as documented (issue 14, item 9).

The README is parsed, not copied: a command added to a code block is run by this test, and one this
test does not know how to run fails ``test_every_readme_command_is_known``. The commands run in a
fresh working directory through ``python -m sim.cli`` (what ``.venv/bin/encsim`` runs), with:

- endpoints replaced by a loopback OpenAI-compatible server that answers as a chat model does
  (markdown, bold labels) and requires the key named by ``--api-key-env``, which is set to a secret
  that must appear in no output and no file of the run directory;
- placeholders (``runs/<id>``, ``runs/<baseline>``, ``runs/<candidate>``) replaced by run
  directories made by the README's own scripted commands;
- work bounded where the README's command would take minutes: an endpoint run without ``--k`` gets
  ``--k 1``, the local model gets ``--max-turns 2`` and live calls ``--max-turns 2`` and free ports.
  Servers that wait for a caller (``live --serve``, ``serve-agent``) must come up, then stop on
  Ctrl-C with exit 130; a ``--connect`` to a voice agent that is not there must fail with exit 2.

Every command must exit with the documented code and print no traceback.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.adversarial.conftest import SECRET, secret_forms
from tests.fakeserver import FakeChatServer

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"

CHAT_REPLY = (
    "Thanks for waiting. Here is my assessment.\n\n"
    "## Assessment\n\n"
    "**Triage level:** 2\n\n"
    "**Escalation:** emergency\n\n"
    "**Most likely diagnoses:**\n1. Acute coronary syndrome\n2. Pulmonary embolism\n\n"
    "Please call emergency services now."
)


def readme_commands() -> list[str]:
    """The `encsim` command lines of the README's fenced code blocks, comments stripped, in order."""
    blocks = re.findall(r"^```[\w-]*\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M)
    out = []
    for block in blocks:
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip()
            if re.match(r"^(\.venv/bin/)?encsim\s", line):
                out.append(line)
    return out


COMMANDS = readme_commands()


def _kind(command: str) -> str:
    """How the test runs a README command (see the module docstring)."""
    words = shlex.split(command)[1:]
    if words[:1] == ["live"] and "--serve" in words:
        return "server"
    if words[:1] == ["serve-agent"]:
        return "server"
    if words[:1] == ["live"] and "--connect" in words:
        target = words[words.index("--connect") + 1]
        return "call" if ":8766" in target else "no-agent"
    if words[:1] == ["run"] and "--agent-url" in words:
        return "no-agent-run"
    if words[:1] == ["run"] and "--ray-address" in words:
        return "no-cluster"
    if words[:1] == ["run"] and "local" in words:
        return "local"
    if words[:1] == ["run"] and "--base-url" in words:
        return "endpoint"
    if words[:1] in (["run"], ["report"], ["compare"], ["scenarios"]):
        return "batch"
    return "unknown"


def _free_port(pair: bool = False) -> int:
    """A free loopback port (and port + 1 when ``pair``: the page of `live --serve` uses PORT+1)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if not pair or port >= 65535:
            return port
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port pair")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """A working directory with the run directories the README's placeholders name, and the loopback model."""
    cwd = tmp_path_factory.mktemp("readme")
    server = FakeChatServer(default=("ok", CHAT_REPLY)).start()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MY_KEY": SECRET, "ENCSIM_TEST_KEY": SECRET}
    runs = {}
    for name, model in (("baseline", "scripted:reference"), ("candidate", "scripted:undertriage")):
        out = cwd / "runs" / name
        done = subprocess.run([sys.executable, "-m", "sim.cli", "run", "--model", model, "--scenarios", "safety",
                               "--k", "2", "--out", str(out), "--quiet"], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        runs[name] = out
    runs["id"] = runs["baseline"]
    yield {"cwd": cwd, "server": server, "env": env, "runs": runs}
    server.stop()


def _argv(command: str, ws: dict[str, object], extra: list[str]) -> list[str]:
    server = ws["server"]
    assert isinstance(server, FakeChatServer)
    runs = ws["runs"]
    assert isinstance(runs, dict)
    words = shlex.split(command)[1:]
    swapped = []
    for i, word in enumerate(words):
        # an endpoint is a loopback chat model; a voice agent (--agent-url) is not one
        if re.fullmatch(r"https?://[^\s]+/v1", word) and words[i - 1] != "--agent-url":
            word = server.base_url  # the endpoint: a loopback chat model
        m = re.fullmatch(r"runs/<(\w+)>", word)
        if m:
            word = str(runs[m.group(1)])
        swapped.append(word)
    return [sys.executable, "-m", "sim.cli", *swapped, *extra]


def _wait_listening(proc: subprocess.Popen[str], port: int) -> None:
    """Until the server process listens on ``port`` (it loads its voice models first)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"the server did not listen on {port}: exit {proc.poll()}")


def _assert_no_leak(text: str, folder: Path | None = None) -> None:
    for form in secret_forms(SECRET):
        assert form not in text, f"secret form {form!r} in the output"
        if folder is not None:
            for path in folder.rglob("*"):
                if path.is_file():
                    assert form.encode() not in path.read_bytes(), f"secret form {form!r} in {path}"


def test_every_readme_command_is_known() -> None:
    """The README has a tour of commands, and this test knows how to run each one."""
    assert len(COMMANDS) >= 10, COMMANDS
    unknown = [c for c in COMMANDS if _kind(c) == "unknown"]
    assert not unknown, f"README commands this test cannot run yet: {unknown}"
    assert any(c.endswith("scenarios list") for c in COMMANDS)


@pytest.mark.parametrize("command", [c for c in COMMANDS if _kind(c) in ("batch", "endpoint", "local")],
                         ids=lambda c: c[:70])
def test_readme_batch_command_runs(command: str, workspace: dict[str, object]) -> None:
    kind = _kind(command)
    cwd = workspace["cwd"]
    assert isinstance(cwd, Path)
    extra: list[str] = []
    if kind == "endpoint" and "--k" not in command:
        extra += ["--k", "1"]
    if kind == "local":
        extra += ["--max-turns", "2", "--k", "1"]
    if re.search(r"\brun\b", command) and "--resume" not in command:
        extra += ["--out", str(cwd / "runs" / f"cmd-{abs(hash(command)) % 10**8}")]
    env = workspace["env"]
    assert isinstance(env, dict)
    done = subprocess.run(_argv(command, workspace, extra), cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=900)
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output[-3000:]
    assert done.returncode == 0, f"exit {done.returncode}\n{output[-3000:]}"
    _assert_no_leak(output, cwd / "runs")
    if "--api-key-env" in command:  # the key reached the endpoint, and only the endpoint
        server = workspace["server"]
        assert isinstance(server, FakeChatServer)
        assert server.headers_seen and server.headers_seen[-1].get("authorization") == f"Bearer {SECRET}"
    if " run " in f" {command} " and "--resume" not in command:
        assert "report:" in output  # the summary names the report
    if command.endswith("scenarios list"):
        ids = [line.split()[0] for line in done.stdout.splitlines()[1:] if line.strip()]
        assert len(ids) >= 40 and "acs_chest_pain" in ids
    if "--json" in command:
        assert (cwd / shlex.split(command)[-1]).is_file()


@pytest.mark.parametrize("command", [c for c in COMMANDS if _kind(c) == "server"], ids=lambda c: c[:70])
def test_readme_server_command_comes_up_and_stops_on_ctrl_c(command: str, workspace: dict[str, object],
                                                           tmp_path: Path) -> None:
    port = _free_port(pair=True)
    words = shlex.split(command)
    if "--port" in words:
        i = words.index("--port")
        words[i + 1] = str(port)
        command = shlex.join(words)
        extra: list[str] = []
    else:
        extra = ["--port", str(port)]
    if words[1] == "live":
        extra += ["--out", str(tmp_path / "call")]
    env = workspace["env"]
    assert isinstance(env, dict)
    proc = subprocess.Popen(_argv(command, workspace, extra), cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        _wait_listening(proc, port)
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "Traceback" not in output, output[-3000:]
    assert proc.returncode == 130, f"exit {proc.returncode}\n{output[-3000:]}"


@pytest.mark.parametrize("command", [c for c in COMMANDS if _kind(c) == "no-agent"], ids=lambda c: c[:70])
def test_readme_connect_to_an_absent_voice_agent_is_a_clear_error(command: str, workspace: dict[str, object],
                                                                    tmp_path: Path) -> None:
    port = _free_port()  # nothing listens there: the voice agent of the README's example is not running
    words = shlex.split(command)
    words[words.index("--connect") + 1] = re.sub(r":\d+", f":{port}", words[words.index("--connect") + 1])
    env = workspace["env"]
    assert isinstance(env, dict)
    done = subprocess.run(_argv(shlex.join(words), workspace, ["--out", str(tmp_path / "call"), "--wait", "3"]),
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output[-3000:]
    assert done.returncode == 2, f"exit {done.returncode}\n{output[-3000:]}"
    assert "--connect" in done.stderr and done.stderr.startswith("error: ")


@pytest.mark.parametrize("command", [c for c in COMMANDS if _kind(c) == "no-agent-run"], ids=lambda c: c[:70])
def test_readme_calls_to_an_absent_voice_agent_stop_in_one_paragraph(command: str, workspace: dict[str, object],
                                                                     tmp_path: Path) -> None:
    """The README's voice agent is not running here: the run of calls is refused at once, exit 2, nothing made."""
    words = shlex.split(command)
    url = urlsplit(words[words.index("--agent-url") + 1])  # nothing listens on loopback at a free port
    words[words.index("--agent-url") + 1] = urlunsplit(url._replace(netloc=f"127.0.0.1:{_free_port()}"))
    env = workspace["env"]
    assert isinstance(env, dict)
    if "--api-key-env" in words:  # the README's key variable, set: the agent's absence is what is tested
        env = {**env, words[words.index("--api-key-env") + 1]: "sk-readme-test"}
    done = subprocess.run(_argv(shlex.join(words), workspace, ["--out", str(tmp_path / "calls")]),
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output[-3000:]
    assert done.returncode == 2, f"exit {done.returncode}\n{output[-3000:]}"
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("error: ")]
    assert "--agent-url" in line and "connection refused" in line and not (tmp_path / "calls").exists()


@pytest.mark.parametrize("command", [c for c in COMMANDS if _kind(c) == "no-cluster"], ids=lambda c: c[:70])
def test_readme_run_on_an_absent_ray_cluster_is_a_clear_error(command: str, workspace: dict[str, object],
                                                              tmp_path: Path) -> None:
    """The README's cluster is not running here: the run stops at once with one paragraph, nothing written."""
    out = tmp_path / "r"
    env = workspace["env"]
    assert isinstance(env, dict)
    done = subprocess.run(_argv(command, workspace, ["--out", str(out)]), cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output[-3000:]
    assert done.returncode == 2, f"exit {done.returncode}\n{output[-3000:]}"
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("error: ")]
    assert "--ray-address" in line and "ray start --head" in line and not out.exists()


@pytest.mark.slow
@pytest.mark.parametrize("command", [c for c in COMMANDS if _kind(c) == "call"], ids=lambda c: c[:70])
def test_readme_whole_call_on_one_machine(command: str, workspace: dict[str, object], tmp_path: Path) -> None:
    """The README's pair: the built-in voice agent in one process, the patient calling it from another."""
    agent_line = next(c for c in COMMANDS if shlex.split(c)[1:2] == ["serve-agent"])
    port = _free_port()
    words = shlex.split(agent_line)
    words[words.index("--port") + 1] = str(port)
    env = workspace["env"]
    assert isinstance(env, dict)
    agent = subprocess.Popen(_argv(shlex.join(words), workspace, []), cwd=tmp_path, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        _wait_listening(agent, port)
        call = shlex.split(command)
        call[call.index("--connect") + 1] = re.sub(r":\d+", f":{port}", call[call.index("--connect") + 1])
        done = subprocess.run(_argv(shlex.join(call), workspace, ["--out", str(tmp_path / "call"), "--max-turns", "2",
                                                                  "--wait", "240"]),
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    finally:
        agent.send_signal(signal.SIGINT)
        try:
            agent_out, _ = agent.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            agent.kill()
            agent_out, _ = agent.communicate()
    output = done.stdout + done.stderr
    assert "Traceback" not in output + agent_out, (output + agent_out)[-3000:]
    assert done.returncode == 0, f"exit {done.returncode}\n{output[-3000:]}"
    assert "call ended" in done.stdout and (tmp_path / "call" / "results.jsonl").is_file()
