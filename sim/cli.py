"""``encsim``: the command line. The only place that wires scenarios, agents, channels, runner and
scorers together. User errors print one paragraph and exit 2; Ctrl-C exits 130 with a resume hint.

    encsim run [--scenarios X ...] [--model M] [--k N] [--concurrency N] [--seed N] [--out DIR]
        [--patient-model M [--patient-base-url URL] [--patient-api-key-env VAR]]
    encsim run --resume DIR [--retry-errors]
    encsim report DIR
    encsim scenarios list [--suite S]
    encsim scenarios validate PATH...
    encsim scenarios lint PATH...
    encsim live SCENARIO [--connect ws://HOST:PORT/PATH | --serve] [--port N] [--out DIR]
    encsim serve-agent --model local|scripted:reference|<endpoint model> [--scenario ID] [--port N]
    encsim watch [RUN_DIR] [--reviewer NAME]
    encsim annotations export RUN_DIR [--out FILE] [--all] [--format csv|jsonl]
    encsim demo
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

from scenarios import LoadedScenario, ScenarioError, load_library, load_scenario, resolve
from scorers import PROFILES, ProfileError, Summary, guard_self_preference, load_profile
from scorers.evaluators import EvaluatorError, load_evaluator_module
from sim.agents import LlamaServer, LocalAgent, check_model_spec, make_agent
from sim.agents.chat import PATIENT_FLAGS, api_key_from_env, check_base_url, check_call_timeout
from sim.channel import TextChannel
from sim.harness import HARNESS_VERSION
from sim.judges import (
    DEFAULT_JUDGE_CONCURRENCY,
    JudgeClient,
    family_of,
    judge_from_ref,
    load_family_map,
    make_judges,
    plan_judges,
)
from sim.patient_model import PatientModel
from sim.records import (
    Channel,
    ConfigError,
    EncounterRecord,
    EncSimError,
    JudgeRef,
    RunMeta,
    ScenarioRef,
    clean,
    one_line,
    package_versions,
    redact_json,
)
from sim.runner import (
    DEFAULT_FAIL_FAST,
    MAX_CONCURRENCY,
    MAX_ENCOUNTERS,
    MAX_K,
    check_plan_size,
    run_batch,
    summarise,
    text_progress,
)
from sim.store import RunStore, new_run_id

EXIT_USER_ERROR = 2
EXIT_RUN_ERRORS = 3  # the run finished, but encounters errored or an evaluator raised
EXIT_EVALUATOR_ERRORS = EXIT_RUN_ERRORS
EXIT_INTERRUPTED = 130
DEMO_SCENARIOS = ["acs_chest_pain", "viral_uri"]
DEMO_K = 2
DEMO_MAX_TURNS = 5


def _positive(flag: str):  # noqa: ANN202 - argparse type factory
    def parse(value: str) -> int:
        try:
            n = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be a whole number, got {value!r}") from None
        if n < 1:
            raise argparse.ArgumentTypeError(f"{flag} must be at least 1, got {n}")
        return n
    return parse


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one paragraph, exit 2, no usage dump
        raise ConfigError(f"{message}. Run `{self.prog} --help` for the options.")


def _add_judge_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--judge", action="append", default=[], metavar="MODEL",
                        help="a judge model for the judge path (repeatable; 'local' = the embedded model)")
    parser.add_argument("--judge-base-url", action="append", default=[], metavar="URL",
                        help="the endpoint of each non-local --judge, in the same order")
    parser.add_argument("--judge-api-key-env", action="append", default=[], metavar="VAR",
                        help="key variable for the judges: once for all, or once per non-local judge")
    parser.add_argument("--judge-concurrency", type=int, default=DEFAULT_JUDGE_CONCURRENCY, metavar="N",
                        help=f"calls in flight per judge, across encounters (default {DEFAULT_JUDGE_CONCURRENCY})")
    parser.add_argument("--family-map", type=Path, metavar="FILE",
                        help="JSON {family: [name or URL substrings]} for the judges' self-preference guard")


def _add_door_args(parser: argparse.ArgumentParser) -> None:
    """Who may call a websocket the project serves (`live`, `serve-agent`): see audio/live.py."""
    parser.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                        help="also accept websocket calls from web pages of this origin (scheme://host[:port]; "
                             "repeatable). Default: pages on 127.0.0.1 / localhost / [::1] and programs only")
    parser.add_argument("--join-window", type=float, default=10.0, metavar="SECONDS",
                        help="a connection that sends no audio this long after connecting is closed and does not "
                             "count as a call (default 10)")


# `run` flags that only say how to carry out the plan; every other flag is the plan, stored in run.json, and
# `--resume` continues that plan (so a flag of the plan given with --resume is an error, never silently ignored)
_RESUME_FLAGS = frozenset({"resume", "retry_errors", "concurrency", "i_know", "fail_fast", "no_progress", "quiet",
                           "tui", "reviewer", "judge_concurrency", "help"})


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="encsim", description="Voice and multimodal clinical encounter simulator.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = sub.add_parser("run", help="run scenarios x K encounters against a model into a run directory")
    run.add_argument("--scenarios", action="append", default=[], metavar="X",
                     help="scenario file, folder, id or suite name; repeatable or comma-separated (default: all)")
    run.add_argument("--model", default="local",
                     help="local (embedded SmolLM2), scripted:reference, scripted:natural, scripted:undertriage, "
                          "or an endpoint's model name")
    run.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    run.add_argument("--api-key-env", metavar="VAR", help="name of the environment variable holding the API key")
    run.add_argument("--call-timeout", type=check_call_timeout, metavar="SECONDS",
                     help="total deadline of one endpoint call attempt: connect, send, read the whole reply "
                          "(default 30 s for the model, 60 s for remote judges); then the retry policy")
    run.add_argument("--gguf", type=Path, help="with --model local: another GGUF model file")
    run.add_argument("--k", type=_positive("--k"), default=10,
                     help=f"runs per scenario (default 10; at most {MAX_K}, and scenarios x K at most "
                          f"{MAX_ENCOUNTERS:,}, unless --i-know)")
    run.add_argument("--concurrency", type=_positive("--concurrency"), default=4,
                     help=f"encounters at once (default 4; at most {MAX_CONCURRENCY} unless --i-know)")
    run.add_argument("--i-know", action="store_true",
                     help="allow a plan over the limits of --k and --concurrency (a typo like --k 3000000 would "
                          "otherwise run for days)")
    run.add_argument("--fail-fast", type=int, default=DEFAULT_FAIL_FAST, metavar="N",
                     help=f"stop the run (exit 2) when the first N agent calls all fail with the same cause that "
                          f"every call would repeat: connection refused, unknown host, HTTP 401/403/404 "
                          f"(default {DEFAULT_FAIL_FAST}; 0 = never)")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--max-turns", type=_positive("--max-turns"), help="override every scenario's turn limit")
    run.add_argument("--out", type=Path, help="run directory (default runs/<time>-<model>)")
    run.add_argument("--resume", type=Path, metavar="DIR",
                     help="continue a killed run; the plan's flags come from its run.json")
    run.add_argument("--retry-errors", action="store_true", help="with --resume: run errored encounters again")
    run.add_argument("--no-progress", action="store_true", help="print one line per encounter instead of a bar")
    run.add_argument("--quiet", action="store_true", help="no progress output, only the final summary")
    run.add_argument("--tui", action="store_true", help="watch the run in the terminal dashboard while it runs")
    run.add_argument("--reviewer", help="with --tui: the name annotations are saved under (default $USER)")
    _add_judge_args(run)
    run.add_argument("--patient-model", metavar="MODEL",
                     help="a model that also maps the agent's messages to fact ids (the patient's model layer; "
                          "'local' = the embedded model); the answers stay the scenario's text")
    run.add_argument("--patient-base-url", metavar="URL", help="the endpoint of a non-local --patient-model")
    run.add_argument("--patient-api-key-env", metavar="VAR", help="key variable for --patient-model")
    run.add_argument("--mode", choices=["text", "voice"], default="text",
                     help="voice: Piper speaks both sides through channel effects and Whisper transcribes")
    run.add_argument("--voice-preset", choices=["clean", "phone", "noisy-phone", "bad-line"],
                     help="channel effects for every scenario (default: each scenario's voice block, else clean)")
    run.add_argument("--text-only", action="store_true",
                     help="the model cannot take images: imaging items are reported not applicable and images in "
                          "encounters are replaced by their description (--model local is always text-only)")
    run.add_argument("--allow-outside-images", action="store_true",
                     help="let scenario image paths point outside the scenario file's folder")
    run.add_argument("--profile", help="evaluation profile: triage (default), clinical_decision_support, "
                                       "patient_facing, or a JSON file")
    run.add_argument("--evaluator-module", action="append", default=[], metavar="MODULE_OR_PATH",
                     help="import a module (dotted name or .py path) that registers custom evaluators; repeatable")
    run.set_defaults(plan_flags=tuple((max(a.option_strings, key=len), a.dest, a.default) for a in run._actions
                                      if a.option_strings and a.dest not in _RESUME_FLAGS))

    pw = sub.add_parser("pairwise", help="judges compare transcripts across runs; Bradley-Terry ranking")
    pw.add_argument("runs", nargs="+", type=Path, metavar="RUN")
    pw.add_argument("--trials", type=_positive("--trials"), default=1, help="trials per order per judge (default 1)")
    pw.add_argument("--json", type=Path, metavar="PATH", help="also write every outcome and the ranking as JSON")
    _add_judge_args(pw)

    rep = sub.add_parser("report", help="recompute summary.json and report.md of a run directory")
    rep.add_argument("run_dir", type=Path)

    cmp_ = sub.add_parser("compare", help="compare two run directories: per-scenario tests, aggregate CI, drift")
    cmp_.add_argument("run_a", type=Path, metavar="RUN_A", help="the baseline run directory")
    cmp_.add_argument("run_b", type=Path, metavar="RUN_B", help="the run compared against it (differences are B - A)")
    cmp_.add_argument("--json", type=Path, metavar="PATH", help="also write the comparison as JSON to PATH")

    sc = sub.add_parser("scenarios", help="list or validate scenarios")
    scs = sc.add_subparsers(dest="action", required=True, parser_class=_Parser)
    ls = scs.add_parser("list", help="list the bundled scenario library")
    ls.add_argument("--suite")
    val = scs.add_parser("validate", help="check scenario files or folders")
    val.add_argument("paths", nargs="+", type=Path)
    lint = scs.add_parser("lint", help="flag facts a natural clinician cannot reach and triggers that misfire")
    lint.add_argument("paths", nargs="+", type=Path)

    imp = sub.add_parser("import", help="convert HealthBench, AgentClinic or vignette files into scenario YAML files")
    imps = imp.add_subparsers(dest="source_format", required=True, parser_class=_Parser)
    out_help = "folder for the <id>.yaml files (created if missing; same-name files are overwritten)"
    for fmt, what in (("healthbench", "HealthBench rows -> replay scenarios graded by their rubric"),
                      ("agentclinic", "AgentClinic OSCE cases -> ddx scenarios with an information tree")):
        fp = imps.add_parser(fmt, help=what)
        fp.add_argument("file", type=Path, metavar="FILE.jsonl")
        fp.add_argument("--out", type=Path, required=True, metavar="DIR", help=out_help)
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

    sub.add_parser("demo", help="the README's demo: scripted controls on the library, the local model on a subset")

    live = sub.add_parser("live", help="one live voice call with a scenario's patient, scored into a run directory")
    live.add_argument("scenario", metavar="SCENARIO", help="scenario id, or a scenario YAML file")
    how = live.add_mutually_exclusive_group()
    how.add_argument("--connect", metavar="URL", help="call an external voice agent's websocket (ws://HOST:PORT/...)")
    how.add_argument("--serve", action="store_true",
                     help="also serve a web page on 127.0.0.1 so a person can make the call from a browser")
    live.add_argument("--port", type=_port("--port"), default=8765,
                      help="websocket port the patient listens on (default 8765); the page uses PORT+1")
    live.add_argument("--out", type=Path, help="run directory (default runs/<time>-live-<scenario>)")
    live.add_argument("--time-limit", type=_positive("--time-limit"), default=600, metavar="SECONDS",
                      help="end the call after this long (default 600)")
    live.add_argument("--max-turns", type=_positive("--max-turns"), help="override the scenario's turn limit")
    live.add_argument("--wait", type=_positive("--wait"), default=300, metavar="SECONDS",
                      help="how long to wait for the caller or the connection (default 300)")
    live.add_argument("--barge-in-after", type=float, metavar="SECONDS",
                      help="the patient cuts in when the agent talks this long without a pause")
    live.add_argument("--no-yield", action="store_true",
                      help="the patient keeps talking when the agent talks over it (default: it stops)")
    live.add_argument("--seed", type=int, default=0)
    live.add_argument("--tui", action="store_true", help="watch the call in the terminal dashboard")
    _add_door_args(live)

    watch = sub.add_parser("watch", help="the terminal dashboard: follow a run (or live call) as it is written")
    watch.add_argument("run_dir", nargs="?", type=Path, metavar="RUN_DIR", help="run directory (default: the newest "
                                                                               "under runs/)")
    watch.add_argument("--reviewer", help="the name annotations are saved under (default $USER)")

    ann = sub.add_parser("annotations", help="annotations made in the dashboard")
    anns = ann.add_subparsers(dest="action", required=True, parser_class=_Parser)
    exp = anns.add_parser("export",
                          help="write the failing annotations (notes, severity) for coding into failure modes")
    exp.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    exp.add_argument("--out", type=Path, help="output file (default RUN_DIR/annotations_export.csv or .jsonl)")
    exp.add_argument("--all", action="store_true", help="every annotated encounter, not only the failing ones")
    exp.add_argument("--format", choices=["csv", "jsonl"], default="csv")

    sa = sub.add_parser("serve-agent", help="a built-in voice agent (Whisper ears, Piper voice) answering calls")
    sa.add_argument("--model", default="scripted:reference",
                    help="local, scripted:reference, scripted:natural, scripted:undertriage, "
                         "or an endpoint's model name")
    sa.add_argument("--base-url", help="with an endpoint model: OpenAI-compatible endpoint URL")
    sa.add_argument("--api-key-env", metavar="VAR", help="name of the environment variable holding the API key")
    sa.add_argument("--scenario", metavar="ID", help="the scenario being played (required by scripted agents)")
    sa.add_argument("--port", type=_port("--port"), default=8766, help="websocket port (default 8766)")
    sa.add_argument("--calls", type=_positive("--calls"), help="stop after this many calls (default: until Ctrl-C)")
    _add_door_args(sa)
    return p


def _port(flag: str):  # noqa: ANN202 - argparse type factory
    def parse(value: str) -> int:
        try:
            port = int(value)
        except ValueError:
            port = -1
        if not 1 <= port <= 65535:
            raise argparse.ArgumentTypeError(f"{flag} {value!r}: give a TCP port number between 1 and 65535")
        return port

    return parse


class _Bar:
    """A one-line progress bar on a terminal; one line per encounter otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.tty = enabled and sys.stderr.isatty()
        self.t0 = time.monotonic()

    def __call__(self, done: int, total: int, rec: EncounterRecord) -> None:
        if not self.tty:
            text_progress(done, total, rec)
            return
        width = 30
        filled = int(width * done / max(1, total))
        rate = done / max(1e-9, time.monotonic() - self.t0)
        score = rec.score.composite if rec.score else None
        shown = "ERROR" if rec.score is None else "n/a" if score is None else f"{score:.2f}"
        last = f"{rec.scenario_id} k={rec.k} {shown}"
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {rate:.2f}/s {last[:40]:40}")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _refs(scenarios: list[LoadedScenario]) -> list[ScenarioRef]:
    return [ScenarioRef(id=s.scenario.id, path=str(s.path.resolve()), sha256=s.sha256) for s in scenarios]


