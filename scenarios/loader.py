"""Load scenario YAML files into :class:`~scenarios.schema.Scenario`, with errors a user can act on.

Every error names the file, the YAML line, the field path (``information_tree[2].triggers``) and
what was expected, in one paragraph. The bundled library lives in ``scenarios/library/*.yaml``.

What a scenario file may be (refused otherwise, before or while parsing, each with its own error):

* a regular file (not a folder, FIFO or device; a symlink is followed, a symlink loop is refused) of
  at most ``MAX_SCENARIO_BYTES`` (1 MiB; the library's largest file is ~8 KB), checked before
  anything is read;
* UTF-8 text (a leading byte-order mark is ignored), not empty, without NUL bytes;
* one YAML document, nested at most ``MAX_DEPTH`` (50) mappings/sequences deep, without aliases
  (``*name``: a few lines of anchors and aliases can expand to gigabytes, and a scenario never needs
  one) and without a key given twice in one mapping (YAML would silently keep the last one).

The checks and the parse (one pass of libyaml, composed iteratively so deep nesting never recurses) are the
ones every file the project reads goes through (``scenarios._files``); this module words their problems for a
scenario file. The nodes are kept for the line numbers of validation errors.

``load_dir`` loads every ``*.yaml`` / ``*.yml`` of a folder; ``load_dir_each`` does the same but
returns every file's error instead of raising on the first, for ``encsim scenarios validate``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from scenarios._files import (
    MAX_FILE_BYTES,
    FileProblem,
    decode_checked,
    parse_yaml_checked,
    read_bytes_checked,
)
from scenarios.errors import UserError
from scenarios.schema import RubricFile, Scenario

MAX_SCENARIO_BYTES = MAX_FILE_BYTES


RUBRICS_SUFFIX = ".rubrics.yaml"  # rubric files (RubricFile) beside scenarios; not scenarios themselves


class ScenarioError(UserError):
    """A scenario file that cannot be used; the message says where and how to fix it."""


@dataclass(frozen=True)
class LoadedScenario:
    """A scenario as loaded: the validated scenario, the file it came from and the sha256 of its bytes."""

    scenario: Scenario
    path: Path
    sha256: str


def library_dir() -> Path:
    """The folder of the scenario library shipped with the package."""
    return Path(str(resources.files("scenarios") / "library"))


def _field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _line_of(node: yaml.Node | None, loc: tuple[int | str, ...]) -> int | None:
    """1-based line of the deepest YAML node that ``loc`` reaches."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            nxt = None
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.value == part:
                    nxt = value
                    break
            if nxt is None:
                return line
            node = nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            return line
        line = node.start_mark.line + 1
    return line


def _located(err: dict[str, Any]) -> tuple[tuple[int | str, ...], str]:
    """Cross-field checks in the schema prefix their message with ``@relative.path:``; use it as loc."""
    loc, msg = tuple(err["loc"]), str(err["msg"]).removeprefix("Value error, ")
    if err["type"] == "value_error" and msg.startswith("@"):
        path, _, msg = msg[1:].partition(": ")
        loc += tuple(int(p) if p.isdigit() else p for p in path.split("."))
    return loc, msg


def _describe(err: dict[str, Any], msg: str) -> str:
    kind = err["type"]
    if kind == "missing":
        return "this required field is missing"
    if kind == "extra_forbidden":
        return "this field is not part of the scenario format (check the spelling; see scenarios/README.md)"
    if kind in ("literal_error", "enum"):
        return msg.replace("Input should be", "expected one of")
    if kind == "value_error":
        return msg
    got = err.get("input")
    shown = repr(got) if not isinstance(got, dict | list) else type(got).__name__
    return f"{msg[:1].lower()}{msg[1:]} (got {shown[:60]})"


def _scenario_error(problem: FileProblem, p: Path) -> ScenarioError:
    """A ``FileProblem`` of a scenario (or rubric) file as one paragraph: where, what, and the fix."""
    where = f"{p} line {problem.line}" if problem.line is not None else str(p)
    reason = problem.reason
    link = "Point the link at a scenario file or remove it."
    utf8 = "save the scenario file as UTF-8 YAML."
    messages = {
        "missing": f"{p}: no such scenario file. Check the path, or give a scenario id or suite name "
                   "(`encsim scenarios list` shows them).",
        "dangling": f"{p}: {reason}. {link}", "loop": f"{p}: {reason}. {link}",
        "unreadable": f"{p}: cannot read the scenario file ({reason}). Check the path and its permissions.",
        "folder": f"{p}: is a folder, not a scenario file; pass a folder to --scenarios or `encsim scenarios "
                  "validate` to load every *.yaml in it, or rename it.",
        "special": f"{p}: {reason}; a scenario is a YAML text file. Give the path of one.",
        "too_big": f"{p}: {reason.replace('this file', 'a scenario file')} (one scenario is a few KB). Check that "
                   "this is the right file; a data set of many cases is converted with `encsim import`, one file "
                   "per case.",
        "utf16": f"{p}: {reason}; {utf8}",
        "binary": f"{where}: {reason}. Check that this is the right file; a scenario is a UTF-8 YAML file.",
        "encoding": f"{where}: {reason}; {utf8}",
        "empty": f"{p}: the file is empty; a scenario file is a YAML mapping with keys like id, title, "
                 "patient_profile, information_tree and expected (see scenarios/README.md). Fill it in or remove it.",
        "yaml_tag": f"{where}: a YAML value this loader does not accept ({reason}). Scenario files use plain text, "
                    "numbers, lists and mappings; remove the tag or rewrite the value.",
        "yaml_value": f"{p}: {reason}. Quote it if it is text, or shorten it.",
        "depth": f"{where}: {reason} (a scenario needs about 5). Flatten it; an unclosed '[' or '{{' or a runaway "
                 "indentation often causes this.",
        "alias": f"{where}: {reason.replace('this file', 'scenario files')}. Write the value out in full.",
        "documents": f"{where}: {reason}; a scenario file holds exactly one. Put each scenario in its own file.",
        "duplicate_key": f"{where}: {reason}. Remove one of them or merge them.",
    }
    default = (f"{where}: not valid YAML ({reason}). Fix the indentation or quoting there; strings containing ': ' "
               "or '#' need quotes.")
    return ScenarioError(messages.get(problem.kind, default))


