"""Loading a YAML or JSON file into a pydantic model, with the first problem as one paragraph.

``load_model_file(path, model, what=..., fix=..., error=...)`` reads the file (UTF-8), parses it (JSON for a
``.json`` file, else YAML; ``syntax`` overrides the suffix), validates it with ``model`` (a pydantic model class
or a ``TypeAdapter``) and returns the result. Any problem raises ``error`` (a subclass of
``scenarios.errors.UserError``) with one paragraph: the file, what is wrong and where, then the caller's fix::

    <path>: cannot read the lay table (no such file). <fix>
    <path>: not valid YAML (<problem> at line 3, column 5); cannot read the lay table. <fix>
    <path>: not a lay table at words.abdomen: <what is wrong> (and 2 more problems). <fix>

``what`` names what the file holds with its article ("a lay table"); the read messages say "the lay table".
``first_error_paragraph`` words the validation error. Scenario and rubric files have their own loader
(``scenarios.loader``: line numbers, up to five problems).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, TypeVar

import yaml
from pydantic import TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from scenarios.errors import UserError

__all__ = ["first_error_paragraph", "load_model_file"]

M = TypeVar("M")
Syntax = Literal["yaml", "json"]

# libyaml parses the 110 kB intent lexicon in ~0.13 s where the pure-Python loader takes ~1 s
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_model_file(path: str | Path, model: type[M] | TypeAdapter[M], *, what: str, fix: str,
                    error: type[UserError] = UserError, syntax: Syntax | None = None,
                    raise_missing: bool = False) -> M:
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

    Raises:
        UserError: (``error``) the file cannot be read, is not valid YAML / JSON, or does not validate.
        FileNotFoundError: the file does not exist and ``raise_missing`` is set.
    """
    adapter = _adapter(model)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        if raise_missing:
            raise
        raise error(f"{path}: cannot read {_definite(what)} (no such file). {fix}") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise error(f"{path}: cannot read {_definite(what)} ({reason}). {fix}") from None
    try:
        if (syntax or ("json" if Path(path).suffix.lower() == ".json" else "yaml")) == "json":
            return adapter.validate_json(text)
        try:
            data = yaml.load(text, Loader=_SAFE_LOADER)
        except (yaml.YAMLError, ValueError, OverflowError) as exc:  # ValueError: e.g. an int of 5000 digits
            raise error(f"{path}: not valid YAML ({_yaml_problem(exc)}); cannot read {_definite(what)}. "
                        f"{fix}") from None
        return adapter.validate_python(data)
    except ValidationError as exc:
        raise error(first_error_paragraph(exc, path, what, fix)) from None


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


def _yaml_problem(exc: Exception) -> str:
    """A YAML error in one line: the problem and where it is."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or getattr(exc, "reason", None) or str(exc).split(";")[0]
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return " ".join(f"{problem}{where}".split())[:200]


def _definite(what: str) -> str:
    """``a lay table`` -> ``the lay table`` (for "cannot read the lay table")."""
    for article in ("a ", "an "):
        if what.startswith(article):
            return "the " + what[len(article):]
    return what


def _adapter(model: type[M] | TypeAdapter[M]) -> TypeAdapter[M]:
    """``model`` as a ``TypeAdapter`` (for a model class: a few microseconds, it reuses the class's schema)."""
    return model if isinstance(model, TypeAdapter) else TypeAdapter(model)
