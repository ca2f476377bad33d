"""End of turn: whether the far end has finished its turn, judged from its voice by Smart Turn v3.2.

Smart Turn is pipecat's end-of-turn model (``pipecat.audio.turn.smart_turn``): a small Whisper-encoder classifier
in ONNX (``smart-turn-v3.2-cpu.onnx``, 8.7 MB) shipped inside the installed pipecat package, so it runs offline and
nothing is ever downloaded. What pipecat 1.14's source says it does (``local_smart_turn_v3.py``,
``base_smart_turn.py``): it takes 16 kHz mono float32 audio of the speaker's turn, keeps the last 8 s (shorter
audio is padded with zeros in front), computes Whisper log-mel features and returns the probability that the turn is
complete; above 0.5 it is ``complete``. It is synchronous, CPU only, one ONNX thread: a median of 39 ms a call on
this 2-core machine, idle (20 calls, 2026-11-29; 50-70 ms while the machine was busy; two ONNX threads were slower,
53 ms). pipecat feeds it the turn from half a second before the VAD's start to the VAD's stop.

``SmartTurn`` wraps that model once per process (``smart_turn()``: the ONNX session is loaded at the first call,
thread-safe) and judges a clip (``judge``, blocking; ``judge_turn`` loads and runs it on a worker thread, so the
event loop never does). ``FarAudio`` keeps the last seconds of the far end's audio as it arrives, so a side can
hand the model the far end's turn so far when its VAD stops. ``turn_hold_s`` is what a side makes of the verdict.

How a live call uses the verdict (``LiveSettings.end_of_turn``): see ``audio.live._turns.TurnTaker``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from audio._pcm import RATE_16K, int16_samples, resample_int16
from audio.live._settings import LiveSettings

WINDOW_S = 8.0         # the model hears the last 8 s of a turn (local_smart_turn_v3: truncate_audio_to_last_n_seconds)
PRE_SPEECH_S = 0.5     # audio kept before the turn's first speech, as pipecat does (SmartTurnParams.pre_speech_ms)
COMPLETE_ABOVE = 0.5   # the model's own threshold (LocalSmartTurnAnalyzerV3._predict_endpoint)


@dataclass(frozen=True)
class TurnVerdict:
    """What the end-of-turn model said about one clip.

    Attributes:
        complete: the model judges the turn finished (``probability`` above 0.5).
        probability: the model's probability that the turn is complete.
        seconds: how long the inference took (wall clock, on its worker thread).
        heard_s: seconds of audio the model was given.
    """

    complete: bool
    probability: float
    seconds: float
    heard_s: float


class SmartTurn:
    """Smart Turn v3.2, the ONNX model bundled with pipecat, loaded once; stateless, so every call may share it.

    The analyzer is pipecat's ``LocalSmartTurnAnalyzerV3`` (bundled model, one ONNX thread). It is used only as a
    predictor: ``judge`` calls its ``_predict_endpoint`` on a whole clip (resampling, 8 s window, features, ONNX run:
    no state), not its frame-by-frame buffering, which times a turn on its own clock and holds one stream's audio.
    """

    def __init__(self) -> None:
        from pipecat.audio.turn.smart_turn.local_smart_turn_v3 import LocalSmartTurnAnalyzerV3

        self._analyzer = LocalSmartTurnAnalyzerV3(sample_rate=RATE_16K)
        self._analyzer.set_sample_rate(RATE_16K)

    def judge(self, samples: npt.NDArray[np.int16] | npt.NDArray[np.float32]) -> TurnVerdict:
        """Whether the turn in ``samples`` (16 kHz mono; int16 PCM or float in [-1, 1]) is complete (blocking).

        Args:
            samples: the speaker's turn so far, ending now (its last 8 s count).

        Returns:
            The verdict; an empty clip is judged incomplete with probability 0 and no inference.
        """
        x = np.asarray(samples)
        audio = x.astype(np.float32) / 32768.0 if x.dtype == np.int16 else x.astype(np.float32)
        audio = audio[-int(WINDOW_S * RATE_16K):]
        if audio.size == 0:
            return TurnVerdict(complete=False, probability=0.0, seconds=0.0, heard_s=0.0)
        started = time.perf_counter()
        result = self._analyzer._predict_endpoint(audio)
        probability = float(result["probability"])
        return TurnVerdict(complete=probability > COMPLETE_ABOVE, probability=probability,
                           seconds=time.perf_counter() - started, heard_s=audio.size / RATE_16K)


_MODEL: SmartTurn | None = None
_MODEL_LOCK = threading.Lock()


def smart_turn() -> SmartTurn:
    """The process-wide ``SmartTurn``, loaded at the first call (thread-safe; never downloads)."""
    global _MODEL
    with _MODEL_LOCK:
        if _MODEL is None:
            _MODEL = SmartTurn()
        return _MODEL


_THREADS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="smart-turn")  # not the loop's: see judge_turn


async def judge_turn(samples: npt.NDArray[np.int16] | npt.NDArray[np.float32]) -> TurnVerdict:
    """``smart_turn().judge(samples)`` on a worker thread: the event loop never loads or runs the model.

    The threads are the model's own (two: both sides of a call in one process), so a verdict never queues behind
    the transcriptions and syntheses that fill the event loop's default executor.
    """
    return await asyncio.get_running_loop().run_in_executor(_THREADS, lambda: smart_turn().judge(samples))


class FarAudio:
    """The last ``keep_s`` seconds of the far end's audio, 16 kHz int16, as it arrived.

    A live call's far end sends audio continuously (its pacer sends silence between lines), so the last ``n``
    seconds of samples are the last ``n`` seconds of the call.
    """

    def __init__(self, keep_s: float = WINDOW_S + PRE_SPEECH_S + 1.0) -> None:
        self._keep = int(keep_s * RATE_16K)
        self._chunks: deque[npt.NDArray[np.int16]] = deque()
        self._samples = 0

    def add(self, pcm: bytes, rate: int = RATE_16K) -> None:
        """Append one frame of int16 PCM at ``rate`` (resampled to 16 kHz)."""
        samples = int16_samples(pcm)
        if rate != RATE_16K:
            samples = resample_int16(samples, rate, RATE_16K)
        self._chunks.append(samples)
        self._samples += samples.size
        while self._chunks and self._samples - self._chunks[0].size >= self._keep:
            self._samples -= self._chunks.popleft().size

    def last(self, seconds: float) -> npt.NDArray[np.int16]:
        """The last ``seconds`` of audio (less if less has arrived)."""
        n = max(0, min(int(seconds * RATE_16K), self._samples))
        if n == 0:
            return np.zeros(0, dtype=np.int16)
        return np.concatenate(list(self._chunks))[-n:]


# Words after which an English sentence is not over: articles, determiners and possessives, "of" and "than",
# coordinating conjunctions, subordinators and fillers ("Have you had any", "a family history of", "and", "um").
# Whisper writes a question mark after many such fragments when the speaker pauses ("And have you had any?"), so the
# mark alone would answer a clinician who has only paused.
_OPEN_WORDS = frozenset("""a an the any some every each your my our their of than and or but nor because if when
while whether although unless um uh er erm uhm""".split())
# A subordinator or question word followed by a subject pronoun is a clause still waiting for its verb ("when you").
_OPENERS = frozenset("when if while because whether although unless where what how that since before after".split())
_SUBJECTS = frozenset("you i he she they we".split())


def open_ending(text: str) -> bool:
    """Whether ``text`` (a transcript so far) stops where an English sentence cannot end.

    True when it trails off ("...", a dash or a comma), or its last word is one of the closed-class words after which
    a sentence goes on (an article, determiner or possessive; "of", "than"; a conjunction or subordinator; a filler),
    or its last two words are a subordinator or question word and a subject pronoun ("when you"). Punctuation
    Whisper added is ignored: "Have you had any?" is open. A word class, not a list of phrases: anything else, a
    finished question included, is not open.
    """
    stripped = text.rstrip()
    if not stripped:
        return False
    if stripped.endswith(("...", "\u2026", "-", "\u2014", ",")):
        return True
    words = [w.strip(".,?!;:\"'()").lower() for w in stripped.split()]
    words = [w for w in words if w]
    if not words:
        return False
    if words[-1] in _OPEN_WORDS:
        return True
    return len(words) >= 2 and words[-2] in _OPENERS and words[-1] in _SUBJECTS


def turn_hold_s(settings: LiveSettings, *, heard: str, verdict: TurnVerdict | None) -> float:
    """With ``end_of_turn="smart-turn"``: how much silence after the far end's speech ends its turn.

    Judged complete, a turn that asks a question (its transcript ends in "?"), or any turn on a side with no
    question rule (``turn_wait_s`` 0), is over now (0), unless its transcript stops where a sentence cannot end
    (``open_ending``: "Have you had any?"). Any other turn, or one the model could not judge (None), is over when the
    ``vad`` path would end it: after ``vad_stop_s``, and ``turn_wait_s`` more without a question; an open ending
    waits that longer time too, question mark or not. So the model can only make a reply earlier than the ``vad``
    path does, and an open ending only later.

    Args:
        settings: the listening side's settings.
        heard: the far end's transcript so far.
        verdict: the model's verdict on the far end's turn at its last stop, or None.

    Returns:
        Seconds of silence, counted from the end of the far end's speech.
    """
    if open_ending(heard):
        return settings.vad_stop_s + settings.turn_wait_s
    question = heard.rstrip().endswith("?")
    if verdict is not None and verdict.complete and (question or settings.turn_wait_s == 0):
        return 0.0
    return settings.vad_stop_s + (0.0 if question else settings.turn_wait_s)
