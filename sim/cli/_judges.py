"""``encsim judges build|validate``: binary failure-mode judges from a run's coded annotations, checked against people.

``build RUN_DIR``: for each failure mode of the run's taxonomy with enough labels, a judge
(``judges/<mode>.yaml``) from the mode's definition and few-shot examples of the train split.

``validate RUN_DIR --judge ...``: each judge is run on the labelled traces of the dev and test splits; TPR and
TNR with Wilson intervals, the confusion matrix and the traces where judge and people disagree are printed.
With ``--apply-to RUN``, the judge is run on every encounter of that (unlabelled) run too, and its raw
failure rate is printed beside the Rogan-Gladen corrected rate and its bootstrap CI (or "unusable" when the
judge's TPR + TNR - 1 <= 0.2 on the test split). Every validation is also saved as RUN_DIR/judge_validation.json
(the same figures as ``--json``), which the dashboard reads to show the disagreements beside the traces, and
recorded beside the judges as ``<judges DIR>/validation.json`` (``sim.records.JudgeValidationRecord``: per mode
the validated prompt's hash, the judge models, the test split's confusion matrix and its labels and verdicts;
modes validated before and not now are kept). A run judged with ``--failure-judges DIR`` reads it to give its
own corrected failure rates in summary.json and report.md.

Dev and test: iterate on a judge's prompt (edit ``judges/<mode>.yaml``) with ``validate --dev-only``, which runs
the dev split alone and records nothing; then validate once without it. The record keeps every prompt hash the
test split was run on (``tested_hashes``): after a second version, a note says the test figures are optimistic.

Labels, per mode: a trace people failed and coded with the mode shows it (true); a trace people passed, or
failed and coded with another mode, does not (false); a failing trace not coded yet is left out.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from sim.cli._common import CliParser, JudgeOptions, add_judge_args
from sim.records import (
    VALIDATION_FILE,
    ConfigError,
    JudgeValidity,
    ModeValidation,
    RunLayout,
    load_judge_validation,
    redact_json,
    save_judge_validation,
)

SPLIT_HELP = "train/dev/test shares of the labelled traces, e.g. 0.2/0.4/0.4 (the default)"


def register(subparsers: Any) -> None:  # argparse's _SubParsersAction is private
    """Add the ``judges`` parser and its ``build`` and ``validate`` actions.

    Args:
        subparsers: The ``encsim`` parser's subparsers.
    """
    jp = subparsers.add_parser("judges", help="binary failure-mode judges: build them and validate them")
    js = jp.add_subparsers(dest="action", required=True, parser_class=CliParser)
    build = js.add_parser("build", help="a judge per failure mode with enough labels, from a run's coded annotations")
    build.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    build.add_argument("--taxonomy", type=Path, metavar="FILE", help="the taxonomy (default RUN_DIR/taxonomy.json)")
    build.add_argument("--out", type=Path, metavar="DIR", help="where judges/<mode>.yaml go (default RUN_DIR/judges)")
    build.add_argument("--min-labels", type=int, default=5, metavar="N",
                       help="labelled traces needed on each side (showing the mode, and not) (default 5)")
    build.add_argument("--examples", type=int, default=4, metavar="N", help="few-shot examples per judge (default 4)")
    build.add_argument("--split", default="0.2/0.4/0.4", help=SPLIT_HELP)
    build.add_argument("--seed", type=int, default=0, help="seeds the split")
    build.set_defaults(handler=cmd_build)
    val = js.add_parser("validate", help="TPR/TNR of each judge against people on dev and test; corrected rates")
    val.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    val.add_argument("--judges", type=Path, metavar="DIR", help="the judges (default RUN_DIR/judges)")
    val.add_argument("--taxonomy", type=Path, metavar="FILE", help="the taxonomy (default RUN_DIR/taxonomy.json)")
    val.add_argument("--apply-to", type=Path, action="append", default=[], metavar="RUN",
                     help="a run to judge and give the corrected failure rate of (repeatable)")
    val.add_argument("--json", type=Path, dest="json_path", metavar="PATH", help="also write the figures as JSON")
    val.add_argument("--dev-only", action="store_true",
                     help="run the judges on the dev split only, to iterate on a prompt without touching the test "
                          "split; records nothing for correcting runs")
    add_judge_args(val)
    val.set_defaults(handler=cmd_validate)


def _split(text: str) -> tuple[float, float, float]:
    try:
        parts = tuple(float(p) for p in text.split("/"))
    except ValueError:
        parts = ()
    if len(parts) != 3 or any(p < 0 for p in parts) or abs(sum(parts) - 1) > 1e-6:
        raise ConfigError(f"--split {text!r}: give three shares for train/dev/test that sum to 1, e.g. 0.2/0.4/0.4.")
    return parts[0], parts[1], parts[2]


def labelled_traces(run_dir: Path, mode: str) -> dict[str, tuple[bool, str]]:
    """The run's traces people labelled for ``mode``: trace id -> (shows the mode, transcript text).

    Args:
        run_dir: The run directory (annotations.jsonl and results.jsonl).
        mode: The failure mode.

    Returns:
        Every labelled trace whose encounter has a transcript (see the module docstring for the labels).
    """
    from review import AnnotationStore, mode_label
    from scorers import transcript_text
    from sim.store import RunStore

    records, _ = RunStore.open(run_dir).load_records()
    out: dict[str, tuple[bool, str]] = {}
    for trace, note in AnnotationStore(run_dir).load().items():
        sid, _, k = trace.rpartition(":")
        rec = records.get((sid, int(k))) if k.isdigit() else None
        label = mode_label(note, mode)  # None: no verdict, or failing and not coded yet
        if rec is None or rec.result is None or label is None:
            continue
        out[trace] = (label, transcript_text(rec.result))
    return out


def cmd_build(args: argparse.Namespace) -> int:
    """``encsim judges build``: a judge per failure mode with enough labels.

    Args:
        args: The parsed command line.

    Returns:
        The exit code: 0, or 2 when no mode had enough labels.
    """
    from scorers import build_failure_judge, write_failure_judge
    from sim.records import RunLayout, load_taxonomy
    from sim.store import RunStore

    RunStore.open(args.run_dir)  # a clear error for a path that is not a run directory
    fractions = _split(args.split)
    if args.min_labels < 1 or args.examples < 0:
        raise ConfigError("--min-labels must be at least 1 and --examples at least 0.")
    taxonomy_path = args.taxonomy or RunLayout(args.run_dir).taxonomy
    taxonomy = load_taxonomy(taxonomy_path)
    out = args.out or args.run_dir / "judges"
    built = 0
    for mode in taxonomy.modes:
        labelled = labelled_traces(args.run_dir, mode.name)
        shows = sum(label for label, _ in labelled.values())
        absent = len(labelled) - shows
        if shows < args.min_labels or absent < args.min_labels:
            print(f"skip: {mode.name}: {shows} trace(s) show it and {absent} do not; a judge needs "
                  f"{args.min_labels} of each (--min-labels)")
            continue
        if not mode.definition.strip():
            print(f"skip: {mode.name}: no definition; give it one in {taxonomy_path} (or the dashboard's coding "
                  "screen) first")
            continue
        spec = build_failure_judge(mode.name, mode.definition, labelled, n_examples=args.examples,
                                   fractions=fractions, seed=args.seed, built_from=str(args.run_dir))
        path = write_failure_judge(spec, out)
        built += 1
        print(f"built: {path} ({shows} showing, {absent} not; {len(spec.examples)} example(s) from the train split)")
    if not built:
        raise ConfigError(f"{args.run_dir}: no failure mode of {taxonomy_path} has {args.min_labels} labelled traces "
                          "on each side and a definition, so no judge was built. Code more failing annotations "
                          "(the dashboard's `c` screen) or lower --min-labels.")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    """``encsim judges validate``: each judge against people, and corrected failure rates.

    Args:
        args: The parsed command line.

    Returns:
        The exit code (0).
    """
    from scorers import load_failure_judges
    from sim.store import RunStore

    for run in (args.run_dir, *args.apply_to):
        RunStore.open(run)  # a clear error for a path that is not a run directory
    options = JudgeOptions.from_namespace(args)
    if not options.models:
        raise ConfigError("encsim judges validate needs a --judge (with --judge-base-url, or --judge local) to run "
                          "the failure-mode judges.")
    if args.dev_only and args.apply_to:
        raise ConfigError("judges validate --dev-only cannot be used with --apply-to: a corrected failure rate needs "
                          "the judge's test-split figures. Validate without --dev-only once the prompt is final.")
    folder = args.judges or args.run_dir / "judges"
    specs = load_failure_judges(folder)
    saved = RunLayout(args.run_dir).judge_validation  # the dashboard shows its disagreements beside the traces
    record_path = folder / VALIDATION_FILE  # a run judged by these judges corrects its rates with it
    targets = [(saved, "RUN_DIR"), (record_path, "--judges"), *([(args.json_path, "--json")] if args.json_path else [])]
    for path, flag in targets:  # before any judge call is paid for
        _check_writable(path, flag)
    report, validated = asyncio.run(_validate(args.run_dir.resolve(), specs, options, args.apply_to,
                                              dev_only=args.dev_only))
    record = load_judge_validation(record_path)
    for v in validated:  # the test split's history travels with the mode's record
        before = record.judges.get(v.mode)
        seen = [*(before.tested_hashes if before is not None else []), v.judge_hash]
        v.tested_hashes = list(dict.fromkeys(seen))
    print(render_validation(report))
    for v in validated:
        if len(v.tested_hashes) > 1:
            print(f"note: the test split of {v.mode} has now been run on {len(v.tested_hashes)} versions of its judge; "
                  "having chosen between prompts on it, its figures are optimistic. Iterate with --dev-only, and "
                  "relabel or re-split (--seed in judges build) for a fresh held-out estimate.")
    text = redact_json(json.dumps(report, indent=2))
    try:
        if args.json_path:
            args.json_path.write_text(text, encoding="utf-8")
        tmp = saved.with_name(saved.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(saved)
        if validated:
            record.judges.update({v.mode: v for v in validated})
            save_judge_validation(record_path, record)
    except OSError as exc:
        raise ConfigError(f"judges validate measured the judges (printed above) but could not save the figures: "
                          f"{exc}. Make the folder writable and run it again.") from None
    return 0


def _check_writable(path: Path, flag: str) -> None:
    """A one-paragraph error, before the judges run, when ``path`` cannot be written (no folder, or read-only).

    Args:
        path: A file ``judges validate`` will write.
        flag: The argument that names it.

    Raises:
        ConfigError: The file cannot be written.
    """
    import os

    folder = path.parent
    if not folder.is_dir():
        raise ConfigError(f"judges validate cannot write {path} ({flag}): the folder {folder} does not exist. "
                          "Create it or give another path.")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ConfigError(f"judges validate cannot write {path} ({flag}): it is read-only. Make it writable or give "
                          "another path.")


async def _validate(run_dir: Path, specs: list[Any], options: JudgeOptions, apply_to: list[Path], *,
                    dev_only: bool = False) -> tuple[list[dict[str, Any]], list[ModeValidation]]:
    from scorers import corrected_failure_rate, judge_validity, run_failure_judge, split_of, transcript_text
    from sim.agents import LlamaServer
    from sim.judges import load_family_map, make_judges
    from sim.store import RunStore

    server = await LlamaServer().start() if "local" in options.models else None
    judges = make_judges(options.models, options.base_urls, options.api_key_envs,
                         local_base_url=server.base_url if server else None,
                         families=load_family_map(options.family_map), concurrency=options.concurrency)
    out = []
    validated = []
    try:
        for spec in specs:
            labelled = labelled_traces(run_dir, spec.mode)
            fractions = (spec.split[0], spec.split[1], spec.split[2])
            splits = {t: split_of(t, fractions=fractions, seed=spec.seed) for t in labelled}
            unseen = [t for t in labelled if splits[t] == "dev" or (splits[t] == "test" and not dev_only)]
            said = await asyncio.gather(*(run_failure_judge(spec, labelled[t][1], judges) for t in unseen))
            verdicts = {t: r.details.get("verdict") for t, r in zip(unseen, said, strict=True)}
            row: dict[str, Any] = {"mode": spec.mode, "judge_hash": spec.hash,
                                   "edited": spec.hash != spec.computed_hash(), "test": None, "runs": []}
            for name in ("dev",) if dev_only else ("dev", "test"):
                labels = {t: labelled[t][0] for t in unseen if splits[t] == name}
                row[name] = judge_validity(labels, verdicts, split=name).model_dump()
            if dev_only:  # the test split stays untouched: nothing to record, nothing to correct with
                out.append(row)
                continue
            test = [t for t in unseen if splits[t] == "test" and verdicts[t] is not None]
            validated.append(ModeValidation(
                mode=spec.mode, judge_hash=spec.computed_hash(), judge_models=[j.name for j in judges],
                labelled_run=str(run_dir), split=list(fractions), seed=spec.seed, validated_at=time.time(),
                test=JudgeValidity.model_validate(row["test"]), test_labels=[labelled[t][0] for t in test],
                test_verdicts=[bool(verdicts[t]) for t in test]))
            for run in apply_to:
                records, _ = RunStore.open(run).load_records()
                texts = [transcript_text(r.result) for r in records.values() if r.status == "ok" and r.result]
                judged = await asyncio.gather(*(run_failure_judge(spec, text, judges) for text in texts))
                run_verdicts = [bool(v) for r in judged if (v := r.details.get("verdict")) is not None]
                rate = corrected_failure_rate([labelled[t][0] for t in test], [bool(verdicts[t]) for t in test],
                                              run_verdicts)
                row["runs"].append({"run": str(run), "no_verdict": len(texts) - len(run_verdicts),
                                    **rate.model_dump()})
            out.append(row)
    finally:
        for j in judges:
            await j.aclose()
        if server is not None:
            server.stop()
    return out, validated


def _rate(value: float | None, ci: list[float] | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def render_validation(report: list[dict[str, Any]]) -> str:
    """The validation figures as text: per judge and split, the confusion matrix, TPR and TNR; corrected rates.

    Args:
        report: What ``judges validate`` measured (one dict per judge).

    Returns:
        The text.
    """
    lines = []
    for row in report:
        lines.append(f"{row['mode']}" + ("  (edited since it was built)" if row["edited"] else ""))
        for name in ("dev", "test"):
            v = row[name]
            if v is None:
                lines.append(f"  {name:4}  not run (--dev-only: the test split stays held out)")
                continue
            n = v["tp"] + v["fn"] + v["tn"] + v["fp"]
            lines.append(f"  {name:4}  n {n:>3}  TPR {_rate(v['tpr'], v['tpr_ci95'])}"
                         f"  TNR {_rate(v['tnr'], v['tnr_ci95'])}"
                         f"  [tp {v['tp']} fn {v['fn']} tn {v['tn']} fp {v['fp']}]"
                         + (f"  no verdict {v['no_verdict']}" if v["no_verdict"] else "")
                         + ("" if v["usable"] else "  UNUSABLE (TPR + TNR - 1 <= 0.2)"))
            if v["disagreements"]:
                lines.append(f"        disagree with people: {', '.join(v['disagreements'][:10])}"
                             + (" ..." if len(v["disagreements"]) > 10 else ""))
        for run in row["runs"]:
            corrected = (_rate(run["corrected"], run["ci95"]) if run["corrected"] is not None
                         else f"none: {run['unusable_reason']}")
            lines.append(f"  {run['run']}: raw failure rate {_rate(run['raw'], None)} over {run['n']} judged "
                         f"encounter(s); corrected {corrected}")
    return "\n".join(lines) if lines else "no judges"
