"""Importers: public benchmark formats -> scenario YAML files.

- :func:`import_healthbench`: HealthBench rows become *replay* scenarios: the conversation is
  replayed, the agent replies once, and the reply is graded with the row's rubric (judge path).
- :func:`import_agentclinic`: AgentClinic OSCE cases become ``ddx`` scenarios with an information
  tree (history, examination findings, test results) and the correct diagnosis as ``expected``.
- ``labels=`` (of both the above): a clinician's labels file (YAML or CSV) sets the triage level and escalation
  of the cases it names, with ``expected.label_source: clinician`` (``_labels.py``).
- :func:`import_vignettes`: symptom-checker vignettes (CSV or JSON Lines: a case text, an urgency label,
  a diagnosis; ``--map`` names the columns, ``--urgency-map`` maps the labels) become ``triage``
  scenarios scored on escalation and diagnosis: single-turn replay items (the whole case in one message,
  one reply) or encounters whose information tree the agent must ask for (``--as encounter``).

Each writes one ``<id>.yaml`` per source row into an output folder (created if missing; a file of
the same name is overwritten), validates it with the scenario loader, and returns an
:class:`ImportReport` of the ids converted, the rows that failed (1-based line, reason) and what it
had to guess (warnings). Only a source that cannot be read at all (or, for vignettes, flags that do
not fit the file) raises :class:`ImportSourceError`. The mappings are documented in
``_healthbench.py``, ``_agentclinic.py`` and ``_vignettes.py``; the shared reading/writing rules in
``_common.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from scenarios.importers._agentclinic import convert_agentclinic_row
from scenarios.importers._case_text import case_in_first_person
from scenarios.importers._common import (
    Converted,
    FailedRow,
    ImportReport,
    ImportSourceError,
    RowContext,
    RowError,
    RowWarning,
)
from scenarios.importers._demographics import parse_demographics
from scenarios.importers._healthbench import convert_healthbench_row, healthbench_id
from scenarios.importers._labels import LabelsError, read_labels, run_labelled_import
from scenarios.importers._text import first_person
from scenarios.importers._vignette_file import read_vignette_file
from scenarios.importers._vignette_flags import (
    CATEGORIES,
    MODES,
    OPTIONAL_FIELDS,
    REQUIRED_FIELDS,
    parse_field_map,
    parse_urgency_map,
)
from scenarios.importers._vignettes import import_vignettes


def import_healthbench(source: str | Path, out_dir: str | Path, *, labels: str | Path | None = None) -> ImportReport:
    """Convert a HealthBench JSONL file into replay scenarios in ``out_dir`` (``labels``: see ``_labels.py``)."""
    return run_labelled_import("healthbench", source, out_dir, convert_healthbench_row, labels)


def import_agentclinic(source: str | Path, out_dir: str | Path, *, labels: str | Path | None = None) -> ImportReport:
    """Convert an AgentClinic OSCE JSONL file into ddx scenarios in ``out_dir`` (``labels``: see ``_labels.py``)."""
    return run_labelled_import("agentclinic", source, out_dir, convert_agentclinic_row, labels)


# Each takes (source, out_dir) and its format's own keyword options (healthbench, agentclinic: labels; vignettes:
# mapping, urgency_map, mode).
IMPORTERS: dict[str, Callable[..., ImportReport]] = {
    "healthbench": import_healthbench,
    "agentclinic": import_agentclinic,
    "vignettes": import_vignettes,
}

__all__ = [
    "CATEGORIES",
    "IMPORTERS",
    "MODES",
    "OPTIONAL_FIELDS",
    "REQUIRED_FIELDS",
    "Converted",
    "FailedRow",
    "ImportReport",
    "ImportSourceError",
    "LabelsError",
    "LabelsError",
    "RowContext",
    "RowError",
    "RowWarning",
    "case_in_first_person",
    "convert_agentclinic_row",
    "convert_healthbench_row",
    "first_person",
    "healthbench_id",
    "import_agentclinic",
    "import_healthbench",
    "import_vignettes",
    "parse_demographics",
    "parse_field_map",
    "parse_urgency_map",
    "read_labels",
    "read_labels",
    "read_vignette_file",
]
