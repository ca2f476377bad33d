"""Judge clients: OpenAI-compatible models that grade transcripts for the judge path (scorers/_judge.py).

Judge spec (CLI): ``--judge MODEL --judge-base-url URL [--judge-api-key-env VAR]``, repeatable and
paired in order (the n-th ``--judge-base-url`` belongs to the n-th ``--judge``); ``--judge local``
uses the embedded SmolLM2 server and takes no URL. Each judge has a *provider family* (openai,
anthropic, google, meta, mistral, qwen, smollm, ...) from ``DEFAULT_FAMILIES`` or a user's JSON file
(``--family-map FILE``: ``{"family": ["name or url substring", ...]}``), used by the self-preference
guard: a judge of the same family as the model under test is not used for that model.

Output protocol: temperature 0; the reply must be one JSON object with the requested keys. Parsing
is strict first; then one local repair (code fences, text around the object, trailing commas,
Python literals); then one repair request to the model showing its own bad output; then the whole
call is retried (``retries`` times). If nothing valid comes back the judgement is ``None``: the
caller records "no verdict" and never counts it as met or unmet. A key's type is ``bool``, ``int``,
``float``, ``str``, ``list`` (an array of strings) or ``list[dict]`` (an array of objects, e.g. the criteria
``encsim rubrics generate --judge`` asks for; the caller validates each object).

Transport policy: every call goes through ``ChatCompletionsAgent.complete``, so judges (and the
patient model's client, which is a ``JudgeClient``) share the agent's policy: a total deadline per
attempt (connect, send, read the whole reply), retries on transient failures, malformed replies
never accepted, errors naming the judge's own flags (``--judge-base-url``, ``--judge-api-key-env``)
and endpoint text redacted. The deadline is ``run --call-timeout`` when given (stored in run.json),
else 60 s for a remote judge; the embedded ``local`` judge gets 120 s (or the larger --call-timeout).

Constrained output: a client built with ``json_schema=True`` sends each request a ``response_format``
of ``{"type": "json_object", "schema": ...}`` built from the keys asked for, which llama.cpp's servers
turn into a grammar: the embedded SmolLM2 then answers with exactly one conforming object in a few
tokens, where unconstrained it wrote prose or hundreds of tokens of unrelated JSON (every criterion a
no-verdict after six calls). Only the embedded judge and patient model use it: remote endpoints
differ in what they accept (OpenAI wants ``json_schema``, others reject unknown fields), and the
parsing and repair above stay the contract for them.
"""

from __future__ import annotations

import asyncio
import json
import re
import typing
from pathlib import Path
from typing import Any

from sim.agents.chat import (
    JUDGE_FLAGS,
    ChatCompletionsAgent,
    EndpointFlags,
    api_key_from_env,
    check_base_url,
    endpoint_text,
)
from sim.records import AgentError, ConfigError, JudgeRef

DEFAULT_JUDGE_CONCURRENCY = 8  # calls in flight per judge (--judge-concurrency)
DEFAULT_JUDGE_TIMEOUT_S = 60.0  # total deadline of one attempt of a remote judge's call, unless --call-timeout
LOCAL_JUDGE_TIMEOUT_S = 120.0  # the embedded model on a loaded CPU
_JSON_TYPES: dict[type, str] = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
                                dict: "object"}


def _object_list(kind: type) -> bool:
    """``list[dict]`` as a key's type: a JSON array of objects (``list`` alone is an array of strings)."""
    return typing.get_origin(kind) is list and typing.get_args(kind) in ((dict,), (dict[str, Any],))


def _schema(kind: type) -> dict[str, Any]:
    if _object_list(kind):
        return {"type": "array", "items": {"type": "object"}}
    return {"type": _JSON_TYPES[kind]}


def response_format(keys: dict[str, type]) -> dict[str, Any]:
    """The llama.cpp ``response_format`` that constrains a reply to one object with exactly ``keys``."""
    return {"type": "json_object",
            "schema": {"type": "object", "properties": {k: _schema(t) for k, t in keys.items()},
                       "required": list(keys), "additionalProperties": False}}

DEFAULT_FAMILIES: dict[str, list[str]] = {
    "openai": ["gpt", "o1-", "o3-", "o4-", "openai.com", "chatgpt"],
    "anthropic": ["claude", "anthropic.com"],
    "google": ["gemini", "gemma", "palm", "googleapis.com"],
    "meta": ["llama", "meta-llama"],
    "mistral": ["mistral", "mixtral", "codestral", "mistral.ai"],
    "qwen": ["qwen"],
    "deepseek": ["deepseek"],
    "smollm": ["smollm", "local"],
    "scripted": ["scripted:"],
}


