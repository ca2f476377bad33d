r"""Keys escaped a character at a time, in hex, or backwards: the second pass of ``sim.records._redact.redact``.

The first pass knows whole forms (the key raw, JSON-, URL- or HTML-escaped, base64). A server can also echo a
key with only *some* characters escaped (``sk-\u0074est-...``: one character JSON-escaped, the rest raw, as some
serialisers and log formatters write), with escapes of different kinds mixed, in hex, or reversed. So:

- **Decode, then look.** Every escape in the text is read as the one character it stands for: JSON ``\uXXXX``
  (any case, surrogate pairs, behind any number of backslashes, so escaped twice too), ``\"``, ``\/``, ``\\``,
  ``\xHH``; URL ``%XX``; HTML ``&#NN;``, ``&#xHH;`` and the named entities of ``" & < > '``. The key, or the key
  reversed, is then looked for in the decoded text, and what matched is cut out of the *original* text (each
  decoded character knows where it came from). Any mixture of escapes, character by character, is found.
- **Hex**: the key's bytes, or the reversed key's, as two hex digits each (either case), bare or separated by a
  space, colon, dash, comma or comma and space, each byte bare or written ``0xHH`` / ``\xHH`` (``hex_forms``,
  found as the keys are); ``\xHH``, ``0xHH`` and ``%HH`` are also escapes like the others, so mixed with raw
  characters too.
- **Cut keys**: a key shortened in the middle (an error message truncated to N characters) is found once at least
  ``MIN_UNITS`` (and half the key, up to 24) of its characters are there; the cut runs as far as the key goes.

Decoding happens only in text that holds an escape of one of the keys' characters (the pattern knows only those),
and the keys are found with ``str.find``: text without such escapes costs a few scans.
"""

from __future__ import annotations

import bisect
import html
import re
from dataclasses import dataclass

MIN_UNITS = 12  # a cut key is recognised by this many characters (or half the key, up to _MAX_UNITS)
_MAX_UNITS = 24

_NAMED = {'"': "quot", "&": "amp", "<": "lt", ">": "gt", "'": "apos"}


def _escapes(chars: set[str], *, greedy: bool) -> re.Pattern[str]:
    r"""The escapes of ``chars`` only: other escapes cannot be part of a key.

    JSON ``\uXXXX`` (a surrogate pair as one), ``\xHH`` and the short JSON escapes; URL ``%XX``; HTML references.
    ``greedy``: an escape takes every backslash before it (escaped twice or more); else one, and the ones before
    it are the key's own backslashes (``c\\u0035`` is ``c``, a backslash, ``5``), and there are no short escapes.

    """
    codes = sorted({ord(c) for c in chars})
    u = "|".join(_ci_hex(c, 4) for c in codes if c <= 0xFFFF)
    x = "|".join(_ci_hex(c, 2) for c in codes if c < 0x100)
    short = "".join(re.escape(c) for c in sorted(chars & set('"/\\')))
    utf8 = "|".join(sorted({_ci_hex(b, 2) for c in chars for b in c.encode()}))
    refs = [f"#0*{c}" for c in codes] + [f"#[xX]0*{_ci_hex(c, 1)}" for c in codes]
    refs += [_NAMED[c] for c in sorted(chars & set(_NAMED))]
    # every branch starts with a literal character, so the search skips to the next \, %, & or 0
    slashes = r"\\*" if greedy else ""  # after the first backslash
    parts = [rf"%(?P<pct>{utf8})", "&(?P<ref>" + "|".join(refs) + ");"]
    if max(codes) > 0xFFFF:
        parts.append(rf"\\{slashes}u(?P<hi>[dD][89abAB][0-9a-fA-F]{{2}})\\{slashes}u(?P<lo>[dD][c-fC-F][0-9a-fA-F]{{2}})")
    parts += [rf"\\{slashes}u(?P<u>{u})" if u else "", rf"\\{slashes}[xX](?P<x>{x})" if x else "",
              rf"0[xX](?P<x0>{x})" if x else "", rf"\\{slashes}(?P<short>[{short}])" if short and greedy else ""]
    return re.compile("|".join(p for p in parts if p))


def _char(m: re.Match[str]) -> str:
    """The character one match of ``_escapes`` stands for."""
    found = {k: v for k, v in m.groupdict().items() if v is not None}
    if "hi" in found:
        return chr(0x10000 + ((int(found["hi"], 16) - 0xD800) << 10) + (int(found["lo"], 16) - 0xDC00))
    if "short" in found:
        return found["short"]
    if "ref" in found:
        return html.unescape(f"&{found['ref']};")
    return chr(int(next(iter(found.values())), 16))  # \\u, \\x or %: the code in hex


