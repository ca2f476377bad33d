"""Typed outputs of the scoring core: the per-encounter ScoreCard and the run Summary."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from scorers._judge import Disagreement, JudgeCard, JudgeSummary
from scorers._profiles import Combined
from scorers.evaluators._base import EvaluatorResult


class TriageComponent(BaseModel):
    expected: int | None
    given: int | None
    error: float | None = Field(description="asymmetric error incl. context multipliers; None if unparsed")
    contexts: list[str] = []
    score: float
    reason: str | None = None


class InformationComponent(BaseModel):
    critical_revealed: list[str]
    critical_missed: list[str]
    revealed: int
    total: int
    red_flags_elicited: list[str]
    red_flags_missed: list[str]
    score: float


class EscalationComponent(BaseModel):
    expected: str | None
    given: str | None
    under_escalated: bool
    score: float
    reason: str | None = None


class ImagingComponent(BaseModel):
    """Correctness of a standalone imaging item's answer (see scorers/_imaging.py)."""

    answer_type: str
    score: float
    choice: str | None = None
    correct: bool | None = None
    expected: list[str] = []
    given: list[str] = []
    matched: list[str] = []
    missed: list[str] = []
    extra: list[str] = []
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    escalation: str | None = None
    critical_missed: list[str] = []


class EfficiencyComponent(BaseModel):
    agent_turns: int
    turn_limit: int
    score: float


class DiagnosisMatch(BaseModel):
    """Informational (not in the composite): where the expected top diagnosis appears in the list."""

    top1: bool
    top3: bool
    matched: list[str] = []


class ScoreCard(BaseModel):
    """One encounter's scores. A component the scenario gives no target for (no expected triage
    level, no information tree, a one-reply replay) is ``None`` and the composite is the weighted
    mean of the components that apply; ``composite`` is ``None`` when none applies (a rubric-only
    item, which only the judge path can score)."""

    triage: TriageComponent | None
    information: InformationComponent | None
    escalation: EscalationComponent | None
    efficiency: EfficiencyComponent | None
    diagnosis: DiagnosisMatch | None
    imaging: ImagingComponent | None = None
    composite: float | None
    passed: bool
    safety_failures: list[str] = []
    notes: list[str] = []
    judge: JudgeCard | None = None
    evaluators: list[EvaluatorResult] = []
    combined: Combined | None = Field(default=None, description="the profile's combination and status")


class ScenarioSummary(BaseModel):
    id: str
    suite: str
    k: int = Field(description="scored encounters")
    errors: int = 0
    mean: float | None
    worst: float | None
    std: float | None
    worst_at_k: dict[str, float] = Field(default={}, description="k -> expected minimum over k-subsets")
    pass_hat_k: dict[str, float] = Field(default={}, description="k -> C(c,k)/C(n,k)")
    pass_count: int = 0
    ci95: list[float] | None = None
    escalation_safety: float | None = None
    triage_error_mean: float | None = None
    worst_k_index: int | None = Field(default=None, description="k of the worst encounter")
    combined_mean: float | None = None
    status_counts: dict[str, int] = {}


class EvaluatorSummary(BaseModel):
    applicable: int
    mean: float | None
    failed: int
    findings: dict[str, int] = Field(default={}, description="severity -> count")


class SafetyGate(BaseModel):
    triggered: bool
    cap: float
    threshold: float
    scenarios: list[str] = []
    reasons: dict[str, str] = {}


class SuiteSummary(BaseModel):
    suite: str
    weight: float
    scenarios: int
    mean: float | None


class Summary(BaseModel):
    aggregate: float | None
    aggregate_uncapped: float | None
    safety_gate: SafetyGate
    qwk: float | None
    qwk_pairs: int
    pass_threshold: float
    scenarios: list[ScenarioSummary]
    suites: list[SuiteSummary]
    completed: int
    errors: int
    expected_total: int | None = None
    not_applicable: list[str] = Field(default=[], description="scenarios none of whose encounters applied to the "
                                                              "model (imaging items for a text-only model)")
    components: dict[str, float | None] = {}
    judge: JudgeSummary | None = None
    profile: str | None = None
    combined: float | None = Field(default=None, description="suite-weighted mean of scenarios' combined means")
    status_counts: dict[str, int] = Field(default={}, description="encounters per pass / warn / fail")
    evaluators: dict[str, EvaluatorSummary] = {}
    voice: dict[str, float] | None = Field(default=None, description="voice runs: WER per side, ASR-missed facts, "
                                                                      "stage times, audio seconds")
    live: dict[str, Any] | None = Field(default=None, description="live calls: voice-to-voice latency p50/p95 per "
                                                                 "side, interruptions, overlaps, long silences")
    disagreements: list[Disagreement] = Field(default=[], description="encounters where the two paths differ")
    patient: dict[str, Any] | None = Field(default=None, description="how the patient understood the agent: facts "
                                                                     "revealed per layer (trigger, intent, model), "
                                                                     "assessment forms, patient-model warnings")
