"""The Ray executor of batch runs (``encsim run --executor ray``): encounters run on a Ray cluster.

Who does what:

- **Driver** (the ``encsim run`` process): plans the (scenario, k) pairs and their seeds, submits one encounter
  at a time per slot (``sim.runner.run_batch(remote=RayEncounters(...))``), scores every returned encounter
  (``scorers.record_for``: deterministic path, evaluators, judges and profile stay on the driver, so judges are called
  from one place and evaluator modules are loaded once), and is the **only writer** of the run directory:
  results.jsonl, events.jsonl, audio/, summary.json and the reports. Resume, kill-safety and the summary are
  therefore exactly the local executor's.
- **Workers**: a text encounter is a Ray task (``_encounter_task``); a voice encounter runs on one actor of a
  pool (``_VoiceWorker``, ``--ray-actors N``, default the cluster's CPUs), each of which loads Piper and Whisper
  once and keeps them. A worker builds its own agent from a picklable ``WorkerSpec`` (model, base URL, the
  *name* of the API key's environment variable, deadlines): the key itself is read from the worker's environment
  and never enters a task's arguments, Ray's object store or its logs. A local cluster's workers inherit the
  driver's environment; on a remote cluster, export the variable on every node before ``ray start``.
- **What travels**: the scenario (parsed) and its file's path go with the task; images are read by the worker
  from the same path (``scenarios/library`` of the installed package, or your scenario folder mounted at the same
  path on every node). The worker returns the ``ConversationResult``, the encounter's events, the outcome of each
  agent call (for the fail-fast check) and, for voice, the audio files' bytes under names relative to the
  worker's scratch folder; the driver writes them under the run's ``audio/`` in the local layout
  (``<scenario>/<k>/<turn>-<side>.<fmt>``, ``call.<fmt>``, in the run's ``audio_format``) and rewrites the
  artifact paths to point there.

Events of an encounter are written when it returns, so the dashboard (which only reads the run directory)
follows a Ray run per finished encounter rather than per turn. The fail-fast check sees an encounter's agent
calls when it returns (``sim.runner``). Seeds are ``encounter_seed(meta.seed, scenario_id, k)`` on either
executor, so the scripted controls give identical scores.

Worker death: a task is retried once by Ray (``max_retries=1``), an actor is restarted and its call retried once
(``max_task_retries=1``); a second death makes the encounter an error "worker died twice: ...".

Not supported with Ray (a ConfigError says so): ``--model local`` (the embedded model's server is the driver's)
and ``--patient-model`` (its cache is a file of the run directory).

Without ``--ray-address`` a Ray instance is started for the run (127.0.0.1 only, no dashboard) and stopped after
it; a SIGKILL of the driver stops its GCS and raylet but leaves Ray's two agent processes behind (README).

Ray's token authentication is explicit (``sim.executors._ray_auth``): a run's own instance has a token of its own in
the environment, ``encsim ray-head`` turns it on with the token in ``~/.ray/auth_token``, and a join the head refuses
says so.

``import ray`` happens only in this module and ``_ray_auth``, lazily: ``encsim`` works without Ray installed, and
``--executor ray`` without it is a one-paragraph ConfigError naming ``pip install encounter-sim[ray]``.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from scenarios import LoadedScenario
from sim.executors._ray_auth import fd2_kept, head_token, join_token, private_token, refused
from sim.executors._ray_session import HeadProcesses, become_subreaper, forget_address, port_args
from sim.executors.base import EncounterLost
from sim.executors.worker_spec import WorkerSpec, make_worker_agent, run_on_worker
from sim.fail_fast import CallObserver
from sim.records import AgentError, ConfigError, ConversationResult, RunMeta

__all__ = ["HeadProcesses", "Outcome", "RayEncounters", "WorkerSpec", "become_subreaper", "cluster_cpus", "connect",
           "forget_address", "loopback_only", "run_encounter_on_worker", "start_local_head"]

INSTALL_HINT = "pip install encounter-sim[ray]"
LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Set to 0 before ``import ray``, a Ray instance this process starts binds 127.0.0.1 only (Ray's own switch)."""
CONNECT_TIMEOUT_S = 5.0  # a --ray-address that does not accept a TCP connection within this is an error


