"""Batch calls per minute, and the patient's voice-to-voice latency, at call concurrency 1, 4 and 8.

One ``encsim serve-agent --model scripted:reference --concurrency 8`` (the built-in voice agent, no ``--scenario``:
each call names its scenario with ``--agent-scenario-hint``) answers; for each concurrency C, ``encsim run --mode
call --concurrency C`` makes ``--calls-per-level`` (default 2 x C, at least 4) calls of ``--max-turns`` agent turns
on one scenario. Both sides (the patient and the agent: VAD, Whisper, Piper each) run on this machine, so C calls
are 2 x C real-time voice pipelines on its cores.

Printed per level: calls, wall time, calls per minute, the patient-side latency (end of the agent's speech to the
patient's first audio, pooled over every reply of every call) p50 and p95, and the agent-side p50. Two paths, one
beside the other: ``old`` is each process with one Whisper worker (``ENCSIM_STT_WORKERS=1``, faster-whisper's
default until 2026-11-27: concurrent transcriptions queued on one core), at ``--old-levels``; ``new`` is the
default (a worker per core), at ``--levels``. Before issue 34, ``encsim serve-agent`` took one call at a time, so
concurrency 1 is all the old code could do at all. The goal (issue 34): p95 at concurrency 4 within 1.5 x p95 at
concurrency 1.

    .venv/bin/python bench/calls.py [--levels 1,4,8] [--old-levels 1,4] [--protocol pipecat] [--max-turns 3]

Figures (2026-11-27 22:21-22:43, this 2-core machine, nothing else running, ``.venv/bin/python bench/calls.py``;
viral_uri, 3 agent turns per call, pipecat protocol):

    | path | concurrency | calls ok | wall s | calls/min | patient p50 s | patient p95 s | agent p50 s |
    | old  | 1 | 4/4   | 234 | 1.03 | 0.464 | 0.544 | 1.126 |
    | new  | 1 | 4/4   | 232 | 1.04 | 0.472 | 0.576 | 1.124 |
    | old  | 4 | 8/8   | 161 | 2.98 | 0.851 | 1.528 | 7.864 |
    | new  | 4 | 8/8   | 147 | 3.26 | 0.665 | 1.020 | 6.539 |
    | new  | 8 | 15/16 | 352 | 2.56 | 3.280 | 6.628 | 38.92 |

p95 at 4 over p95 at 1: 2.81 on the old path, 1.77 on the new; the goal of 1.5 is not met. At 8 the machine is
saturated (16 real-time pipelines on 2 cores): throughput falls and one call of 16 failed. The agent-side latency
is the built-in agent's (Whisper with beam 5 and Piper for 4 to 8 calls in one process), not the patient's.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.call_batch import ENCSIM, _free_port, _serve, _url  # noqa: E402
from sim.records import percentile  # noqa: E402


def _level(concurrency: int, calls: int, args: argparse.Namespace, url: str, out: Path,
           env: dict[str, str]) -> dict:
    k = calls
    argv = [*ENCSIM, "run", "--mode", "call", "--agent-protocol", args.protocol, "--agent-url", url,
            "--agent-scenario-hint", "--model", "scripted:reference", "--scenarios", args.scenario, "--k", str(k),
            "--concurrency", str(concurrency), "--max-turns", str(args.max_turns), "--call-time-limit", "300",
            "--fail-fast", "0", "--out", str(out), "--quiet"]
    started = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    wall = time.monotonic() - started
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    ok = [r for r in rows if r.get("status") == "ok"]
    patient = [x for r in ok for x in (r["result"].get("interaction") or {}).get("patient_latency_s", [])]
    agent = [x for r in ok for x in (r["result"].get("interaction") or {}).get("agent_latency_s", [])]
    return {"concurrency": concurrency, "calls": len(rows), "ok": len(ok), "wall_s": wall,
            "per_min": len(ok) / wall * 60, "p50": percentile(patient, 50), "p95": percentile(patient, 95),
            "agent_p50": percentile(agent, 50), "replies": len(patient), "exit": done.returncode,
            "stderr": done.stderr.decode()[-300:]}


def main() -> int:
    """Serve the agent, run each level on each path, print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--levels", default="1,4,8")
    parser.add_argument("--old-levels", default="1,4", help="levels also run on the old path ('' for none)")
    parser.add_argument("--protocol", default="pipecat")
    parser.add_argument("--scenario", default="viral_uri")
    parser.add_argument("--max-turns", type=int, default=3)
    parser.add_argument("--calls-per-level", type=int, help="default: 2 x the concurrency, at least 4")
    args = parser.parse_args()
    paths = [("old", {**os.environ, "ENCSIM_STT_WORKERS": "1"}, [int(x) for x in args.old_levels.split(",") if x]),
             ("new", {k: v for k, v in os.environ.items() if k != "ENCSIM_STT_WORKERS"},
              [int(x) for x in args.levels.split(",")])]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for path, env, levels in paths:
            if not levels:
                continue
            port = _free_port()
            server = _serve(args.protocol, "reference", port, Path(tmp) / f"serve-{path}.log", env=env)
            try:
                for c in levels:
                    calls = args.calls_per_level or max(4, 2 * c)
                    row = _level(c, calls, args, _url(args.protocol, port), Path(tmp) / f"{path}-c{c}", env)
                    row["path"] = path
                    rows.append(row)
                    print(f"{path} concurrency {c}: {row['ok']}/{row['calls']} calls in {row['wall_s']:.0f} s, "
                          f"{row['per_min']:.2f}/min, patient p50 {row['p50']} p95 {row['p95']} "
                          f"({row['replies']} replies), agent p50 {row['agent_p50']}, exit {row['exit']}", flush=True)
            finally:
                server.send_signal(signal.SIGINT)
                try:
                    server.wait(30)
                except subprocess.TimeoutExpired:
                    server.kill()
    print("\n| path | concurrency | calls ok | wall s | calls/min | patient p50 s | patient p95 s | agent p50 s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in sorted(rows, key=lambda r: (r["concurrency"], r["path"])):
        print(f"| {r['path']} | {r['concurrency']} | {r['ok']}/{r['calls']} | {r['wall_s']:.0f} | {r['per_min']:.2f} | "
              f"{_s(r['p50'])} | {_s(r['p95'])} | {_s(r['agent_p50'])} |")
    for path in ("old", "new"):
        base = next((r for r in rows if r["concurrency"] == 1 and r["path"] == path), None)
        four = next((r for r in rows if r["concurrency"] == 4 and r["path"] == path), None)
        if base and four and base["p95"] and four["p95"]:
            print(f"{path}: p95 at 4 / p95 at 1 = {four['p95'] / base['p95']:.2f} (goal: at most 1.5)")
    return 0


def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


if __name__ == "__main__":
    raise SystemExit(main())
