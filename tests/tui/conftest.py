"""Fixtures of the dashboard tests: fixture run directories and a frozen clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.runs import T0, batch_run, live_run

try:  # pytest-textual-snapshot 1.0.0 names its extension the syrupy-4 way; syrupy >= 5 reads file_extension
    import pytest_textual_snapshot as _snapshot_plugin
except ImportError:  # pragma: no cover - the snapshot tests skip themselves then
    _snapshot_plugin = None
if _snapshot_plugin is not None:
    _snapshot_plugin.SVGImageExtension.file_extension = "svg"

NOW = T0 + 120.0


def frozen_clock() -> float:
    return NOW


@pytest.fixture(autouse=True)
def _plain_terminal_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the screens look like must not depend on the machine's NO_COLOR."""
    monkeypatch.delenv("NO_COLOR", raising=False)


@pytest.fixture
def batch_dir(tmp_path: Path) -> Path:
    return batch_run(tmp_path)


@pytest.fixture
def running_dir(tmp_path: Path) -> Path:
    return batch_run(tmp_path, finished=False)


@pytest.fixture
def live_dir(tmp_path: Path) -> Path:
    return live_run(tmp_path)
