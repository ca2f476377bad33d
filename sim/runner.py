"""The batch runner: N scenarios x K runs against one agent, into a run directory.

Plan and memory: the (scenario, k) pairs are made one at a time by a generator (``_plan``) that skips
every pair already recorded (with ``--personas``, each scenario's K runs under each persona: a k stands for one
(persona, run), ``sim.records.encounter_slot``, and a record counts as done only under the persona its k stands
for), and a fixed pool of ``concurrency`` worker tasks takes the next pair as
it finishes one. Nothing is made per planned pair up front, so memory is O(concurrency + recorded
results), never O(scenarios x K). The CLI refuses a plan larger than ``MAX_K`` runs per scenario or
``MAX_ENCOUNTERS`` encounters, or ``--concurrency`` over ``MAX_CONCURRENCY``, unless ``--i-know``
(``check_plan_size``; a resumed run checks only --concurrency: its plan was accepted when it started).

When an encounter finishes it is scored and appended to results.jsonl at once (ok or error), so a killed run loses
only encounters in flight and ``--resume`` skips every pair already recorded. Errors are recorded, never scored. A
conversation to be scored is first appended to unscored.jsonl (``sim.records.UnscoredEncounter``): scoring with
judges takes seconds, and a run stopped or killed meanwhile would otherwise lose conversations that had ended;
``--resume`` scores those instead of running them again (a record in results.jsonl always wins), and a run that
ends with every one recorded removes the file. A worker starts its next encounter while the last one is scored and
its line fsync'd (at most one such encounter per worker; the worker waits for it before taking another and before
it ends), so scoring CPU and the disk stay off the agent's critical path. Scoring runs on one thread of its own
(``_off_loop``), and a thread that holds the GIL keeps the event loop from its replies for up to the interpreter's
switch interval (5 ms by default: the first call of the next encounter waited that long), so a batch lowers the
interval to ``SWITCH_INTERVAL_S`` while it runs (``_batch_runtime``) and puts it back after. The summary and report
are recomputed from every record at the end (also after Ctrl-C, SIGTERM or a fail-fast stop), so they always
describe exactly what results.jsonl holds. With ``--failure-judges DIR`` the summary also gives, per failure mode,
the judge's raw failure rate and, when DIR/validation.json validates the very judge and models that ran, the
Rogan-Gladen corrected rate with its bootstrap CI (``failure_rates``; ``Summary.failure_rates``); they stay out of
the profile's score.

Fail fast: ``sim.fail_fast`` (``--fail-fast N``) watches the agent's calls; when it trips the run stops and
``EndpointUnusable`` (exit 2) says in one paragraph which flag to fix and how to continue. Encounters that ended by
the fatal cause while the check was undecided are held back here (``_Batch._settle``): recorded as errors if it does not
trip, dropped if it trips.

Where the encounters run: in this process by default; ``run_batch(..., remote=...)`` hands each (scenario, k)
to an ``EncounterRunner`` instead (``sim.executors.process``: local worker processes, ``--processes N``;
``sim.executors.ray``: Ray tasks or actors). Planning, seeds
(``encounter_seed``), scoring (``record_for``), every write to the run directory, resume and the summary stay
here either way, so a remote run's directory is the same as a local one's. Local worker processes stream each
event and agent call as it happens; Ray reports an encounter's agent calls and events when it returns, so there
the fail-fast check decides per returned encounter, not per call.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import gc
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import NamedTuple

from scenarios import LoadedScenario, Scenario
from scenarios.personas import DEFAULT_PERSONA, with_persona
from scorers import FailureJudgeSpec, Judge, Profile, load_profile, record_for
from sim.agents.base import Agent
from sim.encounter.assessment import AssessmentJudge
from sim.executors import EncounterLost, EncounterRunner, LocalEncounters
from sim.fail_fast import (
    CALL_ERRORS,
    DEFAULT_FAIL_FAST,
    CallObserver,
    EndpointUnusable,
    FailFast,
    Tripped,
    fail_fast_message,
    fatal_cause,
    observe_call,
)
from sim.patient.model import PatientModel
from sim.records import (
    AgentError,
    Channel,
    ConfigError,
    ConversationResult,
    EncounterRecord,
    RunMeta,
    Summary,
    UnscoredEncounter,
    encounter_k,
    encounter_seed,
    encounter_slot,
    one_line,
    planned_encounters,
    scenario_personas,
)
from sim.session import RunSession
from sim.store import RunStore

Progress = Callable[[int, int, EncounterRecord], None]

MAX_K = 1000  # runs per scenario without --i-know
MAX_ENCOUNTERS = 100_000  # scenarios x K without --i-know
MAX_CONCURRENCY = 1000  # encounters at once without --i-know
SWITCH_INTERVAL_S = 0.0005  # the GIL switch interval while a batch runs (module docstring)


def text_progress(done: int, total: int, rec: EncounterRecord) -> None:
    """Print one line on stderr per saved encounter: ``[done/total] scenario k=K: composite ...`` or why not."""
    if rec.status == "not_applicable":
        what = "not applicable (the model is text-only; the item needs images)"
    elif rec.score is None:
        what = f"ERROR {one_line(rec.error or '')}"  # endpoint text: redacted, no escapes, one line
    else:
        what = ("unscored (rubric only: needs a judge)" if rec.score.composite is None
                else f"composite {rec.score.composite:.2f}")
    persona = f" ({rec.persona})" if rec.persona != DEFAULT_PERSONA else ""
    print(f"[{done}/{total}] {rec.scenario_id} k={rec.k}{persona}: {what}", file=sys.stderr, flush=True)


def check_plan_size(n_scenarios: int, k: int, *, concurrency: int = 1, i_know: bool = False,
                    personas: int = 1) -> None:
    """Refuse a plan too large to be meant, unless ``--i-know``: a typo'd ``--k`` must not start a run that never ends.

    K <= MAX_K, scenarios x K (x personas) <= MAX_ENCOUNTERS and
    concurrency <= MAX_CONCURRENCY unless ``--i-know``; else a one-paragraph ConfigError naming the flag (or the
    product and both numbers) and --i-know.
    """
    if i_know:
        return
    total = n_scenarios * k * personas
    if k > MAX_K:
        raise ConfigError(f"--k {k}: at most {MAX_K} runs per scenario without --i-know ({n_scenarios} scenario(s) x "
                          f"{k} = {total:,} encounters). Lower --k (10 to 100 is usual), or add --i-know if you "
                          "really mean that many.")
    if total > MAX_ENCOUNTERS:
        times = f" x {personas} --personas" if personas > 1 else ""
        raise ConfigError(f"{n_scenarios} scenarios x --k {k}{times} = {total:,} encounters: more than "
                          f"{MAX_ENCOUNTERS:,} without --i-know. Lower --k or choose fewer --scenarios"
                          + (" or --personas" if personas > 1 else "") + ", or add --i-know if you really mean that "
                          "many.")
    if concurrency > MAX_CONCURRENCY:
        raise ConfigError(f"--concurrency {concurrency}: at most {MAX_CONCURRENCY} encounters at once without "
                          "--i-know (each holds a connection to the endpoint). Lower --concurrency (4 to 64 is "
                          "usual), or add --i-know if you really mean that many.")


@contextlib.contextmanager
def _batch_runtime() -> Iterator[None]:
    """The GIL switch interval at most ``SWITCH_INTERVAL_S`` inside, as it was outside (module docstring).

    Also, what the process holds when the batch starts (modules, the lexicon, the scenarios) is set aside from
    the cyclic garbage collector while it runs (``gc.freeze``; ``gc.unfreeze`` after): a full collection then
    walks only what the batch made, not the whole heap (64 ms a time before, with the event loop stopped).
    """
    before = sys.getswitchinterval()
    sys.setswitchinterval(min(before, SWITCH_INTERVAL_S))
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        sys.setswitchinterval(before)


class Planned(NamedTuple):
    """One encounter of the plan: the scenario as its persona tells it, its k, the persona and its run index."""

    item: LoadedScenario
    k: int
    persona: str
    run: int


def _plan(scenarios: list[LoadedScenario], k: int, done: set[tuple[str, int, str]],
          personas: Sequence[str] = (DEFAULT_PERSONA,)) -> Iterator[Planned]:
    """Every (scenario, persona, run) not done yet, in order, made as it is asked for (O(1) memory in K).

    ``done`` holds (scenario id, k, persona) of the recorded encounters: a record whose persona is not the one the
    plan gives its k is not counted as done. A scenario is told by each persona once (``with_persona``), not per
    encounter; the copy is what the harness, the channel and a Ray worker get.
    """
    for item in scenarios:
        for index, persona in enumerate(scenario_personas(personas, item.scenario)):
            told: LoadedScenario | None = None
            for j in range(k):
                key = encounter_k(index, j, k)
                if (item.scenario.id, key, persona) in done:
                    continue
                if told is None:
                    told = item if persona == DEFAULT_PERSONA else \
                        dataclasses.replace(item, scenario=with_persona(item.scenario, persona))
                yield Planned(told, key, persona, j)


def _in_plan(by_id: Mapping[str, Scenario], personas: Sequence[str], runs: int, scenario_id: str, k: int,
             persona: str) -> bool:
    """Whether (scenario id, k, persona) is an encounter of the run's plan."""
    scenario = by_id.get(scenario_id)
    slot = None if scenario is None else encounter_slot(personas, scenario, k, runs)
    return slot is not None and slot[0] == persona


