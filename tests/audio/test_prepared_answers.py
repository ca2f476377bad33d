"""Prepared answers: the patient's likely first sentences synthesised ahead, so a reply is heard at once (issue 37).

The audio of a prepared sentence must be exactly what speaking it would synthesise, preparation must never run
while the side is speaking, and every scripted reply of a patient must start with a prepared sentence.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pipecat.frames.frames import OutputAudioRawFrame
from pipecat.processors.frame_processor import FrameDirection

from audio.live._speaking import PiperSpeaker, SpeakFrame, sentences
from audio.tts import PiperTTS, Speech, VoiceStyle, style_for_profile
from scenarios import LoadedScenario
from sim.agents.scripted import ask
from sim.patient import PatientSimulator
from sim.patient.persona import changes_text


@pytest.fixture(scope="module")
def tts() -> PiperTTS:
    return PiperTTS(disk_cache=False, memory_cache_size=0)  # nothing cached: every line is synthesised


class Logged:
    """``synthesize_async`` of a real voice, logging when each sentence's synthesis starts and ends."""

    def __init__(self, tts: PiperTTS) -> None:
        self.tts = tts
        self.log: list[tuple[str, str]] = []

    async def synthesize_async(self, text: str, **kwargs: Any) -> Speech:
        self.log.append(("start", text))
        speech = await self.tts.synthesize_async(text, **kwargs)
        self.log.append(("end", text))
        return speech


def _speaker(tts: Any, style: VoiceStyle | None = None) -> tuple[PiperSpeaker, list[bytes], list[int]]:
    heard: list[int] = []
    speaker = PiperSpeaker(tts=tts, style=style, on_first_audio=heard.append)
    pushed: list[bytes] = []

    async def push(frame: Any, direction: FrameDirection = FrameDirection.DOWNSTREAM) -> None:
        if isinstance(frame, OutputAudioRawFrame):
            pushed.append(frame.audio)

    speaker.push_frame = push  # type: ignore[method-assign]
    return speaker, pushed, heard


async def _say(speaker: PiperSpeaker, text: str) -> None:
    await speaker.process_frame(SpeakFrame(text=text, turn=1), FrameDirection.DOWNSTREAM)
    task = speaker._task
    assert task is not None
    await task


async def test_a_prepared_first_sentence_is_heard_without_synthesis_and_sounds_the_same(
        tts: PiperTTS, library: list[LoadedScenario]) -> None:
    reply = "Yes, it started this morning. It's worse when I breathe in."
    style = style_for_profile(library[0].scenario.patient_profile)  # prepared in the voice it is spoken in
    live, live_audio, _ = _speaker(tts, style)
    await _say(live, reply)
    logged = Logged(tts)
    ready, ready_audio, heard = _speaker(logged, style)
    assert await ready.prepare(["Yes, it started this morning. Something else.", "No, nothing like that."]) == 2
    logged.log.clear()
    await _say(ready, reply)
    assert logged.log == [("start", "It's worse when I breathe in."), ("end", "It's worse when I breathe in.")]
    assert ready_audio == live_audio  # the same samples, byte for byte: the voice is deterministic
    assert heard == [1] and (ready.from_prepared, ready.replies) == (1, 1)
    assert (live.from_prepared, live.replies) == (0, 1)


async def test_preparing_waits_while_the_side_speaks(tts: PiperTTS) -> None:
    logged = Logged(tts)
    speaker, _, _ = _speaker(logged)
    reply = "My chest hurts. It has been a while. I am worried."
    lines = ["No, not that I've noticed.", "I'm not sure, to be honest.", "It is a pressing feeling."]
    preparing = asyncio.create_task(speaker.prepare(lines))
    while not logged.log:  # the first prepared sentence is being synthesised  # noqa: ASYNC110
        await asyncio.sleep(0.001)
    await _say(speaker, reply)
    assert await preparing == 3
    said = sentences(reply)
    spoken = [i for i, (_, text) in enumerate(logged.log) if text in said]
    first, last = spoken[0], spoken[-1]
    # only the sentence that was already under way when the reply came ends inside the reply's synthesis
    inside = [entry for entry in logged.log[first:last] if entry[1] not in said]
    assert inside == [("end", lines[0])], logged.log
    assert [entry for entry in logged.log[last + 1:] if entry[0] == "start"] == [("start", s) for s in lines[1:]]


async def test_preparing_runs_only_while_the_side_itself_talks(tts: PiperTTS) -> None:
    logged = Logged(tts)
    speaker, _, _ = _speaker(logged)
    speaker.on_own_speech(True)
    speaker.on_own_speech(False)  # the call is on and this side is silent: the far end talks, or thinks
    preparing = asyncio.create_task(speaker.prepare(["Okay then."]))
    for _ in range(20):
        await asyncio.sleep(0.01)
    assert logged.log == [] and not preparing.done()
    speaker.on_own_speech(True)  # this side talks: the far end listens
    assert await preparing == 1
    assert logged.log == [("start", "Okay then."), ("end", "Okay then.")]


async def test_a_line_piper_cannot_speak_is_skipped(tts: PiperTTS) -> None:
    speaker, _, _ = _speaker(tts)
    assert await speaker.prepare(["...", "Okay.", "   "]) == 1


def test_every_scripted_reply_starts_with_a_prepared_sentence(library: list[LoadedScenario]) -> None:
    checked = 0
    for loaded in library:
        scenario = loaded.scenario
        if changes_text(scenario.patient_profile.persona) or scenario.imaging is not None:
            continue
        patient = PatientSimulator(scenario)
        firsts = {sentences(line)[0] for line in patient.answer_openings()}
        assert sentences(patient.opening_line)[0] in firsts
        for message in [*(ask([fact]) for fact in scenario.information_tree), "What's your favourite film?",
                        "Have you been abroad?", "Anything else you've noticed?", "How is the pain now?"]:
            reply = patient.respond(message)
            assert sentences(reply.text)[0] in firsts, (scenario.id, message, reply.text)
            checked += 1
    assert checked > 300



async def test_preparing_waits_while_the_far_end_talks_over_this_side(tts: PiperTTS) -> None:
    logged = Logged(tts)
    far = {"quiet": False}
    speaker = PiperSpeaker(tts=logged, style=None, on_first_audio=lambda _turn: None,  # type: ignore[arg-type]
                           far_quiet=lambda: far["quiet"])
    preparing = asyncio.create_task(speaker.prepare(["Okay then."]))  # this side talks, and so does the far end
    for _ in range(20):
        await asyncio.sleep(0.01)
    assert logged.log == [] and not preparing.done()
    far["quiet"] = True
    assert await preparing == 1