@dataclass
class Outcome:
    """What a worker returns for one encounter.

    Attributes:
        result: The encounter's result; None when it raised (``error`` says why).
        error: ``"<Type>: <message>"`` of what the encounter raised, as the local executor records it.
        events: The encounter's events, in order (written by the driver).
        calls: Per agent call, None when it succeeded, else ``(kind, message, retryable)`` of its ``AgentError``.
        audio: Relative file name (under ``audio_root``) -> bytes, for the driver to write under the run's audio/.
        audio_root: The worker's scratch audio folder, the prefix of the artifact paths in ``result``.
    """

    result: ConversationResult | None = None
    error: str | None = None
    events: list[Any] = field(default_factory=list)
    calls: list[tuple[str, str, bool] | None] = field(default_factory=list)
    audio: dict[str, bytes] = field(default_factory=dict)
    audio_root: str | None = None


async def run_encounter_on_worker(spec: WorkerSpec, item: LoadedScenario, k: int, seed: int,
                                  channel: Any = None) -> Outcome:  # a Channel, or None for text
    """One encounter on a worker, through the local executor's code path (``sim.runner.run_item``).

    Args:
        spec: The agent's spec.
        item: The scenario.
        k: The run index.
        seed: ``encounter_seed(meta.seed, scenario_id, k)``, from the driver.
        channel: The worker's channel (a voice actor's); None for text.

    Returns:
        The outcome; an exception of the encounter is returned in ``error``, never raised.
    """
    outcome = Outcome()
    agent = await make_worker_agent(spec)
    try:
        outcome.result, outcome.error = await run_on_worker(agent, spec, item, k, seed, channel=channel,
                                                            sink=outcome.events.append, tell=outcome.calls.append)
    finally:
        await agent.aclose()
    return outcome


def _encounter_task(spec: WorkerSpec, item: LoadedScenario, k: int, seed: int) -> Outcome:
    """A text encounter as a Ray task (its own event loop in the worker)."""
    return asyncio.run(run_encounter_on_worker(spec, item, k, seed))


class _VoiceWorker:
    """A voice actor: one VoiceChannel (Piper and Whisper loaded once per process) that runs encounters in turn."""

    def __init__(self, spec: WorkerSpec, meta: RunMeta, scenarios: list[LoadedScenario]) -> None:
        from sim.encounter.channel import make_channel

        self.spec = spec
        self.root = Path(tempfile.mkdtemp(prefix="encsim-ray-audio-"))
        self.channel = make_channel(meta, scenarios, self.root)

    async def run(self, item: LoadedScenario, k: int, seed: int) -> Outcome:
        outcome = await run_encounter_on_worker(self.spec, item, k, seed, self.channel)
        folder = self.root / item.scenario.id / str(k)  # RunLayout.encounter_audio's layout, under the scratch root
        files = sorted(p for p in self.root.rglob("*") if p.is_file())
        outcome.audio = {str(p.relative_to(self.root)): p.read_bytes() for p in files}
        outcome.audio_root = str(self.root)
        for p in files:
            p.unlink()
        shutil.rmtree(folder, ignore_errors=True)
        return outcome


def _ray() -> Any:  # the ray module
    try:
        import ray
    except ImportError:
        raise ConfigError(f"--executor ray: Ray is not installed in this environment. Install the extra with "
                          f"`{INSTALL_HINT}` (make setup installs it), or run with --executor local.") from None
    return ray


def _auto_address() -> str | None:
    """The address ``auto`` stands for ($RAY_ADDRESS, else the cluster last started on this machine), if any."""
    try:
        from ray._private.services import canonicalize_bootstrap_address

        with loopback_only():  # a head started by `encsim ray-head` is at 127.0.0.1, not the machine's address
            found = canonicalize_bootstrap_address("auto")
    except Exception:  # Ray's own lookup (a private helper) failed or moved: ray.init says what is wrong
        return None
    return str(found) if found else None


