"""ChatCompletionsAgent against a real loopback HTTP server that misbehaves on purpose."""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from scenarios import Scenario
from sim.agents import check_model_spec
from sim.agents.base import AgentRequest, ChatMessage
from sim.agents.chat import (
    FATAL_KINDS,
    JUDGE_FLAGS,
    ChatCompletionsAgent,
    EndpointError,
    api_key_from_env,
    check_base_url,
    check_call_timeout,
    is_fatal,
)
from sim.judges import JudgeClient, judge_from_ref
from sim.records import AgentError, ConfigError, JudgeRef, redact

SECRET = "sk-test-SECRET-0123456789"


def request(scenario: Scenario) -> AgentRequest:
    return AgentRequest(messages=[ChatMessage(role="system", content="s"), ChatMessage(role="user", content="hi")],
                        temperature=0.3, max_tokens=1024, seed=1, scenario=scenario, agent_turn=1)


def agent(url: str, **kw: object) -> ChatCompletionsAgent:
    kw.setdefault("backoff_base_s", 0.01)
    return ChatCompletionsAgent(model="m", base_url=url, api_key=SECRET, **kw)  # type: ignore[arg-type]


async def test_success_sends_protocol_and_key(fake_server, by_id) -> None:
    srv = fake_server(default=("ok", "How long has it hurt?")).start()
    a = agent(srv.base_url)
    reply = await a.respond(request(by_id["viral_uri"]))
    await a.aclose()
    assert reply.text == "How long has it hurt?" and reply.tokens is not None and reply.tokens.completion == 5
    body = srv.requests[0]
    assert body["temperature"] == 0.3 and body["max_tokens"] == 1024 and body["model"] == "m"
    assert "scenario" not in body  # the answer key never leaves the machine
    assert srv.headers_seen[0]["authorization"] == f"Bearer {SECRET}"


async def test_429_honours_retry_after(fake_server, by_id) -> None:
    srv = fake_server(script=[("status", 429, {"Retry-After": "1"})], default=("ok", "fine")).start()
    a = agent(srv.base_url)
    reply = await a.respond(request(by_id["viral_uri"]))
    await a.aclose()
    assert reply.text == "fine" and len(srv.requests) == 2
    gap = srv.request_times[1] - srv.request_times[0]
    assert gap >= 0.95, f"retried after {gap:.2f} s, Retry-After said 1 s"


async def test_500_then_success(fake_server, by_id) -> None:
    srv = fake_server(script=[("status", 500), ("status", 503)], default=("ok", "recovered")).start()
    a = agent(srv.base_url)
    assert (await a.respond(request(by_id["viral_uri"]))).text == "recovered"
    await a.aclose()
    assert len(srv.requests) == 3


async def test_persistent_500_exhausts_retries_without_leaking_key(fake_server, by_id) -> None:
    srv = fake_server(default=("status", 500)).start()
    a = agent(srv.base_url)
    with pytest.raises(AgentError) as info:
        await a.respond(request(by_id["viral_uri"]))
    await a.aclose()
    assert len(srv.requests) == 4  # 1 + 3 retries
    assert "after 4 attempts" in str(info.value) and "HTTP 500" in str(info.value)
    assert SECRET not in str(info.value)


async def test_hang_past_timeout_is_retried_then_fails(fake_server, by_id) -> None:
    srv = fake_server(default=("hang", 5)).start()
    a = agent(srv.base_url, timeout_s=0.3, retries=1)
    t0 = time.monotonic()
    with pytest.raises(AgentError, match="timed out"):
        await a.respond(request(by_id["viral_uri"]))
    await a.aclose()
    assert len(srv.requests) == 2 and time.monotonic() - t0 < 3


async def test_hang_then_success(fake_server, by_id) -> None:
    srv = fake_server(script=[("hang", 5)], default=("ok", "late but fine")).start()
    a = agent(srv.base_url, timeout_s=0.3)
    assert (await a.respond(request(by_id["viral_uri"]))).text == "late but fine"
    await a.aclose()


async def test_malformed_json_is_retried(fake_server, by_id) -> None:
    srv = fake_server(script=[("malformed",)], default=("ok", "valid")).start()
    a = agent(srv.base_url)
    assert (await a.respond(request(by_id["viral_uri"]))).text == "valid"
    await a.aclose()
    srv2 = fake_server(default=("malformed",)).start()
    b = agent(srv2.base_url, retries=2)
    with pytest.raises(AgentError, match="malformed response"):
        await b.respond(request(by_id["viral_uri"]))
    await b.aclose()


