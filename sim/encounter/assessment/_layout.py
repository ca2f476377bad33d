"""A reply as lines and labelled fields (rules in ``sim.encounter.assessment``'s docstring).

Markdown removed, markdown tables read as lines, which label is which field, and the block of lines a field's value
spans.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from scenarios.schema import Disposition, Escalation

# The protocol's own marker, on the line as written (form "plain").
ASSESSMENT_RE = re.compile(r"^\s*(?:my\s+)?assessment\s*[:\-]", re.IGNORECASE | re.MULTILINE)

_QUOTE = re.compile(r"^(?:>\s?)+")
# a transcript's speaker ("AGENT: ..."), a markdown admonition's tag ("[!WARNING]")
_SPEAKER = re.compile(r"^(?:(?:agent|assistant|bot|nurse|clinician|ai|triage bot|voice agent"
                      r"|(?:[a-z]+ ){0,2}(?:nurse|agent|bot|assistant) \(ai\))\s*:\s+|\[![a-z]+\]\s*)",
                      re.IGNORECASE)  # "Triage Nurse (AI): ..." too
_HEADING = re.compile(r"^#{1,6}\s+")
_LIST_MARKER = re.compile(r"^(?:(?:[-*+•◦▪‣]|\d{1,2}[.)]|\(\d{1,2}\))\s+|\d{1,2}\)(?=[A-Za-z]))")
_CIRCLED = re.compile("[\u2460-\u2473]")
_STRONG = re.compile(r"\*\*|__|`+|~~")
# a lone '_' only around words, so that "self_care" keeps its underscore
_EMPHASIS = re.compile(r"\*|(?<!\w)_+|_+(?!\w)")
_LEADING_SYMBOLS = re.compile(r"^[^\w(\[\"'?]+")  # emoji and arrows models put before labels
_TABLE_ROW = re.compile(r"^\s*(?:>\s*)*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*(?:>\s*)*\|?(?:\s*:?-{2,}:?\s*\|?)+\s*$")
_BREAK_TAG = re.compile(r"<br\s*/?>", re.IGNORECASE)
_HTML_TAG = re.compile(r"</?(?:b|strong|i|em|u|p|span|div|font|mark|small|big|h[1-6]|ul|ol|li|dl|dt|dd|table|tbody"
                       r"|thead|tr|td|th|speak|prosody|emphasis|break|say-as|s|voice|sub|audio|mark|phoneme|lang"
                       r"|amazon:[\w-]+)(?:\s[^>]*)?/?>|<br\s*/?>", re.IGNORECASE)
_HTML_CELL_BREAK = re.compile(r"</t[dh]>\s*<t[dh](?:\s[^>]*)?>|</dt>\s*<dd(?:\s[^>]*)?>", re.IGNORECASE)
_HTML_ITEM = re.compile(r"^\s*<li(?:\s[^>]*)?>", re.IGNORECASE)
_ENTITIES = {"&nbsp;": " ", "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'", "&rarr;": "\u2192"}
# XML-style fields: "<triage_level>3</triage_level>" is "triage level: 3", "<diagnoses>" alone a label line
_XML_FIELD = re.compile(r"^<(?P<tag>[A-Za-z][\w-]{0,40})(?:\s[^>]*)?>(?P<value>[^<]*)</(?P=tag)>$")
_XML_OPEN = re.compile(r"^<(?P<tag>[A-Za-z][\w-]{0,40})(?:\s[^>]*)?>$")
_XML_ATTRIBUTE = re.compile(r"\s([A-Za-z][\w-]{0,40})=[\"']([^\"'<>]{1,80})[\"']")
_XML_NAME_ATTRIBUTE = re.compile(r"\s(?:name|key|field)=[\"']([A-Za-z][\w -]{0,40})[\"']")
_XML_CLOSE = re.compile(r"^</[A-Za-z][\w-]{0,40}>$")


@dataclass(frozen=True)
class _Line:
    body: str  # the text with markdown removed; "" for blank lines and horizontal rules
    raw: str = ""
    indent: int = 0
    listed: bool = False  # a bullet or numbered list item
    heading: bool = False  # a '#' heading
    table: bool = False  # read from a markdown table
    json: bool = False  # read from a JSON object (a code block or the whole reply)


def _html(text: str) -> str:
    """Text with HTML emphasis and breaks removed, list items and table cells kept, and common entities decoded."""
    if "<" not in text and "&" not in text:
        return text
    text = _HTML_CELL_BREAK.sub(": ", text)
    text = _HTML_ITEM.sub("- ", text)
    text = _HTML_TAG.sub(" ", text)
    for entity, char in _ENTITIES.items():
        text = text.replace(entity, char)
    return text


def _xml(text: str) -> str:
    """An XML-style field line as ``label: value`` (``<escalation>urgent</escalation>``); a closing tag as blank."""
    if not text.startswith("<"):
        return text
    if m := _XML_FIELD.match(text):
        named = _XML_NAME_ATTRIBUTE.search(m[0][:m[0].index(">")])  # <parameter name="triage_level">2</parameter>
        label = _json_label(named[1] if named else m["tag"])
        # "<item>X</item>" inside "<diagnoses>": an item of the list, not a field of its own
        return f"- {m['value']}" if _label_kind(label) in (None, "label") else f"{label}: {m['value']}"
    if m := _XML_OPEN.match(text):  # its attributes are fields: <final_assessment esi="3" escalation="urgent">
        attributes = " | ".join(f"{_json_label(k)}: {v}" for k, v in _XML_ATTRIBUTE.findall(m[0])
                                if _label_kind(_json_label(k)) not in (None, "label", "other"))
        return f"{_json_label(m['tag'])}: {attributes}" if attributes else f"{_json_label(m['tag'])}:"
    return "" if _XML_CLOSE.match(text) else text


# "Triage level ...... ESI 2", "Clinical impression .. 1. X"
_DOT_LEADER = re.compile(r"(?<=[A-Za-z)])\s*(?:\.{3,}|\s\.{2}(?=\s)|…+|_{3,})\s*(?=\S)")


def _plain(text: str) -> str:
    text = _DOT_LEADER.sub(": ", text)
    text = _EMPHASIS.sub("", _STRONG.sub("", _html(text)))
    return " ".join(_LEADING_SYMBOLS.sub("", text).split())


def _line(raw: str) -> _Line:
    text = raw.expandtabs(4)
    indent = len(text) - len(text.lstrip())
    s = _xml(_html(_SPEAKER.sub("", _QUOTE.sub("", text.strip()))).strip())
    heading = _HEADING.match(s) is not None
    s = _HEADING.sub("", s)
    listed = _LIST_MARKER.match(s) is not None
    s = _LIST_MARKER.sub("", s, count=1)
    body = _plain(s)
    if not listed and s[:1] in "*_" and (m := _LIST_MARKER.match(body)):  # a numbered bold title: "**1. Urgency**"
        body = body[m.end():]
    return _Line(body=body, raw=raw, indent=indent, listed=listed, heading=heading)


def _cells(row: str) -> list[str]:
    s = _QUOTE.sub("", row.strip()).strip().removeprefix("|").removesuffix("|")
    return [_plain(_BREAK_TAG.sub("; ", cell)) for cell in s.split("|")]


def _table_lines(rows: list[str]) -> list[_Line]:
    """A markdown table as lines the field reader understands (see the module docstring)."""
    table = [_cells(r) for r in rows if not _TABLE_RULE.match(r)]
    if not table:
        return []
    header, data = table[0], table[1:]
    kinds = [_label_kind(cell) for cell in header]
    keyed = any(_label_kind(row[0]) in _FIELD_KINDS for row in data if row)
    if data and not keyed and sum(k in _FIELD_KINDS for k in kinds) >= 2:  # one column per field
        return [_Line(body=f"{h}: {v}", table=True) for row in data for h, v in zip(header, row, strict=False) if h]
    if data and not keyed and "diagnoses" in kinds:  # a ranked differential
        col = kinds.index("diagnoses")
        return [_Line(body="Diagnoses:", table=True)] + [
            _Line(body=row[col], listed=True, table=True) for row in data if col < len(row) and row[col]]
    lines = []
    for row in table:  # key-value rows, header included (it may be "| Assessment | |")
        rest = " \u2014 ".join(c for c in row[1:] if c)
        if row and row[0]:
            lines.append(_Line(body=f"{row[0]}: {rest}" if rest else row[0], table=True))
    return lines


_JSON_DEPTH = 8  # levels of nesting read; deeper values are ignored (a Gemini reply nests its call six deep)
_JSON_CLOSINGS = 12  # closing lines tried for where an unfenced object ends (nested replies close many times)
_JSON_LINES = 200  # an unfenced object longer than this is not read as the assessment
_NAME_KEYS = ("name", "diagnosis", "condition", "dx", "label", "title", "value")
_CALL_KEYS = {"arguments", "args", "parameters", "input"}
_WRAPPER_KEYS = {"function", "functionCall", "function_call", "content", "parts", "tool_use", "toolUse"}
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _json_label(key: str) -> str:
    """``triage_level``, ``esiLevel``, ``most-likely`` as the words of a label."""
    return " ".join(_CAMEL.sub(" ", key).replace("_", " ").replace("-", " ").split())


_DECISION_KEYS = ("value", "level", "esi", "category", "code")  # {"system": "ESI", "value": 2, "label": "Emergent"}


def _json_scalar(value: object, label: str = "") -> str:
    if isinstance(value, dict):  # a differential entry: {"name": "Anaphylaxis", "likelihood": "high"}
        keys = (*_DECISION_KEYS, *_NAME_KEYS) if _label_kind(label) in ("level", "escalation", "disposition") \
            else _NAME_KEYS  # a level's or escalation's object: its value or category, not its wording
        key = next((k for k in keys if isinstance(value.get(k), (str, int, float))), None)
        named = None if key is None else f"{key} {value[key]}" if key in ("esi", "level") else value[key]
        named = named if named is not None else next((v for v in value.values() if isinstance(v, str)), "")
        return str(named)
    return "" if value is None else str(value)


def _json_lines(data: object, depth: int = 0) -> list[_Line]:
    """A JSON object as ``Label: value`` lines; a nested object as its label's line, then its own lines."""
    if not isinstance(data, dict) or depth > _JSON_DEPTH:
        return []
    out: list[_Line] = []
    for key, value in data.items():
        label = _json_label(str(key))
        if not label or value is None:  # "assessment": null says nothing
            continue
        if isinstance(value, str) and (inner := _json_object(value)) is not None:  # tool-call arguments as a string
            value = inner
        # a nested object is its own block, unless it is a named entry ({"name": "Anaphylaxis", ...}); a named
        # call with arguments ({"name": "finalize_triage", "arguments": "{...}"}) is a block
        decision = _label_kind(label) in ("level", "escalation", "disposition")
        named = isinstance(value, dict) and any(isinstance(value.get(k), (str, int, float))
                                                for k in (*_NAME_KEYS, *(_DECISION_KEYS if decision else ())))
        if isinstance(value, dict) and (not named or _CALL_KEYS & value.keys()):
            out.append(_Line(body=f"{label}:", json=True))
            out.extend(_json_lines(value, depth + 1))
        elif isinstance(value, list) and any(isinstance(v, dict) and (_CALL_KEYS | _WRAPPER_KEYS) & v.keys()
                                             for v in value):
            for v in value:  # "tool_calls": [{"function": {...}}], "parts": [{"functionCall": {...}}]
                out.extend(_json_lines(v, depth + 1))
        elif isinstance(value, list):
            items = [s for s in map(_json_scalar, value) if s.strip()]
            out.append(_Line(body=f"{label}: {'; '.join(items)}", json=True))
        else:
            out.append(_Line(body=f"{label}: {_plain(_json_scalar(value, label))}", json=True))
    return out


