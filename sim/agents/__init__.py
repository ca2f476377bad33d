"""Agents under test: model clients and scripted controls, all behind the ``Agent`` protocol."""

from __future__ import annotations

from pathlib import Path

from sim.agents.base import Agent, AgentReply, AgentRequest, ChatMessage
from sim.agents.chat import (
    DEFAULT_TIMEOUT_S,
    FATAL_KINDS,
    ChatCompletionsAgent,
    EndpointError,
    api_key_from_env,
    check_base_url,
    check_call_timeout,
    check_key_env_name,
    is_fatal,
)
from sim.agents.local import LlamaServer, LocalAgent
from sim.agents.scripted import SCRIPTED, NaturalAgent, ReferenceAgent, ShallowAgent, UndertriageAgent
from sim.records import ConfigError

__all__ = [
    "FATAL_KINDS", "Agent", "AgentReply", "AgentRequest", "ChatCompletionsAgent", "ChatMessage", "EndpointError",
    "LlamaServer", "LocalAgent", "NaturalAgent", "ReferenceAgent", "ShallowAgent", "UndertriageAgent", "check_base_url",
    "check_call_timeout", "check_model_spec", "is_fatal", "make_agent",
]


def check_model_spec(model: str, base_url: str | None, api_key_env: str | None) -> None:
    """Validate --model / --base-url / --api-key-env before anything starts."""
    if api_key_env is not None:
        check_key_env_name(api_key_env)
    if model.startswith("scripted:"):
        if model.removeprefix("scripted:") not in SCRIPTED:
            raise ConfigError(f"--model {model}: unknown scripted control; use one of "
                              + ", ".join(f"scripted:{n}" for n in SCRIPTED) + ".")
        return
    if model == "local":
        if base_url:
            raise ConfigError("--base-url cannot be combined with --model local, which starts its own server; "
                              "give the endpoint's model name to --model instead.")
        return
    if base_url is None:
        raise ConfigError(f"--model {model}: a model behind an endpoint needs --base-url "
                          "(for example --base-url http://127.0.0.1:8000/v1); "
                          "use --model local for the embedded model.")
    check_base_url(base_url)
    api_key_from_env(api_key_env)


async def make_agent(model: str, *, base_url: str | None = None, api_key_env: str | None = None,
                     gguf: Path | None = None, text_only: bool = False, timeout_s: float | None = None) -> Agent:
    """Build and start the agent that ``--model`` names.

    ``timeout_s``: --call-timeout, for an endpoint's model; None = the default. The caller must
    ``await agent.aclose()``.
    """
    check_model_spec(model, base_url, api_key_env)
    if model.startswith("scripted:"):
        return SCRIPTED[model.removeprefix("scripted:")]()
    if model == "local":
        return await LocalAgent(gguf=gguf).start()
    assert base_url is not None
    return ChatCompletionsAgent(model=model, base_url=base_url, api_key=api_key_from_env(api_key_env),
                                vision=not text_only, timeout_s=timeout_s or DEFAULT_TIMEOUT_S)
