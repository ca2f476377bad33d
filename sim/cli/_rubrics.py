"""``encsim rubrics generate PATH... --out DIR [--judge MODEL ...]``: rubrics for scenarios that have none.

Each encounter scenario without hand-written ``rubrics`` gets ``DIR/<scenario_id>.rubrics.yaml`` (a
``scenarios.schema.RubricFile``). Without ``--judge`` it comes from the deterministic track
(``scorers.generate_rubrics``). With ``--judge MODEL --judge-base-url URL [--judge-api-key-env VAR]`` (or
``--judge local``, the embedded model; one judge) it comes from the model track
(``scorers.generate_model_rubrics``): the model's clinical criteria and interaction intents, with the
deterministic audit's additions; the file's ``generated_by`` names the judge model and its ``audit`` lists the
covered, added and dropped criteria. A scenario whose judge calls give no valid JSON gets no file and one
``error: <scenario_id>: ...`` line; the others go on, and the command exits 3 at the end. There is no fallback
to the deterministic track, and API keys are never written.

A scenario uses a file with ``rubrics_from: <file>``. Scenario files are never changed. A rubric file in DIR
that was edited by hand (its criteria no longer match its hash) is left as it is unless ``--force``; one that
was not is regenerated. Imaging items and replays are skipped (their own targets score them), and so are
scenarios with hand-written rubrics.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.cli._common import EXIT_RUN_ERRORS, CliParser, JudgeOptions, add_judge_args, report_error

if TYPE_CHECKING:
    from scenarios.schema import Scenario
    from scorers import ModelRubric, RubricGenerationError

RUBRIC_MAX_TOKENS = 4096  # a whole rubric in one JSON reply; the judges' default (512) is for one verdict


def register(subparsers: Any) -> None:  # argparse's _SubParsersAction is private
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
    add_judge_args(gen)
    gen.set_defaults(handler=cmd_generate)


def cmd_generate(args: argparse.Namespace) -> int:
    """``encsim rubrics generate``: see :func:`generate`.

    Args:
        args: The parsed command line.

    Returns:
        The exit code: 0, or 3 when the judge failed for some scenario.
    """
    judge = JudgeOptions.from_namespace(args)
    return generate(list(args.paths), out=args.out, force=args.force, judge=judge if judge.models else None)


async def _model_rubrics(scenarios: list[Scenario],
                         options: JudgeOptions) -> dict[str, ModelRubric | RubricGenerationError]:
    """The model track for each scenario, concurrently (the judge's --judge-concurrency bounds its calls)."""
    from scorers import RubricGenerationError, generate_model_rubrics
    from sim.agents import LlamaServer
    from sim.judges import load_family_map, make_judges
    from sim.records import ConfigError

    if len(options.models) != 1:
        raise ConfigError(f"--judge given {len(options.models)} times: rubrics generate uses one model; give one "
                          "--judge (with its --judge-base-url, or --judge local).")
    families = load_family_map(options.family_map)
    server = await LlamaServer().start() if options.models == ["local"] else None
    try:
        judges = make_judges(options.models, options.base_urls, options.api_key_envs,
                             local_base_url=server.base_url if server else None, families=families,
                             concurrency=options.concurrency)
        judge = judges[0]
        judge.max_tokens = max(judge.max_tokens, RUBRIC_MAX_TOKENS)

        async def one(s: Scenario) -> ModelRubric | RubricGenerationError:
            try:
                return await generate_model_rubrics(s, judge)
            except RubricGenerationError as exc:
                return exc

        try:
            done = await asyncio.gather(*(one(s) for s in scenarios))
        finally:
            await judge.aclose()
    finally:
        if server is not None:
            server.stop()
    return {s.id: r for s, r in zip(scenarios, done, strict=True)}


def generate(specs: list[str], *, out: Path, force: bool = False, judge: JudgeOptions | None = None) -> int:
    """Write a rubric file for every encounter scenario of ``specs`` that has no rubrics.

    Args:
        specs: Scenario ids, files or folders, as ``--scenarios`` takes them.
        out: The folder to write to (created).
        force: Overwrite rubric files edited by hand too.
        judge: The judge flags for the model track (None: the deterministic track).

    Returns:
        The exit code: 0, or 3 when the judge gave no valid answer for some scenario (each named on stderr).

    Raises:
        ConfigError: ``out`` cannot be used as a folder, or the judge flags are wrong.
        ScenarioError: A scenario cannot be loaded.
    """
    import yaml

    from scenarios import resolve
    from scenarios.loader import RUBRICS_SUFFIX, ScenarioError, load_rubric_file
    from scenarios.schema import RubricFile, rubric_hash
    from scorers import GENERATOR, RubricGenerationError, generate_rubrics
    from sim.records import ConfigError, one_line, redact

    items = resolve([s for spec in specs for s in spec.split(",") if s])
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--out {out}: cannot create the folder ({exc.strerror}). Give a folder you can write "
                          "to.") from None
    written = kept = skipped = failed = 0
    todo = []
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
        todo.append((item, path))
    model = asyncio.run(_model_rubrics([i.scenario for i, _ in todo], judge)) if judge is not None and todo else {}
    for item, path in todo:
        s = item.scenario
        if judge is None:
            rubrics, generated_by, audit = generate_rubrics(s), GENERATOR, None
        else:
            answer = model[s.id]
            if isinstance(answer, RubricGenerationError):
                left = f"; the earlier {path} is left as it was" if path.exists() else ""
                report_error(f"{answer}{left}")
                failed += 1
                continue
            rubrics, generated_by, audit = answer.rubrics, answer.generated_by, answer.audit
        doc = RubricFile(generated_by=generated_by, scenario_id=s.id, scenario_sha256=item.sha256,
                         hash=rubric_hash(rubrics), rubrics=rubrics, audit=audit)
        text = yaml.safe_dump(doc.model_dump(mode="json", exclude_none=True), sort_keys=False, allow_unicode=True,
                              width=120)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(redact(f"# {generated_by}: use it with `rubrics_from: {path.name}` in {s.id}'s scenario "
                              f"file\n" + text), encoding="utf-8")
        os.replace(tmp, path)
        written += 1
        if audit is not None:
            print(one_line(f"written: {path}: {len(rubrics)} criteria; the audit covered {len(audit.covered)} and "
                           f"added {len(audit.added)} ({', '.join(audit.added) or 'none'}); {len(audit.dropped)} "
                           "dropped" + "".join(f"; {d.source or '-'}: {d.reason}" for d in audit.dropped)))
            if len(audit.added) == len(rubrics):  # nothing of the model's own survived its checks
                print(one_line(f"warning: {s.id}: none of the model's criteria or intents were usable, so "
                               f"{path.name} holds only the deterministic criteria the audit added; try a stronger "
                               "--judge, or use `encsim rubrics generate` without one"), file=sys.stderr)
    print(f"{written} rubric file(s) written to {out}, {kept} kept (edited by hand), {skipped} scenario(s) skipped "
          "(imaging items, replays, hand-written rubrics)" + (f", {failed} failed (the judge gave no valid rubric)"
                                                              if failed else ""), file=sys.stderr)
    return EXIT_RUN_ERRORS if failed else 0
