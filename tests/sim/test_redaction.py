"""sim.records redaction: every form a key can leak in, URL userinfo, and escape sequences made visible (issue 14)."""

from __future__ import annotations

import base64
import html
import json
import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from sim.records import (
    REDACTED,
    clean,
    display_json,
    forget_secrets,
    neutralise,
    one_line,
    redact,
    redact_json,
    redact_obj,
    redact_url,
    register_env,
    register_secret,
)

KEY = "sk-proj-T3Blbk/FJ+a9Xq2=Lm\"w\\Zr8v"  # characters that JSON, URL, HTML and base64 all change
PLAIN = "sk-test-SECRET-9f8e7d6c5b4a"


@pytest.fixture(autouse=True)
def _secrets() -> Iterator[None]:
    forget_secrets()
    register_secret(KEY)
    register_secret(PLAIN)
    yield
    forget_secrets()


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


LEAKS = {
    "raw in prose": f"Your key {KEY} was rejected.",
    "JSON-escaped header echo": json.dumps({"headers": {"authorization": f"Bearer {KEY}"}}),
    "JSON inside a JSON string": json.dumps({"detail": json.dumps({"authorization": KEY})}),
    "non-ASCII-escaped JSON": json.dumps({"k": KEY + "é"}),
    "PHP-style escaped slashes": json.dumps({"k": KEY}).replace("/", "\\/"),
    "URL-escaped query": f"GET /v1/models?api_key={urllib.parse.quote(KEY, safe='')}",
    "URL quote_plus": f"key={urllib.parse.quote_plus(KEY)}&x=1",
    "URL lower-case hex": "key=" + re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(),
                                          urllib.parse.quote(KEY, safe="")),
    "HTML-escaped": f"<td>{html.escape(KEY)}</td>",
    "base64 alone": f"token {b64(KEY)}",
    "Basic auth, usual user": f"Authorization: Basic {b64('user:' + KEY)}",
    "Basic auth, any user": f"Authorization: Basic {b64('dr.jane.doe@st-elsewhere.org:' + KEY)}",
    "base64 of a whole JSON body": b64(json.dumps({"model": "m", "api_key": KEY, "messages": []})),
    "urlsafe base64": base64.urlsafe_b64encode(f"x{KEY}yz".encode()).decode(),
    "key cut by a length limit": f"HTTP 401: invalid key {KEY[:17]}...",
}


@pytest.mark.parametrize("text", list(LEAKS.values()), ids=list(LEAKS))
def test_every_form_of_the_key_is_redacted(text: str) -> None:
    out = redact(text)
    assert REDACTED in out
    for piece in (KEY, KEY[:14], json.dumps(KEY)[1:15], urllib.parse.quote(KEY, safe="")[:14]):
        assert piece not in out
    decoded_ok = True
    for token in out.replace("[redacted]", " ").split():
        try:  # what is left of a base64 blob no longer decodes to the key
            decoded_ok = KEY[:8] not in base64.b64decode(token + "==", validate=False).decode("latin-1")
        except ValueError:
            pass
        assert decoded_ok, token


def test_plain_text_and_near_misses_are_left_alone() -> None:
    text = ("The patient, 58, reports crushing chest pain; sk-proj-T3B is not a key, nor is sk-test-. "
            "Call 999 now. https://example.org/path?q=1 and jane@example.org")
    assert redact(text) == text
    assert redact("") == "" and neutralise("") == ""


def test_cut_key_is_redacted_to_where_it_stops_matching() -> None:
    assert redact(f"x{PLAIN[:16]}Z tail") == f"x{REDACTED}Z tail"
    assert redact(f"{PLAIN}{PLAIN}") == REDACTED + REDACTED
    assert redact(PLAIN[:11]) == PLAIN[:11]  # too little of the key to tell it from ordinary text


def test_register_env_and_short_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    forget_secrets()
    monkeypatch.setenv("SOME_PROVIDER_KEY", "gsk_live_abcdef0123456789")
    register_env("SOME_PROVIDER_KEY")
    register_env("NOT_SET_ANYWHERE")
    register_env(None)
    register_secret("abc")  # too short to tell from a word: ignored
    assert redact("key gsk_live_abcdef0123456789 and abc") == f"key {REDACTED} and abc"


def test_url_userinfo_is_redacted_registered_or_not() -> None:
    forget_secrets()
    assert redact_url("https://alice:hunter2@api.example.com/v1") == "https://[redacted]@api.example.com/v1"
    assert redact_url("http://KEYONLY@127.0.0.1:8000/v1") == "http://[redacted]@127.0.0.1:8000/v1"
    assert redact('{"url": "https:\\/\\/u:p@h\\/v1"}') == '{"url": "https:\\/\\/[redacted]@h\\/v1"}'
    kept = "mail jane@example.org about https://example.org/a@b (an @ in the path is no userinfo)"
    assert redact_url(kept) == kept


