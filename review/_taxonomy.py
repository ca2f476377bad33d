"""Coding failing annotations into failure modes (open coding, then axial coding: merge and rename).

The modes live in a taxonomy file (``sim.records.Taxonomy``): the run's ``taxonomy.json`` by default,
or a project-level file that several runs share. Which mode an encounter shows is the ``failure_mode``
of its latest annotation; every change here appends annotation lines (``AnnotationStore.save``), so
annotations.jsonl stays an append-only history and the latest line per trace id still wins.

A judge's suggested codes (code_suggestions.jsonl, ``sim.records.CodeSuggestion``) are never codes:
``current_suggestions`` offers the latest one per uncoded failing trace, unless stale (made for an earlier note),
and accepting one is ``code(..., source="accepted_suggestion")``, a person's act like any other code.

People's label of a trace for one mode (``mode_label``, what ``encsim judges`` validates against): a trace
people failed and coded with the mode shows it; one they passed, or failed and coded with another mode,
does not; a failing trace not coded yet has no label.

A rename or a merge changes the taxonomy file and re-codes the annotations of the one run it is given;
with a shared file, other runs keep the old name until they are re-coded too (their report lists the
name as "not in the taxonomy").

Every operation that saves the taxonomy file (code with a new mode, rename, merge, describe) holds
``sim.records.taxonomy_lock`` on it from reading the file to saving it, so reviewers sharing one project-level
file never lose each other's changes; a lock held too long by another process is a TaxonomyError.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from review._annotations import Annotation, AnnotationStore
from review._rundir import check_run_dir
from review._state import parse_trace_id
from sim.records import (
    TAXONOMY_LOCK_TIMEOUT_S,
    CodeSuggestion,
    FailureMode,
    RunLayout,
    Taxonomy,
    TaxonomyError,
    load_code_suggestions,
    load_taxonomy,
    mode_slug,
    save_taxonomy,
    taxonomy_lock,
)

EXAMPLES = 3


def taxonomy_file(run_dir: Path, taxonomy_path: Path | None = None) -> Path:
    """The taxonomy file to use: ``taxonomy_path`` if given, else the run's taxonomy.json."""
    return Path(taxonomy_path) if taxonomy_path is not None else RunLayout(Path(run_dir)).taxonomy


def _trace_order(tid: str) -> tuple[str, int]:
    return parse_trace_id(tid) or (tid, 0)


def _name(text: str, what: str) -> str:
    name = mode_slug(text)
    if not name:
        raise TaxonomyError(f"{what} {text!r} has no letter or digit: give a short name such as missed_red_flag.")
    return name


def _known(taxonomy: Taxonomy, latest: dict[str, Annotation]) -> set[str]:
    return set(taxonomy.names) | {a.failure_mode for a in latest.values() if a.failure_mode}


def mode_label(annotation: Annotation, mode: str) -> bool | None:
    """People's label of an annotated trace for ``mode`` (see the module docstring); None: no label.

    Args:
        annotation: The trace's latest annotation.
        mode: The failure mode.

    Returns:
        True (shows the mode), False (does not), or None (no verdict, or failing but not coded yet).
    """
    if annotation.verdict is None or (annotation.verdict == "fail" and annotation.failure_mode is None):
        return None
    return annotation.verdict == "fail" and annotation.failure_mode == mode


def current_suggestions(run_dir: Path, latest: dict[str, Annotation]) -> tuple[dict[str, CodeSuggestion], int]:
    """The suggestions to offer: the latest per trace id, for failing uncoded traces whose note is unchanged.

    Args:
        run_dir: The run directory (its code_suggestions.jsonl).
        latest: The latest annotation per trace id.

    Returns:
        The suggestions by trace id, and how many were left out as stale (made for an earlier note).
    """
    suggestions, _ = load_code_suggestions(RunLayout(Path(run_dir)).code_suggestions)
    out: dict[str, CodeSuggestion] = {}
    stale = 0
    for tid, suggestion in suggestions.items():
        ann = latest.get(tid)
        if ann is None or ann.verdict != "fail" or ann.failure_mode:
            continue
        if suggestion.matches(ann.notes, ann.timestamp):
            out[tid] = suggestion
        else:
            stale += 1
    return out, stale


