"""The run-level metric blocks of ``Summary`` and the one percentile definition every latency figure uses.

- ``VoiceMetrics`` (``Summary.voice``): a voice run's WER per side, ASR-missed facts, stage times, audio seconds.
- ``LiveMetrics`` (``Summary.live``): a run's live calls pooled: latency p50/p95/mean per side, overlaps,
  interruptions, long silences.
- ``UnderstandingMetrics`` (``Summary.patient``): how the patient understood the agent: facts per layer,
  assessment forms, patient-model warnings.
- ``VoiceMeasures`` (one call) and ``VoiceSummary`` (``Summary.voice_measures``, the calls pooled): the clinical
  voice measures of issue 34 that ``scorers.voice_measures`` computes: time to safety advice after a red flag
  (``SafetyAdvice``), the agent's response latency, speakability (``Speakability``) and red-flag barge-ins
  (``RedFlagBargeIn``).
- ``percentile``: numpy's default percentile (linear interpolation between closest ranks) in pure Python, so the
  run-level figures (``sim.summary.live_metrics``), the per-call ones (``audio.live.InteractionMetrics``) and the
  dashboard's median all agree.

The blocks are written to summary.json with the keys the dicts they replace always had (a WER side that was not
measured is left out, as it always was), so summary.json files written before them load unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile of ``values``, exactly as ``numpy.percentile(values, q)`` computes it by default.

    Linear interpolation between the closest ranks: with the values sorted, the percentile sits at index
    ``(n - 1) * q / 100``, between the two values around it, by the same arithmetic as numpy (so the result is
    the same float, not only close to it).

    Args:
        values: the sample, in any order; finite numbers.
        q: the percentile, 0 to 100 (50 is the median).

    Returns:
        The percentile, or None when there are no values.

    Raises:
        ValueError: ``q`` is outside 0..100.
    """
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q!r}: give a number from 0 to 100")
    if not values:
        return None
    ordered = sorted(float(v) for v in values)
    index = (len(ordered) - 1) * (q / 100)
    below = math.floor(index)
    if below >= len(ordered) - 1:
        return ordered[-1]
    a, b, t = ordered[below], ordered[below + 1], index - below
    diff = b - a
    return b - diff * (1 - t) if t >= 0.5 else a + diff * t  # numpy's _lerp: from the nearer bound


def _unmeasured(value: float | None) -> bool:
    return value is None


class VoiceMetrics(BaseModel):
    """A voice run's channel: means over every spoken message, totals over the run (``sim.summary.voice_metrics``)."""

    wer_patient: float | None = Field(default=None, exclude_if=_unmeasured,
                                      description="mean word error rate of the patient's messages (intended vs "
                                                  "heard); None, and left out of summary.json, when not measured")
    wer_agent: float | None = Field(default=None, exclude_if=_unmeasured,
                                    description="mean word error rate of the agent's messages; None, and left out "
                                                "of summary.json, when not measured")
    mean_tts_s: float = Field(description="mean seconds of text-to-speech per message")
    mean_effects_s: float = Field(description="mean seconds of line effects per message")
    mean_stt_s: float = Field(description="mean seconds of speech-to-text per message")
    audio_seconds: float = Field(description="seconds of audio over every message")
    tts_cache_hit_ratio: float = Field(description="share of messages whose speech came from the TTS cache")
    facts_missed_by_asr: int = Field(description="facts the agent asked for that the patient did not hear (ASR), "
                                                 "over the run")
    messages: int = Field(description="spoken messages")


class LiveMetrics(BaseModel):
    """A run's live calls, their replies pooled (``sim.summary.live_metrics``); latencies are voice to voice."""

    calls: int = Field(description="live calls in the run")
    patient_latency_p50_s: float | None = Field(description="median seconds from the end of the agent's speech to "
                                                            "the patient's first audio; None without replies")
    patient_latency_p95_s: float | None = Field(description="95th percentile of the same")
    patient_latency_mean_s: float | None = Field(description="mean of the same")
    patient_replies: int = Field(description="patient replies measured")
    agent_latency_p50_s: float | None = Field(description="median seconds from the end of the patient's speech to "
                                                          "the agent's first audio; None without replies")
    agent_latency_p95_s: float | None = Field(description="95th percentile of the same")
    agent_latency_mean_s: float | None = Field(description="mean of the same")
    agent_replies: int = Field(description="agent replies measured")
    interruptions: int = Field(description="overlaps in which the talking side stopped")
    overlaps: int = Field(description="times both sides talked at once")
    overlap_s: float = Field(description="seconds both sides talked at once")
    long_silences: int = Field(description="silences of 2 s or more")
    max_silence_s: float = Field(description="the longest silence, seconds")


class UnderstandingMetrics(BaseModel):
    """How the patient understood the agent over a run (``sim.summary.understanding_metrics``)."""

    facts_revealed: int = Field(description="facts the patient revealed, over every encounter")
    by_layer: dict[str, int] = Field(description="facts revealed per layer of understanding (trigger, intent, "
                                                 "model)")
    share: dict[str, float | None] = Field(description="each layer's share of the facts revealed; None when none "
                                                       "were revealed")
    assessment_forms: dict[str, int] = Field(description="assessments per form (plain, markdown_label, heading, "
                                                         "table)")
    patient_model_warnings: int = Field(description="patient-model warnings (the deterministic layers decided "
                                                    "alone)")


