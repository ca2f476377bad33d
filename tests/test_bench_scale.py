"""bench/scale_voice.py's projection: Amdahl with the driver's serial cost as the ceiling (no timing here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("scale_voice", ROOT / "bench" / "scale_voice.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["scale_voice"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_few_workers_are_worker_bound_and_many_hit_the_drivers_ceiling() -> None:
    bench = _bench()
    # a voice encounter of 10 s on one worker, 20 ms of the driver's serial work per encounter
    ten = bench.project(10.0, 0.020, 10)
    assert ten.projected == pytest.approx(60.0)  # 10 workers x 6 per minute each
    assert ten.ceiling == pytest.approx(3000.0)  # 60 s / 20 ms
    assert ten.bound_by == "workers"
    assert ten.amdahl == pytest.approx(60.0 / (0.020 + 1.0))  # no overlap: driver plus a tenth of a worker
    thousand = bench.project(10.0, 0.020, 1000)
    assert thousand.projected == pytest.approx(3000.0) and thousand.bound_by == "driver"  # 6000 capped at 3000
    assert thousand.amdahl == pytest.approx(60.0 / 0.030)
    assert bench.serial_fraction(0.020, 10.0) == pytest.approx(0.002)


def test_the_goal_of_8000_per_minute_is_7_5_ms_of_driver_time() -> None:
    bench = _bench()
    assert bench.project(10.0, 60.0 / bench.GOAL_PER_MIN, 10_000).ceiling == pytest.approx(8000.0)
    assert 60.0 / bench.GOAL_PER_MIN == pytest.approx(0.0075)