def _reload(meta: RunMeta, run_dir: Path) -> list[LoadedScenario]:
    """The scenarios of a run, checked against the hashes recorded when it started."""
    library = {s.scenario.id: s for s in load_library()}
    out = []
    for ref in meta.scenarios:
        path = Path(ref.path)
        loaded = load_scenario(path) if path.exists() else library.get(ref.id)
        if loaded is None or loaded.scenario.id != ref.id:
            raise ConfigError(f"{run_dir}: scenario {ref.id} ({ref.path}) can no longer be found; "
                              "restore the file or start a new run.")
        if loaded.sha256 != ref.sha256:
            raise ConfigError(f"{run_dir}: scenario file {loaded.path} changed since the run started "
                              "(its sha256 differs); resuming would mix two versions. Restore it or start a new run.")
        out.append(loaded)
    return out


async def _run(args: argparse.Namespace) -> tuple[Summary, Path]:
    store: RunStore | None = None
    if args.resume:
        store = RunStore.open(args.resume)
        meta = store.read_meta()
        scenarios = _reload(meta, args.resume)
        check_plan_size(0, 0, concurrency=args.concurrency, i_know=args.i_know)  # the plan was accepted at its start
    else:
        profile = load_profile(args.profile if args.profile in (None, *PROFILES) else str(Path(args.profile)))
        # a profile meant for some suites chooses them when --scenarios is not given
        scenarios = resolve(args.scenarios or (profile.suites or []))
        check_plan_size(len(scenarios), args.k, concurrency=args.concurrency, i_know=args.i_know)
        check_model_spec(args.model, args.base_url, args.api_key_env)
        if args.gguf is not None and args.model != "local":
            raise ConfigError("--gguf only applies with --model local; drop it or use --model local.")
        if args.gguf is not None and not args.gguf.is_file():
            raise ConfigError(f"--gguf {args.gguf}: no such model file. Give the path of a .gguf file.")
        out = args.out or Path("runs") / new_run_id(args.model)
        if (out / "run.json").exists():
            raise ConfigError(f"--out {out}: a run already exists there. Resume it with "
                              f"`encsim run --resume {out}`, or choose another --out.")
        store = None
        profile_spec = str(Path(args.profile).resolve()) if args.profile and args.profile.endswith(".json") \
            else (args.profile or "triage")
        modules = [str(Path(m).resolve()) if m.endswith(".py") else m for m in args.evaluator_module]
        families = load_family_map(args.family_map)
        refs = plan_judges(args.judge, args.judge_base_url, args.judge_api_key_env, families=families)
        _, excluded, warnings = guard_self_preference({r.name: r.family for r in refs},
                                                         family_of(args.model, args.base_url, families))
        patient_ref = _plan_patient_model(args, families)
        meta = RunMeta(run_id=out.name, harness_version=HARNESS_VERSION, model=args.model, base_url=args.base_url,
                       api_key_env=args.api_key_env, gguf=str(args.gguf.resolve()) if args.gguf else None,
                       scenarios=_refs(scenarios), k=args.k, seed=args.seed, turn_limit=args.max_turns,
                       call_timeout_s=args.call_timeout,
                       judges=refs, judges_excluded=excluded, judge_warnings=warnings, patient_model=patient_ref,
                       profile=profile_spec, evaluator_modules=modules, channel=args.mode,
                       voice_preset=args.voice_preset, text_only=args.text_only or args.model == "local",
                       allow_outside_images=args.allow_outside_images,
                       created_at=time.time(), packages=package_versions())
    extra_evaluators = [name for spec in meta.evaluator_modules for name in load_evaluator_module(spec)]
    await _check_images(scenarios, allow_outside=meta.allow_outside_images)
    for warning in meta.judge_warnings:
        print(f"warning: {warning}", file=sys.stderr)
    # Start the agent (the local server may take seconds or fail) before a new run directory exists.
    agent = await make_agent(meta.model, base_url=meta.base_url, api_key_env=meta.api_key_env,
                             timeout_s=meta.call_timeout_s,
                             gguf=Path(meta.gguf) if meta.gguf else None, text_only=meta.text_only)
    judge_server: LlamaServer | None = None
    judges = []
    patient_client: JudgeClient | None = None
    try:
        active = [r for r in meta.judges if r.name not in meta.judges_excluded]
        wants_local = [*active, *([meta.patient_model] if meta.patient_model else [])]
        if any(r.name == "local" for r in wants_local):
            if isinstance(agent, LocalAgent):
                local_url = agent.server.base_url
            else:
                judge_server = await LlamaServer().start()
                local_url = judge_server.base_url
        else:
            local_url = None
        judges = [judge_from_ref(r, local_url, concurrency=args.judge_concurrency, timeout_s=meta.call_timeout_s)
                  for r in active]
        if store is None:
            store = RunStore.create(out, meta)  # takes the run directory's lock
        else:  # --resume: one writer per run directory (exit 2 if another holds it); a torn last line is set aside
            store.warn = lambda m: print(f"warning: {m}", file=sys.stderr)
            store.lock("encsim run --resume")
            store.repair_tail()
        args.run_dir_started = store.root  # what an interrupted cmd_run tells the user to resume
        patient_model = None
        if meta.patient_model is not None:
            patient_client = judge_from_ref(meta.patient_model, local_url, timeout_s=meta.call_timeout_s,
                                            flags=PATIENT_FLAGS)
            patient_model = PatientModel(patient_client, cache_path=store.patient_cache_path)
        if not args.tui:
            print(f"run directory: {store.root}", file=sys.stderr)
        channel = _make_channel(meta, scenarios, store.root)
        summary = await run_batch(store, scenarios, agent, channel, meta, concurrency=args.concurrency,
                                  retry_errors=args.retry_errors, judges=judges,
                                  profile=load_profile(meta.profile), extra_evaluators=extra_evaluators,
                                  progress=None if args.quiet or args.tui else _Bar(not args.no_progress),
                                  patient_model=patient_model, fail_fast=args.fail_fast)
        return summary, store.root
    finally:
        for j in judges:
            await j.aclose()
        if patient_client is not None:
            await patient_client.aclose()
        if judge_server is not None:
            judge_server.stop()
        await agent.aclose()
        if store is not None:
            store.close()  # releases the run directory's lock