_FENCE = re.compile(r"^\s*(?:>\s*)*```")
# where an unfenced object starts: at the line's start, or after a tool call's label ("Arguments: {...")
_JSON_OPENING = re.compile(r"^\s*(?:(?:arguments|args|parameters|params|input|tool input|function call)\s*[:=]\s*"
                           r"|[A-Za-z_][\w.]{0,60}\(\s*)?(?=\{)",
                           re.IGNORECASE)


_JSON_COMMENT = re.compile(r'^((?:[^"\n/]|"(?:[^"\\\n]|\\.)*")*)//[^\n]*$', re.MULTILINE)


def _json_object(text: str) -> dict[str, object] | None:
    """The JSON object ``text`` holds (nothing else but blanks), or None."""
    import json

    text = text.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        try:  # JSON with comments ("jsonc"): "// ..." to the end of a line, outside strings
            data = json.loads(_JSON_COMMENT.sub(r"\1", text))
        except (ValueError, RecursionError):
            return None
    return data if isinstance(data, dict) else None


def _call_body(first: str, rest: list[str]) -> str:
    """The object's text: its first line's part from ``{`` on, the next lines, the call's ``)`` or ``);`` dropped."""
    return "\n".join([first, *rest]).rstrip().rstrip(";").rstrip().removesuffix(")")


