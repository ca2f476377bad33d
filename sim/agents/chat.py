"""ChatCompletionsAgent: any OpenAI-compatible ``POST {base_url}/chat/completions`` over aiohttp.

Transport: one ``aiohttp.ClientSession`` per agent and event loop (keep-alive connections, proxies from the
environment as httpx would take them, redirects not followed). aiohttp rather than httpx because a call costs
about a fifth of the CPU (``bench/harness_overhead.py``: 0.13-0.23 ms against 0.64-1.06 ms per loopback call),
and at concurrency 32 on two cores the harness is CPU-bound.

Base URL (checked before anything starts, ``check_base_url``): scheme http or https, a host, a port
in 1-65535 if given, no whitespace or control characters, no query or fragment, and no credentials
(``http://user:KEY@host/v1`` is refused: the key belongs in an environment variable named by
``--api-key-env``; the error shows the URL with its userinfo replaced by ``***``).

Failure policy, per call: each attempt has a total deadline (``--call-timeout``, default 30 s) that
covers connecting, sending the request and reading the whole reply, so an endpoint that trickles
bytes cannot hold a call longer than that. Up to ``retries`` (3) retries after the first attempt on
timeouts, connection errors (refused, DNS, TLS, dropped), 429 (waiting ``Retry-After`` seconds when
the server sends it, capped at 60), 5xx, and malformed 200 replies; exponential backoff (0.5 s, 1 s,
2 s ... capped at 20 s) with full jitter between. Other 4xx are not retried. A client built with
``retry_malformed=False`` (the judges, which repair and retry bad replies themselves) gets the
malformed error at once.

A 200 reply is *malformed*, never a turn, when its body is not a JSON object, carries an ``error``
object, has no (or empty) ``choices``, or its ``choices[0].message.content`` is null (tool calls
without text included), not a string, or empty/whitespace once read. Content given as a list of
parts (``[{"type": "text", "text": ...}]``) is accepted: the text parts are joined. A null content
with an OpenAI ``refusal`` string is the model's reply (its refusal). Text cut at ``max_tokens``
(``finish_reason: "length"``) is still a reply; with no text it is malformed.

When a call fails for good, ``EndpointError`` (an ``AgentError``) says what happened on the last
attempt and what to fix, naming the flag (``--base-url``, ``--api-key-env``, ``--model``,
``--call-timeout``, or the judge's / patient model's own). Its ``kind`` is stable: ``connection_refused``,
``dns``, ``tls``, ``timeout``, ``malformed``, ``http_5xx``, ``http_429``, ``http_<code>`` for other
statuses (``http_401``, ``http_403``, ``http_404`` ...), ``retries_exhausted`` for other transport
failures (connection dropped or reset). After retries the kind is the last attempt's cause.
``is_fatal(exc)`` is true for ``FATAL_KINDS`` (refused, DNS, 401, 403, 404): every
further call will fail the same way, so a runner may stop early.

Key hygiene: a key read by ``api_key_from_env`` is registered for redaction
(``sim.records.register_secret``), and every piece
of endpoint text that goes into an error (bodies, exception messages) passes through
``sim.records.clean`` (redacted in every escaping, escape sequences made visible) and is folded to
one line.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import math
import os
import random
import re
import socket
import ssl
import time
import urllib.parse
from typing import Any, NamedTuple

import aiohttp
import httpx
import yarl
from aiohttp.helpers import get_env_proxy_for_url

from sim.agents.base import AgentReply, AgentRequest
from sim.records import AgentError, ConfigError, TokenUsage, clean, register_secret

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_RETRIES = 3
RETRY_AFTER_CAP_S = 60.0
FATAL_KINDS = frozenset({"connection_refused", "dns", "http_401", "http_403", "http_404", "server_died"})
# causes of a failed attempt that keep their own kind when the retries run out
_SPECIFIC_KINDS = frozenset({"connection_refused", "dns", "tls", "timeout", "malformed", "http_5xx", "http_429"})


class EndpointFlags(NamedTuple):
    """The CLI flags that configure one endpoint, named in its error messages."""

    model: str = "--model"
    base_url: str = "--base-url"
    api_key_env: str = "--api-key-env"
    timeout: str = "--call-timeout"


AGENT_FLAGS = EndpointFlags()
JUDGE_FLAGS = EndpointFlags("--judge", "--judge-base-url", "--judge-api-key-env")
PATIENT_FLAGS = EndpointFlags("--patient-model", "--patient-base-url", "--patient-api-key-env")


class EndpointError(AgentError):
    """An endpoint call that failed for good; ``kind`` says why (module docstring)."""


def is_fatal(exc: BaseException) -> bool:
    """True when ``exc`` is an agent error every further call to the same endpoint would repeat.

    Such errors are connection refused, unknown host, HTTP 401/403/404, and the embedded model server's death
    (``server_died``, ``sim.agents.local.ServerDied``): the run can stop instead of failing N times.
    """
    return isinstance(exc, AgentError) and exc.kind in FATAL_KINDS


def endpoint_text(text: str, limit: int = 200) -> str:
    """Endpoint text fit for an error message.

    Redacted, escape sequences visible, one line, at most ``limit`` characters (cut after redaction, so a key
    is never cut into an unredacted prefix).
    """
    folded = " ".join(clean(text).split())
    return folded if len(folded) <= limit else folded[: limit - 3] + "..."


_USERINFO = re.compile(r"^([^:/?#\s]*://)[^/?#]*@")


def _masked(url: str) -> str:
    """``url`` with any ``user:password@`` replaced by ``***@`` (never echo a key given in a URL)."""
    return _USERINFO.sub(r"\1***@", url)


def check_base_url(url: str, flags: EndpointFlags = AGENT_FLAGS) -> str:
    """``url`` if it can name an OpenAI-compatible endpoint; else a one-paragraph ConfigError naming the flag."""
    flag = flags.base_url
    shown = _masked(url)
    example = "for example http://127.0.0.1:8000/v1"
    if not url.strip():
        raise ConfigError(f"{flag} is empty; give the endpoint's URL, {example}.")
    if any(c.isspace() or not c.isprintable() for c in url):
        raise ConfigError(f"{flag} {shown!r}: contains a space or a control character; give the endpoint's URL "
                          f"without them (quote it in the shell if needed), {example}.")
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:
        reason = "the port must be a number from 1 to 65535" if "port" in str(exc).lower() else str(exc)
        raise ConfigError(f"{flag} {shown!r}: not a valid URL ({reason}); {example}.") from None
    if parts.scheme.lower() not in ("http", "https") or not url.lower().startswith(("http://", "https://")):
        raise ConfigError(f"{flag} {shown!r}: must start with http:// or https:// ({example}).")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise ConfigError(f"{flag} {shown!r}: the URL carries credentials (user:key@host); a key in a URL ends up "
                          f"in run files, logs and shell history. Put the key in an environment variable and pass "
                          f"its name with {flags.api_key_env} (export MY_KEY=...; {flags.api_key_env} MY_KEY), and "
                          f"give {flag} without it.")
    if not parts.hostname:
        raise ConfigError(f"{flag} {shown!r}: has no host; {example}.")
    if port is not None and not 1 <= port <= 65535:
        raise ConfigError(f"{flag} {shown!r}: the port must be a number from 1 to 65535; {example}.")
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        raise ConfigError(f"{flag} {_masked(url.split('?')[0].split('#')[0])}?***: must not carry a query (?...) "
                          f"or fragment (#...); /chat/completions is appended to it. Give the URL up to its path, "
                          f"{example}.")
    return url


def check_call_timeout(value: float | str, flag: str = "--call-timeout") -> float:
    """A positive, finite number of seconds; else a one-paragraph ConfigError naming ``flag``."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise ConfigError(f"{flag} {str(value)[:40]!r}: give the deadline of one endpoint call in seconds, a positive "
                          f"number (for example {flag} 30, or {flag} 2.5).")
    return seconds


