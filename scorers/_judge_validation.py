"""Validating a binary failure-mode judge against people, and correcting the failure rate it reports.

The workflow (issue 16): people label traces pass/fail per failure mode; the labelled traces are split
deterministically into train (few-shot examples for the judge's prompt), dev (iterating on the prompt) and
test (touched once). On dev and test the judge is measured: TPR and TNR with Wilson intervals
(``judge_validity``). On an unlabelled run, the judge's raw failure rate is biased by its errors; the
Rogan-Gladen estimator corrects it::

    theta = (p_obs + TNR - 1) / (TPR + TNR - 1), clipped to [0, 1]

with a percentile bootstrap CI that resamples the test labels (so TPR and TNR are re-estimated) and the
run's verdicts (``corrected_failure_rate``). When TPR + TNR - 1 <= 0.2 the judge barely beats chance, the
division amplifies noise without bound, and no number is given: the judge is unusable.

In a run's own summary (``failure_rate``): per failure judge, the raw rate over the encounters with a
verdict, and the corrected rate with its CI only when the judges folder's validation record
(``sim.records.JudgeValidationRecord``) is of the very prompt the run's verdicts came from (its hash) and of
the judge models that gave them; "stale" otherwise (the judge was edited, or other models judged), "not
validated" without a record, "unusable" when TPR + TNR - 1 <= 0.2. The bootstrap is seeded
(``FAILURE_RATE_SEED``) so regenerating a report gives the same CI.

The run's side of the bootstrap draws the number of failing verdicts from a binomial with the run's raw rate:
the same distribution as redrawing the verdicts with replacement, in O(resamples) memory for a run of any size.

Labels and verdicts are booleans: True = "the trace shows the failure mode". A verdict of None (the judge
failed or answered off-format) is left out and counted.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Collection, Mapping, Sequence

import numpy as np

from sim.records import USABLE_MARGIN, CorrectedRate, FailureRate, JudgeValidity, ModeValidation

DEFAULT_SPLIT = (0.2, 0.4, 0.4)  # train, dev, test
SPLITS = ("train", "dev", "test")
Z95 = 1.959963984540054
FAILURE_RATE_SEED = 0  # the bootstrap of a run's corrected failure rate: the same CI every time it is summarised
FAILURE_RATE_RESAMPLES = 2000


def wilson_ci(successes: int, n: int, *, z: float = Z95) -> list[float] | None:
    """The Wilson score interval of a proportion.

    Args:
        successes: How many of the ``n`` trials succeeded.
        n: Trials.
        z: The normal quantile (1.96 for 95%).

    Returns:
        ``[low, high]``, or None when ``n`` is 0.
    """
    if n <= 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return [max(0.0, centre - half), min(1.0, centre + half)]


def split_of(trace_id: str, *, fractions: tuple[float, float, float] = DEFAULT_SPLIT, seed: int = 0) -> str:
    """The split (train, dev or test) a labelled trace belongs to: deterministic, independent of order.

    The trace id is hashed with the seed to a point in [0, 1), which the cumulative fractions cut.

    Args:
        trace_id: ``<scenario_id>:<k>``, or any stable id.
        fractions: The train, dev and test shares (they must sum to 1).
        seed: Another seed gives another split.

    Returns:
        "train", "dev" or "test".

    Raises:
        ValueError: The fractions are not three non-negative numbers summing to 1.
    """
    if len(fractions) != 3 or any(f < 0 for f in fractions) or not math.isclose(sum(fractions), 1.0):
        raise ValueError(f"split fractions {fractions!r} must be three non-negative numbers summing to 1")
    digest = hashlib.sha256(f"{seed}:{trace_id}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    edge = 0.0
    for name, share in zip(SPLITS, fractions, strict=True):
        edge += share
        if u < edge:
            return name
    return SPLITS[-1]


def judge_validity(labels: Mapping[str, bool], verdicts: Mapping[str, bool | None], *, split: str) -> JudgeValidity:
    """Measure a judge against people on the traces of one split.

    Args:
        labels: Trace id -> the people's label (True: the trace shows the failure mode).
        verdicts: Trace id -> the judge's verdict (None: no verdict). Traces without a verdict are counted.
        split: The split's name, recorded.

    Returns:
        The confusion matrix, TPR and TNR with Wilson intervals, Youden's J and whether the judge is usable.
    """
    tp = fn = tn = fp = missing = 0
    disagree = []
    for trace, truth in sorted(labels.items()):
        said = verdicts.get(trace)
        if said is None:
            missing += 1
            continue
        if truth and said:
            tp += 1
        elif truth:
            fn += 1
        elif said:
            fp += 1
        else:
            tn += 1
        if said != truth:
            disagree.append(trace)
    tpr = tp / (tp + fn) if tp + fn else None
    tnr = tn / (tn + fp) if tn + fp else None
    youden = tpr + tnr - 1 if tpr is not None and tnr is not None else None
    return JudgeValidity(split=split, tp=tp, fn=fn, tn=tn, fp=fp, no_verdict=missing, tpr=tpr,
                         tpr_ci95=wilson_ci(tp, tp + fn), tnr=tnr, tnr_ci95=wilson_ci(tn, tn + fp), youden=youden,
                         usable=youden is not None and youden > USABLE_MARGIN, disagreements=disagree,
                         judge_said={t: bool(verdicts[t]) for t in disagree})


def rogan_gladen(p_obs: float, tpr: float, tnr: float) -> float | None:
    """The corrected prevalence ``(p_obs + tnr - 1) / (tpr + tnr - 1)`` clipped to [0, 1].

    Args:
        p_obs: The judge's raw failure rate on the run.
        tpr: The judge's true-positive rate.
        tnr: The judge's true-negative rate.

    Returns:
        The corrected rate, or None when ``tpr + tnr - 1 <= USABLE_MARGIN`` (the judge is unusable).
    """
    youden = tpr + tnr - 1
    if youden <= USABLE_MARGIN:
        return None
    return min(1.0, max(0.0, (p_obs + tnr - 1) / youden))


def corrected_failure_rate(test_labels: Sequence[bool], test_verdicts: Sequence[bool], run_verdicts: Sequence[bool],
                           *, n_resamples: int = 2000, seed: int = 0) -> CorrectedRate:
    """The run's failure rate as the judge reports it, and corrected for the judge's errors on the test split.

    Args:
        test_labels: The people's labels of the test split's traces (True: shows the failure mode).
        test_verdicts: The judge's verdicts on the same traces, in the same order (no-verdicts left out).
        run_verdicts: The judge's verdicts on the run to correct (no-verdicts left out).
        n_resamples: Bootstrap resamples; each redraws the test pairs and the run's verdicts with replacement
            (the run's as a binomial count: the same distribution).
        seed: Seeds the bootstrap.

    Returns:
        The raw and corrected rates and the corrected rate's 95% percentile CI; no corrected number when the
        judge's TPR + TNR - 1 is at or below ``USABLE_MARGIN`` on the test split. Resamples in which the judge
        would be unusable (or the test draw lacks passing or failing traces) have no corrected rate and are
        left out of the CI.

    Raises:
        ValueError: The test labels and verdicts do not pair up.
    """
    labels = np.asarray(test_labels, dtype=bool)
    said = np.asarray(test_verdicts, dtype=bool)
    run = np.asarray(run_verdicts, dtype=bool)
    if labels.shape != said.shape:
        raise ValueError("test_labels and test_verdicts must pair up, one verdict per label")
    raw = float(run.mean()) if run.size else None
    pos, neg = labels.sum(), (~labels).sum()
    if raw is None or pos == 0 or neg == 0:
        why = "no judged traces in the run" if raw is None else "the test split needs both passing and failing traces"
        return CorrectedRate(n=int(run.size), raw=raw, corrected=None, unusable_reason=why)
    tpr = float((said & labels).sum() / pos)
    tnr = float((~said & ~labels).sum() / neg)
    corrected = rogan_gladen(raw, tpr, tnr)
    if corrected is None:
        return CorrectedRate(n=int(run.size), raw=raw, corrected=None,
                             unusable_reason=f"judge unusable: TPR + TNR - 1 = {tpr + tnr - 1:.2f} <= "
                                             f"{USABLE_MARGIN} on the test split")
    rng = np.random.default_rng(seed)
    t_idx = rng.integers(0, labels.size, size=(n_resamples, labels.size))
    lab, sai = labels[t_idx], said[t_idx]
    n_pos, n_neg = lab.sum(axis=1), (~lab).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        b_tpr = (sai & lab).sum(axis=1) / n_pos
        b_tnr = (~sai & ~lab).sum(axis=1) / n_neg
        b_obs = rng.binomial(run.size, raw, size=n_resamples) / run.size
        youden = b_tpr + b_tnr - 1
        theta = np.clip((b_obs + b_tnr - 1) / youden, 0.0, 1.0)
    ok = (n_pos > 0) & (n_neg > 0) & (youden > USABLE_MARGIN)
    ci = [float(v) for v in np.quantile(theta[ok], [0.025, 0.975])] if ok.any() else None
    return CorrectedRate(n=int(run.size), raw=raw, corrected=corrected, ci95=ci)


def failure_rate(verdicts: Sequence[bool | None], record: ModeValidation | None, *,
                 judge_hashes: Collection[str], judge_models: Collection[str],
                 n_resamples: int = FAILURE_RATE_RESAMPLES, seed: int = FAILURE_RATE_SEED) -> FailureRate:
    """One failure judge over a run: the raw rate, and the corrected rate when the validation applies.

    Args:
        verdicts: The judge's verdict on each judged encounter of the run (None: no verdict).
        record: The judge's validation (``<judges DIR>/validation.json``), or None when it has none.
        judge_hashes: The prompt hashes the run's verdicts came from (one, unless the judge changed mid-run).
        judge_models: The judge models that gave the run's verdicts.
        n_resamples: Bootstrap resamples of the corrected rate's CI.
        seed: Seeds the bootstrap.

    Returns:
        The ``FailureRate``; its ``status`` says whether the corrected number is there and, if not, why.
    """
    said = [v for v in verdicts if v is not None]
    base = FailureRate(judged=len(said), no_verdict=len(verdicts) - len(said),
                       raw=sum(said) / len(said) if said else None, status="not validated")
    if record is None:
        return base.model_copy(update={
            "note": "no validation of this judge in its folder's validation.json: run `encsim judges validate "
                    "LABELLED_RUN --judges DIR --judge ...` to correct the rate"})
    base = base.model_copy(update={"tpr": record.test.tpr, "tnr": record.test.tnr})
    hashes = sorted(set(judge_hashes))
    if hashes != [record.judge_hash]:
        seen = ", ".join(h[:12] for h in hashes) or "unknown"
        return base.model_copy(update={
            "status": "stale", "note": f"the judge was validated as version {record.judge_hash[:12]} but this run's "
                                       f"verdicts came from version {seen} (edited since): validate it again"})
    models, validated = sorted(set(judge_models)), sorted(set(record.judge_models))
    if validated and models != validated:
        return base.model_copy(update={
            "status": "stale", "note": f"validated with judge model(s) {', '.join(validated)} but this run was "
                                       f"judged by {', '.join(models) or 'none'}: validate it with these"})
    if not said:
        return base.model_copy(update={"status": "no verdicts", "note": "the judge gave no verdict on this run"})
    rate = corrected_failure_rate(record.test_labels, record.test_verdicts, said, n_resamples=n_resamples,
                                  seed=seed)
    if rate.corrected is None:
        return base.model_copy(update={"status": "unusable", "note": rate.unusable_reason or "judge unusable"})
    test = record.test
    return base.model_copy(update={
        "status": "corrected", "corrected": rate.corrected, "ci95": rate.ci95,
        "note": f"validated on {test.tp + test.fn + test.tn + test.fp} test trace(s) of {record.labelled_run}"})
