"""Typed outputs of the scoring core: the per-encounter ScoreCard and the run Summary."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from scorers._judge import Disagreement, JudgeCard, JudgeSummary
from scorers._profiles import Combined
from scorers._triage_accuracy import TriageAccuracy
from scorers.evaluators._base import EvaluatorResult

Verdict = Literal["best", "acceptable", "over", "under"]


class TriageComponent(BaseModel):
    expected: int | None
    given: int | None
    error: float | None = Field(description="asymmetric error incl. context multipliers; None if unparsed")
    contexts: list[str] = []
    score: float
    reason: str | None = None
    acceptable: list[int] = Field(default=[], description="the acceptable levels (the best label alone when the "
                                                          "scenario gives no set)")
    verdict: Verdict | None = Field(default=None, description="best | acceptable (inside the set, not the best) | "
                                                              "over | under (outside the set); None if unparsed")

    def describe(self) -> str:
        """"given 3: acceptable (best ESI 2; acceptable ESI 2-3)" -- acceptable shown apart from best."""
        levels = self.acceptable or ([self.expected] if self.expected is not None else [])
        span = (f"ESI {levels[0]}" if len(levels) == 1 else f"ESI {levels[0]}-{levels[-1]}") if levels else "none"
        target = f"best ESI {self.expected}" + (f"; acceptable {span}" if len(levels) > 1 else "")
        given = "none" if self.given is None else f"ESI {self.given}"
        verdict = {"best": "best", "acceptable": "acceptable, not best", "over": "over-triage",
                   "under": "under-triage"}.get(self.verdict or "", "unread")
        return f"given {given}: {verdict} ({target})"


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
    acceptable: list[str] = Field(default=[], description="the acceptable categories, most urgent first")
    verdict: Verdict | None = Field(default=None, description="best | acceptable | over | under; None if none given")
    disposition: str | None = Field(default=None, description="the disposition the assessment gave, if any")

    def describe(self) -> str:
        """"given urgent: acceptable, not best (best emergency; acceptable emergency, urgent); means crisis_team"."""
        ok = self.acceptable or ([self.expected] if self.expected is not None else [])
        target = f"best {self.expected}" + (f"; acceptable {', '.join(ok)}" if len(ok) > 1 else "")
        verdict = {"best": "best", "acceptable": "acceptable, not best", "over": "over-escalation",
                   "under": "under-escalation"}.get(self.verdict or "", "none given")
        means = f"; means {self.disposition}" if self.disposition else ""
        return f"given {self.given or 'none'}: {verdict} ({target}){means}"


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
    mean: float | None = Field(description="mean composite of the scored encounters (errors left out)")
    mean_with_errors: float | None = Field(default=None, description="errored encounters counted as 0: what the "
                                                                      "aggregate uses")
    worst: float | None
    std: float | None
    worst_at_k: dict[str, float] = Field(default={}, description="k -> expected minimum over k-subsets, for k = 1..20 "
                                                                  "and k = n")
    pass_hat_k: dict[str, float] = Field(default={}, description="k -> C(c,k)/C(n,k), for k = 1..20 and k = n")
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
    errors: int = Field(default=0, description="encounters on which the evaluator raised (left unscored by it)")


class Headline(BaseModel):
    """The run's one number: the aggregate when the scenarios have deterministic targets; the HealthBench
    rubric score (clipped mean) when they are scored by rubrics alone; otherwise no number, and why."""

    name: str = Field(description="'aggregate', 'HealthBench score' or 'none'")
    value: float | None = None
    ci95: list[float] | None = Field(default=None, description="bootstrap 95% CI over encounters (rubric score)")
    note: str = ""

    def text(self) -> str:
        if self.value is None:
            return f"no headline score: {self.note}"
        ci = f" (95% CI {self.ci95[0]:.3f}-{self.ci95[1]:.3f})" if self.ci95 else ""
        return f"{self.name} {self.value:.3f}{ci}"


class EvaluatorErrorRecord(BaseModel):
    """An evaluator that raised on one encounter: the run went on without its verdict there."""

    scenario_id: str
    k: int
    evaluator: str
    error: str


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
    aggregate: float | None = Field(description="suite-weighted mean of scenario means, an errored encounter counted "
                                                "as 0 for its scenario, capped by the safety gate")
    aggregate_uncapped: float | None
    aggregate_without_errors: float | None = Field(default=None, description="the same mean over scored encounters "
                                                                             "only (errors left out), uncapped: "
                                                                             "flatters a model that errors on hard "
                                                                             "cases; reported beside the aggregate")
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
    verdicts: dict[str, dict[str, int]] = Field(default={}, description="triage and escalation: encounters per "
                                                                        "verdict (best, acceptable, over, under)")
    judge: JudgeSummary | None = None
    headline: Headline | None = Field(default=None, description="the run's headline number and what it is")
    profile: str | None = None
    combined: float | None = Field(default=None, description="suite-weighted mean of scenarios' combined means")
    status_counts: dict[str, int] = Field(default={}, description="encounters per pass / warn / fail")
    evaluators: dict[str, EvaluatorSummary] = {}
    error_reasons: dict[str, int] = Field(default={}, description="encounters that ended in an error, grouped by "
                                                                 "reason (turn numbers and ports folded), most "
                                                                 "frequent first")
    evaluator_errors: list[EvaluatorErrorRecord] = Field(default=[], description="evaluators that raised, per "
                                                                                 "encounter; a run with any exits "
                                                                                 "non-zero")
    voice: dict[str, float] | None = Field(default=None, description="voice runs: WER per side, ASR-missed facts, "
                                                                      "stage times, audio seconds")
    live: dict[str, Any] | None = Field(default=None, description="live calls: voice-to-voice latency p50/p95 per "
                                                                 "side, interruptions, overlaps, long silences")
    disagreements: list[Disagreement] = Field(default=[], description="encounters where the two paths differ")
    patient: dict[str, Any] | None = Field(default=None, description="how the patient understood the agent: facts "
                                                                     "revealed per layer (trigger, intent, model), "
                                                                     "assessment forms, patient-model warnings")
    triage_accuracy: TriageAccuracy | None = Field(default=None, description="escalation accuracy, under/over-triage, "
                                                                            "per class, confusion matrix, diagnosis "
                                                                            "top-1/top-3 with bootstrap CIs; None "
                                                                            "when no scenario has an escalation "
                                                                            "target")


VERDICT_ORDER = ("best", "acceptable", "over", "under")


def verdict_text(counts: dict[str, int]) -> str:
    """"best 12, acceptable 3, over 1, under 0" (every verdict, in order)."""
    return ", ".join(f"{v} {counts.get(v, 0)}" for v in VERDICT_ORDER)
