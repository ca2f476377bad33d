"""Annotating in the dashboard: the encounter screen writes annotations.jsonl; malformed lines are reported."""

from __future__ import annotations

import json
from pathlib import Path

from tests.tui.conftest import NOW, frozen_clock
from tests.tui.runs import screen_text
from tui import DashboardApp


async def test_review_in_the_app_writes_annotations_jsonl(batch_dir: Path) -> None:
    app = DashboardApp(batch_dir, reviewer="ana", clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("down", "enter")  # fx_chest_pain:1, the worst and gated one
        await pilot.pause()
        assert "fx_chest_pain  k=1" in screen_text(app)
        await pilot.press("2", "n")
        await pilot.press(*"asked nothing about radiation")
        await pilot.press("enter", "t")
        await pilot.pause()
        text = screen_text(app)
        assert "verdict FAIL" in text and "clinician_would_notice" in text and "UNSAVED" in text
        assert "asked nothing about radiation" in text
        assert app.unsaved == 1
        await pilot.press("s")
        await pilot.pause()
        assert app.unsaved == 0
        assert "saved (pass 1, ana)" in screen_text(app)
    lines = (batch_dir / "annotations.jsonl").read_text().splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0]) == {
        "trace_id": "fx_chest_pain:1", "verdict": "fail", "notes": "asked nothing about radiation",
        "failure_mode": None, "severity": "clinician_would_notice", "reviewer": "ana", "timestamp": NOW,
        "review_pass": 1,
    }


async def test_malformed_annotation_lines_are_reported_in_the_status_line(batch_dir: Path) -> None:
    (batch_dir / "annotations.jsonl").write_text('{"trace_id": "fx_ankle:0", "verdict": "pass"}\n{oops\n')
    app = DashboardApp(batch_dir, clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert "⚠ 1 malformed annotation line(s) skipped: annotations.jsonl line 2" in screen_text(app)
        assert app.saved["fx_ankle:0"].verdict == "pass"
        assert app.main.table.get_row("fx_ankle:0")[8].plain == "pass"
