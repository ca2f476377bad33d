"""Acceptance of issue 13: imported public case sets run end to end with every built-in profile, the scripted
controls and the local model, with no abort and a headline number: AgentClinic from the real public file,
HealthBench-format rows (with a loopback judge) and symptom-checker vignettes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from scorers import PROFILES
from sim.cli import main
from tests.fakeserver import FakeChatServer
from tests.public_data import MEDQA
from tests.sim.test_judge_run import grader

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "tests" / "scenarios" / "samples"


def summary_of(run: Path) -> dict[str, Any]:
    return json.loads((run / "summary.json").read_text())


@pytest.fixture(scope="module")
def agentclinic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every 9th case of the real file (12 of 107: newborns, children and adults among them)."""
    every = tmp_path_factory.mktemp("ac_all")
    assert main(["import", "agentclinic", str(MEDQA), "--out", str(every)]) == 0
    some = tmp_path_factory.mktemp("ac_some")
    for path in sorted(every.glob("*.yaml"))[::9]:
        shutil.copy(path, some / path.name)
    return some


@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("control", ["reference", "natural", "undertriage"])
def test_agentclinic_imports_run_under_every_profile(agentclinic: Path, tmp_path: Path, profile: str,
                                                    control: str) -> None:
    run = tmp_path / "run"
    code = main(["run", "--scenarios", str(agentclinic), "--model", f"scripted:{control}", "--k", "1",
                 "--profile", profile, "--out", str(run), "--quiet"])
    assert code == 0
    summary = summary_of(run)
    assert summary["completed"] == 12 and summary["errors"] == 0 and not summary["evaluator_errors"]
    assert summary["headline"]["value"] is not None and summary["triage_accuracy"] is None
    if control != "undertriage":  # the controls that interview reveal the whole case
        assert summary["components"]["information"] == 1.0


@pytest.mark.slow
def test_agentclinic_imports_run_with_the_local_model(agentclinic: Path, tmp_path: Path) -> None:
    one = tmp_path / "one"
    one.mkdir()
    shutil.copy(sorted(agentclinic.glob("*.yaml"))[0], one)
    run = tmp_path / "run"
    code = main(["run", "--scenarios", str(one), "--model", "local", "--k", "1", "--max-turns", "2",
                 "--concurrency", "1", "--out", str(run), "--quiet"])
    summary = summary_of(run)
    assert code == 0 and summary["completed"] == 1 and summary["errors"] == 0
    assert summary["headline"]["value"] is not None


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_healthbench_rows_run_under_every_profile_with_a_headline_number(tmp_path: Path, profile: str) -> None:
    hb = tmp_path / "hb"
    main(["import", "healthbench", str(SAMPLES / "healthbench_sample.jsonl"), "--out", str(hb)])
    run = tmp_path / "run"
    with FakeChatServer(reply=grader) as judge:
        code = main(["run", "--scenarios", str(hb), "--model", "scripted:reference", "--k", "1", "--profile", profile,
                     "--out", str(run), "--quiet", "--judge", "gpt-4o", "--judge-base-url", judge.base_url])
    summary = summary_of(run)
    assert code == 0 and summary["errors"] == 0 and summary["completed"] == 3
    assert summary["headline"]["name"] == "HealthBench score" and summary["headline"]["value"] is not None


def test_every_importers_output_passes_scenarios_validate(agentclinic: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """`encsim scenarios validate` on what the importers write: no fallback line that denies ("Nothing else comes
    to mind." did), nothing else the validator refuses."""
    every_ac = tmp_path / "ac"
    assert main(["import", "agentclinic", str(MEDQA), "--out", str(every_ac)]) == 0
    hb = tmp_path / "hb"
    main(["import", "healthbench", str(SAMPLES / "healthbench_sample.jsonl"), "--out", str(hb)])
    folders = [every_ac, hb]
    for mode in ("single-turn", "encounter"):
        out = tmp_path / mode
        assert main(["import", "vignettes", str(ROOT / "tests" / "data" / "vignettes" / "triage_vignettes.jsonl"),
                     "--out", str(out), "--map", "case=case_description,diagnosis=correct_diagnosis,"
                     "urgency=urgency_level", "--urgency-map", "em=emergency,ne=routine+urgent,sc=self_care",
                     "--as", mode]) == 0
        folders.append(out)
    capsys.readouterr()
    for folder in folders:
        assert main(["scenarios", "validate", str(folder)]) == 0, capsys.readouterr().err
