"""Types of one encounter's outcome: the turns, what was gathered, the parsed assessment.

``ConversationResult`` is what the harness returns and what a line of ``results.jsonl`` holds
(together with the score card, see sim.store). Every field is plain data so a result can be
re-scored later without re-running the encounter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypedDict

from pydantic import BaseModel, Field


class CallInteraction(TypedDict, total=False):
    """A live call's interaction metrics as a run records them (``audio.live.InteractionMetrics.model_dump()``).

    Latencies are voice to voice, in seconds; the keys of the side whose timeline it is come first, as written.
    """

    patient_latency_s: list[float]
    agent_latency_s: list[float]
    patient_latency_p50_s: float | None
    patient_latency_p95_s: float | None
    agent_latency_p50_s: float | None
    agent_latency_p95_s: float | None
    stages_p50_s: dict[str, float | None]
    overlaps: list[dict[str, Any]]  # at, by, yielded, duration_s
    interruptions: int
    overlap_s: float
    silence_gaps: int
    long_silences: int
    max_silence_s: float
    mean_silence_s: float
    patient_speech_s: float
    agent_speech_s: float
    timeline: list[dict[str, Any]]  # one reply's stage times (audio.live's TurnTiming)
    call_s: float


if TYPE_CHECKING:
    Interaction = CallInteraction
else:  # stored as written: a plain dict keeps the recorded key order and any key a later version adds
    Interaction = dict[str, Any]

Speaker = Literal["patient", "agent", "harness"]
Termination = Literal["assessment", "max_turns", "reply", "error", "hangup", "time_limit", "not_applicable"]


class TokenUsage(BaseModel):
    """Tokens an endpoint reported for the prompt and the completion."""

    prompt: int = 0
    completion: int = 0


class Turn(BaseModel):
    """One message. ``index`` counts all messages; agent turns are numbered by ``agent_turn``.

    Empty list and dict fields default by factory, not by a ``[]`` / ``{}`` default that pydantic deep-copies on
    every construction (a few per message).
    """

    index: int
    speaker: Speaker
    text: str
    started_at: float = Field(description="unix time the message began being produced")
    ended_at: float
    latency_s: float = 0.0
    tokens: TokenUsage | None = None
    agent_turn: int | None = None
    revealed: list[str] = Field(default_factory=list, description="fact ids this patient message revealed")
    revealed_by: dict[str, str] = Field(default_factory=dict, description="patient messages: fact id -> the layer that "
                                                                "revealed it (trigger, intent, model, volunteered, or "
                                                                "barge_in: a red-flag cut-in on a call)")
    answer_kind: str | None = Field(default=None, description="patient messages: facts, unsure (neither reveals "
                                                              "nor denies), negative (closed-world 'no' to a "
                                                              "recognised question the scenario has no fact for), "
                                                              "fallback (not understood), or with a persona: "
                                                              "withheld, vague, not_known, not_understood")
    persona_held: list[str] = Field(default_factory=list,
                                    description="patient messages: fact ids asked for that the persona held back "
                                                "this turn (sim.patient.persona)")
    persona_note: str | None = Field(default=None, description="patient messages: what the persona did this turn "
                                                               "('withheld: x; vague: y'), None when nothing")
    assessment_form: str | None = Field(default=None, description="agent turns that are the assessment: the form "
                                                                  "that matched (plain, markdown_label, heading, "
                                                                  "table, fields, json, prose, judge)")
    heard_text: str | None = Field(default=None, description="what the other side received, when a channel changed it")
    channel: dict[str, float] = Field(default_factory=dict,
                                      description="channel metrics of this message (voice: wer, times)")
    artifacts: dict[str, str] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    images: list[dict[str, str]] = Field(default_factory=list,
                                         description="images sent with this message: source, sha256, "
                                                     "shown ('image' or 'description' for text-only)")
    asr_missed: list[str] = Field(default_factory=list,
                                  description="facts the intended text would have revealed, the heard "
                                              "text did not (agent turns)")


class ParsedAssessment(BaseModel):
    """What the assessment parser could read. ``None`` fields were not found; ``problems`` says why."""

    triage_level: int | None = None
    escalation: str | None = None
    disposition: str | None = Field(default=None, description="how the patient should get there, when the "
                                                              "assessment says (a scenarios.schema.Disposition "
                                                              "value: ambulance, self_present_ed, ...)")
    diagnoses: list[str] = []
    problems: list[str] = []
    form: str | None = Field(default=None, description="how the reply marked its assessment: 'plain' (the "
                                                       "protocol's 'ASSESSMENT:' line), 'markdown_label' (that line "
                                                       "in markdown, e.g. '**ASSESSMENT:**'), 'heading' (an "
                                                       "'Assessment' heading or bold line followed by fields), "
                                                       "'table' (fields in a markdown table), 'fields' (no marker: "
                                                       "a block of labelled fields that decides the triage), "
                                                       "'json' (a JSON object with the fields), 'judge' (read or "
                                                       "completed by the --judge fallback); None: no assessment")


class ConversationResult(BaseModel):
    """One encounter's outcome: the turns, the facts gathered, the parsed assessment and how it ended."""

    scenario_id: str
    k: int
    seed: int
    harness_version: str
    model: str
    turns: list[Turn]
    gathered_info: list[str] = Field(description="fact ids revealed, in the order revealed")
    final_assessment: str | None = None
    final_reply: str | None = Field(default=None, description="the agent's last message (what a rubric judge grades)")
    assessment: ParsedAssessment = ParsedAssessment()
    termination: Termination
    agent_turns: int
    turn_limit: int
    tokens: TokenUsage = TokenUsage()
    started_at: float
    ended_at: float
    errors: list[str] = []
    artifacts: dict[str, str] = Field(default={}, description="per-encounter files, e.g. the call recording")
    interaction: Interaction | None = Field(default=None, description="live calls: latencies, overlaps, "
                                                                          "silence gaps, per-turn timeline")

    @property
    def ok(self) -> bool:
        """Whether the encounter ran to an end that can be scored (not an error, not inapplicable)."""
        return self.termination not in ("error", "not_applicable")
