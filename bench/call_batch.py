"""Batches of calls to the built-in voice agent over each protocol, as a user runs them, for issue 34's acceptance.

For each protocol and each scripted control: ``encsim serve-agent --protocol P --model scripted:C`` (no
``--scenario``: each call names its scenario with ``--agent-scenario-hint``) on a free loopback port, then
``encsim run --mode call --agent-protocol P --scenarios S --k K --concurrency N``. With ``--kill-after M`` the
first control's run is killed (SIGKILL) once M encounters are in results.jsonl, then resumed with ``encsim run
--resume``; the table says how many encounters were lost (planned but never recorded) and duplicated (recorded
twice).

Printed: protocol x control x aggregate, the safety gate, completed/errors, lost/duplicated, and the voice
measures (agent latency p50/p95, red-flag calls with safety advice, median time to advice, speakability issues).

    .venv/bin/python bench/call_batch.py --protocols pipecat,twilio --k 2 --concurrency 4 --kill-after 6
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENCSIM = [sys.executable, "-m", "sim.cli"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _serve(protocol: str, control: str, port: int, log: Path,
           env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([*ENCSIM, "serve-agent", "--protocol", protocol, "--model", f"scripted:{control}",
                             "--port", str(port), "--concurrency", "8"], cwd=ROOT, stdout=log.open("wb"),
                            stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + 180
    while not _listening(port):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"serve-agent --protocol {protocol} did not start; see {log}")
        time.sleep(0.5)
    return proc


def _url(protocol: str, port: int) -> str:
    if protocol == "chat-audio":
        return f"http://127.0.0.1:{port}/v1"
    if protocol == "openai-realtime":
        return f"ws://127.0.0.1:{port}/v1"
    return f"ws://127.0.0.1:{port}"


def _records(out: Path) -> list[dict]:
    path = out / "results.jsonl"
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            pass  # a line cut by the kill
    return rows


def _run(protocol: str, control: str, args: argparse.Namespace, out: Path, kill_after: int | None) -> dict:
    port = _free_port()
    server = _serve(protocol, control, port, out.with_suffix(".serve.log"))
    argv = [*ENCSIM, "run", "--mode", "call", "--agent-protocol", protocol, "--agent-url", _url(protocol, port),
            "--agent-scenario-hint", "--model", f"scripted:{control}", "--scenarios", args.scenarios, "--k",
            str(args.k), "--concurrency", str(args.concurrency), "--call-time-limit", str(args.call_time_limit),
            "--out", str(out), "--quiet"]
    started = time.monotonic()
    killed = False
    try:
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if kill_after is not None:
            while proc.poll() is None and len(_records(out)) < kill_after:
                time.sleep(1)
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                killed = True
        _, err = proc.communicate()
        code = proc.returncode
        if killed:
            resumed = subprocess.run([*ENCSIM, "run", "--resume", str(out), "--quiet"], cwd=ROOT,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            code, err = resumed.returncode, resumed.stderr
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
    wall = time.monotonic() - started
    summary = json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() else {}
    rows = _records(out)
    keys = [(r["scenario_id"], r["k"], r.get("persona")) for r in rows if "scenario_id" in r]
    planned = summary.get("expected_total")
    return {"protocol": protocol, "control": control, "exit": code, "stderr": err.decode()[-400:],
            "wall_s": wall, "killed": killed, "summary": summary, "recorded": len(set(keys)),
            "duplicated": len(keys) - len(set(keys)), "planned": planned}


def _line(r: dict) -> str:
    s = r["summary"]
    vm = s.get("voice_measures") or {}
    gate = s.get("safety_gate") or {}
    gate_text = "-" if not gate else ("TRIGGERED (" + ", ".join(gate.get("scenarios") or []) + ")"
                                      if gate.get("triggered") else "passed")
    agg = s.get("aggregate")
    lost = (r["planned"] - r["recorded"]) if isinstance(r["planned"], int) else "?"
    return (f"| {r['protocol']} | {r['control']} | {agg if agg is None else f'{agg:.3f}'} | {gate_text} | "
            f"{s.get('completed')} / {s.get('errors')} | {'killed+resumed, ' if r['killed'] else ''}lost {lost}, "
            f"dup {r['duplicated']} | {vm.get('agent_latency_p50_s')} / {vm.get('agent_latency_p95_s')} | "
            f"{vm.get('advice_given')}/{vm.get('red_flag_calls')} | {vm.get('advice_p50_s')} | "
            f"{r['wall_s'] / 60:.1f} min | exit {r['exit']} |")


def main() -> int:
    """Run the batches and print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--protocols", default="pipecat,twilio,openai-realtime,chat-audio")
    parser.add_argument("--controls", default="reference,undertriage")
    parser.add_argument("--scenarios", default="safety")
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--call-time-limit", type=float, default=300)
    parser.add_argument("--kill-after", type=int, help="kill each protocol's first run after N encounters, resume")
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / f"call-batch-{time.strftime('%Y%m%d-%H%M%S')}")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results = []
    for protocol in args.protocols.split(","):
        for i, control in enumerate(args.controls.split(",")):
            out = args.out / f"{protocol}-{control}"
            r = _run(protocol, control, args, out, args.kill_after if i == 0 else None)
            results.append(r)
            print(_line(r), flush=True)
            if r["exit"] not in (0, 3):
                print(f"  stderr: {r['stderr']}", flush=True)
    print("\n| protocol | control | aggregate | gate | completed / errors | kill | agent latency p50 / p95 s | "
          "advice / red-flag calls | time to advice p50 s | wall | exit |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(_line(r))
    (args.out / "table.json").write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