def _json_spans(raws: list[str]) -> dict[int, tuple[int, dict[str, object]]]:
    """Where JSON objects sit among the raw lines: start index -> (end index, object).

    A fenced code block that holds one object, or an unfenced object from a line starting ``{`` (or a tool call's
    ``Arguments: {``, or a call ``submit_assessment({``) to the line where it closes. A string value that holds an
    object (a tool call's arguments) is read as that object.
    """
    spans: dict[int, tuple[int, dict[str, object]]] = {}
    i = 0
    while i < len(raws):
        end = None
        if _FENCE.match(raws[i]):
            end = next((k for k in range(i + 1, len(raws)) if _FENCE.match(raws[k])), None)
            body = "\n".join(raws[i + 1:end]) if end is not None else ""
        elif (opening := _JSON_OPENING.match(raws[i])) is not None:  # it closes on one of the next lines ending "}"
            first = raws[i][opening.end():]
            closing = [k for k in range(i, min(len(raws), i + _JSON_LINES))
                       if raws[k].rstrip(" );").endswith("}")][:_JSON_CLOSINGS]
            end = next((k for k in closing if _json_object(_call_body(first, raws[i + 1:k + 1])) is not None), None)
            body = _call_body(first, raws[i + 1:end + 1]) if end is not None else ""
        data = _json_object(body) if end is not None else None
        if end is not None and data is not None:
            spans[i] = (end, data)
            i = end + 1
        else:
            i += 1
    return spans