def load_family_map(path: Path | None) -> dict[str, list[str]]:
    """The provider families: ``DEFAULT_FAMILIES``, with those of the ``--family-map`` JSON file (if given) added.

    Raises:
        ConfigError: the file cannot be read as JSON, or is not a map of family name to a list of name or URL
            substrings.
    """
    if path is None:
        return DEFAULT_FAMILIES
    from scenarios import FileProblem, decode_checked, parse_json_checked, read_bytes_checked

    try:  # the checks of every file a user gives: a regular file, 1 MiB, UTF-8, nested at most 50 deep, finite
        data = parse_json_checked(decode_checked(read_bytes_checked(Path(path))))
    except FileProblem as exc:
        raise ConfigError(f"--family-map {path}: cannot read it as JSON ({exc.reason}{exc.where}). Give a file like "
                          '{"openai": ["gpt", "openai.com"]}.') from None
    if not isinstance(data, dict) or not all(isinstance(v, list) and all(isinstance(x, str) for x in v)
                                             for v in data.values()):
        raise ConfigError(f"--family-map {path}: must map each family name to a list of name or URL substrings.")
    return {**DEFAULT_FAMILIES, **data}


def family_of(model: str, base_url: str | None = None, families: dict[str, list[str]] = DEFAULT_FAMILIES) -> str:
    """The provider family whose patterns match the model name (first) or the base URL; else the name."""
    for text in (model.lower(), (base_url or "").lower()):
        for family, patterns in families.items():
            if text and any(p.lower() in text for p in patterns):
                return family
    return model.lower()


_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.I)


def parse_json_object(text: str) -> dict[str, Any] | None:
    """Strict parse of a whole reply as one JSON object."""
    try:
        data = json.loads(text.strip())
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def repair_json_object(text: str) -> dict[str, Any] | None:
    """The one local repair: strip fences and surrounding prose, trailing commas, Python literals."""
    body = _FENCE.sub("", text.strip())
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        return None
    body = body[start : end + 1]
    body = re.sub(r",\s*([}\]])", r"\1", body)
    body = re.sub(r"\bTrue\b", "true", re.sub(r"\bFalse\b", "false", re.sub(r"\bNone\b", "null", body)))
    return parse_json_object(body)


def _conforms(data: dict[str, Any], keys: dict[str, type]) -> bool:
    for key, kind in keys.items():
        value = data.get(key)
        if kind is bool and not isinstance(value, bool):
            return False
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            return False
        if kind is str and not isinstance(value, str):
            return False
        if kind is list and not (isinstance(value, list) and all(isinstance(x, str) for x in value)):
            return False
        if _object_list(kind) and not (isinstance(value, list) and all(isinstance(x, dict) for x in value)):
            return False
    return True


def _conforming(text: str, keys: dict[str, type]) -> dict[str, Any] | None:
    """Strict parse, then the local repair; the first result with the right keys and types."""
    for data in (parse_json_object(text), repair_json_object(text)):
        if data is not None and _conforms(data, keys):
            return data
    return None


class JudgeClient:
    """One judge model. ``ask_json`` returns a conforming dict, or None after every attempt failed."""

    def __init__(self, *, model: str, base_url: str, api_key: str | None = None, family: str | None = None,
                 retries: int = 2, timeout_s: float = DEFAULT_JUDGE_TIMEOUT_S, max_tokens: int = 512,
                 concurrency: int = DEFAULT_JUDGE_CONCURRENCY, flags: EndpointFlags = JUDGE_FLAGS,
                 json_schema: bool = False) -> None:
        if concurrency < 1:
            raise ConfigError(f"--judge-concurrency {concurrency}: give 1 or more (calls in flight per judge).")
        self.name = model
        self.concurrency = concurrency
        self._slots = asyncio.Semaphore(concurrency)  # bounds this judge's calls in flight, across encounters
        self.base_url = base_url
        self.family = family or family_of(model, base_url)
        self.retries = retries
        self.max_tokens = max_tokens
        self.json_schema = json_schema
        self._chat = ChatCompletionsAgent(model=model, base_url=base_url, api_key=api_key, timeout_s=timeout_s,
                                          flags=flags, retry_malformed=False)
        self.calls = 0
        self.failures: list[str] = []

    async def ask_json(self, messages: list[dict[str, str]], *, keys: dict[str, type]) -> dict[str, Any] | None:
        """Ask the judge for one JSON object with ``keys`` (of the given types), within this judge's concurrency.

        Each attempt that fails to conform gets one repair request; failures are kept in ``failures``.

        Returns:
            The conforming object, or None after ``retries + 1`` attempts.
        """
        async with self._slots:
            return await self._ask_json(messages, keys=keys)

    async def _ask_json(self, messages: list[dict[str, str]], *, keys: dict[str, type]) -> dict[str, Any] | None:
        wanted = ", ".join(f'"{k}"' for k in keys)
        extra = {"response_format": response_format(keys)} if self.json_schema else None
        for _attempt in range(self.retries + 1):
            try:
                self.calls += 1
                reply = await self._chat.complete(messages, temperature=0.0, max_tokens=self.max_tokens, extra=extra)
            except AgentError as exc:
                self.failures.append(str(exc))
                continue
            if (data := _conforming(reply.text, keys)) is not None:
                return data
            repair = [*messages, {"role": "assistant", "content": reply.text},
                      {"role": "user", "content": f"That was not a valid answer. Reply with only one JSON object "
                                                  f"with the keys {wanted} and the types asked for, nothing else."}]
            try:
                self.calls += 1
                fixed = await self._chat.complete(repair, temperature=0.0, max_tokens=self.max_tokens, extra=extra)
            except AgentError as exc:
                self.failures.append(str(exc))
                continue
            if (data := _conforming(fixed.text, keys)) is not None:
                return data
            self.failures.append(f"no valid JSON with keys {wanted}: {endpoint_text(fixed.text, 120)!r}")
        return None

    async def aclose(self) -> None:
        """Close the judge's HTTP clients."""
        await self._chat.aclose()


