"""The shared scoring and safety-gate core.

``score(result, scenario) -> ScoreCard`` scores one encounter on the deterministic path;
``aggregate(scenarios, cards, errors) -> Summary`` turns a run's cards into reliability statistics,
suite scores, QWK and the safety gate. May import scenarios and sim.records (the
leaf of types) only, never another part of sim (checked by import-linter, see pyproject.toml).

The record types the scorers make (``ScoreCard``, ``Summary``, ``SafetyGate``, ``ScenarioSummary``, ``JudgeCard``,
...) are imported from ``sim.records``, their one home; this face exports what the scorers do.
"""

from __future__ import annotations

from scorers._aggregate import (
    GATE_CAP,
    GATE_THRESHOLD,
    SUITE_WEIGHTS,
    aggregate,
    gate_reason,
    gates,
    summarise_scenario,
)
from scorers._compare import (
    HEALTHBENCH_SCORE,
    METRIC_AGGREGATE,
    BreakdownRow,
    Comparison,
    DriftCheck,
    HealthBenchComparison,
    Metric,
    ScenarioComparison,
    SpeechRetention,
    bonferroni,
    cohens_d,
    compare_breakdown,
    compare_scores,
    drift_check,
    paired_bootstrap_diff,
    speech_retention,
    welch_t,
)
from scorers._conversation import record_for, score_conversation
from scorers._deterministic import PASS_THRESHOLD, WEIGHTS, score_encounter
from scorers._diagnosis import match_diagnoses
from scorers._diagnosis_lint import synonym_problems
from scorers._failure_judges import (
    FailureJudgeSpec,
    JudgeExample,
    build_failure_judge,
    failure_prompt,
    load_failure_judges,
    run_failure_judge,
    write_failure_judge,
)
from scorers._image_accuracy import image_accuracy, image_types
from scorers._imaging import judge_rubrics
from scorers._judge import (
    Judge,
    disagreements,
    guard_self_preference,
    judge_encounter,
    judge_path_score,
    rubric_prompt,
    summarise_judges,
    transcript_text,
)
from scorers._judge_validation import (
    FAILURE_RATE_SEED,
    corrected_failure_rate,
    failure_rate,
    judge_validity,
    rogan_gladen,
    split_of,
    wilson_ci,
)
from scorers._pairwise import Answer, PairOutcome, Ranking, bradley_terry, majority_outcome, rank_models, unswap
from scorers._profiles import PROFILES, Profile, ProfileError, combine, load_profile
from scorers._reliability import bootstrap_ci, cluster_bootstrap_ci, pass_hat_k, worst_at_k
from scorers._robustness import persona_robustness
from scorers._rubric_gen import GENERATOR, generate_rubrics
from scorers._rubric_model import (
    MODEL_GENERATOR,
    ModelRubric,
    RubricGenerationError,
    audit_rubric,
    clinical_prompt,
    generate_model_rubrics,
    intents_prompt,
)
from scorers._triage import acceptable_triage_error, asymmetric_triage_error, quadratic_weighted_kappa, triage_score
from scorers._triage_accuracy import triage_accuracy
from scorers._voice_measures import (
    MONOLOGUE_S,
    MONOLOGUE_WORDS,
    emergency_instruction,
    red_flag_barge_ins,
    speakability,
    time_to_safety_advice,
    voice_measures,
    voice_summary,
)

score = score_encounter

__all__ = [
    "Judge", "disagreements", "guard_self_preference",
    "judge_encounter", "judge_path_score", "summarise_judges",
    "GATE_CAP", "GATE_THRESHOLD", "PASS_THRESHOLD", "SUITE_WEIGHTS", "WEIGHTS",
    "aggregate", "gate_reason", "gates", "asymmetric_triage_error", "bootstrap_ci", "match_diagnoses",
    "pass_hat_k",
    "quadratic_weighted_kappa", "score", "score_encounter", "summarise_scenario", "triage_score", "worst_at_k",
    "Comparison", "DriftCheck", "ScenarioComparison", "SpeechRetention", "speech_retention", "bonferroni",
    "cohens_d", "compare_scores", "drift_check",
    "paired_bootstrap_diff", "welch_t", "acceptable_triage_error",
    "HEALTHBENCH_SCORE", "METRIC_AGGREGATE", "BreakdownRow", "HealthBenchComparison", "Metric", "compare_breakdown",
    "cluster_bootstrap_ci", "triage_accuracy", "image_accuracy", "image_types",
    "synonym_problems", "judge_rubrics", "rubric_prompt", "transcript_text",
    "Answer", "PairOutcome", "Ranking", "bradley_terry", "majority_outcome", "rank_models", "unswap",
    "PROFILES", "Profile", "ProfileError", "combine", "load_profile",
    "GENERATOR", "generate_rubrics",
    "MODEL_GENERATOR", "ModelRubric", "RubricGenerationError", "audit_rubric", "clinical_prompt",
    "generate_model_rubrics", "intents_prompt",
    "FailureJudgeSpec", "JudgeExample", "build_failure_judge", "failure_prompt", "load_failure_judges",
    "run_failure_judge", "write_failure_judge",
    "corrected_failure_rate", "failure_rate", "FAILURE_RATE_SEED", "judge_validity", "rogan_gladen", "split_of",
    "wilson_ci", "persona_robustness", "record_for", "score_conversation",
    "MONOLOGUE_S", "MONOLOGUE_WORDS", "emergency_instruction", "red_flag_barge_ins", "speakability",
    "time_to_safety_advice", "voice_measures", "voice_summary",
]
