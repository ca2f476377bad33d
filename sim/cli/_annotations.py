"""``encsim annotations export|taxonomy|suggest-codes RUN_DIR``: the dashboard's annotations and their failure modes.

``suggest-codes`` asks a judge model which failure mode each uncoded failing annotation's notes describe
(one of the taxonomy's, or a new name with a definition). It prints suggestions; with ``--save`` it also
appends them to RUN_DIR/code_suggestions.jsonl (``sim.records.CodeSuggestion``, one line per annotation: the
mode most judges named, and which judges named it), where the dashboard's coding screen shows them marked as
suggestions for a person to accept (``a``) or change. It never writes annotations.jsonl nor the taxonomy:
coding stays a person's decision, so the labels that ``encsim judges`` validates against remain people's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from sim.cli._common import CliParser, JudgeOptions, add_judge_args
from sim.records import (
    CodeSuggestion,
    ConfigError,
    RunLayout,
    append_code_suggestions,
    load_taxonomy,
    mode_slug,
    one_line,
)

if TYPE_CHECKING:
    from review import TaxonomyReport


def register(subparsers: Any) -> None:  # argparse's _SubParsersAction is private
    """Add the ``annotations`` parser and its ``export`` and ``taxonomy`` actions.

    Args:
        subparsers: The ``encsim`` parser's subparsers.
    """
    ann = subparsers.add_parser("annotations", help="annotations made in the dashboard")
    anns = ann.add_subparsers(dest="action", required=True, parser_class=CliParser)
    exp = anns.add_parser("export",
                          help="write the failing annotations (notes, severity) for coding into failure modes")
    exp.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    exp.add_argument("--out", type=Path, help="output file (default RUN_DIR/annotations_export.csv or .jsonl)")
    exp.add_argument("--all", action="store_true", help="every annotated encounter, not only the failing ones")
    exp.add_argument("--format", choices=["csv", "jsonl"], default="csv")
    exp.set_defaults(handler=cmd_export)
    tax = anns.add_parser("taxonomy", help="the failure modes of the failing annotations, by frequency")
    tax.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    tax.add_argument("--taxonomy", type=Path, metavar="FILE",
                     help="a project-level taxonomy file shared by runs (default RUN_DIR/taxonomy.json)")
    tax.add_argument("--json", action="store_true", help="print the report as JSON")
    tax.set_defaults(handler=cmd_taxonomy)
    sug = anns.add_parser("suggest-codes",
                          help="a judge suggests a failure mode for each uncoded failing annotation (prints them; "
                               "--save keeps them for the dashboard)")
    sug.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    sug.add_argument("--taxonomy", type=Path, metavar="FILE",
                     help="a project-level taxonomy file shared by runs (default RUN_DIR/taxonomy.json)")
    sug.add_argument("--json", action="store_true", help="print the suggestions as JSON")
    sug.add_argument("--save", action="store_true",
                     help="also append them to RUN_DIR/code_suggestions.jsonl, where the dashboard's coding screen "
                          "(c) offers them to accept (a) or change; annotations and taxonomy are not touched")
    add_judge_args(sug)
    sug.set_defaults(handler=cmd_suggest)


def cmd_export(args: argparse.Namespace) -> int:
    """``encsim annotations export``: see :func:`export`.

    Args:
        args: The parsed command line.

    Returns:
        The exit code (0).
    """
    return export(args.run_dir, out=args.out, every=args.all, fmt=args.format)


def export(run_dir: Path, *, out: Path | None, every: bool, fmt: Literal["csv", "jsonl"]) -> int:
    """Write a run's annotations to a CSV or JSON Lines file.

    Args:
        run_dir: The run directory.
        out: The output file (None: ``RUN_DIR/annotations_export.<fmt>``).
        every: Every annotated encounter (``--all``), not only the failing ones.
        fmt: ``csv`` or ``jsonl``.

    Returns:
        The exit code (0).

    Raises:
        RunWatchError: ``run_dir`` is not a run directory.
    """
    from review import export_annotations

    out = out or run_dir / f"annotations_export.{fmt}"
    n = export_annotations(run_dir, out, only="all" if every else "fail", fmt=fmt)
    print(f"{n} annotation(s) written to {out}")
    return 0


def cmd_taxonomy(args: argparse.Namespace) -> int:
    """``encsim annotations taxonomy``: see :func:`taxonomy`.

    Args:
        args: The parsed command line.

    Returns:
        The exit code (0).
    """
    return taxonomy(args.run_dir, taxonomy_path=args.taxonomy, as_json=args.json)


def taxonomy(run_dir: Path, *, taxonomy_path: Path | None, as_json: bool) -> int:
    """Print a run's failure modes by frequency among its failing annotations, and how many are uncoded.

    Args:
        run_dir: The run directory.
        taxonomy_path: A project-level taxonomy file (None: ``RUN_DIR/taxonomy.json``).
        as_json: Print JSON instead of a table.

    Returns:
        The exit code (0).

    Raises:
        RunWatchError: ``run_dir`` is not a run directory.
        TaxonomyError: The taxonomy file cannot be read or is invalid.
    """
    from review import RunWatchError, taxonomy_report

    try:
        report = taxonomy_report(run_dir, taxonomy_path)
    except RunWatchError as exc:
        raise RunWatchError(f"annotations taxonomy: {exc}") from None
    print(json.dumps(taxonomy_json(report), indent=2, ensure_ascii=False) if as_json else taxonomy_table(report))
    return 0


def taxonomy_json(report: TaxonomyReport) -> dict[str, Any]:
    """The report as a JSON object: the taxonomy file, failing and uncoded counts, and one entry per mode.

    Args:
        report: What ``review.taxonomy_report`` returned.

    Returns:
        The JSON object.
    """
    return {
        "taxonomy": str(report.taxonomy_path), "failing": report.failing, "uncoded": report.uncoded,
        "uncoded_examples": report.uncoded_examples,
        "modes": [{"name": r.name, "count": r.count, "share": round(r.share, 4), "examples": r.examples,
                   "definition": r.definition, "in_taxonomy": r.in_taxonomy} for r in report.rows],
    }


def taxonomy_table(report: TaxonomyReport) -> str:
    """The report as a plain-text table: mode, count, share of failing traces, examples, definition.

    Args:
        report: What ``review.taxonomy_report`` returned.

    Returns:
        The lines to print.
    """
    head = (f"failure modes of {report.failing} failing trace(s), taxonomy {report.taxonomy_path} "
            f"({len(report.rows)} mode(s))")
    rows = [("mode", "count", "share", "examples", "definition")]
    for r in report.rows:
        definition = one_line(r.definition) or "(no definition yet)"
        if not r.in_taxonomy:
            definition = "(not in the taxonomy file) " + definition
        rows.append((one_line(r.name), str(r.count), f"{r.share:.0%}", ", ".join(r.examples) or "-", definition))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [head, ""] if report.rows else [head, "", "no failure modes yet: code the failing annotations in the "
                                                     "dashboard (encsim watch RUN_DIR, then c)"]
    if report.rows:
        lines += ["  ".join([*(cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True)), row[4]]).rstrip()
                  for row in rows]
    uncoded = f"uncoded: {report.uncoded} of {report.failing} failing trace(s)"
    if report.uncoded_examples:
        uncoded += f" (e.g. {', '.join(report.uncoded_examples)})"
    return "\n".join([*lines, "", uncoded])


SUGGEST_SYSTEM = (
    "You help a clinical reviewer code failing AI-clinician encounters into failure modes. You get the "
    "failure modes found so far (name: definition) and one reviewer's note on a failing encounter. Answer with "
    'one JSON object {"mode": "<name>", "reason": "<one sentence>", "definition": "<one sentence>"}: the name '
    "of the existing mode the note describes, or, if none fits, a new short snake_case name for the failure and "
    "its definition (what a trace with this failure shows; empty for an existing mode). Nothing else."
)


def cmd_suggest(args: argparse.Namespace) -> int:
    """``encsim annotations suggest-codes``: see :func:`suggest`.

    Args:
        args: The parsed command line.

    Returns:
        The exit code (0).
    """
    return suggest(args.run_dir, taxonomy_path=args.taxonomy, options=JudgeOptions.from_namespace(args),
                   as_json=args.json, save=args.save)


def suggest(run_dir: Path, *, taxonomy_path: Path | None, options: JudgeOptions, as_json: bool,
            save: bool = False) -> int:
    """Print a judge's suggested failure mode for every uncoded failing annotation of a run.

    Args:
        run_dir: The run directory.
        taxonomy_path: A project-level taxonomy file (None: ``RUN_DIR/taxonomy.json``).
        options: The judge flags (``--judge``, ``--judge-base-url``, ...).
        as_json: Print JSON instead of lines.
        save: Also append the suggestions to RUN_DIR/code_suggestions.jsonl (``saved_suggestions``).

    Returns:
        The exit code (0).

    Raises:
        ConfigError: No ``--judge``, or the taxonomy file is invalid.
        RunWatchError: ``run_dir`` is not a run directory.
    """
    from review import AnnotationStore, RunWatchError, taxonomy_file, taxonomy_report

    if not options.models:
        raise ConfigError("encsim annotations suggest-codes needs a --judge (with --judge-base-url, or --judge "
                          "local) to suggest failure modes.")
    try:
        taxonomy_report(run_dir, taxonomy_path)  # checks the run directory and the taxonomy file
    except RunWatchError as exc:
        raise RunWatchError(f"annotations suggest-codes: {exc}") from None
    taxonomy = load_taxonomy(taxonomy_file(run_dir, taxonomy_path))
    latest = AnnotationStore(run_dir).load()
    uncoded = [a for t, a in sorted(latest.items()) if a.verdict == "fail" and not a.failure_mode]
    rows = asyncio.run(_suggest(uncoded, [(m.name, m.definition) for m in taxonomy.modes], options))
    saved = saved_suggestions(uncoded, rows, now=time.time()) if save else []
    if saved:
        append_code_suggestions(RunLayout(run_dir).code_suggestions, saved)
    if as_json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    print(f"{len(uncoded)} uncoded failing annotation(s); suggestions only: code them in the dashboard "
          f"(encsim watch {run_dir}, then c)")
    for row in rows:
        mode = row["mode"] or "(no answer)"
        tag = " (new)" if row["new"] else ""
        print(f"{row['trace_id']}  {row['judge']}: {one_line(mode)}{tag}  {one_line(row['reason'])}")
    if save:
        print(f"{len(saved)} suggestion(s) saved to {RunLayout(run_dir).code_suggestions}: accept (a) or change "
              "them in the dashboard's coding screen")
    return 0


def saved_suggestions(annotations: list[Any], rows: list[dict[str, Any]], *, now: float) -> list[CodeSuggestion]:
    """One suggestion per annotation the judges answered for: the mode most of them named (ties: the first named).

    Args:
        annotations: The uncoded failing annotations the judges were asked about.
        rows: The judges' answers (one per annotation and judge, as printed by ``--json``).
        now: The time to stamp them with.

    Returns:
        The suggestions to save, in the order of ``annotations``.
    """
    out = []
    for ann in annotations:
        answered = [r for r in rows if r["trace_id"] == ann.trace_id and r["mode"]]
        if not answered:
            continue
        mode = Counter(r["mode"] for r in answered).most_common(1)[0][0]
        chosen = [r for r in answered if r["mode"] == mode]
        new = chosen[0]["new"]
        out.append(CodeSuggestion(
            trace_id=ann.trace_id, mode=mode, new_mode=new,
            definition=next((r["definition"] for r in chosen if r["definition"]), "") if new else "",
            judges=[r["judge"] for r in chosen], reason=chosen[0]["reason"], notes=ann.notes,
            annotation_timestamp=ann.timestamp, time=now))
    return out


async def _suggest(annotations: list[Any], modes: list[tuple[str, str]],
                   options: JudgeOptions) -> list[dict[str, Any]]:
    from sim.agents import LlamaServer
    from sim.judges import load_family_map, make_judges

    known = {name for name, _ in modes}
    listing = "\n".join(f"- {name}: {definition or '(no definition yet)'}" for name, definition in modes) or \
        "(none yet)"
    server = await LlamaServer().start() if "local" in options.models else None
    judges = make_judges(options.models, options.base_urls, options.api_key_envs,
                         local_base_url=server.base_url if server else None,
                         families=load_family_map(options.family_map), concurrency=options.concurrency)
    try:
        async def one(ann: Any, judge: Any) -> dict[str, Any]:
            note = ann.notes or "(no note)"
            messages = [{"role": "system", "content": SUGGEST_SYSTEM},
                        {"role": "user", "content": f"Failure modes:\n{listing}\n\nSeverity: "
                                                    f"{ann.severity or 'not given'}\nReviewer's note: {note}"}]
            answer = await judge.ask_json(messages, keys={"mode": str, "reason": str})
            mode = mode_slug(answer["mode"]) if answer else ""
            definition = answer.get("definition") if answer else None
            return {"trace_id": ann.trace_id, "judge": judge.name, "mode": mode or None,
                    "new": bool(mode) and mode not in known, "reason": answer["reason"] if answer else "",
                    "definition": " ".join(definition.split()) if isinstance(definition, str) else "",
                    "notes": ann.notes}

        return list(await asyncio.gather(*(one(a, j) for a in annotations for j in judges)))
    finally:
        for judge in judges:
            await judge.aclose()
        if server is not None:
            server.stop()
