"""The pacer keeps the recording on the call clock even when the event loop stalls.

cc9 failed the live call's silence check because, after a stall, the pacer sent the frames it owed back
to back: the recorder laid them end to end and ran ahead of the clock that stamps the speech events.
Here the stall is forced (the loop is blocked on purpose), so the check cannot pass by luck.
"""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from audio.live import FRAME_BYTES, LIVE_RATE, CallClock, CallRecorder, RealtimePacer

TONE = (8000 * np.sin(np.arange(LIVE_RATE) * 2 * np.pi * 440 / LIVE_RATE)).astype(np.int16)  # 1 s, loud


async def _play_with_a_stall(stall_s: float) -> tuple[np.ndarray, list[tuple[bool, float]]]:
    clock = CallClock()
    recorder = CallRecorder(clock)
    events: list[tuple[bool, float]] = []
    pacer = RealtimePacer(clock=clock, recorder=recorder, on_speech=lambda start, at: events.append((start, at)))

    async def sink(frame: object, direction: object = None) -> None:
        return None

    pacer.push_frame = sink  # type: ignore[method-assign]
    pacer._buffer += TONE.tobytes()
    task = asyncio.create_task(pacer._tick())
    try:
        await asyncio.sleep(0.3)
        time.sleep(stall_s)  # the loaded machine: nothing runs on the loop meanwhile  # noqa: ASYNC251
        while not (events and not events[-1][0]):  # noqa: ASYNC110
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.1)
    finally:
        task.cancel()
    recorder.stop()
    return recorder.stereo()[:, 0], events


async def test_a_stall_does_not_put_the_recording_ahead_of_the_speech_events() -> None:
    left, events = await _play_with_a_stall(0.5)
    assert [start for start, _ in events] == [True, False]
    started, stopped = events[0][1], events[1][1]
    loud = np.flatnonzero(np.abs(left) > 1000)
    first_s, last_s = loud[0] / LIVE_RATE, (loud[-1] + 1) / LIVE_RATE
    frame_s = FRAME_BYTES / 2 / LIVE_RATE
    # every voiced sample lies between the start and stop events, give or take one frame
    assert started - frame_s - 0.005 <= first_s, (started, first_s)
    assert last_s <= stopped + 1e-4, (last_s, stopped)
    # the whole tone was played (the stall delayed it, it dropped nothing)
    energy = float(np.sum(left.astype(np.float64) ** 2))
    assert energy == pytest.approx(float(np.sum(TONE.astype(np.float64) ** 2)), rel=1e-6)