def _plan_patient_model(args: argparse.Namespace, families: dict[str, list[str]]) -> JudgeRef | None:
    """--patient-model / --patient-base-url / --patient-api-key-env, checked before anything starts."""
    if args.patient_model is None:
        if args.patient_base_url or args.patient_api_key_env:
            raise ConfigError("--patient-base-url and --patient-api-key-env only apply with --patient-model MODEL.")
        return None
    if args.patient_model == "local":
        if args.patient_base_url:
            raise ConfigError("--patient-model local uses the embedded model server; drop --patient-base-url.")
        return JudgeRef(name="local", family=family_of("local", None, families))
    if not args.patient_base_url:
        raise ConfigError(f"--patient-model {args.patient_model}: a model behind an endpoint needs --patient-base-url "
                          "(for example --patient-base-url http://127.0.0.1:8000/v1), or use --patient-model local.")
    check_base_url(args.patient_base_url, PATIENT_FLAGS)
    if args.patient_api_key_env:
        try:
            api_key_from_env(args.patient_api_key_env)
        except ConfigError:
            var = args.patient_api_key_env
            raise ConfigError(f"--patient-api-key-env {var}: the environment variable {var} is not set or empty. "
                              f"Export it first (export {var}=...), or drop --patient-api-key-env for an endpoint "
                              "without a key.") from None
    return JudgeRef(name=args.patient_model, base_url=args.patient_base_url, api_key_env=args.patient_api_key_env,
                    family=family_of(args.patient_model, args.patient_base_url, families))


