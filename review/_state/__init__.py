"""Follow a run directory incrementally: the data layer of the dashboard and of the review commands.

``RunState(run_dir)`` is the one object the dashboard's app and screens use (and ``export_annotations``).
It is made of two halves: the ingestion (``RunIngest``, ``_ingest``: ``poll()`` reads only what was appended
to run.json, events.jsonl, results.jsonl and summary.json since the last poll, and keeps it with incremental
counters) and the views (``RunView``, ``_view``: everything the screens show, derived read-only from
what was read). ``_encounter`` holds one encounter as the dashboard sees it (``Encounter``, keyed by
``(scenario_id, k)``), its trace id and its safety marker.
"""

from __future__ import annotations

from review._state._encounter import (
    FINAL_STATUSES,
    Encounter,
    Key,
    Marker,
    Status,
    TranscriptTurn,
    parse_trace_id,
    trace_id,
)
from review._state._ingest import MAX_WARNINGS, PollResult, RunIngest
from review._state._run_state import RunState
from review._state._view import RunView

__all__ = [
    "FINAL_STATUSES", "MAX_WARNINGS", "Encounter", "Key", "Marker", "PollResult", "RunIngest", "RunState", "RunView",
    "Status", "TranscriptTurn", "parse_trace_id", "trace_id",
]
