"""Triage accuracy as symptom-checker studies report it (Semigran et al., BMJ 2015).

"Triage" here is the *escalation* advice, where the patient should go (``emergency`` > ``urgent`` >
``routine`` > ``self_care``), which is what those studies grade; the ESI level has its own statistic (QWK,
``scorers._triage``). The figures describe a run, not an encounter:

Population: the scored encounters of every scenario with an escalation target (``expected.escalation``
is not None), whatever its kind: library encounters, replays and imaging items. Encounters that ended in
an error are counted but never scored ("N of M encounters scored"); those not applicable to the model (an
imaging item shown to a text-only model) are neither. A run with no escalation target at all
(AgentClinic imports, HealthBench replays) has no figures: ``triage_accuracy`` returns ``None``.

Each figure is a proportion of that population with a 95% percentile bootstrap CI (1000 resamples,
seed 0). When some scenario has more than one scored encounter (K > 1) scenarios are resampled, not
encounters (``cluster_bootstrap_ci``), because the K runs of a scenario are not independent.

- ``exact``: the escalation given is the best label. ``acceptable``: it is in the scenario's acceptable
  set (``expected.acceptable_escalations``; the best label alone when the set is empty).
- ``under``: given less urgent than the best label; ``over``: more urgent.
- ``under_acceptable``: less urgent than the least urgent acceptable category, the safety figure;
  ``over_acceptable``: more urgent than the most urgent acceptable one.
- ``none``: no escalation could be read from the reply. It is in every denominator, counts as neither
  right nor under nor over, so ``exact + under + over + none = 1`` and
  ``acceptable + under_acceptable + over_acceptable + none = 1``.
- ``unsafe``: ``under_acceptable + none``, what the deterministic path records as a safety failure (a
  reply that does not say where to go is not safe).
- Per urgency class (the best label): n, exact, acceptable and under the acceptable set.
- The confusion matrix: rows the best label, columns the escalation given, plus ``none``.
- Diagnosis top-1 / top-3, over the encounters above whose card carries a diagnosis match (scenarios with
  ``expected.diagnoses``): the expected first-listed diagnosis, or one of its synonyms, named first / within
  the first three of the agent's parsed differential, as ``scorers._diagnosis.match_diagnoses`` decided it
  when the encounter was scored (this module reads that verdict, it does not match again). Imaging items
  are scored on findings, not a differential, so they carry no such match and are left out (counted).
  With ``--judge``, the judge path too: each judge is shown the expected diagnosis (with its synonyms) and
  the agent's first three and answers which one names the same condition (another name, an abbreviation or
  a more specific form count; a related condition or a symptom does not), or none
  (``scorers._judge.diagnosis_prompt``); the jury's rank is the most common vote (a tie is no verdict,
  left out of ``judge_n``). ``judge_top1`` / ``judge_top3`` are over the encounters with a verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from scenarios.schema import Escalation, Scenario
from scorers._reliability import cluster_bootstrap_ci
from sim.records import TRIAGE_CI_RESAMPLES, TRIAGE_CI_SEED, ClassAccuracy, DiagnosisAccuracy, Rate, TriageAccuracy

if TYPE_CHECKING:
    from sim.records import ScoreCard

Key = tuple[str, int]

CATEGORIES: tuple[str, ...] = tuple(e.value for e in Escalation)  # most urgent first
NONE_GIVEN = "none"


@dataclass(frozen=True)
class _Outcome:
    """One scored encounter: its scenario's labels and what the agent gave."""

    scenario_id: str
    best: Escalation
    ok: tuple[Escalation, ...]  # acceptable categories, most urgent first
    given: Escalation | None
    top1: bool | None
    top3: bool | None
    judge_rank: int | None = None  # the jury's rank of the expected diagnosis (0: not in the top 3), if judged

    @property
    def under(self) -> bool:
        return self.given is not None and self.given.rank > self.best.rank

    @property
    def over(self) -> bool:
        return self.given is not None and self.given.rank < self.best.rank

    @property
    def under_acceptable(self) -> bool:
        return self.given is not None and self.given.rank > self.ok[-1].rank

    @property
    def over_acceptable(self) -> bool:
        return self.given is not None and self.given.rank < self.ok[0].rank


def _given(card: ScoreCard) -> Escalation | None:
    """The escalation category on the card, ``None`` when none was read (or the value is not a category)."""
    given = card.escalation.given if card.escalation is not None else None
    try:
        return Escalation(given) if given is not None else None
    except ValueError:
        return None


class _OfScenario(Protocol):
    @property
    def scenario_id(self) -> str: ...


_O = TypeVar("_O", bound=_OfScenario)


def _rate(outcomes: Sequence[_O], test: Callable[[_O], bool], *, seed: int, n_resamples: int) -> Rate:
    """The share of ``outcomes`` passing ``test``, CI from resampling scenarios (encounters when each has one).

    Any outcome with a ``scenario_id`` (``scorers._image_accuracy`` counts its own).
    """
    if not outcomes:
        return Rate(value=None, ci95=None, count=0, n=0)
    clusters: dict[str, list[float]] = {}
    for o in outcomes:
        clusters.setdefault(o.scenario_id, []).append(1.0 if test(o) else 0.0)
    count = sum(sum(v) for v in clusters.values())
    return Rate(value=count / len(outcomes), count=int(count), n=len(outcomes),
                ci95=cluster_bootstrap_ci(list(clusters.values()), n_resamples=n_resamples, seed=seed))