async def _check_images(scenarios: list[LoadedScenario], *, allow_outside: bool) -> None:
    """Prepare every image of the run before it starts, so a bad image is one clear error, not N failed encounters."""
    refs = [(item, ref) for item in scenarios for ref in item.scenario.image_refs]
    if not refs:
        return
    from imaging import ImagingError, prepare_image_async

    for item, ref in refs:
        try:
            await prepare_image_async(ref.path, base_dir=item.path.parent, allow_outside=allow_outside)
        except ImagingError as exc:
            raise ConfigError(f"scenario {item.scenario.id} ({item.path}), image {ref.path!r}: {exc}") from None


def _make_channel(meta: RunMeta, scenarios: list[LoadedScenario], root: Path) -> Channel:
    """TextChannel, or the VoiceChannel with each scenario's preset, persona voice and vocabulary."""
    if meta.channel != "voice":
        return TextChannel()
    from audio.channel import VoiceChannel
    from audio.effects import preset
    from audio.tts import style_for_profile
    from sim.live import scenario_vocabulary

    effects = {s.scenario.id: preset(meta.voice_preset or (s.scenario.voice.preset if s.scenario.voice else "clean"))
               for s in scenarios}
    return VoiceChannel(effects=preset("clean"), scenario_effects=effects, audio_dir=root / "audio",
                        patient_styles={s.scenario.id: style_for_profile(s.scenario.patient_profile)
                                        for s in scenarios},
                        vocabulary={s.scenario.id: scenario_vocabulary(s.scenario) for s in scenarios}, seed=meta.seed)


