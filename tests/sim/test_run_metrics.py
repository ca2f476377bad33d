"""The typed run metrics of summary.json (``Summary.voice``, ``.live``, ``.patient``) and the one percentile.

``sim.records.percentile`` is numpy's default percentile in pure Python; the blocks are pydantic models that load
summary.json files written when they were dicts, write the same keys, and render the same report lines.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from sim.records import (
    ConversationResult,
    LiveMetrics,
    RunMeta,
    Summary,
    Turn,
    UnderstandingMetrics,
    VoiceMetrics,
    percentile,
)
from sim.reports import render_html, render_report
from sim.summary import live_metrics, understanding_metrics, voice_metrics

# The voice, live and patient blocks exactly as the dict-producing code wrote them (a voice run whose results
# carried live-call interactions; counts written as floats), and the lines its report.md had.
OLD_BLOCKS = """
  "voice": {"wer_patient": 0.2031978180313327, "wer_agent": 0.13762292960662525, "mean_tts_s": 0.7350460695288348,
            "mean_effects_s": 0.06505803719341606, "mean_stt_s": 5.351029217111217,
            "audio_seconds": 211.4096598639456, "tts_cache_hit_ratio": 0.8055555555555556,
            "facts_missed_by_asr": 17.0, "messages": 36.0},
  "live": {"calls": 3, "patient_latency_p50_s": 1.1, "patient_latency_p95_s": 3.1,
           "patient_latency_mean_s": 1.3888888888888888, "patient_replies": 9, "agent_latency_p50_s": 1.6,
           "agent_latency_p95_s": 4.2, "agent_latency_mean_s": 1.8125, "agent_replies": 8, "interruptions": 3,
           "overlaps": 3, "overlap_s": 0.9500000000000001, "long_silences": 3, "max_silence_s": 3.3},
  "patient": {"facts_revealed": 25, "by_layer": {"trigger": 23, "intent": 2, "model": 0},
              "share": {"trigger": 0.92, "intent": 0.08, "model": 0.0}, "assessment_forms": {"plain": 4},
              "patient_model_warnings": 0}