# separators of several fields on one line: "Triage: ESI 5; Escalation: self-care", "Level: 2 / Escalation: ...",
# "ESI 4 | Urgent | Dx: sinusitis", "**Triage level:** 3 — **Escalation:** urgent", "ESI=4; escalation=routine"
_NEXT_LABEL = r"(?=[A-Za-z][A-Za-z _/&]{0,30}:)"
# a sentence or dash break before the next "Label:" ("ESI 2. ESCALATION: EMERGENCY", "TRIAGE: 3 -- URGENCY: ...")
_ANCHORED_SEPARATOR = re.compile(rf"(?:\.|\s+(?:--|[-\u2013\u2014]))\s+{_NEXT_LABEL}")
_FIELD_SEPARATORS = (re.compile(r"\s*\|\s*"), re.compile(r"\s*;\s*"), re.compile(r"\s+/\s+"),
                     re.compile(r"\s+[\u2014\u00b7]\s+"), _ANCHORED_SEPARATOR)
# the protocol's fields in order without labels: "ESI 5 | self_care | self_care | Mouth ulcers; Impetigo"
_POSITIONAL_LABELS = ("Triage level", "Escalation", "Disposition", "Diagnoses")
_EQUALS_LABEL = re.compile(r"^(?P<label>[A-Za-z][\w /-]{0,30}?)\s*=\s*(?P<value>.+)$")
_LEVEL_PIECE = re.compile(r"^(?:esi|ctas|level|triage|acuity|priority|category)\b", re.IGNORECASE)


def _piece_kind(piece: str) -> str | None:
    m = _LABEL.match(piece)
    kind = _label_kind(m["label"]) if m else None
    return kind if kind in _KNOWN_KINDS else None


_COMBINED_LABELS = re.compile(r"^(?P<labels>[A-Za-z][\w ]{0,20}(?:\s*/\s*[A-Za-z][\w ]{0,20})+)\s*:\s*(?P<values>.+)$")
_ESCALATION_WORD = re.compile(rf"^(?:{'|'.join(e.value.replace('_', '[ _-]?') for e in Escalation)})$", re.IGNORECASE)
_DISPOSITION_WORD = re.compile(rf"^(?:{'|'.join(d.value for d in Disposition)})$", re.IGNORECASE)


def _positional(pieces: list[str]) -> list[str] | None:
    """Pieces that are the protocol's fields in order, unlabelled: a level, then an escalation word, then the rest."""
    if len(pieces) < 3 or not _LEVEL_PIECE.match(pieces[0]) or not _ESCALATION_WORD.match(pieces[1]):
        return None
    out = [f"{_POSITIONAL_LABELS[0]}: {pieces[0]}", f"{_POSITIONAL_LABELS[1]}: {pieces[1]}"]
    rest = pieces[2:]
    if _DISPOSITION_WORD.match(rest[0]):  # the disposition's own value, then the diagnoses unless labelled
        out.append(f"{_POSITIONAL_LABELS[2]}: {rest.pop(0)}")
        if rest and _piece_kind(rest[0]) is None:
            out.append(f"{_POSITIONAL_LABELS[3]}: {rest.pop(0)}")
    return out + rest