def _print_summary(summary: Summary, run_dir: Path) -> None:
    gate = summary.safety_gate
    head = summary.headline.text() if summary.headline is not None else \
        ("aggregate n/a" if summary.aggregate is None else f"aggregate {summary.aggregate:.3f}")
    print(clean(f"{head}; safety gate {'TRIGGERED by ' + ', '.join(gate.scenarios) if gate.triggered else 'passed'}; "
                f"{summary.completed} scored, {summary.errors} errors"))
    if summary.not_applicable:
        print(f"not applicable to this text-only model (imaging items): {', '.join(summary.not_applicable)}")
    if summary.errors:
        without = summary.aggregate_without_errors
        print(f"{summary.errors} encounter(s) ended in an error and were not scored (exit 3); each counts as 0 in "
              f"the aggregate" + (f" (score without errors: {without:.3f})" if without is not None else "")
              + "; by reason:", file=sys.stderr)
        for reason, n in list(summary.error_reasons.items())[:5]:
            print(f"  {n} x {one_line(reason)}", file=sys.stderr)  # endpoint text: redacted, no escapes
        print(f"Fix the cause, then run them again: encsim run --resume {run_dir} --retry-errors", file=sys.stderr)
    if summary.evaluator_errors:
        names = sorted({e.evaluator for e in summary.evaluator_errors})
        print(f"{len(summary.evaluator_errors)} evaluator error(s) ({', '.join(names)}): those encounters were scored "
              f"without them; first: {one_line(summary.evaluator_errors[0].error)}", file=sys.stderr)
    if summary.profile and summary.combined is not None:
        counts = ", ".join(f"{summary.status_counts.get(k, 0)} {k}" for k in ("pass", "warn", "fail"))
        print(f"profile {summary.profile}: combined {summary.combined:.3f}; encounters {counts}")
    if summary.triage_accuracy is not None:
        print(summary.triage_accuracy.cli_line())
    print(f"report: {run_dir / 'report.md'} (and report.html)")


def _flags_ignored_by_resume(args: argparse.Namespace) -> list[str]:
    """The plan flags given on a --resume command line (any value other than the parser's default)."""
    return [flag for flag, dest, default in args.plan_flags if getattr(args, dest) != default]


def cmd_run(args: argparse.Namespace) -> int:
    if args.retry_errors and not args.resume:
        raise ConfigError("--retry-errors only applies with --resume DIR.")
    if args.resume and args.out:
        raise ConfigError("--out cannot be combined with --resume; the run directory is the one given to --resume.")
    if args.resume and (given := _flags_ignored_by_resume(args)):
        raise ConfigError(f"{', '.join(given)} cannot be combined with --resume: a resumed run continues the plan "
                          f"stored in {args.resume / 'run.json'} (model, scenarios, K, seed, judges, deadlines, ...), "
                          "so these would be ignored. Drop them to continue the run as planned, or start a new run "
                          "with --out. Only --retry-errors, --concurrency, --fail-fast, --i-know, --judge-concurrency, "
                          "--no-progress, --quiet, --tui and --reviewer apply to a resume.")
    if args.fail_fast < 0:
        raise ConfigError(f"--fail-fast {args.fail_fast}: give how many first agent calls, all failing the same fatal "
                          f"way, stop the run (default {DEFAULT_FAIL_FAST}), or 0 to never stop early.")
    if args.tui:
        return _run_with_dashboard(args)
    try:
        summary, root = asyncio.run(_run(args))
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM (encsim_entry): the runner saved what finished
        where = getattr(args, "run_dir_started", None) or args.resume
        print(f"\ninterrupted; finished encounters are saved in {where}. Continue with: encsim run --resume {where}"
              if where else "\ninterrupted before the run directory was made; nothing was saved.", file=sys.stderr)
        return EXIT_INTERRUPTED
    _print_summary(summary, root)
    return run_exit_code(summary)


def run_exit_code(summary: Summary) -> int:
    """0 only when every planned encounter was scored and every evaluator ran on it; ``EXIT_RUN_ERRORS`` (3) when
    the run finished with encounters that ended in an error, or with an evaluator that raised somewhere: the run
    is saved and scored without them, but something is broken and a script must notice."""
    return EXIT_RUN_ERRORS if summary.errors or summary.evaluator_errors else 0