def code(run_dir: Path, trace_id: str, mode: str | None, *, taxonomy_path: Path | None = None,
         reviewer: str | None = None, clock: Callable[[], float] = time.time, definition: str = "",
         source: Literal["person", "accepted_suggestion"] = "person",
         lock_timeout: float = TAXONOMY_LOCK_TIMEOUT_S) -> Annotation:
    """Code one encounter with a failure mode: append its annotation again with ``failure_mode`` set.

    The verdict, notes and severity of the latest annotation are kept (an encounter not annotated yet
    is coded as a fail). A mode not in the taxonomy is added to it with ``definition`` (empty by default).
    ``None`` removes the code. ``source`` is recorded as the annotation's ``code_source``.

    Returns:
        The annotation appended.

    Raises:
        RunWatchError: ``run_dir`` is not a run directory.
        TaxonomyError: the taxonomy file is invalid, or ``mode`` is not a usable name.
    """
    run_dir = Path(run_dir)
    check_run_dir(run_dir)
    if parse_trace_id(trace_id) is None:
        raise TaxonomyError(f"{trace_id!r} is not a trace id: give '<scenario_id>:<k>', e.g. fx_chest_pain:1.")
    path = taxonomy_file(run_dir, taxonomy_path)
    name = _name(mode, "failure mode") if mode is not None else None
    if name is not None and load_taxonomy(path).get(name) is None:
        with taxonomy_lock(path, timeout=lock_timeout):  # read again under the lock: another may have added it
            taxonomy = load_taxonomy(path)
            if taxonomy.get(name) is None:
                new = FailureMode(name=name, definition=" ".join(definition.split()))
                save_taxonomy(path, taxonomy.model_copy(update={"modes": [*taxonomy.modes, new]}))
    store = AnnotationStore(run_dir, reviewer=reviewer, clock=clock)
    current = store.load().get(trace_id) or Annotation(trace_id=trace_id, verdict="fail")
    return store.save(replace(current, failure_mode=name, code_source=source if name is not None else None))


def _open(run_dir: Path, path: Path, reviewer: str | None, clock: Callable[[], float]
          ) -> tuple[Taxonomy, AnnotationStore, dict[str, Annotation], set[str]]:
    """What a rename or merge works on (read under the taxonomy's lock).

    The taxonomy file's contents, the annotations (latest per trace) and every mode known to either.
    """
    taxonomy = load_taxonomy(path)
    store = AnnotationStore(run_dir, reviewer=reviewer, clock=clock)
    latest = store.load()
    return taxonomy, store, latest, _known(taxonomy, latest)


def _recode(store: AnnotationStore, latest: dict[str, Annotation], old: str, new: str) -> int:
    n = 0
    for tid in sorted(latest, key=_trace_order):
        if latest[tid].failure_mode == old:
            store.save(replace(latest[tid], failure_mode=new))
            n += 1
    return n


def rename_mode(run_dir: Path, old: str, new: str, *, taxonomy_path: Path | None = None,
                reviewer: str | None = None, clock: Callable[[], float] = time.time,
                lock_timeout: float = TAXONOMY_LOCK_TIMEOUT_S) -> int:
    """Rename mode ``old`` to ``new`` in the taxonomy and re-code this run's annotations that have it.

    Returns:
        How many annotations were re-coded.

    Raises:
        RunWatchError: ``run_dir`` is not a run directory.
        TaxonomyError: ``old`` is unknown, or ``new`` is not a usable name or already exists (merge instead).
    """
    run_dir = Path(run_dir)
    check_run_dir(run_dir)
    path = taxonomy_file(run_dir, taxonomy_path)
    with taxonomy_lock(path, timeout=lock_timeout):
        taxonomy, store, latest, known = _open(run_dir, path, reviewer, clock)
        if old not in known:
            raise TaxonomyError(f"{path}: no failure mode {old!r} to rename (known: "
                                f"{', '.join(sorted(known)) or 'none'}).")
        name = _name(new, "new name")
        if name == old:
            return 0
        if name in known:
            raise TaxonomyError(f"{path}: failure mode {name!r} already exists; to fold {old!r} into it, merge "
                                f"them instead of renaming.")
        modes = [m.model_copy(update={"name": name}) if m.name == old else m for m in taxonomy.modes]
        if taxonomy.get(old) is None:
            modes.append(FailureMode(name=name))
        save_taxonomy(path, taxonomy.model_copy(update={"modes": modes}))
        return _recode(store, latest, old, name)


def merge_modes(run_dir: Path, src: str, into: str, *, taxonomy_path: Path | None = None,
                reviewer: str | None = None, clock: Callable[[], float] = time.time,
                lock_timeout: float = TAXONOMY_LOCK_TIMEOUT_S) -> int:
    """Fold mode ``src`` into ``into``: ``src`` leaves the taxonomy and its annotations are re-coded.

    ``into`` keeps its definition and examples; the ones it lacks are taken from ``src``.

    Returns:
        How many annotations were re-coded.

    Raises:
        RunWatchError: ``run_dir`` is not a run directory.
        TaxonomyError: either name is unknown, or they are the same mode.
    """
    run_dir = Path(run_dir)
    check_run_dir(run_dir)
    path = taxonomy_file(run_dir, taxonomy_path)
    with taxonomy_lock(path, timeout=lock_timeout):
        taxonomy, store, latest, known = _open(run_dir, path, reviewer, clock)
        for name in (src, into):
            if name not in known:
                raise TaxonomyError(f"{path}: no failure mode {name!r} to merge (known: "
                                    f"{', '.join(sorted(known)) or 'none'}).")
        if src == into:
            raise TaxonomyError(f"{path}: cannot merge {src!r} into itself; pick two different modes.")
        source = taxonomy.get(src) or FailureMode(name=src)
        target = taxonomy.get(into) or FailureMode(name=into)
        merged = target.model_copy(update={
            f: getattr(target, f) or getattr(source, f) for f in ("definition", "pass_example", "fail_example")})
        modes = [merged if m.name == into else m for m in taxonomy.modes if m.name != src]
        if taxonomy.get(into) is None:
            modes.append(merged)
        save_taxonomy(path, taxonomy.model_copy(update={"modes": modes}))
        return _recode(store, latest, src, into)


