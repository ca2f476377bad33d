"""``encsim rubrics generate PATH... --out DIR``: instance-specific rubrics for scenarios that have none.

Each encounter scenario without hand-written ``rubrics`` gets ``DIR/<scenario_id>.rubrics.yaml`` (a
``scenarios.schema.RubricFile``) from the deterministic track (``scorers.generate_rubrics``). A scenario uses
it with ``rubrics_from: <file>``. Scenario files are never changed. A rubric file in DIR that was edited by
hand (its criteria no longer match its hash) is left as it is unless ``--force``; one that was not is
regenerated. Imaging items and replays are skipped (their own targets score them), and so are scenarios with
hand-written rubrics.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from sim.cli._common import CliParser


def register(subparsers: Any) -> None:  # noqa: ANN401 - argparse's _SubParsersAction is private
    """Add the ``rubrics`` parser and its ``generate`` action.

    Args:
        subparsers: The ``encsim`` parser's subparsers.
    """
    rub = subparsers.add_parser("rubrics", help="instance-specific rubrics generated from scenarios")
    rubs = rub.add_subparsers(dest="action", required=True, parser_class=CliParser)
    gen = rubs.add_parser("generate", help="write rubric files for encounter scenarios that have no rubrics")
    gen.add_argument("paths", nargs="+", metavar="PATH", help="scenario ids, files or folders (as --scenarios: "
                                                              "'all' is the library)")
    gen.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder for <scenario_id>.rubrics.yaml")
    gen.add_argument("--force", action="store_true", help="also overwrite rubric files edited by hand")
    gen.set_defaults(handler=cmd_generate)


def cmd_generate(args: argparse.Namespace) -> int:
    """``encsim rubrics generate``: see :func:`generate`.

    Args:
        args: The parsed command line.

    Returns:
        The exit code (0).
    """
    return generate(list(args.paths), out=args.out, force=args.force)


def generate(specs: list[str], *, out: Path, force: bool = False) -> int:
    """Write a rubric file for every encounter scenario of ``specs`` that has no rubrics.

    Args:
        specs: Scenario ids, files or folders, as ``--scenarios`` takes them.
        out: The folder to write to (created).
        force: Overwrite rubric files edited by hand too.

    Returns:
        The exit code (0).

    Raises:
        ConfigError: ``out`` cannot be used as a folder.
        ScenarioError: A scenario cannot be loaded.
    """
    import yaml

    from scenarios import resolve
    from scenarios.loader import RUBRICS_SUFFIX, ScenarioError, load_rubric_file
    from scenarios.schema import RubricFile, rubric_hash
    from scorers import GENERATOR, generate_rubrics
    from sim.records import ConfigError

    items = resolve([s for spec in specs for s in spec.split(",") if s])
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--out {out}: cannot create the folder ({exc.strerror}). Give a folder you can write "
                          "to.") from None
    written = kept = skipped = 0
    for item in items:
        s = item.scenario
        if s.imaging is not None or s.replay is not None:
            skipped += 1
            continue
        if s.rubrics:
            print(f"skip: {s.id} has hand-written rubrics; they are left as they are")
            skipped += 1
            continue
        path = out / f"{s.id}{RUBRICS_SUFFIX}"
        if path.exists() and not force:
            try:
                old = load_rubric_file(path)
                edited = old.hash != rubric_hash(old.rubrics)
            except ScenarioError:
                edited = True
            if edited:
                print(f"kept: {path} was edited by hand (or is not a rubric file); --force overwrites it")
                kept += 1
                continue
        rubrics = generate_rubrics(s)
        doc = RubricFile(generated_by=GENERATOR, scenario_id=s.id, scenario_sha256=item.sha256,
                         hash=rubric_hash(rubrics), rubrics=rubrics)
        text = yaml.safe_dump(doc.model_dump(mode="json", exclude_none=True), sort_keys=False, allow_unicode=True,
                              width=120)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(f"# {GENERATOR}: use it with `rubrics_from: {path.name}` in {s.id}'s scenario file\n"
                       + text, encoding="utf-8")
        os.replace(tmp, path)
        written += 1
    print(f"{written} rubric file(s) written to {out}, {kept} kept (edited by hand), {skipped} scenario(s) skipped "
          "(imaging items, replays, hand-written rubrics)", file=sys.stderr)
    return 0
