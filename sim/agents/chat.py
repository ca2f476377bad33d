"""ChatCompletionsAgent: any OpenAI-compatible ``POST {base_url}/chat/completions`` over async httpx.

Failure policy, per call: a 30 s timeout; up to ``retries`` (3) retries after the first attempt on
timeouts, connection errors, 429 (waiting ``Retry-After`` seconds when the server sends it, capped
at 60) and 5xx, and on 200 responses whose body is not the expected JSON; exponential backoff
(0.5 s, 1 s, 2 s ... capped at 20 s) with full jitter between. Other 4xx are not retried. When every
attempt fails, ``AgentError`` says what happened on the last one; the API key never appears in it.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from typing import Any

import httpx

from sim.agents.base import AgentReply, AgentRequest
from sim.errors import AgentError, ConfigError
from sim.result import TokenUsage

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_RETRIES = 3
RETRY_AFTER_CAP_S = 60.0


def api_key_from_env(var: str | None) -> str | None:
    """The key in environment variable ``var``; a clear error if the variable is named but unset."""
    if not var:
        return None
    value = os.environ.get(var)
    if not value:
        raise ConfigError(
            f"--api-key-env {var}: the environment variable {var} is not set or empty. "
            f"Export it first (export {var}=...), or drop --api-key-env for an endpoint without a key."
        )
    return value


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return min(RETRY_AFTER_CAP_S, max(0.0, float(value)))
    except ValueError:
        return None


class ChatCompletionsAgent:
    """The agent under test behind an OpenAI-compatible endpoint."""

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retries: int = DEFAULT_RETRIES,
        backoff_base_s: float = 0.5,
        backoff_cap_s: float = 20.0,
        extra_body: dict[str, Any] | None = None,
        vision: bool = True,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"--base-url {base_url!r}: must start with http:// or https:// "
                              "(for example http://127.0.0.1:8000/v1).")
        self.name = model
        self.model = model
        self.vision = vision  # False: the model was declared text-only (--text-only); it never gets image parts
        self.base_url = base_url.rstrip("/")
        self._key = api_key
        self.retries = retries
        self.backoff_base_s = backoff_base_s
        self.backoff_cap_s = backoff_cap_s
        self.extra_body = extra_body or {}
        self._timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0))
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # One single-connection client per call in flight, reused across calls. httpcore's shared pool
        # scans every connection on each request (quadratic at concurrency 32, see
        # bench/harness_overhead.py); a private client per in-flight call keeps that scan at one.
        self._idle: list[httpx.AsyncClient] = []
        self._clients: list[httpx.AsyncClient] = []
        self._ssl = httpx.create_ssl_context()  # loading CA certificates costs ~25 ms: once per agent

    def _checkout(self) -> httpx.AsyncClient:
        if self._idle:
            return self._idle.pop()
        client = httpx.AsyncClient(timeout=self._timeout, headers=self._headers, verify=self._ssl,
                                   limits=httpx.Limits(max_connections=1, max_keepalive_connections=1))
        self._clients.append(client)
        return client

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "[redacted]") if self._key else text

    def _backoff(self, attempt: int) -> float:
        return random.uniform(0, min(self.backoff_cap_s, self.backoff_base_s * 2**attempt))

    async def respond(self, request: AgentRequest) -> AgentReply:
        return await self.complete([m.model_dump() for m in request.messages], temperature=request.temperature,
                                   max_tokens=request.max_tokens, seed=request.seed)

    async def complete(self, messages: list[dict[str, str]], *, temperature: float, max_tokens: int,
                       seed: int | None = None) -> AgentReply:
        """One chat completion with the retry policy above (also used by the judge client)."""
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": temperature,
                                "max_tokens": max_tokens, **self.extra_body}
        if seed is not None:
            body["seed"] = seed
        url = f"{self.base_url}/chat/completions"
        client = self._checkout()
        try:
            return await self._post(client, url, body)
        finally:
            self._idle.append(client)

    async def _post(self, client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> AgentReply:
        last = "no attempt made"
        t0 = time.perf_counter()
        for attempt in range(self.retries + 1):
            wait: float | None = None
            try:
                response = await client.post(url, json=body)
            except httpx.TimeoutException:
                last = f"timed out after {self._timeout.read:g} s"
            except httpx.TransportError as exc:
                last = f"connection failed ({type(exc).__name__}: {self._scrub(str(exc))[:160]})"
            else:
                status = response.status_code
                if status == 200:
                    try:
                        reply = self._parse(response)
                        reply.latency_s = time.perf_counter() - t0
                        return reply
                    except ValueError as exc:
                        last = f"malformed response ({exc})"
                elif status == 429 or status >= 500:
                    last = f"HTTP {status}: {self._scrub(response.text)[:200]}"
                    wait = _retry_after(response) if status == 429 else None
                else:
                    raise AgentError(
                        f"{url} answered HTTP {status}: {self._scrub(response.text)[:300]}. "
                        + ("Check the key in --api-key-env." if status in (401, 403) else
                           "Check --model and --base-url." if status == 404 else
                           "The request was refused; the transcript may exceed the model's context."),
                        kind=f"http_{status}",
                    )
            if attempt < self.retries:
                await asyncio.sleep(wait if wait is not None else self._backoff(attempt))
        raise AgentError(f"{url} failed after {self.retries + 1} attempts; last: {last}", retryable=True,
                         kind="retries_exhausted")

    @staticmethod
    def _parse(response: httpx.Response) -> AgentReply:
        try:
            data = response.json()
        except json.JSONDecodeError:
            raise ValueError("body is not JSON") from None
        try:
            text = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise ValueError("no choices[0].message.content") from None
        if not isinstance(text, str):
            raise ValueError("choices[0].message.content is not a string")
        usage = data.get("usage") or {}
        tokens = TokenUsage(prompt=int(usage.get("prompt_tokens") or 0),
                            completion=int(usage.get("completion_tokens") or 0)) if usage else None
        return AgentReply(text=text, tokens=tokens)

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose()
        self._clients.clear()
        self._idle.clear()
