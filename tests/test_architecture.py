"""The seams of docs/ARCHITECTURE.md that import-linter cannot state (pyproject.toml holds the import table).

- Nothing outside a package imports its ``_``-prefixed modules: each package's ``__init__.py`` is its face.
- Importing a record type, the scorers or the dashboard never loads the code that drives an encounter.
- Only the dashboard loads Textual: not the review data (``review``), nor the commands that use it without the
  dashboard (``encsim annotations``, ``encsim judges``).
- No import cycle among the modules of ``review`` or ``tui``, TYPE_CHECKING imports included.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("scenarios", "sim", "scorers", "audio", "imaging", "review", "tui")
WATCHED = {"httpx", "aiohttp", "textual"}
"""Outside packages the faces must not load (see the never lists below)."""


def _owner(module: str) -> str | None:
    """The package that owns a private module (``scorers._judge`` -> ``scorers``), or None for a public one."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def test_owner_names_the_package_of_a_private_module() -> None:
    assert _owner("scorers._judge") == "scorers"
    assert _owner("scorers.evaluators._base") == "scorers.evaluators"
    assert _owner("sim.records._run") == "sim.records"
    assert _owner("sim.records") is None and _owner("sim.__init__") is None


def test_nothing_outside_a_package_imports_its_private_modules() -> None:
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    crossing = []
    for imported in sorted(graph.modules):
        owner = _owner(imported)
        if owner is None:
            continue
        for importer in sorted(graph.find_modules_that_directly_import(imported)):
            if importer != owner and not importer.startswith(owner + "."):
                crossing.append(f"{importer} imports {imported}")
    assert crossing == [], "import these names from the package's face instead:\n" + "\n".join(crossing)


@pytest.mark.parametrize(("face", "never"), [
    ("scorers", ("sim.encounter", "sim.agents", "sim.runner", "sim.store", "httpx", "aiohttp", "audio", "review", "tui",
                 "textual")),
    ("sim.records", ("sim.encounter", "sim.agents", "sim.runner", "sim.store", "httpx", "aiohttp", "scorers", "audio",
                     "review", "tui", "textual")),
    ("sim", ("sim.encounter", "sim.agents", "sim.runner", "sim.records", "httpx", "aiohttp", "textual")),
    ("review", ("sim.encounter", "sim.agents", "sim.runner", "sim.store", "httpx", "aiohttp", "audio", "imaging", "tui",
                "textual")),
    ("tui", ("sim.encounter", "sim.agents", "sim.runner", "sim.store", "httpx", "aiohttp", "audio")),
    ("imaging", ("sim", "scorers", "audio", "review", "tui", "textual")),
])
def test_importing_a_face_loads_none_of_the_engine(face: str, never: tuple[str, ...]) -> None:
    """At run time, not only in the import graph: the faces import lazily what they do not need."""
    code = (f"import sys, {face}; "
            f"print('\\n'.join(m for m in sys.modules if m.split('.')[0] in {set(PACKAGES) | WATCHED!r}))")
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    modules = loaded.stdout.split()
    assert face in modules
    bad = [m for m in modules if any(m == n or m.startswith(n + ".") for n in never)]
    assert bad == [], f"import {face} loaded {bad}"


def _import_statements(path: Path) -> list[str]:
    """Every absolute import statement of a module: at the top, under TYPE_CHECKING and inside its functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [ast.unparse(node) for node in ast.walk(tree)
            if isinstance(node, ast.Import) or (isinstance(node, ast.ImportFrom) and node.level == 0)]


@pytest.mark.parametrize("command", ["sim/cli/_annotations.py", "sim/cli/_judges.py"])
def test_the_review_commands_load_no_textual(command: str) -> None:
    """``encsim annotations`` and ``encsim judges`` read annotations and taxonomies without the dashboard.

    Each of the command module's imports runs, the lazy ones inside its handlers included; none loads Textual or
    the dashboard (the review data lives in ``review``).
    """
    statements = _import_statements(ROOT / command)
    assert any(s.startswith("from review import") for s in statements), statements
    code = "\n".join([*statements, "import sys",
                      "print('\\n'.join(m for m in sys.modules if m.split('.')[0] in ('textual', 'tui')))"])
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert loaded.stdout.split() == [], f"{command}'s imports loaded {loaded.stdout.split()}"


# Exceptions that never reach a user: caught where they are raised (a bad importer row becomes a skipped-row
# notice, a malformed reply a retry, the fail-fast trip the run's stop, a lost remote encounter an error record).
INTERNAL_EXCEPTIONS = {"scenarios._files.FileProblem", "scenarios.importers._common.RowError",
                       "sim.agents.chat._Malformed", "sim.fail_fast.Tripped", "sim.executors.base.EncounterLost"}


def test_every_error_a_user_can_cause_has_the_one_root() -> None:
    """One root (``scenarios.errors.UserError``), so the CLI catches it once (docs/ARCHITECTURE.md, Conventions)."""
    import importlib
    import inspect
    import pkgutil

    from scenarios.errors import UserError

    classes: dict[str, type] = {}
    for top in PACKAGES:
        package = importlib.import_module(top)
        names = [top, *(m.name for m in pkgutil.walk_packages(package.__path__, top + "."))]
        for name in names:
            module = importlib.import_module(name)
            for _, obj in inspect.getmembers(module, inspect.isclass):
                if issubclass(obj, BaseException) and obj.__module__.split(".")[0] in PACKAGES:
                    classes[f"{obj.__module__}.{obj.__qualname__}"] = obj
    assert len(classes) >= 20, sorted(classes)  # the walk found the packages' errors
    outside = sorted(n for n, c in classes.items() if not issubclass(c, UserError) and n not in INTERNAL_EXCEPTIONS)
    assert outside == [], f"subclass scenarios.errors.UserError (or sim.records.EncSimError): {outside}"
    assert INTERNAL_EXCEPTIONS <= set(classes), "an internal exception was renamed: update INTERNAL_EXCEPTIONS"


def test_the_cli_catches_the_root_once() -> None:
    from scenarios.errors import UserError
    from sim.cli._main import user_errors

    assert user_errors() == (UserError,)


def test_no_evaluator_module_imports_another() -> None:
    """Shared data (red-flag protocols, the drug lexicon) lives in data modules; an evaluator never imports a
    sibling evaluator for it (the lazy imports that avoided a cycle are gone)."""
    from scorers.evaluators import evaluator_names, get_evaluator

    evaluators = {type(get_evaluator(n)).__module__ for n in evaluator_names(builtin_only=True)}
    assert len(evaluators) == 5, evaluators
    graph = grimp.build_graph("scorers", cache_dir=None)
    found = sorted(f"{m} imports {other}" for m in evaluators for other in evaluators - {m}
                   if graph.direct_import_exists(importer=m, imported=other, as_packages=False))
    assert found == []
    assert {"scorers.evaluators._protocols", "scorers.evaluators._lexicon"} <= set(graph.modules)


def _cycles(adjacency: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(adjacency):
        if root in index:
            continue
        work = [(root, iter(sorted(adjacency[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(adjacency.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_cycles_finds_a_cycle_and_only_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set(), "c": {"b"}}) == []


def test_no_import_cycle_between_modules() -> None:
    """Between any two of our modules, imports go one way only: also imports inside functions and under
    TYPE_CHECKING (grimp sees both), so that no module needs another to be half-initialised (a screen of the
    dashboard reaches the app through the ``tui._dashboard.Dashboard`` protocol, never by importing ``tui._app``)."""
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    adjacency = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    assert _cycles(adjacency) == []