class SafetyAdvice(BaseModel):
    """Time to safety advice in one encounter: from a red flag's reveal to the first emergency instruction after it.

    ``scorers.time_to_safety_advice`` computes it; see ``scorers._voice_measures`` for what counts as advice.
    """

    status: Literal["given", "missing", "not_revealed"] = Field(description="given: advice came after the "
                                                                           "reveal; missing: it never came; "
                                                                           "not_revealed: no red-flag fact was "
                                                                           "revealed")
    fact: str | None = Field(default=None, description="the first red-flag fact revealed (the clock starts there)")
    revealed_at_s: float | None = Field(default=None, description="call seconds at the end of the patient's turn "
                                                                  "that revealed it; None without timing")
    advice_at_s: float | None = Field(default=None, description="call seconds at the start of the agent's turn "
                                                                "that gave the advice")
    seconds: float | None = Field(default=None, description="advice_at_s - revealed_at_s; None when not given or "
                                                            "without timing")
    agent_turns: int | None = Field(default=None, description="agent turns from the reveal to the advice (1: the "
                                                              "very next one)")
    phrase: str | None = Field(default=None, description="the instruction as matched (normalised text)")
    advised_before_reveal: bool = Field(default=False, description="an emergency instruction came before the "
                                                                   "reveal (it does not stop the clock)")


class Speakability(BaseModel):
    """How speakable the agent's turns were: what a listener hears as noise, and turns too long to follow."""

    score: float | None = Field(description="share of agent turns with none of the problems below; None without "
                                            "agent turns")
    agent_turns: int
    flagged_turns: int = Field(description="agent turns with at least one problem")
    markdown: int = Field(description="written markdown marks: **, __, headings, list markers at line starts, "
                                      "backticks, table rows")
    spoken_markup: int = Field(description="markup read out and transcribed as words: 'asterisk', 'hashtag', "
                                           "'bullet point', 'backtick', 'dash dash'")
    urls: int = Field(description="URL marks: a written URL (https://, www., name.com) is one; of a spoken one, "
                                  "each piece heard ('h t t p s', 'colon slash slash', 'dot com')")
    emoji: int = Field(description="emoji characters in the text (speech does not keep them)")
    monologues: int = Field(description="agent turns over the word limit, or over the seconds limit when timed")
    longest_words: int = Field(description="words in the longest agent turn")
    longest_s: float | None = Field(default=None, description="seconds of the longest timed agent turn")


class RedFlagBargeIn(BaseModel):
    """The patient cut in on the agent with a turn that revealed a red-flag fact."""

    at_s: float = Field(description="call seconds at which the patient cut in")
    facts: list[str] = Field(description="the red-flag facts that patient turn revealed")
    agent_stopped: bool | None = Field(description="the agent stopped talking (the overlap's yielded, else its "
                                                   "speech ended soon after the cut-in); None: not recorded")
    addressed: bool | None = Field(description="the agent's next turn named a trigger of those facts or gave an "
                                               "emergency instruction; None: no agent turn followed")
    how: str | None = Field(default=None, description="what addressed it: 'advice: <phrase>' or 'mentions: <word>'")


class VoiceMeasures(BaseModel):
    """The clinical voice measures of one call (``scorers.voice_measures``)."""

    scenario_id: str
    k: int
    agent_latency_p50_s: float | None = Field(default=None, description="the call's own (its interaction's "
                                                                        "agent_latency_p50_s)")
    agent_latency_p95_s: float | None = Field(default=None, description="the call's own")
    safety_advice: SafetyAdvice | None = Field(default=None, description="None: the scenario has no red-flag fact "
                                                                        "the patient has (none, or every one "
                                                                        "denied)")
    speakability: Speakability
    patient_barge_ins: int = Field(default=0, description="overlaps the patient started")
    red_flag_barge_ins: list[RedFlagBargeIn] = Field(default_factory=list)


class VoiceSummary(BaseModel):
    """A run's calls, their voice measures pooled (``scorers.voice_summary``)."""

    calls: int
    agent_latency_p50_s: float | None = Field(default=None, description="the run's (Summary.live's) agent "
                                                                        "response latency, every reply pooled")
    agent_latency_p95_s: float | None = None
    agent_replies: int = 0
    red_flag_calls: int = Field(default=0, description="calls in which a red-flag fact was revealed")
    advice_given: int = 0
    advice_missing: int = 0
    advice_before_reveal: int = 0
    advice_p50_s: float | None = Field(default=None, description="median seconds from reveal to advice, over the "
                                                                 "timed calls that gave it")
    advice_p95_s: float | None = None
    advice_max_s: float | None = None
    advice_turns_p50: float | None = Field(default=None, description="median agent turns from reveal to advice")
    speakability: float | None = Field(default=None, description="share of agent turns without a problem, every "
                                                                 "call's turns pooled")
    agent_turns: int = 0
    flagged_turns: int = 0
    markdown: int = 0
    spoken_markup: int = 0
    urls: int = 0
    emoji: int = 0
    monologues: int = 0
    patient_barge_ins: int = 0
    red_flag_barge_ins: int = 0
    barge_in_agent_stopped: int = Field(default=0, description="red-flag barge-ins after which the agent stopped")
    barge_in_addressed: int = Field(default=0, description="red-flag barge-ins the agent's next turn addressed")
    per_call: list[VoiceMeasures] = Field(default_factory=list)
