"""Speech-to-text options on short clips: time per clip, real-time factor and WER per faster-whisper option.

What it measures
----------------
The clips are the ones ``bench/voice_rtf.py`` transcribes: one encounter of the replay agent on a
library scenario (``acs_chest_pain``), every line spoken by Piper (deterministic synthesis) and sent
through a channel-effects preset (``--presets``, default ``clean`` and ``bad-line``), captured at the
point where ``audio.channel`` calls the recogniser, with the text that was spoken (the TTS input) as
the reference. The recorded human speech vendored in ``tests/data/public/speech`` is added (JFK 11 s, "one two
three").

Each option transcribes every clip ``--repeat`` times (3); per clip the median wall time is kept. Printed
per option: mean seconds per clip, mean CPU seconds per clip (``time.process_time``, the figure to trust
when other processes share the machine), RTF (sum of times / sum of audio), mean WER against the
reference, and the number of clips whose WER is better / worse than the baseline. Then, for every
option, the clips whose transcript differs from the baseline's, with both WERs.

Options (baseline = ``audio.stt.transcribe(..., window_s=None)``: beam 5, 30 s window, timestamps,
``condition_on_previous_text=False``, the behaviour before issue 17):

- faster-whisper's own knobs, each on its own over the full window: ``without_timestamps=True``,
  ``beam_size=1``, ``vad_filter=True`` (Silero VAD trimming), ``chunk_length=10`` (in faster-whisper
  1.2.1 this only shortens the segmenting window: every window is still padded to 3000 mel frames
  by ``pad_or_trim`` before the encoder, and it rewrites the shared feature extractor's window, so the
  bench restores it), and ``BatchedInferencePipeline`` (batch 8: VAD chunks of one clip batched);
- the short encoder window of ``audio.stt`` (``window_s`` = 5, 8, 10, 15 s: the encoder sees that many
  seconds, or the clip plus 1 s when longer, instead of 30 s), alone and with ``timestamps=False`` or beam 1.
  A window of only the clip plus 0.5-3 s was tried first and dropped: Whisper then often repeats the
  clip's text or returns nothing (WER 1.0-3.0 on several clean clips).

Nothing is asserted: figures are printed. The machine may be shared: run it twice and compare.

    .venv/bin/python bench/stt_options.py [--presets clean bad-line] [--repeat 3] [--cores 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from voice_rtf import QuestionAgent, make_channel, pin_cores  # noqa: E402

from scenarios import resolve  # noqa: E402
from sim.encounter import run_encounter  # noqa: E402

REAL_SPEECH = {
    "whisper_jfk.flac": "And so, my fellow Americans, ask not what your country can do for you, ask what you can "
                        "do for your country.",
    "speechrecognition_english_one_two_three.wav": "one two three",
}

Clip = tuple[str, np.ndarray, str]  # (name, 16 kHz float32 samples, spoken text)


def bench_clips(scenario_id: str, preset: str, turns: int) -> list[Clip]:
    """Run voice_rtf's encounter once and capture every clip the channel hands to the recogniser."""
    import audio.channel as channel_mod
    from audio import stt

    scenario = resolve([scenario_id])[0].scenario
    questions = max(1, (turns - 1) // 2)
    heard: list[np.ndarray] = []
    spoken: list[str] = []
    real_transcribe, real_wer = channel_mod.transcribe_async, channel_mod.word_error_rate

    async def capture(audio: Any, *, sample_rate: int | None = None, **kw: Any) -> stt.Transcript:
        heard.append(stt.load_audio(audio, sample_rate=sample_rate))
        return await real_transcribe(audio, sample_rate=sample_rate, **kw)

    def wer(reference: str, hypothesis: str) -> float:
        spoken.append(reference)
        return real_wer(reference, hypothesis)

    channel_mod.transcribe_async = capture  # type: ignore[assignment]
    channel_mod.word_error_rate = wer
    try:
        with tempfile.TemporaryDirectory(prefix="encsim-stt-options-") as tmp:
            channel = make_channel(scenario, preset, Path(tmp) / "tts")
            asyncio.run(run_encounter(scenario, QuestionAgent(questions), channel, turn_limit=questions + 1))
    finally:
        channel_mod.transcribe_async, channel_mod.word_error_rate = real_transcribe, real_wer
    return [(f"{preset}#{i:02d}", samples, text) for i, (samples, text) in enumerate(zip(heard, spoken, strict=True))]


def real_clips() -> list[Clip]:
    """The recorded human speech vendored in ``tests/data/public/speech``."""
    from audio import stt

    base = ROOT / "tests" / "data" / "public" / "speech"
    return [(f"real:{name.split('.')[0][:18]}", stt.load_audio(base / name), text)
            for name, text in REAL_SPEECH.items() if (base / name).is_file()]


def options() -> dict[str, Callable[[np.ndarray], str]]:
    """Option name -> a function transcribing 16 kHz samples to text."""
    from faster_whisper import BatchedInferencePipeline

    from audio import stt

    model = stt.load_model()
    batched = BatchedInferencePipeline(model)
    extractor = model.feature_extractor

    def ours(**kw: Any) -> Callable[[np.ndarray], str]:
        return lambda a: stt.transcribe(a, sample_rate=stt.SAMPLE_RATE, **kw).text

    def raw(**kw: Any) -> Callable[[np.ndarray], str]:
        def run(a: np.ndarray) -> str:
            args: dict[str, Any] = {"language": "en", "beam_size": 5, "condition_on_previous_text": False, **kw}
            try:
                return " ".join(s.text.strip() for s in model.transcribe(a, **args)[0]).strip()
            finally:  # chunk_length rewrites the shared extractor's window (faster-whisper 1.2.1)
                extractor.n_samples = extractor.chunk_length * extractor.sampling_rate
                extractor.nb_max_frames = extractor.n_samples // extractor.hop_length
        return run

    def pipeline(a: np.ndarray) -> str:
        segs, _ = batched.transcribe(a, language="en", beam_size=5, batch_size=8, condition_on_previous_text=False)
        return " ".join(s.text.strip() for s in segs).strip()

    return {
        "baseline: 30 s window, beam 5": ours(window_s=None),
        "without_timestamps": raw(without_timestamps=True),
        "beam_size=1": raw(beam_size=1),
        "vad_filter": raw(vad_filter=True),
        "chunk_length=10": raw(chunk_length=10),
        "BatchedInferencePipeline": pipeline,
        "window_s=5": ours(window_s=5.0),
        "window_s=8": ours(window_s=8.0),
        "window_s=10 (adopted)": ours(window_s=10.0),
        "window_s=15": ours(window_s=15.0),
        "window_s=10, without_timestamps": ours(window_s=10.0, timestamps=False),
        "window_s=10, beam_size=1": ours(window_s=10.0, beam_size=1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--presets", nargs="+", default=["clean", "bad-line"], help="channel-effects presets")
    ap.add_argument("--scenario", default="acs_chest_pain")
    ap.add_argument("--turns", type=int, default=20, help="messages of the encounter, as in voice_rtf.py")
    ap.add_argument("--repeat", type=int, default=3, help="runs per clip and option; the median time is kept")
    ap.add_argument("--cores", type=int, default=2, help="pin to this many CPUs (0 = all)")
    ap.add_argument("--only", nargs="*", default=None, help="option names to run (substring match)")
    args = ap.parse_args()
    core_note = pin_cores(args.cores)
    from audio.stt import word_error_rate

    clips = [c for p in args.presets for c in bench_clips(args.scenario, p, args.turns)] + real_clips()
    opts = options()
    if args.only:
        opts = {k: v for k, v in opts.items() if k.startswith("baseline") or any(o in k for o in args.only)}
    audio_s = sum(c[1].size for c in clips) / 16000
    print(f"stt options: {len(clips)} clips ({audio_s:.1f} s of audio, {', '.join(args.presets)} + real speech), "
          f"repeat {args.repeat}, {core_note}, load average {os.getloadavg()[0]:.2f}")
    results: dict[str, list[tuple[str, float, float, float]]] = {}  # option -> per clip (text, wall, cpu, wer)
    for name, run in opts.items():
        rows = []
        for _, samples, ref in clips:
            run(samples)  # warm (first call of an encoder shape)
            walls, cpus, text = [], [], ""
            for _ in range(args.repeat):
                w, c = time.perf_counter(), time.process_time()
                text = run(samples)
                walls.append(time.perf_counter() - w)
                cpus.append(time.process_time() - c)
            rows.append((text, statistics.median(walls), statistics.median(cpus), word_error_rate(ref, text)))
        results[name] = rows
    base = next(iter(results.values()))
    hdr = f"{'option':<38} {'s/clip':>7} {'cpu s/clip':>10} {'RTF':>6} {'WER':>6} {'better':>6} {'worse':>5}"
    print(hdr)
    print("-" * len(hdr))
    for name, rows in results.items():
        better = sum(r[3] < b[3] - 1e-9 for r, b in zip(rows, base, strict=True))
        worse = sum(r[3] > b[3] + 1e-9 for r, b in zip(rows, base, strict=True))
        print(f"{name:<38} {statistics.fmean(r[1] for r in rows):>7.3f} {statistics.fmean(r[2] for r in rows):>10.3f} "
              f"{sum(r[1] for r in rows) / audio_s:>6.3f} {statistics.fmean(r[3] for r in rows):>6.3f} "
              f"{better:>6} {worse:>5}")
    print(f"(load average at the end {os.getloadavg()[0]:.2f}; WER per clip against the spoken text, then averaged)")
    print()
    for name, rows in list(results.items())[1:]:
        diffs = [(c[0], b, r) for c, r, b in zip(clips, rows, base, strict=True) if r[0] != b[0]]
        print(f"{name}: {len(diffs)} transcript(s) differ from the baseline")
        for clip, b, r in diffs:
            print(f"  {clip}: WER {b[3]:.3f} -> {r[3]:.3f}  {b[0]!r} -> {r[0]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
