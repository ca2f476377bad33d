"""The agent seam: one stateless call per turn, the whole transcript in, one reply out."""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel

from scenarios.schema import Scenario
from sim.result import TokenUsage


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


class AgentRequest(BaseModel):
    """Everything one call may use. ``scenario`` is for the scripted controls only: model agents
    never send it anywhere (they see what a real clinician would: the transcript)."""

    messages: list[ChatMessage]
    temperature: float
    max_tokens: int
    seed: int
    scenario: Scenario | None = None
    agent_turn: int


class AgentReply(BaseModel):
    text: str
    tokens: TokenUsage | None = None
    latency_s: float = 0.0


class Agent(Protocol):
    name: str

    async def respond(self, request: AgentRequest) -> AgentReply: ...

    async def aclose(self) -> None: ...
