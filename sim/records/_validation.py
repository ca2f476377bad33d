"""How far a binary failure-mode judge can be trusted, and the failure rate it implies (records).

``JudgeValidity`` is a judge measured against people's labels: the confusion matrix, the true-positive and
true-negative rates with Wilson intervals, and whether the judge is usable at all. ``CorrectedRate`` is a
judged run's failure rate, raw and corrected for the judge's errors (Rogan-Gladen), with a bootstrap CI.
``scorers`` computes them (``scorers.judge_validity``, ``scorers.corrected_failure_rate``).

``JudgeValidationRecord`` is ``<judges DIR>/validation.json`` (``VALIDATION_FILE``), written by ``encsim judges
validate`` beside the judges it validated (atomically, redacted; ``save_judge_validation``) and read when a run
judged by them is summarised (``load_judge_validation``)::

    {"version": 1, "judges": {"under_escalation": {
        "mode": "under_escalation", "judge_hash": "<sha256 of the prompt as validated>",
        "judge_models": ["fixed-judge"], "labelled_run": "/runs/labelled", "split": [0.2, 0.4, 0.4], "seed": 0,
        "validated_at": 1764000000.0, "test": {<JudgeValidity of the test split>},
        "test_labels": [true, false, ...], "test_verdicts": [true, true, ...]}}}

``test_labels`` and ``test_verdicts`` pair up (traces without a verdict left out): the bootstrap of the corrected
rate resamples them. ``FailureRate`` is one failure judge over one run, in ``Summary.failure_rates``: the raw
rate, and the corrected rate with its CI only when the record's ``judge_hash`` is the hash of the prompt the
run's verdicts came from and its models judged the run; otherwise a status says why not.

"Positive" is "the trace shows the failure mode" throughout: TPR is P(judge says true | people say true),
TNR is P(judge says false | people say false).

``JudgeValidation`` is one judge's entry of ``runs/<id>/judge_validation.json``, the list that
``encsim judges validate RUN_DIR`` saves: ``[{"mode", "judge_hash", "edited", "dev": JudgeValidity,
"test": JudgeValidity, "runs": [CorrectedRate and the run's path, ...]}, ...]``; ``load_run_validation``
reads it (the dashboard's disagreements view).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, TypeAdapter

from scenarios import load_model_file
from sim.records._errors import ConfigError
from sim.records._redact import redact_json

USABLE_MARGIN = 0.2
"""A judge with TPR + TNR - 1 at or below this is unusable: the correction divides by it."""
VALIDATION_FILE = "validation.json"
"""The validity of the judges of a judges folder, beside them."""


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
    judge_said: dict[str, bool] = Field(default={}, description="the judge's verdict on each disagreeing trace, as "
                                                                "it was when validated (people may relabel later)")


class CorrectedRate(BaseModel):
    """A judged run's failure rate: raw, and corrected for the judge's measured errors."""

    n: int = Field(description="traces of the run the judge gave a verdict on")
    raw: float | None = Field(description="share of those the judge said show the failure mode")
    corrected: float | None = Field(description="Rogan-Gladen (raw + TNR - 1) / (TPR + TNR - 1), clipped to "
                                                "[0, 1]; None when the judge is unusable")
    ci95: list[float] | None = Field(default=None, description="bootstrap CI resampling the test labels and the "
                                                               "run; None when the judge is unusable")
    unusable_reason: str | None = Field(default=None, description="why there is no corrected number")


class ModeValidation(BaseModel):
    """One failure-mode judge as ``judges validate`` measured it: enough to correct a run it judges."""

    mode: str
    judge_hash: str = Field(description="sha256 of the judge's prompt as validated (FailureJudgeSpec.computed_hash)")
    judge_models: list[str] = Field(default=[], description="the judge models that answered (their names)")
    labelled_run: str = Field(description="the run directory whose people's labels it was measured against")
    split: list[float] = Field(description="train, dev, test shares")
    seed: int = 0
    validated_at: float | None = None
    test: JudgeValidity = Field(description="the test split's confusion matrix, TPR and TNR")
    test_labels: list[bool] = Field(default=[], description="people's labels of the test traces with a verdict")
    test_verdicts: list[bool] = Field(default=[], description="the judge's verdicts on them, in the same order")
    tested_hashes: list[str] = Field(default=[], description="every version (prompt hash) of this judge the test "
                                                             "split has been run on, oldest first: more than one "
                                                             "means the test split was used to choose between "
                                                             "prompts and is no longer held out")


class JudgeValidationRecord(BaseModel):
    """``<judges DIR>/validation.json``: per failure mode, the judge's latest validation."""

    version: int = 1
    judges: dict[str, ModeValidation] = {}