def _check_reachable(address: str, *, flag_value: str | None = None) -> None:
    """A HOST:PORT or ray://HOST:PORT address must accept a TCP connection (else ray.init waits for minutes)."""
    shown = address if flag_value is None else f"{flag_value} ({address})"
    hostport = address.removeprefix("ray://")
    host, sep, port_text = hostport.rpartition(":")
    if not sep or not host or not port_text.isdigit():
        raise ConfigError(f"--ray-address {shown}: give auto, HOST:PORT of the head node (ray start --head "
                          "prints it, port 6379 by default) or ray://HOST:10001 for Ray Client.")
    try:
        with socket.create_connection((host.strip("[]"), int(port_text)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        raise ConfigError(f"--ray-address {shown}: nothing answers there ({exc.strerror or exc}). Start the "
                          "cluster's head with `ray start --head` (workers join with `ray start --address "
                          "HEAD:6379`), check the host and port, or drop --ray-address to start a local Ray "
                          "instance.") from None


@contextlib.contextmanager
def loopback_only() -> Iterator[None]:
    """Inside, a Ray node started with node IP 127.0.0.1 keeps it, so its servers listen on 127.0.0.1 only.

    Ray 2.60 (``ray.init`` and ``ray start``) replaces a loopback node IP with the machine's network address
    (``ray._private.services.resolve_ip_for_localhost``), and its GCS, raylet and workers then listen on every
    interface; they listen on 127.0.0.1 only when the node IP is 127.0.0.1. This keeps the loopback address
    for the duration of the start. A private Ray function: should a Ray version move it, the start goes on
    unchanged and ``tests/sim/test_ray_executor.py`` (which checks the listening sockets) fails.
    """
    try:
        from ray._private import services
    except ImportError:  # Ray not installed: _ray() says so
        yield
        return
    resolve = getattr(services, "resolve_ip_for_localhost", None)
    if resolve is None:
        yield
        return
    services.resolve_ip_for_localhost = lambda host: host
    try:
        yield
    finally:
        services.resolve_ip_for_localhost = resolve


def start_local_head(*, port: int, num_cpus: int | None) -> tuple[str, str]:
    """Start a Ray head node on this machine that listens on 127.0.0.1 only (``encsim ray-head``).

    The same as ``ray start --head --node-ip-address 127.0.0.1 --include-dashboard false``, but with the
    loopback address kept (``loopback_only``) and no port Ray reserves on ``port`` (``_ray_session.port_args``:
    any free ``--port`` works, 10002-19999 included). Runs join it with ``--ray-address auto`` (or
    127.0.0.1:PORT). Its processes are this process's descendants: ``_ray_session.HeadProcesses`` finds and stops
    exactly them (``encsim ray-head`` does on Ctrl-C or SIGTERM). A cluster of several machines needs an address
    the others can reach: use ``ray start --head`` there.

    Returns:
        The head's address, ``127.0.0.1:PORT``, and where its authentication token is (``_ray_auth.head_token``).

    Raises:
        ConfigError: Ray is not installed, or the head did not start (the port is taken, a head is running).
    """
    _ray()
    from ray.scripts.scripts import start

    try:
        from ray._private.utils import get_ray_client_dependency_error

        ray_client = get_ray_client_dependency_error() is None
    except ImportError:  # a private Ray helper that moved: Ray Client's server needs grpc
        import importlib.util

        ray_client = importlib.util.find_spec("grpc") is not None
    args = ["--head", f"--port={port}", "--node-ip-address=127.0.0.1", "--include-dashboard=false",
            "--disable-usage-stats", *port_args(port, ray_client=ray_client)]
    if num_cpus is not None:
        args.append(f"--num-cpus={num_cpus}")
    auth = head_token()
    said = io.StringIO()  # Ray's "next steps" (`ray stop` among them) would mislead: the caller says how to stop
    with loopback_only():
        try:
            with contextlib.redirect_stdout(said):
                start.main(args=args, standalone_mode=False)
        except (Exception, SystemExit) as exc:  # click's and Ray's errors alike: one paragraph
            sys.stderr.write(said.getvalue())
            raise ConfigError(f"encsim ray-head: Ray could not start a head node on 127.0.0.1:{port} "
                              f"({str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}). "
                              "Is a head running there already (one of `encsim ray-head`: Ctrl-C or SIGTERM "
                              "stops it; one of `ray start`: see `ray status`, `ray stop` stops every Ray of this "
                              "machine), or is the port taken (choose another with --port)?") from None
    return f"127.0.0.1:{port}", auth


def connect(address: str | None) -> Callable[[], None]:
    """Join the Ray cluster at ``address`` (auto, HOST:PORT, ray://...), or start a local instance when None.

    A Ray instance already initialised in this process is used as it is. A local instance started here binds
    127.0.0.1 only and has no dashboard.

    Args:
        address: ``--ray-address``.

    Returns:
        What to call when the run is over: disconnects (and stops the instance started here).

    Raises:
        ConfigError: Ray is not installed, or nothing answers at ``address``.
    """
    if address is None and "ray" not in sys.modules:
        os.environ.setdefault(LOOPBACK_ENV, "0")
    ray = _ray()
    if address == "auto":
        found = _auto_address()
        if found is not None:
            _check_reachable(found, flag_value=address)
    elif address is not None:
        _check_reachable(address)
    if ray.is_initialized():
        return lambda: None
    import logging

    if address is None:
        restore = private_token()
        try:
            with loopback_only():
                ray.init(address="local", include_dashboard=False, _node_ip_address="127.0.0.1",
                         logging_level=logging.WARNING, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError, TimeoutError, ray.exceptions.RayError) as exc:
            restore()
            raise ConfigError(f"--executor ray: could not start a local Ray instance ({str(exc).splitlines()[0]}). "
                              "Check `ray status` and /tmp/ray/session_latest/logs, or run with --executor "
                              "local.") from None
        except BaseException:
            restore()
            raise

        def stop() -> None:
            ray.shutdown()
            restore()

        return stop
    said: list[str] = []
    restore = join_token(address)
    try:
        with fd2_kept(said), loopback_only():  # a loopback head stays at 127.0.0.1 (other addresses: no-op)
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError, ray.exceptions.RayError) as exc:
        restore()
        if refused(str(exc) + "".join(said)):
            raise ConfigError(f"--ray-address {address}: the head node refused this run's Ray authentication "
                              "(InvalidAuthToken): it uses token authentication and this run sent no token or "
                              "another one. Give the head's token (~/.ray/auth_token on the head's machine) with "
                              "RAY_AUTH_MODE=token and RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH; on the head's own "
                              "machine, if ~/.ray/auth_token changed since the head started, restart the head "
                              "(`ray stop`, then `encsim ray-head`).") from None
        raise ConfigError(f"--ray-address {address}: could not join a Ray cluster ({str(exc).splitlines()[0]}). "
                          "Start one with `ray start --head` (or check the address), or drop --ray-address to "
                          "start a local Ray instance.") from None
    except BaseException:
        restore()
        raise
    sys.stderr.write("".join(said))  # Ray's own notices of a join that worked stay visible

    def leave() -> None:
        ray.shutdown()
        restore()

    return leave


def cluster_cpus() -> int:
    """The connected cluster's CPUs (at least 1)."""
    return max(1, int(_ray().cluster_resources().get("CPU", 1)))


_DIED = ("WorkerCrashedError", "RayActorError", "ActorDiedError", "ActorUnavailableError", "NodeDiedError",
         "ObjectLostError", "OwnerDiedError", "LocalRayletDiedError")


class RayEncounters:
    """``sim.runner.EncounterRunner`` on Ray: tasks for text, a pool of voice actors for voice (module docstring).

    Args:
        spec: The agent's spec, sent with every task.
        meta: The run's metadata (its channel; the voice actors build their channel from it).
        scenarios: The run's scenarios (the voice actors' channel needs their voices and vocabulary).
        audio_dir: The run's audio/ folder (``RunLayout(root).audio``), where returned audio is written.
        actors: The voice pool's size; None = the cluster's CPUs. Ignored for text runs.
    """

    def __init__(self, spec: WorkerSpec, *, meta: RunMeta, scenarios: list[LoadedScenario], audio_dir: Path,
                 actors: int | None = None) -> None:
        self._ray = _ray()
        self.spec = spec
        self.audio_dir = audio_dir
        self.voice = meta.channel == "voice"
        self._task = self._ray.remote(max_retries=1)(_encounter_task)
        self._pool: asyncio.Queue[Any] | None = None
        self._actors: list[Any] = []
        self.slots = actors or cluster_cpus()
        """Encounters in flight that the pool can take (the voice pool's size; the cluster's CPUs for text)."""
        if self.voice:
            actor = self._ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=1, max_concurrency=1)(_VoiceWorker)
            self._actors = [actor.remote(spec, meta, scenarios) for _ in range(self.slots)]

    async def run(self, item: LoadedScenario, k: int, *, seed: int, sink: Callable[[Any], None],
                  observe: CallObserver) -> ConversationResult:
        """One encounter on the cluster (see ``sim.runner.EncounterRunner``)."""
        outcome = await self._submit(item, k, seed)
        for event in outcome.events:
            sink(event)
        for call in outcome.calls:
            observe(None if call is None else AgentError(call[1], kind=call[0], retryable=call[2]))
        if outcome.result is None:
            raise EncounterLost(outcome.error or "the worker returned no result")
        result = outcome.result
        if outcome.audio:
            await asyncio.to_thread(self._write_audio, outcome.audio)
        if outcome.audio_root:
            _relocate(result, outcome.audio_root, str(self.audio_dir))
        return result

    async def _submit(self, item: LoadedScenario, k: int, seed: int) -> Outcome:
        actor = None
        if self.voice:
            if self._pool is None:
                self._pool = asyncio.Queue()
                for a in self._actors:
                    self._pool.put_nowait(a)
            actor = await self._pool.get()
        ref = actor.run.remote(item, k, seed) if actor is not None else self._task.remote(self.spec, item, k, seed)
        try:
            outcome: Outcome = await ref
            return outcome
        except asyncio.CancelledError:  # the run stops (Ctrl-C, fail-fast): the encounter is not wanted any more
            with contextlib.suppress(Exception):
                self._ray.cancel(ref)
            raise
        except Exception as exc:
            names = {c.__name__ for c in type(exc).__mro__}
            first = (str(exc).strip().splitlines() or [""])[0][:300]
            if names & set(_DIED):
                raise EncounterLost(f"worker died twice: {type(exc).__name__}: {first}") from None
            raise EncounterLost(f"ray: {type(exc).__name__}: {first}") from None
        finally:
            if actor is not None and self._pool is not None:
                self._pool.put_nowait(actor)

    def _write_audio(self, audio: dict[str, bytes]) -> None:
        made: set[Path] = set()
        for name, data in audio.items():
            rel = PurePosixPath(name)
            if rel.is_absolute() or not rel.parts or ".." in rel.parts:  # relative to the worker's scratch folder
                raise EncounterLost(f"ray: the worker returned an audio file outside audio/: {name!r}")
            path = self.audio_dir.joinpath(*rel.parts)
            if path.parent not in made:  # checked by name, one mkdir per folder: the driver's serial cost (issue 37)
                path.parent.mkdir(parents=True, exist_ok=True)
                made.add(path.parent)
            tmp = path.with_name(path.name + ".part")
            tmp.write_bytes(data)
            os.replace(tmp, path)

    def close(self) -> None:
        """Stop the voice actors."""
        for a in self._actors:
            with contextlib.suppress(Exception):
                self._ray.kill(a)
        self._actors = []


def _relocate(result: ConversationResult, old_root: str, new_root: str) -> None:
    """Point every artifact path under the worker's scratch folder to the same name under the run's audio/."""

    def moved(path: str) -> str:
        return new_root + path[len(old_root):] if path.startswith(old_root) else path

    result.artifacts = {name: moved(p) for name, p in result.artifacts.items()}
    for turn in result.turns:
        turn.artifacts = {name: moved(p) for name, p in turn.artifacts.items()}

