"""Red-team cases for the endpoint client (issue 14): hostile or broken OpenAI-compatible endpoints and
bad endpoint flags, each run through ``encsim run`` in-process against the loopback fault server.

Every case ends the way a user can act on: an errored encounter (exit 3, results.jsonl status
"error", never scored) naming the flag to fix, a scored encounter (exit 0) for replies that are
odd but valid, or a one-paragraph error (exit 2) for a bad flag; never a traceback, and never the
key (ENCSIM_TEST_KEY) in any form in the output or the run directory.

The retry backoff (random, up to 0.5 * 2**n s) is patched to zero to keep the file fast; timeouts
use ``--call-timeout 0.5``.
"""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sim.agents.chat import ChatCompletionsAgent
from tests.adversarial.conftest import SECRET, Outcome, assert_clean, encsim_in_process
from tests.fakeserver import FakeChatServer

ENV = {"ENCSIM_TEST_KEY": SECRET}
ESC = "\x1b"


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ChatCompletionsAgent, "_backoff", lambda self, attempt: 0.0)


@pytest.fixture
def server() -> Iterator[list[FakeChatServer]]:
    made: list[FakeChatServer] = []
    yield made
    for s in made:
        s.stop()


def run(base_url: str, out: Path, *extra: str) -> Outcome:
    return encsim_in_process("run", "--model", "m", "--base-url", base_url, "--api-key-env", "ENCSIM_TEST_KEY",
                             "--scenarios", "viral_uri", "--k", "1", "--max-turns", "2", "--out", str(out),
                             "--no-progress", *extra, env=ENV)


