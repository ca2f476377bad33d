"""The rubric types of a scenario: rubric criteria, generated rubric files and their audit, trust criteria.

HealthBench-style criteria, ``encsim rubrics generate``'s files, and the ClinicianTrustScorer criteria; split from
``scenarios.schema``, which re-exports them.
"""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic import Field, StrictFloat, StrictInt, field_validator

from scenarios._strict import _Strict

RUBRIC_AXES = ("accuracy", "completeness", "communication_quality", "context_awareness", "instruction_following",
               "safety", "emergency_referrals", "hedging")


class RubricCriterion(_Strict):
    """One HealthBench-style rubric line: a judge decides whether the agent's reply meets it.

    Negative points mark undesirable behaviour (meeting it costs points).
    """

    criterion: str = Field(min_length=1)
    points: StrictFloat = Field(ge=-10, le=10, allow_inf_nan=False)
    axis: str | None = Field(default=None, description="e.g. accuracy, completeness, safety")
    tags: list[str] = []
    source: str | None = Field(default=None, description="what a generated criterion comes from: fact:<id>, "
                                                         "red_flag:<id>, escalation, diagnosis:<name>, "
                                                         "safety_netting, caution:<kind>, intent:<name>")

    @field_validator("points")
    @classmethod
    def _non_zero(cls, v: float) -> float:
        if v == 0:
            raise ValueError("points must be non-zero (positive for desirable, negative for undesirable behaviour)")
        return v


class DroppedCriterion(_Strict):
    """A criterion a model proposed that the model track's validation dropped, and why."""

    criterion: str = Field(default="", description="its text, as the model wrote it (may be empty)")
    source: str | None = Field(default=None, description="the source it cited, if any")
    reason: str = Field(min_length=1, description="e.g. 'hallucinated source: no fact chest_xray'")


class RubricAudit(_Strict):
    """The model track's audit (gap analysis) of one generated rubric, against the deterministic track.

    Each critical fact, red flag, ``escalation`` and ``escalation:under`` criterion of the deterministic track is
    either ``covered`` by a model criterion citing the same source (with the same sign of points) or ``added``
    (the deterministic criterion, unchanged, source included). ``dropped`` lists the model's criteria that failed
    validation (a malformed item or a source the scenario does not have).
    """

    covered: list[str] = Field(default=[], description="deterministic sources the model's criteria cover")
    added: list[str] = Field(default=[], description="sources whose deterministic criterion the audit added")
    dropped: list[DroppedCriterion] = []


class RubricFile(_Strict):
    """A rubric file written by ``encsim rubrics generate``: criteria for one scenario, and where they come from.

    A scenario uses it with ``rubrics_from: <file>``. ``hash`` is ``rubric_hash(rubrics)`` when written; a file
    edited by hand keeps working (the loader checks the scenario id, not the hash), and the hash then tells the
    edited file from the generated one. ``audit`` is set by the model track (``--judge``) only.
    """

    generated_by: str = Field(min_length=1, description="the generator and its version (and the judge, if any)")
    scenario_id: str = Field(min_length=1)
    scenario_sha256: str | None = Field(default=None, description="the scenario file the rubric was generated from")
    hash: str = Field(min_length=1, description="sha256 of the criteria as generated")
    rubrics: list[RubricCriterion] = Field(min_length=1)
    audit: RubricAudit | None = Field(default=None, description="the model track's gap analysis (None: "
                                                                "deterministic track)")


def rubric_hash(rubrics: list[RubricCriterion]) -> str:
    """The sha256 of a list of criteria (their canonical JSON), for ``RubricFile.hash``."""
    canonical = json.dumps([r.model_dump(mode="json") for r in rubrics], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


TrustCategory = Literal["clinical_accuracy", "completeness", "safety_awareness", "communication"]


class TrustCriterion(_Strict):
    """A ClinicianTrustScorer criterion, rated 0-3 by the judge against its anchors."""

    category: TrustCategory
    criterion: str = Field(min_length=1)
    anchors: dict[StrictInt, str] | None = Field(default=None, description="0..3 -> what that level looks like; "
                                                                      "the category's default anchors if omitted")

    @field_validator("anchors")
    @classmethod
    def _levels(cls, v: dict[int, str] | None) -> dict[int, str] | None:
        if v is not None and sorted(v) != [0, 1, 2, 3]:
            raise ValueError("anchors must describe exactly the levels 0, 1, 2 and 3")
        return v
