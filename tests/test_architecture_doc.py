"""docs/ARCHITECTURE.md names only code that exists.

The rules of ``check_page`` (inline code spans only; fenced blocks are diagrams and are not read):

- A span is a *repository path* when it has no whitespace, contains ``/``, ends in ``.py``, ``.md``, ``.yaml``,
  ``.json`` or ``/``, and its first component is one of ``TOP_LEVEL`` (the folders of the repository). Such a path
  must exist relative to the repository root. A span with ``<`` or ``*`` (a pattern such as ``audio/<scenario>/``)
  or one under ``runs/`` names a run directory's files, not the repository's, and is not checked. The other
  run-directory files are named without such a folder in front (``run.json``) or end in another suffix
  (``audio/call.wav``), so they are never taken for repository paths.
- A span is a *dotted name* when it is ``a.b[.c...]`` (optionally followed by a call's ``(...)``) and its first
  component is one of ``PACKAGES``. The longest prefix that imports as a module is imported; the rest is looked up
  with ``getattr``, one component at a time. A prefix that fails to import for another reason than its own absence
  is reported as such.
- Every top-level package of the repository (a folder beside ``pyproject.toml`` with an ``__init__.py``) must be
  named as a backticked ``folder/``.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "ARCHITECTURE.md"
PACKAGES = ("scenarios", "sim", "scorers", "audio", "imaging", "review", "tui")
TOP_LEVEL = (*PACKAGES, "tests", "bench", "tools", "docs", ".ci")
PATH_ENDINGS = (".py", ".md", ".yaml", ".json", "/")

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_DOTTED = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(.*\))?")


def code_spans(text: str) -> list[str]:
    """The inline code spans of a Markdown text, fenced blocks left out."""
    return [m.group(1).strip() for m in _SPAN.finditer(_FENCE.sub("", text))]


def _is_repo_path(span: str) -> bool:
    if any(c.isspace() for c in span) or "/" not in span or not span.endswith(PATH_ENDINGS):
        return False
    if "<" in span or "*" in span or span.startswith("runs/"):
        return False
    return span.split("/", 1)[0] in TOP_LEVEL


def _missing_module(exc: ModuleNotFoundError, name: str) -> bool:
    """Whether ``exc`` says that ``name`` itself (or a package above it) does not exist."""
    return exc.name is not None and (name == exc.name or name.startswith(exc.name + "."))


def resolve_dotted(name: str) -> str | None:
    """None when ``name`` resolves (module prefix imported, the rest by getattr), else what is wrong."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            obj: object = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if _missing_module(exc, module_name):
                continue
            return f"importing {module_name} failed: {exc}"
        except Exception as exc:  # any import failure is a finding, not a crash of the check
            return f"importing {module_name} failed: {type(exc).__name__}: {exc}"
        for i, attr in enumerate(parts[cut:], cut):
            try:
                obj = getattr(obj, attr)
            except AttributeError:
                return f"{'.'.join(parts[:i])} has no attribute {attr!r}"
        return None
    return f"no module {parts[0]!r}"


def check_page(text: str, root: Path = ROOT) -> list[str]:
    """Every problem of a page's code spans: repository paths that do not exist, dotted names that do not resolve."""
    problems: list[str] = []
    seen: set[str] = set()
    for span in code_spans(text):
        if span in seen:
            continue
        seen.add(span)
        if _is_repo_path(span):
            if not (root / span.rstrip("/")).exists():
                problems.append(f"path `{span}` does not exist")
            continue
        match = _DOTTED.fullmatch(span)
        if match is None or match.group(1).split(".", 1)[0] not in PACKAGES:
            continue
        why = resolve_dotted(match.group(1))
        if why is not None:
            problems.append(f"name `{span}`: {why}")
    return problems


def top_level_packages(root: Path = ROOT) -> list[str]:
    """The folders beside pyproject.toml that are Python packages."""
    return sorted(p.name for p in root.iterdir() if p.is_dir() and (p / "__init__.py").is_file())


def test_every_named_path_and_name_exists() -> None:
    problems = check_page(PAGE.read_text(encoding="utf-8"))
    assert problems == [], "docs/ARCHITECTURE.md names code that does not exist:\n" + "\n".join(problems)


def test_every_top_level_package_is_named() -> None:
    found = top_level_packages()
    assert set(PACKAGES) <= set(found), found
    spans = set(code_spans(PAGE.read_text(encoding="utf-8")))
    unnamed = [name for name in found if f"{name}/" not in spans]
    assert unnamed == [], f"docs/ARCHITECTURE.md does not name these packages (as `name/`): {unnamed}"


def test_the_check_reports_what_does_not_exist() -> None:
    page = ("The runner is `sim/no_such_module.py` and the layout `sim.records.NoSuchThing`; `sim/runner.py`,\n"
            "`sim.records.RunLayout`, `scorers.score(result, scenario)` and `runs/<id>/run.json` are fine.\n"
            "```\nsim.nothing_here.in_a_diagram\n```\n")
    problems = check_page(page)
    assert len(problems) == 2, problems
    assert any("sim/no_such_module.py" in p for p in problems)
    assert any("sim.records.NoSuchThing" in p for p in problems)


def test_the_check_reads_spans_as_it_says() -> None:
    assert code_spans("a `sim/x.py` b\n```\n`sim/y.py`\n```\nc `tui/`") == ["sim/x.py", "tui/"]
    assert _is_repo_path("tools/llama_build.py") and _is_repo_path(".ci/") and _is_repo_path("scenarios/")
    assert not _is_repo_path("audio/<scenario>/<k>/") and not _is_repo_path("runs/x/run.json")
    assert not _is_repo_path("audio/call.wav") and not _is_repo_path("encsim run --processes N")
    assert resolve_dotted("sim.records.RunLayout.RUN_FILE") is None
    assert resolve_dotted("no_such_package.thing") is not None