FailureRateStatus = Literal["corrected", "unusable", "not validated", "stale", "no verdicts"]


class FailureRate(BaseModel):
    """One binary failure-mode judge over a run: the raw failure rate and, when it can be trusted, corrected."""

    judged: int = Field(description="encounters the judge gave a verdict on")
    no_verdict: int = Field(default=0, description="encounters it gave none on (judge failed or tied)")
    raw: float | None = Field(default=None, description="share of the judged encounters it said show the mode")
    status: FailureRateStatus = Field(description="corrected; unusable (TPR + TNR - 1 <= 0.2 on the test split); "
                                                  "not validated (no record); stale (the record is of another "
                                                  "version of the judge or other models); no verdicts")
    corrected: float | None = Field(default=None, description="Rogan-Gladen corrected rate (status corrected)")
    ci95: list[float] | None = Field(default=None, description="bootstrap 95% CI resampling the test labels and "
                                                               "the run")
    tpr: float | None = Field(default=None, description="the judge's TPR on the test split, from the record")
    tnr: float | None = Field(default=None, description="the judge's TNR on the test split, from the record")
    note: str = Field(default="", description="why there is no corrected number, or what it rests on")


def load_judge_validation(path: Path) -> JudgeValidationRecord:
    """Read ``validation.json`` of a judges folder; a missing file is an empty record.

    Args:
        path: The file (``<judges DIR>/validation.json``).

    Returns:
        The record.

    Raises:
        ConfigError: The file cannot be read or is not a validation record.
    """
    try:
        return load_model_file(path, JudgeValidationRecord, what="a judges' validation record", error=ConfigError,
                               syntax="json", raise_missing=True,
                               fix="Delete it and run `encsim judges validate` again to rewrite it.")
    except FileNotFoundError:
        return JudgeValidationRecord()


def save_judge_validation(path: Path, record: JudgeValidationRecord) -> None:
    """Write ``record`` to ``path`` redacted and atomically (a temporary file renamed over it).

    Args:
        path: ``<judges DIR>/validation.json``.
        record: What to write.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(redact_json(record.model_dump_json(indent=2)) + "\n", encoding="utf-8")
    tmp.replace(path)


class JudgeValidation(BaseModel):
    """One failure-mode judge measured against people on the dev and test splits (judge_validation.json)."""

    mode: str = Field(description="the failure mode the judge decides")
    judge_hash: str = Field(default="", description="the judge file's hash")
    edited: bool = Field(default=False, description="the judge file was edited since it was built")
    dev: JudgeValidity
    test: JudgeValidity | None = Field(default=None, description="None after `judges validate --dev-only`")
    runs: list[dict[str, Any]] = Field(default=[], description="corrected failure rates of --apply-to runs")


_VALIDATIONS = TypeAdapter(list[JudgeValidation])


def load_run_validation(path: Path) -> list[JudgeValidation]:
    """Read a labelled run's judge_validation.json (the dashboard's disagreements).

    Args:
        path: The run's judge_validation.json.

    Returns:
        One entry per judge, in file order.

    Raises:
        FileNotFoundError: There is no such file (no judge was validated on this run).
        ConfigError: The file cannot be read or is not what ``encsim judges validate`` writes.
    """
    return load_model_file(path, _VALIDATIONS, what="a judge validation", error=ConfigError, syntax="json",
                           raise_missing=True, fix="Run `encsim judges validate RUN_DIR --judge ...` again to rewrite "
                                                   "it, or move the file away.")
