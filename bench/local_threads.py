"""The embedded model's speed with the default thread count against one thread per CPU, idle and beside busy
processes (what a voice run's Whisper and Piper, or another program, do to it).

    python bench/local_threads.py [--tokens 96] [--busy 0,1,2]

Prints, for each number of busy loops, the seconds for one seeded completion with ``default_threads()`` and
with a thread per CPU, and their ratio against the idle default measured in the same run. llama.cpp's
threads spin while they wait for each other, so a thread per core collapses under contention.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sim.agents.local import LlamaServer, default_threads


async def completion_s(threads: int, busy: int, tokens: int) -> float:
    server = await LlamaServer(n_threads=threads).start()
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]  # noqa: ASYNC220
    try:
        body = {"model": "m", "messages": [{"role": "user", "content": "Describe the causes of chest pain."}],
                "temperature": 0, "max_tokens": tokens, "seed": 1}
        async with httpx.AsyncClient(timeout=900) as client:
            start = time.monotonic()
            (await client.post(f"{server.base_url}/chat/completions", json=body)).raise_for_status()
            return time.monotonic() - start
    finally:
        for p in loops:
            p.kill()
            p.wait()
        server.stop()


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=96)
    ap.add_argument("--busy", default="0,1,2", help="comma-separated numbers of busy loops beside the server")
    args = ap.parse_args()
    every = os.cpu_count() or 1
    ours = default_threads()
    baseline = await completion_s(ours, 0, args.tokens)
    print(f"{args.tokens} tokens; default {ours} thread(s), a thread per CPU = {every}")
    print(f"{'busy':>4} {'default s':>10} {'ratio':>7} {'per-CPU s':>10} {'ratio':>7}")
    for busy in (int(b) for b in args.busy.split(",")):
        d = baseline if busy == 0 else await completion_s(ours, busy, args.tokens)
        a = await completion_s(every, busy, args.tokens)
        print(f"{busy:>4} {d:>10.1f} {d / baseline:>7.2f} {a:>10.1f} {a / baseline:>7.2f}")


if __name__ == "__main__":
    asyncio.run(main())
