"""How far a binary failure-mode judge can be trusted, and the failure rate it implies (records).

``JudgeValidity`` is a judge measured against people's labels: the confusion matrix, the true-positive and
true-negative rates with Wilson intervals, and whether the judge is usable at all. ``CorrectedRate`` is a
judged run's failure rate, raw and corrected for the judge's errors (Rogan-Gladen), with a bootstrap CI.
``scorers`` computes them (``scorers.judge_validity``, ``scorers.corrected_failure_rate``).

"Positive" is "the trace shows the failure mode" throughout: TPR is P(judge says true | people say true),
TNR is P(judge says false | people say false).

``JudgeValidation`` is one judge's entry of ``runs/<id>/judge_validation.json``, the list that
``encsim judges validate RUN_DIR`` saves: ``[{"mode", "judge_hash", "edited", "dev": JudgeValidity,
"test": JudgeValidity, "runs": [CorrectedRate and the run's path, ...]}, ...]``; ``load_judge_validation``
reads it (the dashboard's disagreements view).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from sim.records._errors import ConfigError

USABLE_MARGIN = 0.2
"""A judge with TPR + TNR - 1 at or below this is unusable: the correction divides by it."""


class JudgeValidity(BaseModel):
    """One judge against people's labels on one split (dev or test)."""

    split: str = Field(description="which labelled traces: dev or test")
    tp: int = Field(description="people true, judge true")
    fn: int = Field(description="people true, judge false")
    tn: int = Field(description="people false, judge false")
    fp: int = Field(description="people false, judge true")
    no_verdict: int = Field(default=0, description="labelled traces the judge gave no verdict on (left out)")
    tpr: float | None = Field(description="true-positive rate, None without positives")
    tpr_ci95: list[float] | None = Field(default=None, description="Wilson 95% interval of the TPR")
    tnr: float | None = Field(description="true-negative rate, None without negatives")
    tnr_ci95: list[float] | None = Field(default=None, description="Wilson 95% interval of the TNR")
    youden: float | None = Field(description="TPR + TNR - 1, what the correction divides by")
    usable: bool = Field(description=f"youden > {USABLE_MARGIN}: the corrected rate is meaningful")
    disagreements: list[str] = Field(default=[], description="trace ids where judge and people disagree")


class CorrectedRate(BaseModel):
    """A judged run's failure rate: raw, and corrected for the judge's measured errors."""

    n: int = Field(description="traces of the run the judge gave a verdict on")
    raw: float | None = Field(description="share of those the judge said show the failure mode")
    corrected: float | None = Field(description="Rogan-Gladen (raw + TNR - 1) / (TPR + TNR - 1), clipped to "
                                                "[0, 1]; None when the judge is unusable")
    ci95: list[float] | None = Field(default=None, description="bootstrap CI resampling the test labels and the "
                                                               "run; None when the judge is unusable")
    unusable_reason: str | None = Field(default=None, description="why there is no corrected number")


class JudgeValidation(BaseModel):
    """One failure-mode judge measured against people on the dev and test splits (judge_validation.json)."""

    mode: str = Field(description="the failure mode the judge decides")
    judge_hash: str = Field(default="", description="the judge file's hash")
    edited: bool = Field(default=False, description="the judge file was edited since it was built")
    dev: JudgeValidity
    test: JudgeValidity
    runs: list[dict[str, Any]] = Field(default=[], description="corrected failure rates of --apply-to runs")


_VALIDATIONS = TypeAdapter(list[JudgeValidation])


def load_judge_validation(path: Path) -> list[JudgeValidation]:
    """Read judge_validation.json.

    Args:
        path: The run's judge_validation.json.

    Returns:
        One entry per judge, in file order.

    Raises:
        FileNotFoundError: There is no such file (no judge was validated on this run).
        ConfigError: The file cannot be read or is not what ``encsim judges validate`` writes.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"{path}: cannot read the judge validation ({reason}). Run `encsim judges validate "
                          "RUN_DIR --judge ...` again to rewrite it.") from None
    try:
        return _VALIDATIONS.validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "the file"
        what = "not valid JSON" if first.get("type") == "json_invalid" else f"not a judge validation at {where}"
        raise ConfigError(f"{path}: {what} ({str(first.get('msg', 'invalid'))[:120]}). Run `encsim judges "
                          "validate RUN_DIR --judge ...` again to rewrite it, or move the file away.") from None
