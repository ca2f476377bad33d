"""Fail fast: stop a run whose every agent call would fail the same way, with one paragraph saying what to fix.

Fail fast (``--fail-fast N``, default ``DEFAULT_FAIL_FAST``; 0 turns it off): the runner watches the
agent's calls from the start of the run. If the first N calls all fail with the same fatal cause
(``fatal_cause``: ``sim.agents.chat.is_fatal``, its ``kind`` in ``FATAL_KINDS``: connection
refused, DNS, HTTP 401, 403, 404), every further call would fail the same way: the run stops, the
encounters in flight are cancelled, and ``EndpointUnusable`` (a ConfigError, exit 2) says in one
paragraph which flag to fix and how to continue. The check is decided by the first call that
succeeds or fails otherwise (after that only the cause below trips it), and also trips when the run's plan
ends before N calls and every call made failed the same fatal way. Encounters that ended because of
the fatal cause while the check was undecided are held back: recorded as errors if it does not trip,
dropped if it trips (they say nothing about the model, and a plain ``--resume`` runs them again).
Encounters that finished otherwise are always recorded. One cause trips the check at any point of the run,
armed or not: the embedded model server's death (``server_died``, ``sim.agents.local.ServerDied``), after
which no call can succeed; the run stops with a paragraph naming the signal, not a connection refusal.

The pieces: ``FailFast`` (the check's state), ``WatchedAgent`` (the agent under test as the check sees it: every
call's outcome goes to ``observe_call``, which also files an error under the encounter running in that task,
``CALL_ERRORS``), ``CallObserver`` (what an ``EncounterRunner`` is told about each call of a remote encounter),
``Tripped`` (raised out of a batch worker once the check tripped) and ``fail_fast_message`` (the paragraph that
``EndpointUnusable`` carries). ``sim.runner.run_batch`` wires them together.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sim.agents.base import Agent, AgentReply, AgentRequest
from sim.agents.chat import is_fatal
from sim.agents.local import REBUILD_HINT, ServerDied, describe_exit
from sim.records import AgentError, ConfigError, RunMeta, Summary, one_line

DEFAULT_FAIL_FAST = 5  # --fail-fast: stop when the first N agent calls all fail with the same fatal cause


class EndpointUnusable(ConfigError):
    """The fail-fast check stopped the run: the endpoint, the key or the model is wrong (exit 2)."""

    def __init__(self, message: str, summary: Summary) -> None:
        super().__init__(message)
        self.summary = summary


def fatal_cause(error: BaseException | None) -> str | None:
    """The kind of ``error`` when every further call to the same endpoint would fail the same way, else None.

    Fatal kinds are ``sim.agents.chat.is_fatal``'s: refused, DNS, HTTP 401/403/404, the embedded server's death.
    """
    return error.kind if isinstance(error, AgentError) and is_fatal(error) else None


class FailFast:
    """The first ``limit`` agent calls of a run, watched for one fatal cause.

    ``armed`` until one succeeds or fails otherwise (then ``off``), ``tripped`` once ``limit`` calls all failed
    with the same fatal cause.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.state = "armed" if limit > 0 else "off"
        self.cause: str | None = None
        self.calls = 0
        self.first: AgentError | None = None

    def succeeded(self) -> None:
        """A call succeeded: an armed check is off for the rest of the run."""
        if self.state == "armed":
            self.state = "off"

    def failed(self, exc: AgentError) -> None:
        """A call failed with ``exc``: count it towards the limit, turn the check off, or trip it."""
        cause = fatal_cause(exc)
        if cause == "server_died" and self.limit > 0:  # the embedded server is gone: no later call can succeed
            if self.state != "tripped":
                self.state, self.cause, self.first = "tripped", cause, exc
            self.calls += 1
            return
        if self.state != "armed":
            return
        if cause is None or (self.cause is not None and cause != self.cause):
            self.state = "off"
            return
        self.cause, self.first, self.calls = cause, self.first or exc, self.calls + 1
        if self.calls >= self.limit:
            self.state = "tripped"


# the agent errors of the encounter running in this task (set by run_batch, filled by WatchedAgent)
CALL_ERRORS: contextvars.ContextVar[list[AgentError]] = contextvars.ContextVar("encounter_call_errors")


CallObserver = Callable[[AgentError | None], None]
"""Told the outcome of each agent call of an encounter: None when it succeeded, else its ``AgentError``."""