async def test_dropped_connection_is_retried(fake_server, by_id) -> None:
    srv = fake_server(script=[("drop",), ("drop",)], default=("ok", "back")).start()
    a = agent(srv.base_url)
    assert (await a.respond(request(by_id["viral_uri"]))).text == "back"
    await a.aclose()
    assert len(srv.requests) == 3


async def test_400_is_not_retried(fake_server, by_id) -> None:
    srv = fake_server(default=("status", 400)).start()
    a = agent(srv.base_url)
    with pytest.raises(AgentError, match="HTTP 400") as info:
        await a.respond(request(by_id["viral_uri"]))
    await a.aclose()
    assert len(srv.requests) == 1 and not info.value.retryable


async def test_unreachable_endpoint_is_retried_then_fatal_connection_refused(by_id) -> None:
    from sim.agents.local import free_port
    a = agent(f"http://127.0.0.1:{free_port()}/v1", retries=1)  # a port bound, then closed: nothing listens
    with pytest.raises(EndpointError, match="connection refused") as info:
        await a.respond(request(by_id["viral_uri"]))
    await a.aclose()
    assert info.value.kind == "connection_refused" and is_fatal(info.value)
    assert "after 2 attempts" in str(info.value)  # retried (transient until proven otherwise), kind kept
    assert "check the server is running" in str(info.value) and "--base-url" in str(info.value)


async def test_unknown_host_is_dns_and_fatal(by_id) -> None:
    a = agent("http://encsim-no-such-host.invalid/v1", retries=1, timeout_s=10)  # .invalid never resolves (RFC 2606)
    with pytest.raises(EndpointError) as info:
        await a.respond(request(by_id["viral_uri"]))
    await a.aclose()
    assert info.value.kind == "dns" and is_fatal(info.value)
    assert "encsim-no-such-host.invalid could not be resolved" in str(info.value)


