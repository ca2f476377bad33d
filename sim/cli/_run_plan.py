"""A run in two steps: ``plan_run`` decides everything, ``run_resources`` starts what the plan needs.

``plan_run(options) -> RunPlan`` reads the scenarios, the profile, the evaluator modules, the failure judges and
(with ``--resume``) run.json, checks every flag against them and the environment, prepares every image once, and
makes the run's ``RunMeta``. It makes no network call, starts no process and writes no file: a plan that cannot
run fails here in one paragraph, before anything exists.

``async with run_resources(plan) as resources`` then joins the Ray cluster (``--executor ray``), starts the agent
(the embedded server may take seconds, or fail), the embedded judge server when a judge or the patient model is
``local``, the judge clients, the worker processes (``--processes``), creates or locks the run directory, and builds
the patient model and the channel, each on one ``AsyncExitStack``: whatever was started is stopped, in reverse
order, however the run ends (finished, raised, Ctrl-C). The agent, the executor's workers and the judges are
started before a new run directory exists, so that one that fails leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sim.cli._common import reload_scenarios
from sim.cli._run_options import RunOptions
from sim.records import DEFAULT_AUDIO_FORMAT, ConfigError, RunLayout

if TYPE_CHECKING:
    from scenarios import LoadedScenario
    from scorers import FailureJudgeSpec, Judge, Profile
    from sim.agents import Agent
    from sim.encounter.assessment import AssessmentJudge
    from sim.executors import EncounterRunner
    from sim.patient import PatientModel
    from sim.records import Channel, JudgeRef, RunMeta, ScenarioRef
    from sim.store import RunStore


@dataclass(frozen=True)
class RunPlan:
    """Everything a run needs decided before anything starts (module docstring)."""

    options: RunOptions
    meta: RunMeta
    scenarios: list[LoadedScenario]
    run_dir: Path
    resumed: bool
    profile: Profile
    extra_evaluators: list[str]
    failure_judges: list[FailureJudgeSpec]
    unusable: dict[str, str]  # scenario id -> why it cannot run (an image missing or unreadable)


@dataclass(frozen=True)
class RunResources:
    """What ``run_resources`` started for a plan; stopped when its block ends."""

    store: RunStore
    agent: Agent | None  # None for a run of calls: the agent answers at its URL
    channel: Channel
    judges: list[Judge]
    patient_model: PatientModel | None
    remote: EncounterRunner | None  # None: the encounters run in this process
    concurrency: int
    assessment_judge: AssessmentJudge | None = None  # the first --judge reads assessments the parser cannot


async def plan_run(options: RunOptions) -> RunPlan:
    """The run's plan, checked (module docstring).

    Args:
        options: The run's flags.

    Returns:
        The plan.

    Raises:
        ConfigError: The plan cannot run as given (and the other user errors of scenarios, profiles, evaluators,
            judges' files and run directories).
    """
    from scenarios import resolve
    from scorers import PROFILES, load_failure_judges, load_profile
    from scorers.evaluators import load_evaluator_module
    from sim.executors.process import check_supported
    from sim.executors.worker_spec import check_runs_outside
    from sim.runner import check_plan_size
    from sim.store import RunStore

    if options.resume:
        meta = RunStore.open(options.resume).read_meta()
        check_stored_plan(meta, RunLayout(options.resume).run, i_know=options.i_know)  # run.json may be edited
        scenarios = reload_scenarios(meta, options.resume)
        check_plan_size(0, 0, concurrency=options.concurrency, i_know=options.i_know)
        run_dir = options.resume
    else:
        spec = options.profile
        profile = load_profile(spec if spec is None or spec in PROFILES else str(Path(spec)))
        # a profile meant for some suites chooses them when --scenarios is not given
        scenarios = resolve(options.scenarios or (profile.suites or []))
        check_plan_size(len(scenarios), options.k, concurrency=options.concurrency, i_know=options.i_know,
                        personas=len(options.personas))
        meta, run_dir = _new_meta(options, scenarios)
    extra_evaluators = [name for spec in meta.evaluator_modules for name in load_evaluator_module(spec)]
    failure_judges = load_failure_judges(meta.failure_judges) if meta.failure_judges else []
    if failure_judges and not [r for r in meta.judges if r.name not in meta.judges_excluded]:
        raise ConfigError(f"--failure-judges {meta.failure_judges}: the failure-mode judges need a judge model to ask; "
                          "add --judge MODEL (--judge-base-url URL), or --judge local for the embedded model.")
    unusable = await _check_images(scenarios, allow_outside=meta.allow_outside_images)
    if meta.channel == "call" and (options.processes or options.executor == "ray"):
        raise ConfigError(f"{'--processes' if options.processes else '--executor ray'} does not apply to a run "
                          "of calls (--mode call: calls run in this process); drop it.")
    if options.processes:
        check_supported(meta)
    if options.executor == "ray":
        check_runs_outside(meta, "--executor ray", "use --executor local")
    return RunPlan(options=options, meta=meta, scenarios=scenarios, run_dir=run_dir, resumed=bool(options.resume),
                   profile=load_profile(meta.profile), extra_evaluators=extra_evaluators,
                   failure_judges=failure_judges, unusable=unusable)


def check_stored_plan(meta: RunMeta, path: Path, *, i_know: bool = False) -> None:
    """The limits a new run's flags are held to, applied to the plan a run.json stores (a hand edit can break them).

    Args:
        meta: The run's metadata.
        path: Its run.json, as the messages name it.
        i_know: ``--i-know`` was given: the plan may be larger than the limits of ``check_plan_size``.

    Raises:
        ConfigError: A value of the stored plan is out of range; the message names the file, the field and the fix.
    """
    import math

    from scenarios.personas import parse_personas
    from scenarios.schema import TURN_LIMIT_CEILING
    from sim.runner import check_plan_size

    fix = "Restore run.json as the run wrote it, or start a new run with --out."
    if meta.k < 1:
        raise ConfigError(f"{path}: k is {meta.k}; a run has at least 1 encounter per scenario. {fix}")
    if meta.turn_limit is not None and not 1 <= meta.turn_limit <= TURN_LIMIT_CEILING:
        raise ConfigError(f"{path}: turn_limit is {meta.turn_limit}; --max-turns allows 1 to {TURN_LIMIT_CEILING}. "
                          f"{fix}")
    for name, value in (("call_timeout_s", meta.call_timeout_s), ("call_time_limit_s", meta.call_time_limit_s)):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise ConfigError(f"{path}: {name} is {value}; give a positive number of seconds, or null for the "
                              f"default. {fix}")
    try:
        parse_personas(meta.personas, flag=f"{path}: personas")
        check_plan_size(len(meta.scenarios), meta.k, i_know=i_know, personas=len(meta.personas))
    except ConfigError as exc:
        raise ConfigError(f"{path}: the plan stored there is over the limits of a new run: {exc} (run.json was "
                          f"edited, or the run was started with --i-know: resume it with --i-know too.)") from None


def _new_meta(options: RunOptions, scenarios: list[LoadedScenario]) -> tuple[RunMeta, Path]:
    """A new run's run.json and directory, from flags checked against the model, the judges and the environment."""
    from scorers import guard_self_preference
    from sim.agents import check_model_spec
    from sim.encounter import HARNESS_VERSION
    from sim.judges import family_of, load_family_map, plan_judges
    from sim.records import RunMeta, package_versions
    from sim.store import new_run_id

    if options.mode != "call":  # a call's agent is reached at --agent-url; --model only names it
        check_model_spec(options.model, options.base_url, options.api_key_env)
    if options.gguf is not None and options.model != "local":
        raise ConfigError("--gguf only applies with --model local; drop it or use --model local.")
    if options.gguf is not None and not options.gguf.is_file():
        raise ConfigError(f"--gguf {options.gguf}: no such model file. Give the path of a .gguf file.")
    if options.mode in ("voice", "call"):  # a bad ENCSIM_STT_THREADS / _WORKERS is the user's to fix first
        from audio.stt import stt_threads, stt_workers

        stt_threads()
        stt_workers()
    out = options.out or Path("runs") / new_run_id(options.model)
    if RunLayout(out).run.exists():
        raise ConfigError(f"--out {out}: a run already exists there. Resume it with "
                          f"`encsim run --resume {out}`, or choose another --out.")
    profile_spec = str(Path(options.profile).resolve()) if options.profile and options.profile.endswith(".json") \
        else (options.profile or "triage")
    modules = [str(Path(m).resolve()) if m.endswith(".py") else m for m in options.evaluator_modules]
    families = load_family_map(options.judges.family_map)
    refs = plan_judges(options.judges.models, options.judges.base_urls, options.judges.api_key_envs,
                       families=families)
    _, excluded, warnings = guard_self_preference({r.name: r.family for r in refs},
                                                  family_of(options.model, options.base_url, families))
    patient_ref = _plan_patient_model(options, families)
    model = options.agent_url if options.mode == "call" and options.model == "local" and options.agent_url \
        else options.model
    meta = RunMeta(run_id=out.name, harness_version=HARNESS_VERSION, model=model,
                   base_url=options.base_url, api_key_env=options.api_key_env,
                   gguf=str(options.gguf.resolve()) if options.gguf else None,
                   scenarios=_refs(scenarios), k=options.k, seed=options.seed, turn_limit=options.max_turns,
                   call_timeout_s=options.call_timeout,
                   judges=refs, judges_excluded=excluded, judge_warnings=warnings, patient_model=patient_ref,
                   profile=profile_spec, evaluator_modules=modules, channel=options.mode,
                   failure_judges=str(options.failure_judges.resolve()) if options.failure_judges else None,
                   voice_preset=options.voice_preset, audio_format=options.audio_format or DEFAULT_AUDIO_FORMAT,
                   text_only=options.text_only or options.model == "local" or options.mode == "call",
                   agent_url=options.agent_url, call_time_limit_s=options.call_time_limit,
                   agent_protocol=(options.agent_protocol or "pipecat") if options.mode == "call" else None,
                   agent_turns=options.agent_turns, agent_reply=options.agent_reply,
                   agent_scenario_hint=options.agent_scenario_hint,
                   personas=options.personas,
                   allow_outside_images=options.allow_outside_images,
                   created_at=time.time(), packages=package_versions())
    return meta, out


@contextlib.asynccontextmanager
async def run_resources(plan: RunPlan, *,
                        on_started: Callable[[Path], None] | None = None) -> AsyncIterator[RunResources]:
    """Start what the plan needs on one exit stack (module docstring); stop it all when the block ends.

    Args:
        plan: The checked plan.
        on_started: Called with the run directory once it exists and is locked (what an interrupted run tells
            the user to resume).

    Yields:
        The started resources.
    """
    from sim.agents import LlamaServer, LocalAgent, make_agent
    from sim.agents.chat import PATIENT_FLAGS
    from sim.encounter import make_channel
    from sim.executors.process import ProcessEncounters
    from sim.executors.worker_spec import WorkerSpec
    from sim.judges import judge_from_ref
    from sim.patient import PatientModel

    options, meta = plan.options, plan.meta
    async with contextlib.AsyncExitStack() as stack:
        if options.executor == "ray":
            from sim.executors.ray import connect

            stack.callback(connect(options.ray_address))
        agent: Agent | None = None
        agent_key: str | None = None
        if meta.channel == "call" and meta.agent_url is not None:  # something must listen there, or no run starts
            from sim.agents.chat import api_key_from_env
            from sim.executors.call import probe_agent

            agent_key = api_key_from_env(meta.api_key_env)
            await probe_agent(meta.agent_url)
        if meta.channel != "call":  # a call's agent answers at meta.agent_url (sim.executors.call)
            agent = await make_agent(meta.model, base_url=meta.base_url, api_key_env=meta.api_key_env,
                                     timeout_s=meta.call_timeout_s,
                                     gguf=Path(meta.gguf) if meta.gguf else None, text_only=meta.text_only)
            stack.push_async_callback(agent.aclose)
        active = [r for r in meta.judges if r.name not in meta.judges_excluded]
        local_url: str | None = None
        if any(r.name == "local" for r in [*active, *([meta.patient_model] if meta.patient_model else [])]):
            if isinstance(agent, LocalAgent):
                local_url = agent.server.base_url
            else:
                judge_server = await LlamaServer().start()
                stack.callback(judge_server.stop)
                local_url = judge_server.base_url
        judges: list[Judge] = []
        for ref in active:
            client = judge_from_ref(ref, local_url, concurrency=options.judges.concurrency,
                                    timeout_s=meta.call_timeout_s)
            stack.push_async_callback(client.aclose)
            judges.append(client)
        remote: EncounterRunner | None = None
        if options.processes:  # as the agent: started, or failed in one paragraph, before a new run directory exists
            processes = await ProcessEncounters(WorkerSpec.from_meta(meta), processes=options.processes).start()
            stack.push_async_callback(processes.aclose)
            remote = processes
        store = _store(plan)
        stack.callback(store.close)  # releases the run directory's lock
        if plan.resumed:  # one writer per run directory (exit 2 if another holds it); a torn last line set aside
            store.lock("encsim run --resume")
            store.repair_tail()
        if on_started is not None:
            on_started(store.root)
        patient_model = None
        if meta.patient_model is not None:
            patient_client = judge_from_ref(meta.patient_model, local_url, timeout_s=meta.call_timeout_s,
                                            flags=PATIENT_FLAGS)
            stack.push_async_callback(patient_client.aclose)
            patient_model = PatientModel(patient_client, cache_path=store.patient_cache_path)
        if not options.tui:
            print(f"run directory: {store.root}", file=sys.stderr)
        channel = make_channel(meta, plan.scenarios, RunLayout(store.root).audio)
        concurrency = options.concurrency
        if meta.channel == "call":
            from sim.executors.call import DEFAULT_CALL_TIME_LIMIT_S, CallEncounters, agent_protocol

            assert meta.agent_url is not None  # RunOptions refuses --mode call without --agent-url
            remote = CallEncounters(meta.agent_url, meta, RunLayout(store.root).audio,
                                    time_limit_s=meta.call_time_limit_s or DEFAULT_CALL_TIME_LIMIT_S,
                                    protocol=agent_protocol(meta.agent_protocol),
                                    api_key=agent_key)
        if options.executor == "ray":  # (--processes with ray is refused by RunOptions)
            from sim.executors.ray import RayEncounters

            ray = RayEncounters(WorkerSpec.from_meta(meta), meta=meta, scenarios=plan.scenarios,
                                audio_dir=RunLayout(store.root).audio, actors=options.ray_actors)
            stack.callback(ray.close)
            remote = ray
            if ray.voice:
                concurrency = ray.slots  # one encounter per voice actor
        assessment_judge = _assessment_judge(judges, remote, quiet=options.quiet)
        yield RunResources(store=store, agent=agent, channel=channel, judges=judges, patient_model=patient_model,
                           remote=remote, concurrency=concurrency, assessment_judge=assessment_judge)


def _assessment_judge(judges: list[Judge], remote: EncounterRunner | None, *, quiet: bool) -> AssessmentJudge | None:
    """The judge fallback of the assessment reader: the first --judge, for encounters run in this process."""
    from sim.encounter.assessment import AssessmentJudge

    if not judges:
        return None
    if remote is not None:
        if not quiet:
            print("note: the judge reads unlabelled assessments only for encounters run in this process; with "
                  "--processes, --executor ray or --mode call the deterministic reader alone decides", file=sys.stderr)
        return None
    return AssessmentJudge(judges[0])


def _store(plan: RunPlan) -> RunStore:
    """The run directory's store: created (and locked) for a new run, opened for a resume."""
    from sim.store import RunStore

    if not plan.resumed:
        return RunStore.create(plan.run_dir, plan.meta)  # takes the run directory's lock
    store = RunStore.open(plan.run_dir)
    store.warn = lambda m: print(f"warning: {m}", file=sys.stderr)
    return store


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
