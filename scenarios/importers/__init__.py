"""Importers: public benchmark formats -> scenario YAML files.

- :func:`import_healthbench`: HealthBench rows become *replay* scenarios: the conversation is
  replayed, the agent replies once, and the reply is graded with the row's rubric (judge path).
- :func:`import_agentclinic`: AgentClinic OSCE cases become ``ddx`` scenarios with an information
  tree (history, examination findings, test results) and the correct diagnosis as ``expected``;
  AgentClinic's NEJM Image Challenge cases an imaging item (the image, the question, the choices) and an
  encounter each, their images got by an image provider (``imaging.ImportImages``: ``--fetch-images`` or
  ``--images DIR``) into the output folder's ``images/`` (``_nejm.py``, ``_nejm_images.py``).
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
from typing import Any

from scenarios.importers._agentclinic import convert_agentclinic_row
from scenarios.importers._case_text import case_in_first_person
from scenarios.importers._common import (
    IMAGE_STATUSES,
    Converted,
    FailedRow,
    ImageOutcome,
    ImageStatus,
    ImportReport,
    ImportSourceError,
    RowContext,
    RowError,
    RowWarning,
    import_rows,
    read_jsonl,
)
from scenarios.importers._demographics import parse_demographics
from scenarios.importers._healthbench import convert_healthbench_row, healthbench_id
from scenarios.importers._labels import LabelsError, read_labels, run_labelled_import
from scenarios.importers._nejm import is_nejm_row, nejm_converter
from scenarios.importers._nejm_images import IMAGES_DIR, ImageProvider, NoImages, ProvidedImage, image_name
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


def import_agentclinic(source: str | Path, out_dir: str | Path, *, labels: str | Path | None = None,
                       images: ImageProvider | None = None) -> ImportReport:
    """Convert an AgentClinic JSONL file into scenarios in ``out_dir``.

    OSCE cases become ddx scenarios (``labels``: see ``_labels.py``); NEJM image cases an imaging item and an
    encounter each (``_nejm.py``), their images got by ``images`` (``imaging.ImportImages``; None: every image
    missing, the cases imported as text only). The shape is recognised by row.

    Raises:
        ImportSourceError: The file cannot be read as JSON Lines, or ``labels`` is given for NEJM image cases.
    """
    src, out = Path(source), Path(out_dir)
    rows = read_jsonl(src)
    nejm = [line for line, row in rows if isinstance(row, dict) and is_nejm_row(row)]
    if not nejm:
        return run_labelled_import("agentclinic", src, out, convert_agentclinic_row, labels)
    if labels is not None:
        raise ImportSourceError(f"--labels {labels}: {src} holds AgentClinic NEJM image cases (line {nejm[0]} and "
                                f"{len(nejm) - 1} more), which take no triage labels; import the file without "
                                "--labels.")
    outcomes: list[ImageOutcome] = []
    provider = images or NoImages()
    provider.start(len(nejm))
    try:
        nejm_convert = nejm_converter(out, provider, outcomes)

        def convert(row: dict[str, Any], ctx: RowContext) -> Converted | list[Converted]:
            return nejm_convert(row, ctx) if is_nejm_row(row) else convert_agentclinic_row(row, ctx)

        report = import_rows("agentclinic", src, out, rows, convert)
    finally:
        provider.finish()
    report.images = outcomes
    return report


# Each takes (source, out_dir) and its format's own keyword options (healthbench, agentclinic: labels; vignettes:
# mapping, urgency_map, mode).
IMPORTERS: dict[str, Callable[..., ImportReport]] = {
    "healthbench": import_healthbench,
    "agentclinic": import_agentclinic,
    "vignettes": import_vignettes,
}

__all__ = [
    "CATEGORIES",
    "IMAGES_DIR",
    "IMAGE_STATUSES",
    "IMPORTERS",
    "MODES",
    "OPTIONAL_FIELDS",
    "REQUIRED_FIELDS",
    "Converted",
    "FailedRow",
    "ImageOutcome",
    "ImageProvider",
    "ImageStatus",
    "ImportReport",
    "ImportSourceError",
    "LabelsError",
    "NoImages",
    "ProvidedImage",
    "RowContext",
    "RowError",
    "RowWarning",
    "case_in_first_person",
    "convert_agentclinic_row",
    "convert_healthbench_row",
    "first_person",
    "healthbench_id",
    "image_name",
    "import_agentclinic",
    "import_healthbench",
    "import_vignettes",
    "parse_demographics",
    "parse_field_map",
    "parse_urgency_map",
    "read_labels",
    "read_vignette_file",
]