def _parse_yaml(text: str, path: Path) -> tuple[yaml.Node | None, Any]:
    """One pass of libyaml: the node tree (for line numbers) and the data constructed from it."""
    try:
        return parse_yaml_checked(text)
    except FileProblem as problem:
        raise _scenario_error(problem, path) from None


def parse_scenario(text: str, path: Path) -> Scenario:
    """Parse YAML text of one scenario; raise ScenarioError naming ``path`` on any problem."""
    node, data = _parse_yaml(text, path)
    if node is None:
        raise ScenarioError(f"{path}: holds no YAML data (only comments or blank lines); a scenario file is a YAML "
                            "mapping with keys like id, title, patient_profile, information_tree and expected. "
                            "See scenarios/README.md.")
    if not isinstance(data, dict):
        raise ScenarioError(
            f"{path}: a scenario file must be a YAML mapping with keys like id, title, patient_profile, "
            f"information_tree and expected, but it holds {type(data).__name__}. See scenarios/README.md."
        )
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors()[:5]:
            loc, msg = _located(dict(err))
            problems.append(f"line {_line_of(node, loc)}, field {_field_path(loc)}: {_describe(dict(err), msg)}")
        more = f" (and {exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
        raise ScenarioError(
            f"{path}: invalid scenario: " + "; ".join(problems) + more
            + ". Fix the field(s) named; scenarios/README.md documents every field."
        ) from None
    if scenario.rubrics_from is None:
        return scenario
    rubric_path = path.parent / scenario.rubrics_from
    extra = load_rubric_file(rubric_path)
    if extra.scenario_id != scenario.id:
        raise ScenarioError(f"{path}: rubrics_from {scenario.rubrics_from!r} holds the rubric of scenario "
                            f"{extra.scenario_id!r}, not {scenario.id!r}. Point rubrics_from to this scenario's "
                            f"rubric file (`encsim rubrics generate {path} --out DIR` writes it).")
    return scenario.model_copy(update={"rubrics": [*scenario.rubrics, *extra.rubrics]})


def load_rubric_file(path: str | Path) -> RubricFile:
    """Load and validate a rubric file (``*.rubrics.yaml``, written by ``encsim rubrics generate``).

    Args:
        path: The file.

    Returns:
        The rubric file's contents.

    Raises:
        ScenarioError: The file cannot be read or is not a rubric file; the message names it and the fix.
    """
    p = Path(path)
    raw = _read_scenario_bytes(p)
    text = _decode(raw, p)
    node, data = _parse_yaml(text, p)
    if not isinstance(data, dict):
        raise ScenarioError(f"{p}: a rubric file is a YAML mapping with generated_by, scenario_id, hash and rubrics "
                            "(a list of criteria). Regenerate it with `encsim rubrics generate`.")
    try:
        return RubricFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc, msg = _located(dict(err))
        raise ScenarioError(f"{p}: invalid rubric file: line {_line_of(node, loc)}, field {_field_path(loc)}: "
                            f"{_describe(dict(err), msg)}. Fix the field or regenerate the file with "
                            "`encsim rubrics generate`.") from None


def _read_scenario_bytes(p: Path) -> bytes:
    """The bytes of a scenario file, after the checks that need no parsing (kind of file, size)."""
    try:
        return read_bytes_checked(p, MAX_SCENARIO_BYTES)
    except FileProblem as problem:
        raise _scenario_error(problem, p) from None


def _decode(raw: bytes, p: Path) -> str:
    try:
        return decode_checked(raw)
    except FileProblem as problem:
        raise _scenario_error(problem, p) from None


def load_scenario(path: str | Path) -> LoadedScenario:
    """Load and validate one scenario file.

    Args:
        path: the scenario's YAML file.

    Returns:
        The scenario with its path and the sha256 of the file's bytes (which run.json records).

    Raises:
        ScenarioError: the file cannot be read or is not a valid scenario; the message names the file and
            what to fix.
    """
    p = Path(path)
    raw = _read_scenario_bytes(p)
    return LoadedScenario(parse_scenario(_decode(raw, p), p), p, hashlib.sha256(raw).hexdigest())