def results(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def closed_port() -> int:
    """A port bound and closed again: nothing listens there (connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


HOSTILE = (f"{ESC}]0;encsim pwned{ESC}\\{ESC}[2J{ESC}[1;31mInvalid API key{ESC}[0m\r\n"
           f"{ESC}]8;;https://evil.example/{ESC}\\click{ESC}]8;;{ESC}\\ \x07\x08\x9b2J")
ECHO_HEADERS = json.dumps({"error": {"message": "upstream rejected the request", "type": "server_error",
                                     "request": {"headers": {"Authorization": f"Bearer {SECRET}",
                                                             "x-key": json.dumps(SECRET)}}}})
ECHO_BASIC = ("<html><body>401: bad credentials for Basic "
              + base64.b64encode(f"u:{SECRET}".encode()).decode() + " and :"
              + base64.b64encode(f":{SECRET}".encode()).decode() + "</body></html>")
ERROR_PAGE = ("<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n<body><center><h1>502 Bad "
              "Gateway</h1></center>\n<hr><center>nginx/1.25.3</center>\n</body>\n</html>\n")

# (id, fault server script default, extra flags, requests expected (None: not checked), names in the output)
ERRORED: list[tuple[str, tuple[Any, ...], tuple[str, ...], int | None, tuple[str, ...]]] = [
    ("empty-content", ("content", ""), (), 4, ("malformed response (empty content)", "--model m")),
    ("whitespace-content", ("content", " \n\t "), (), 4, ("whitespace-only content",)),
    ("null-content", ("content", None), (), 4, ("null content", "--base-url")),
    ("number-content", ("content", 7), (), 4, ("content is int",)),
    ("parts-without-text", ("content", [{"type": "image_url", "image_url": {"url": "data:,"}}]), (), 4,
     ("content parts without a text part",)),
    ("no-choices", ("no_choices",), (), 4, ("no choices",)),
    ("empty-choices", ("no_choices", []), (), 4, ("empty choices",)),
    ("length-no-text", ("length",), (), 4, ("cut at max_tokens",)),
    ("tool-calls-no-text", ("tool_calls",), (), 4, ("tool calls but no text",)),
    ("error-in-200", ("error200", "The server had an error while processing your request."), (), 4,
     ("an error object in a 200 reply", "The server had an error")),
    ("error-in-200-hostile", ("error200", f"{HOSTILE} key {SECRET}"), (), 4, ("Invalid API key",)),
    ("not-json", ("malformed",), (), 4, ("the body is not JSON",)),
    ("json-list", ("json", [{"choices": []}]), (), 4, ("JSON list, not an object",)),
    ("http-500", ("status", 500), (), 4, ("HTTP 500", "see its logs")),
    ("http-502-html", ("status_body", 502, ERROR_PAGE), (), 4, ("HTTP 502", "502 Bad Gateway")),
    ("http-429", ("status", 429), (), 4, ("HTTP 429", "rate-limiting")),
    ("http-400", ("status", 400), (), 1, ("HTTP 400",)),
    ("http-302", ("status_body", 302, "", {"location": "https://login.example.com/sso"}), (), 1,
     ("redirects", "login.example.com", "--base-url")),
    ("500-echoes-authorization", ("status_body", 500, ECHO_HEADERS), (), 4, ("upstream rejected", "[redacted]")),
    ("403-ansi-osc-body-fail-fast-off", ("status_body", 403, HOSTILE), ("--fail-fast", "0"), 1,
     ("Invalid API key", "--api-key-env")),
    ("401-echoes-basic-auth-fail-fast-off", ("status_body", 401, ECHO_BASIC), ("--fail-fast", "0"), 1,
     ("bad credentials", "[redacted]")),
    ("401-fail-fast-off", ("status", 401), ("--fail-fast", "0"), 1, ("HTTP 401", "Check the key in --api-key-env")),
    ("404-fail-fast-off", ("status", 404), ("--fail-fast", "0"), 1, ("HTTP 404", "Check --model m", "/v1")),
    ("hang", ("hang", 5), ("--call-timeout", "0.5"), 4, ("timed out", "--call-timeout")),
    ("trickle", ("trickle", 6.0, 0.05), ("--call-timeout", "0.5"), 4, ("timed out", "--call-timeout")),
    ("dropped-connection", ("drop",), (), 4, ("connection failed", "--base-url")),
]

SCORED: list[tuple[str, tuple[Any, ...], str]] = [
    ("content-parts", ("content", [{"type": "text", "text": "How long have you had the cough? "},
                                   {"type": "text", "text": "Any fever or shortness of breath?"}]),
     "How long have you had the cough? Any fever or shortness of breath?"),
    ("length-with-text", ("length", "How long have you had the sore throat, and have you had a fever or"),
     "How long have you had the sore throat, and have you had a fever or"),
    ("refusal", ("json", {"id": "c", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop",
                          "message": {"role": "assistant", "content": None,
                                      "refusal": "I can't provide medical advice."}}]}),
     "I can't provide medical advice."),
    ("reflects-authorization", ("reflect",), "authorization"),
]


@pytest.mark.parametrize(("action", "extra", "requests", "names"), [pytest.param(*c[1:], id=c[0]) for c in ERRORED])
def test_broken_endpoint_is_an_errored_encounter(server: list[FakeChatServer], tmp_path: Path, action: tuple[Any, ...],
                                                 extra: tuple[str, ...], requests: int | None,
                                                 names: tuple[str, ...]) -> None:
    srv = FakeChatServer(default=action).start()
    server.append(srv)
    out = tmp_path / "r"
    outcome = run(srv.base_url, out, *extra)
    assert_clean(outcome, code=3, names=names, run_dirs=(out,))
    assert ESC not in outcome.output and "\x07" not in outcome.output and "\x9b" not in outcome.output
    (record,) = results(out)
    assert record["status"] == "error" and record["score"] is None  # never scored
    if requests is not None:
        assert len(srv.requests) == requests  # 1 + 3 retries for transient causes, 1 for a refusal


@pytest.mark.parametrize(("action", "first_reply"), [pytest.param(*c[1:], id=c[0]) for c in SCORED])
def test_odd_but_valid_replies_are_scored(server: list[FakeChatServer], tmp_path: Path, action: tuple[Any, ...],
                                          first_reply: str) -> None:
    srv = FakeChatServer(default=action).start()
    server.append(srv)
    out = tmp_path / "r"
    outcome = run(srv.base_url, out)
    assert_clean(outcome, code=0, run_dirs=(out,))
    (record,) = results(out)
    assert record["status"] == "ok" and record["score"] is not None
    agent_turns = [t["text"] for t in record["result"]["turns"] if t["speaker"] == "agent"]
    assert first_reply in agent_turns[0]


# Fatal causes (sim.agents.chat.FATAL_KINDS): the runner's fail-fast check stops the run (exit 2) naming the flag.
FATAL: list[tuple[str, tuple[Any, ...] | None, tuple[str, ...]]] = [
    ("http-401", ("status", 401), ("--api-key-env ENCSIM_TEST_KEY", "HTTP 401")),
    ("http-403", ("status", 403), ("--api-key-env ENCSIM_TEST_KEY", "HTTP 403")),
    ("http-404", ("status", 404), ("--model m", "HTTP 404")),
    ("401-ansi-osc-body", ("status_body", 401, HOSTILE), ("--api-key-env ENCSIM_TEST_KEY",)),
    ("401-echoes-basic-auth", ("status_body", 401, ECHO_BASIC), ("--api-key-env ENCSIM_TEST_KEY",)),
    ("connection-refused", None, ("connection refused", "--base-url")),
]


@pytest.mark.parametrize(("action", "names"), [pytest.param(*c[1:], id=c[0]) for c in FATAL])
def test_fatal_endpoint_stops_the_run_naming_the_flag(server: list[FakeChatServer], tmp_path: Path,
                                                      action: tuple[Any, ...] | None, names: tuple[str, ...]) -> None:
    if action is None:
        url = f"http://127.0.0.1:{closed_port()}/v1"
    else:
        srv = FakeChatServer(default=action).start()
        server.append(srv)
        url = srv.base_url
    out = tmp_path / "r"
    outcome = run(url, out)
    assert_clean(outcome, code=2, names=names, run_dirs=(out,))
    assert ESC not in outcome.output


def test_refused_connection_is_retried_then_names_base_url(tmp_path: Path) -> None:
    out = tmp_path / "r"
    outcome = run(f"http://127.0.0.1:{closed_port()}/v1", out, "--fail-fast", "0")
    assert_clean(outcome, code=3, names=("failed after 4 attempts", "connection refused",
                                         "check the server is running", "--base-url"), run_dirs=(out,))
    assert results(out)[0]["status"] == "error"


def test_unknown_host_names_the_host(tmp_path: Path) -> None:
    out = tmp_path / "r"
    outcome = run("http://encsim-no-such-host.invalid/v1", out, "--call-timeout", "10", "--fail-fast", "0")
    assert_clean(outcome, code=3, names=("encsim-no-such-host.invalid could not be resolved", "--base-url"),
                 run_dirs=(out,))


UNREGISTERED = "pw-Unregistered-7c1d2e"  # a password in a URL: never registered, so only masking hides it

BAD_FLAGS: list[tuple[str, tuple[str, ...], tuple[str, ...], str | None]] = [
    ("no-host", ("--base-url", "http://"), ("--base-url", "has no host"), None),
    ("port-out-of-range", ("--base-url", "http://127.0.0.1:99999/v1"), ("--base-url", "1 to 65535"), None),
    ("ftp", ("--base-url", "ftp://x"), ("--base-url", "http://"), None),
    ("user-and-password", ("--base-url", f"http://u:{UNREGISTERED}@127.0.0.1:1/v1"),
     ("--base-url", "@127.0.0.1:1/v1", "--api-key-env", "environment variable"), UNREGISTERED),
    ("key-as-user", ("--base-url", f"http://{UNREGISTERED}@127.0.0.1:1/v1"), ("--base-url", "credentials"),
     UNREGISTERED),
    ("space-inside", ("--base-url", "http://127.0.0.1:8000 /v1"), ("--base-url", "space"), None),
    ("leading-space", ("--base-url", " http://127.0.0.1:8000/v1"), ("--base-url", "space"), None),
    ("empty", ("--base-url", ""), ("--base-url", "empty"), None),
    ("query-with-key", ("--base-url", f"http://127.0.0.1:8000/v1?key={UNREGISTERED}"), ("--base-url", "query"),
     UNREGISTERED),
    ("judge-url", ("--base-url", "http://127.0.0.1:1/v1", "--judge", "gpt-4o", "--judge-base-url",
                   f"https://u:{UNREGISTERED}@judge.example.com/v1"),
     ("--judge-base-url", "@judge.example.com", "--judge-api-key-env"), UNREGISTERED),
    ("judge-port", ("--base-url", "http://127.0.0.1:1/v1", "--judge", "gpt-4o", "--judge-base-url",
                    "http://127.0.0.1:70000/v1"), ("--judge-base-url", "1 to 65535"), None),
    ("patient-url", ("--base-url", "http://127.0.0.1:1/v1", "--patient-model", "gpt-4o-mini", "--patient-base-url",
                     "http://"), ("--patient-base-url", "has no host"), None),
    ("timeout-zero", ("--base-url", "http://127.0.0.1:1/v1", "--call-timeout", "0"), ("--call-timeout",), None),
    ("timeout-negative", ("--base-url", "http://127.0.0.1:1/v1", "--call-timeout", "-5"), ("--call-timeout",), None),
    ("timeout-word", ("--base-url", "http://127.0.0.1:1/v1", "--call-timeout", "thirty"), ("--call-timeout",), None),
    ("timeout-nan", ("--base-url", "http://127.0.0.1:1/v1", "--call-timeout", "nan"), ("--call-timeout",), None),
]


@pytest.mark.parametrize(("flags", "names", "secret"), [pytest.param(*c[1:], id=c[0]) for c in BAD_FLAGS])
def test_bad_endpoint_flags_are_one_paragraph_errors(tmp_path: Path, flags: tuple[str, ...], names: tuple[str, ...],
                                                     secret: str | None) -> None:
    out = tmp_path / "r"
    outcome = encsim_in_process("run", "--model", "m", "--api-key-env", "ENCSIM_TEST_KEY", "--scenarios", "viral_uri",
                                "--k", "1", "--out", str(out), *flags, env=ENV)
    assert_clean(outcome, code=2, names=names, run_dirs=(out,))
    if secret is not None:
        assert_clean(outcome, code=2, secret=secret)
    assert outcome.stderr.startswith("error: ") and outcome.stderr.count("\n") == 1  # one paragraph
    assert not out.exists()  # refused before a run directory was made


def test_resume_keeps_the_call_timeout(server: list[FakeChatServer], tmp_path: Path) -> None:
    # A reply that takes ~2 s to trickle out: over the run's --call-timeout of 0.5 s, well within the default 30 s.
    srv = FakeChatServer(default=("trickle", 2.0, 0.05)).start()
    server.append(srv)
    out = tmp_path / "r"
    first = run(srv.base_url, out, "--call-timeout", "0.5")
    assert_clean(first, code=3, names=("timed out", "--call-timeout"), run_dirs=(out,))
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["call_timeout_s"] == 0.5
    resumed = encsim_in_process("run", "--resume", str(out), "--retry-errors", "--no-progress", env=ENV)
    assert_clean(resumed, code=3, names=("no complete reply within 0.5 s",), run_dirs=(out,))