def plan_judges(names: list[str], base_urls: list[str], key_envs: list[str], *,
                families: dict[str, list[str]]) -> list[JudgeRef]:
    """Pair --judge / --judge-base-url / --judge-api-key-env in order (``local`` needs no URL).

    Check every URL and that every named key variable is set, and give each judge its provider family.
    """
    remote = [n for n in names if n != "local"]
    if len(base_urls) != len(remote):
        raise ConfigError(f"--judge-base-url given {len(base_urls)} time(s) for {len(remote)} non-local --judge "
                          "value(s); give one URL per judge, in the same order (--judge local needs none).")
    if key_envs and len(key_envs) not in (1, len(remote)):
        raise ConfigError("--judge-api-key-env must be given once (for every judge) or once per non-local judge.")
    refs: list[JudgeRef] = []
    urls = iter(base_urls)
    for name in names:
        if name == "local":
            refs.append(JudgeRef(name="local", family=family_of("local", None, families)))
            continue
        url = check_base_url(next(urls), JUDGE_FLAGS)
        remote_index = sum(r.name != "local" for r in refs)
        env = key_envs[0] if len(key_envs) == 1 else (key_envs[remote_index] if key_envs else None)
        api_key_from_env(env, JUDGE_FLAGS.api_key_env)  # a clear error now, before anything starts
        refs.append(JudgeRef(name=name, base_url=url, api_key_env=env, family=family_of(name, url, families)))
    return refs


def judge_from_ref(ref: JudgeRef, local_base_url: str | None, *, concurrency: int = DEFAULT_JUDGE_CONCURRENCY,
                   timeout_s: float | None = None, flags: EndpointFlags = JUDGE_FLAGS) -> JudgeClient:
    """A judge client for a planned judge, or one recorded in run.json (its key is read again).

    ``timeout_s``: the run's --call-timeout (None: the judge defaults); ``flags``: named in its errors.
    """
    if ref.name == "local":
        if local_base_url is None:
            raise ConfigError(f"{flags.model} local needs the embedded model server, which could not be started.")
        return JudgeClient(model="smollm2-135m-instruct", base_url=local_base_url, family=ref.family,
                           timeout_s=max(LOCAL_JUDGE_TIMEOUT_S, timeout_s or 0.0), concurrency=concurrency,
                           flags=flags, json_schema=True)
    assert ref.base_url is not None
    return JudgeClient(model=ref.name, base_url=ref.base_url,
                       api_key=api_key_from_env(ref.api_key_env, flags.api_key_env), family=ref.family,
                       concurrency=concurrency, timeout_s=timeout_s or DEFAULT_JUDGE_TIMEOUT_S, flags=flags)


def make_judges(names: list[str], base_urls: list[str], key_envs: list[str], *, local_base_url: str | None,
                families: dict[str, list[str]], concurrency: int = DEFAULT_JUDGE_CONCURRENCY) -> list[JudgeClient]:
    """``plan_judges`` and a client for each."""
    return [judge_from_ref(r, local_base_url, concurrency=concurrency)
            for r in plan_judges(names, base_urls, key_envs, families=families)]
