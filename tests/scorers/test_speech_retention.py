"""Speech retention: the same agent over text and over speech (``encsim compare TEXT_RUN SPOKEN_RUN``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from scorers import ScenarioComparison, speech_retention
from sim.cli import main


def _row(sid: str, mean_a: float, mean_b: float) -> ScenarioComparison:
    return ScenarioComparison(id=sid, suite="triage", n_a=2, n_b=2, mean_a=mean_a, mean_b=mean_b,
                              diff=mean_b - mean_a, t=None, p=None, p_bonferroni=None, cohens_d=None,
                              significant=False)


def test_retention_is_the_spoken_mean_over_the_text_mean_whichever_run_is_spoken() -> None:
    rows = [_row("a", 0.8, 0.6), _row("b", 1.0, 0.9)]
    r = speech_retention("text", "call", rows)
    assert r is not None and (r.text_run, r.speech_run, r.scenarios) == ("A", "B", 2)
    assert r.retention == pytest.approx(0.75 / 0.9)
    swapped = speech_retention("voice", "text", rows)
    assert swapped is not None and (swapped.text_run, swapped.speech_run) == ("B", "A")
    assert swapped.retention == pytest.approx(0.9 / 0.75)


@pytest.mark.parametrize(("a", "b"), [("text", "text"), ("call", "voice"), ("live", "call"), (None, "text")])
def test_no_retention_unless_exactly_one_run_is_spoken(a: str | None, b: str | None) -> None:
    assert speech_retention(a, b, [_row("a", 0.8, 0.6)]) is None


def test_no_retention_without_shared_scenarios_and_none_when_text_scored_zero() -> None:
    assert speech_retention("text", "call", []) is None
    r = speech_retention("text", "call", [_row("a", 0.0, 0.5)])
    assert r is not None and r.retention is None


def test_compare_prints_the_retention_of_a_spoken_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A text run against the same run marked as spoken (run.json's channel): the figure and its line appear."""
    text = tmp_path / "text"
    assert main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri,acs_chest_pain", "--k", "1",
                 "--out", str(text), "--quiet"]) == 0
    spoken = tmp_path / "spoken"
    shutil.copytree(text, spoken)
    meta = json.loads((spoken / "run.json").read_text())
    meta["channel"] = "call"
    (spoken / "run.json").write_text(json.dumps(meta))
    capsys.readouterr()
    assert main(["compare", str(text), str(spoken)]) == 0
    out = capsys.readouterr().out
    assert "speech retention: 100.0% of the text score kept over speech (run B call" in out
    assert main(["compare", str(text), str(text)]) == 0
    assert "speech retention" not in capsys.readouterr().out
