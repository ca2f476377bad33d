"""The red-flag barge-in on a live call (``voice: {barge_in_red_flag: true}``), at the patient brain, no speech models.

The brain's own log is driven with a set clock (no pacer, no VAD, no Whisper): the agent talks, the patient's
barge-in timer fires (it sleeps 0 s), the patient cuts in with its most important untold red flag, and the call is
then made a ``ConversationResult`` (``sim.live.to_result``) and measured (``scorers.voice_measures``) as a real call
is.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pipecat.frames.frames import TranscriptionFrame
from pipecat.processors.frame_processor import FrameDirection

from audio.live import LiveSettings, PatientBrain
from audio.live._call import _outcome
from audio.live._recording import CallRecorder
from scenarios import Scenario
from scenarios.personas import with_persona
from scorers import voice_measures
from scorers.evaluators import is_denial
from sim.live import red_flag_line, to_result
from sim.patient import PatientSimulator
from sim.records import ConversationResult, Event
from tests.audio.live_helpers import SetClock


def _brain(scenario: Scenario, *, barge_in_after_s: float | None = 0.01) -> tuple[PatientBrain, PatientSimulator,
                                                                                 SetClock, list[Any], list[Event]]:
    patient = PatientSimulator(scenario, seed=0)
    clock = SetClock()
    events: list[Event] = []
    brain = PatientBrain(patient=patient, turn_limit=10, is_assessment=lambda _t: False,
                         red_flag=red_flag_line(scenario, patient), clock=clock,
                         settings=LiveSettings(barge_in_after_s=barge_in_after_s, turn_wait_s=0.0),
                         sink=events.append,
                         scenario_id=scenario.id, k=0)
    pushed: list[Any] = []

    async def push_frame(frame: Any, direction: Any = None) -> None:
        pushed.append(frame)

    brain.push_frame = push_frame  # type: ignore[method-assign]
    return brain, patient, clock, pushed, events


async def _agent_talks_and_patient_cuts_in(brain: PatientBrain, clock: SetClock) -> None:
    """The agent starts at 3.0 s; at 6.0 s, still voiced, the barge-in timer fires and the patient is audible."""
    clock.at = 3.2
    await brain._far_started(0.2)  # the VAD's start, 0.2 s after the speech began
    assert brain._barge_task is not None
    clock.at = 6.0
    brain.on_far_voice(6.0)
    await brain._barge_task  # its sleep is max(0, 0.01 - 0.2) = 0 s: no wall-clock race
    brain.on_own_speech(True, 6.0)  # the pacer: the interjection becomes audible while the agent talks


async def _agent_says(brain: PatientBrain, clock: SetClock, text: str, start: float, end: float) -> None:
    """The agent's speech from ``start`` (unless it is already talking) to ``end``, transcribed as ``text``.

    Through the brain's frames, as VAD and Whisper report them; the patient's reply to it (``turn_wait_s`` 0) is
    decided before this returns.
    """
    if not brain._far_speaking:
        clock.at = start + 0.2
        await brain._far_started(0.2)
        if brain._barge_task is not None:
            await brain._barge_task  # the agent is not voiced now: no second barge-in
    clock.at = end + 0.3
    brain._far_stopped(0.3)
    await brain.process_frame(TranscriptionFrame(text, "", "t"), FrameDirection.DOWNSTREAM)
    if brain._reply_task is not None:
        await brain._reply_task


async def _result(brain: PatientBrain, patient: PatientSimulator, scenario: Scenario, tmp: Path) -> ConversationResult:
    connected = asyncio.Event()
    connected.set()
    outcome = await _outcome(brain, errors=[], no_call=lambda: "unused", recorder=CallRecorder(brain.clock),
                             recording=None, connected=connected, started=0.0, door=None)
    return to_result(outcome, scenario, k=0, seed=0, model="m", turn_limit=10, run_dir=tmp,
                     revealed_by=dict(patient.revealed_by))


async def test_the_patient_cuts_in_with_its_most_important_untold_red_flag(by_id: dict[str, Scenario]) -> None:
    scenario = with_persona(by_id["acs_chest_pain"], "red-flag-barge-in")
    brain, patient, clock, pushed, events = _brain(scenario)
    await _agent_talks_and_patient_cuts_in(brain, clock)
    (turn,) = brain.turns
    # radiation: critical, first of expected.red_flags; said in the fact's own words, unasked
    assert turn.speaker == "patient" and turn.text == "Sorry, but it goes into my left arm and up into my jaw."
    assert turn.revealed == ["radiation"] and turn.answer_kind == "facts"
    assert patient.gathered_info == ["radiation"] and patient.revealed_by == {"radiation": "barge_in"}
    assert brain.replies == 0 and brain.red_flag_told  # an interjection, not a reply
    spoken = [f for f in pushed if type(f).__name__ == "SpeakFrame"]
    assert [f.text for f in spoken] == [turn.text]  # through the same speech path as every patient line
    assert any(e.type == "turn" and getattr(e, "revealed", None) == ["radiation"] for e in events)
    assert brain.timeline.overlaps == [{"at": 6.0, "by": "patient", "yielded": False, "duration_s": 0.0}]


async def test_a_second_barge_in_reveals_nothing_and_no_red_flag_left_falls_back(by_id: dict[str, Scenario]) -> None:
    scenario = with_persona(by_id["acs_chest_pain"], "red-flag-barge-in")
    brain, patient, _clock, _pushed, _events = _brain(scenario)
    first = await brain.barge_in()
    second = await brain.barge_in()
    assert first.revealed == ["radiation"] and second.revealed == [] and "cut in" in second.text
    assert patient.gathered_info == ["radiation"]  # once a call, even with sweating_nausea still untold
    told = PatientSimulator(scenario, seed=0)
    told.respond("Does the pain go to your arm? Any sweating or nausea?")
    assert told.barge_in_red_flag() is None  # both red flags already told: nothing to cut in with
    brain2, _p, _c, _pu, _e = _brain(scenario)
    brain2.red_flag = told.barge_in_red_flag
    assert (await brain2.barge_in()).revealed == []


def test_red_flags_the_patient_denies_are_never_cut_in_with(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["acs_chest_pain"]
    tree = [f.model_copy(update={"answer": "No, it stays in my chest."}) if f.id == "radiation" else f
            for f in scenario.information_tree]
    denied = scenario.model_copy(update={"information_tree": tree})
    reply = PatientSimulator(denied, seed=0).barge_in_red_flag(denied=is_denial)
    assert reply is not None and reply.revealed == ["sweating_nausea"]
    assert reply.text == "Sorry, but I've been sweating a lot and I feel sick to my stomach."


def test_without_the_option_there_is_no_red_flag_line(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["acs_chest_pain"]
    assert red_flag_line(scenario, PatientSimulator(scenario)) is None


async def test_an_agent_that_stops_and_addresses_the_red_flag(by_id: dict[str, Scenario], tmp_path: Path) -> None:
    """The agent yields 0.5 s into the cut-in; the patient's answer to what it heard of the agent is queued behind the
    red flag (so the red flag's message has a start time and no end: one stretch of speech, 6.0 to 10.5 s)."""
    scenario = with_persona(by_id["acs_chest_pain"], "red-flag-barge-in")
    brain, patient, clock, _pushed, _events = _brain(scenario)
    await _agent_talks_and_patient_cuts_in(brain, clock)
    await _agent_says(brain, clock, "Let me ask you about your medical history and", 3.0, 6.5)
    brain.on_own_speech(False, 10.5)
    await _agent_says(brain, clock, "Pain going into your arm and jaw worries me. Call 911 now.", 11.0, 14.0)
    result = await _result(brain, patient, scenario, tmp_path)
    assert [t.speaker for t in result.turns] == ["patient", "agent", "patient", "agent", "patient"]
    cut_in = result.turns[0]
    assert cut_in.revealed == ["radiation"] and cut_in.revealed_by == {"radiation": "barge_in"}
    assert "speech_end_s" not in cut_in.channel and "radiation" in result.gathered_info
    m = voice_measures(result, scenario)
    assert m.patient_barge_ins == 1 and len(m.red_flag_barge_ins) == 1
    b = m.red_flag_barge_ins[0]
    assert b.facts == ["radiation"] and b.at_s == 6.0
    assert b.agent_stopped is True and b.addressed is True and b.how == "advice: call 911"


async def test_an_agent_that_talks_on_and_ignores_it(by_id: dict[str, Scenario], tmp_path: Path) -> None:
    scenario = with_persona(by_id["acs_chest_pain"], "red-flag-barge-in")
    brain, patient, clock, _pushed, _events = _brain(scenario)
    await _agent_talks_and_patient_cuts_in(brain, clock)
    brain.on_own_speech(False, 9.0)
    await _agent_says(brain, clock, "Let me ask you about your medical history and any allergies and medicines you "
                                    "take, and whether anyone in the family has had heart trouble?", 3.0, 12.0)
    await _agent_says(brain, clock, "Do you smoke at all?", 13.0, 14.0)
    result = await _result(brain, patient, scenario, tmp_path)
    (b,) = voice_measures(result, scenario).red_flag_barge_ins
    assert b.facts == ["radiation"] and b.agent_stopped is False and b.addressed is False and b.how is None


def test_encsim_live_cuts_in_after_three_seconds_unless_told_otherwise(by_id: dict[str, Scenario],
                                                                        tmp_path: Path) -> None:
    from sim.live import LiveRunSettings

    told = with_persona(by_id["acs_chest_pain"], "red-flag-barge-in")
    assert LiveRunSettings(out=tmp_path).side_settings(told).barge_in_after_s == 3.0
    assert LiveRunSettings(out=tmp_path, barge_in_after_s=1.0).side_settings(told).barge_in_after_s == 1.0
    assert LiveRunSettings(out=tmp_path).side_settings(by_id["acs_chest_pain"]).barge_in_after_s is None


async def test_a_patient_who_cut_in_does_not_yield_to_the_agent_going_on_after_a_breath(
        by_id: dict[str, Scenario]) -> None:
    """With smart-turn's 0.1 s VAD stop, a breath in the agent's monologue is a stop and a new start. The patient
    who cut in yields only when the agent starts again after a real pause (the vad path's 0.3 s stop), not to the
    same stretch of talk going on."""
    brain, _patient, clock, _pushed, _events = _brain(by_id["viral_uri"])
    yielded: list[float] = []

    async def record_yield() -> None:
        yielded.append(clock.at)

    brain._yield = record_yield  # type: ignore[method-assign]
    await _agent_talks_and_patient_cuts_in(brain, clock)
    brain.pacer = type("Speaking", (), {"speaking": True})()  # type: ignore[assignment]
    assert brain._barged_this_turn
    clock.at = 6.5
    brain._far_stopped(0.1)  # a 0.15 s breath between the agent's sentences ...
    clock.at = 6.75
    await brain._far_started(0.2)  # ... and it goes on
    assert yielded == []
    clock.at = 8.0
    brain._far_stopped(0.1)  # a real pause (0.6 s), then the agent starts again over the patient
    clock.at = 8.8
    await brain._far_started(0.2)
    assert yielded == [8.8]