def _split_fields(line: _Line) -> list[_Line]:
    """One line holding several fields as one line per piece (``_FIELD_SEPARATORS``, first that applies).

    It applies when two pieces or more are labelled fields, or one is and another starts with a triage level
    ("ESI 4 | Urgent | Dx: sinusitis"); ``label=value`` pieces are read as ``label: value``.
    """
    if line.table:
        return [line]
    body = re.sub(r"\]\s*\[|^\[|\]\s*", " | ", line.body) if line.body.startswith("[") else line.body
    if (combined := _COMBINED_LABELS.match(body)) is not None:  # "ESI / escalation: 4 / routine"
        labels, values = combined["labels"].split("/"), combined["values"].split("/")
        if len(labels) == len(values) and all(_label_kind(x) in _FIELD_KINDS for x in labels):
            return [_Line(body=f"{k.strip()}: {v.strip()}", raw=line.raw, indent=line.indent)
                    for k, v in zip(labels, values, strict=True)]
    for separator in _FIELD_SEPARATORS:
        raw = [p.strip() for p in separator.split(body) if p.strip()]
        if len(raw) < 2:
            continue
        if separator.pattern.startswith(r"\s*\|") and (positional := _positional(raw)):
            return [_Line(body=p, raw=line.raw, indent=line.indent) for p in positional]
        pieces = [f"{m['label']}: {m['value']}" if (m := _EQUALS_LABEL.match(p)) and ":" not in p
                  and _label_kind(m["label"]) in _KNOWN_KINDS else p for p in raw]
        fields = sum(_piece_kind(p) is not None for p in pieces)
        levels = sum(_piece_kind(p) is None and _LEVEL_PIECE.match(p) is not None for p in pieces)
        if fields >= 2 or (fields and levels) or (fields and separator is _ANCHORED_SEPARATOR):
            return [_Line(body=p, raw=line.raw, indent=line.indent, listed=line.listed) for p in pieces]
    return [line]


# several bold labels on one line, no separator: "**Triage Level:**4 **Escalation:**urgent"
_INLINE_BOLD_LABEL = re.compile(r"(?<=\S)\s*(?=(?:\*\*|__)[A-Za-z][^*_:\n]{0,40}(?::(?:\*\*|__)|(?:\*\*|__):))")


_KEY_VALUE = re.compile(r"(?:^|(?<=\s))([A-Za-z][\w.]{0,40})=(\"[^\"]*\"|[^\s\"]+)")
_KEY_VALUES = 3  # pairs on one line that make it a log line of fields
_OTHER_SEPARATOR = re.compile(r"[<|;]")  # tags and separated fields are read by their own rules
_QUOTED = re.compile(r"\"[^\"]*\"")
_DIGITS = re.compile(r"\d+$")  # "dx1", "dx2": items of one list


def _csv_fields(header: str, row: str) -> list[str] | None:
    """A CSV header naming two fields or more, and the data row under it, as ``key: value`` lines; else None."""
    import csv

    if header.count(",") < 2 or "|" in header or ":" in header:
        return None
    keys, values = (next(csv.reader([line]), []) for line in (header, row))
    if len(keys) != len(values) or sum(_label_kind(_DIGITS.sub("", k)) in _FIELD_KINDS for k in keys) < 2:
        return None
    return [f"{_DIGITS.sub('', k).strip()}: {v.strip()}" for k, v in zip(keys, values, strict=True) if v.strip()]


_INLINE_DX = re.compile(r"(?<=\S)\s*[;|]\s*(?=(?:dx|ddx|diagnos[ie]s)\s*:)", re.IGNORECASE)


# a Python-style call with keyword arguments on one line: 'finalize(esi=3, escalation="urgent", dx=["X"])'
_PY_CALL = re.compile(r"^\s*[A-Za-z_][\w.]{0,60}\(\s*[A-Za-z_]\w*\s*=.*\)\s*;?\s*$")
_PY_CALL_CHARS = 4000


