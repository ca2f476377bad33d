"""End of turn on a live call (audio.live._end_of_turn): the real Smart Turn v3.2 model on real Piper speech.

Nothing is mocked: the model is pipecat's bundled ONNX file, the speech is the built-in agent's Piper voice as a live
call sends it (``_to_wire_pcm``). Whether a clip is judged complete is asserted on examples the model separates
with a wide margin (probabilities measured on 2026-11-29: the full questions 0.90-0.95, the cuts 0.01-0.11, the
same with the cut 30 ms either way and 0.1 or 0.2 s of silence after). No timing is asserted.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from pipecat.frames.frames import TranscriptionFrame
from pipecat.processors.frame_processor import FrameDirection

from audio._pcm import RATE_16K
from audio.channel import CLINICIAN_STYLE
from audio.live import LiveSettings, PatientBrain
from audio.live._end_of_turn import WINDOW_S, FarAudio, TurnVerdict, open_ending, smart_turn, turn_hold_s
from audio.live._speaking import _to_wire_pcm
from audio.live._turns import EARLY_QUIET_S, JUDGE_LEAD_S
from audio.tts import DETERMINISTIC, PiperTTS
from tests.audio.live_helpers import SetClock, muted_pipecat

# (question, where its first words end in Piper's deterministic speech: Whisper's word timestamps, in seconds)
CUTS = [("Okay, and have you had any fever or chills?", 1.56),  # "Okay, and have you had | any fever or chills?"
        ("I'd like to ask about your chest pain, does it spread anywhere?", 2.70)]  # "... pain, does | it spread"
STOP_S = 0.2  # the silence the model hears after the speech: a VAD stop


quiet_pipecat = pytest.fixture(scope="module", autouse=True)(muted_pipecat)


@pytest.fixture(scope="module")
def tts() -> PiperTTS:
    return PiperTTS(disk_cache=False)


def _spoken(tts: PiperTTS, text: str) -> npt.NDArray[np.int16]:
    """``text`` as the built-in agent sends it on a live call: 16 kHz int16, Piper's edge silence trimmed."""
    speech = tts.synthesize(text, settings=DETERMINISTIC, style=CLINICIAN_STYLE)
    return np.frombuffer(_to_wire_pcm(speech.samples, speech.sample_rate), dtype=np.int16)


def _silence(seconds: float) -> npt.NDArray[np.int16]:
    return np.zeros(int(seconds * RATE_16K), dtype=np.int16)


def _as_heard(speech: npt.NDArray[np.int16]) -> npt.NDArray[np.int16]:
    """Half a second before the speech and a VAD stop's silence after it, as a live call hands it to the model."""
    return np.concatenate([_silence(0.5), speech, _silence(STOP_S)])


@pytest.mark.parametrize(("question", "cut_s"), CUTS)
def test_a_whole_question_is_complete_and_the_same_speech_cut_mid_phrase_is_not(tts: PiperTTS, question: str,
                                                                                 cut_s: float) -> None:
    speech = _spoken(tts, question)
    assert len(speech) / RATE_16K > cut_s + 0.5  # the cut leaves words unsaid
    whole = smart_turn().judge(_as_heard(speech))
    cut = smart_turn().judge(_as_heard(speech[:int(cut_s * RATE_16K)]))
    assert whole.complete and whole.probability > 0.8, whole
    assert not cut.complete and cut.probability < 0.2, cut
    assert whole.heard_s == pytest.approx(len(_as_heard(speech)) / RATE_16K)


def test_the_model_is_loaded_once_and_takes_float_or_int16(tts: PiperTTS) -> None:
    assert smart_turn() is smart_turn()
    speech = _as_heard(_spoken(tts, CUTS[0][0]))
    as_int16 = smart_turn().judge(speech)
    as_float = smart_turn().judge(speech.astype(np.float32) / 32768.0)
    assert as_int16.probability == pytest.approx(as_float.probability, abs=1e-4)
    empty = smart_turn().judge(np.zeros(0, dtype=np.int16))
    assert not empty.complete and empty.probability == 0.0 and empty.heard_s == 0.0
    long = smart_turn().judge(np.concatenate([_silence(20.0), speech]))  # only the last 8 s are heard
    assert long.heard_s == WINDOW_S