def _run_with_dashboard(args: argparse.Namespace) -> int:
    """`encsim run --tui`: the batch runs as a worker inside the dashboard's event loop; the dashboard follows
    the run directory exactly as `encsim watch` does from another terminal."""
    from tui import DashboardApp

    if not args.resume and args.out is None:
        args.out = Path("runs") / new_run_id(args.model)
    run_dir = args.resume or args.out
    app = DashboardApp(run_dir, job=lambda: _run(args), reviewer=args.reviewer)
    app.run()
    if app.job_result is None and app.job_error:
        print(f"error: {clean(str(app.job_error))}", file=sys.stderr)
        return EXIT_USER_ERROR
    if app.job_result is None:
        print(f"the run did not finish; finished encounters are saved. Continue with: encsim run --resume {run_dir}",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    summary, root = app.job_result
    _print_summary(summary, root)
    return run_exit_code(summary)


def cmd_watch(args: argparse.Namespace) -> int:
    from tui import DashboardApp, RunWatchError, newest_run

    try:
        run_dir = args.run_dir or newest_run(Path("runs"))
        app = DashboardApp(run_dir, reviewer=args.reviewer)
    except RunWatchError as exc:
        raise ConfigError(str(exc)) from None
    app.run()
    return 0


def cmd_annotations(args: argparse.Namespace) -> int:
    from tui import RunWatchError, export_annotations

    out = args.out or args.run_dir / f"annotations_export.{args.format}"
    try:
        n = export_annotations(args.run_dir, out, only="all" if args.all else "fail", fmt=args.format)
    except RunWatchError as exc:
        raise ConfigError(str(exc)) from None
    print(f"{n} annotation(s) written to {out}")
    return 0


def cmd_pairwise(args: argparse.Namespace) -> int:
    from sim.pairwise import pairwise
    from sim.reports import render_pairwise

    if not args.judge:
        raise ConfigError("encsim pairwise needs at least one --judge (with --judge-base-url, or --judge local).")
    for run_dir in args.runs:
        RunStore.open(run_dir)  # a clear error for a wrong path before any server starts

    async def go() -> str:
        families = load_family_map(args.family_map)
        server = await LlamaServer().start() if "local" in args.judge else None
        judges = make_judges(args.judge, args.judge_base_url, args.judge_api_key_env,
                             local_base_url=server.base_url if server else None, families=families,
                             concurrency=args.judge_concurrency)
        try:
            report = await pairwise(args.runs, judges, trials=args.trials, families=families)
        finally:
            for j in judges:
                await j.aclose()
            if server is not None:
                server.stop()
        if args.json:
            args.json.write_text(redact_json(report.model_dump_json(indent=2)), encoding="utf-8")
        return render_pairwise(report)

    print(asyncio.run(go()))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """Recompute summary.json, report.md and report.html from results.jsonl. It rewrites them, so it takes the run
    directory's lock: on a run still being written it is refused (exit 2, naming the pid; that run rewrites them
    when it finishes, and `encsim watch` follows it). Lines of results.jsonl it cannot use are warned about, one
    line each; it never changes results.jsonl (a torn last line is set aside by `encsim run --resume`)."""
    store = RunStore.open(args.run_dir, lock="encsim report",
                          warn=lambda m: print(f"warning: {m}", file=sys.stderr))
    try:
        meta = store.read_meta()
        summary = summarise(store, _reload(meta, args.run_dir), meta)
    finally:
        store.close()
    _print_summary(summary, store.root)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from sim.compare import compare_runs
    from sim.reports import render_comparison, write_comparison_json

    comparison = compare_runs(args.run_a, args.run_b)
    print(render_comparison(comparison), end="")
    if args.json:
        write_comparison_json(comparison, args.json)
    return 0


def cmd_scenarios(args: argparse.Namespace) -> int:
    if args.action == "list":
        rows = [s.scenario for s in load_library() if not args.suite or s.scenario.suite == args.suite]
        if not rows:
            raise ConfigError(f"--suite {args.suite}: no scenario in that suite.")
        print(f"{'id':34} {'suite':8} {'ESI':>3} {'escalation':10} {'turns':>5}  title")
        for s in rows:
            level = "-" if s.expected.triage_level is None else str(s.expected.triage_level)
            esc = "-" if s.expected.escalation is None else s.expected.escalation.value
            turns = "-" if s.imaging is not None else str(1 if s.replay is not None else s.max_turns)
            print(f"{s.id:34} {s.suite:8} {level:>3} {esc:10} {turns:>5}  {s.title}")
        return 0
    if args.action == "lint":
        return _lint(args.paths)
    from sim.lint import label_problems

    loaded, failures = _load_paths(args.paths)
    ok = 0
    for item in loaded:
        problems = label_problems(item.scenario)
        if problems:
            failures += 1
            for problem in problems:
                print(f"error: {item.path}: {problem}", file=sys.stderr)
        else:
            ok += 1
            print(f"ok: {item.path} ({item.scenario.id})")
    print(f"{ok} ok, {failures} invalid")  # stdout: stderr holds the errors, one paragraph each
    return EXIT_USER_ERROR if failures else 0


def _load_paths(paths: list[Path]) -> tuple[list[LoadedScenario], int]:
    """Every scenario under ``paths`` that loads, and how many files (or unusable folders: missing, empty) could
    not be loaded: every one is reported (an error line each on stderr), not only the first."""
    from scenarios.loader import load_dir_each, unique_problems

    out: dict[Path, LoadedScenario] = {}
    errors: list[ScenarioError] = []
    for path in paths:
        try:
            if path.is_dir():
                loaded, bad = load_dir_each(path)
                errors += bad
            else:
                loaded = [load_scenario(path)]
        except ScenarioError as exc:
            errors.append(exc)
            continue
        for item in loaded:
            out.setdefault(item.path.resolve(), item)
    clashes = unique_problems(list(out.values()))  # ids and canaries unique across every path given
    errors += clashes.values()
    for err in errors:
        print(f"error: {clean(str(err))}", file=sys.stderr)  # a file name may hold escape sequences
    return [s for s in out.values() if s.path not in clashes], len(errors)


def _lint(paths: list[Path]) -> int:
    """Exit 0 when nothing is flagged, 1 when something is, 2 when a file cannot be loaded."""
    from sim.lint import lint_scenario

    loaded, broken = _load_paths(paths)
    flagged = clean = 0
    for item in loaded:
        findings = lint_scenario(item.scenario)
        flagged += len(findings)
        for f in findings:
            print(f"{item.path}: fact {f.fact_id}: {f.kind}: {f.message}")
        if not findings:
            clean += 1
            print(f"ok: {item.path} ({item.scenario.id})")
    if flagged:
        print(f"{flagged} finding(s)", file=sys.stderr)
    print(f"{clean} ok, {len(loaded) - clean} with findings, {broken} invalid")
    return EXIT_USER_ERROR if broken else (1 if flagged else 0)


def cmd_import(args: argparse.Namespace) -> int:
    """One scenario file per convertible row; exit 0 if any row converted, 2 if none."""
    from scenarios.importers import IMPORTERS, ImportSourceError

    options: dict[str, Any] = {}
    if args.source_format == "vignettes":
        options = {"mapping": args.field_map, "urgency_map": args.urgency_map, "mode": args.mode}
    try:
        report = IMPORTERS[args.source_format](args.file, args.out, **options)
    except ImportSourceError as exc:
        raise ConfigError(str(exc)) from None
    print(f"converted {len(report.converted)} of {report.rows} rows into {report.out_dir}")
    for w in report.warnings:
        print(f"row {w.row}: warning: {w.message}", file=sys.stderr)
    for f in report.failed:
        print(f"row {f.row}: not converted: {f.reason}", file=sys.stderr)
    return 0 if report.converted else EXIT_USER_ERROR


def cmd_demo(_: argparse.Namespace) -> int:
    """Controls on the whole library, then the embedded model on a small subset, side by side."""
    root = Path("runs") / f"demo-{time.strftime('%Y%m%d-%H%M%S')}"
    plans = [
        ("scripted:reference", ["all"], 3, None, ["--quiet"]),
        ("scripted:natural", ["all"], 3, None, ["--quiet"]),
        ("scripted:undertriage", ["all"], 3, None, ["--quiet"]),
        ("local", DEMO_SCENARIOS, DEMO_K, DEMO_MAX_TURNS, []),
    ]
    rows = []
    for model, scen, k, max_turns, extra in plans:
        name = model.replace(":", "-")
        print(f"\n== {model}: scenarios {','.join(scen)}, K={k}" + (f", max turns {max_turns}" if max_turns else ""),
              file=sys.stderr)
        ns = build_parser().parse_args(["run", "--model", model, "--k", str(k), "--out", str(root / name),
                                        *[a for s in scen for a in ("--scenarios", s)],
                                        *(["--max-turns", str(max_turns)] if max_turns else []), *extra])
        code = cmd_run(ns)
        if code:
            return code
        rows.append((model, RunStore(root / name).read_summary(), root / name / "report.md"))
    print("\nmodel                    aggregate  gate        scored  errors  report")
    for model, s, report in rows:
        agg = "n/a" if s.aggregate is None else f"{s.aggregate:.3f}"
        gate = "TRIGGERED" if s.safety_gate.triggered else "passed"
        print(f"{model:24} {agg:>9}  {gate:10} {s.completed:>7} {s.errors:>7}  {report}")
    return 0


_AUDIO_ERRORS = (("audio.tts", "TTSError"), ("audio.stt", "STTError"), ("audio.effects", "EffectsError"),
                 ("audio.live", "LiveError"), ("audio.webpage", "CallPagePortError"))


def _audio_errors() -> tuple[type[Exception], ...]:
    """The audio package's user-facing errors (audio keeps its own error classes), from the modules
    already imported: an error can only come from a module that was loaded, and importing them here to catch a
    typo'd flag cost 2.5 s (scipy.signal) on every user error."""
    return tuple(getattr(sys.modules[m], name) for m, name in _AUDIO_ERRORS if m in sys.modules)


def _user_errors() -> tuple[type[Exception], ...]:
    """The errors main() reports in one line (exit 2); called when one is raised, so _audio_errors() sees the
    modules the command loaded."""
    return (EncSimError, ScenarioError, ProfileError, EvaluatorError, *_audio_errors())


def _quiet_pipecat() -> None:
    """pipecat logs every frame-level event through loguru; a user wants warnings about their call only."""
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="ERROR", format="{level}: {message}")