def _python_call(raw: str) -> str | None:
    """A one-line call with literal keyword arguments as a JSON object's text (read as JSON is), else None."""
    if len(raw) > _PY_CALL_CHARS or not _PY_CALL.match(raw):
        return None
    import ast
    import json

    try:
        node = ast.parse(raw.strip().rstrip(";"), mode="eval").body
        if not isinstance(node, ast.Call) or not node.keywords or any(k.arg is None for k in node.keywords):
            return None
        return json.dumps({k.arg: ast.literal_eval(k.value) for k in node.keywords})
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return None


_UNCHECKED = re.compile(r"(?:[-*]\s*)?\[ \]\s*[^\[\n]*?(?=\s*(?:[-*]\s*)?\[[ xX]\]|$)")
_CHECKED = re.compile(r"(?:[-*]\s*)?\[[xX]\]\s*")


def _checked(raw: str) -> str:
    """A line of checkboxes as the options ticked: "- [ ] ESI 2  - [x] ESI 3" is "ESI 3"."""
    if "[ ]" not in raw or not _CHECKED.search(raw):
        return raw
    kept = _CHECKED.sub("", _UNCHECKED.sub("", raw))
    return kept if kept.strip() else raw


def _raw_lines(text: str) -> list[str]:
    """The reply's lines; an HTML break outside a table, and a run of inline bold labels, each start a new one.

    Full-width forms are read as their ASCII equivalents (NFKC: "\uff1a" is ":", "\u2460" is "1"), and the
    lenticular brackets of a CJK heading ("\u3010ASSESSMENT\u3011") are dropped.
    """
    import unicodedata

    text = _CIRCLED.sub(lambda m: f" {ord(m[0]) - 0x245F}. ", text)  # "\u2460 X" is "1. X"
    text = unicodedata.normalize("NFKC", text).replace("\u3010", "").replace("\u3011", "")
    out: list[str] = []
    raws = [_python_call(raw) or _checked(raw) for raw in text.splitlines()]
    for i, raw in enumerate(raws):
        if (row := _csv_fields(raw, raws[i + 1] if i + 1 < len(raws) else "")) is not None:
            out.extend(row)  # a CSV header above one data row: "esi,escalation,dx1" then "4,routine,Haemorrhoids"
            raws[i + 1] = ""
        elif _INLINE_DX.search(raw) and not _TABLE_ROW.match(raw):  # "ESI 3, urgent, urgent care; dx: X"
            out.extend(_INLINE_DX.split(raw, maxsplit=1))
        elif not _TABLE_ROW.match(raw) and _BREAK_TAG.search(raw):
            out.extend(_BREAK_TAG.split(raw))
        elif len(_INLINE_BOLD_LABEL.findall(raw)) >= 2:
            out.extend(p for p in _INLINE_BOLD_LABEL.split(raw) if p.strip())
        elif not _OTHER_SEPARATOR.search(_QUOTED.sub("", raw)) and \
                len(pairs := _KEY_VALUE.findall(raw)) >= _KEY_VALUES:
            # a log line: "[triage] level=4 escalation=routine dx1="X" dx2="Y""
            out.extend(f"{_DIGITS.sub('', key).replace('.', ' ')}: {value.strip(chr(34) + ',')}"
                       for key, value in pairs)
        else:
            out.append(raw)
    return out


def _lines(text: str) -> list[_Line]:
    out: list[_Line] = []
    rows: list[str] = []
    raws = _raw_lines(text)
    spans = _json_spans(raws) if any("{" in raw for raw in raws) else {}
    i = 0
    while i < len(raws):
        raw = raws[i]
        if _TABLE_ROW.match(raw):
            rows.append(raw)
            i += 1
            continue
        if rows:
            out.extend(_table_lines(rows))
            rows = []
        if i in spans:
            end, data = spans[i]
            out.extend(_json_lines(data))
            i = end + 1
            continue
        out.extend(_split_fields(_line(raw)))
        i += 1
    if rows:
        out.extend(_table_lines(rows))
    return out


_FIELD_KINDS = ("level", "escalation", "disposition", "diagnoses")
_KNOWN_KINDS = (*_FIELD_KINDS, "other")
_LABEL = re.compile(r"^(?P<label>[^\W\d_][^:]{0,60}?)\s*:\s*(?P<value>.*)$")
_ARROWS = "\u2192\u21d2\u2794\u279c\u27a1\u27f6"
_DASH_LABEL = re.compile(rf"^(?P<label>[^\W\d_][^:\u2013\u2014{_ARROWS}|]{{0,40}}?)"
                         rf"\s*(?:\s[-\u2013\u2014]|-->|->|=>|[{_ARROWS}])\s+(?P<value>.*)$")
