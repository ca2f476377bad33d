"""The key-encoding fuzzer (issue 36): a key echoed by a server in any encoding it can plausibly use never reaches a
file or a stream.

Encodings: JSON ``\\uXXXX`` of any subset of the characters (either case of hex, once or escaped again), URL
``%XX`` of any subset, HTML numeric references of any subset, a per-character mixture of all of those and ``\\xHH``,
hex (either case, bare, separated, ``\\x``/``0x``), base64 and base64url behind 0-2 bytes of anything, reversed (raw,
escaped, hex), and cut after most of the key. Each is embedded in JSON, an HTTP header echo, HTML or prose.

Not covered: a key that itself holds a backslash, escaped in part and then JSON-escaped again. There four backslashes
before a ``u`` are the key's backslash and an escape, and two are an escape alone, which a reader that does not know
how many times the text was escaped cannot tell apart. API keys hold no backslash (the special key here does).

Two levels: ``redact`` itself over hundreds of random encodings of three keys (one with every character an escaping
changes), and real runs whose server echoes the key in each encoding, in 200 replies and in error bodies, with
``--fail-fast 0`` in process and with ``--processes 2`` in a subprocess (worker processes, their stderr); every
file of the run directory, stdout, stderr and a later ``encsim report`` are checked.
"""

from __future__ import annotations

import base64
import html
import json
import os
import random
import subprocess
import sys
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sim.records import forget_secrets, redact, register_secret
from tests.adversarial.conftest import ROOT, SECRET, encsim_in_process, files_under
from tests.fakeserver import FakeChatServer

SPECIAL = 'sk-live/9f+8e=7d"6c\\5b&4a~Zq'  # characters that JSON, URL and HTML escaping all change
RANDOM = "".join(random.Random(36).choices("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-", k=40))
KEYS = [SECRET, SPECIAL, "sk-proj-" + RANDOM]
WINDOW = 16  # no 16 characters in a row of an encoded key may survive


def _u(c: str, rng: random.Random) -> str:
    code = f"{ord(c):04x}"
    return "\\u" + (code.upper() if rng.random() < 0.5 else code)


def _pct(c: str, rng: random.Random) -> str:
    code = f"{ord(c):02x}"
    return "%" + (code.upper() if rng.random() < 0.5 else code)


def _ref(c: str, rng: random.Random) -> str:
    return f"&#{ord(c)};" if rng.random() < 0.5 else f"&#x{ord(c):x};"


def _subset(key: str, rng: random.Random, one: Callable[[str, random.Random], str]) -> str:
    """``key`` with a random non-empty subset of its characters encoded by ``one``."""
    chosen = set(rng.sample(range(len(key)), rng.randint(1, len(key))))
    return "".join(one(c, rng) if i in chosen else c for i, c in enumerate(key))


def _mixture(key: str, rng: random.Random) -> str:
    ways: list[Callable[[str, random.Random], str]] = [
        lambda c, r: c, _u, _pct, _ref, lambda c, r: f"\\x{ord(c):02x}"]
    return "".join(rng.choice(ways)(c, rng) for c in key)


def _json_once(text: str) -> str:
    return json.dumps(text)[1:-1]


def _hex(data: bytes, rng: random.Random) -> str:
    sep = rng.choice(["", " ", ":", "-", ", "])
    pieces = [f"{b:02x}" for b in data]
    if rng.random() < 0.5:
        pieces = [p.upper() for p in pieces]
    style = rng.choice(["bare", "bare", "\\x", "0x"])
    if style != "bare":
        pieces = [style + p for p in pieces]
        sep = "" if style == "\\x" else sep
    return sep.join(pieces)


def _b64(key: str, rng: random.Random) -> str:
    blob = bytes(rng.randrange(256) for _ in range(rng.randint(0, 2))) + key.encode() + b'"}'
    coded = (base64.b64encode if rng.random() < 0.5 else base64.urlsafe_b64encode)(blob).decode()
    return coded.rstrip("=")


