"""Fixtures of the review tests: the dashboard tests' fixture run directory (tests/tui/runs.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.runs import batch_run


@pytest.fixture
def batch_dir(tmp_path: Path) -> Path:
    return batch_run(tmp_path)
