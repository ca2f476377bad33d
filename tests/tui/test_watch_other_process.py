"""Acceptance: a batch run in one process and the dashboard in another. The run is a real `encsim run` subprocess
against a slow loopback endpoint; the app (as `encsim watch` runs it) sees encounters finish one by one, and a
review saved in it lands in annotations.jsonl."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.fakeserver import FakeChatServer
from tests.tui.runs import screen_text
from tui import DashboardApp

ROOT = Path(__file__).parents[2]


async def test_watch_follows_a_run_written_by_another_process(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeChatServer(default=("ok", "Thanks. Any other symptoms?"), latency_s=0.05) as srv:
        proc = subprocess.Popen(  # noqa: ASYNC220
            [sys.executable, "-m", "sim.cli", "run", "--model", "m", "--base-url", srv.base_url, "--scenarios",
             "viral_uri", "--k", "3", "--concurrency", "1", "--out", str(out), "--quiet"],
            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while not (out / "run.json").exists():
                assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                time.sleep(0.05)  # noqa: ASYNC251
            app = DashboardApp(out, reviewer="watcher", poll_interval=0.05)
            seen: list[int] = []
            async with app.run_test(size=(120, 40)) as pilot:
                while time.monotonic() < deadline + 60:
                    await pilot.pause(0.05)
                    if not seen or app.state.done != seen[-1]:
                        seen.append(app.state.done)
                    if app.state.done == 3:
                        break
                await pilot.pause(0.2)
                assert app.state.done == 3 and app.state.total == 3
                text = screen_text(app)
                assert "3/3" in text and "viral_uri" in text
                await pilot.press("enter", "2", "n", *"kept asking the same thing", "enter", "s")
                await pilot.pause(0.1)
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
    assert seen[0] < 3 and seen[-1] == 3 and len(seen) >= 2, seen  # it saw the run progress, not only its end
    (ann,) = [json.loads(x) for x in (out / "annotations.jsonl").read_text().splitlines()]
    assert ann["verdict"] == "fail" and ann["notes"] == "kept asking the same thing" and ann["reviewer"] == "watcher"
    assert ann["trace_id"].startswith("viral_uri:")