ENCODINGS: dict[str, Callable[[str, random.Random], str]] = {
    "raw": lambda k, r: k,
    "json_u_subset": lambda k, r: _subset(k, r, _u),
    "json_u_subset_twice": lambda k, r: _json_once(_subset(k, r, _u)),
    "json_u_all": lambda k, r: "".join(_u(c, r) for c in k),
    "json_ascii_twice": lambda k, r: _json_once(json.dumps(k)),
    "url_subset": lambda k, r: _subset(k, r, _pct),
    "url_all": lambda k, r: urllib.parse.quote(k, safe=""),
    "url_plus": lambda k, r: urllib.parse.quote_plus(k),
    "html_subset": lambda k, r: _subset(k, r, _ref),
    "html_escape": lambda k, r: html.escape(k),
    "mixture": _mixture,
    "mixture_twice": lambda k, r: _json_once(_mixture(k, r)),
    "hex": lambda k, r: _hex(k.encode(), r),
    "base64": _b64,
    "basic_auth": lambda k, r: base64.b64encode(f"{r.choice(['bob', 'svc-account', ''])}:{k}".encode()).decode(),
    "reversed": lambda k, r: k[::-1],
    "reversed_json_u": lambda k, r: _subset(k[::-1], r, _u),
    "reversed_hex": lambda k, r: _hex(k.encode()[::-1], r),
    "cut": lambda k, r: _subset(k[: int(len(k) * r.uniform(0.6, 0.9))], r, _u) if r.random() < 0.5
    else k[: int(len(k) * r.uniform(0.6, 0.9))],
}
SURROUNDINGS = [
    ('{"headers": {"authorization": "Bearer ', '", "x": 1}}'),
    ("Authorization: Bearer ", "\r\nHost: api.example\r\n"),
    ("<td>key=", "</td>"),
    ("We could not verify the key ", ". Check it and try again."),
    ("", ""),
]


def encoded(key: str, name: str, seed: int) -> str:
    return ENCODINGS[name](key, random.Random(f"{key}|{name}|{seed}"))


B64 = {"base64", "basic_auth"}  # what precedes the key in the blob (a user name, random bytes) may stay


