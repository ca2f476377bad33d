"""The evaluator registry: register by name, look up by name, load a user's module, run a set.

Built-in evaluators register themselves when ``scorers.evaluators`` is imported. A user's
evaluator registers when the module that defines it is imported, which ``load_evaluator_module``
does for a dotted module name (``my_pkg.my_evals``) or a file path (``path/to/evals.py``).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from scenarios.schema import Scenario
from scorers.evaluators._base import EvaluatorError
from sim.records import ConversationResult, EvaluatorResult

T = TypeVar("T", bound=type)

_REGISTRY: dict[str, type] = {}
_BUILTIN: list[str] = []  # in registration order, which is the order run_evaluators runs them
_PACKAGE = "scorers.evaluators"
_FLAG = "--evaluator-module PATH_OR_MODULE"
_recorded: list[str] = []  # names registered since load_evaluator_module started an import


# Modules whose contents moved into the types leaf ``sim.records`` (issue 15); a user's evaluator file written
# against the old paths is told where the names went.
_MOVED_TO_RECORDS = ("sim.result", "sim.events", "sim.redact", "sim.errors", "scorers._types")


def _moved_hint(exc: BaseException) -> str:
    if isinstance(exc, ModuleNotFoundError) and exc.name in _MOVED_TO_RECORDS:
        return f"{exc.name} is now part of sim.records: import the same names from sim.records. "
    return ""


def _identity(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def register_evaluator(name: str, *, replace: bool = False) -> Callable[[T], T]:
    """Class decorator: register ``cls`` under ``name`` and set ``cls.name = name``.

    The class must be constructible with no arguments and have an ``evaluate(result, scenario)``
    method returning an ``EvaluatorResult``. Registering a *different* class under a name that is
    taken raises ``EvaluatorError`` unless ``replace=True``; re-importing the same module (the
    same class path) simply re-registers it.
    """
    if not name or not name.replace("_", "").replace("-", "").isalnum():
        raise EvaluatorError(f"evaluator name {name!r} is not valid: use letters, digits, '_' or '-' "
                             "(for example @register_evaluator('my_check')).")

    def decorate(cls: T) -> T:
        if not callable(getattr(cls, "evaluate", None)):
            raise EvaluatorError(f"class {_identity(cls)} was registered as evaluator {name!r} but has no "
                                 "evaluate(result, scenario) method; add one that returns an EvaluatorResult.")
        old = _REGISTRY.get(name)
        if old is not None and _identity(old) != _identity(cls) and not replace:
            raise EvaluatorError(f"evaluator name {name!r} is already used by {_identity(old)}, so "
                                 f"{_identity(cls)} cannot register under it; choose another name, or pass "
                                 f"replace=True to @register_evaluator if you mean to override it.")
        cls.name = name  # type: ignore[attr-defined]
        _REGISTRY[name] = cls
        _recorded.append(name)
        if cls.__module__.startswith(_PACKAGE + ".") and name not in _BUILTIN:
            _BUILTIN.append(name)
        return cls

    return decorate


def evaluator_names(*, builtin_only: bool = False) -> list[str]:
    """Registered names: the built-ins first (in run order), then the others alphabetically."""
    extra = sorted(n for n in _REGISTRY if n not in _BUILTIN)
    return list(_BUILTIN) if builtin_only else [*_BUILTIN, *extra]


def _unknown(name: str) -> EvaluatorError:
    return EvaluatorError(
        f"unknown evaluator {name!r}; the registered evaluators are: {', '.join(evaluator_names()) or 'none'}. "
        f"If {name!r} is your own, load the module that defines it first ({_FLAG} on the command line, or "
        f"scorers.evaluators.load_evaluator_module() in Python) and check that its class is decorated with "
        f"@register_evaluator({name!r}).")


def get_evaluator(name: str, **kwargs: Any) -> Any:
    """A new instance of the evaluator registered as ``name`` (keyword arguments go to its constructor)."""
    cls = _REGISTRY.get(name)
    if cls is None:
        raise _unknown(name)
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise EvaluatorError(f"evaluator {name!r} ({_identity(cls)}) could not be created: {exc}. An evaluator "
                             "class must be constructible with no arguments (give every constructor argument "
                             "a default).") from exc


def load_evaluator_module(spec: str | Path) -> list[str]:
    """Import a user's module so that its ``@register_evaluator`` classes register.

    ``spec`` is a dotted module name importable from ``sys.path`` (``my_pkg.my_evals``) or the
    path of a Python file (``path/to/evals.py``; anything ending in ``.py`` or containing a path
    separator is taken as a path). Returns the names the module registered, in order.
    """
    _recorded.clear()
    text = str(spec)
    is_path = isinstance(spec, Path) or text.endswith(".py") or "/" in text or "\\" in text
    if is_path:
        path = Path(text).expanduser()
        if not path.is_file():
            raise EvaluatorError(f"evaluator module file {text!r} does not exist; pass {_FLAG} the path of a "
                                 "Python file that defines your @register_evaluator classes, or a dotted module "
                                 "name importable from the current directory or PYTHONPATH.")
        path = path.resolve()
        # One stable module name per file, so loading the same file twice re-registers the same classes.
        digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
        mod_name = f"encsim_user_evaluators.{path.stem}_{digest}"
        spec_obj = importlib.util.spec_from_file_location(mod_name, path)
        if spec_obj is None or spec_obj.loader is None:
            raise EvaluatorError(f"evaluator module file {text!r} cannot be imported as Python; give {_FLAG} a "
                                 "file ending in .py.")
        module = importlib.util.module_from_spec(spec_obj)
        sys.modules[mod_name] = module
        try:
            spec_obj.loader.exec_module(module)
        except EvaluatorError:
            sys.modules.pop(mod_name, None)
            raise
        except Exception as exc:  # the user's code may raise anything while importing
            sys.modules.pop(mod_name, None)
            raise EvaluatorError(f"evaluator module file {text!r} failed to import: {type(exc).__name__}: {exc}. "
                                 f"{_moved_hint(exc)}Fix the error in that file (run `python {text}` to see the "
                                 f"traceback) and pass it to {_FLAG} again.") from exc
    else:
        try:
            if text in sys.modules:
                importlib.reload(sys.modules[text])
            else:
                importlib.import_module(text)
        except EvaluatorError:
            raise
        except ModuleNotFoundError as exc:
            raise EvaluatorError(f"evaluator module {text!r} cannot be found ({exc}); make sure it is importable "
                                 "(run from the folder that contains it or add that folder to PYTHONPATH), or "
                                 f"pass {_FLAG} the path of the .py file instead.") from exc
        except Exception as exc:
            raise EvaluatorError(f"evaluator module {text!r} failed to import: {type(exc).__name__}: {exc}. Fix the "
                                 f"error (run `python -c 'import {text}'` to see the traceback) and pass it to "
                                 f"{_FLAG} again.") from exc
    return list(dict.fromkeys(_recorded))


def _applies(evaluator: object, scenario: Scenario) -> bool:
    # getattr, not isinstance(evaluator, Scoped): a runtime-checkable protocol check costs more than most checks
    applies = getattr(evaluator, "applies_to", None)
    return bool(applies(scenario)) if callable(applies) else True


def run_evaluators(result: ConversationResult, scenario: Scenario,
                   names: Iterable[str] | None = None) -> list[EvaluatorResult]:
    """Run evaluators on one finished encounter, in order.

    ``names=None`` runs every built-in evaluator that applies to the scenario (an evaluator with
    an ``applies_to`` method that returns False is skipped). Named evaluators always run, applicable
    or not, and report applicability in ``EvaluatorResult.applicable`` where they have the notion.

    An evaluator that raises on this encounter, or returns something other than an
    ``EvaluatorResult``, never takes the run down: its result is recorded with ``error`` set (the
    evaluator, the scenario and the exception), ``applicable`` False, score 0 and no
    verdict, so that it is left out of the profile's score and fail conditions; the run counts and
    names such errors and exits non-zero. An unknown evaluator name still raises ``EvaluatorError``
    before anything runs (a mistake in the command, not in one encounter).
    """
    chosen = list(names) if names is not None else evaluator_names(builtin_only=True)
    evaluators = [get_evaluator(n) for n in chosen]  # resolve every name before running anything
    out: list[EvaluatorResult] = []
    for name, ev in zip(chosen, evaluators, strict=True):
        if names is None and not _applies(ev, scenario):
            continue
        try:
            res = ev.evaluate(result, scenario)
        except Exception as exc:
            out.append(_failed(name, f"evaluator {name!r} raised {type(exc).__name__} on scenario {scenario.id!r} "
                                     f"(k={result.k}): {exc}. Fix the evaluator, or leave it out of the run."))
            continue
        if not isinstance(res, EvaluatorResult):
            out.append(_failed(name, f"evaluator {name!r} returned {type(res).__name__} on scenario "
                                     f"{scenario.id!r}; evaluate() must return a scorers.evaluators.EvaluatorResult."))
            continue
        out.append(res)
    return out


def _failed(name: str, message: str) -> EvaluatorResult:
    return EvaluatorResult(name=name, score=0.0, passed=False, error=message,
                           applicable=False,
                           details={"error": message})
