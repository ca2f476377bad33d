"""What a worker process needs to build the agent under test itself: ``WorkerSpec`` and ``make_worker_agent``.

Shared by the executors that run encounters outside the ``encsim run`` process: the Ray executor
(``sim.executors.ray``) and the local worker processes (``sim.executors.process``). A spec is picklable and never
holds the API key, only the name of its environment variable, read where the agent is built.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from scenarios import LoadedScenario
from sim.agents.base import Agent, AgentReply, AgentRequest
from sim.records import AgentError, ConfigError, ConversationResult, RecordingChannel, RunMeta

CallOutcome = tuple[str, str, bool] | None
"""One agent call as a worker reports it: None when it succeeded, else its error's (kind, message, retryable)."""


def check_runs_outside(meta: RunMeta, flag: str, instead: str) -> None:
    """A one-paragraph ConfigError when the plan needs this process to run its encounters.

    ``flag``: the option that sends them elsewhere (``--executor ray``, ``--processes``); ``instead``: how to do
    without it.
    """
    if meta.model == "local":
        raise ConfigError(f"{flag} with --model local: the embedded model's server belongs to this process and "
                          "workers cannot reach it. Serve a model behind an endpoint (e.g. encsim serve-agent) and "
                          f"give --model NAME --base-url URL, or {instead}.")
    if meta.patient_model is not None:
        raise ConfigError(f"{flag} with --patient-model: the patient model's cache is a file of the run directory, "
                          f"which only this process writes. Drop --patient-model, or {instead}.")


@dataclass(frozen=True, kw_only=True)
class WorkerSpec:
    """What a worker needs to build the agent under test itself (picklable; never the API key, only its name).

    Attributes:
        model: ``--model`` (an endpoint's model name or ``scripted:...``).
        base_url: ``--base-url``.
        api_key_env: The name of the environment variable holding the key, read on the worker.
        timeout_s: ``--call-timeout``.
        text_only: ``--text-only``.
        turn_limit: ``--max-turns``.
        allow_outside_images: ``--allow-outside-images``.
        agent_factory: Builds the agent on the worker instead of ``make_agent`` (tests); must be picklable.
    """

    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    timeout_s: float | None = None
    text_only: bool = False
    turn_limit: int | None = None
    allow_outside_images: bool = False
    agent_factory: Callable[[WorkerSpec], Awaitable[Agent]] | None = None

    @classmethod
    def from_meta(cls, meta: RunMeta) -> WorkerSpec:
        """The spec of a run's agent, from its run.json."""
        return cls(model=meta.model, base_url=meta.base_url, api_key_env=meta.api_key_env,
                   timeout_s=meta.call_timeout_s, text_only=meta.text_only, turn_limit=meta.turn_limit,
                   allow_outside_images=meta.allow_outside_images)


async def make_worker_agent(spec: WorkerSpec) -> Agent:
    """The agent under test, built in a worker from its spec (``spec.agent_factory``, else ``make_agent``)."""
    if spec.agent_factory is not None:
        return await spec.agent_factory(spec)
    from sim.agents import make_agent

    return await make_agent(spec.model, base_url=spec.base_url, api_key_env=spec.api_key_env,
                            timeout_s=spec.timeout_s, text_only=spec.text_only)


class ReportingAgent:
    """The agent under test as a worker runs it: ``tell`` gets each call's ``CallOutcome``.

    The ``encsim run`` process rebuilds a failed call's error (``AgentError(message, kind=, retryable=)``) for its
    fail-fast check.
    """

    def __init__(self, agent: Agent, tell: Callable[[CallOutcome], None]) -> None:
        self._agent = agent
        self._tell = tell
        self.name = agent.name
        self.vision = agent.vision

    def __getattr__(self, name: str) -> Any:  # anything else of the agent itself
        return getattr(self._agent, name)

    async def respond(self, request: AgentRequest) -> AgentReply:
        """The agent's reply; the call's outcome goes to ``tell`` first (an error is raised on after it)."""
        try:
            reply = await self._agent.respond(request)
        except AgentError as exc:
            self._tell((exc.kind, str(exc), exc.retryable))
            raise
        self._tell(None)
        return reply

    async def aclose(self) -> None:
        """Close the agent."""
        await self._agent.aclose()


async def run_on_worker(agent: Agent, spec: WorkerSpec, item: LoadedScenario, k: int, seed: int, *,
                        channel: Any, sink: Callable[[Any], None],  # a Channel, or None for text
                        tell: Callable[[CallOutcome], None]) -> tuple[ConversationResult | None, str | None]:
    """One encounter in a worker, through the in-process executor's code path (``sim.runner.run_item``).

    ``sink`` gets the encounter's events and ``tell`` each agent call's outcome, as they happen. Returns the result
    (with a recording channel's artifacts), or None and what the encounter raised as ``"Type: message"``, the way
    the in-process executor records it: never raised.
    """
    from sim.encounter import run_item

    try:
        result = await run_item(item, ReportingAgent(agent, tell), channel, sink, k=k, seed=seed,
                                turn_limit=spec.turn_limit, model_name=spec.model,
                                allow_outside_images=spec.allow_outside_images)
        if isinstance(channel, RecordingChannel):
            result.artifacts.update(await channel.finish_encounter(item.scenario.id, k))
    except Exception as exc:  # as in one process: the encounter is an error, the batch goes on
        return None, f"{type(exc).__name__}: {exc}"
    return result, None
