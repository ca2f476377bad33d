"""A run as people review it, without Textual: the run followed, the reviewers' notes and their failure modes.

What the dashboard (``tui``) shows and the ``encsim annotations`` and ``encsim judges`` commands read, so those
commands never load Textual:

- The run directory followed incrementally: ``RunState`` (the ingestion ``RunIngest`` and the views ``RunView``;
  ``poll()`` reads only what was appended), one ``Encounter`` per ``Key`` (``(scenario_id, k)``), its trace id
  (``trace_id``, ``parse_trace_id``), ``ScenarioCatalog`` (the scenarios a run names); ``check_run_dir`` and
  ``newest_run`` find and check a run directory (``RunWatchError``).
- Annotations (annotations.jsonl): ``Annotation``, ``AnnotationStore`` (append-only, the latest line per trace wins),
  ``SEVERITIES`` and ``next_severity``; ``export_annotations`` writes the reviewers' notes for open coding.
- Failure-mode coding over the annotations (the taxonomy file): ``code``, ``rename_mode``, ``merge_modes``,
  ``describe_mode``, ``taxonomy_file`` and ``taxonomy_report`` (``TaxonomyReport``, ``ModeRow``);
  ``current_suggestions`` are a judge's suggested codes still to accept; ``mode_label`` is people's label of a
  trace for one mode (what ``encsim judges`` validates against, and the dashboard's disagreements view shows).

Imports only scenarios, sim.records and scorers (checked by import-linter, see pyproject.toml); the dashboard
imports it, never the other way round.
"""

from __future__ import annotations

from review._annotations import SEVERITIES, Annotation, AnnotationStore, export_annotations, next_severity
from review._catalog import ScenarioCatalog
from review._rundir import RunWatchError, check_run_dir, newest_run
from review._state import (
    FINAL_STATUSES,
    MAX_WARNINGS,
    Encounter,
    Key,
    Marker,
    PollResult,
    RunIngest,
    RunState,
    RunView,
    Status,
    TranscriptTurn,
    parse_trace_id,
    trace_id,
)
from review._taxonomy import (
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
    "FINAL_STATUSES", "MAX_WARNINGS", "SEVERITIES", "Annotation", "AnnotationStore", "Encounter", "Key", "Marker",
    "ModeRow", "PollResult", "RunIngest", "RunState", "RunView", "RunWatchError", "ScenarioCatalog", "Status",
    "TaxonomyReport", "TranscriptTurn", "check_run_dir", "code", "current_suggestions", "describe_mode",
    "export_annotations", "merge_modes", "mode_label", "newest_run", "next_severity", "parse_trace_id", "rename_mode",
    "taxonomy_file", "taxonomy_report", "trace_id",
]