DESCRIBABLE = ("definition", "pass_example", "fail_example")


def describe_mode(run_dir: Path, name: str, *, taxonomy_path: Path | None = None, **fields: str) -> FailureMode:
    """Set a mode's ``definition``, ``pass_example`` and/or ``fail_example`` in the taxonomy file.

    It waits up to ``TAXONOMY_LOCK_TIMEOUT_S`` for the file's lock (the keyword arguments are the fields).

    A mode coded in this run's annotations but missing from the file is added to it.

    Returns:
        The mode as saved.

    Raises:
        TaxonomyError: ``name`` is unknown, or a field is not one of ``DESCRIBABLE``.
    """
    run_dir = Path(run_dir)
    unknown = set(fields) - set(DESCRIBABLE)
    if unknown:
        raise TaxonomyError(f"a failure mode has no field {', '.join(sorted(unknown))}: use "
                            f"{', '.join(DESCRIBABLE)}.")
    path = taxonomy_file(run_dir, taxonomy_path)
    with taxonomy_lock(path):
        taxonomy = load_taxonomy(path)
        mode = taxonomy.get(name)
        if mode is None:
            used = {a.failure_mode for a in AnnotationStore(run_dir).load().values() if a.failure_mode}
            if name not in used:
                known = sorted(set(taxonomy.names) | used)
                raise TaxonomyError(f"{path}: no failure mode {name!r} to describe (known: "
                                    f"{', '.join(known) or 'none'}).")
            mode = FailureMode(name=name)
        described = mode.model_copy(update={k: " ".join(v.split()) for k, v in fields.items()})
        modes = [described if m.name == name else m for m in taxonomy.modes]
        if taxonomy.get(name) is None:
            modes.append(described)
        save_taxonomy(path, taxonomy.model_copy(update={"modes": modes}))
        return described


@dataclass(frozen=True)
class ModeRow:
    """One failure mode in a run: how many failing encounters are coded with it."""

    name: str
    definition: str
    count: int
    share: float
    """``count`` over the run's failing encounters (0.0 without any)."""
    examples: list[str] = field(default_factory=list)
    in_taxonomy: bool = True
    """False for a code used in annotations.jsonl that the taxonomy file lacks (e.g. renamed in another run)."""


@dataclass(frozen=True)
class TaxonomyReport:
    """The modes by frequency, and the failing encounters nobody has coded yet."""

    rows: list[ModeRow]
    failing: int
    uncoded: int
    uncoded_examples: list[str] = field(default_factory=list)
    taxonomy_path: Path | None = None


def taxonomy_report(run_dir: Path, taxonomy_path: Path | None = None) -> TaxonomyReport:
    """The failure modes of a run by frequency among its failing encounters (latest annotation per trace).

    Every mode of the taxonomy has a row, count 0 included; rows are sorted by count (descending), then
    name. A failing encounter is one whose latest annotation says fail.

    Raises:
        RunWatchError: ``run_dir`` is not a run directory.
        TaxonomyError: the taxonomy file is invalid.
    """
    run_dir = Path(run_dir)
    check_run_dir(run_dir)
    path = taxonomy_file(run_dir, taxonomy_path)
    taxonomy = load_taxonomy(path)
    latest = AnnotationStore(run_dir).load()
    failing = sorted((a for a in latest.values() if a.verdict == "fail"), key=lambda a: _trace_order(a.trace_id))
    coded: dict[str, list[str]] = {}
    uncoded: list[str] = []
    for ann in failing:
        if ann.failure_mode:
            coded.setdefault(ann.failure_mode, []).append(ann.trace_id)
        else:
            uncoded.append(ann.trace_id)
    modes: list[tuple[str, str, bool]] = [(m.name, m.definition, True) for m in taxonomy.modes]
    modes += [(name, "", False) for name in sorted(coded) if taxonomy.get(name) is None]
    n = len(failing)
    rows = [ModeRow(name=name, definition=definition, count=len(coded.get(name, [])),
                    share=len(coded.get(name, [])) / n if n else 0.0, examples=coded.get(name, [])[:EXAMPLES],
                    in_taxonomy=known)
            for name, definition, known in modes]
    rows.sort(key=lambda r: (-r.count, r.name))
    return TaxonomyReport(rows=rows, failing=n, uncoded=len(uncoded), uncoded_examples=uncoded[:EXAMPLES],
                          taxonomy_path=path)