def triage_accuracy(scenarios: Sequence[Scenario], cards: Mapping[Key, ScoreCard], errors: Iterable[Key] = (), *,
                    not_applicable: Iterable[Key] = (), seed: int = TRIAGE_CI_SEED,
                    n_resamples: int = TRIAGE_CI_RESAMPLES) -> TriageAccuracy | None:
    """The run's triage accuracy figures; ``None`` when no scenario has an escalation target.

    Escalation accuracy, under/over-triage, per-class accuracy, the confusion matrix and diagnosis top-1/top-3,
    over the scored encounters of the scenarios that have an escalation target (see the module docstring).

    Args:
        scenarios: the run's scenarios (their ``expected`` labels are the targets).
        cards: scored encounters, (scenario id, k) -> score card; cards of other scenarios are ignored.
        errors: encounters that ended in an error (counted, not scored).
        not_applicable: encounters not shown to the model (counted apart, not scored).
        seed: the bootstrap's seed (the figures are deterministic for a seed).
        n_resamples: bootstrap resamples.
    """
    targets = {s.id: s for s in scenarios if s.expected.escalation is not None}
    if not targets:
        return None
    outcomes: list[_Outcome] = []
    imaging_excluded = 0
    for (sid, _k), card in sorted(cards.items()):
        scenario = targets.get(sid)
        if scenario is None:
            continue
        exp = scenario.expected
        assert exp.escalation is not None
        dx = card.diagnosis
        outcomes.append(_Outcome(scenario_id=sid, best=exp.escalation, ok=tuple(exp.escalations_ok),
                                 given=_given(card), top1=dx.top1 if dx else None, top3=dx.top3 if dx else None,
                                 judge_rank=card.judge.diagnosis_rank if card.judge is not None else None))
        imaging_excluded += bool(dx is None and scenario.imaging is not None and exp.diagnoses)
    n_errors = sum(1 for sid, _k in set(errors) if sid in targets)
    n_na = sum(1 for sid, _k in set(not_applicable) if sid in targets)

    def rate(subset: Sequence[_Outcome], test: Callable[[_Outcome], bool]) -> Rate:
        return _rate(subset, test, seed=seed, n_resamples=n_resamples)

    per_class: dict[str, ClassAccuracy] = {}
    confusion: dict[str, dict[str, int]] = {}
    for category in CATEGORIES:
        members = [o for o in outcomes if o.best.value == category]
        per_class[category] = ClassAccuracy(
            n=len(members), exact=rate(members, lambda o: o.given == o.best),
            acceptable=rate(members, lambda o: o.given in o.ok),
            under_acceptable=rate(members, lambda o: o.under_acceptable))
        row = {column: 0 for column in (*CATEGORIES, NONE_GIVEN)}
        for o in members:
            row[o.given.value if o.given is not None else NONE_GIVEN] += 1
        confusion[category] = row

    with_dx = [o for o in outcomes if o.top1 is not None]
    diagnosis = None
    if with_dx or imaging_excluded:
        judged = [o for o in with_dx if o.judge_rank is not None]
        asked = any(card.judge is not None and card.judge.diagnosis_votes for card in cards.values())
        diagnosis = DiagnosisAccuracy(
            n=len(with_dx), top1=rate(with_dx, lambda o: bool(o.top1)), top3=rate(with_dx, lambda o: bool(o.top3)),
            imaging_excluded=imaging_excluded, judge=asked, judge_n=len(judged),
            judge_top1=rate(judged, lambda o: o.judge_rank == 1) if asked else None,
            judge_top3=rate(judged, lambda o: o.judge_rank is not None and 1 <= o.judge_rank <= 3) if asked else None)
    sizes: dict[str, int] = {}
    for o in outcomes:
        sizes[o.scenario_id] = sizes.get(o.scenario_id, 0) + 1
    return TriageAccuracy(
        encounters=len(outcomes) + n_errors, scored=len(outcomes), errors=n_errors, not_applicable=n_na,
        scenarios=len(sizes), clustered=any(n > 1 for n in sizes.values()),
        exact=rate(outcomes, lambda o: o.given == o.best),
        acceptable=rate(outcomes, lambda o: o.given in o.ok),
        under=rate(outcomes, lambda o: o.under), over=rate(outcomes, lambda o: o.over),
        under_acceptable=rate(outcomes, lambda o: o.under_acceptable),
        over_acceptable=rate(outcomes, lambda o: o.over_acceptable),
        none=rate(outcomes, lambda o: o.given is None),
        unsafe=rate(outcomes, lambda o: o.given is None or o.under_acceptable),
        per_class=per_class, confusion=confusion, diagnosis=diagnosis)