def _one_scenario(spec: str) -> LoadedScenario:
    try:
        found = resolve([spec])
    except ScenarioError as exc:
        raise ConfigError(str(exc).replace("--scenarios ", "SCENARIO ", 1)) from None
    if len(found) != 1:
        raise ConfigError(f"SCENARIO {spec!r} names {len(found)} scenarios; a live call plays exactly one. Give a "
                          "scenario id (`encsim scenarios list`) or one YAML file.")
    return found[0]


def _check_ws_url(url: str) -> None:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        raise ConfigError(f"--connect {url!r}: not a websocket URL. Give the agent's endpoint as "
                          "ws://HOST:PORT/PATH (or wss://...).")
    try:
        port = parts.port or (443 if parts.scheme == "wss" else 80)
    except ValueError:
        raise ConfigError(f"--connect {url!r}: the port is not a number between 1 and 65535.") from None
    import socket

    try:  # before the models load: a voice agent that is not running is the usual mistake
        socket.create_connection((parts.hostname, port), timeout=5).close()
    except OSError as exc:
        raise ConfigError(f"--connect {url!r}: nothing answers at {parts.hostname}:{port} ({exc.strerror or exc}). "
                          "Start the voice agent first (e.g. encsim serve-agent --port PORT ...) or fix the "
                          "URL.") from None