async def run_batch(
    store: RunStore,
    scenarios: list[LoadedScenario],
    agent: Agent | None,
    channel: Channel,
    meta: RunMeta,
    *,
    concurrency: int = 4,
    retry_errors: bool = False,
    judges: Sequence[Judge] | None = None,
    profile: Profile | None = None,
    extra_evaluators: list[str] | None = None,
    progress: Progress | None = text_progress,
    patient_model: PatientModel | None = None,
    assessment_judge: AssessmentJudge | None = None,
    fail_fast: int = DEFAULT_FAIL_FAST,
    failure_judges: Sequence[FailureJudgeSpec] = (),
    remote: EncounterRunner | None = None,
    unusable: Mapping[str, str] | None = None,
) -> Summary:
    """Run every pair not done yet (module docstring); raise ``EndpointUnusable`` when the fail-fast check trips.

    With ``remote``, each encounter runs there (``agent``, ``channel`` and ``patient_model`` are then not used for
    encounters, and ``agent`` may be None: a run of calls reaches its agent at a URL); everything else is the same.
    ``unusable`` maps the ids of scenarios that cannot run (an image file missing or unreadable) to why: each of
    their encounters is recorded as an error with that reason, unrun.
    """
    profile = profile or load_profile(meta.profile)
    batch = _Batch(store, scenarios, agent, channel, meta, retry_errors=retry_errors, judges=judges, profile=profile,
                   evaluator_names=[*profile.evaluators,
                                    *(n for n in extra_evaluators or [] if n not in profile.evaluators)],
                   progress=progress, patient_model=patient_model, assessment_judge=assessment_judge,
                   fail_fast=fail_fast,
                   failure_judges=failure_judges, remote=remote, unusable=unusable or {})
    return await batch.run(concurrency)