def b64_reveals(key: str, text: str) -> bool:
    """Whether any run of base64 characters in ``text``, decoded from any offset, holds 12 characters of ``key``."""
    import re

    for run in re.findall(r"[A-Za-z0-9+/_-]{16,}", text):
        for skip in range(4):
            chunk = run[skip:]
            chunk = chunk[: len(chunk) // 4 * 4].replace("-", "+").replace("_", "/")
            data = base64.b64decode(chunk + "==", validate=False).decode("latin-1")
            if any(key[i:i + 12] in data for i in range(len(key) - 11)):
                return True
    return False


def survivors(form: str, text: str) -> list[str]:
    """The stretches of ``form`` (at least WINDOW long, or all of a shorter form) still in ``text``."""
    if len(form) <= WINDOW:
        return [form] if form in text else []
    return [form[i:i + WINDOW] for i in range(len(form) - WINDOW + 1) if form[i:i + WINDOW] in text]


@pytest.fixture
def keys() -> Any:
    forget_secrets()
    for key in KEYS:
        register_secret(key)
    yield KEYS
    forget_secrets()


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_redact_removes_every_encoding_of_the_key(name: str, keys: list[str]) -> None:
    for key in keys:
        if "\\" in key and name.endswith("_twice"):
            continue  # a backslash of the key's own, next to an escape, escaped twice: see the module docstring
        for seed in range(25):
            form = encoded(key, name, seed)
            before, after = SURROUNDINGS[seed % len(SURROUNDINGS)]
            out = redact(before + form + after)
            assert "[redacted]" in out, (key, form)
            if name in B64:
                assert form not in out and not b64_reveals(key, out), (key, form, out)
            else:
                assert not survivors(form, out), (key, form, out)
            assert not survivors(key, out) and not survivors(key[::-1], out), (key, form, out)
            # what surrounds the key is kept (the report stays readable): allow for a character or two taken with it
            assert out.startswith(before[:-2]) and out.endswith(after[2:]), (form, out)


def test_ordinary_text_is_left_alone(keys: list[str]) -> None:
    """Escapes, hex and percent signs that are not a key stay as they are."""
    texts = ["Temp 38.5 \\u00b0C, 100% sure; caf\\u00e9 &amp; tea &#8212; 0xFF 12:34:56:78 de:ad:be:ef",
             json.dumps({"reply": 'She said "it hurts" \\ here', "hex": "00112233445566778899aabbccddeeff"}),
             base64.b64encode(b"not a key at all, just text of some length").decode(),
             "sk-live-but-not-the-key-1234567890"]
    for text in texts:
        assert redact(text) == text


class EchoingServer(FakeChatServer):
    """Answers request ``i`` with encoding ``i`` of the key it was sent: a 200 reply, or an error body."""

    def __init__(self, forms: list[tuple[str, str]], *, status: int | None) -> None:
        super().__init__(default=("ok", "unused"))
        self.forms = forms
        self.status = status
        self.served = 0
        self.error_body = b""

    def _next(self) -> tuple[Any, ...]:
        with self._lock:
            form = self.forms[self.served % len(self.forms)]
            self.served += 1
        if self.status is None:
            return ("ok", f"Thanks. When did it start? (debug: auth {form[1]})")
        self.error_body = json.dumps({"error": {"message": f"Invalid Authorization header: Bearer {form[1]}",
                                                "echo": form[1]}}).encode()
        return ("status", self.status, {})

    def _write(self, writer: Any, status: int, body: bytes, headers: dict[str, str]) -> None:
        if status != 200:
            body, headers = self.error_body, {**headers, "content-type": "application/json"}
        FakeChatServer._write(writer, status, body, headers)


def _forms(key: str) -> list[tuple[str, str]]:
    """(encoding, encoded key) pairs, each encoding twice with different random choices."""
    return [(name, encoded(key, name, seed)) for seed in range(2) for name in sorted(ENCODINGS)]


def _assert_nowhere(key: str, forms: list[tuple[str, str]], texts: dict[str, str]) -> None:
    for where, text in texts.items():
        assert not survivors(key, text), f"key {key!r} in {where}"
        assert not b64_reveals(key, text), f"key {key!r} in base64 in {where}"
        for name, form in forms:
            if name in B64:
                assert form not in text, f"{form!r} (key {key!r}) in {where}"
            else:
                assert not survivors(form, text), f"{form!r} (key {key!r}) in {where}"


def _run_dir_texts(run: Path) -> dict[str, str]:
    return {str(p): p.read_bytes().decode("utf-8", "replace") for p in files_under(run)}


@pytest.mark.parametrize("status", [None, 401, 422], ids=["reply", "error_401", "error_422"])
def test_a_run_whose_server_echoes_the_key_in_every_encoding_keeps_it_out(status: int | None, tmp_path: Path) -> None:
    """In process, --fail-fast 0: every encoding is served once per key (replies: one per agent turn; errors: one
    per encounter); then `encsim report` in a process that has forgotten the key."""
    key = SPECIAL
    forms = _forms(key)
    server = EchoingServer(forms, status=status).start()
    forget_secrets()
    out = tmp_path / "run"
    k = "6" if status is None else str(len(forms))
    try:
        done = encsim_in_process("run", "--model", "m", "--base-url", server.base_url, "--api-key-env", "FUZZ_KEY",
                                 "--scenarios", "viral_uri", "--k", k, "--max-turns", "8", "--fail-fast", "0",
                                 "--concurrency", "4", "--out", str(out), "--no-progress", env={"FUZZ_KEY": key})
    finally:
        server.stop()
    assert server.served >= len(forms), server.served  # every encoding was sent back at least once
    assert server.headers_seen[0]["authorization"] == f"Bearer {key}"
    assert done.code == (0 if status is None else 3), done.output[-2000:]
    assert "Traceback" not in done.output
    _assert_nowhere(key, forms, {"stdout": done.stdout, "stderr": done.stderr, **_run_dir_texts(out)})
    assert "[redacted]" in (out / "results.jsonl").read_text(encoding="utf-8")
    forget_secrets()
    report = encsim_in_process("report", str(out), env={"FUZZ_KEY": key})
    assert report.code == 0, report.output[-2000:]
    _assert_nowhere(key, forms, {"report stdout": report.stdout, "report stderr": report.stderr,
                                 **_run_dir_texts(out)})
    forget_secrets()


@pytest.mark.slow
def test_worker_processes_write_and_print_no_encoding_of_the_key(tmp_path: Path) -> None:
    """--processes 2 with fail-fast on, in a subprocess: the workers' own stderr is checked too."""
    key = SECRET
    forms = _forms(key)
    server = EchoingServer(forms, status=400).start()
    out = tmp_path / "run"
    env = {**os.environ, "FUZZ_KEY": key, "PYTHONPATH": str(ROOT)}
    try:
        done = subprocess.run([sys.executable, "-m", "sim.cli", "run", "--model", "m", "--base-url", server.base_url,
                               "--api-key-env", "FUZZ_KEY", "--scenarios", "viral_uri,acs_chest_pain", "--k", "20",
                               "--processes", "2", "--out", str(out), "--no-progress"],
                              env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    finally:
        server.stop()
    assert server.served >= 2
    assert done.returncode in (2, 3) and "Traceback" not in done.stdout + done.stderr, done.stderr[-2000:]
    _assert_nowhere(key, forms[:server.served], {"stdout": done.stdout, "stderr": done.stderr,
                                                 **_run_dir_texts(out)})