def check_key_env_name(var: str, flag: str = "--api-key-env") -> None:
    """A one-paragraph ConfigError naming ``flag`` if ``var`` cannot be an environment variable's name.

    Empty, blank, with a space around it, a control character or '='. The name is not echoed: it might be a key
    pasted in the wrong place.
    """
    if not var.strip() or var != var.strip() or not var.isprintable() or "=" in var:
        what = "an empty name" if not var.strip() else "a name with a space, '=' or a control character"
        raise ConfigError(f"{flag} was given {what}; give the name of the environment variable that holds the key, "
                          f"e.g. {flag} OPENAI_API_KEY (after export OPENAI_API_KEY=...), or drop {flag} for an "
                          "endpoint without a key.")


def api_key_from_env(var: str | None, flag: str = "--api-key-env") -> str | None:
    """The key in environment variable ``var`` (registered for redaction, ``sim.records.register_secret``).

    A clear error if the name is empty or no variable's name, the variable unset, or its value something no HTTP
    header can carry.
    """
    if var is None:
        return None
    check_key_env_name(var, flag)
    value = os.environ.get(var)
    if not value:
        raise ConfigError(
            f"{flag} {var}: the environment variable {var} is not set or empty. "
            f"Export it first (export {var}=...), or drop {flag} for an endpoint without a key."
        )
    register_secret(value)
    if value != value.strip() or not value.isascii() or not value.isprintable() or " " in value:
        raise ConfigError(f"{flag} {var}: the key in {var} has a space, a line break, a control character or a "
                          f"non-ASCII character (often a copy-paste accident); export it again without them.")
    return value


