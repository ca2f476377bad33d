"""The shared record types, a leaf: what the engine, the scorers, the voice stack and the dashboard exchange.

- Conversations: ``Turn``, ``ConversationResult``, ``ParsedAssessment``, ``TokenUsage``.
- Channels: the ``Channel`` and ``RecordingChannel`` protocols and ``Delivery`` (what one side received).
- Events: the typed events of events.jsonl (``Event`` and its members), ``EventLog``, ``parse_event``,
  ``read_events``, and ``EventSink``, the callable every producer of events is handed.
- Scores: ``ScoreCard``, ``Summary`` and their parts (``JudgeCard``, ``EvaluatorResult``, ``Finding``,
  ``TriageAccuracy``, ``ImageAccuracy``, ...): produced by ``scorers``, read by the store, the reports and the
  dashboard.
- Run metrics: ``VoiceMetrics``, ``LiveMetrics`` and ``UnderstandingMetrics`` (``Summary.voice``, ``.live`` and
  ``.patient``), the calls' clinical voice measures (``VoiceMeasures`` per call with ``SafetyAdvice``,
  ``Speakability`` and ``RedFlagBargeIn``; ``VoiceSummary``, ``Summary.voice_measures``), and ``percentile``, the one
  percentile definition (numpy's linear interpolation, pure Python).
- Runs: ``RunMeta``, ``EncounterRecord``, ``UnscoredEncounter`` and ``RunLayout``, the one owner of every file
  name in a run directory; persona sweeps: ``encounter_slot`` (which persona and run a k stands for), ``encounter_k``,
  ``scenario_personas``, ``persona_varies``, ``planned_encounters``.
- Failure taxonomy: ``FailureMode``, ``Taxonomy``, ``load_taxonomy``, ``save_taxonomy`` (taxonomy.json), ``mode_slug``,
  ``taxonomy_lock`` (held across every read-modify-write of a taxonomy file); a judge's suggested codes:
  ``CodeSuggestion``, ``append_code_suggestions``, ``load_code_suggestions`` (code_suggestions.jsonl).
- Judge validation: ``JudgeValidity``, ``CorrectedRate``, ``JudgeValidationRecord`` (``<judges DIR>/validation.json``,
  ``load_judge_validation``, ``save_judge_validation``), ``FailureRate`` (``Summary.failure_rates``), and
  ``JudgeValidation`` with ``load_run_validation`` (a labelled run's judge_validation.json).
- Errors: ``EncSimError`` (under ``scenarios.errors.UserError``, the root of every error a user can cause),
  ``ConfigError``, ``AgentError``, ``TaxonomyError``.
- Redaction: ``redact``, ``redact_json``, ``neutralise``, ``clean``, ... the one layer that keeps keys and
  escape sequences out of every file and terminal (see ``sim.records._redact``).

This package imports only ``scenarios`` (and pydantic), so importing a record type never loads the
harness, the agents or httpx.
"""

from __future__ import annotations

from sim.records._accuracy import IMAGE_TYPE_TAG, UNTYPED, ImageAccuracy, Rate, TypeAccuracy
from sim.records._channel import Channel, Delivery, RecordingChannel
from sim.records._errors import AgentError, ConfigError, EncSimError
from sim.records._events import (
    EncounterFailed,
    EncounterFinished,
    EncounterStarted,
    Event,
    EventLog,
    EventSink,
    LatencyMeasured,
    OverlapDetected,
    RunFinished,
    RunStarted,
    SpeechStarted,
    SpeechStopped,
    TurnRecorded,
    parse_event,
    read_events,
)
from sim.records._metrics import (
    LiveMetrics,
    RedFlagBargeIn,
    SafetyAdvice,
    Speakability,
    UnderstandingMetrics,
    VoiceMeasures,
    VoiceMetrics,
    VoiceSummary,
    percentile,
)
from sim.records._redact import (
    REDACTED,
    clean,
    display_json,
    forget_secrets,
    neutralise,
    one_line,
    redact,
    redact_json,
    redact_obj,
    redact_url,
    register_env,
    register_secret,
)
from sim.records._result import (
    CallInteraction,
    ConversationResult,
    ParsedAssessment,
    Speaker,
    Termination,
    TokenUsage,
    Turn,
)
from sim.records._run import (
    AUDIO_FORMATS,
    DEFAULT_AUDIO_FORMAT,
    AudioFormat,
    EncounterRecord,
    JudgeRef,
    RunLayout,
    RunMeta,
    ScenarioRef,
    UnscoredEncounter,
    package_versions,
)
from sim.records._scores import (
    DIAGNOSIS_METHOD,
    SEVERITIES,
    TRIAGE_CI_RESAMPLES,
    TRIAGE_CI_SEED,
    VERDICT_ORDER,
    ClassAccuracy,
    Combined,
    CriterionResult,
    DiagnosisAccuracy,
    DiagnosisMatch,
    Disagreement,
    EfficiencyComponent,
    EscalationComponent,
    EvaluatorErrorRecord,
    EvaluatorResult,
    EvaluatorSummary,
    Finding,
    Headline,
    ImagingComponent,
    InformationComponent,
    JudgeCard,
    JudgeSummary,
    PersonaRobustness,
    PersonaScore,
    RobustnessRow,
    RubricVerdict,
    SafetyGate,
    ScenarioSummary,
    ScoreCard,
    Severity,
    Status,
    SuiteSummary,
    Summary,
    TriageAccuracy,
    TriageComponent,
    TrustRating,
    Verdict,
    verdict_text,
)
from sim.records._sweep import (
    encounter_k,
    encounter_seed,
    encounter_slot,
    persona_varies,
    planned_encounters,
    scenario_personas,
)
from sim.records._taxonomy import (
    TAXONOMY_LOCK_TIMEOUT_S,
    CodeSuggestion,
    FailureMode,
    Taxonomy,
    TaxonomyError,
    append_code_suggestions,
    check_mode_name,
    load_code_suggestions,
    load_taxonomy,
    mode_slug,
    save_taxonomy,
    taxonomy_lock,
)
from sim.records._validation import (
    USABLE_MARGIN,
    VALIDATION_FILE,
    CorrectedRate,
    FailureRate,
    FailureRateStatus,
    JudgeValidation,
    JudgeValidationRecord,
    JudgeValidity,
    ModeValidation,
    load_judge_validation,
    load_run_validation,
    save_judge_validation,
)

