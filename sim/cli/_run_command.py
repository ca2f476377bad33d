"""``encsim run``: scenarios x K encounters against a model into a run directory (new, or ``--resume DIR``).

The flags are read once into :class:`RunOptions`; a run's *plan* (every flag except those in ``RESUME_FLAGS``) is
stored in run.json, and ``--resume`` continues that plan, so a plan flag given with ``--resume`` is an error.
(The module is not called ``_run``: ``sim.cli._run`` is the run coroutine, which tests drive directly.)
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scenarios.personas import DEFAULT_PERSONA, PERSONA_PRESETS, parse_personas
from sim.agents.chat import check_call_timeout
from sim.cli._common import (
    EXIT_INTERRUPTED,
    EXIT_RUN_ERRORS,
    JudgeOptions,
    add_judge_args,
    positive,
    print_summary,
    reload_scenarios,
    report_error,
)
from sim.executors.process import ProcessEncounters, check_processes, check_supported
from sim.executors.worker_spec import WorkerSpec, check_runs_outside
from sim.fail_fast import DEFAULT_FAIL_FAST
from sim.records import ConfigError, RunLayout
from sim.runner import (  # the parser's limits; the runner comes with them
    MAX_CONCURRENCY,
    MAX_ENCOUNTERS,
    MAX_K,
    check_plan_size,
    run_batch,
    text_progress,
)

if TYPE_CHECKING:
    from scenarios import LoadedScenario
    from scorers import Summary
    from sim.executors.ray import RayEncounters
    from sim.records import EncounterRecord, JudgeRef, RunMeta, ScenarioRef

# `run` flags that only say how to carry out the plan; every other flag is the plan, stored in run.json, and
# `--resume` continues that plan (so a flag of the plan given with --resume is an error, never silently ignored)
# (the executor is one of them: a run started with --executor ray can be resumed with local, and the other way)
RESUME_FLAGS = frozenset({"resume", "retry_errors", "concurrency", "i_know", "fail_fast", "no_progress", "quiet",
                          "tui", "reviewer", "judge_concurrency", "executor", "ray_address", "ray_actors", "processes",
                          "help"})


def register(subparsers: Any) -> None:  # noqa: ANN401 - argparse's _SubParsersAction is private
    """Add the ``run`` parser.

    Args:
        subparsers: The ``encsim`` parser's subparsers.
    """
    run = subparsers.add_parser("run", help="run scenarios x K encounters against a model into a run directory")
    run.add_argument("--scenarios", action="append", default=[], metavar="X",
                     help="scenario file, folder, id or suite name; repeatable or comma-separated (default: all)")
    run.add_argument("--model", default="local",
                     help="local (embedded SmolLM2), scripted:reference, scripted:natural, scripted:shallow, "
                          "scripted:undertriage, or an endpoint's model name")
    run.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    run.add_argument("--api-key-env", metavar="VAR", help="name of the environment variable holding the API key")
    run.add_argument("--call-timeout", type=check_call_timeout, metavar="SECONDS",
                     help="total deadline of one endpoint call attempt: connect, send, read the whole reply "
                          "(default 30 s for the model, 60 s for remote judges); then the retry policy")
    run.add_argument("--gguf", type=Path, help="with --model local: another GGUF model file")
    run.add_argument("--k", type=positive("--k"), default=10,
                     help=f"runs per scenario (default 10; at most {MAX_K}, and scenarios x K at most "
                          f"{MAX_ENCOUNTERS:,}, unless --i-know)")
    run.add_argument("--concurrency", type=positive("--concurrency"), default=4,
                     help=f"encounters at once (default 4; at most {MAX_CONCURRENCY} unless --i-know)")
    run.add_argument("--i-know", action="store_true",
                     help="allow a plan over the limits of --k and --concurrency (a typo like --k 3000000 would "
                          "otherwise run for days)")
    run.add_argument("--fail-fast", type=int, default=DEFAULT_FAIL_FAST, metavar="N",
                     help=f"stop the run (exit 2) when the first N agent calls all fail with the same cause that "
                          f"every call would repeat: connection refused, unknown host, HTTP 401/403/404 "
                          f"(default {DEFAULT_FAIL_FAST}; 0 = never)")
    run.add_argument("--personas", metavar="LIST",
                     help="a persona sweep: run every scenario K times under each of these patient presets, "
                          "comma-separated, as separate encounters of one run directory (" + ", ".join(PERSONA_PRESETS)
                          + "; default: default only); the summary and reports add each persona's mean, the worst "
                          "persona and the drop from default. Replays and imaging items have no patient to vary: "
                          "they run K times under default only")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--max-turns", type=positive("--max-turns"), help="override every scenario's turn limit")
    run.add_argument("--out", type=Path, help="run directory (default runs/<time>-<model>)")
    run.add_argument("--resume", type=Path, metavar="DIR",
                     help="continue a killed run; the plan's flags come from its run.json")
    run.add_argument("--retry-errors", action="store_true", help="with --resume: run errored encounters again")
    run.add_argument("--executor", choices=["local", "ray"], default="local",
                     help="where encounters run: local (this process, default) or ray (tasks on a Ray cluster; "
                          "needs pip install encounter-sim[ray]); the run directory is the same either way")
    run.add_argument("--ray-address", metavar="ADDRESS",
                     help="with --executor ray: auto, HOST:PORT of a running head node, or ray://HOST:PORT "
                          "(default: start a local Ray instance on 127.0.0.1 for this run)")
    run.add_argument("--ray-actors", type=positive("--ray-actors"), metavar="N",
                     help="with --executor ray --mode voice: voice workers, each loading Piper and Whisper once "
                          "(default: the cluster's CPUs)")
    run.add_argument("--processes", default="0", metavar="N",
                     help="with --executor local: run the encounters in N worker processes, each with its own GIL, "
                          "while this process scores and writes (text runs; 2 suits a 2-core machine at "
                          "--concurrency 16 or more); 0 (default): in this process")
    run.add_argument("--no-progress", action="store_true", help="print one line per encounter instead of a bar")
    run.add_argument("--quiet", action="store_true", help="no progress output, only the final summary")
    run.add_argument("--tui", action="store_true", help="watch the run in the terminal dashboard while it runs")
    run.add_argument("--reviewer", help="with --tui: the name annotations are saved under (default $USER)")
    add_judge_args(run)
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
    run.add_argument("--failure-judges", type=Path, metavar="DIR",
                     help="run the binary failure-mode judges in DIR (encsim judges build) on every encounter, "
                          "with the --judge models; results are evaluators named failure:<mode>")
    run.set_defaults(plan_flags=tuple((max(a.option_strings, key=len), a.dest, a.default) for a in run._actions
                                      if a.option_strings and a.dest not in RESUME_FLAGS),
                     handler=cmd_run)


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """The flags of ``encsim run``, read once from the command line (see ``encsim run --help`` for each)."""

    scenarios: list[str]
    model: str
    base_url: str | None
    api_key_env: str | None
    call_timeout: float | None
    gguf: Path | None
    k: int
    concurrency: int
    i_know: bool
    fail_fast: int
    seed: int
    max_turns: int | None
    out: Path | None
    resume: Path | None
    retry_errors: bool
    no_progress: bool
    quiet: bool
    tui: bool
    reviewer: str | None
    judges: JudgeOptions
    patient_model: str | None
    patient_base_url: str | None
    patient_api_key_env: str | None
    mode: str
    voice_preset: str | None
    text_only: bool
    allow_outside_images: bool
    profile: str | None
    evaluator_modules: list[str]
    failure_judges: Path | None = None
    executor: str = "local"
    ray_address: str | None = None
    ray_actors: int | None = None
    processes: int = 0
    personas: list[str] = dataclasses.field(default_factory=lambda: [DEFAULT_PERSONA])

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> RunOptions:
        """Read and cross-check the flags of a parsed ``run`` command line.

        Only the checks of flags against each other happen here; what needs the scenarios, the profile or the
        environment is checked when the run starts (inside the dashboard's job with ``--tui``).

        Args:
            args: The parsed command line (from the ``run`` parser: it carries ``plan_flags``).

        Returns:
            The options.

        Raises:
            ConfigError: ``--retry-errors`` or ``--out`` or a plan flag with(out) ``--resume`` where that makes
                no sense, or a negative ``--fail-fast``.
            PersonaError: ``--personas`` names no preset or an unknown one.
        """
        if args.retry_errors and not args.resume:
            raise ConfigError("--retry-errors only applies with --resume DIR.")
        if args.resume and args.out:
            raise ConfigError("--out cannot be combined with --resume; the run directory is the one given to "
                              "--resume.")
        if args.resume and (given := _flags_ignored_by_resume(args)):
            raise ConfigError(f"{', '.join(given)} cannot be combined with --resume: a resumed run continues the plan "
                              f"stored in {args.resume / 'run.json'} (model, scenarios, K, personas, seed, judges, "
                              "deadlines, ...), so these would be ignored. Drop them to continue the run as planned, "
                              "or start a new run with --out. Only --retry-errors, --concurrency, --fail-fast, "
                              "--i-know, --judge-concurrency, --executor (--ray-address, --ray-actors), --processes, "
                              "--no-progress, "
                              "--quiet, --tui and --reviewer apply to a resume.")
        if args.executor != "ray" and (args.ray_address is not None or args.ray_actors is not None):
            raise ConfigError("--ray-address and --ray-actors only apply with --executor ray; add --executor ray "
                              "or drop them.")
        processes = check_processes(args.processes)
        if processes and args.executor == "ray":
            raise ConfigError(f"--processes {processes} with --executor ray: Ray runs the encounters in its own "
                              "workers. Drop --processes (or use --executor local with it).")
        personas = parse_personas(args.personas) if args.personas is not None else [DEFAULT_PERSONA]
        if args.fail_fast < 0:
            raise ConfigError(f"--fail-fast {args.fail_fast}: give how many first agent calls, all failing the same "
                              f"fatal way, stop the run (default {DEFAULT_FAIL_FAST}), or 0 to never stop early.")
        return cls(scenarios=args.scenarios, model=args.model, base_url=args.base_url, api_key_env=args.api_key_env,
                   call_timeout=args.call_timeout, gguf=args.gguf, k=args.k, concurrency=args.concurrency,
                   i_know=args.i_know, fail_fast=args.fail_fast, seed=args.seed, max_turns=args.max_turns,
                   out=args.out, resume=args.resume, retry_errors=args.retry_errors, no_progress=args.no_progress,
                   quiet=args.quiet, tui=args.tui, reviewer=args.reviewer, judges=JudgeOptions.from_namespace(args),
                   patient_model=args.patient_model, patient_base_url=args.patient_base_url,
                   patient_api_key_env=args.patient_api_key_env, mode=args.mode, voice_preset=args.voice_preset,
                   text_only=args.text_only, allow_outside_images=args.allow_outside_images, profile=args.profile,
                   evaluator_modules=args.evaluator_module, failure_judges=args.failure_judges,
                   executor=args.executor, ray_address=args.ray_address, ray_actors=args.ray_actors,
                   processes=processes, personas=personas)


def _flags_ignored_by_resume(args: argparse.Namespace) -> list[str]:
    """The plan flags given on a --resume command line (any value other than the parser's default)."""
    return [flag for flag, dest, default in args.plan_flags if getattr(args, dest) != default]


def cmd_run(args: argparse.Namespace) -> int:
    """``encsim run``: run the plan, print the summary.

    Args:
        args: The parsed command line.

    Returns:
        The exit code: 0, ``EXIT_RUN_ERRORS`` (3) when encounters errored (see :func:`run_exit_code`), or
        ``EXIT_INTERRUPTED`` (130) after Ctrl-C.
    """
    started: list[Path] = []
    options: RunOptions | None = None
    try:  # from the first line: a Ctrl-C while the flags are read is still this command's to report
        options = RunOptions.from_namespace(args)
        if options.tui:
            return _run_with_dashboard(options)
        summary, root = asyncio.run(run_plan(options, on_started=started.append))
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM (encsim_entry): the runner saved what finished
        where = started[-1] if started else options.resume if options is not None else None
        print(f"\ninterrupted; finished encounters are saved in {where}. Continue with: encsim run --resume {where}"
              if where else "\ninterrupted before the run directory was made; nothing was saved.", file=sys.stderr)
        return EXIT_INTERRUPTED
    print_summary(summary, root)
    return run_exit_code(summary)


def run_exit_code(summary: Summary) -> int:
    """The exit code of a finished run.

    0 only when every planned encounter was scored and every evaluator ran on it; ``EXIT_RUN_ERRORS`` (3) when
    the run finished with encounters that ended in an error, or with an evaluator that raised somewhere: the run
    is saved and scored without them, but something is broken and a script must notice.

    Args:
        summary: The finished run's summary.

    Returns:
        The exit code.
    """
    return EXIT_RUN_ERRORS if summary.errors or summary.evaluator_errors else 0


def _run_with_dashboard(options: RunOptions) -> int:
    """`encsim run --tui`: the batch runs as a worker inside the dashboard's event loop.

    The dashboard follows the run directory exactly as `encsim watch` does from another terminal.
    """
    from sim.store import new_run_id
    from tui import DashboardApp

    if not options.resume and options.out is None:
        options = dataclasses.replace(options, out=Path("runs") / new_run_id(options.model))
    run_dir = options.resume or options.out
    assert run_dir is not None
    app = DashboardApp(run_dir, job=lambda: run_plan(options), reviewer=options.reviewer)
    app.run()
    if app.job_result is None and app.job_error:
        return report_error(app.job_error)
    if app.job_result is None:
        print(f"the run did not finish; finished encounters are saved. Continue with: encsim run --resume {run_dir}",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    summary, root = app.job_result
    print_summary(summary, root)
    return run_exit_code(summary)


async def _run(args: argparse.Namespace) -> tuple[Summary, Path]:
    """:func:`run_plan` for a parsed command line (what ``encsim run --tui`` hands the dashboard as its job)."""
    return await run_plan(RunOptions.from_namespace(args))


async def run_plan(options: RunOptions, *,
                   on_started: Callable[[Path], None] | None = None) -> tuple[Summary, Path]:
    """Check the plan, start the agent (and judges), then run every encounter into the run directory.

    Args:
        options: The run's flags.
        on_started: Called with the run directory once it exists and is locked (what an interrupted run tells
            the user to resume).

    Returns:
        The run's summary and its directory.

    Raises:
        ConfigError: The plan cannot run as given (and the other user errors of scenarios, profiles, evaluators,
            agents); nothing was written then unless the run directory had been made.
    """
    from scenarios import resolve
    from scorers import PROFILES, guard_self_preference, load_failure_judges, load_profile
    from scorers.evaluators import load_evaluator_module
    from sim.agents import LlamaServer, LocalAgent, check_model_spec, make_agent
    from sim.agents.chat import PATIENT_FLAGS
    from sim.encounter import HARNESS_VERSION
    from sim.encounter.channel import make_channel
    from sim.judges import JudgeClient, family_of, judge_from_ref, load_family_map, plan_judges
    from sim.patient.model import PatientModel
    from sim.records import RunMeta, package_versions
    from sim.store import RunStore, new_run_id

    store: RunStore | None = None
    if options.resume:
        store = RunStore.open(options.resume)
        meta = store.read_meta()
        scenarios = reload_scenarios(meta, options.resume)
        # the plan was accepted at its start
        check_plan_size(0, 0, concurrency=options.concurrency, i_know=options.i_know)
    else:
        spec = options.profile
        profile = load_profile(spec if spec is None or spec in PROFILES else str(Path(spec)))
        # a profile meant for some suites chooses them when --scenarios is not given
        scenarios = resolve(options.scenarios or (profile.suites or []))
        check_plan_size(len(scenarios), options.k, concurrency=options.concurrency, i_know=options.i_know,
                        personas=len(options.personas))
        check_model_spec(options.model, options.base_url, options.api_key_env)
        if options.gguf is not None and options.model != "local":
            raise ConfigError("--gguf only applies with --model local; drop it or use --model local.")
        if options.gguf is not None and not options.gguf.is_file():
            raise ConfigError(f"--gguf {options.gguf}: no such model file. Give the path of a .gguf file.")
        if options.mode == "voice":  # a bad ENCSIM_STT_THREADS is the user's to fix before anything runs
            from audio.stt import stt_threads

            stt_threads()
        out = options.out or Path("runs") / new_run_id(options.model)
        if RunLayout(out).run.exists():
            raise ConfigError(f"--out {out}: a run already exists there. Resume it with "
                              f"`encsim run --resume {out}`, or choose another --out.")
        store = None
        profile_spec = str(Path(options.profile).resolve()) if options.profile and options.profile.endswith(".json") \
            else (options.profile or "triage")
        modules = [str(Path(m).resolve()) if m.endswith(".py") else m for m in options.evaluator_modules]
        families = load_family_map(options.judges.family_map)
        refs = plan_judges(options.judges.models, options.judges.base_urls, options.judges.api_key_envs,
                           families=families)
        _, excluded, warnings = guard_self_preference({r.name: r.family for r in refs},
                                                         family_of(options.model, options.base_url, families))
        patient_ref = _plan_patient_model(options, families)
        meta = RunMeta(run_id=out.name, harness_version=HARNESS_VERSION, model=options.model,
                       base_url=options.base_url, api_key_env=options.api_key_env,
                       gguf=str(options.gguf.resolve()) if options.gguf else None,
                       scenarios=_refs(scenarios), k=options.k, seed=options.seed, turn_limit=options.max_turns,
                       call_timeout_s=options.call_timeout,
                       judges=refs, judges_excluded=excluded, judge_warnings=warnings, patient_model=patient_ref,
                       profile=profile_spec, evaluator_modules=modules, channel=options.mode,
                       failure_judges=str(options.failure_judges.resolve()) if options.failure_judges else None,
                       voice_preset=options.voice_preset, text_only=options.text_only or options.model == "local",
                       personas=options.personas,
                       allow_outside_images=options.allow_outside_images,
                       created_at=time.time(), packages=package_versions())
    extra_evaluators = [name for spec in meta.evaluator_modules for name in load_evaluator_module(spec)]
    failure_judges = load_failure_judges(meta.failure_judges) if meta.failure_judges else []
    if failure_judges and not [r for r in meta.judges if r.name not in meta.judges_excluded]:
        raise ConfigError(f"--failure-judges {meta.failure_judges}: the failure-mode judges need a judge model to ask; "
                          "add --judge MODEL (--judge-base-url URL), or --judge local for the embedded model.")
    unusable = await _check_images(scenarios, allow_outside=meta.allow_outside_images)
    for warning in meta.judge_warnings:
        print(f"warning: {warning}", file=sys.stderr)
    # Join the Ray cluster and start the agent (the local server may take seconds or fail) before a new run
    # directory exists.
    disconnect = _connect_executor(options, meta)
    try:
        agent = await make_agent(meta.model, base_url=meta.base_url, api_key_env=meta.api_key_env,
                                 timeout_s=meta.call_timeout_s,
                                 gguf=Path(meta.gguf) if meta.gguf else None, text_only=meta.text_only)
    except BaseException:
        disconnect()
        raise
    remote: RayEncounters | ProcessEncounters | None = None
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
        judges = [judge_from_ref(r, local_url, concurrency=options.judges.concurrency,
                                 timeout_s=meta.call_timeout_s)
                  for r in active]
        if options.processes:  # as the agent: started, or failed in one paragraph, before a new run directory exists
            remote = await ProcessEncounters(WorkerSpec.from_meta(meta), processes=options.processes).start()
        if store is None:
            store = RunStore.create(out, meta)  # takes the run directory's lock
        else:  # --resume: one writer per run directory (exit 2 if another holds it); a torn last line is set aside
            store.warn = lambda m: print(f"warning: {m}", file=sys.stderr)
            store.lock("encsim run --resume")
            store.repair_tail()
        if on_started is not None:
            on_started(store.root)
        patient_model = None
        if meta.patient_model is not None:
            patient_client = judge_from_ref(meta.patient_model, local_url, timeout_s=meta.call_timeout_s,
                                            flags=PATIENT_FLAGS)
            patient_model = PatientModel(patient_client, cache_path=store.patient_cache_path)
        if not options.tui:
            print(f"run directory: {store.root}", file=sys.stderr)
        channel = make_channel(meta, scenarios, RunLayout(store.root).audio)
        concurrency = options.concurrency
        if options.executor == "ray":  # (--processes with ray is refused by RunOptions)
            from sim.executors.ray import RayEncounters

            remote = RayEncounters(WorkerSpec.from_meta(meta), meta=meta, scenarios=scenarios,
                                   audio_dir=RunLayout(store.root).audio, actors=options.ray_actors)
            if remote.voice:
                concurrency = remote.slots  # one encounter per voice actor
        summary = await run_batch(store, scenarios, agent, channel, meta, concurrency=concurrency, unusable=unusable,
                                  retry_errors=options.retry_errors, judges=judges,
                                  profile=load_profile(meta.profile), extra_evaluators=extra_evaluators,
                                  progress=None if options.quiet or options.tui else _Bar(not options.no_progress),
                                  patient_model=patient_model, fail_fast=options.fail_fast,
                                  failure_judges=failure_judges, remote=remote)
        return summary, store.root
    finally:
        if isinstance(remote, ProcessEncounters):
            await remote.aclose()
        elif remote is not None:
            remote.close()
        disconnect()
        for j in judges:
            await j.aclose()
        if patient_client is not None:
            await patient_client.aclose()
        if judge_server is not None:
            judge_server.stop()
        await agent.aclose()
        if store is not None:
            store.close()  # releases the run directory's lock


def _connect_executor(options: RunOptions, meta: RunMeta) -> Callable[[], None]:
    """With --executor ray: check the plan can run on Ray and join the cluster; returns how to leave it.

    With --processes: check the plan can run in worker processes (``sim.executors.process.check_supported``).
    """
    if options.processes:
        check_supported(meta)
    if options.executor != "ray":
        return lambda: None
    check_runs_outside(meta, "--executor ray", "use --executor local")
    from sim.executors.ray import connect

    return connect(options.ray_address)


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
        last = f"{rec.scenario_id} k={rec.k}" + (f" {rec.persona}" if rec.persona != DEFAULT_PERSONA else "") \
            + f" {shown}"
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {rate:.2f}/s {last[:40]:40}")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _refs(scenarios: list[LoadedScenario]) -> list[ScenarioRef]:
    from sim.records import ScenarioRef

    return [ScenarioRef(id=s.scenario.id, path=str(s.path.resolve()), sha256=s.sha256) for s in scenarios]


def _plan_patient_model(options: RunOptions, families: dict[str, list[str]]) -> JudgeRef | None:
    """--patient-model / --patient-base-url / --patient-api-key-env, checked before anything starts."""
    from sim.agents.chat import PATIENT_FLAGS, api_key_from_env, check_base_url
    from sim.judges import family_of
    from sim.records import JudgeRef

    if options.patient_model is None:
        if options.patient_base_url or options.patient_api_key_env:
            raise ConfigError("--patient-base-url and --patient-api-key-env only apply with --patient-model MODEL.")
        return None
    if options.patient_model == "local":
        if options.patient_base_url:
            raise ConfigError("--patient-model local uses the embedded model server; drop --patient-base-url.")
        return JudgeRef(name="local", family=family_of("local", None, families))
    if not options.patient_base_url:
        raise ConfigError(f"--patient-model {options.patient_model}: a model behind an endpoint needs "
                          "--patient-base-url (for example --patient-base-url http://127.0.0.1:8000/v1), or use "
                          "--patient-model local.")
    check_base_url(options.patient_base_url, PATIENT_FLAGS)
    if options.patient_api_key_env:
        try:
            api_key_from_env(options.patient_api_key_env)
        except ConfigError:
            var = options.patient_api_key_env
            raise ConfigError(f"--patient-api-key-env {var}: the environment variable {var} is not set or empty. "
                              f"Export it first (export {var}=...), or drop --patient-api-key-env for an endpoint "
                              "without a key.") from None
    return JudgeRef(name=options.patient_model, base_url=options.patient_base_url,
                    api_key_env=options.patient_api_key_env,
                    family=family_of(options.patient_model, options.patient_base_url, families))


async def _check_images(scenarios: list[LoadedScenario], *, allow_outside: bool) -> dict[str, str]:
    """Prepare every image of the run before it starts; the scenarios whose images cannot be used, with why.

    An image outside its scenario's folder without ``--allow-outside-images`` is the run's choice: a ConfigError
    naming the flag, and no run starts. A missing or unreadable image is that scenario's defect: a warning names it
    here, the returned map gives its id the one-paragraph reason, and ``run_batch`` records its encounters as
    errors without running them, while the rest of the run goes on (and the run exits 3).
    """
    refs = [(item, ref) for item in scenarios for ref in item.scenario.image_refs]
    if not refs:
        return {}
    from imaging import ImageOutsideFolder, ImagingError, prepare_image_async

    unusable: dict[str, str] = {}
    for item, ref in refs:
        if item.scenario.id in unusable:
            continue
        try:
            await prepare_image_async(ref.path, base_dir=item.path.parent, allow_outside=allow_outside)
        except ImageOutsideFolder as exc:
            raise ConfigError(f"scenario {item.scenario.id} ({item.path}), image {ref.path!r}: {exc}") from None
        except ImagingError as exc:
            unusable[item.scenario.id] = f"scenario {item.scenario.id} ({item.path}), image {ref.path!r}: {exc}"
            print(f"warning: {unusable[item.scenario.id]} Its encounters are recorded as errors without running; "
                  "the rest of the run goes on.", file=sys.stderr)
    return unusable
