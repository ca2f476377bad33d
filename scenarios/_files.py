"""Reading the files a user gives, safely, and loading a YAML or JSON file into a pydantic model.

Every file the project reads from a user (scenarios, rubric files, judges, taxonomies, labels, lay tables, run
records, import sources) goes through the same checks before its contents are used; what fails raises a
``FileProblem`` (``kind``: which check, ``reason``: in words, ``line``/``column`` when known), which each
caller words as one paragraph naming the file and the fix:

* ``read_bytes_checked``: a regular file (not a folder, FIFO or device; a symlink is followed, a loop or a
  dangling link is refused) of at most ``limit`` bytes (``MAX_FILE_BYTES``, 1 MiB, by default), checked before
  anything is read, and never more than ``limit + 1`` bytes read (``/dev/zero`` is refused, not read);
* ``decode_checked``: UTF-8 text (a leading byte-order mark is ignored; UTF-16 is named), without NUL bytes
  (a binary file), not empty;
* ``parse_yaml_checked``: one YAML document, nested at most ``MAX_DEPTH`` (50) mappings/sequences deep, without
  aliases (a few lines of anchors can expand to gigabytes) and without a key given twice in one mapping (YAML
  would silently keep the last one). libyaml's events are composed into nodes here, iteratively, so deep
  nesting never recurses; the nodes are then constructed into data by the safe constructor;
* ``parse_json_checked``: JSON nested at most ``MAX_DEPTH`` deep, without ``NaN`` / ``Infinity`` (not JSON,
  though Python and pydantic accept them, and a NaN score poisons every mean).

``load_model_file(path, model, what=..., fix=..., error=...)`` applies them all, validates the data with
``model`` (a pydantic model class or a ``TypeAdapter``) and returns the result; any problem raises ``error`` (a
subclass of ``scenarios.errors.UserError``) with one paragraph: the file, what is wrong and where, then the
caller's fix::

    <path>: cannot read the lay table (no such file). <fix>
    <path>: not valid YAML (<problem> at line 3, column 5); cannot read the lay table. <fix>
    <path>: not a lay table at words.abdomen: <what is wrong> (and 2 more problems). <fix>

``what`` names what the file holds with its article ("a lay table"); the read messages say "the lay table".
``first_error_paragraph`` words the validation error. Scenario and rubric files word the same problems their own
way (``scenarios.loader``: line numbers, up to five problems).
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import TypeAdapter, ValidationError
from pydantic_core import ErrorDetails
from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

from scenarios.errors import UserError

__all__ = ["MAX_DEPTH", "MAX_FILE_BYTES", "FileProblem", "decode_checked", "first_error_paragraph",
           "load_model_file", "non_finite_problem", "parse_json_checked", "parse_yaml_checked", "problem_paragraph",
           "read_bytes_checked"]

M = TypeVar("M")
Syntax = Literal["yaml", "json"]

MAX_FILE_BYTES = 1024 * 1024
MAX_DEPTH = 50
# libyaml parses the 110 kB intent lexicon in ~0.13 s where the pure-Python loader takes ~1 s
_SAFE_LOADER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_NON_FINITE = re.compile(r"NaN|Infinity|[eE][+]?\d{3}")  # 1e400 is a float too large: inf
_NON_FINITE_BYTES = re.compile(rb"NaN|Infinity|[eE][+]?\d{3}")


class FileProblem(Exception):
    """A file that fails a check of this module, before its contents are validated.

    Attributes:
        kind: Which check: missing, dangling, loop, folder, special, unreadable, too_big, utf16, binary,
            encoding, empty, yaml_syntax, yaml_tag, yaml_value, no_data, depth, alias, documents, duplicate_key,
            json_syntax, non_finite.
        reason: What is wrong, in words, without the file's name.
        line: The 1-based line, when known.
        column: The 1-based column, when known.
    """

    def __init__(self, kind: str, reason: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(reason)
        self.kind, self.reason, self.line, self.column = kind, reason, line, column

    @property
    def where(self) -> str:
        """`` at line 3, column 5`` (or less), for a message that names the place after the problem."""
        if self.line is None:
            return ""
        return f" at line {self.line}" + (f", column {self.column}" if self.column is not None else "")


def read_bytes_checked(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``path``, after the checks that need no parsing: the kind of file, then its size.

    Raises:
        FileProblem: missing, dangling, loop, folder, special, unreadable or too_big.
    """
    try:
        info = path.stat()  # follows a symlink
    except FileNotFoundError:
        if path.is_symlink():
            raise FileProblem("dangling", f"a symbolic link to a file that does not exist "
                                          f"({os.readlink(path)})") from None
        raise FileProblem("missing", "no such file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise FileProblem("loop", "a symbolic link that points back to itself (a link loop)") from None
        raise FileProblem("unreadable", str(exc.strerror)) from None
    if stat.S_ISDIR(info.st_mode):
        raise FileProblem("folder", "Is a directory")
    if not stat.S_ISREG(info.st_mode):
        raise FileProblem("special", "not a regular file (a pipe, socket or device)")
    too_big = FileProblem("too_big", f"{info.st_size:,} bytes, larger than the {_size(limit)} ({limit:,} bytes) "
                                     "this file may be")
    if info.st_size > limit:
        raise too_big
    try:
        with open(path, "rb") as fh:
            raw = fh.read(limit + 1)
    except OSError as exc:
        raise FileProblem("unreadable", str(exc.strerror)) from None
    if len(raw) > limit:  # it grew since stat
        raise too_big
    return raw


def _size(limit: int) -> str:
    return f"{limit // 1024 // 1024} MiB" if limit >= 1024 * 1024 else f"{limit // 1024} KiB"


def decode_checked(raw: bytes, *, allow_empty: bool = False) -> str:
    """``raw`` as text: UTF-8 (a leading byte-order mark dropped), no NUL byte, not blank unless ``allow_empty``.

    Raises:
        FileProblem: utf16, binary, encoding or empty.
    """
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise FileProblem("utf16", "UTF-16 text (by its byte-order mark), not UTF-8")
    if b"\x00" in raw:
        line = raw.count(b"\n", 0, raw.index(b"\x00")) + 1
        raise FileProblem("binary", "a binary file (it contains NUL bytes), not text", line)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise FileProblem("encoding", f"not UTF-8 text (byte 0x{raw[exc.start]:02x} cannot start a UTF-8 character; "
                                      "Latin-1 or Windows-1252?)", line) from None
    if not allow_empty and not text.strip():
        raise FileProblem("empty", "the file is empty")
    return text


def parse_yaml_checked(text: str, *, aliases: bool = False) -> tuple[yaml.Node | None, Any]:
    """One pass of libyaml: the node tree (for line numbers) and the data constructed from it.

    ``aliases``: accept anchors and aliases (only for the project's own files, such as the intent lexicon, which
    ``yaml.safe_dump`` writes with them).

    Raises:
        FileProblem: yaml_syntax, yaml_tag, yaml_value, depth, alias, documents or duplicate_key.
    """
    loader = _SAFE_LOADER(text)
    try:
        node = _compose(loader, aliases)
        return node, (loader.construct_document(node) if node is not None else None)
    except yaml.YAMLError as exc:
        raise _yaml_problem(exc, text) from None
    except (ValueError, OverflowError) as exc:  # e.g. an integer of more than 4300 digits
        reason = " ".join(str(exc).split(";")[0].split())[:200]
        raise FileProblem("yaml_value", f"a value cannot be read as YAML ({reason})") from None
    finally:
        loader.dispose()


def _yaml_problem(exc: yaml.YAMLError, text: str) -> FileProblem:
    mark = getattr(exc, "problem_mark", None)
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
    position = getattr(exc, "position", None)  # a ReaderError (a character YAML does not allow) has no mark
    if line is None and isinstance(position, int):
        line = text.count("\n", 0, position) + 1
    problem = getattr(exc, "problem", None) or getattr(exc, "reason", None) or str(exc).split(";")[0]
    if isinstance(exc, yaml.reader.ReaderError):
        problem = f"character #x{exc.character:04x} is not allowed: {exc.reason}"
    kind = "yaml_tag" if isinstance(exc, yaml.constructor.ConstructorError) else "yaml_syntax"
    return FileProblem(kind, " ".join(str(problem).split())[:200], line, column)


def _compose(loader: Any, aliases: bool = False) -> yaml.Node | None:
    """The one document of ``loader``'s stream as nodes, built iteratively from its events.

    Refuses a second document, nesting deeper than ``MAX_DEPTH``, aliases (unless ``aliases``) and a key given
    twice in one mapping.
    """
    root: yaml.Node | None = None
    anchors: dict[str, yaml.Node] = {}
    stack: list[_Open] = []
    documents = 0
    while True:
        event = loader.get_event()
        if event is None:
            return root
        line = event.start_mark.line + 1
        kind = type(event)
        node: yaml.Node
        if kind is ScalarEvent:
            tag = event.tag if event.tag not in (None, "!") else loader.resolve(yaml.ScalarNode, event.value,
                                                                                event.implicit)
            node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
            if event.anchor is not None:
                anchors[event.anchor] = node
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            if len(stack) >= MAX_DEPTH:
                raise FileProblem("depth", f"the YAML is nested more than {MAX_DEPTH} levels deep", line)
            node_class = yaml.MappingNode if kind is MappingStartEvent else yaml.SequenceNode
            tag = event.tag if event.tag not in (None, "!") else loader.resolve(node_class, None, event.implicit)
            stack.append((node_class(tag, [], event.start_mark, None, flow_style=event.flow_style), [None], {}))
            if event.anchor is not None:
                anchors[event.anchor] = stack[-1][0]
            continue
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            node = stack.pop()[0]
            node.end_mark = event.end_mark
        elif kind is AliasEvent and aliases and event.anchor in anchors:
            node = anchors[event.anchor]
        elif kind is AliasEvent:
            raise FileProblem("alias", f"YAML alias *{event.anchor}: this file may not use anchors and aliases "
                                       "(&name / *name), which can expand a few lines into gigabytes", line)
        elif kind is DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise FileProblem("documents", "a second YAML document ('---')", line)
            continue
        else:  # stream and document ends
            continue
        if not stack:
            root = node
            continue
        _attach(stack[-1], node)


_Open = tuple[yaml.Node, list[yaml.Node | None], dict[tuple[str, str], int]]  # a node, its pending key, its keys


def _attach(parent_entry: _Open, node: yaml.Node) -> None:
    """Add ``node`` to the open collection: an item, a mapping's key, or the value of its pending key."""
    parent, pending, seen = parent_entry
    if not isinstance(parent, yaml.MappingNode):
        parent.value.append(node)
        return
    if pending[0] is None:
        pending[0] = node
        return
    key = pending[0]
    if isinstance(key, yaml.ScalarNode):
        first = seen.get((key.tag, key.value))
        seen.setdefault((key.tag, key.value), key.start_mark.line + 1)
        if first is not None:
            shown = key.value if len(key.value) <= 60 else key.value[:57] + "..."
            raise FileProblem("duplicate_key", f"the key {shown!r} is given twice in one mapping (first at line "
                                               f"{first}); YAML would silently keep only the last value",
                              key.start_mark.line + 1)
    parent.value.append((key, node))
    pending[0] = None


def _refuse_constant(name: str) -> Any:
    raise FileProblem("non_finite", f"{name} is not a number JSON allows (give a finite number, or null)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise FileProblem("non_finite", f"{text[:40]} is too large a number (give a finite number, or null)")
    return value


def parse_json_checked(text: str | bytes) -> Any:
    """``text`` parsed as JSON, nested at most ``MAX_DEPTH`` deep, without NaN or Infinity.

    Raises:
        FileProblem: json_syntax, depth or non_finite.
    """
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise FileProblem("depth", f"the JSON is nested more than {MAX_DEPTH} levels deep") from None
    except json.JSONDecodeError as exc:
        raise FileProblem("json_syntax", exc.msg, exc.lineno, exc.colno) from None
    except UnicodeDecodeError as exc:
        raise FileProblem("encoding", f"not UTF-8 text ({exc.reason})") from None
    if _deeper_than(data, MAX_DEPTH):
        raise FileProblem("depth", f"the JSON is nested more than {MAX_DEPTH} levels deep")
    return data


def non_finite_problem(text: str | bytes) -> str | None:
    """Why ``text`` (one JSON document) must be refused for a NaN or Infinity in it, or None.

    Cheap for the usual line: only a line holding the letters ``NaN`` / ``Infinity`` is parsed again (they may
    be words inside a string).
    """
    found = _NON_FINITE.search(text) if isinstance(text, str) else _NON_FINITE_BYTES.search(text)
    if found is None:
        return None
    try:
        json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except FileProblem as exc:
        return exc.reason
    except (ValueError, RecursionError):  # not JSON: the caller's own parse says so
        return None
    return None


def _deeper_than(data: Any, limit: int) -> bool:
    """Whether ``data`` holds lists / dicts nested more than ``limit`` deep (iteratively: no recursion)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def load_model_file(path: str | Path, model: type[M] | TypeAdapter[M], *, what: str, fix: str,
                    error: type[UserError] = UserError, syntax: Syntax | None = None,
                    raise_missing: bool = False, limit: int = MAX_FILE_BYTES, aliases: bool = False) -> M:
    """The contents of ``path`` validated by ``model``.

    Args:
        path: The file; the messages name it as given.
        model: A pydantic model class, or a ``TypeAdapter`` for any other type (``list[Entry]``).
        what: What the file holds, with its article: "a lay table", "an intent lexicon".
        fix: The sentence(s) that end every message: how to fix the file or what to do instead.
        error: The ``UserError`` subclass to raise.
        syntax: ``"json"`` or ``"yaml"``; None: JSON for a ``.json`` file, else YAML.
        raise_missing: Let ``FileNotFoundError`` through for a file that does not exist (a caller whose
            default is an empty record), instead of raising ``error``.
        limit: The largest file accepted, in bytes.
        aliases: Accept YAML anchors and aliases (the project's own files only: see ``parse_yaml_checked``).

    Raises:
        UserError: (``error``) the file cannot be read, fails a check of the module docstring, is not valid
            YAML / JSON, or does not validate.
        FileNotFoundError: the file does not exist and ``raise_missing`` is set.
    """
    adapter = _adapter(model)
    as_json = (syntax or ("json" if Path(path).suffix.lower() == ".json" else "yaml")) == "json"
    try:
        text = decode_checked(read_bytes_checked(Path(path), limit), allow_empty=True)
        if as_json:
            parse_json_checked(text)  # the checks; pydantic then parses it again, in its JSON mode
            return adapter.validate_json(text)
        return adapter.validate_python(parse_yaml_checked(text, aliases=aliases)[1])
    except FileProblem as problem:
        if problem.kind == "missing" and raise_missing:
            raise FileNotFoundError(errno.ENOENT, "no such file", str(path)) from None
        raise error(problem_paragraph(problem, path, what, fix, "JSON" if as_json else "YAML")) from None
    except ValidationError as exc:
        raise error(first_error_paragraph(exc, path, what, fix)) from None


_FILE_KINDS = frozenset({"missing", "dangling", "loop", "folder", "special", "unreadable", "too_big"})
_SYNTAX_KINDS = frozenset({"yaml_syntax", "yaml_tag", "yaml_value", "json_syntax"})


def problem_paragraph(problem: FileProblem, path: str | Path, what: str, fix: str, syntax: str = "YAML") -> str:
    """One paragraph for a ``FileProblem`` of ``path``, which holds ``what`` (with its article), ending in ``fix``.

    Args:
        problem: The problem.
        path: The file, as the message names it.
        what: What the file holds: "a taxonomy file".
        fix: The sentence(s) that end the message.
        syntax: "YAML" or "JSON", for a syntax error.

    Returns:
        ``<path>: cannot read the X (no such file). <fix>``, ``<path>: not valid JSON (<problem> at line 2,
        column 3); cannot read the X. <fix>`` or ``<path>: cannot read the X: <problem> at line 4. <fix>``.
    """
    if problem.kind in _FILE_KINDS:
        return f"{path}: cannot read {_definite(what)} ({problem.reason}). {fix}"
    if problem.kind in _SYNTAX_KINDS:
        return f"{path}: not valid {syntax} ({problem.reason}{problem.where}); cannot read {_definite(what)}. {fix}"
    return f"{path}: cannot read {_definite(what)}: {problem.reason}{problem.where}. {fix}"


def first_error_paragraph(exc: ValidationError, path: str | Path, what: str, fix: str) -> str:
    """One paragraph for the first error of ``exc``: the file, the field path, what is wrong, and ``fix``.

    A JSON syntax error (pydantic's ``json_invalid``) is worded as ``load_model_file`` words a YAML one.
    """
    err = exc.errors()[0]
    if err["type"] == "json_invalid":
        reason = str(err.get("ctx", {}).get("error", err["msg"]))
        return f"{path}: not valid JSON ({reason}); cannot read {_definite(what)}. {fix}"
    where = ".".join(str(part) for part in err["loc"])
    more = exc.error_count() - 1
    tail = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    return f"{path}: not {what}{f' at {where}' if where else ''}: {_describe(err)}{tail}. {fix}"


def _describe(err: ErrorDetails) -> str:
    """What is wrong with the value at one error's location, in words."""
    kind, msg = err["type"], str(err["msg"]).rstrip(".")
    if kind == "missing":
        return "this required field is missing"
    if kind == "extra_forbidden":
        return "this field is not part of the format (check its spelling)"
    if kind in ("value_error", "assertion_error"):
        return msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    got = err.get("input")
    shown = type(got).__name__ if isinstance(got, dict | list) else repr(got)
    if kind in ("literal_error", "enum"):
        msg = msg.replace("Input should be", "expected one of")
    return f"{msg[:1].lower()}{msg[1:]} (got {shown[:60]})"


def _definite(what: str) -> str:
    """``a lay table`` -> ``the lay table`` (for "cannot read the lay table")."""
    for article in ("a ", "an "):
        if what.startswith(article):
            return "the " + what[len(article):]
    return what


def _adapter(model: type[M] | TypeAdapter[M]) -> TypeAdapter[M]:
    """``model`` as a ``TypeAdapter`` (for a model class: a few microseconds, it reuses the class's schema)."""
    return model if isinstance(model, TypeAdapter) else TypeAdapter(model)