@dataclass(frozen=True)
class _Decoded:
    """Text with its escapes decoded, and where each decoded character came from."""

    text: str
    starts: list[int]  # decoded offset at which each segment starts
    origins: list[int]  # the original offset of that segment's first character
    escapes: list[int]  # the original length of an escape segment (one decoded character), 0 for a raw run

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of decoded characters ``start`` .. ``end`` (exclusive)."""
        return self._at(start)[0], self._at(end - 1)[1]

    def _at(self, index: int) -> tuple[int, int]:
        seg = bisect.bisect_right(self.starts, index) - 1
        if self.escapes[seg]:
            return self.origins[seg], self.origins[seg] + self.escapes[seg]
        where = self.origins[seg] + index - self.starts[seg]
        return where, where + 1


def _decode(text: str, pattern: re.Pattern[str]) -> _Decoded:
    parts: list[str] = []
    starts: list[int] = []
    origins: list[int] = []
    escapes: list[int] = []
    pos = done = 0  # original offset consumed, decoded length
    for m in pattern.finditer(text):
        if m.start() > pos:
            starts.append(done)
            origins.append(pos)
            escapes.append(0)
            parts.append(text[pos:m.start()])
            done += m.start() - pos
        starts.append(done)
        origins.append(m.start())
        escapes.append(m.end() - m.start())
        parts.append(_char(m)[:1])
        done += 1
        pos = m.end()
    if pos < len(text):
        starts.append(done)
        origins.append(pos)
        escapes.append(0)
        parts.append(text[pos:])
    return _Decoded("".join(parts), starts, origins, escapes)


def _ci_hex(value: int, width: int) -> str:
    """``value`` as at least ``width`` hex digits, either case."""
    return "".join(f"[{d.lower()}{d.upper()}]" if d.isalpha() else d for d in f"{value:0{width}x}")


def hex_forms(secret: str) -> set[str]:
    """The key's bytes, and the key's reversed, as hex: either case, bare or separated."""
    forms: set[str] = set()
    for data in (secret.encode(), secret.encode()[::-1]):
        for sep in ("", " ", ":", "-", ",", ", "):
            for lead in ("", "0x", "\\x"):
                forms |= {sep.join(f"{lead}{b:02x}" for b in data), sep.join(f"{lead}{b:02X}" for b in data)}
    return forms


def common_length(text: str, start: int, form: str) -> int:
    """How many characters of ``form`` stand in ``text`` from ``start`` on (the text may end first)."""
    n = 0
    for a, b in zip(text[start:start + len(form)], form, strict=False):
        if a != b:
            break
        n += 1
    return n


def cut_length(form: str) -> int:
    """How many characters of ``form`` recognise it when it is cut (all of a short one)."""
    return len(form) if len(form) < MIN_UNITS else max(MIN_UNITS, min(len(form) // 2, _MAX_UNITS))


_Groups = tuple[tuple[str, tuple[str, ...]], ...]  # forms by their first two characters


@dataclass(frozen=True)
class Mixed:
    """The second pass for a set of keys."""

    keys: _Groups  # the keys and the keys reversed: looked for in the text decoded
    hexes: _Groups  # their hex forms: looked for in the text as it is
    escapes: tuple[re.Pattern[str], re.Pattern[str]]  # the escapes of the keys' characters: greedy, then not

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The original spans that hold a key in a form of the module docstring."""
        found = _find(text, self.hexes)
        if not self.escapes[0].search(text):
            return found + _find(text, self.keys)  # nothing to decode
        for pattern in self.escapes:  # a backslash before an escape: escaped twice, or the key's own
            decoded = _decode(text, pattern)
            found += [decoded.span(start, end) for start, end in _find(decoded.text, self.keys)]
        return found


def _find(text: str, groups: _Groups) -> list[tuple[int, int]]:
    """Where the forms are in ``text``, each as far as it goes once its cut length is there."""
    found: list[tuple[int, int]] = []
    for lead, forms in groups:
        if lead not in text:  # most text holds no form's first two characters in a row ("sk", "73", "0x")
            continue
        for form in forms:
            cue = form[:cut_length(form)]
            start = text.find(cue)
            while start >= 0:
                n = common_length(text, start, form)
                found.append((start, start + n))
                start = text.find(cue, start + n)
    return found


def _groups(forms: set[str]) -> _Groups:
    ordered = sorted(forms, key=len, reverse=True)
    return tuple((lead, tuple(f for f in ordered if f[:2] == lead)) for lead in sorted({f[:2] for f in forms}))


def mixed(secrets: set[str]) -> Mixed | None:
    """The second pass for ``secrets`` (None for none)."""
    if not secrets:
        return None
    chars = {c for s in secrets for c in s}
    return Mixed(_groups({text for s in secrets for text in (s, s[::-1])}),
                 _groups({f for s in secrets for f in hex_forms(s)}),
                 (_escapes(chars, greedy=True), _escapes(chars, greedy=False)))