"""
OLD_SUMMARY = """{
  "aggregate": 0.88, "aggregate_uncapped": 0.88, "aggregate_without_errors": 0.88,
  "safety_gate": {"triggered": false, "cap": 0.5, "threshold": 0.5, "scenarios": [], "reasons": {}},
  "qwk": 1.0, "qwk_pairs": 4, "pass_threshold": 0.75, "scenarios": [], "suites": [], "completed": 4, "errors": 0,
""" + OLD_BLOCKS + "}"
OLD_REPORT_LINES = """\
## Voice channel

- word error rate (intended vs heard): patient side 0.20, agent side 0.14
- facts the agent asked for but the patient did not hear (ASR): 17
- mean seconds per message: TTS 0.735, effects 0.065, STT 5.351; 211 s of audio; TTS cache hits 81%

## How the patient understood the agent

- facts revealed: 25; by layer: trigger 23 (92%), intent 2 (8%), model 0 (0%) (no --patient-model)
- assessments by form: plain 4

## Live call

- calls: 3; patient voice-to-voice latency (end of agent speech to first patient audio) p50 1.100 s, p95 3.100 s \
over 9 replies
- agent response latency (end of patient speech to first agent audio) p50 1.600 s, p95 4.200 s over 8 replies
- overlaps 3 (1.0 s), interruptions (a side stopped talking) 3, silences of 2 s or more 3 (longest 3.3 s)
"""
OLD_HTML_ITEMS = [
    "<ul><li>facts revealed: 25; by layer: trigger 23 (92%), intent 2 (8%), model 0 (0%) (no --patient-model)</li>"
    "<li>assessments by form: plain 4</li></ul>",
    "<ul><li>calls: 3; patient voice-to-voice latency (end of agent speech to first patient audio) p50 1.100 s, "
    "p95 3.100 s over 9 replies</li><li>agent response latency (end of patient speech to first agent audio) p50 "
    "1.600 s, p95 4.200 s over 8 replies</li><li>overlaps 3 (1.0 s), interruptions (a side stopped talking) 3, "
    "silences of 2 s or more 3 (longest 3.3 s)</li></ul>",
]


def _meta() -> RunMeta:
    return RunMeta(run_id="old", harness_version="test", model="scripted:reference", scenarios=[], k=1, seed=0,
                   created_at=0.0, channel="voice")


# ------------------------------------------------------------------------------------------------ percentile

@pytest.mark.parametrize("seed", range(20))
def test_percentile_is_numpys_default(seed: int) -> None:
    rng = random.Random(seed)
    for n in [1, 2, 3, 4, 5, 8, 9, 10, 31, 64, rng.randint(1, 200)]:
        values = [rng.choice([rng.uniform(0.0, 5.0), rng.gauss(1.0, 3.0), float(rng.randint(-3, 3)), 0.1, 0.7])
                  for _ in range(n)]
        for q in [0, 0.5, 5, 25, 33.3, 50, 66.7, 75, 90, 95, 99, 99.9, 100, rng.uniform(0, 100)]:
            assert percentile(values, q) == float(np.percentile(values, q)), (values, q)  # the same float


def test_percentile_edges() -> None:
    assert percentile([], 50) is None
    assert percentile([2.5], 0) == percentile([2.5], 50) == percentile([2.5], 100) == 2.5
    assert percentile([4, 1, 3, 2], 50) == 2.5  # unsorted ints, an even count: between the middle two
    assert percentile((1.0, 2.0), 95) == float(np.percentile([1.0, 2.0], 95))
    with pytest.raises(ValueError, match="from 0 to 100"):
        percentile([1.0], 101)


# ------------------------------------------------------------------------------------------------ live

def _call(interaction: dict[str, object] | None) -> ConversationResult:
    return ConversationResult(scenario_id="viral_uri", k=0, seed=0, harness_version="test", model="test", turns=[],
                              gathered_info=[], termination="hangup", agent_turns=0, turn_limit=8, started_at=0.0,
                              ended_at=1.0, interaction=interaction)


def test_live_metrics_interpolate_between_ranks() -> None:
    """The run-level percentiles are numpy's (linear), not a nearest rank: [0.4, 1.0, 1.3, 2.2] has p50 1.15."""
    live = live_metrics([_call({"patient_latency_s": [1.3, 0.4], "agent_latency_s": [0.9]}),
                         _call({"patient_latency_s": [2.2, 1.0], "agent_latency_s": []})])
    assert isinstance(live, LiveMetrics)
    assert live.patient_latency_p50_s == float(np.percentile([0.4, 1.0, 1.3, 2.2], 50)) == pytest.approx(1.15)
    assert live.patient_latency_p95_s == float(np.percentile([0.4, 1.0, 1.3, 2.2], 95))
    assert live.agent_latency_p50_s == live.agent_latency_p95_s == 0.9 and live.agent_replies == 1
    assert live.calls == 2 and live.interruptions == 0 and live.overlaps == 0 and live.max_silence_s == 0.0


# ------------------------------------------------------------------------------------------------ old summary.json

def test_an_old_summary_json_loads_into_the_typed_blocks() -> None:
    summary = Summary.model_validate_json(OLD_SUMMARY)
    assert isinstance(summary.voice, VoiceMetrics) and isinstance(summary.live, LiveMetrics)
    assert isinstance(summary.patient, UnderstandingMetrics)
    assert summary.voice.facts_missed_by_asr == 17 and type(summary.voice.facts_missed_by_asr) is int
    assert summary.voice.messages == 36 and summary.voice.wer_agent == 0.13762292960662525
    assert summary.live.patient_latency_p95_s == 3.1 and summary.live.agent_replies == 8
    assert summary.patient.by_layer == {"trigger": 23, "intent": 2, "model": 0}
    # written back with the same keys, in the same order, and the same values (counts as ints)
    old = json.loads("{" + OLD_BLOCKS + "}")
    new = json.loads(summary.model_dump_json())
    for block in ("voice", "live", "patient"):
        assert list(new[block]) == list(old[block]) and new[block] == old[block], block


def test_an_old_summary_json_renders_the_same_report() -> None:
    summary = Summary.model_validate_json(OLD_SUMMARY)
    report = render_report(_meta(), summary, {})
    assert OLD_REPORT_LINES in report
    page = render_html(_meta(), summary, {})
    for items in OLD_HTML_ITEMS:
        assert items in page


def test_an_unmeasured_wer_is_left_out_of_summary_json() -> None:
    """The dicts had a wer key only for a side with measured messages; the model writes the same keys."""
    old = {"wer_patient": 0.25, "mean_tts_s": 0.5, "mean_effects_s": 0.0, "mean_stt_s": 1.0, "audio_seconds": 3.0,
           "tts_cache_hit_ratio": 0.0, "facts_missed_by_asr": 0.0, "messages": 2.0}
    voice = VoiceMetrics.model_validate(old)
    assert voice.wer_agent is None
    assert json.loads(voice.model_dump_json()) == {**old, "facts_missed_by_asr": 0, "messages": 2}
    assert list(json.loads(voice.model_dump_json())) == list(old)
    assert "agent side n/a" in render_report(_meta(), Summary.model_validate_json(OLD_SUMMARY).model_copy(
        update={"voice": voice}), {})


def _turn(index: int, speaker: str, **kw: object) -> Turn:
    return Turn.model_validate({"index": index, "speaker": speaker, "text": "x", "started_at": 0.0,
                                "ended_at": 1.0, **kw})


def test_voice_and_understanding_metrics_are_typed() -> None:
    result = ConversationResult(
        scenario_id="viral_uri", k=0, seed=0, harness_version="test", model="test", gathered_info=["fever"],
        termination="assessment", agent_turns=1, turn_limit=8, started_at=0.0, ended_at=1.0,
        turns=[_turn(0, "patient", channel={"wer": 0.5, "tts_s": 0.2, "audio_s": 2.0, "tts_cached": 1.0},
                     revealed=["fever", "cough"], revealed_by={"fever": "intent"}),
               _turn(1, "agent", channel={"tts_s": 0.4, "stt_s": 1.0, "audio_s": 3.0}, asr_missed=["cough"],
                     assessment_form="plain")])
    voice = voice_metrics([result])
    assert voice is not None and voice.mean_tts_s == pytest.approx(0.3)
    assert voice == VoiceMetrics(wer_patient=0.5, wer_agent=None, mean_tts_s=voice.mean_tts_s, mean_effects_s=0.0,
                                 mean_stt_s=0.5, audio_seconds=5.0, tts_cache_hit_ratio=0.5, facts_missed_by_asr=1,
                                 messages=2)
    assert "wer_agent" not in json.loads(voice.model_dump_json())
    patient = understanding_metrics([result])
    assert patient == UnderstandingMetrics(facts_revealed=2, by_layer={"trigger": 1, "intent": 1, "model": 0},
                                           share={"trigger": 0.5, "intent": 0.5, "model": 0.0},
                                           assessment_forms={"plain": 1}, patient_model_warnings=0)
    assert voice_metrics([result.model_copy(update={"turns": [_turn(0, "patient")]})]) is None
