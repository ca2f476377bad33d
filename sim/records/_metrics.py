"""The run-level metric blocks of ``Summary`` and the one percentile definition every latency figure uses.

- ``VoiceMetrics`` (``Summary.voice``): a voice run's WER per side, ASR-missed facts, stage times, audio seconds.
- ``LiveMetrics`` (``Summary.live``): a run's live calls pooled: latency p50/p95/mean per side, overlaps,
  interruptions, long silences.
- ``UnderstandingMetrics`` (``Summary.patient``): how the patient understood the agent: facts per layer,
  assessment forms, patient-model warnings.
- ``percentile``: numpy's default percentile (linear interpolation between closest ranks) in pure Python, so the
  run-level figures (``sim.summary.live_metrics``), the per-call ones (``audio.live.InteractionMetrics``) and the
  dashboard's median all agree.

The blocks are written to summary.json with the keys the dicts they replace always had (a WER side that was not
measured is left out, as it always was), so summary.json files written before them load unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

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