__all__ = [
    "USABLE_MARGIN", "CorrectedRate", "JudgeValidity", "VALIDATION_FILE", "FailureRate", "FailureRateStatus",
    "JudgeValidationRecord", "ModeValidation", "load_judge_validation", "save_judge_validation",
    "JudgeValidation", "load_run_validation", "CodeSuggestion", "append_code_suggestions", "load_code_suggestions",
    "FailureMode", "Taxonomy", "TaxonomyError", "check_mode_name", "load_taxonomy", "mode_slug", "save_taxonomy",
    "taxonomy_lock", "TAXONOMY_LOCK_TIMEOUT_S", "AUDIO_FORMATS", "DEFAULT_AUDIO_FORMAT", "AudioFormat",
    "encounter_k", "encounter_seed", "encounter_slot", "persona_varies", "planned_encounters", "scenario_personas",
    "DIAGNOSIS_METHOD", "IMAGE_TYPE_TAG", "UNTYPED", "ImageAccuracy", "TypeAccuracy",
    "REDACTED", "SEVERITIES", "TRIAGE_CI_RESAMPLES", "TRIAGE_CI_SEED", "VERDICT_ORDER",
    "AgentError", "CallInteraction", "Channel", "ClassAccuracy", "Combined", "ConfigError", "ConversationResult",
    "CriterionResult",
    "Delivery", "DiagnosisAccuracy", "DiagnosisMatch", "Disagreement", "EfficiencyComponent", "EncSimError",
    "EncounterFailed", "EncounterFinished", "EncounterRecord", "EncounterStarted", "EscalationComponent",
    "EvaluatorErrorRecord", "EvaluatorResult", "EvaluatorSummary", "Event", "EventLog", "EventSink", "Finding",
    "Headline", "ImagingComponent", "InformationComponent", "JudgeCard", "JudgeRef", "JudgeSummary",
    "LatencyMeasured", "LiveMetrics", "OverlapDetected", "ParsedAssessment",
    "PersonaRobustness", "PersonaScore", "Rate", "RecordingChannel",
    "RobustnessRow", "RubricVerdict", "RunFinished", "RunLayout", "RunMeta", "RunStarted", "SafetyGate", "ScenarioRef",
    "ScenarioSummary", "ScoreCard", "Severity", "Speaker", "SpeechStarted", "SpeechStopped", "Status",
    "SuiteSummary", "Summary", "Termination", "TokenUsage", "TriageAccuracy", "TriageComponent", "TrustRating",
    "Turn", "TurnRecorded", "UnderstandingMetrics", "UnscoredEncounter", "Verdict", "VoiceMetrics", "clean",
    "RedFlagBargeIn", "SafetyAdvice", "Speakability", "VoiceMeasures", "VoiceSummary",
    "display_json",
    "forget_secrets", "neutralise", "one_line", "package_versions", "parse_event", "percentile", "read_events",
    "redact", "redact_json", "redact_obj", "redact_url", "register_env", "register_secret", "verdict_text",
]