_LABEL_KINDS = (
    ("level", re.compile(r"^(?:final |overall |my )?(?:esi |ctas |urgency )?(?:triage|acuity|esi|ctas|level|priority"
                         r"|emergency severity index|(?:[a-z]+ ){0,4}(?:triage|acuity)(?: and acuity)? (?:scale|system)"
                         r"|triage category|category)"
                         r"(?: (?:level|category|score|priority|acuity|esi|ctas))*$")),
    ("escalation", re.compile(r"^r$|^(?:recommended |suggested |triage )?(?:escalation|recommendation"
                              r"|level of care|care level|urgency|where to go|action|care setting|how urgent"
                              r"(?: is (?:it|this))?|what kind of care|type of care|what to do next)"
                              r"(?: ?(?:/|and|&) ?(?:escalation|disposition|urgency))?(?: level| category)?$")),
    ("disposition", re.compile(r"^(?:recommended |suggested |triage )?(?:disposition|means of care|how to get there"
                               r"|mode of transport|transport|route to care|care pathway|pathway|who to see)$")),
    ("diagnoses", re.compile(r"^(?:(?:most|more|less) )?(?:likely |working |differential |provisional |possible "
                             r"|leading |top |primary |suspected |main |clinical |key |ranked |probable )?"
                             r"(?:diagnos[ie]s|differentials?|ddx|dx|impression|causes?|conditions?)"
                             r"(?: ?(?:/|and|&) ?(?:differentials?|diagnos[ie]s))?"
                             r"(?: (?:to consider|to rule out|considered))?(?: in order(?: of likelihood)?| ranked)?$"
                             r"|^(?:most likely|likely|probable|probably|possible|likely (?:cause|source))$"
                             r"|^(?:probable|likely|suspected) problem$"
                             # Spanish, Portuguese, French, German: "Diagnósticos probables", "Diagnostic", "Diagnose"
                             r"|^(?:verdachts|arbeits)?(?:diagn[oó]stic(?:o|os|s)?|diagnosen?)(?: (?:probables?"
                             r"|principal(?:es)?|diferencial|diff[ée]rentiel|provis[oó]rio|provisoire|probable))?$"
                             r"|^what (?:i think|we think|it (?:might|could|probably) be|it (?:probably|likely) is"
                             r"|this (?:is|might be|could be))"
                             r"(?: (?:it is|is going on|is happening|this is))?$")),
)
# Labels that end a field's list: what follows the diagnoses in the protocol and in models' habits.
_OTHER_LABEL = re.compile(
    r"^(?:advice|plan|recommendations|red flags?|warning signs|safety[ -]?net\w*|next steps?|what to do|reasoning"
    r"|rationale|why|follow[ -]?up|treatment|management|instructions|home care|self[ -]?care|summary|key findings"
    r"|notes?|important|watch for|when to|return precautions|in the meantime|immediate|precautions|seek|other|p$"
    r"|also consider|tips|supporting|explanation|disclaimer)\b")
_ADVICE_LABEL = re.compile(r"^(?:advice|plan|p|recommendations|next steps?|what to do(?: now)?|action plan)$")


@dataclass(frozen=True)
class _Field:
    kind: str  # one of _KNOWN_KINDS, or "label" for any other short label
    label: str
    value: str


def _norm_label(label: str) -> str:
    label = re.sub(r"\([^)]*\)", " ", label.lower()).replace("_", " ")
    label = re.sub(r"^\s*step \d{1,2}\s*[-\u2013\u2014:.]\s*", "", label)  # "Step 3 – What it probably is"
    return " ".join(re.sub(r"[^\w/&' -]", " ", label).split()).strip(" -")


@functools.lru_cache(maxsize=8192)  # pure; the reader asks about the same lines many times per reply
def _label_kind(label: str) -> str | None:
    # "Diagnosis 1", "Differential #2" (not "ESI 1": a level is a value)
    name = re.sub(r"^(diagnos[ie]s|differential|ddx|dx)\s+#?\d{1,2}$", r"\1", _norm_label(label))
    if not name:
        return None
    for kind, pattern in _LABEL_KINDS:
        if pattern.match(name):
            return kind
    if _OTHER_LABEL.match(name):
        return "other"
    return "label" if len(name.split()) <= 5 else None