class _Batch:
    """The state of one ``run_batch`` call and the steps of its workers (the module docstring tells the design).

    ``_worker`` takes the next pair of the shared plan, runs it (``_encounter``), keeps a conversation that is to be
    scored in unscored.jsonl (``_keep``) and scores and records it (``_settle``) while it runs the next.
    """

    def __init__(self, store: RunStore, scenarios: list[LoadedScenario], agent: Agent | None, channel: Channel,
                 meta: RunMeta, *, retry_errors: bool, judges: Sequence[Judge] | None, profile: Profile,
                 evaluator_names: list[str], progress: Progress | None, patient_model: PatientModel | None,
                 assessment_judge: AssessmentJudge | None, fail_fast: int,
                 failure_judges: Sequence[FailureJudgeSpec], remote: EncounterRunner | None,
                 unusable: Mapping[str, str]) -> None:
        self.store, self.scenarios, self.meta = store, scenarios, meta
        self.judges, self.profile, self.evaluator_names = judges, profile, evaluator_names
        self.progress, self.failure_judges = progress, failure_judges
        self.unusable = unusable
        self.records, _ = store.load_records()
        done = {(sid, k, r.persona) for (sid, k), r in self.records.items() if r.status == "ok" or not retry_errors}
        by_id = {s.scenario.id: s.scenario for s in scenarios}
        done_per_scenario = Counter(sid for sid, k, persona in done if sid in by_id
                                    and (slot := encounter_slot(meta.personas, by_id[sid], k, meta.k)) is not None
                                    and slot[0] == persona)
        self.total = planned_encounters(list(by_id.values()), meta.personas, meta.k)
        self.finished = sum(done_per_scenario[s.scenario.id] for s in scenarios)
        self.plan = _plan(scenarios, meta.k, done, meta.personas)
        # conversations that ended before an earlier session of this run stopped, not yet scored: scored, not run
        # again
        self.unscored = {key: entry.result for key, entry in store.load_unscored(functools.partial(
                             _in_plan, by_id, meta.personas, meta.k)).items() if key[:2] not in self.records}
        self.check = FailFast(fail_fast)
        self.observe: CallObserver = functools.partial(observe_call, self.check)
        self.executor: EncounterRunner
        if remote is not None:
            self.executor = remote
        elif agent is not None:
            self.executor = LocalEncounters(agent, channel, meta, patient_model, assessment_judge)
        else:
            raise ValueError("run_batch needs the agent, or an executor (remote) that reaches it")
        self.held: list[EncounterRecord] = []  # errored by the candidate fatal cause while the check is undecided
        self.session = RunSession(store, meta, scenarios, on_saved=self._saved)

    def _saved(self, rec: EncounterRecord) -> None:
        self.finished += 1
        if self.progress:
            self.progress(self.finished, self.total, rec)

    async def _encounter(self, planned: Planned) -> tuple[ConversationResult | EncounterRecord, list[AgentError],
                                                          bool]:
        """Run one encounter: its result or the error record of an encounter that could not run, and whether it ran.

        It did not run when an earlier session of the run kept its conversation in unscored.jsonl (then scored).
        """
        item, k, meta, session = planned.item, planned.k, self.meta, self.session
        scenario = item.scenario
        if (kept := self.unscored.pop((scenario.id, k, planned.persona), None)) is not None:
            return kept, [], False
        session.encounter_started(scenario.id, k)
        if (reason := self.unusable.get(scenario.id)) is not None:
            return EncounterRecord(scenario_id=scenario.id, k=k, persona=planned.persona, status="error",
                                   recorded_at=time.time(), error=reason), [], True
        call_errors: list[AgentError] = []
        token = CALL_ERRORS.set(call_errors)
        seed = encounter_seed(meta.seed, scenario.id, planned.run)
        try:
            result = await self.executor.run(item, k, seed=seed, sink=session.events, observe=self.observe)
        except Exception as exc:  # a bug or channel failure must not lose the rest of the batch
            return EncounterRecord(scenario_id=scenario.id, k=k, persona=planned.persona, status="error",
                                   recorded_at=time.time(),
                                   error=str(exc) if isinstance(exc, EncounterLost) else f"{type(exc).__name__}: {exc}"
                                   ), call_errors, True
        finally:
            CALL_ERRORS.reset(token)
        return result, call_errors, True

    def _keep(self, planned: Planned, outcome: ConversationResult | EncounterRecord,
              ran_now: bool) -> asyncio.Task[None] | None:
        """Start writing a conversation that is to be scored to unscored.jsonl (not one that came from there).

        Scoring, with judge calls, can take seconds, and the next conversation of the worker waits for the last
        one's scoring: a run stopped meanwhile (Ctrl-C, a kill) must lose neither.
        """
        if not ran_now or isinstance(outcome, EncounterRecord) or not outcome.ok \
                or outcome.termination == "not_applicable":
            return None
        return asyncio.create_task(self.session.keep_unscored(UnscoredEncounter(
            scenario_id=planned.item.scenario.id, k=planned.k, persona=planned.persona, result=outcome)))

    async def _settle(self, planned: Planned, outcome: ConversationResult | EncounterRecord,
                      call_errors: list[AgentError], kept: asyncio.Task[None] | None) -> None:
        """Score a finished encounter and record it (or hold it back while the fail-fast check is undecided)."""
        check, held = self.check, self.held
        if kept is not None:
            await kept  # its line in unscored.jsonl comes first (a write that failed fails the run, as a record's)
        rec = outcome if isinstance(outcome, EncounterRecord) else await record_for(
            outcome, planned.item.scenario, evaluator_names=self.evaluator_names, judges=self.judges,
            profile=self.profile, failure_judges=self.failure_judges, persona=planned.persona)
        if (rec.status == "error" and call_errors and check.cause is not None
                and fatal_cause(call_errors[-1]) == check.cause and check.state != "off"):
            if check.state == "armed":
                held.append(rec)  # recorded if the check disarms, dropped if it trips
            return
        while held and check.state == "off":  # the check is off: what it held back is recorded, in order
            await self.session.record(held.pop(0))
        await self.session.record(rec)

    async def _worker(self) -> None:
        # Pipelined: while encounter n+1 talks to the agent, encounter n is scored and its line fsync'd (CPU and
        # disk off the agent's critical path). At most one finished encounter per worker waits for that, and the
        # worker awaits it before it ends (a trip or the end of the plan), so nothing finished is left unrecorded.
        # Each finished conversation is kept in unscored.jsonl at once (``_keep``), so a run stopped while one is
        # scored or waits for the last one's scoring loses neither: --resume scores them.
        pending: asyncio.Task[None] | None = None
        kept: asyncio.Task[None] | None = None
        try:
            for planned in self.plan:  # one shared generator: each encounter is taken by exactly one worker
                if self.check.state == "tripped":
                    break
                outcome, call_errors, ran_now = await self._encounter(planned)
                kept = self._keep(planned, outcome, ran_now)
                if pending is not None:
                    await pending
                pending, kept = asyncio.create_task(self._settle(planned, outcome, call_errors, kept)), None
            if pending is not None:
                await pending
        finally:
            if pending is not None and not pending.done():  # this worker was cancelled: so is its scoring
                pending.cancel()
                await asyncio.gather(pending, return_exceptions=True)
            if kept is not None:  # a conversation being kept when the worker was cancelled: its write ends first
                await asyncio.gather(kept, return_exceptions=True)
        if self.check.state == "tripped":
            raise Tripped

    async def run(self, concurrency: int) -> Summary:
        """Run the plan in ``concurrency`` workers inside the session; the summary, or ``EndpointUnusable``."""
        session, check, meta, scenarios = self.session, self.check, self.meta, self.scenarios
        tripped = False
        with _batch_runtime():
            async with session:
                session.started(scenario_ids=[s.scenario.id for s in scenarios], k=meta.k, total=self.total,
                                planned={s.scenario.id: meta.k * len(scenario_personas(meta.personas, s.scenario))
                                         for s in scenarios} if len(meta.personas) > 1 else None,
                                resumed=bool(self.records), already_done=self.finished)
                workers = [asyncio.create_task(self._worker())
                           for _ in range(max(0, min(concurrency, self.total - self.finished)))]
                try:
                    all_ended = False
                    try:
                        await asyncio.gather(*workers)
                        all_ended = True  # each worker recorded every conversation it kept (not so after a trip:
                    except Tripped:  # the other workers' are cancelled below, and stay in unscored.jsonl for --resume)
                        tripped = True
                    if check.state == "armed" and check.calls:  # the plan ran out first: every call failed alike
                        check.state, tripped = "tripped", True
                    while self.held and check.state == "off":
                        await session.record(self.held.pop(0))
                    if all_ended and not self.unscored:  # every conversation kept for scoring has its record now
                        self.store.drop_unscored()
                finally:
                    for t in workers:
                        t.cancel()
                    await asyncio.gather(*workers, return_exceptions=True)
                    session.cut_short = tripped
        summary = session.summary
        assert summary is not None  # the session summarised on the way out
        if tripped:
            raise EndpointUnusable(fail_fast_message(check, meta, self.store.root, session.saved), summary)
        return summary
