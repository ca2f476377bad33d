"""The Textual dashboard: follows a run directory's files, never drives an encounter.

``DashboardApp(run_dir)`` watches a run another process writes (``encsim watch``), or runs a job
(a coroutine factory: ``encsim run --tui`` / ``encsim live --tui``) in its own event loop and
follows the run directory the job writes. ``newest_run`` finds the run to watch by default;
``export_annotations`` writes the reviewers' notes for open coding; ``code``, ``rename_mode``,
``merge_modes``, ``describe_mode`` and ``taxonomy_report`` code the failing ones into a taxonomy of failure modes;
``current_suggestions`` are a judge's suggested codes still to accept; ``mode_label`` is people's label of a
trace for one mode (what ``encsim judges`` validates against, and the disagreements view shows).
The data layer (``RunState``) has no Textual in it and reads only what was appended since the last poll.

May import sim.records (types, events, the run layout), scorers and scenarios only: never the code that
drives an encounter, nor audio (checked by import-linter, see pyproject.toml).
"""

from __future__ import annotations

from tui._annotations import SEVERITIES, Annotation, AnnotationStore, export_annotations
from tui._app import DashboardApp
from tui._rundir import RunWatchError, newest_run
from tui._state import RunState
from tui._taxonomy import (
    ModeRow,
    TaxonomyReport,
    code,
    current_suggestions,
    describe_mode,
    merge_modes,
    mode_label,
    rename_mode,
    taxonomy_file,
    taxonomy_report,
)

__all__ = [
    "SEVERITIES", "Annotation", "AnnotationStore", "DashboardApp", "ModeRow", "RunState", "RunWatchError",
    "TaxonomyReport", "code", "current_suggestions", "describe_mode", "export_annotations", "merge_modes",
    "mode_label", "newest_run", "rename_mode", "taxonomy_file", "taxonomy_report",
]