class _Response(NamedTuple):
    """A whole HTTP reply, read within the attempt's deadline."""

    status_code: int
    headers: Any  # a case-insensitive multidict
    content: bytes
    charset: str | None

    @property
    def text(self) -> str:
        try:
            return self.content.decode(self.charset or "utf-8", errors="replace")
        except LookupError:  # an unknown charset named by the server
            return self.content.decode("utf-8", errors="replace")


def _retry_after(response: _Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return min(RETRY_AFTER_CAP_S, max(0.0, float(value)))
    except ValueError:
        return None


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc``, its causes and contexts, and the members of exception groups, depth first."""
    out: list[BaseException] = []
    stack = [exc]
    while stack and len(out) < 50:
        e = stack.pop()
        if any(e is seen for seen in out):
            continue
        out.append(e)
        if isinstance(e, BaseExceptionGroup):
            stack.extend(e.exceptions)
        stack.extend(x for x in (e.__context__, e.__cause__) if x is not None)
    return out


def _transport_kind(exc: BaseException) -> str:
    causes = _causes(exc)
    if any(isinstance(e, socket.gaierror | aiohttp.ClientConnectorDNSError) for e in causes):
        return "dns"
    if any(isinstance(e, ConnectionRefusedError) for e in causes):
        return "connection_refused"
    if any(isinstance(e, ssl.SSLError | aiohttp.ClientSSLError) for e in causes):
        return "tls"
    if any(isinstance(e, TimeoutError) for e in causes):
        return "timeout"
    return "retries_exhausted"


def _usage(data: dict[str, Any]) -> TokenUsage | None:
    usage = data.get("usage")
    if not isinstance(usage, dict) or not usage:
        return None
    try:
        return TokenUsage(prompt=int(usage.get("prompt_tokens") or 0),
                          completion=int(usage.get("completion_tokens") or 0))
    except (TypeError, ValueError):
        return None


class _Malformed(ValueError):
    """A 200 reply that cannot be a turn."""


def _reply_text(data: Any) -> str:
    """The reply text of a chat completion body, or ``_Malformed`` saying what is wrong with it."""
    if not isinstance(data, dict):
        raise _Malformed(f"the body is JSON {type(data).__name__}, not an object")
    if data.get("error"):
        error = data["error"]
        detail = error.get("message") if isinstance(error, dict) else error
        raise _Malformed(f"an error object in a 200 reply: {endpoint_text(str(detail), 160)}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise _Malformed("no choices" if choices is None else "empty choices" if choices == [] else
                         f"choices is {type(choices).__name__}, not a list")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise _Malformed("no choices[0].message")
    content = message.get("content")
    cut = isinstance(choice, dict) and choice.get("finish_reason") == "length"
    if content is None:
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal.strip():
            return refusal
        if message.get("tool_calls"):
            raise _Malformed("tool calls but no text (null content)")
        raise _Malformed("null content" + (" (cut at max_tokens: finish_reason length)" if cut else ""))
    if isinstance(content, list):
        texts = [p["text"] for p in content
                 if isinstance(p, dict) and p.get("type") in ("text", "output_text") and isinstance(p.get("text"), str)]
        if not texts:
            raise _Malformed("content parts without a text part")
        content = "".join(texts)
    elif not isinstance(content, str):
        raise _Malformed(f"content is {type(content).__name__}, not a string")
    if not content.strip():
        raise _Malformed(("empty" if not content else "whitespace-only") + " content"
                         + (" (cut at max_tokens: finish_reason length)" if cut else ""))
    return content


def _is_loopback(host: str) -> bool:
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _discard(session: aiohttp.ClientSession) -> None:
    """Forget a session whose event loop is closed (an agent used by one ``asyncio.run`` after another).

    Its sockets went with its loop; marking it closed keeps aiohttp from logging "Unclosed client session" when
    it is collected.
    """
    with contextlib.suppress(Exception):
        if session.connector is not None:
            session.connector._close()  # on a closed loop this only marks the connector closed
        session.detach()


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
        flags: EndpointFlags = AGENT_FLAGS,
        retry_malformed: bool = True,
    ) -> None:
        check_base_url(base_url, flags)
        # False for a client with its own policy for unusable replies (the judges' repair and retries): retrying
        # here as well would multiply the two (24 calls per criterion instead of 6 against a weak local judge)
        self.retry_malformed = retry_malformed
        self.flags = flags
        self.timeout_s = check_call_timeout(timeout_s, flags.timeout)
        register_secret(api_key)
        self.name = model
        self.model = model
        self.vision = vision  # False: the model was declared text-only (--text-only); it never gets image parts
        self.base_url = base_url.rstrip("/")
        self._key = api_key
        self.retries = retries
        self.backoff_base_s = backoff_base_s
        self.backoff_cap_s = backoff_cap_s
        self.extra_body = extra_body or {}
        # aiohttp bounds the connect and each read; the total deadline per attempt is asyncio's (in _post)
        self._timeout = aiohttp.ClientTimeout(total=None, sock_connect=min(self.timeout_s, 10.0),
                                              sock_read=self.timeout_s)
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._ssl: ssl.SSLContext | None = None  # loading CA certificates costs ~25 ms: once per agent, when needed
        # one session per event loop (a session and its connections belong to the loop that made them)
        self._sessions: dict[asyncio.AbstractEventLoop, aiohttp.ClientSession] = {}
        self._proxy: tuple[yarl.URL | None, aiohttp.BasicAuth | None] | None = None

    def _session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            for old in [lp for lp in self._sessions if lp.is_closed()]:
                _discard(self._sessions.pop(old))
            if self._ssl is None and self.base_url.startswith("https:"):
                self._ssl = httpx.create_ssl_context()  # httpx's CA bundle and SSL_CERT_FILE/DIR, as before
            connector = aiohttp.TCPConnector(limit=0, ssl=self._ssl or True)
            # trust_env=False: with it aiohttp looks up the proxy and ~/.netrc in a thread on every request; the
            # proxy (HTTP(S)_PROXY / NO_PROXY, as httpx would take them) is looked up once in _proxy_for instead
            session = aiohttp.ClientSession(connector=connector, timeout=self._timeout, headers=self._headers,
                                            trust_env=False, auto_decompress=True)
            self._sessions[loop] = session
        return session

    def _proxy_for(self, url: str) -> tuple[yarl.URL | None, aiohttp.BasicAuth | None]:
        """The proxy for ``url`` from HTTP(S)_PROXY / NO_PROXY; never one for this machine's own address."""
        if self._proxy is None:
            target = yarl.URL(url)
            try:
                if _is_loopback(target.host or ""):  # the embedded model, a local server: a proxy cannot reach it
                    raise LookupError(target.host)
                self._proxy = get_env_proxy_for_url(target)
            except LookupError:  # no proxy set for the scheme, or the host is in NO_PROXY or loopback
                self._proxy = (None, None)
        return self._proxy

    async def _send(self, url: str, body: dict[str, Any]) -> _Response:
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        proxy, proxy_auth = self._proxy_for(url)
        async with self._session().post(url, data=data, allow_redirects=False, proxy=proxy,
                                        proxy_auth=proxy_auth) as response:
            content = await response.read()
            return _Response(response.status, response.headers, content, response.charset)

    def _backoff(self, attempt: int) -> float:
        return random.uniform(0, min(self.backoff_cap_s, self.backoff_base_s * 2**attempt))

    async def respond(self, request: AgentRequest) -> AgentReply:
        """The endpoint's reply to the request's messages (``complete`` with the request's sampling settings)."""
        return await self.complete([m.model_dump() for m in request.messages], temperature=request.temperature,
                                   max_tokens=request.max_tokens, seed=request.seed)

    async def complete(self, messages: list[dict[str, Any]], *, temperature: float, max_tokens: int,
                       seed: int | None = None, extra: dict[str, Any] | None = None) -> AgentReply:
        """One chat completion with the retry policy above (also used by the judge client).

        ``extra``: more request fields for this call (a judge's ``response_format``).
        """
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": temperature,
                                "max_tokens": max_tokens, **self.extra_body, **(extra or {})}
        if seed is not None:
            body["seed"] = seed
        return await self._post(f"{self.base_url}/chat/completions", body)

    def _hint(self, kind: str) -> str:
        """What to fix, for an error of ``kind``."""
        f = self.flags
        host = urllib.parse.urlsplit(self.base_url).hostname
        hints = {
            "connection_refused": f"Nothing is listening there: check the server is running and the host and port of "
                                  f"{f.base_url} {self.base_url}.",
            "dns": f"The host name {host} could not be resolved: check the spelling of {f.base_url} (and the network).",
            "tls": f"The TLS handshake failed: check http:// versus https:// in {f.base_url} and the server's "
                   "certificate.",
            "timeout": f"No complete reply within the {self.timeout_s:g} s deadline of an attempt: raise "
                       f"{f.timeout} if the model is slow, or check the server's load.",
            "malformed": f"The endpoint answered 200 without a usable reply: check that {f.model} {self.model} names a "
                         f"chat model served at {f.base_url} and that the server returns OpenAI chat completions "
                         "with text content.",
            "http_5xx": "The server failed; see its logs.",
            "http_429": "The endpoint is rate-limiting: lower --concurrency, or wait and resume.",
            "http_401": f"Check the key in {f.api_key_env}" + ("." if self._key else
                                                                f" (no key was sent: give {f.api_key_env} VAR)."),
            "http_404": f"Check {f.model} {self.model} (the server may not serve it) and the path of {f.base_url} "
                        "(it usually ends in /v1).",
        }
        hints["http_403"] = hints["http_401"]
        return hints.get(kind, f"The connection to {f.base_url} broke: check the server and any proxy in between.")

    async def _post(self, url: str, body: dict[str, Any]) -> AgentReply:
        kind, last = "retries_exhausted", "no attempt made"
        t0 = time.perf_counter()
        for attempt in range(self.retries + 1):
            wait: float | None = None
            try:
                async with asyncio.timeout(self.timeout_s):  # connect + send + read the whole reply
                    response = await self._send(url, body)
            except TimeoutError:
                kind, last = "timeout", f"timed out (no complete reply within {self.timeout_s:g} s)"
            except (aiohttp.ClientError, OSError, ExceptionGroup) as exc:
                kind = _transport_kind(exc)
                detail = {"connection_refused": "connection refused", "dns": "unknown host",
                          "tls": "TLS handshake failed", "timeout": "timed out"}.get(kind, "connection failed")
                last = f"{detail} ({type(exc).__name__}: {endpoint_text(str(exc), 160)})"
            else:
                status = response.status_code
                if status == 200:
                    try:
                        data = json.loads(response.content)
                        text = _reply_text(data)
                    except (json.JSONDecodeError, UnicodeDecodeError):
                        kind, last = "malformed", "malformed response (the body is not JSON)"
                    except _Malformed as exc:
                        kind, last = "malformed", f"malformed response ({exc})"
                    else:
                        return AgentReply(text=text, tokens=_usage(data), latency_s=time.perf_counter() - t0)
                elif status == 429 or status >= 500:
                    kind = "http_429" if status == 429 else "http_5xx"
                    last = f"HTTP {status}: {endpoint_text(response.text)}"
                    wait = _retry_after(response) if status == 429 else None
                else:
                    kind = f"http_{status}"
                    hint = self._hint(kind) if status in (401, 403, 404) else (
                        f"The endpoint redirects (to {endpoint_text(response.headers.get('location', '?'), 120)}): "
                        f"give the final URL as {self.flags.base_url}." if 300 <= status < 400 else
                        "The request was refused; the transcript may exceed the model's context.")
                    raise EndpointError(f"{url} answered HTTP {status}: {endpoint_text(response.text, 300)}. {hint}",
                                        kind=kind)
            if kind == "malformed" and not self.retry_malformed:
                raise EndpointError(f"{url}: {last}. {self._hint(kind)}", kind=kind)
            if attempt < self.retries:
                if kind == "malformed" and isinstance(body.get("seed"), int):
                    # a seeded model (llama.cpp) repeats an empty reply for the same seed: the retry must be able
                    # to differ, and stays reproducible (seed + 1, + 2, ...)
                    body = {**body, "seed": (body["seed"] + 1) & 0x7FFFFFFF}
                await asyncio.sleep(wait if wait is not None else self._backoff(attempt))
        proxy = self._proxy[0] if self._proxy else None
        via = "" if proxy is None or kind.startswith("http_") or kind == "malformed" else (
            f" The calls go through the proxy {endpoint_text(_masked(str(proxy)), 120)} (from HTTP_PROXY / "
            f"HTTPS_PROXY): check it, or add {urllib.parse.urlsplit(url).hostname} to NO_PROXY.")
        raise EndpointError(f"{url} failed after {self.retries + 1} attempts; last: {last}. {self._hint(kind)}{via}",
                            retryable=True, kind=kind if kind in _SPECIFIC_KINDS else "retries_exhausted")

    async def aclose(self) -> None:
        """Close the agent's HTTP sessions (those of other, still running loops are left to them)."""
        loop = asyncio.get_running_loop()
        for owner in list(self._sessions):
            if owner is loop:
                await self._sessions.pop(owner).close()
            elif owner.is_closed():
                _discard(self._sessions.pop(owner))