_VERB_LABEL = re.compile(r"^(?P<label>(?:(?:my|the|working|likely|main) )?(?:differential(?: diagnosis)?|diagnos[ie]s"
                         r"|impression|triage level|escalation|disposition))\s+(?:includes?|is|are|would be|=)\s+"
                         r"(?P<value>.+)$", re.IGNORECASE)


def _argument(value: str) -> str:
    """A ``key=value`` value as text: ``"self_care",`` is self_care, ``["A", "B"]`` is ``A; B``."""
    value = value.strip().rstrip(",").strip()
    if value.startswith("[") and value.endswith("]"):
        return "; ".join(v.strip().strip("\"'") for v in value[1:-1].split(",") if v.strip())
    return value.strip("\"'")


def _field(line: _Line) -> _Field | None:
    """The field a line starts, if any: ``Label: value``, ``Label - value``, ``Label includes value``, a label alone."""
    return _body_field(line.body)


@functools.lru_cache(maxsize=8192)
def _body_field(body: str) -> _Field | None:
    m = _LABEL.match(body)
    if m and (kind := _label_kind(m["label"])):
        return _Field(kind, m["label"], m["value"].strip())
    for pattern in (_DASH_LABEL, _VERB_LABEL, _EQUALS_LABEL):
        m = pattern.match(body)
        if m and (kind := _label_kind(m["label"])) in _FIELD_KINDS:
            return _Field(kind, m["label"], _argument(m["value"]) if pattern is _EQUALS_LABEL else m["value"].strip())
    kind = _label_kind(body)  # "### Escalation": the value is on the next lines
    if kind is not None and (kind in _FIELD_KINDS or (kind == "other" and len(body.split()) <= 4)):
        return _Field(kind, body, "")
    return None


def _fields(section: list[_Line]) -> list[tuple[int, _Field]]:
    return [(j, f) for j, line in enumerate(section) if (f := _field(line)) is not None]


def _has_value(field: _Field) -> bool:
    """A value beyond a qualifier: "Diagnoses (most likely first):" puts its list on the next lines."""
    return bool(re.sub(r"\([^)]*\)", "", field.value).strip(" :-\u2013\u2014"))


def _block(section: list[_Line], j: int) -> tuple[list[_Line], int]:
    """The lines that continue the field on ``section[j]`` and the index after them.

    Detail bullets under an item are left out. A list or, for a field with no value of its own, a paragraph; it
    ends at the next field, heading, paragraph after a blank line, or an item outdented past the list.
    """
    head, field = section[j], _field(section[j])
    has_value = field is not None and _has_value(field)
    lines: list[_Line] = []
    item_indent: int | None = None
    blank = False
    k = j + 1
    for k in range(j + 1, len(section)):
        line = section[k]
        if not line.body:
            blank = True
            continue
        own = _field(line)
        # "- Most likely: Gout" inside a differential is an item, not the next field
        item = field is not None and field.kind == "diagnoses" and _QUALIFIER_LABEL.match(line.body) is not None
        if line.heading or (own is not None and own.kind in _KNOWN_KINDS and not item):
            break
        if line.listed:
            nested = head.listed and line.indent > head.indent
            if has_value and not nested:  # "Diagnoses: X" then a list: another list
                break
            item_indent = line.indent if item_indent is None else item_indent
            if line.indent < item_indent:
                break
            if line.indent == item_indent:
                lines.append(line)
        elif blank or has_value or lines:  # the first line is the value even if it reads "Emergency: call 999"
            break
        else:
            lines.append(line)
        blank = False
    else:
        k = len(section)
    return lines, k


def _field_text(section: list[_Line], j: int, field: _Field) -> str:
    return field.value if _has_value(field) else " ".join(line.body for line in _block(section, j)[0])


# "Most likely: X", "Less likely: Y", "Must rule out: Z" put the name after the colon
_QUALIFIER_LABEL = re.compile(
    r"^(?:(?:most|more|less|very)\s+)?(?:likely|probable|possible|unlikely|consider|also consider|leading|primary"
    r"|top|main|secondary|alternative|differential|must rule out|rule out|r/o|can'?t miss|cannot miss"
    r"|must not miss|don'?t miss|red flag|others?)(?:\s+(?:diagnosis|cause|concern|consideration|possibilit(?:y|ies)"
    r"|alternatives?|to exclude|to consider|to rule out))?\s*:\s*", re.IGNORECASE)