@pytest.fixture
def plain_text_tcp() -> Iterator[int]:
    """A TCP server (a thread) that answers any bytes with plain-text HTTP: a TLS client fails its handshake."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(100)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join(5)
    listener.close()


async def test_https_to_a_plain_http_server_is_tls_not_fatal(plain_text_tcp: int, by_id) -> None:
    a = agent(f"https://127.0.0.1:{plain_text_tcp}/v1", retries=1)
    with pytest.raises(EndpointError) as info:
        await a.respond(request(by_id["viral_uri"]))
    await a.aclose()
    assert info.value.kind == "tls" and not is_fatal(info.value)
    assert "http:// versus https://" in str(info.value)


@pytest.mark.parametrize(("status", "flag"), [(401, "--api-key-env"), (403, "--api-key-env"), (404, "--model")])
async def test_auth_and_not_found_are_fatal_and_not_retried(fake_server, by_id,
                                                             status: int, flag: str) -> None:
    srv = fake_server(default=("status", status)).start()
    a = agent(srv.base_url)
    with pytest.raises(EndpointError) as info:
        await a.respond(request(by_id["viral_uri"]))
    await a.aclose()
    assert len(srv.requests) == 1
    assert info.value.kind == f"http_{status}" and is_fatal(info.value) and not info.value.retryable
    assert flag in str(info.value)
    assert FATAL_KINDS == {"connection_refused", "dns", "http_401", "http_403", "http_404", "server_died"}


@pytest.mark.parametrize("action", [("status", 500), ("status", 400), ("malformed",), ("hang", 5)])
async def test_transient_and_request_errors_are_not_fatal(fake_server, by_id, action: tuple) -> None:
    srv = fake_server(default=action).start()
    a = agent(srv.base_url, retries=1, timeout_s=0.3)
    with pytest.raises(EndpointError) as info:
        await a.respond(request(by_id["viral_uri"]))
    await a.aclose()
    assert not is_fatal(info.value)
    assert info.value.kind == {"status": f"http_{'5xx' if action[1:] == (500,) else 400}", "malformed": "malformed",
                               "hang": "timeout"}[action[0]]


async def test_trickling_endpoint_is_bounded_by_the_total_deadline(fake_server, by_id) -> None:
    # A valid reply dribbled out a byte every 50 ms for 6 s: every read succeeds at once, so only a
    # deadline on the whole attempt gives up. 1 s deadline, 1 retry: two attempts, then a timeout.
    srv = fake_server(default=("trickle", 6.0, 0.05)).start()
    a = agent(srv.base_url, timeout_s=1.0, retries=1)
    t0 = time.monotonic()
    with pytest.raises(EndpointError, match="timed out") as info:
        await a.respond(request(by_id["viral_uri"]))
    elapsed = time.monotonic() - t0
    await a.aclose()
    assert info.value.kind == "timeout" and len(srv.requests) == 2
    assert elapsed < 5.5, f"a 6 s trickle held the call {elapsed:.1f} s"  # sanity bound, not a speed target
    assert "--call-timeout" in str(info.value)


async def test_trickle_then_success_reuses_the_client(fake_server, by_id) -> None:
    # the attempt cut by the deadline must not leave the single-connection client stuck
    srv = fake_server(script=[("trickle", 6.0, 0.05)], default=("ok", "fine after all")).start()
    a = agent(srv.base_url, timeout_s=1.0, retries=1)
    assert (await a.respond(request(by_id["viral_uri"]))).text == "fine after all"
    assert (await a.respond(request(by_id["viral_uri"]))).text == "fine after all"
    await a.aclose()


async def test_a_slow_trickle_within_the_deadline_is_a_reply(fake_server, by_id) -> None:
    srv = fake_server(default=("trickle", 0.3, 0.01)).start()
    a = agent(srv.base_url, timeout_s=20.0)
    assert (await a.respond(request(by_id["viral_uri"]))).text == "A reply that took its time."
    await a.aclose()


MALFORMED = [
    pytest.param(("content", ""), "empty content", id="empty"),
    pytest.param(("content", "  \n\t "), "whitespace-only content", id="whitespace"),
    pytest.param(("content", None), "null content", id="null"),
    pytest.param(("content", 42), "content is int", id="number"),
    pytest.param(("content", {"text": "Hello"}), "content is dict", id="object"),
    pytest.param(("content", [{"type": "image_url", "image_url": {"url": "data:,"}}]), "without a text part",
                 id="parts-no-text"),
    pytest.param(("no_choices",), "no choices", id="no-choices"),
    pytest.param(("no_choices", []), "empty choices", id="empty-choices"),
    pytest.param(("no_choices", [{"index": 0}]), "no choices[0].message", id="no-message"),
    pytest.param(("length",), "empty content (cut at max_tokens", id="length-empty"),
    pytest.param(("tool_calls",), "tool calls but no text", id="tool-calls"),
    pytest.param(("error200", "The server had an error while processing your request."),
                 "an error object in a 200 reply: The server had an error", id="error-in-200"),
    pytest.param(("json", ["not", "an", "object"]), "JSON list, not an object", id="json-list"),
    pytest.param(("malformed",), "the body is not JSON", id="not-json"),
]


@pytest.mark.parametrize(("action", "why"), MALFORMED)
async def test_malformed_replies_are_retried_then_an_error(fake_server, by_id,
                                                           action: tuple, why: str) -> None:
    srv = fake_server(default=action).start()
    a = agent(srv.base_url, retries=2)
    with pytest.raises(EndpointError) as info:
        await a.respond(request(by_id["viral_uri"]))
    await a.aclose()
    assert len(srv.requests) == 3 and info.value.kind == "malformed" and not is_fatal(info.value)
    assert why in str(info.value) and "--model m" in str(info.value) and "\n" not in str(info.value)


async def test_malformed_then_a_good_reply(fake_server, by_id) -> None:
    srv = fake_server(script=[("content", ""), ("no_choices",), ("error200", "overloaded")],
                      default=("ok", "What brings you in today?")).start()
    a = agent(srv.base_url)
    assert (await a.respond(request(by_id["viral_uri"]))).text == "What brings you in today?"
    await a.aclose()
    assert len(srv.requests) == 4


async def test_content_parts_are_joined_and_cut_replies_with_text_are_kept(fake_server, by_id) -> None:
    parts = [{"type": "text", "text": "How long have you had the cough? "},
             {"type": "text", "text": "Any fever?"}]
    srv = fake_server(script=[("content", parts), ("length", "Assessment: likely a viral upper resp")]).start()
    a = agent(srv.base_url)
    assert (await a.respond(request(by_id["viral_uri"]))).text == "How long have you had the cough? Any fever?"
    assert (await a.respond(request(by_id["viral_uri"]))).text == "Assessment: likely a viral upper resp"
    await a.aclose()
    assert len(srv.requests) == 2


async def test_a_refusal_with_null_content_is_the_models_reply(fake_server, by_id) -> None:
    body = {"id": "c", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "content": None, "refusal": "I can't help with that request."}}]}
    srv = fake_server(default=("json", body)).start()
    a = agent(srv.base_url)
    assert (await a.respond(request(by_id["viral_uri"]))).text == "I can't help with that request."
    await a.aclose()


async def test_error_bodies_are_redacted_neutralised_and_one_line(fake_server, by_id,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENCSIM_TEST_KEY", SECRET)
    key = api_key_from_env("ENCSIM_TEST_KEY")  # registers the key for redaction
    echoed = json.dumps({"error": {"message": "invalid key",
                                   "request": {"headers": {"Authorization": f"Bearer {key}"}}}})
    hostile = ("\x1b]0;pwned\x07\x1b[2J\x1b[31mUnauthorized\x1b[0m\nretry later\r"
               "\x1b]8;;http://evil/\x1b\\x\x1b]8;;\x1b\\")
    srv = fake_server(script=[("status_body", 500, echoed)], default=("status_body", 401, hostile)).start()
    a = ChatCompletionsAgent(model="m", base_url=srv.base_url, api_key=key, backoff_base_s=0.01)
    with pytest.raises(EndpointError) as info:
        await a.respond(request(by_id["viral_uri"]))
    await a.aclose()
    message = str(info.value)
    assert SECRET not in message and "\x1b" not in message and "\n" not in message and "\r" not in message
    assert "Unauthorized" in message and "\\x1b" in message  # shown, made visible
    srv2 = fake_server(default=("status_body", 503, echoed)).start()
    b = ChatCompletionsAgent(model="m", base_url=srv2.base_url, api_key=key, backoff_base_s=0.01, retries=0)
    with pytest.raises(EndpointError) as info2:
        await b.respond(request(by_id["viral_uri"]))
    await b.aclose()
    assert "invalid key" in str(info2.value) and SECRET not in str(info2.value) and "[redacted]" in str(info2.value)


async def test_judge_client_uses_the_same_deadline_and_malformed_policy(fake_server) -> None:
    srv = fake_server(script=[("trickle", 6.0, 0.05), ("content", "")],
                      default=("ok", '{"met": true, "explanation": "asked about fever"}')).start()
    judge = JudgeClient(model="gpt-judge", base_url=srv.base_url, timeout_s=1.0, retries=1)
    judge._chat.backoff_base_s = 0.01
    data = await judge.ask_json([{"role": "user", "content": "grade"}], keys={"met": bool, "explanation": str})
    await judge.aclose()
    assert data == {"met": True, "explanation": "asked about fever"}
    # the cut trickle was retried by the transport; the empty reply was never accepted, and cost the judge one of
    # its own attempts (not transport retries on top of the judge's)
    assert len(srv.requests) == 3 and judge.calls == 2 and "empty content" in judge.failures[0]


async def test_only_a_schema_judge_sends_a_response_format(fake_server) -> None:
    """The embedded judge and patient model constrain replies with a schema built from the keys asked for (llama.cpp
    turns it into a grammar); a remote judge sends no response_format, which some endpoints reject."""
    srv = fake_server(default=("ok", '{"asks": true, "fact_ids": ["f1"]}')).start()
    plain = JudgeClient(model="gpt-judge", base_url=srv.base_url)
    schema = JudgeClient(model="smollm", base_url=srv.base_url, json_schema=True)
    keys = {"asks": bool, "fact_ids": list}
    for judge in (plain, schema):
        assert await judge.ask_json([{"role": "user", "content": "grade"}], keys=keys) == {"asks": True,
                                                                                          "fact_ids": ["f1"]}
        await judge.aclose()
    assert "response_format" not in srv.requests[0]
    assert srv.requests[1]["response_format"] == {
        "type": "json_object", "schema": {"type": "object", "properties": {"asks": {"type": "boolean"},
                                                                          "fact_ids": {"type": "array"}},
                                          "required": ["asks", "fact_ids"], "additionalProperties": False}}


async def test_a_key_of_list_dict_asks_for_an_array_of_objects(fake_server) -> None:
    """``list[dict]`` (a rubric's criteria): the schema says an array of objects, and an array of strings is not a
    conforming answer (the judge is asked to repair it)."""
    objects = '{"criteria": [{"criterion": "Asks about fever.", "points": 3}]}'
    srv = fake_server(script=[("ok", 'Here you go: {"criteria": ["asks about fever"]}'), ("ok", objects)]).start()
    judge = JudgeClient(model="smollm", base_url=srv.base_url, json_schema=True)
    data = await judge.ask_json([{"role": "user", "content": "write"}], keys={"criteria": list[dict[str, Any]]})
    await judge.aclose()
    assert data == {"criteria": [{"criterion": "Asks about fever.", "points": 3}]}
    assert len(srv.requests) == 2 and "not a valid answer" in srv.requests[1]["messages"][-1]["content"]
    assert srv.requests[0]["response_format"]["schema"]["properties"] == {
        "criteria": {"type": "array", "items": {"type": "object"}}}


def test_the_embedded_judge_and_patient_model_ask_for_a_schema() -> None:
    assert judge_from_ref(JudgeRef(name="local", family="smollm"), "http://127.0.0.1:9/v1").json_schema
    assert not judge_from_ref(JudgeRef(name="gpt", base_url="http://127.0.0.1:9/v1", family="openai"), None).json_schema


async def test_judge_errors_name_the_judge_flags(fake_server) -> None:
    srv = fake_server(default=("status", 401)).start()
    judge = JudgeClient(model="gpt-judge", base_url=srv.base_url, retries=0)
    assert await judge.ask_json([{"role": "user", "content": "grade"}], keys={"met": bool}) is None
    await judge.aclose()
    assert "--judge-api-key-env" in judge.failures[0] and "--api-key-env" not in judge.failures[0].replace(
        "--judge-api-key-env", "")


@pytest.mark.parametrize(("url", "why"), [
    ("http://", "has no host"),
    ("http://127.0.0.1:99999/v1", "port must be a number from 1 to 65535"),
    ("http://127.0.0.1:0/v1", "port must be a number from 1 to 65535"),
    ("http://127.0.0.1:eighty/v1", "port must be a number from 1 to 65535"),
    ("ftp://x", "must start with http:// or https://"),
    ("127.0.0.1:8000", "must start with http:// or https://"),
    ("http:/127.0.0.1/v1", "must start with http:// or https://"),
    ("http://127.0.0.1:8000/v1 ", "contains a space"),
    ("http://127.0.0.1:8000 /v1", "contains a space"),
    ("http://127.0.0.1:8000/v1\n", "contains a space or a control character"),
    ("", "is empty"),
    ("   ", "is empty"),
    ("http://[::1/v1", "not a valid URL"),
    ("http://127.0.0.1:8000/v1?api-version=2024-06-01", "must not carry a query"),
])
def test_base_url_validation(url: str, why: str) -> None:
    with pytest.raises(ConfigError, match="^--base-url") as info:
        check_base_url(url)
    assert why in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("url", ["http://u:pw-SECRET-123@127.0.0.1:1/v1", "http://pw-SECRET-123@127.0.0.1:1/v1",
                                 "https://:pw-SECRET-123@api.example.com/v1"])
def test_credentials_in_the_url_are_refused_without_echoing_them(url: str) -> None:
    with pytest.raises(ConfigError) as info:
        check_base_url(url, JUDGE_FLAGS)
    message = str(info.value)
    assert "pw-SECRET-123" not in message and "***@" in message
    assert message.startswith("--judge-base-url") and "--judge-api-key-env" in message
    assert "environment variable" in message


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/v1", "https://api.example.com/v1/", "http://[::1]:8080/v1",
                                 "HTTP://LOCALHOST:65535", "http://my-gpu-box.lan/openai/v1"])
def test_good_base_urls_pass(url: str) -> None:
    assert check_base_url(url) == url


@pytest.mark.parametrize("value", ["0", "-1", "abc", "nan", "inf", "", "1e400"])
def test_call_timeout_must_be_a_positive_number(value: str) -> None:
    with pytest.raises(ConfigError, match="^--call-timeout"):
        check_call_timeout(value)


def test_call_timeout_accepts_fractions() -> None:
    assert check_call_timeout("2.5") == 2.5 and check_call_timeout(30) == 30.0


def test_api_key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ENCSIM_TEST_KEY", raising=False)
    with pytest.raises(ConfigError, match="ENCSIM_TEST_KEY is not set") as info:
        api_key_from_env("ENCSIM_TEST_KEY")
    monkeypatch.setenv("ENCSIM_TEST_KEY", SECRET)
    assert api_key_from_env("ENCSIM_TEST_KEY") == SECRET
    assert SECRET not in str(info.value)
    assert redact(f"Authorization: Bearer {SECRET}") == "Authorization: Bearer [redacted]"  # registered on read


@pytest.mark.parametrize("bad", [f"{SECRET}\n", f" {SECRET}", f"{SECRET} extra", f"{SECRET}\x1b", f"{SECRET}é"])
def test_a_key_no_header_can_carry_is_refused_without_echoing_it(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    monkeypatch.setenv("ENCSIM_TEST_KEY", bad)
    with pytest.raises(ConfigError, match="--api-key-env ENCSIM_TEST_KEY: the key in ENCSIM_TEST_KEY") as info:
        api_key_from_env("ENCSIM_TEST_KEY")
    assert SECRET not in str(info.value)


def test_model_spec_validation() -> None:
    with pytest.raises(ConfigError, match="unknown scripted control"):
        check_model_spec("scripted:nobody", None, None)
    with pytest.raises(ConfigError, match="needs --base-url"):
        check_model_spec("gpt-x", None, None)
    with pytest.raises(ConfigError, match="cannot be combined with --model local"):
        check_model_spec("local", "http://127.0.0.1:1/v1", None)
    with pytest.raises(ConfigError, match="must start with http"):
        ChatCompletionsAgent(model="m", base_url="127.0.0.1:8000")


def test_judge_and_patient_clients_take_the_runs_call_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    from sim.agents.chat import PATIENT_FLAGS
    from sim.judges import judge_from_ref
    from sim.records import JudgeRef

    monkeypatch.setenv("ENCSIM_TEST_KEY", SECRET)
    ref = JudgeRef(name="gpt-4o", base_url="http://127.0.0.1:9/v1", api_key_env="ENCSIM_TEST_KEY", family="openai")
    assert judge_from_ref(ref, None)._chat.timeout_s == 60.0  # the judges' default without --call-timeout
    assert judge_from_ref(ref, None, timeout_s=12.5)._chat.timeout_s == 12.5
    local = JudgeRef(name="local", family="smollm")
    assert judge_from_ref(local, "http://127.0.0.1:9/v1", timeout_s=5)._chat.timeout_s == 120.0  # CPU model: never less
    patient = judge_from_ref(ref, None, timeout_s=7, flags=PATIENT_FLAGS)
    assert patient._chat.flags.base_url == "--patient-base-url" and patient._chat.timeout_s == 7


async def test_a_retry_after_a_malformed_reply_changes_the_seed(fake_server, by_id) -> None:
    """A seeded local model repeats an empty reply for the same seed, so retrying with it could never help:
    the retry after a malformed reply asks with seed + 1 (reproducible), other retries keep the seed."""
    srv = fake_server(script=[("content", ""), ("status", 500, {}), ("content", None)],
                      default=("ok", "Any fever?")).start()
    a = agent(srv.base_url)
    req = request(by_id["viral_uri"]).model_copy(update={"seed": 41})
    assert (await a.respond(req)).text == "Any fever?"
    await a.aclose()
    assert [r.get("seed") for r in srv.requests] == [41, 42, 42, 43]


async def test_a_call_hands_nothing_to_a_thread(fake_server, by_id) -> None:
    """aiohttp with trust_env looks up the proxy and ~/.netrc in a thread on every request: two thread hops per
    call, each taking the GIL back and forth with the event loop. The agent looks the proxy up once instead."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    class Counting(ThreadPoolExecutor):
        submitted = 0

        def submit(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            Counting.submitted += 1
            return super().submit(*args, **kwargs)

    srv = fake_server(default=("ok", "Any fever?")).start()
    a = agent(srv.base_url)
    executor = Counting(max_workers=2)
    asyncio.get_running_loop().set_default_executor(executor)
    try:
        replies = [await a.respond(request(by_id["viral_uri"])) for _ in range(20)]
    finally:
        await a.aclose()
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor())
        executor.shutdown()
    assert [r.text for r in replies] == ["Any fever?"] * 20 and len(srv.requests) == 20
    assert Counting.submitted == 0


async def test_the_proxy_from_the_environment_is_used_and_no_proxy_is_honoured(
        fake_server, by_id, monkeypatch: pytest.MonkeyPatch) -> None:
    """As with httpx before: HTTP_PROXY carries the call (the loopback server plays the proxy for a host that does
    not exist), and a host named in NO_PROXY is reached directly (here: it cannot be resolved). Unlike httpx,
    a loopback address is always reached directly."""
    for var in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY",
                "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    srv = fake_server(default=("ok", "Through the proxy.")).start()
    monkeypatch.setenv("HTTP_PROXY", srv.base_url.removesuffix("/v1"))
    proxied = agent("http://llm.invalid/v1")
    reply = await proxied.respond(request(by_id["viral_uri"]))
    await proxied.aclose()
    assert reply.text == "Through the proxy." and srv.headers_seen[0]["host"] == "llm.invalid"
    monkeypatch.setenv("NO_PROXY", "llm.invalid")
    direct = agent("http://llm.invalid/v1", retries=0)
    with pytest.raises(EndpointError) as err:
        await direct.respond(request(by_id["viral_uri"]))
    await direct.aclose()
    assert err.value.kind == "dns" and len(srv.requests) == 1
    # this machine's own address never goes through a proxy (the embedded model, a server on 127.0.0.1), even when
    # NO_PROXY does not name it: the proxy here is a port where nothing listens
    monkeypatch.delenv("NO_PROXY")
    from sim.agents.local import free_port
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{free_port()}")
    for url in (srv.base_url, srv.base_url.replace("127.0.0.1", "localhost")):
        local = agent(url, retries=0)
        assert (await local.respond(request(by_id["viral_uri"]))).text == "Through the proxy."
        await local.aclose()
    assert len(srv.requests) == 3
    # a proxy that cannot be reached is named in the error, with the way around it
    proxied = agent("http://llm.invalid/v1", retries=0)
    with pytest.raises(EndpointError) as err:
        await proxied.respond(request(by_id["viral_uri"]))
    await proxied.aclose()
    assert err.value.kind == "connection_refused" and "through the proxy http://127.0.0.1:" in str(err.value)
    assert "add llm.invalid to NO_PROXY" in str(err.value)


def test_one_agent_serves_one_asyncio_run_after_another_quietly(fake_server, by_id,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    """A session belongs to the event loop that made it: a second asyncio.run gets a new one, and the first
    (its loop closed) is dropped without aiohttp's "Unclosed client session" on stderr."""
    import asyncio
    import gc

    srv = fake_server(default=("ok", "Again?")).start()
    a = agent(srv.base_url)
    first = asyncio.run(a.respond(request(by_id["viral_uri"])))

    async def second() -> Any:
        try:
            return await a.respond(request(by_id["viral_uri"]))
        finally:
            await a.aclose()

    again = asyncio.run(second())
    gc.collect()
    assert first.text == again.text == "Again?" and len(srv.requests) == 2
    assert not [r for r in caplog.records if "Unclosed" in r.getMessage()]


async def test_an_https_endpoint_is_verified_against_ssl_cert_file(
        fake_server, by_id, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real TLS handshake on loopback (tests/data/tls: a test-only CA and a certificate for 127.0.0.1): trusted
    through SSL_CERT_FILE, as httpx's CA handling did, the call succeeds and the key travels encrypted; without
    that CA the certificate is refused as a ``tls`` error naming the flag, and nothing reaches the server."""
    from pathlib import Path

    tls_dir = Path(__file__).resolve().parent.parent / "data" / "tls"  # noqa: ASYNC240
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(tls_dir / "server.pem", tls_dir / "server.key")
    srv = fake_server(default=("ok", "Over TLS."), tls=server_ctx).start()
    assert srv.base_url.startswith("https://127.0.0.1:")
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.setenv("SSL_CERT_FILE", str(tls_dir / "ca.pem"))
    trusted = agent(srv.base_url)
    # two calls: the second on the kept-alive TLS connection
    replies = [await trusted.respond(request(by_id["viral_uri"])) for _ in range(2)]
    await trusted.aclose()
    assert [r.text for r in replies] == ["Over TLS."] * 2
    assert srv.headers_seen[0]["authorization"] == f"Bearer {SECRET}"

    monkeypatch.delenv("SSL_CERT_FILE")
    untrusted = agent(srv.base_url, retries=0)
    with pytest.raises(EndpointError) as err:
        await untrusted.respond(request(by_id["viral_uri"]))
    await untrusted.aclose()
    assert err.value.kind == "tls" and "--base-url" in str(err.value) and SECRET not in str(err.value)
    assert len(srv.requests) == 2