def test_far_audio_keeps_the_last_seconds_in_order() -> None:
    far = FarAudio(keep_s=1.0)
    frame = int(0.02 * RATE_16K)
    for i in range(100):  # 2 s of 20 ms frames, each holding its own index
        far.add(np.full(frame, i, dtype=np.int16).tobytes())
    last = far.last(0.5)
    assert len(last) == RATE_16K // 2 and last[0] == 75 and last[-1] == 99
    assert len(far.last(5.0)) >= RATE_16K and far.last(5.0)[-1] == 99  # what it kept: a second at least
    far.add(np.full(frame // 2, 7, dtype=np.int16).tobytes(), rate=RATE_16K // 2)  # 8 kHz is resampled to 16 kHz
    assert len(far.last(0.02)) == frame and FarAudio().last(1.0).size == 0


def test_the_hold_of_a_turn_by_verdict_and_question() -> None:
    patient, agent = LiveSettings(), LiveSettings(smart_turn_stop_s=0.45, vad_stop_s=0.6, turn_wait_s=0.0)
    done = TurnVerdict(complete=True, probability=0.9, seconds=0.04, heard_s=3.0)
    not_done = TurnVerdict(complete=False, probability=0.1, seconds=0.04, heard_s=3.0)
    asked, told = "Does the pain spread to your arm?", "It started this morning."
    assert turn_hold_s(patient, heard=asked, verdict=done) == 0.0
    assert turn_hold_s(patient, heard=asked, verdict=not_done) == pytest.approx(0.3)  # the vad path's stop
    assert turn_hold_s(patient, heard="Thank you.", verdict=done) == pytest.approx(1.0)  # and its turn wait
    assert turn_hold_s(patient, heard=asked, verdict=None) == pytest.approx(0.3)  # no verdict: the vad path's
    assert turn_hold_s(agent, heard=told, verdict=done) == 0.0  # no question rule on the agent's side
    assert turn_hold_s(agent, heard=told, verdict=not_done) == pytest.approx(0.6)
    # a question mark Whisper put after a pause in mid-sentence: the longest wait, whatever the model said
    assert turn_hold_s(patient, heard="And have you had any?", verdict=done) == pytest.approx(1.0)
    assert turn_hold_s(agent, heard="It gets worse when I", verdict=done) == pytest.approx(0.6)


@pytest.mark.parametrize("text", [
    "And have you had any?", "Is there a family history of?", "Does it get worse when you?",
    "Any problems with your...", "Okay, and", "Do you get it at rest or", "So, um", "Is it worse than",
    "I was going to ask whether",
    "Can you describe the", "Right, so if he", "And your breathing,", "It hurts when I"])
def test_a_transcript_that_stops_where_a_sentence_cannot_end_is_open(text: str) -> None:
    assert open_ending(text)


@pytest.mark.parametrize("text", [
    "Does the pain spread anywhere?", "Have you had this before?", "Do you smoke?", "You smoke, do you?",
    "Is it there all the time?", "What are you allergic to?", "Who do you live with?", "Where are you from?",
    "Thank you.", "Is that so?", "Any allergies?", "How long has it been going on?", "", "   "])
def test_a_finished_sentence_is_not_open(text: str) -> None:
    assert not open_ending(text)


def test_the_setting_chooses_the_vad_stop() -> None:
    assert LiveSettings().end_of_turn == "smart-turn"
    assert LiveSettings().listening_stop_s == pytest.approx(0.1)
    assert LiveSettings(end_of_turn="vad").listening_stop_s == pytest.approx(0.3)
    with pytest.raises(ValueError):
        LiveSettings(end_of_turn="silence")  # type: ignore[arg-type]


class _Patient:
    opening_line = "Hello."
    gathered_info: list[str] = []

    def respond(self, message: str) -> Any:
        class Answer:
            text, revealed, kind, held, persona_note = "It started this morning.", [], "facts", [], None
        return Answer()


async def _hear(settings: LiveSettings, speech: npt.NDArray[np.int16], text: str) -> PatientBrain:
    """The patient brain hears ``speech`` (20 ms frames through its input tap's hook), its VAD events and transcript,
    and replies; its clock is set, so its hold (if any) is at most the VAD path's stop, 0.3 s."""
    clock = SetClock()
    brain = PatientBrain(patient=_Patient(), turn_limit=10, is_assessment=lambda _t: False, clock=clock,
                         settings=settings, sink=lambda _e: None, scenario_id="s", k=0)
    pushed: list[Any] = []

    async def push_frame(frame: Any, direction: Any = None) -> None:
        pushed.append(frame)

    brain.push_frame = push_frame  # type: ignore[method-assign]
    heard = np.concatenate([_silence(0.5), speech, _silence(settings.listening_stop_s)])
    frame = int(0.02 * RATE_16K)
    for i in range(0, len(heard), frame):
        clock.at = (i + frame) / RATE_16K
        brain.on_far_audio(heard[i:i + frame].tobytes(), RATE_16K)
        if i == int(0.7 * RATE_16K) // frame * frame:
            await brain._far_started(0.2)
    clock.at = len(heard) / RATE_16K
    brain._far_stopped(settings.listening_stop_s)
    await brain.process_frame(TranscriptionFrame(text, "", "t"), FrameDirection.DOWNSTREAM)
    assert brain._reply_task is not None
    await brain._reply_task
    assert [type(f).__name__ for f in pushed].count("SpeakFrame") == 1  # it replied either way
    return brain


@pytest.mark.parametrize("stop_s", [0.1, 0.2])
async def test_the_patient_brain_judges_the_agents_turn_with_the_model(tts: PiperTTS, stop_s: float) -> None:
    question, cut_s = CUTS[0]
    speech = _spoken(tts, question)
    settings = LiveSettings(smart_turn_stop_s=stop_s)
    whole = await _hear(settings, speech, question)
    (verdict,) = whole.verdicts
    assert verdict.complete
    spoken_s = len(speech) / RATE_16K  # the model heard the turn from half a second before its speech ...
    if stop_s - JUDGE_LEAD_S < EARLY_QUIET_S:  # ... to the VAD's stop
        assert verdict.heard_s == pytest.approx(spoken_s + 0.5 + stop_s, abs=0.03)
    else:  # ... to JUDGE_LEAD_S before it, asked early in the pause (quiet by RMS starts just before the last samples)
        assert spoken_s + 0.5 + stop_s - JUDGE_LEAD_S - 0.1 <= verdict.heard_s <= spoken_s + 0.5 + stop_s - JUDGE_LEAD_S
    cut = await _hear(settings, speech[:int(cut_s * RATE_16K)], "Okay, and have you had?")
    assert [v.complete for v in cut.verdicts] == [False]
    assert whole.holds == [0.0] and cut.holds == [pytest.approx(0.3)]


async def test_the_patient_brain_waits_out_a_question_mark_after_an_open_word(tts: PiperTTS) -> None:
    """Whisper often writes "?" after a clinician's pause ("And have you had any?"); the patient waits the longest
    hold (1.0 s), so an agent that goes on within it is not answered early."""
    question = CUTS[0][0]
    brain = await _hear(LiveSettings(), _spoken(tts, question), "And have you had any?")
    assert brain.holds == [pytest.approx(1.0)]


async def test_on_the_vad_path_the_model_is_not_asked(tts: PiperTTS) -> None:
    question = CUTS[0][0]
    brain = await _hear(LiveSettings(end_of_turn="vad", turn_wait_s=0.0), _spoken(tts, question), question)
    assert brain.verdicts == [] and brain.far_audio.last(1.0).size == 0
