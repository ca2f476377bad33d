"""The dashboard's widgets: each small, with its own DEFAULT_CSS, fed plain data by its screen.

Rendering is done by pure functions (``overview_text``, ``transcript_table``, ``details_renderable``,
...) that take the run state's objects and return Rich renderables, so what a widget shows depends
only on the data it is given (never on the clock or the path on disk).

One module per widget family: ``_panes`` (status line, scrolling pane), ``_overview`` (run overview,
gate badge), ``_table`` (``RowTable``, the tables' shared base), ``_encounters`` (encounter list),
``_transcript``, ``_details`` (checklist and score card, one function per section), ``_annotation``
(annotation bar), ``_coding`` (failing annotations, failure modes), ``_disagreements`` (where failure-mode
judges and people disagree), ``_reliability`` (K composites per
scenario), ``_live`` (speaking, latencies).
"""

from __future__ import annotations

from tui._widgets._annotation import AnnotationBar, annotation_text
from tui._widgets._coding import SUGGESTED_STYLE, CodingTable, ModeTable
from tui._widgets._details import DetailsView, details_renderable
from tui._widgets._disagreements import (
    DisagreementRow,
    DisagreementTable,
    disagreement_rows,
    validation_summary,
)
from tui._widgets._encounters import EncounterTable
from tui._widgets._live import LatencyTable, speaking_text
from tui._widgets._overview import GATE_STYLE, Overview, gate_badge, overview_text
from tui._widgets._panes import Pane, StatusLine
from tui._widgets._reliability import ReliabilityTable, reliability_detail, reliability_row
from tui._widgets._table import RowTable
from tui._widgets._transcript import SPEAKER_STYLE, TranscriptView, transcript_table

__all__ = [
    "GATE_STYLE", "SPEAKER_STYLE", "SUGGESTED_STYLE", "AnnotationBar", "CodingTable", "DetailsView", "DisagreementRow",
    "DisagreementTable", "EncounterTable", "LatencyTable",
    "ModeTable", "Overview",
    "Pane", "ReliabilityTable", "RowTable", "StatusLine", "TranscriptView", "annotation_text",
    "details_renderable", "disagreement_rows", "gate_badge", "overview_text", "reliability_detail",
    "reliability_row", "speaking_text", "transcript_table", "validation_summary",
]