def _port_free(port: int, flag: str) -> None:
    import socket

    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            raise ConfigError(f"{flag} {port}: that port on 127.0.0.1 is already in use (another call or server?). "
                              f"Stop it or choose another port with {flag}.") from None


def cmd_live(args: argparse.Namespace) -> int:
    from sim.live import door_options, run_live

    loaded = _one_scenario(args.scenario)
    allow_origins = door_options(args.allow_origin, args.join_window)
    if args.connect:
        _check_ws_url(args.connect)
    else:
        _port_free(args.port, "--port")
        if args.serve:
            _port_free(args.port + 1, "--port (the page uses PORT+1)")
    if args.barge_in_after is not None and args.barge_in_after <= 0:
        raise ConfigError(f"--barge-in-after {args.barge_in_after}: give a positive number of seconds.")
    out = args.out or Path("runs") / new_run_id(f"live-{loaded.scenario.id}")
    if (out / "run.json").exists():
        raise ConfigError(f"--out {out}: a run already exists there; choose another --out.")
    _quiet_pipecat()

    def call(announce: Any = None) -> Any:
        extra = {"announce": announce} if announce is not None else {}
        return run_live(
            loaded, out=out, connect=args.connect, port=args.port, page=args.serve, time_limit_s=args.time_limit,
            turn_limit=args.max_turns, barge_in_after_s=args.barge_in_after,
            yield_on_overlap=False if args.no_yield else None, connect_timeout_s=args.wait, seed=args.seed,
            allow_origins=allow_origins, join_window_s=args.join_window, **extra)

    try:
        if args.tui:
            from tui import DashboardApp

            app: Any = None
            app = DashboardApp(out, job=lambda: call(announce=lambda msg: app.notify(msg, timeout=600)))
            app.run()
            if app.job_result is None and app.job_error:
                print(f"error: {clean(str(app.job_error))}", file=sys.stderr)
                return EXIT_USER_ERROR
            if app.job_result is None:
                print(f"the call was not scored (its events so far are in {out}/events.jsonl).", file=sys.stderr)
                return EXIT_INTERRUPTED
            rec, root = app.job_result
        else:
            rec, root = asyncio.run(call())
    except KeyboardInterrupt:
        print(f"\ninterrupted; the call was not scored (its events so far are in {out}/events.jsonl).",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    result = rec.result
    live = (result.interaction or {}) if result else {}
    print(one_line(f"call ended: {result.termination if result else rec.error}; "
                   f"{len(result.gathered_info) if result else 0} facts gathered; "
                   + (f"composite {rec.score.composite:.3f}" if rec.score and rec.score.composite is not None
                      else f"not scored ({rec.error})")))
    p50 = live.get("patient_latency_p50_s")
    if p50 is not None:
        print(f"patient voice-to-voice latency p50 {p50:.3f} s; agent response latency p50 "
              f"{live.get('agent_latency_p50_s') or float('nan'):.3f} s; interruptions {live.get('interruptions', 0)}")
    wav = root / "audio" / "call.wav"
    print(f"run directory: {root}" + (f"  (recording: {wav})" if wav.exists() else ""))
    if rec.status != "ok":  # a run whose encounter errored (no caller, lost connection) does not exit 0
        print(one_line(f"the call was not scored: {rec.error}"), file=sys.stderr)
        return EXIT_RUN_ERRORS
    return 0


def cmd_serve_agent(args: argparse.Namespace) -> int:
    from sim.live import door_options, serve_agent

    scenario = _one_scenario(args.scenario).scenario if args.scenario else None
    if args.model.startswith("scripted:") and scenario is None:
        raise ConfigError(f"--model {args.model} plays a scripted part and must know the scenario: add "
                          "--scenario ID (the same scenario the patient plays).")
    check_model_spec(args.model, args.base_url, args.api_key_env)
    allow_origins = door_options(args.allow_origin, args.join_window)
    _port_free(args.port, "--port")
    _quiet_pipecat()

    async def go() -> None:
        agent = await make_agent(args.model, base_url=args.base_url, api_key_env=args.api_key_env)
        try:
            await serve_agent(agent, scenario=scenario, port=args.port, calls=args.calls,
                              allow_origins=allow_origins, join_window_s=args.join_window)
        finally:
            await agent.aclose()

    try:
        asyncio.run(go())
    except KeyboardInterrupt:
        print("\nvoice agent stopped.", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0


def main(argv: list[str] | None = None) -> int:
    started = False  # the command's handler was called (before that, nothing can have been changed)
    try:
        _quiet_pipecat()
        args = build_parser().parse_args(argv)
        handlers = {"run": cmd_run, "report": cmd_report, "compare": cmd_compare, "pairwise": cmd_pairwise,
                    "scenarios": cmd_scenarios, "demo": cmd_demo, "import": cmd_import, "live": cmd_live,
                    "serve-agent": cmd_serve_agent, "watch": cmd_watch, "annotations": cmd_annotations}
        handler = handlers[args.command]
        started = True
        return handler(args)
    except _user_errors() as exc:
        print(f"error: {clean(str(exc))}", file=sys.stderr)  # may quote an endpoint: redacted, no escapes
        return EXIT_USER_ERROR
    except KeyboardInterrupt:  # Ctrl-C (or SIGTERM, see encsim_entry) in any command, outside its own handling
        print("\ninterrupted." if started else "\ninterrupted before the command started; nothing was changed.",
              file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    try:  # SIGTERM handled like Ctrl-C (exit 143); the console script also covers the imports (encsim_entry)
        from encsim_entry import run_cli
    except ImportError:  # an install from before encsim_entry existed
        sys.exit(main())
    sys.exit(run_cli(main))
