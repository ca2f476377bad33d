"""``Dashboard``: what the screens use of the app, as a Protocol.

The screens (``tui._screens``) reach the app through this Protocol, never through ``tui._app``, so that the app
imports the screens and no module of tui imports the app back (not even under TYPE_CHECKING). ``DashboardApp``
implements it; mypy checks that where the app is defined.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from rich.console import RenderableType
from rich.text import Text

from review import Annotation, Key, RunState, ScenarioCatalog, TaxonomyReport
from sim.records import CodeSuggestion, FailureMode


class Dashboard(Protocol):
    """The app as the screens see it: the followed run, the annotations and the actions on them."""

    # ------------------------------------------------------------------ the run
    @property
    def state(self) -> RunState:
        """The run directory followed."""

    @property
    def catalog(self) -> ScenarioCatalog:
        """The run's scenarios (the encounter view's checklist, the suites)."""

    def overview_renderable(self) -> tuple[Text, RenderableType]:
        """The run overview: its head line and its body."""

    def list_keys(self) -> list[str]:
        """Trace ids of the encounter list in its current (filtered) order."""

    def select_in_list(self, tid: str) -> None:
        """Move the encounter list's cursor to ``tid``."""

    def open_encounter(self, key: Key) -> None:
        """Show the encounter ``key``."""

    def set_status(self, text: str) -> None:
        """Show ``text`` on the status line of every screen."""

    # ------------------------------------------------------------------ annotations
    @property
    def saved(self) -> dict[str, Annotation]:
        """The saved annotations, the latest per trace id."""

    def verdict_of(self, tid: str) -> str | None:
        """The verdict of ``tid``'s annotation, the unsaved draft first."""

    def review_mark(self, tid: str) -> str:
        """The encounter list's review mark of ``tid``."""

    def draft_for(self, tid: str) -> Annotation:
        """The annotation being edited for ``tid``."""

    def is_dirty(self, tid: str) -> bool:
        """Whether ``tid`` has an unsaved draft."""

    def edit_draft(self, tid: str, **changes: str | None) -> Annotation:
        """Change ``tid``'s draft by ``changes`` (Annotation fields)."""

    def cycle_severity(self, tid: str) -> Annotation:
        """Move ``tid``'s draft to the next severity tag."""

    def save_annotation(self, tid: str) -> Annotation | None:
        """Append ``tid``'s draft to annotations.jsonl; None if it cannot be written."""

    # ------------------------------------------------------------------ failure modes
    @property
    def taxonomy_path(self) -> Path:
        """The taxonomy file coded into."""

    def failing_annotations(self) -> list[Annotation]:
        """The saved annotations whose verdict is fail, in trace order."""

    def failure_modes(self) -> TaxonomyReport | None:
        """The taxonomy's modes with their counts; None if the taxonomy file is invalid."""

    def code_trace(self, tid: str, mode: str | None) -> Annotation | None:
        """Code ``tid`` with failure mode ``mode``; None if it cannot be."""

    def code_suggestions(self) -> tuple[dict[str, CodeSuggestion], int]:
        """The judge's suggestions still to accept, and how many are stale."""

    def accept_suggestion(self, tid: str) -> Annotation | None:
        """Code ``tid`` with its suggested mode; None if there is none or it cannot be."""

    def rename_failure_mode(self, old: str, new: str) -> int | None:
        """Rename mode ``old`` to ``new``; the re-coded count, or None."""

    def merge_failure_modes(self, src: str, into: str) -> int | None:
        """Fold mode ``src`` into ``into``; the re-coded count, or None."""

    def taxonomy_mode(self, name: str) -> FailureMode | None:
        """The mode ``name`` of the taxonomy file; None if it has none."""

    def describe_failure_mode(self, name: str, field: str, value: str) -> bool:
        """Set ``field`` of mode ``name``; False if it cannot be."""
