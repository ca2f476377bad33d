"""``RunState``: a run directory followed incrementally, the ingestion and its views in one object."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from review._catalog import ScenarioCatalog
from review._state._ingest import PollResult, RunIngest
from review._state._view import RunView


class RunState(RunView):
    """The incrementally followed state of one run directory: a ``RunIngest`` and the ``RunView`` over it."""

    def __init__(self, run_dir: Path, *, clock: Callable[[], float] = time.time,
                 catalog: ScenarioCatalog | None = None) -> None:
        """Follow ``run_dir`` (nothing is read before the first ``poll``).

        Args:
            run_dir: The run directory; it may not exist yet.
            clock: The time now (elapsed, throughput and ETA of a run that has not finished).
            catalog: Where the scenarios are looked up (which feed the safety gate); a new one if None.
        """
        super().__init__(RunIngest(run_dir, catalog=catalog), clock=clock)

    def poll(self) -> PollResult:
        """Read what was appended since the last poll; never raises on bad data.

        Returns:
            What the poll changed.
        """
        return self.ingest.poll()
