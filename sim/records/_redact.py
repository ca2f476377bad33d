r"""One redaction layer for everything a run writes or prints, and neutralising endpoint text.

Policy (issues 14, 36): no API key reaches a run directory, a log, a report or a terminal, in any escaping,
and text from an endpoint cannot drive the terminal or forge a report.

Secrets (API keys read from the environment: the agent's, the judges', the patient model's) are
registered once per process with ``register_secret`` (``api_key_from_env`` does it; ``register_env``
registers a variable's value by name, as ``RunStore.read_meta`` does for the variables a run names,
so that ``encsim report`` / ``compare`` redact too). ``redact`` then replaces every form a key can
take in text that came back from an endpoint or was built from one with ``[redacted]``:

- the raw key; JSON-escaped (ASCII and UTF-8, ``\/`` for ``/`` as PHP writes it, and escaped twice
  for an error body quoted inside another JSON string); URL-escaped (``quote``, ``quote_plus``,
  lower-case hex); HTML-escaped (report.html);
- base64: alone and as ``user:key`` of HTTP Basic auth for a few usual user names, and, whatever
  surrounds the key, the three alignment-independent cores (base64 of the key from byte 0, 1 or 2,
  whole 3-byte groups only): one of them is inside any base64 blob that contains the key;
- a truncated key: any text form cut after at least ``max(12, min(half the form, 24))`` characters
  (an error message shortened to N characters in the middle of the key) is redacted up to where it
  stops matching;
- URL userinfo: ``scheme://user:password@host`` loses ``user:password`` (``redact_url``), registered
  or not;
- a second pass (``sim.records._redact_mixed``): the key with any subset of its characters escaped, each in any
  of the ways above (JSON ``\uXXXX`` once or twice, URL ``%XX``, HTML numeric or named, ``\xHH``, ``0xHH``), or
  reversed; cut ones too; and hex (``736b2d``, ``73:6B:2D``, reversed too).

Every writer applies it at the write boundary: ``sim.store`` (results.jsonl, run.json, summary.json,
report.md), ``sim.records`` events (events.jsonl), report.html, ``encsim compare`` output, the patient-model
cache, and the CLI's lines that carry endpoint text. JSON is redacted as its final serialised text
with ``redact_json`` (which keeps the document valid JSON); ``redact_obj`` walks JSON-like data.

``neutralise`` makes text from an endpoint safe for a terminal or a Markdown/HTML report: ANSI
CSI and OSC escape sequences, other C0/C1 control characters (except newline and tab) and the
Unicode bidirectional overrides/isolates are replaced by a visible ``\x..`` / ``\u....`` form, so a
hostile error body can neither move the cursor, set the window title, write hyperlinks nor hide or
reorder text. CRLF becomes LF; newlines are kept (multi-line transcripts stay multi-line).
``clean`` = ``neutralise(redact(text))``; ``one_line`` also folds whitespace runs (newlines included)
into one space, for a message that must stay on its line (an error reason, a list item).
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import threading
import urllib.parse
from typing import Any

from sim.records._redact_mixed import Mixed, common_length, cut_length, mixed

REDACTED = "[redacted]"
_MIN_SECRET = 4  # shorter "keys" would redact ordinary words
_MIN_B64_CORE = 12  # base64 characters of an alignment-independent core

_lock = threading.Lock()
_secrets: set[str] = set()
# (pattern, alternative -> the full text forms it may be the start of, second-pass pattern); swapped as one object
_State = tuple[re.Pattern[str], dict[str, tuple[str, ...]], Mixed | None]
_state: _State | None = None

# scheme://userinfo@ (also JSON-escaped slashes: http:\/\/user:pw@host)
_USERINFO = re.compile(r"\b([A-Za-z][A-Za-z0-9+.\-]*:(?:\\?/){2})[^\s/?#@\"'<>\\\[\]]+@")


def _lower_hex(text: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), text)


def _text_forms(secret: str) -> set[str]:
    """Forms that keep the key's characters in order (so a cut one is recognisable by its start)."""
    forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1],
             urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret), urllib.parse.quote(secret),
             html.escape(secret, quote=True), html.escape(secret, quote=False)}
    forms |= {f.replace("/", "\\/") for f in list(forms)}
    forms |= {_lower_hex(f) for f in list(forms)}
    # JSON escaping of an already JSON-escaped form (an error body quoted inside another JSON string)
    forms |= {json.dumps(f)[1:-1] for f in list(forms)}
    return forms


