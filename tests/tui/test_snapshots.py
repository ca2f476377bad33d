"""SVG snapshots of the main screens (pytest-textual-snapshot), at 120x40 with frozen data and clock.

Regenerate after an intended change of the look with
``pytest tests/tui/test_snapshots.py --snapshot-update`` and review the SVGs in
tests/tui/__snapshots__/ before committing them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tui.conftest import frozen_clock
from tui import DashboardApp

pytest.importorskip("pytest_textual_snapshot")

SIZE = (120, 40)


def _app(run_dir: Path) -> DashboardApp:
    app = DashboardApp(run_dir, clock=frozen_clock, reviewer="ana")
    app.theme = "textual-dark"  # not $TEXTUAL_THEME of the machine
    return app


def test_overview_and_list(snap_compare: Any, batch_dir: Path) -> None:
    assert snap_compare(_app(batch_dir), terminal_size=SIZE)


def test_overview_of_a_run_in_progress(snap_compare: Any, running_dir: Path) -> None:
    assert snap_compare(_app(running_dir), terminal_size=SIZE)


def test_encounter_view_with_an_unsaved_annotation(snap_compare: Any, batch_dir: Path) -> None:
    assert snap_compare(_app(batch_dir), press=["down", "enter", "2", "t"], terminal_size=SIZE)


def test_reliability_view(snap_compare: Any, batch_dir: Path) -> None:
    assert snap_compare(_app(batch_dir), press=["r", "j"], terminal_size=SIZE)


def test_live_call_view(snap_compare: Any, live_dir: Path) -> None:
    assert snap_compare(_app(live_dir), terminal_size=SIZE)


def test_gate_details(snap_compare: Any, batch_dir: Path) -> None:
    assert snap_compare(_app(batch_dir), press=["g"], terminal_size=SIZE)


def test_help(snap_compare: Any, batch_dir: Path) -> None:
    assert snap_compare(_app(batch_dir), press=["question_mark"], terminal_size=SIZE)
