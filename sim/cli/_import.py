"""``encsim import healthbench|agentclinic|vignettes FILE --out DIR``: public-format cases into scenario YAML files.

The formats and every mapping are documented in ``scenarios/importers/``; ``--labels FILE`` (healthbench and
agentclinic) applies a clinician's triage labels (``scenarios/importers/_labels.py``). AgentClinic's NEJM image cases
take their images from ``--fetch-images`` (downloaded once, ``imaging/_fetch.py``) or ``--images DIR``; their import
prints the images fetched, already present, missing and refused, and writes the whole report to
``DIR/import_report.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.cli._common import EXIT_USER_ERROR, CliParser
from sim.records import ConfigError


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
        _gate_flag(fp)
        if fmt == "agentclinic":
            _image_flags(fp)
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
    _gate_flag(vig)
    imp.set_defaults(handler=cmd_import)


GATE_HELP = ("also put under the safety gate every case whose acceptable escalations all lie in these classes "
             "(comma-separated: urgent, routine, self_care). Cases whose every acceptable escalation is emergency "
             "are always gated; --gate urgent also gates a case labelled urgent or emergency")


def _gate_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gate", type=_gate_classes, metavar="CLASS,...", help=GATE_HELP)


def _gate_classes(value: str) -> frozenset[str]:
    """An argparse type: escalation classes for ``--gate`` (emergency always among them)."""
    from scenarios.schema import Escalation

    names = [e.value for e in Escalation]
    given = [v.strip().lower() for v in value.split(",") if v.strip()]
    wrong = [v for v in given if v not in names]
    if not given or wrong:
        raise argparse.ArgumentTypeError(f"--gate takes escalation classes separated by commas ({', '.join(names)}), "
                                         f"got {value[:60]!r}")
    return frozenset(given) | {"emergency"}


def gate_imported(out_dir: Path, scenario_ids: list[str], classes: frozenset[str]) -> list[str]:
    """Mark the imported scenarios that ``--gate`` puts under the safety gate; return their ids.

    A scenario the default rule already gates (``scorers.gate_reason``) is left as it is. Any other whose acceptable
    escalations all lie in ``classes`` gets ``safety_gate: "importer flag --gate ..."``, appended to its file as a
    top-level key (the file stays as the importer wrote it above).
    """
    from scenarios import load_scenario
    from scorers import gate_reason

    flag = "importer flag --gate " + ",".join(sorted(classes - {"emergency"}) or ["emergency"])
    marked = []
    for sid in scenario_ids:
        path = out_dir / f"{sid}.yaml"
        scenario = load_scenario(path).scenario
        e = scenario.expected
        accepted = {a.value for a in (e.acceptable_escalations or ([e.escalation] if e.escalation else []))}
        if not accepted or gate_reason(scenario) is not None or not accepted <= classes:
            continue
        path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + f"\nsafety_gate: {json.dumps(flag)}\n",
                        encoding="utf-8")
        marked.append(sid)
    return marked


def _image_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of AgentClinic's NEJM image cases: where their images come from, and the download's limits."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--fetch-images", action="store_true", default=False,
                       help="NEJM image cases: download each case's image once into DIR/images (http(s), image/* "
                            "only, checked by Pillow, --max-image-mb, --fetch-delay between downloads); a case whose "
                            "image cannot be had is imported as text only and reported")
    where.add_argument("--images", type=Path, metavar="IMAGES_DIR",
                       help="NEJM image cases: a folder with the images you already have, named as the import names "
                            "them (NEJM's id: IC20240111.jpg); they are checked and copied into DIR/images")
    parser.add_argument("--max-image-mb", type=_positive_number("--max-image-mb"), default=20.0, metavar="MB",
                        help="the largest image downloaded or copied, in MiB (default 20)")
    parser.add_argument("--fetch-delay", type=_positive_number("--fetch-delay", zero=True), default=1.0,
                        metavar="SECONDS", help="seconds between the starts of two downloads (default 1)")


def _positive_number(flag: str, *, zero: bool = False) -> Any:
    """An argparse type: a number above 0 (or at least 0 with ``zero``), else an error naming ``flag``."""

    def parse(value: str) -> float:
        try:
            number = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be a number, got {value[:40]!r}") from None
        if not math.isfinite(number) or number < 0 or (number == 0 and not zero):
            raise argparse.ArgumentTypeError(f"{flag} must be a number {'of at least 0' if zero else 'above 0'}, "
                                             f"got {value[:40]!r}")
        return number
    return parse


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
    fetch_images: bool = False
    images: Path | None = None
    max_image_mb: float = 20.0
    fetch_delay: float = 1.0
    gate: frozenset[str] | None = None

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
                       urgency_map=args.urgency_map, mode=args.mode, gate=args.gate)
        images = {k: getattr(args, k) for k in ("fetch_images", "images", "max_image_mb", "fetch_delay")
                  if hasattr(args, k)}
        return cls(source_format=args.source_format, file=args.file, out=args.out, labels=args.labels, gate=args.gate,
                   **images)


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
    if options.source_format == "agentclinic":
        extra["images"] = _image_provider(options)
    report = IMPORTERS[options.source_format](options.file, options.out, **extra)
    if options.gate is not None:
        marked = gate_imported(report.out_dir, report.converted, options.gate)
        print(f"--gate: {len(marked)} of {len(report.converted)} scenarios marked for the safety gate (safety_gate: "
              "importer flag); cases whose every acceptable escalation is emergency are gated without the flag")
    if report.images:
        return _image_report(report, options)
    print(f"converted {len(report.converted)} of {report.rows} rows into {report.out_dir}")
    if report.labels is not None:
        print(f"labelled {len(report.labelled)} of them from {report.labels} (expected.label_source: clinician); "
              f"{len(report.converted) - len(report.labelled)} have no triage label")
    for w in report.warnings:
        print(f"row {w.row}: warning: {w.message}", file=sys.stderr)
    for f in report.failed:
        print(f"row {f.row}: not converted: {f.reason}", file=sys.stderr)
    return 0 if report.converted else EXIT_USER_ERROR


def _image_provider(options: ImportOptions) -> Any:
    """The images of an AgentClinic import: ``imaging.ImportImages`` as the flags ask (the folder checked first)."""
    if options.images is not None and not options.images.is_dir():
        what = "does not exist" if not options.images.exists() else "is not a folder"
        raise ConfigError(f"--images {options.images}: {what}. Give the folder that holds the cases' images (named "
                          "by the case's image id, e.g. IC20240111.jpg), or use --fetch-images to download them.")
    from imaging import ImportImages

    return ImportImages(folder=options.images, fetch=options.fetch_images,
                        max_bytes=int(options.max_image_mb * 1024 * 1024), delay_s=options.fetch_delay)


def _image_report(report: Any, options: ImportOptions) -> int:
    """Print the report of an import of image cases and write it as ``import_report.json`` in the output folder."""
    from scenarios.importers import IMAGES_DIR

    counts = report.image_counts()
    kinds = {"imaging items": sum(sid.startswith("acnejm_item_") for sid in report.converted),
             "encounters": sum(sid.startswith("acnejm_enc_") for sid in report.converted)}
    others = len(report.converted) - sum(kinds.values())
    made = ", ".join(f"{n} {k}" for k, n in kinds.items()) + (f", {others} other scenarios" if others else "")
    print(f"converted {len(report.converted_rows)} of {report.rows} rows into {len(report.converted)} scenarios "
          f"({made}) in {report.out_dir}")
    copied = sum(o.status == "present" and (o.reason or "").startswith("copied from") for o in report.images)
    shown = {k: f"{n} {k}" for k, n in counts.items()}
    shown["present"] = f"{counts['present']} already present" + (f" ({copied} copied from --images)" if copied else "")
    print("images: " + ", ".join(shown.values()) + f" (in {report.out_dir / IMAGES_DIR})")
    without = counts["missing"] + counts["refused"]
    if without:
        print(f"{without} case(s) without their image were imported as text only (tag image:not_available)")
    for w in report.warnings:
        print(f"row {w.row}: warning: {w.message}", file=sys.stderr)
    for o in report.images:
        if o.status in ("missing", "refused"):
            print(f"row {o.row}: image {o.status}: {o.name or o.url or 'no image_url'}: {o.reason}", file=sys.stderr)
    for f in report.failed:
        print(f"row {f.row}: not converted: {f.reason}", file=sys.stderr)
    path = report.out_dir / "import_report.json"
    body = report.model_dump(mode="json") | {"image_counts": counts}
    try:
        path.write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"report: {path}")
    except OSError as exc:
        print(f"warning: could not write {path} ({exc.strerror or exc}); the report above is complete",
              file=sys.stderr)
    return 0 if report.converted else EXIT_USER_ERROR
