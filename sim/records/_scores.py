"""The records of scoring: what the scoring core (``scorers``) produces and every reader consumes.

``ScoreCard`` is one encounter's score (stored in results.jsonl inside its ``EncounterRecord``) and
``Summary`` a run's (summary.json), with the parts they are made of: the judge path's ``JudgeCard``
and ``JudgeSummary``, the evaluators' ``EvaluatorResult`` and ``Finding``, the profile's
``Combined`` score and the run's ``TriageAccuracy`` (its ``Rate`` and the run's ``ImageAccuracy`` are in
``_accuracy.py``). They live in this leaf so that the run store,
the reports and the dashboard can read them without importing the code that computes them
(``scorers`` computes them and re-exports these names from its face).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from sim.records._accuracy import ImageAccuracy, Rate
from sim.records._metrics import LiveMetrics, UnderstandingMetrics, VoiceMetrics, VoiceSummary
from sim.records._validation import FailureRate

# ------------------------------------------------------------------ evaluators (scorers.evaluators)

Severity = Literal["critical", "high", "medium", "low"]

# Most severe first; used to sort findings and to weigh them in scores.
SEVERITIES: tuple[Severity, ...] = ("critical", "high", "medium", "low")


class Finding(BaseModel):
    """One thing an evaluator noticed. ``turn`` is the index of the message in ``result.turns``."""

    code: str = Field(description="stable machine-readable name, e.g. missed_red_flag, dose_above_max")
    severity: Severity
    message: str
    evidence: str | None = Field(default=None, description="the text that triggered the finding")
    turn: int | None = None


class EvaluatorResult(BaseModel):
    """What one evaluator concluded about one encounter."""

    name: str
    score: float = Field(ge=0.0, le=1.0)
    passed: bool
    findings: list[Finding] = []
    fail_reasons: list[str] = []
    details: dict[str, Any] = {}
    applicable: bool = Field(default=True, description="False: the check does not apply to this encounter (no red "
                                                       "flag to miss, an imaging item has no interview): it is left "
                                                       "out of the profile's score, fail conditions and means")
    error: str | None = Field(default=None, description="the evaluator raised on this encounter: its message. The "
                                                        "result is then not applicable (no score, no verdict) and "
                                                        "the run counts it as an evaluator error")

    @model_validator(mode="before")
    @classmethod
    def _applicable_from_details(cls, data: Any) -> Any:
        """Read an old ``details["applicable"]`` as the field.

        Records written before ``applicable`` was a field (and user evaluators written then) said it there.
        """
        if isinstance(data, dict) and "applicable" not in data:
            details = data.get("details")
            if isinstance(details, dict) and isinstance(details.get("applicable"), bool):
                data = {**data, "applicable": details["applicable"],
                        "details": {k: v for k, v in details.items() if k != "applicable"}}
        return data

    def by_severity(self, severity: Severity) -> list[Finding]:
        return [f for f in self.findings if f.severity == severity]


# ------------------------------------------------------------------ the judge path (scorers._judge)

RubricVerdict = Literal["met", "unmet", "no_verdict"]  # one criterion's verdict by one judge, or the jury's


class CriterionResult(BaseModel):
    """One rubric criterion judged by the jury: each judge's vote, the majority verdict and its points."""

    criterion: str
    points: float
    axis: str | None = None
    tags: list[str] = []
    votes: dict[str, RubricVerdict]
    verdict: RubricVerdict
    explanations: dict[str, str] = {}


class TrustRating(BaseModel):
    """One trust criterion rated by each judge (1-5, None for no verdict) and the mean of the ratings."""

    category: str
    criterion: str
    ratings: dict[str, int | None]
    mean: float | None


class JudgeCard(BaseModel):
    """The judge path's verdicts on one encounter: rubric criteria, trust ratings and diagnosis votes."""

    judges: list[str]
    rubric: list[CriterionResult] = []
    rubric_score: float | None = None
    axis_scores: dict[str, float] = {}
    tag_scores: dict[str, float] = {}
    trust: list[TrustRating] = []
    trust_categories: dict[str, float] = {}
    trust_score: float | None = None
    no_verdicts: int = 0
    diagnosis_votes: dict[str, int | None] = Field(default={}, description="judge -> the rank (1-3) in the agent's "
                                                                           "differential that names the expected "
                                                                           "diagnosis, 0 for none, None no verdict")
    diagnosis_rank: int | None = Field(default=None, description="the jury's rank (the most common vote; a tie "
                                                                 "or no vote is None); None also when not asked")


