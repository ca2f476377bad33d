"""The agent seam: one stateless call per turn, the whole transcript in, one reply out."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel

from scenarios.schema import Scenario
from sim.records import TokenUsage


class ChatMessage(BaseModel):
    """One message.

    ``content`` is text, or OpenAI content parts (text and ``image_url`` data URLs) when a patient message
    carries images for a model that can see them.
    """

    role: Literal["system", "user", "assistant"]
    content: str | list[dict[str, Any]]

    @property
    def text(self) -> str:
        """The text of the message (the text parts joined), for logs, judges and text-only code."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.get("text", "") for p in self.content if p.get("type") == "text")

    def with_text_appended(self, extra: str) -> ChatMessage:
        """This message with ``extra`` added as a paragraph (to the text, or as one more text part)."""
        if isinstance(self.content, str):
            return ChatMessage(role=self.role, content=f"{self.content}\n\n{extra}")
        return ChatMessage(role=self.role, content=[*self.content, {"type": "text", "text": extra}])


class AgentRequest(BaseModel):
    """Everything one call may use.

    ``scenario`` is for the scripted controls only: model agents never send it anywhere (they see what a real
    clinician would: the transcript).
    """

    messages: list[ChatMessage]
    temperature: float
    max_tokens: int
    seed: int
    scenario: Scenario | None = None
    agent_turn: int


class AgentReply(BaseModel):
    """The agent's reply: its text, token usage when the endpoint reports it, and the wall time of the call."""

    text: str
    tokens: TokenUsage | None = None
    latency_s: float = 0.0


class Agent(Protocol):
    """The agent under test.

    Attributes:
        name: How runs, reports and events name the agent (``scripted:reference``, the model id, ...).
        vision: Whether the agent may get image parts. False (a text-only model, or ``--text-only``): a
            scenario's images reach it as their text descriptions only, and imaging items are recorded as
            not applicable.
    """

    name: str
    vision: bool

    async def respond(self, request: AgentRequest) -> AgentReply:
        """The agent's reply to one request."""
        ...

    async def aclose(self) -> None:
        """Release what the agent holds (connections, a server it started)."""
        ...