def test_redact_json_keeps_documents_valid() -> None:
    doc = json.dumps({"turns": [{"text": f"echo {KEY}"}], "note": json.dumps({"k": KEY}), KEY: 1})
    out = redact_json(doc)
    assert KEY not in out and json.dumps(KEY)[1:-1] not in out
    data = json.loads(out)
    assert data["turns"][0]["text"] == f"echo {REDACTED}" and REDACTED in data
    # a key ending in a backslash: a text replacement would cut its escape in half; the fallback re-serialises
    forget_secrets()
    register_secret("tok-0123456789abc\\")
    doc = json.dumps({"a": "tok-0123456789abc\\", "b": "tok-0123456789abc"})
    assert json.loads(redact_json(doc)) == {"a": REDACTED, "b": REDACTED}


def test_redact_json_escapes_what_json_leaves_raw() -> None:
    forget_secrets()  # no key registered: the escaping applies to every JSON file all the same
    doc = json.dumps({"text": "csi \x9b2J, del \x7f, bidi \u202eevil\u2069, sep \u2028, ok é ✓"}, ensure_ascii=False)
    out = redact_json(doc)
    assert json.loads(out) == json.loads(doc)
    assert out.isprintable() and "é ✓" in out and "\\u009b2J" in out


def test_redact_obj_walks_keys_and_values() -> None:
    data = {"headers": {"Authorization": f"Bearer {KEY}"}, f"k-{PLAIN}": [PLAIN, 3, None, (KEY,)]}
    assert redact_obj(data) == {"headers": {"Authorization": f"Bearer {REDACTED}"},
                                f"k-{REDACTED}": [REDACTED, 3, None, [REDACTED]]}


@pytest.mark.parametrize("raw, shown", [
    ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
    ("\x1b]0;pwned\x07title", "\\x1b]0;pwned\\x07title"),
    ("\x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\", "\\x1b]8;;http://evil/\\x1b\\\\link\\x1b]8;;\\x1b\\\\"),
    ("\x9b2J\x07\x08\x00", "\\x9b2J\\x07\\x08\\x00"),
    ("safe \u202eevil\u202c text", "safe \\u202eevil\\u202c text"),
    ("line one\r\nline two\n\tindented", "line one\nline two\n\tindented"),
    ("carriage\rreturn", "carriage\\rreturn"),
])
def test_neutralise_makes_escapes_visible(raw: str, shown: str) -> None:
    assert neutralise(raw) == shown
    assert neutralise(shown) == shown  # idempotent: writing a neutralised text again changes nothing


@pytest.mark.parametrize(
    "text",
    [
        "a\x1b]0;pwned\x07\x1b[31mred",
        "a literal \\u001b is no escape",
        "crlf\r\nlf\ncr\rtab\t",
        "\\",
        "\\\\x1b",
        "é\u202e\x9b\x7f✓",
        "\b\f\x00",
    ],
)
def test_display_json_neutralises_strings_inside_json(text: str) -> None:
    for doc in (json.dumps({"t": text, "u": [text]}), json.dumps({"t": text, "u": [text]}, ensure_ascii=False)):
        out = json.loads(display_json(doc))
        assert out == {"t": neutralise(text), "u": [neutralise(text)]}


def test_clean_and_one_line() -> None:
    body = f"\x1b[2J{{\"error\": \"bad key {KEY}\"}}\n## Headline\n**Aggregate: 0.99**"
    assert clean(body) == "\\x1b[2J{\"error\": \"bad key [redacted]\"}\n## Headline\n**Aggregate: 0.99**"
    assert one_line(body) == "\\x1b[2J{\"error\": \"bad key [redacted]\"} ## Headline **Aggregate: 0.99**"


def test_events_and_store_writers_redact(tmp_path: Path) -> None:
    from sim.records import EventLog, TurnRecorded, read_events

    log = EventLog(tmp_path / "events.jsonl")
    log(TurnRecorded(scenario_id="s", k=0, index=1, speaker="agent", text=f"echo {json.dumps(KEY)} {KEY}\x1b[31m"))
    log.close()
    raw = (tmp_path / "events.jsonl").read_text(encoding="utf-8")
    assert KEY not in raw and json.dumps(KEY)[1:-1] not in raw and json.dumps(json.dumps(KEY))[1:-1] not in raw
    events, skipped = read_events(tmp_path / "events.jsonl")
    assert skipped == 0 and events[0].text == f"echo \"{REDACTED}\" {REDACTED}\x1b[31m"
