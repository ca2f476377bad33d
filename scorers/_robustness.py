"""Persona robustness of a sweep: how a model's score holds up when the same scenarios are told by harder patients.

For every scenario that a persona changes (``sim.records.persona_varies``) and every persona of the sweep, the
*cell* is that scenario's encounters under that persona; its score is the mean composite with each errored
encounter counted as 0 (as the aggregate counts them). From the cells:

- per scenario: each persona's mean, the mean across personas (the plain mean of the persona means), the worst
  persona (lowest mean) and the **drop** = the default persona's mean minus the worst persona's (0 when the
  default is itself the worst; None when the sweep has no ``default``); each persona's own drop from default too;
- overall: the same over the scenarios, a persona's overall mean being the plain mean of its scenario means.

CIs are percentile bootstrap 95% intervals: each resample draws, within every cell, as many encounters as it
has, with replacement (``DEFAULT_RESAMPLES`` times, seeded: deterministic), and every statistic above is
recomputed from the resampled cell means. Scenarios are not resampled: the CIs say what K runs leave uncertain
about these scenarios.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np

from scenarios.personas import DEFAULT_PERSONA
from scenarios.schema import Scenario
from sim.records import PersonaRobustness, PersonaScore, RobustnessRow, ScoreCard, persona_varies

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
OVERALL = "overall"

Key = tuple[str, int]


def _ci(draws: np.ndarray) -> list[float] | None:
    """The 2.5% and 97.5% quantiles of a statistic's resampled values (NaN draws left out)."""
    finite = draws[~np.isnan(draws)]
    if finite.size == 0:
        return None
    low, high = np.quantile(finite, [0.025, 0.975])
    return [float(low), float(high)]


def _row(name: str, personas: list[str], points: np.ndarray, draws: np.ndarray, counts: list[tuple[int, int]],
         default: int | None) -> RobustnessRow:
    """One row from the persona means (``points``: one per persona, NaN where a cell is empty) and their draws.

    Args:
        name: The scenario id, or ``overall``.
        personas: The sweep's personas, in order.
        points: The persona means.
        draws: Resampled persona means, shape (resamples, personas).
        counts: (scored, errors) per persona.
        default: The index of the default persona in ``personas``, or None.
    """
    present = ~np.isnan(points)
    scores = []
    for i, persona in enumerate(personas):
        drop = drop_ci = None
        if default is not None and present[i] and present[default]:
            drop = float(points[default] - points[i])
            drop_ci = _ci(draws[:, default] - draws[:, i])
        scores.append(PersonaScore(persona=persona, n=counts[i][0], errors=counts[i][1],
                                   mean=float(points[i]) if present[i] else None,
                                   ci95=_ci(draws[:, i]) if present[i] else None, drop=drop, drop_ci95=drop_ci))
    if not present.any():
        return RobustnessRow(id=name, personas=scores, mean=None)
    cols = np.flatnonzero(present)
    sub = draws[:, cols]
    worst_col = int(cols[int(np.argmin(points[cols]))])
    row = RobustnessRow(id=name, personas=scores, mean=float(points[cols].mean()), mean_ci95=_ci(sub.mean(axis=1)),
                        worst_persona=personas[worst_col], worst=float(points[worst_col]),
                        worst_ci95=_ci(sub.min(axis=1)))
    if default is not None and present[default]:
        row.drop = float(points[default] - points[worst_col])
        row.drop_ci95 = _ci(draws[:, default] - sub.min(axis=1))
    return row


def persona_robustness(scenarios: Sequence[Scenario], cards: Mapping[Key, ScoreCard], errors: Mapping[Key, object],
                       personas_of: Mapping[Key, str], sweep: Sequence[str], *,
                       resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> PersonaRobustness | None:
    """The robustness block of a persona sweep (module docstring); None for a run under fewer than two personas.

    Args:
        scenarios: The run's scenarios.
        cards: The score card of every scored encounter, by (scenario id, k).
        errors: Every encounter that ended in an error, by (scenario id, k) (the value is not used).
        personas_of: The persona of every encounter, by (scenario id, k) (missing: ``default``).
        sweep: The personas of the run's plan, in order (``RunMeta.personas``).
        resamples: Bootstrap resamples.
        seed: Seeds the bootstrap.

    Returns:
        The block, or None.
    """
    names = list(dict.fromkeys(sweep))
    if len(names) < 2:
        return None
    varied = [s for s in scenarios if persona_varies(s)]
    cells: dict[tuple[str, str], list[float]] = defaultdict(list)
    errs: dict[tuple[str, str], int] = defaultdict(int)
    for key, card in cards.items():
        if card.composite is not None:
            cells[(key[0], personas_of.get(key, DEFAULT_PERSONA))].append(float(card.composite))
    for key in errors:
        errs[(key[0], personas_of.get(key, DEFAULT_PERSONA))] += 1
    default = names.index(DEFAULT_PERSONA) if DEFAULT_PERSONA in names else None
    rng = np.random.default_rng(seed)
    rows: list[RobustnessRow] = []
    all_points, all_draws = [], []
    for s in varied:
        points = np.full(len(names), np.nan)
        draws = np.full((resamples, len(names)), np.nan)
        counts = []
        for i, persona in enumerate(names):
            values = np.asarray(cells.get((s.id, persona), []) + [0.0] * errs.get((s.id, persona), 0))
            counts.append((len(cells.get((s.id, persona), [])), errs.get((s.id, persona), 0)))
            if values.size == 0:
                continue
            points[i] = values.mean()
            draws[:, i] = values[rng.integers(0, values.size, size=(resamples, values.size))].mean(axis=1)
        if np.isnan(points).all():
            continue  # nothing scored (a rubric-only scenario): no composite to compare
        rows.append(_row(s.id, names, points, draws, counts, default))
        all_points.append(points)
        all_draws.append(draws)
    if not rows:
        overall = RobustnessRow(id=OVERALL, personas=[PersonaScore(persona=p, n=0, mean=None) for p in names],
                                mean=None)
    else:
        stacked_points = np.vstack(all_points)  # (scenarios, personas)
        stacked_draws = np.stack(all_draws)  # (scenarios, resamples, personas)
        with warnings.catch_warnings():  # a persona with no cell in any scenario is NaN on purpose
            warnings.simplefilter("ignore", category=RuntimeWarning)
            points = np.nanmean(stacked_points, axis=0)
            draws = np.nanmean(stacked_draws, axis=0)
        counts = [(sum(r.personas[i].n for r in rows), sum(r.personas[i].errors for r in rows))
                  for i in range(len(names))]
        overall = _row(OVERALL, names, points, draws, counts, default)
    return PersonaRobustness(personas=names, default=DEFAULT_PERSONA, has_default=default is not None,
                             overall=overall, scenarios=rows,
                             not_varied=[s.id for s in scenarios if not persona_varies(s)],
                             resamples=resamples, seed=seed)

