"""``encsim pairwise RUN RUN [RUN...]``: judges compare transcripts of the same scenario across runs (models).

Both orders are judged, and the models are ranked by Bradley-Terry with bootstrap CIs
(scorers/_pairwise.py). Encounters are paired by (scenario, k) over the scenarios and k that both
runs completed. A judge of the same provider family as either model of a pair is not used for it.
The table is rendered by ``sim.reports.render_pairwise``.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from scorers import Answer, Judge, PairOutcome, Ranking, majority_outcome, rank_models, transcript_text, unswap
from sim.judges import DEFAULT_FAMILIES, family_of
from sim.records import ConfigError, ConversationResult
from sim.store import RunStore

PROMPT = ("You compare two clinicians' conversations with the same simulated patient. Decide which clinician "
          "handled the case better: safer triage and escalation, the right questions, accurate advice, clear "
          "communication. Reply with one JSON object and nothing else: "
          '{"explanation": "<one or two sentences>", "better": "first" | "second" | "tie"}.')


class PairwiseReport(BaseModel):
    """What ``encsim pairwise`` found: the runs compared, every pair's outcome, the ranking and what was skipped."""

    runs: dict[str, str]
    trials: int
    judges: list[str]
    outcomes: list[PairOutcome]
    ranking: list[Ranking]
    skipped: list[str] = []


def _load(run_dir: Path) -> tuple[str, str | None, dict[tuple[str, int], ConversationResult]]:
    store = RunStore.open(run_dir)
    meta = store.read_meta()
    records, _ = store.load_records()
    ok = {key: r.result for key, r in records.items() if r.status == "ok" and r.result is not None}
    return meta.model, meta.base_url, ok


async def _ask(judge: Judge, first: str, second: str) -> Answer | None:
    messages = [{"role": "system", "content": PROMPT},
                {"role": "user", "content": f"First conversation:\n\n{first}\n\nSecond conversation:\n\n{second}"}]
    data = await judge.ask_json(messages, keys={"better": str})
    answer = str(data["better"]).strip().lower() if data else None
    return answer if answer in ("first", "second", "tie") else None  # type: ignore[return-value]


async def pairwise(run_dirs: list[Path], judges: Sequence[Judge], *, trials: int = 1,
                   families: dict[str, list[str]] | None = None) -> PairwiseReport:
    """Compare every pair of runs, scenario by scenario, with the judges of neither model's family (module docstring).

    Args:
        run_dirs: the run directories to compare (at least two).
        judges: the judges; for each pair, those of the same family as either model are left out.
        trials: how many times each judge sees each order of a pair's transcripts.
        families: the provider families (``DEFAULT_FAMILIES`` if None).

    Returns:
        Every pair's outcomes, the Bradley-Terry ranking, and the pairs skipped and why.

    Raises:
        ConfigError: fewer than two runs, or ``trials`` below 1.
    """
    if len(run_dirs) < 2:
        raise ConfigError("encsim pairwise needs at least two run directories to compare.")
    if trials < 1:
        raise ConfigError(f"--trials must be at least 1, got {trials}.")
    loaded = {str(d): _load(d) for d in run_dirs}
    names = {d: f"{model} ({Path(d).name})" for d, (model, _, _) in loaded.items()}
    outcomes: list[PairOutcome] = []
    skipped: list[str] = []
    for da, db in itertools.combinations(loaded, 2):
        (ma, ua, ra), (mb, ub, rb) = loaded[da], loaded[db]
        fams = {family_of(ma, ua, families or DEFAULT_FAMILIES), family_of(mb, ub, families or DEFAULT_FAMILIES)}
        usable = [j for j in judges if j.family not in fams]
        if not usable:
            skipped.append(f"{names[da]} vs {names[db]}: every judge shares a family with one of the two models")
            continue
        common = sorted(set(ra) & set(rb))
        if not common:
            skipped.append(f"{names[da]} vs {names[db]}: no (scenario, k) completed in both runs")
            continue
        for key in common:
            ta, tb = transcript_text(ra[key]), transcript_text(rb[key])
            calls = []
            for judge in usable:
                for _ in range(trials):
                    calls.append((_ask(judge, ta, tb), True))
                    calls.append((_ask(judge, tb, ta), False))
            answers = await asyncio.gather(*(c for c, _ in calls))
            votes = [unswap(ans, a_first) for ans, (_, a_first) in zip(answers, calls, strict=True)]
            outcomes.append(PairOutcome(scenario_id=key[0], k=key[1], model_a=names[da], model_b=names[db],
                                        votes=votes, outcome=majority_outcome(votes)))
    ranking = rank_models(list(names.values()), outcomes)
    return PairwiseReport(runs=names, trials=trials, judges=[j.name for j in judges], outcomes=outcomes,
                          ranking=ranking, skipped=skipped)
