"""`encsim run --executor ray`: the same run directory and scores as the local executor, on one local Ray instance.

The module starts ONE Ray instance (2 CPUs, 127.0.0.1 only, no dashboard) for all its tests and stops it after.
The in-process CLI runs use it as it is (``sim.executors.ray.connect`` joins an initialised Ray); the killed-driver
test's subprocess joins it through ``--ray-address``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Not RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 (which also keeps Ray on 127.0.0.1): the instances here start as a
# user's do, so the loopback-only tests check `loopback_only`. The key is set before Ray starts, so that its
# workers inherit it.
os.environ.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)
KEY = "sk-ray-test-6f1c0e9a2b7d"
os.environ["ENCSIM_RAY_TEST_KEY"] = KEY

import ray  # noqa: E402

from scenarios import LoadedScenario  # noqa: E402
from sim.agents.scripted import ReferenceAgent  # noqa: E402
from sim.cli import main  # noqa: E402
from sim.cli._run_command import run_exit_code  # noqa: E402
from sim.encounter import HARNESS_VERSION  # noqa: E402
from sim.encounter.channel import TextChannel  # noqa: E402
from sim.executors.ray import RayEncounters, WorkerSpec  # noqa: E402
from sim.records import RunMeta, ScenarioRef, read_events  # noqa: E402
from sim.runner import run_batch  # noqa: E402
from sim.store import RunStore  # noqa: E402
from tests.fakeserver import FakeChatServer  # noqa: E402
from tests.sim.remote_checks import (  # noqa: E402
    assert_a_refused_key_stops_the_run_early,
    assert_the_key_was_sent_and_never_written,
)

ROOT = Path(__file__).resolve().parents[2]
THREE = "viral_uri,acs_chest_pain,appendicitis"


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """One local Ray instance for the module, started as ``connect`` starts one; yields its GCS address."""
    from sim.executors._ray_auth import private_token
    from sim.executors.ray import loopback_only

    restore = private_token()  # its own token, in the environment (subprocesses that join it inherit it)
    with loopback_only():
        ray.init(address="local", num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
                 log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        restore()


def _lines(run: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines() if x.strip()]


def _composites(run: Path) -> dict[tuple[str, int], float | None]:
    return {(x["scenario_id"], x["k"]): (x["score"] or {}).get("composite") for x in _lines(run)}


def _event_counts(run: Path) -> Counter[str]:
    events, skipped = read_events(run / "events.jsonl")
    assert skipped == 0
    return Counter(e.type for e in events)


@pytest.mark.parametrize("control", ["scripted:reference", "scripted:undertriage"])
def test_scripted_controls_score_the_same_on_ray_as_locally(cluster: str, tmp_path: Path, control: str) -> None:
    codes = {}
    for executor in ("local", "ray"):
        codes[executor] = main(["run", "--executor", executor, "--model", control, "--scenarios", THREE, "--k", "2",
                                "--out", str(tmp_path / executor), "--quiet"])
    local, remote = tmp_path / "local", tmp_path / "ray"
    assert codes["ray"] == codes["local"]
    assert len(_composites(remote)) == 6 and _composites(remote) == _composites(local)
    assert [sorted(x) for x in _lines(remote)] == [sorted(x) for x in _lines(local)]
    assert [sorted(x["result"]) for x in _lines(remote)] == [sorted(x["result"]) for x in _lines(local)]
    for name in ("run.json", "results.jsonl", "events.jsonl", "summary.json", "report.md", "report.html"):
        assert (remote / name).is_file(), name
    # the dashboard reads the same events: every turn, start and end of every encounter, one run start and end
    assert _event_counts(remote) == _event_counts(local)
    ray_summary = json.loads((remote / "summary.json").read_text())
    assert ray_summary["aggregate"] == json.loads((local / "summary.json").read_text())["aggregate"]
    assert json.loads((remote / "run.json").read_text())["finished_at"] is not None


def test_a_killed_ray_driver_loses_nothing_and_a_local_resume_finishes(cluster: str, tmp_path: Path) -> None:
    out = tmp_path / "r"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "sim.cli", "run", "--executor", "ray", "--ray-address", cluster,
                             "--model", "scripted:reference", "--scenarios", "viral_uri,acs_chest_pain", "--k", "4",
                             "--concurrency", "1", "--out", str(out), "--quiet"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 180  # a bound on a hung subprocess, not the synchronisation
    try:
        while not (results.is_file() and results.read_text().count("\n") >= 1):
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "no result line within 180 s"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
        if proc.stderr:
            proc.stderr.close()
    before = results.read_text().splitlines()
    assert 1 <= len(before) < 8  # killed mid-run
    assert main(["run", "--resume", str(out), "--quiet"]) == 0  # with the local executor
    after = (out / "results.jsonl").read_text().splitlines()
    assert after[: len(before)] == before  # nothing finished was lost or rewritten
    keys = [(json.loads(x)["scenario_id"], json.loads(x)["k"]) for x in after]
    assert len(keys) == len(set(keys)) == 8  # nothing run twice, nothing missing
    started = [e for e in read_events(out / "events.jsonl")[0] if e.type == "run_started"]
    assert len(started) == 2 and started[1].resumed and started[1].already_done == len(before)


def _meta(items: list[LoadedScenario], k: int) -> RunMeta:
    return RunMeta(run_id="r", harness_version=HARNESS_VERSION, model="scripted:reference", k=k, seed=0,
                   created_at=0.0, scenarios=[ScenarioRef(id=s.scenario.id, path=str(s.path), sha256=s.sha256)
                                              for s in items])


async def test_a_worker_that_dies_is_retried_once_then_recorded_as_an_error(
        cluster: str, tmp_path: Path, library: list[LoadedScenario]) -> None:
    attempts = tmp_path / "attempts"

    async def dies_on_viral_uri(spec: WorkerSpec) -> Any:  # pickled by value: built in the worker
        from sim.agents import make_agent

        inner = await make_agent("scripted:reference")

        class DiesOnViralUri:
            name = inner.name
            vision = inner.vision

            async def respond(self, request: Any) -> Any:
                if request.scenario is not None and request.scenario.id == "viral_uri":
                    with open(attempts, "a") as fh:  # noqa: ASYNC230
                        fh.write(f"{os.getpid()}\n")
                    os._exit(1)  # the worker process dies, as on an out-of-memory kill
                return await inner.respond(request)

            async def aclose(self) -> None:
                await inner.aclose()

        return DiesOnViralUri()

    items = [s for s in library if s.scenario.id in ("viral_uri", "simple_uti")]
    meta = _meta(items, 1)
    store = RunStore.create(tmp_path / "r", meta)
    remote = RayEncounters(WorkerSpec(model=meta.model, agent_factory=dies_on_viral_uri), meta=meta, scenarios=items,
                           audio_dir=tmp_path / "r" / "audio")
    try:
        # the driver's agent and channel are not used for the encounters: the workers build their own
        summary = await run_batch(store, items, ReferenceAgent(), TextChannel(), meta, concurrency=2, progress=None,
                                  remote=remote)
    finally:
        store.close()
    by_id = {x["scenario_id"]: x for x in _lines(tmp_path / "r")}
    assert by_id["simple_uti"]["status"] == "ok"
    assert by_id["viral_uri"]["status"] == "error" and by_id["viral_uri"]["error"].startswith("worker died twice: ")
    pids = attempts.read_text().split()
    assert len(pids) == 2 and len(set(pids)) == 2  # the first try and one retry, each in a worker that died
    assert summary.errors == 1 and run_exit_code(summary) == 3


def test_a_ray_run_against_an_endpoint_reads_the_key_on_the_worker_and_fails_fast(
        cluster: str, tmp_path: Path, fake_server: type[FakeChatServer], capsys: pytest.CaptureFixture[str]) -> None:
    server = fake_server(default=("ok", "Thanks for telling me. When did the cough start, and any fever?")).start()
    out = tmp_path / "ok"
    code = main(["run", "--executor", "ray", "--model", "gpt-4o-mini", "--base-url", server.base_url,
                 "--api-key-env", "ENCSIM_RAY_TEST_KEY", "--scenarios", "viral_uri", "--k", "2", "--max-turns", "3",
                 "--out", str(out), "--quiet"])
    assert code in (0, 3) and len(_lines(out)) == 2
    assert_the_key_was_sent_and_never_written(server, out, KEY)
    session = Path(ray._private.worker._global_node.get_session_dir_path())
    leaked = [p for p in session.rglob("*") if p.is_file() and not p.is_symlink() and p.stat().st_size < 50_000_000
              and KEY.encode() in p.read_bytes()]
    assert not leaked, leaked

    # a key the endpoint refuses: fatal at the first call (no retries to wait for), seen by the driver's check
    assert_a_refused_key_stops_the_run_early(["--executor", "ray"], fake_server, capsys, tmp_path / "refused",
                                             key_env="ENCSIM_RAY_TEST_KEY", key=KEY, k=5)


def test_ray_flags_are_checked_before_anything_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        nothing = f"127.0.0.1:{s.getsockname()[1]}"
    cases = [
        (["--executor", "ray", "--ray-address", nothing], f"--ray-address {nothing}: nothing answers there"),
        (["--ray-address", "auto"], "--ray-address and --ray-actors only apply with --executor ray"),
        (["--executor", "ray", "--model", "local"], "--executor ray with --model local"),
    ]
    for i, (flags, expected) in enumerate(cases):
        out = tmp_path / str(i)
        base = ["run", "--scenarios", "viral_uri", "--k", "1", "--out", str(out), "--quiet"]
        model = [] if "--model" in flags else ["--model", "scripted:reference"]
        assert main([*base, *model, *flags]) == 2
        (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("error:")]
        assert expected in line, line
        assert not out.exists()
    assert main(["run", "--executor", "ray", "--ray-actors", "0", "--model", "scripted:reference"]) == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("error:")]
    assert "--ray-actors must be at least 1, got 0" in line


def test_without_ray_installed_the_executor_is_a_one_paragraph_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    code = main(["run", "--executor", "ray", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1",
                 "--out", str(tmp_path / "r"), "--quiet"])
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("error:")]
    assert code == 2 and "pip install encounter-sim[ray]" in line and not (tmp_path / "r").exists()


@pytest.mark.slow
def test_a_voice_run_on_ray_writes_the_same_audio_layout_and_scores(cluster: str, tmp_path: Path) -> None:
    flags = ["--mode", "voice", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1",
             "--max-turns", "4", "--quiet"]
    assert main(["run", *flags, "--out", str(tmp_path / "local")]) == 0
    assert main(["run", *flags, "--executor", "ray", "--ray-actors", "1", "--out", str(tmp_path / "ray")]) == 0
    local, remote = tmp_path / "local", tmp_path / "ray"
    assert _composites(remote) == _composites(local)
    files = {run: sorted(str(p.relative_to(run / "audio")) for p in (run / "audio").rglob("*") if p.is_file())
             for run in (local, remote)}
    assert files[remote] == files[local] and any(f.endswith("call.flac") for f in files[remote])
    (rec,) = _lines(remote)
    paths = [rec["result"]["artifacts"]["call"], *(t["artifacts"]["audio"] for t in rec["result"]["turns"]
                                                   if t["artifacts"])]
    assert len(paths) == len(files[remote])
    assert all(Path(p).is_file() and Path(p).resolve().is_relative_to(remote.resolve() / "audio") for p in paths)
    for name in files[local]:  # the same speech, effects and recording, byte for byte
        assert (remote / "audio" / name).read_bytes() == (local / "audio" / name).read_bytes(), name
    assert json.loads((remote / "summary.json").read_text())["voice"]["messages"] > 0


def _cmdlines() -> dict[int, tuple[str, int]]:
    """pid -> (command line, parent pid) of every process."""
    out = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):  # a process that ended while being read
                continue
            out[int(proc.name)] = (cmd, ppid)
    return out


def _listening(pids: set[int]) -> list[tuple[str, str]]:
    """(process, local address) of every listening TCP socket of the processes ``pids``."""
    import socket as _socket
    import struct

    def address(hexed: str) -> str:
        host, port = hexed.split(":")
        raw = bytes.fromhex(host)
        if len(raw) == 4:
            return f"{_socket.inet_ntop(_socket.AF_INET, struct.pack('<I', int(host, 16)))}:{int(port, 16)}"
        words = b"".join(struct.pack("<I", int(host[i:i + 8], 16)) for i in range(0, 32, 8))
        return f"[{_socket.inet_ntop(_socket.AF_INET6, words)}]:{int(port, 16)}"

    listening: dict[str, str] = {}  # socket inode -> address
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] == "0A":  # LISTEN
                listening[cols[9]] = address(cols[1])
    found = []
    for pid in pids:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:[") and target[8:-1] in listening:
                    found.append((cmd.split()[0] if cmd.split() else str(pid), listening[target[8:-1]]))
        except OSError:  # a process that ended while being read
            continue
    return found


def _ray_pids(*, session_of_port: int | None = None) -> set[int]:
    """The Ray processes of this machine, or of the head node at ``session_of_port`` only: its session's
    processes (their command lines name the session folder) and their descendants (workers rename themselves)."""
    procs = _cmdlines()
    if session_of_port is None:
        roots = {pid for pid, (cmd, _) in procs.items()
                 if any(n in cmd for n in ("gcs_server", "raylet", "ray::", "/ray/session_"))}
    else:
        gcs = re.compile(rf"--gcs-address=\S+:{session_of_port}\b")  # whatever address the head took
        sessions = {m for cmd, _ in procs.values() if gcs.search(cmd)
                    for m in re.findall(r"/(session_[\w.-]+)/", cmd)}
        roots = {pid for pid, (cmd, _) in procs.items() if any(s in cmd for s in sessions)}
    mine = set(roots)
    grew = True
    while grew:
        children = {pid for pid, (_, ppid) in procs.items() if ppid in mine} - mine
        mine |= children
        grew = bool(children)
    return mine


def test_the_local_ray_instance_listens_on_127_0_0_1_only(cluster: str) -> None:
    """Ray 2.60 turns a loopback node IP into the machine's address and then listens on every interface;
    ``loopback_only`` (used by ``connect`` and ``encsim ray-head``) keeps every server on 127.0.0.1."""
    @ray.remote
    def ping() -> int:
        return 1

    assert ray.get(ping.remote()) == 1  # a worker is up as well
    sockets = _listening(_ray_pids())
    assert any("gcs_server" in p for p, _ in sockets) and any("raylet" in p for p, _ in sockets), sockets
    loopback = ("127.0.0.1:", "[::ffff:127.0.0.1]:", "[::1]:")
    assert all(a.startswith(loopback) for _, a in sockets), sockets


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop_head(port: int) -> None:
    """SIGTERM every process of the head at ``port`` (not `ray stop`: that would stop other tests' Ray too)."""
    pids = _ray_pids(session_of_port=port)
    for sig in (signal.SIGTERM, signal.SIGKILL):  # as `ray stop` does: a grace period, then SIGKILL
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        for _ in range(50):
            pids = {p for p in pids if Path(f"/proc/{p}").exists() and "Z" not in _state(p)}
            if not pids:
                return
            time.sleep(0.2)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"


@pytest.mark.slow
def test_encsim_ray_head_starts_a_loopback_head_that_a_run_joins(tmp_path: Path) -> None:
    """`encsim ray-head` (the README's one-machine cluster) starts a head on 127.0.0.1 only, with Ray's token
    authentication on and the token in ~/.ray/auth_token, and serves in the foreground; a run joins it by address,
    scores as usual, and the head outlives the run (Ray 2.60 itself sends no token to an explicit address: CI saw
    the run refused). A run's own local instance writes no token file; a token the head refuses is one paragraph
    that says so; a second head on the same port is one paragraph; SIGTERM stops the head's processes (exit 143)."""
    from sim.executors._ray_auth import AUTH_ENV

    port = _free_port()
    home = tmp_path / "home"  # this test's own ~/.ray/auth_token
    home.mkdir()
    env = {**{k: v for k, v in os.environ.items() if k not in AUTH_ENV}, "PYTHONPATH": str(ROOT), "HOME": str(home)}
    cli = [sys.executable, "-m", "sim.cli"]
    token = home / ".ray" / "auth_token"

    def join(out: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*cli, "run", "--executor", "ray", "--ray-address", f"127.0.0.1:{port}",
                               "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1",
                               "--out", str(tmp_path / out)], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=600)

    alone = subprocess.run([*cli, "run", "--executor", "ray", "--model", "scripted:reference", "--scenarios",
                            "viral_uri", "--k", "1", "--quiet", "--out", str(tmp_path / "alone")], env=env,
                           cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert alone.returncode == 0, alone.stderr[-2000:]
    assert not token.exists()  # the local instance's token lived in its environment only
    out, err = tmp_path / "head.out", tmp_path / "head.err"
    with open(out, "wb") as out_fh, open(err, "wb") as err_fh:  # files: a pipe nobody reads could fill up
        head = subprocess.Popen([*cli, "ray-head", "--port", str(port), "--num-cpus", "1"], env=env, cwd=tmp_path,
                                stdout=out_fh, stderr=err_fh)
    pids: set[int] = set()
    try:
        deadline = time.monotonic() + 300
        while "stops it" not in out.read_text():  # it serves in the foreground now
            assert head.poll() is None and time.monotonic() < deadline, out.read_text() + err.read_text()
            time.sleep(0.2)
        shown, said = out.read_text(), err.read_text()
        assert f"127.0.0.1:{port}" in shown and "Ctrl-C or SIGTERM stops it" in shown and "ray stop" not in shown
        assert "Token authentication is on" in shown and str(token) in shown
        secret = token.read_text().strip()
        assert len(secret) >= 32 and secret not in shown + said
        run = join("run")
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        (line,) = (tmp_path / "run" / "results.jsonl").read_text().splitlines()
        assert json.loads(line)["error"] is None
        pids = _ray_pids(session_of_port=port)
        sockets = _listening(pids)
        assert any("gcs_server" in p for p, _ in sockets), sockets  # the head is still up after the run
        loopback = ("127.0.0.1:", "[::ffff:127.0.0.1]:", "[::1]:")
        assert all(a.startswith(loopback) for _, a in sockets), sockets

        token.write_text("0" * 64)  # another process replaced the token after the head started
        refused = join("refused")
        assert refused.returncode == 2 and "Traceback" not in refused.stdout + refused.stderr
        (error,) = [x for x in refused.stderr.splitlines() if x.startswith("error: ")]
        assert "refused this run's Ray authentication" in error and "RAY_AUTH_TOKEN" in error, error
        assert "InvalidAuthToken" not in refused.stderr.replace(error, "")  # Ray's retry log is not repeated
        token.write_text(secret)

        again = subprocess.run([*cli, "ray-head", "--port", str(port)], env=env, cwd=tmp_path,
                               capture_output=True, text=True, timeout=300)
        assert again.returncode == 2 and "Traceback" not in again.stdout + again.stderr
        (error,) = [x for x in again.stderr.splitlines() if x.startswith("error: ")]
        assert "--port" in error and "Ctrl-C or SIGTERM" in error and "ray stop" in error, error
        assert _ray_pids(session_of_port=port) >= pids  # the failed second head stopped nothing of the first

        head.send_signal(signal.SIGTERM)
        assert head.wait(timeout=120) == 143, out.read_text() + err.read_text()
        assert "Ray head stopped" in err.read_text()
        assert not {p for p in pids if Path(f"/proc/{p}").exists() and "Z" not in _state(p)}
    finally:
        if head.poll() is None:
            head.kill()
            head.wait(timeout=60)
        _stop_head(port)
        for pid in pids:  # whatever of the head is left, by pid (not `ray stop`: other tests' Ray too)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _by_persona(run: Path) -> dict[tuple[str, int, str], tuple[float | None, list[str]]]:
    return {(x["scenario_id"], x["k"], x["persona"]): ((x["score"] or {}).get("composite"),
                                                      [t["text"] for t in x["result"]["turns"]]) for x in _lines(run)}


def test_a_persona_sweep_on_ray_gives_the_local_records_and_each_worker_gets_the_personas_scenario(
        cluster: str, tmp_path: Path, library: list[LoadedScenario]) -> None:
    """Issue 18: the (scenario, persona, k) encounters, their scores and transcripts are the same on Ray; and the
    scenario a Ray worker's agent is handed is the persona's (the persona travels with the task)."""
    for executor in ("local", "ray"):
        assert main(["run", "--executor", executor, "--model", "scripted:shallow", "--scenarios",
                     "viral_uri,acs_chest_pain", "--k", "1", "--personas", "default,minimiser,carer",
                     "--out", str(tmp_path / executor), "--quiet"]) == 0
    local, remote = _by_persona(tmp_path / "local"), _by_persona(tmp_path / "ray")
    assert len(remote) == 6 and remote == local

    async def reads_persona(spec: WorkerSpec) -> Any:  # pickled by value: built in the worker
        from sim.agents import make_agent

        inner = await make_agent("scripted:reference")

        class ReadsPersona:
            name = inner.name
            vision = inner.vision

            async def respond(self, request: Any) -> Any:
                from sim.agents import AgentReply

                p = request.scenario.patient_profile.persona
                if request.agent_turn == 1:
                    return AgentReply(text=f"style={p.speaking_style} relay={p.relay}. What brings you in?")
                return await inner.respond(request.model_copy(update={"agent_turn": 99}))

            async def aclose(self) -> None:
                await inner.aclose()

        return ReadsPersona()

    items = [s for s in library if s.scenario.id == "viral_uri"]
    meta = _meta(items, 1).model_copy(update={"personas": ["minimiser", "carer"]})
    store = RunStore.create(tmp_path / "r", meta)
    remote_runner = RayEncounters(WorkerSpec(model=meta.model, agent_factory=reads_persona), meta=meta,
                                  scenarios=items, audio_dir=tmp_path / "r" / "audio")
    try:
        asyncio.run(run_batch(store, items, ReferenceAgent(), TextChannel(), meta, concurrency=2, progress=None,
                              remote=remote_runner))
    finally:
        remote_runner.close()
        store.close()
    said = {x["persona"]: next(t["text"] for t in x["result"]["turns"] if t["speaker"] == "agent")
            for x in _lines(tmp_path / "r")}
    assert said["minimiser"].startswith("style=minimiser relay=False")
    assert said["carer"].startswith("style=") and "relay=True" in said["carer"]


@pytest.mark.parametrize("name", ["../escape.flac", "/etc/x.flac", "a/../../b.flac", ""])
def test_the_driver_never_writes_returned_audio_outside_audio(tmp_path: Path, name: str) -> None:
    from sim.executors.base import EncounterLost
    from sim.executors.ray import RayEncounters

    driver = RayEncounters.__new__(RayEncounters)  # only its audio folder: no cluster needed to write files
    driver.audio_dir = tmp_path / "run" / "audio"
    with pytest.raises(EncounterLost, match="outside audio/"):
        driver._write_audio({name: b"x"})
    driver._write_audio({"viral_uri/0/000-patient.flac": b"ab", "viral_uri/0/call.flac": b"cd"})
    assert sorted(p.name for p in (tmp_path / "run").rglob("*") if p.is_file()) == ["000-patient.flac", "call.flac"]
