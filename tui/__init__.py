"""The Textual dashboard: follows a run directory's files, never drives an encounter.

``DashboardApp(run_dir)`` watches a run another process writes (``encsim watch``), or runs a job
(a coroutine factory: ``encsim run --tui`` / ``encsim live --tui``) in its own event loop and
follows the run directory the job writes. What it shows and edits has no Textual in it and lives in
``review``: the run followed (``review.RunState``, which reads only what was appended since the last poll),
the reviewers' annotations and their coding into failure modes; ``review.newest_run`` finds the run to watch.

May import review, sim.records (types, events, the run layout), scorers and scenarios only: never the code that
drives an encounter, nor audio (checked by import-linter, see pyproject.toml).
"""

from __future__ import annotations

from tui._app import DashboardApp

__all__ = ["DashboardApp"]