class JudgeSummary(BaseModel):
    """The judge path over a run: rubric, axis, tag and theme scores, trust, and the jury's make-up."""

    judges: list[str]
    excluded: dict[str, str] = {}
    warnings: list[str] = []
    rubric_score: float | None = None
    axis_scores: dict[str, float] = {}
    tag_scores: dict[str, float] = Field(default={}, description="per rubric-criterion tag (axis:*, level:*): the "
                                                                 "rubric score of the criteria carrying it")
    theme_scores: dict[str, float] = Field(default={}, description="per theme (the scenario's theme:* tags, as "
                                                                   "HealthBench reports them): the clipped mean "
                                                                   "rubric score of those encounters")
    trust_score: float | None = None
    trust_categories: dict[str, float] = {}
    fleiss_kappa: float | None = None
    kappa_items: int = 0
    no_verdicts: int = 0
    encounters_judged: int = 0


class Disagreement(BaseModel):
    """An encounter whose deterministic composite and judge-path score differ by ``diff``."""

    scenario_id: str
    k: int
    deterministic: float
    judge: float
    diff: float


# ------------------------------------------------------------------ profiles (scorers._profiles)

Status = Literal["pass", "warn", "fail"]


class Combined(BaseModel):
    """A profile's combined score of one encounter, its pass / warn / fail status and the reasons."""

    profile: str
    score: float | None
    status: Status
    parts: dict[str, float]
    fail_reasons: list[str] = []


# ------------------------------------------------------------------ triage accuracy (scorers._triage_accuracy)

TRIAGE_CI_RESAMPLES = 1000  # the bootstrap behind TriageAccuracy's CIs
TRIAGE_CI_SEED = 0
DIAGNOSIS_METHOD = ("synonym matcher (scorers._diagnosis): the expected first-listed diagnosis or one of its "
                    "synonyms")


class ClassAccuracy(BaseModel):
    """The encounters of one urgency class (their scenarios' best label)."""

    n: int
    exact: Rate
    acceptable: Rate
    under_acceptable: Rate


class DiagnosisAccuracy(BaseModel):
    """Top-1 / top-3 of the expected first-listed diagnosis (or a synonym) in the parsed differential."""

    n: int = Field(description="scored encounters with an escalation target and an expected diagnosis")
    top1: Rate
    top3: Rate
    imaging_excluded: int = Field(default=0, description="imaging items with an expected diagnosis: scored on "
                                                         "findings, no differential, so not in n")
    method: str = DIAGNOSIS_METHOD
    judge: bool = Field(default=False, description="whether the judge path is reported (a --judge run)")
    judge_n: int = Field(default=0, description="of n, encounters the jury gave a verdict on")
    judge_top1: Rate | None = Field(default=None, description="the jury: the expected diagnosis (same condition, "
                                                              "another name, a more specific form) named first")
    judge_top3: Rate | None = Field(default=None, description="the jury: named within the first three")


class TriageAccuracy(BaseModel):
    """Escalation accuracy of a run, as symptom-checker studies report triage (see scorers._triage_accuracy)."""

    encounters: int = Field(description="M: encounters of scenarios with an escalation target, scored or errors")
    scored: int = Field(description="N: of those, scored (the population of every figure)")
    errors: int = Field(description="ended in an error: counted in M, not scored")
    not_applicable: int = Field(default=0, description="not shown to this model (imaging items, text-only model)")
    scenarios: int = Field(description="scenarios with at least one scored encounter")
    clustered: bool = Field(description="CIs from a cluster bootstrap over scenarios (some scenario has K > 1)")
    exact: Rate
    acceptable: Rate
    under: Rate
    over: Rate
    under_acceptable: Rate
    over_acceptable: Rate
    none: Rate
    unsafe: Rate
    per_class: dict[str, ClassAccuracy] = Field(description="best label -> its encounters' accuracy, most urgent "
                                                            "first")
    confusion: dict[str, dict[str, int]] = Field(description="best label -> escalation given (or 'none') -> "
                                                             "encounters")
    diagnosis: DiagnosisAccuracy | None = None

    def ci_method(self) -> str:
        """How the CIs were computed, in words."""
        unit = f"scenarios ({self.scenarios})" if self.clustered else "encounters"
        return f"95% percentile bootstrap CIs over {unit}, {TRIAGE_CI_RESAMPLES} resamples, seed {TRIAGE_CI_SEED}"

    def cli_line(self) -> str:
        """The one-line summary the CLI prints after a run or a report."""
        line = (f"Triage accuracy: exact {self.exact.text()}, acceptable {self.acceptable.text()}, "
                f"under-triage {self.under.text()} (below the acceptable set {self.under_acceptable.text()}), "
                f"over-triage {self.over.text()}, none given {self.none.text()}")
        if self.diagnosis is not None:
            line += f"; diagnosis top-1 {self.diagnosis.top1.text()}, top-3 {self.diagnosis.top3.text()}"
        return line + f" ({self.scored} of {self.encounters} encounters scored)"