def scenario_files(folder: str | Path) -> list[Path]:
    """The ``*.yaml`` / ``*.yml`` entries of ``folder`` (not recursive, hidden names skipped), sorted.

    An error when it is not a folder or holds none.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ScenarioError(f"{folder}: no such folder. Give a folder of scenario files (*.yaml) or a file.")
    try:
        files = sorted(p for p in folder.iterdir() if p.name.endswith((".yaml", ".yml")) and
                       not p.name.startswith(".") and not p.name.endswith(RUBRICS_SUFFIX))
    except OSError as exc:
        raise ScenarioError(f"{folder}: cannot list the folder ({exc.strerror}). Check its permissions.") from None
    if not files:
        raise ScenarioError(f"{folder}: no scenario files (*.yaml or *.yml) in this folder. Give the folder that "
                            "holds them, or a scenario file.")
    return files


def rubric_files(folder: str | Path) -> list[Path]:
    """The rubric files (``*.rubrics.yaml``) of ``folder``, sorted; none when it is not a folder."""
    folder = Path(folder)
    try:
        return sorted(p for p in folder.iterdir() if p.name.endswith(RUBRICS_SUFFIX) and not p.name.startswith("."))
    except OSError:
        return []


def load_dir_each(folder: str | Path) -> tuple[list[LoadedScenario], list[ScenarioError]]:
    """Every scenario file of ``folder`` that loads, and one error per file that does not.

    A file whose id or canary another file already uses counts as not loading. Raises only when the folder
    itself is unusable.
    """
    loaded: list[LoadedScenario] = []
    errors: list[ScenarioError] = []
    for f in scenario_files(folder):
        try:
            loaded.append(load_scenario(f))
        except ScenarioError as exc:
            errors.append(exc)
    clashes = unique_problems(loaded)
    errors += clashes.values()
    return [s for s in loaded if s.path not in clashes], errors


def load_dir(folder: str | Path) -> list[LoadedScenario]:
    """Every ``*.yaml`` / ``*.yml`` in ``folder`` (not recursive), sorted by file name, checked as a set."""
    loaded, errors = load_dir_each(folder)
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise ScenarioError(f"{folder}: {len(errors)} of {len(loaded) + len(errors)} scenario files are invalid "
                            f"(`encsim scenarios validate {folder}` lists every one); the first: {errors[0]}")
    return loaded


def load_library() -> list[LoadedScenario]:
    """Every scenario of the library shipped with the package (``library_dir()``), checked as a set.

    Raises:
        ScenarioError: a library file is invalid, or two files share an id or canary.
    """
    return load_dir(library_dir())


def unique_problems(loaded: list[LoadedScenario]) -> dict[Path, ScenarioError]:
    """Scenario ids and canary strings must be unique across a set of scenarios.

    One error per file that reuses one (the first file to use it keeps it).
    """
    out: dict[Path, ScenarioError] = {}
    for attr in ("id", "canary"):
        seen: dict[str, Path] = {}
        for item in loaded:
            value = getattr(item.scenario, attr)
            if value in seen and seen[value] != item.path and item.path not in out:
                out[item.path] = ScenarioError(
                    f"{item.path}: {attr} {value!r} is also used by {seen[value]}; every scenario needs its own {attr}."
                )
            seen.setdefault(value, item.path)
    return out


def check_unique(loaded: list[LoadedScenario]) -> None:
    """Raise the first clash of :func:`unique_problems`."""
    for error in unique_problems(loaded).values():
        raise error


def resolve(specs: list[str]) -> list[LoadedScenario]:
    """Turn ``--scenarios`` values (file paths, folders, scenario ids, suite names, 'all') into scenarios."""
    library = load_library()
    by_id = {s.scenario.id: s for s in library}
    suites = sorted({s.scenario.suite for s in library})
    out: list[LoadedScenario] = []
    for spec in specs or ["all"]:
        for item in (x.strip() for x in spec.split(",")):
            if not item:
                continue
            p = Path(item)
            if item == "all":
                out.extend(library)
            elif item in by_id:
                out.append(by_id[item])
            elif item in suites:
                out.extend(s for s in library if s.scenario.suite == item)
            elif p.is_dir():
                out.extend(load_dir(p))
            elif p.suffix in (".yaml", ".yml") or p.exists():
                out.append(load_scenario(p))
            else:
                raise ScenarioError(
                    f"--scenarios {item!r}: not a scenario file, folder, scenario id or suite name. "
                    f"Suites are {', '.join(suites)}; `encsim scenarios list` shows the ids."
                )
    unique: dict[Path, LoadedScenario] = {}
    for s in out:
        unique.setdefault(s.path.resolve(), s)
    check_unique(list(unique.values()))
    if not unique:
        raise ScenarioError("--scenarios selected no scenarios; give a path, id or suite name.")
    return list(unique.values())
