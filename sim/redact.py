"""One redaction layer for everything a run writes or prints, and neutralising endpoint text.

Secrets (API keys read from the environment) are registered once per process with
``register_secret``; ``redact`` then replaces every form a key can take in text that came back from
an endpoint or was built from one: the raw key, its JSON-escaped form (what an error body that
echoes the request's headers contains), its URL-escaped forms, and base64 (alone, and as
``user:key`` / ``:key`` of HTTP Basic auth). Every writer of a run directory, the event log and the
terminal passes its text through ``redact``; ``redact_obj`` walks JSON-like data.

``neutralise`` makes text from an endpoint safe for a terminal or a Markdown/HTML report: ANSI
CSI and OSC escape sequences and other C0/C1 control characters (except newline and tab) are
replaced by a visible ``\\x..`` form, so a hostile error body can neither move the cursor, set the
window title, write hyperlinks nor hide text.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import urllib.parse
from typing import Any

REDACTED = "[redacted]"
_MIN_SECRET = 4  # shorter "keys" would redact ordinary words

_lock = threading.Lock()
_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None


def _forms(secret: str) -> set[str]:
    forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1],
             urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret), urllib.parse.quote(secret)}
    for prefix in ("", ":", "u:", "user:", "apikey:", "Bearer "):
        raw = (prefix + secret).encode()
        encoded = base64.b64encode(raw).decode()
        forms.add(encoded.rstrip("="))
        forms.add(base64.urlsafe_b64encode(raw).decode().rstrip("="))
    # JSON escaping of an already JSON-escaped form (an error body quoted inside another JSON string)
    forms |= {json.dumps(f)[1:-1] for f in list(forms)}
    return {f for f in forms if len(f) >= _MIN_SECRET}


def register_secret(secret: str | None) -> None:
    """Redact ``secret`` (in every form) from everything ``redact`` sees, for the rest of the process."""
    global _pattern
    if not secret or len(secret) < _MIN_SECRET:
        return
    with _lock:
        if secret in _secrets:
            return
        _secrets.add(secret)
        forms = sorted({f for s in _secrets for f in _forms(s)}, key=len, reverse=True)
        _pattern = re.compile("|".join(re.escape(f) for f in forms))


def forget_secrets() -> None:
    """Drop every registered secret (tests)."""
    global _pattern
    with _lock:
        _secrets.clear()
        _pattern = None


def redact(text: str) -> str:
    """``text`` with every registered secret, in every form, replaced by ``[redacted]``."""
    pattern = _pattern
    if pattern is None or not text:
        return text
    return pattern.sub(REDACTED, text)


def redact_obj(value: Any) -> Any:
    """``redact`` applied to every string (keys included) of JSON-like data."""
    if _pattern is None:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_obj(k): redact_obj(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_obj(v) for v in value]
    return value


# ESC [ ... final byte (CSI), ESC ] ... BEL or ESC \ (OSC), ESC P/X/^/_ ... ST (DCS, SOS, PM, APC),
# two-byte ESC sequences, then any other C0/C1 control character except newline and tab.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[@-Z\\-_]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)


def neutralise(text: str) -> str:
    """Escape sequences and control characters made visible (``\\x1b[31m`` -> ``\\x1b[31m`` as text)."""
    if not text:
        return text
    return _ESCAPES.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


def clean(text: str) -> str:
    """Endpoint text fit for a terminal, a log or a report: redacted, then neutralised."""
    return neutralise(redact(text))