# ------------------------------------------------------------------ the score card and the summary

Verdict = Literal["best", "acceptable", "over", "under"]  # an encounter's triage against the scenario's levels


class TriageComponent(BaseModel):
    """The triage-level part of a score card: expected and given ESI levels, the asymmetric error, the verdict."""

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
    """The information-gathering part of a score card: critical facts and red flags revealed or missed."""

    critical_revealed: list[str]
    critical_missed: list[str]
    revealed: int
    total: int
    red_flags_elicited: list[str]
    red_flags_missed: list[str]
    score: float


class EscalationComponent(BaseModel):
    """The escalation part of a score card: expected and given category, under-escalation, the verdict."""

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
    """The efficiency part of a score card: agent turns used against the turn limit."""

    agent_turns: int
    turn_limit: int
    score: float


class DiagnosisMatch(BaseModel):
    """Where the expected top diagnosis appears in the agent's differential, and the composite's diagnosis part."""

    top1: bool
    top3: bool
    matched: list[str] = []
    score: float | None = Field(default=None, description="0.7 x (1 when the expected top diagnosis is named first, "
                                                          "0.7 second or third, else 0) + 0.3 x the share of "
                                                          "expected diagnoses named; None in records from before it "
                                                          "counted in the composite")


class ScoreCard(BaseModel):
    """One encounter's scores.

    A component the scenario gives no target for (no expected triage
    level, no information tree, a one-reply replay) is ``None`` and the composite is the weighted
    mean of the components that apply; ``composite`` is ``None`` when none applies (a rubric-only
    item, which only the judge path can score).
    """

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
    """One scenario over its K encounters: means (with and without errors), worst, worst@k and pass^k."""

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
    """One evaluator over a run: encounters it applied to, its mean score, failures, findings and errors."""

    applicable: int
    mean: float | None
    failed: int
    findings: dict[str, int] = Field(default={}, description="severity -> count")
    errors: int = Field(default=0, description="encounters on which the evaluator raised (left unscored by it)")


class Headline(BaseModel):
    """The run's one number, and what it is.

    The aggregate when the scenarios have deterministic targets; the HealthBench rubric score (clipped mean)
    when they are scored by rubrics alone; otherwise no number, and why.
    """

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
    """The safety gate: whether it triggered, on which scenarios and why, and the cap it put on the aggregate."""

    triggered: bool
    cap: float
    threshold: float
    scenarios: list[str] = []
    reasons: dict[str, str] = {}
    personas: dict[str, list[str]] = Field(default={}, description="persona sweeps: per triggering scenario, the "
                                                                   "personas under which it failed the gate")
    watched: dict[str, str] | None = Field(default=None, description="every scenario of the run that fed the gate, "
                                                                  "and why (safety suite, emergency target, critical "
                                                                  "imaging findings, or an importer's mark); None in "
                                                                  "a summary written before this field")

    @property
    def state(self) -> str:
        """``triggered``, ``passed``, or ``nothing gated``.

        ``nothing gated``: no scenario of the run fed the gate, so a pass says nothing about safety. A summary
        written before ``watched`` existed says ``passed`` as it did.
        """
        if self.triggered:
            return "triggered"
        return "nothing gated" if self.watched is not None and not self.watched else "passed"


class PersonaScore(BaseModel):
    """One persona's mean score on a scenario (or over the scenarios of a sweep), with its bootstrap CI."""

    persona: str
    n: int = Field(description="scored encounters")
    errors: int = 0
    mean: float | None = Field(description="mean composite, each errored encounter counted as 0")
    ci95: list[float] | None = None
    drop: float | None = Field(default=None, description="the default persona's mean minus this one's (positive: "
                                                         "worse than default); None without a default persona")
    drop_ci95: list[float] | None = None