def _b64_forms(secret: str) -> set[str]:
    raw = secret.encode()
    forms: set[str] = set()
    for prefix in (b"", b":", b"u:", b"user:", b"apikey:", b"api:", b"Bearer "):
        forms.add(base64.b64encode(prefix + raw).decode().rstrip("="))
        forms.add(base64.urlsafe_b64encode(prefix + raw).decode().rstrip("="))
    # the key raw or JSON-escaped (a base64'd JSON body) inside any base64 blob: whatever precedes it, one of
    # these cores starts on a 3-byte group boundary
    for text in {secret, json.dumps(secret)[1:-1]}:
        data = text.encode()
        for skip in range(3):
            chunk = data[skip:]
            chunk = chunk[:len(chunk) // 3 * 3]
            if len(chunk) * 4 // 3 >= _MIN_B64_CORE:
                forms.add(base64.b64encode(chunk).decode())
                forms.add(base64.urlsafe_b64encode(chunk).decode())
    return forms


def _forms(secret: str) -> set[str]:
    """Every form of ``secret`` that ``redact`` replaces (whole forms; cut text forms are found too)."""
    return {f for f in _text_forms(secret) | _b64_forms(secret) if len(f) >= _MIN_SECRET}


def _build(secrets: set[str]) -> _State:
    """The redaction pattern, and the text forms each of its alternatives may continue into.

    The pattern of every whole base64 form and the shortest recognisable start of every text form, and for
    each alternative the text forms a match may continue into (the replacement runs as far as one goes).
    """
    texts = {f for s in secrets for f in _text_forms(s) if len(f) >= _MIN_SECRET}
    alternatives = {f[:cut_length(f)] for f in texts}
    alternatives |= {f for s in secrets for f in _b64_forms(s) if len(f) >= _MIN_SECRET}
    ordered = sorted(alternatives, key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(a) for a in ordered))
    extend = {a: tuple(f for f in texts if f.startswith(a) and len(f) > len(a)) for a in ordered}
    return pattern, extend, mixed(secrets)


def register_secret(secret: str | None) -> None:
    """Redact ``secret`` (in every form) from everything ``redact`` sees, for the rest of the process."""
    global _state
    if not secret or len(secret) < _MIN_SECRET:
        return
    with _lock:
        if secret in _secrets:
            return
        _secrets.add(secret)
        _state = _build(_secrets)


def register_env(var: str | None) -> None:
    """Register the value of environment variable ``var`` as a secret, when it is named and set."""
    if var:
        register_secret(os.environ.get(var))


def forget_secrets() -> None:
    """Drop every registered secret (tests)."""
    global _state
    with _lock:
        _secrets.clear()
        _state = None


def redact_url(url: str) -> str:
    """``url`` (or any text holding URLs) without userinfo.

    ``https://user:key@host/v1`` -> ``https://[redacted]@host/v1``.
    """
    if not url or "@" not in url:
        return url
    return _USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", url)