def observe_call(check: FailFast, error: AgentError | None) -> None:
    """One agent call's outcome, for the fail-fast check and the encounter it belongs to (``CALL_ERRORS``)."""
    if error is None:
        check.succeeded()
        return
    errors = CALL_ERRORS.get(None)
    if errors is not None:
        errors.append(error)
    check.failed(error)


class WatchedAgent:
    """The agent under test as the fail-fast check sees it: every call's outcome goes to ``observe``."""

    def __init__(self, agent: Agent, observe: CallObserver) -> None:
        self._agent = agent
        self._observe = observe
        self.name = agent.name
        self.vision = agent.vision

    def __getattr__(self, name: str) -> Any:  # anything else of the agent itself (e.g. a chat agent's model)
        return getattr(self._agent, name)

    async def respond(self, request: AgentRequest) -> AgentReply:
        """The agent's reply; the call's outcome goes to the check either way."""
        try:
            reply = await self._agent.respond(request)
        except AgentError as exc:
            self._observe(exc)
            raise
        self._observe(None)
        return reply

    async def aclose(self) -> None:
        """Close the agent."""
        await self._agent.aclose()


class Tripped(Exception):
    """Raised out of a worker once the fail-fast check tripped."""


def fail_fast_message(check: FailFast, meta: RunMeta, root: Path, saved: int) -> str:
    """One paragraph: which flag is wrong, what happened on the first calls, what to do, how to continue."""
    url = meta.agent_url or meta.base_url
    where = f"--agent-url {url}" if meta.agent_url else f"--base-url {url}" if url else f"--model {meta.model}"
    calls = (f"the first {check.calls} agent calls" if check.calls >= check.limit
             else f"every agent call of the run ({check.calls})")
    kept = f"{saved} encounter(s) that finished are saved" if saved else "no encounter was saved"
    resume = f"encsim run --resume {root}"
    status = (check.cause or "").removeprefix("http_")
    if check.cause == "server_died":
        first = check.first
        how = describe_exit(first.returncode) if isinstance(first, ServerDied) else "ended"
        tail = first.log_tail if isinstance(first, ServerDied) else ""
        what = f"--model {meta.model}: the embedded model server {how} during the run"
        hint = f"{REBUILD_HINT}; then" if isinstance(first, ServerDied) and first.crashed else "Then"
        fix = f"Its output ends: {tail or '(nothing)'}. {hint} continue with: {resume} (it starts a new server)"
    elif check.cause == "connection_refused" and meta.agent_url:
        what = f"{where}: could not connect on {calls}"
        fix = (f"Start the voice agent (or check the host, port and path of --agent-url), then continue with: "
               f"{resume}")
    elif check.cause == "connection_refused":
        what = f"{where}: connection refused on {calls}"
        fix = f"Start the server (or check the host and port of --base-url), then continue with: {resume}"
    elif check.cause == "dns":
        what = f"{where}: the host name does not resolve (DNS) on {calls}"
        fix = "Fix the host in --base-url and start a new run (a resumed run keeps the --base-url it was started with)"
    elif check.cause in ("http_401", "http_403") and meta.api_key_env:
        what = f"--api-key-env {meta.api_key_env}: {url} refused the key (HTTP {status}) on {calls}"
        fix = (f"Export the right key in {meta.api_key_env} (export {meta.api_key_env}=...), then continue with: "
               f"{resume}")
    elif check.cause in ("http_401", "http_403"):
        what = f"--api-key-env: {url} answered HTTP {status} on {calls}, and no key was sent"
        fix = "Start a new run with --api-key-env VAR naming the environment variable that holds the key"
    elif check.cause == "http_404":
        what = f"--model {meta.model} / --base-url {url}: HTTP 404 on {calls} (no such model, or a wrong path)"
        fix = ("Check the model name the endpoint serves and that --base-url ends where /chat/completions is "
               "appended (usually /v1), and start a new run")
    else:
        what = f"{where}: {calls} failed the same way ({check.cause})"
        fix = f"Fix the endpoint, then continue with: {resume}"
    detail = f" First error: {one_line(str(check.first))[:300]}." if check.first is not None and \
        check.cause not in ("connection_refused", "dns", "http_401", "http_403", "server_died") else ""
    return (f"{what}, so the run stopped (--fail-fast {check.limit}; --fail-fast 0 turns this off); {kept} in "
            f"{root}.{detail} {fix}.")