class RobustnessRow(BaseModel):
    """How one scenario (or the whole sweep, ``id`` ``overall``) holds up across personas."""

    id: str
    personas: list[PersonaScore]
    mean: float | None = Field(description="mean across personas (of the persona means)")
    mean_ci95: list[float] | None = None
    worst_persona: str | None = Field(default=None, description="the persona with the lowest mean")
    worst: float | None = None
    worst_ci95: list[float] | None = None
    drop: float | None = Field(default=None, description="the default persona's mean minus the worst persona's; "
                                                         "None without a default persona in the sweep")
    drop_ci95: list[float] | None = None

    def drop_text(self, digits: int = 2) -> str:
        """The drop as reports print it: "0.31 [0.20, 0.42]", or "n/a (no default persona)"."""
        if self.drop is None:
            return "n/a (no default persona)" if self.worst is not None else "n/a"
        ci = f" [{self.drop_ci95[0]:.{digits}f}, {self.drop_ci95[1]:.{digits}f}]" if self.drop_ci95 else ""
        return f"{self.drop:.{digits}f}{ci}"


class PersonaRobustness(BaseModel):
    """A persona sweep's robustness (``Summary.persona_robustness``; absent for a run under one persona).

    Per scenario and overall: each persona's mean, the mean across personas, the worst persona and the drop from
    the default persona, with percentile bootstrap 95% CIs. The bootstrap resamples encounters within each
    (scenario, persona) cell, ``resamples`` times, seeded; the scenarios themselves are fixed, so the CIs say
    how much K runs leave uncertain, not how other scenarios would fare. Overall, a persona's mean is the plain
    mean of its scenario means.
    """

    personas: list[str]
    default: str = "default"
    has_default: bool
    overall: RobustnessRow
    scenarios: list[RobustnessRow] = []
    not_varied: list[str] = Field(default=[], description="scenarios run under the default persona only (replays, "
                                                          "imaging items): not in the robustness figures")
    resamples: int = 1000
    seed: int = 0


class SuiteSummary(BaseModel):
    """One suite's weight, scenario count and mean of its scenarios' means."""

    suite: str
    weight: float
    scenarios: int
    mean: float | None


def _absent(value: object) -> bool:
    return value is None


class Summary(BaseModel):
    """A run's summary.json: the aggregate, the gate, per-scenario and per-suite results and every block beside."""

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
    failure_rates: dict[str, FailureRate] = Field(default={}, description="per failure mode judged by --failure-"
                                                                        "judges: raw failure rate, and corrected "
                                                                        "for the judge's errors when validated")
    error_reasons: dict[str, int] = Field(default={}, description="encounters that ended in an error, grouped by "
                                                                 "reason (turn numbers and ports folded), most "
                                                                 "frequent first")
    evaluator_errors: list[EvaluatorErrorRecord] = Field(default=[], description="evaluators that raised, per "
                                                                                 "encounter; a run with any exits "
                                                                                 "non-zero")
    voice: VoiceMetrics | None = Field(default=None, description="voice runs: WER per side, ASR-missed facts, "
                                                                 "stage times, audio seconds")
    live: LiveMetrics | None = Field(default=None, description="live calls: voice-to-voice latency p50/p95 per "
                                                              "side, interruptions, overlaps, long silences")
    voice_measures: VoiceSummary | None = Field(default=None, exclude_if=_absent,
                                                description="calls: time to safety advice, response latency, "
                                                            "speakability, red-flag barge-ins; left out of "
                                                            "summary.json for a run without calls")
    disagreements: list[Disagreement] = Field(default=[], description="encounters where the two paths differ")
    patient: UnderstandingMetrics | None = Field(default=None, description="how the patient understood the agent: "
                                                                          "facts revealed per layer (trigger, "
                                                                          "intent, model), assessment forms, "
                                                                          "patient-model warnings")
    persona_robustness: PersonaRobustness | None = Field(default=None, description="persona sweeps: per scenario "
                                                                                  "and overall, the mean per persona, "
                                                                                  "the worst persona and the drop "
                                                                                  "from default, with bootstrap CIs")
    triage_accuracy: TriageAccuracy | None = Field(default=None, description="escalation accuracy, under/over-triage, "
                                                                            "per class, confusion matrix, diagnosis "
                                                                            "top-1/top-3 with bootstrap CIs; None "
                                                                            "when no scenario has an escalation "
                                                                            "target")
    image_accuracy: ImageAccuracy | None = Field(default=None, exclude_if=_absent,
                                                 description="multiple-choice accuracy of the imaging items and "
                                                             "top-1/top-3 diagnosis of the encounters with an image, "
                                                             "overall and by image type, with bootstrap CIs; left out "
                                                             "of summary.json for a run without them")


VERDICT_ORDER = ("best", "acceptable", "over", "under")


def verdict_text(counts: dict[str, int]) -> str:
    """"best 12, acceptable 3, over 1, under 0" (every verdict, in order)."""
    return ", ".join(f"{v} {counts.get(v, 0)}" for v in VERDICT_ORDER)
