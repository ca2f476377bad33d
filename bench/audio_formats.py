"""Voice-run audio on disk: WAV (the old path) beside FLAC and Ogg/Opus (issue 37, part 3), in one run.

Run from the repository root (about two minutes with the defaults)::

    .venv/bin/python bench/audio_formats.py [--scenarios viral_uri,simple_uti,acs_chest_pain] [--k 2]
        [--max-turns 4] [--formats wav,flac,opus] [--preset clean]

What runs: ``scripted:reference`` on ``--scenarios`` x ``--k`` voice encounters through the runner API the CLI
uses (``sim.runner.run_batch`` into a fresh run directory, the voice channel of
``sim.encounter.channel.make_channel``), once per ``--audio-format``. The seed is the same, so every run
speaks and hears the same audio; only the stored file differs. Per format it prints:

- **MB per encounter**: the bytes under ``audio/<scenario>/<k>/`` (every message and ``call.<fmt>``), mean and
  largest;
- **write ms per encounter**: the wall time of ``audio._store.write_audio`` as the channel calls it (encoding and
  writing, off the event loop), summed per encounter;
- **WER read back**: every stored message file is read back and transcribed again with the project's Whisper
  (``audio.stt.transcribe``, beam 5, the scenario's vocabulary), and its word error rate against the intended
  text is averaged over the messages; beside it the WER the channel measured during the run (on the audio before
  it was stored), and how many read-back transcripts differ from the in-run one.

Nothing is asserted; the figures go in the README's performance table with the machine and date.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


async def one_run(out: Path, scenarios: list[Any], args: argparse.Namespace, fmt: str) -> dict[str, Any]:
    """A voice batch stored as ``fmt``; returns its records, the write time and the per-encounter bytes."""
    import audio.channel as channel_module
    from sim.agents import make_agent
    from sim.cli._run_plan import _refs
    from sim.encounter import HARNESS_VERSION
    from sim.encounter.channel import make_channel
    from sim.records import EncounterRecord, RunLayout, RunMeta
    from sim.runner import run_batch
    from sim.store import RunStore

    meta = RunMeta(run_id=out.name, harness_version=HARNESS_VERSION, model="scripted:reference",
                   scenarios=_refs(scenarios), k=args.k, seed=0, turn_limit=args.max_turns, channel="voice",
                   voice_preset=args.preset, audio_format=fmt, created_at=time.time())
    store = RunStore.create(out, meta)
    agent = await make_agent(meta.model)
    channel = make_channel(meta, scenarios, RunLayout(out).audio)
    writes: list[float] = []
    original = channel_module.write_audio

    @functools.wraps(original)
    def timed(*a: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        try:
            return original(*a, **kw)
        finally:
            writes.append(time.perf_counter() - t)

    channel_module.write_audio = timed  # type: ignore[assignment]
    t0 = time.perf_counter()
    try:
        await run_batch(store, scenarios, agent, channel, meta, concurrency=1)
    finally:
        channel_module.write_audio = original  # type: ignore[assignment]
        store.close()
        await agent.aclose()
    seconds = time.perf_counter() - t0
    records = [EncounterRecord.model_validate_json(line) for line in RunLayout(out).results.read_text().splitlines()]
    sizes = []
    for rec in records:
        folder = RunLayout.encounter_audio(RunLayout(out).audio, rec.scenario_id, rec.k)
        sizes.append(sum(p.stat().st_size for p in folder.iterdir()))
    return {"records": records, "write_s": sum(writes), "sizes": sizes, "seconds": seconds}


def read_back(records: list[Any], vocabulary: dict[str, list[str]]) -> dict[str, float]:
    """WER of the stored message files transcribed again, of the in-run transcripts, and how many differ."""
    from audio.stt import transcribe, word_error_rate

    back, live, changed, n = [], [], 0, 0
    for rec in records:
        for turn in rec.result.turns:
            path = turn.artifacts.get("audio")
            if not path or not turn.channel:
                continue
            heard = transcribe(path, beam_size=5, vocabulary=vocabulary.get(rec.scenario_id) or None).text.strip()
            back.append(word_error_rate(turn.text, heard))
            live.append(turn.channel["wer"])
            in_run = turn.heard_text if turn.heard_text is not None else turn.text
            changed += heard != in_run
            n += 1
    return {"messages": n, "wer_back": statistics.fmean(back), "wer_run": statistics.fmean(live),
            "changed": changed}


async def amain(args: argparse.Namespace) -> None:
    from scenarios import resolve, scenario_vocabulary

    scenarios = resolve([args.scenarios])
    vocabulary = {s.scenario.id: scenario_vocabulary(s.scenario) for s in scenarios}
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at start")
    print(f"scenarios {args.scenarios}, k={args.k}, --max-turns {args.max_turns}, preset {args.preset}; "
          "scripted:reference, seed 0")
    rows = []
    with tempfile.TemporaryDirectory(prefix="encsim-formats-") as tmp:
        for fmt in args.formats:
            run = await one_run(Path(tmp) / fmt, scenarios, args, fmt)
            wer = read_back(run["records"], vocabulary)
            n = len(run["records"])
            rows.append((fmt, n, statistics.fmean(run["sizes"]) / 1e6, max(run["sizes"]) / 1e6,
                         run["write_s"] / n * 1e3, wer))
            print(f"  {fmt}: {n} encounters in {run['seconds']:.1f} s", flush=True)
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end")
    base = rows[0][2]
    print(f"\n{'format':<7} {'MB/enc mean':>11} {'max':>6} {'of ' + rows[0][0]:>7} {'write ms/enc':>13} "
          f"{'messages':>9} {'WER read back':>14} {'WER in run':>11} {'transcripts changed':>20}")
    for fmt, _n, mean, largest, write_ms, wer in rows:
        print(f"{fmt:<7} {mean:>11.3f} {largest:>6.3f} {mean / base:>7.2f} {write_ms:>13.1f} {wer['messages']:>9} "
              f"{wer['wer_back']:>14.4f} {wer['wer_run']:>11.4f} {wer['changed']:>20}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", default="viral_uri,simple_uti,acs_chest_pain")
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--max-turns", type=int, default=4)
    parser.add_argument("--formats", type=lambda s: s.split(","), default=["wav", "flac", "opus"])
    parser.add_argument("--preset", default=None, help="--voice-preset for every scenario (default: the scenario's)")
    asyncio.run(amain(parser.parse_args()))


if __name__ == "__main__":
    main()
