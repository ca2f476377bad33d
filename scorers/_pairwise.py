"""Pairwise comparison by judges, and a Bradley-Terry ranking of models.

One comparison puts two transcripts of the same scenario (model A's and model B's) before a judge
``trials`` times in each order, 2N calls per judge, because judges prefer a position. Each call
answers first / second / tie; answers are mapped back to A / B and the majority of all calls that
answered is the comparison's outcome (equal counts, or no answers: a tie).

Bradley-Terry strengths are fitted by the classic minorisation-maximisation iteration (Zermelo /
Hunter 2004) on win counts, a tie counting half a win to each side, with a small prior of one half
win each way between every pair so that a model that never loses keeps a finite strength. Strengths
are reported on a log scale centred at 0, with 95% bootstrap CIs from resampling the comparisons.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel

Outcome = Literal["a", "b", "tie"]
Answer = Literal["first", "second", "tie"]
PRIOR_WINS = 0.5


def unswap(answer: Answer | None, a_first: bool) -> Outcome | None:
    """A judge's positional answer as a win for A or B (None: no answer)."""
    if answer is None:
        return None
    if answer == "tie":
        return "tie"
    return "a" if (answer == "first") == a_first else "b"


def majority_outcome(outcomes: Sequence[Outcome | None]) -> Outcome:
    """The majority of the votes that answered (``None`` votes ignored); equal counts or no votes are a tie."""
    a, b = sum(o == "a" for o in outcomes), sum(o == "b" for o in outcomes)
    return "a" if a > b else "b" if b > a else "tie"


class PairOutcome(BaseModel):
    """One comparison of two models on one (scenario, k): every vote (None: no answer) and the majority outcome."""

    scenario_id: str
    k: int
    model_a: str
    model_b: str
    votes: list[Outcome | None]
    outcome: Outcome


def bradley_terry(models: Sequence[str], outcomes: Sequence[PairOutcome], *, iterations: int = 500,
                  tol: float = 1e-10) -> dict[str, float]:
    """Log-strengths (mean 0) from pairwise outcomes."""
    index = {m: i for i, m in enumerate(models)}
    n = len(models)
    wins = np.zeros((n, n))
    for i, j in itertools.permutations(range(n), 2):
        wins[i, j] = PRIOR_WINS
    for o in outcomes:
        i, j = index[o.model_a], index[o.model_b]
        if o.outcome == "a":
            wins[i, j] += 1
        elif o.outcome == "b":
            wins[j, i] += 1
        else:
            wins[i, j] += 0.5
            wins[j, i] += 0.5
    games = wins + wins.T
    p = np.ones(n)
    for _ in range(iterations):
        denom = np.array([sum(games[i, j] / (p[i] + p[j]) for j in range(n) if j != i) for i in range(n)])
        new = wins.sum(axis=1) / denom
        new /= math.exp(float(np.mean(np.log(new))))
        if float(np.max(np.abs(new - p))) < tol:
            p = new
            break
        p = new
    logs = np.log(p)
    return {m: float(logs[index[m]] - logs.mean()) for m in models}


class Ranking(BaseModel):
    """One model's place in the ranking: Bradley-Terry log-strength, its 95% bootstrap CI, wins and comparisons.

    A tie counts as half a win.
    """

    model: str
    strength: float
    ci95: list[float]
    wins: float
    comparisons: int


def rank_models(models: Sequence[str], outcomes: Sequence[PairOutcome], *, n_resamples: int = 1000,
                seed: int = 0) -> list[Ranking]:
    """Bradley-Terry strengths with percentile bootstrap CIs, strongest first."""
    point = bradley_terry(models, outcomes)
    rng = np.random.default_rng(seed)
    samples: dict[str, list[float]] = {m: [] for m in models}
    if outcomes:
        for _ in range(n_resamples):
            picks = rng.integers(0, len(outcomes), len(outcomes))
            fit = bradley_terry(models, [outcomes[i] for i in picks], iterations=200, tol=1e-8)
            for m in models:
                samples[m].append(fit[m])
    out = []
    for m in models:
        wins = sum(1.0 if (o.outcome == "a" and o.model_a == m) or (o.outcome == "b" and o.model_b == m)
                   else 0.5 if o.outcome == "tie" and m in (o.model_a, o.model_b) else 0.0 for o in outcomes)
        n = sum(m in (o.model_a, o.model_b) for o in outcomes)
        ci = ([float(np.percentile(samples[m], 2.5)), float(np.percentile(samples[m], 97.5))]
              if samples[m] else [point[m], point[m]])
        out.append(Ranking(model=m, strength=point[m], ci95=ci, wins=wins, comparisons=n))
    return sorted(out, key=lambda r: -r.strength)