def redact(text: str) -> str:
    """``text`` with every registered secret, in every form, and every URL's userinfo replaced by ``[redacted]``."""
    if not text:
        return text
    text = redact_url(text)
    state = _state
    if state is None:
        return text
    pattern, extend, second = state
    if second is not None:  # first: a key escaped in part has a raw start that the first pass would cut alone
        text = _cut(text, second.spans(text))
    out: list[str] = []
    pos = 0
    while (m := pattern.search(text, pos)) is not None:
        start = m.start()
        end = max((start + common_length(text, start, form) for form in extend[m.group(0)]), default=m.end())
        out += [text[pos:start], REDACTED]
        pos = max(end, m.end())
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span (overlapping ones merged) replaced by ``[redacted]``."""
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for start, end in sorted(spans):
        if end <= pos:
            continue
        out += [text[pos:max(start, pos)], REDACTED] if start >= pos else []
        pos = max(pos, end)
    return "".join(out) + text[pos:]


def redact_obj(value: Any) -> Any:
    """``redact`` applied to every string (keys included) of JSON-like data."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_obj(k): redact_obj(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_obj(v) for v in value]
    return value


# characters JSON may hold raw that a terminal may act on (C1 controls, DEL) or that reorder displayed text
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def redact_json(text: str) -> str:
    r"""A serialised JSON document redacted as text (which catches the JSON-escaped forms), still valid JSON.

    Should a replacement cut through an escape sequence (a key ending in a backslash), the document is
    parsed, its strings redacted, and serialised again. C1 controls, DEL and bidirectional controls (which
    JSON may leave raw; C0 ones it always escapes) are written as ``\uXXXX`` escapes: the data is the same
    once parsed, and ``cat`` of the file cannot drive a terminal.
    """
    out = redact(text)
    if out != text:
        try:
            json.loads(out)
        except ValueError:
            out = redact(json.dumps(redact_obj(json.loads(text)), ensure_ascii=False))
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", out)


# ESC [ ... final byte (CSI), ESC ] ... BEL or ESC \ (OSC), ESC P/X/^/_ ... ST (DCS, SOS, PM, APC),
# two-byte ESC sequences, then any other C0/C1 control character except newline and tab, and the
# bidirectional embeddings, overrides and isolates (text that displays in another order than it reads).
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[@-Z\\-_]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
)


def neutralise(text: str) -> str:
    r"""Escape sequences and control characters made visible (``\x1b[31m`` -> ``\x1b[31m`` as text)."""
    if not text:
        return text
    text = text.replace("\r\n", "\n")
    return _ESCAPES.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


# one JSON escape (consumed left to right, so an escaped backslash is never mistaken for the start of
# another escape), or a raw character that JSON may leave unescaped and neutralise makes visible
_JSON_ESCAPE = re.compile(r'\\r\\n|\\u([0-9a-fA-F]{4})|\\(.)|([\x7f-\x9f\u202a-\u202e\u2066-\u2069])', re.DOTALL)
_SHORT = {"b": "x08", "f": "x0c", "r": "r"}


def _visible_escape(m: re.Match[str]) -> str:
    if m.group(0) == "\\r\\n":
        return "\\n"
    if m.group(1) is not None:
        char = chr(int(m.group(1), 16))
        if char in "\n\t" or not _ESCAPES.fullmatch(char):
            return m.group(0)
        return "\\" + neutralise(char)  # the JSON for a backslash, then the rest of the visible form
    if m.group(2) is not None:
        short = _SHORT.get(m.group(2))
        return m.group(0) if short is None else "\\\\" + short
    return "\\" + neutralise(m.group(3))


def display_json(text: str) -> str:
    r"""A JSON document whose strings are neutralised, rewritten as JSON text.

    For a reader that shows them: the dashboard. ``"\u001b[2J"`` becomes ``"\\x1b[2J"``, which parses to
    the visible text ``\x1b[2J``; CRLF becomes LF; every other character and the document's structure are
    unchanged.
    """
    return _JSON_ESCAPE.sub(_visible_escape, text)


def clean(text: str) -> str:
    """Endpoint text fit for a terminal, a log or a report: redacted, then neutralised."""
    return neutralise(redact(text))


def one_line(text: str) -> str:
    """``clean`` text on one line: runs of whitespace, newlines included, become one space."""
    return " ".join(clean(text).split())
