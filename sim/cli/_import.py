"""``encsim import healthbench|agentclinic|vignettes FILE --out DIR``: public-format cases into scenario YAML files.

The formats and every mapping are documented in ``scenarios/importers/``; ``--labels FILE`` (healthbench and
agentclinic) applies a clinician's triage labels (``scenarios/importers/_labels.py``).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.cli._common import EXIT_USER_ERROR, CliParser


def register(subparsers: Any) -> None:  # argparse's _SubParsersAction is private
    """Add the ``import`` parser and one sub-parser per source format.

    Args:
        subparsers: The ``encsim`` parser's subparsers.
    """
    imp = subparsers.add_parser("import",
                                help="convert HealthBench, AgentClinic or vignette files into scenario YAML files")
    imps = imp.add_subparsers(dest="source_format", required=True, parser_class=CliParser)
    out_help = "folder for the <id>.yaml files (created if missing; same-name files are overwritten)"
    for fmt, what in (("healthbench", "HealthBench rows -> replay scenarios graded by their rubric"),
                      ("agentclinic", "AgentClinic OSCE cases -> ddx scenarios with an information tree")):
        fp = imps.add_parser(fmt, help=what)
        fp.add_argument("file", type=Path, metavar="FILE.jsonl")
        fp.add_argument("--out", type=Path, required=True, metavar="DIR", help=out_help)
        fp.add_argument("--labels", type=Path, metavar="FILE.yaml|FILE.csv",
                        help="a clinician's triage labels for cases of the file (case, triage_level, escalation, "
                             "disposition, rationale, labeller): they become expected.triage_level / escalation with "
                             "label_source: clinician. Format: scenarios/importers/_labels.py")
    vig = imps.add_parser(
        "vignettes", help="symptom-checker vignettes (CSV or JSONL) -> triage items scored on escalation and diagnosis",
        description="Symptom-checker vignettes (a case text, an urgency label and a diagnosis per row; CSV or JSON "
                    "Lines) -> triage scenarios scored on escalation and diagnosis. The format and every mapping "
                    "are documented in scenarios/importers/_vignettes.py.",
        epilog="example: encsim import vignettes semigran.jsonl --out scenarios/imported/semigran "
               "--map case=case_description,diagnosis=correct_diagnosis,urgency=urgency_level "
               "--urgency-map em=emergency,ne=routine+urgent,sc=self_care")
    vig.add_argument("file", type=Path, metavar="FILE.jsonl|FILE.csv")
    vig.add_argument("--out", type=Path, required=True, metavar="DIR", help=out_help)
    vig.add_argument("--map", required=True, metavar="FIELD=COLUMN,...", dest="field_map",
                     help="the file's column for each field: case, diagnosis, urgency (required); age, sex, complaint, "
                          "history, negatives, exam, tests, medications, allergies, social, family, past_history, "
                          "diagnoses (';' or '|' separated), id (optional)")
    vig.add_argument("--urgency-map", metavar="LABEL=CATEGORY,...",
                     help="the file's urgency labels (any case) -> emergency | urgent | routine | self_care; several "
                          "acceptable categories joined by +, best first (ne=routine+urgent). Default: the labels "
                          "are the category names")
    vig.add_argument("--as", dest="mode", choices=("single-turn", "encounter"), default="single-turn",
                     help="single-turn (default): the whole case in one patient message, one reply scored; "
                          "encounter: the columns become facts the agent must ask for")
    imp.set_defaults(handler=cmd_import)


@dataclass(frozen=True, kw_only=True)
class ImportOptions:
    """The arguments of ``encsim import FORMAT``; the vignette options are those of the ``vignettes`` format."""

    source_format: str
    file: Path
    out: Path
    field_map: str | None = None
    urgency_map: str | None = None
    mode: str | None = None
    labels: Path | None = None

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> ImportOptions:
        """Read a parsed ``import`` command line.

        Args:
            args: The parsed command line.

        Returns:
            The options.
        """
        if args.source_format == "vignettes":
            return cls(source_format=args.source_format, file=args.file, out=args.out, field_map=args.field_map,
                       urgency_map=args.urgency_map, mode=args.mode)
        return cls(source_format=args.source_format, file=args.file, out=args.out, labels=args.labels)


def cmd_import(args: argparse.Namespace) -> int:
    """``encsim import``: see :func:`import_file`.

    Args:
        args: The parsed command line.

    Returns:
        The exit code.
    """
    return import_file(ImportOptions.from_namespace(args))


def import_file(options: ImportOptions) -> int:
    """One scenario file per convertible row; exit 0 if any row converted, 2 if none.

    Args:
        options: The command's arguments.

    Returns:
        The exit code: 0 if any row converted, ``EXIT_USER_ERROR`` (2) if none.

    Raises:
        ImportSourceError: The file as a whole cannot be imported, or a mapping option is wrong.
    """
    from scenarios.importers import IMPORTERS

    extra: dict[str, Any] = {"labels": options.labels}
    if options.source_format == "vignettes":
        extra = {"mapping": options.field_map, "urgency_map": options.urgency_map, "mode": options.mode}
    report = IMPORTERS[options.source_format](options.file, options.out, **extra)
    print(f"converted {len(report.converted)} of {report.rows} rows into {report.out_dir}")
    if report.labels is not None:
        print(f"labelled {len(report.labelled)} of them from {report.labels} (expected.label_source: clinician); "
              f"{len(report.converted) - len(report.labelled)} have no triage label")
    for w in report.warnings:
        print(f"row {w.row}: warning: {w.message}", file=sys.stderr)
    for f in report.failed:
        print(f"row {f.row}: not converted: {f.reason}", file=sys.stderr)
    return 0 if report.converted else EXIT_USER_ERROR
