"""Image accuracy, as AgentClinic reports its NEJM image cases: right answers, and the diagnosis after an encounter.

Population, of the run's scenarios:

- **items**: the multiple-choice imaging items (``imaging.answer_type: multiple_choice``); each scored encounter is
  right or wrong (``ImagingComponent.correct``, ``scorers._imaging``). Those asked without their image
  (``image_unavailable``: an imported case whose image is missing) are counted in, and counted apart (``text_only``).
- **encounters**: the encounters (no ``imaging`` block, no ``replay``) with an expected diagnosis in which an image
  can be shown (a fact carries an ``image``) or that carry an ``image_type:`` tag (an imported case whose image is
  missing); the first-listed diagnosis named first (top-1) or within the first three (top-3) of the agent's
  differential, as ``scorers._diagnosis.match_diagnoses`` decided when the encounter was scored.

An encounter that ended in an error is not scored (``errors``), one not applicable to the model (an item with an
image shown to a text-only model) is not counted (``not_applicable``). The figures are over the run ("all") and per
image type, the scenario's ``image_type:<type>`` tags (a scenario with two types counts in both; one with none is in
"(no image type)"). Each is a proportion with a 95% percentile bootstrap CI, 1000 resamples, seed 0, reusing triage
accuracy's (``_triage_accuracy._rate``): scenarios are resampled when some scenario has more than one scored
encounter (K > 1). A run with no such item or encounter has no figures (``None``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from scenarios.schema import Scenario
from scorers._triage_accuracy import _rate
from sim.records import (
    IMAGE_TYPE_TAG,
    TRIAGE_CI_RESAMPLES,
    TRIAGE_CI_SEED,
    UNTYPED,
    ImageAccuracy,
    ScoreCard,
    TypeAccuracy,
)

Key = tuple[str, int]


@dataclass(frozen=True)
class _Scored:
    scenario_id: str
    types: tuple[str, ...]
    item: bool  # a multiple-choice item (else an encounter)
    ok: bool  # item: right; encounter: top-1
    top3: bool = False
    text_only: bool = False


def image_types(scenario: Scenario) -> tuple[str, ...]:
    """The scenario's image types (its ``image_type:<type>`` tags), or ``("(no image type)",)``."""
    found = tuple(t[len(IMAGE_TYPE_TAG):] for t in scenario.tags if t.startswith(IMAGE_TYPE_TAG))
    return found or (UNTYPED,)


def _kind(scenario: Scenario) -> str | None:
    """"item", "encounter" or None (not in the population; see the module docstring)."""
    if scenario.imaging is not None:
        return "item" if scenario.imaging.answer_type == "multiple_choice" else None
    typed = any(t.startswith(IMAGE_TYPE_TAG) for t in scenario.tags)
    shows = any(f.image is not None for f in scenario.information_tree)
    if scenario.replay is None and scenario.expected.diagnoses and (typed or shows):
        return "encounter"
    return None


def image_accuracy(scenarios: Sequence[Scenario], cards: Mapping[Key, ScoreCard], errors: Iterable[Key] = (), *,
                   not_applicable: Iterable[Key] = (), seed: int = TRIAGE_CI_SEED,
                   n_resamples: int = TRIAGE_CI_RESAMPLES) -> ImageAccuracy | None:
    """The run's image accuracy, overall and by image type; ``None`` without items or encounters to count.

    Args:
        scenarios: the run's scenarios.
        cards: scored encounters, (scenario id, k) -> score card.
        errors: encounters that ended in an error (counted apart).
        not_applicable: encounters not shown to the model (counted apart).
        seed: the bootstrap's seed.
        n_resamples: bootstrap resamples.
    """
    kinds = {s.id: (k, s) for s in scenarios if (k := _kind(s)) is not None}
    if not kinds:
        return None
    scored: list[_Scored] = []
    for (sid, _k), card in sorted(cards.items()):
        kind, scenario = kinds.get(sid, (None, None))
        if scenario is None:
            continue
        if kind == "item" and card.imaging is not None and scenario.imaging is not None:
            scored.append(_Scored(sid, image_types(scenario), True, bool(card.imaging.correct),
                                  text_only=not scenario.imaging.images))
        elif kind == "encounter" and card.diagnosis is not None:
            scored.append(_Scored(sid, image_types(scenario), False, bool(card.diagnosis.top1),
                                  top3=bool(card.diagnosis.top3)))
    n_na = sum(1 for sid, _k in set(not_applicable) if sid in kinds)
    n_err = sum(1 for sid, _k in set(errors) if sid in kinds)

    def figures(name: str, rows: list[_Scored]) -> TypeAccuracy:
        items = [r for r in rows if r.item]
        encounters = [r for r in rows if not r.item]
        return TypeAccuracy(
            image_type=name, choice=_rate(items, lambda r: r.ok, seed=seed, n_resamples=n_resamples),
            text_only=sum(r.text_only for r in items),
            top1=_rate(encounters, lambda r: r.ok, seed=seed, n_resamples=n_resamples),
            top3=_rate(encounters, lambda r: r.top3, seed=seed, n_resamples=n_resamples))

    types = sorted({t for r in scored for t in r.types}, key=lambda t: (t == UNTYPED, t.lower()))
    sizes: dict[str, int] = {}
    for r in scored:
        sizes[r.scenario_id] = sizes.get(r.scenario_id, 0) + 1
    return ImageAccuracy(overall=figures("all", scored), by_type=[figures(t, [r for r in scored if t in r.types])
                                                                  for t in types],
                         not_applicable=n_na, errors=n_err, scenarios=len(sizes),
                         clustered=any(n > 1 for n in sizes.values()), resamples=n_resamples, seed=seed)
