"""Instance-specific rubric generation, the deterministic track (issue 16, part 4): `encsim rubrics generate` on the
whole library, the rubric files `scenarios validate` accepts, `rubrics_from` in a scenario, and a judge run that
scores with them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from scenarios import load_library, load_scenario
from scenarios.loader import ScenarioError, load_rubric_file
from scenarios.schema import rubric_hash
from scorers import generate_rubrics
from sim.cli import main
from tests.fakeserver import FakeChatServer
from tests.sim.test_judge_run import grader


def reference_reader(body: dict[str, Any]) -> str:
    """A loopback judge for the reference control's transcript: every desirable criterion is met, the
    under- and over-escalation and overdose ones are not (the reference escalates as expected and gives no dose);
    other calls as ``grader``."""
    system = body["messages"][0]["content"]
    if "criteria_met" not in system:
        return grader(body)
    prompt = body["messages"][-1]["content"].rsplit("Criterion", 1)[1]
    undesirable = "-escalation)" in prompt or "above its maximum daily dose" in prompt  # the reference does neither
    return json.dumps({"explanation": "read", "criteria_met": not undesirable})


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rubrics")
    assert main(["rubrics", "generate", "all", "--out", str(out)]) == 0
    return out


def test_every_encounter_scenario_of_the_library_gets_a_rubric_file_that_validates(
        generated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    encounters = {s.scenario.id for s in load_library() if s.scenario.imaging is None and s.scenario.replay is None}
    assert len(encounters) >= 20
    assert {p.name.removesuffix(".rubrics.yaml") for p in generated.glob("*.rubrics.yaml")} == encounters
    capsys.readouterr()
    assert main(["scenarios", "validate", str(generated)]) == 0
    assert capsys.readouterr().out.strip().endswith(f"{len(encounters)} ok, 0 invalid")
    for path in generated.glob("*.rubrics.yaml"):
        rubric = load_rubric_file(path)
        assert rubric.hash == rubric_hash(rubric.rubrics) and all(c.source for c in rubric.rubrics), path


def test_the_criteria_come_from_the_ground_truth() -> None:
    by_id = {s.scenario.id: s.scenario for s in load_library()}
    acs = {c.source: c for c in generate_rubrics(by_id["acs_chest_pain"])}
    assert acs["escalation:under"].points == -10 and acs["escalation:under"].axis == "safety"
    assert acs["escalation"].points > 0 and "emergency" in acs["escalation"].criterion
    assert acs["diagnosis:Acute coronary syndrome"].points == 5
    assert {s for s in acs if s.startswith("red_flag:")} == {f"red_flag:{f}" for f in ("radiation", "sweating_nausea")}
    assert "safety_netting" in acs and "escalation:over" not in acs  # nothing is more urgent than emergency
    uri = {c.source: c for c in generate_rubrics(by_id["viral_uri"])}
    assert uri["escalation:over"].points < 0 and "escalation:under" not in uri and "escalation" not in uri
    assert "denies" in uri["red_flag:breathing"].criterion or "exclude" in uri["red_flag:breathing"].criterion
    cautions = {c.source for s in by_id.values() if s.imaging is None and s.replay is None
                for c in generate_rubrics(s) if (c.source or "").startswith("caution:")}
    assert cautions == {"caution:anticoagulant", "caution:pregnancy", "caution:dose"}
    assert "caution:anticoagulant" in {c.source for c in generate_rubrics(by_id["geriatric_fall_anticoagulant"])}
    assert generate_rubrics(by_id["acs_chest_pain"]) == generate_rubrics(by_id["acs_chest_pain"])  # deterministic
    with pytest.raises(ValueError, match="encounters only"):
        generate_rubrics(next(s for s in by_id.values() if s.imaging is not None))


def _scenario_with_rubrics(tmp_path: Path, generated: Path, sid: str = "acs_chest_pain") -> Path:
    src = next(s.path for s in load_library() if s.scenario.id == sid)
    folder = tmp_path / "scn"
    folder.mkdir()
    shutil.copy(generated / f"{sid}.rubrics.yaml", folder)
    dst = folder / f"{sid}.yaml"
    dst.write_text(src.read_text() + f"\nrubrics_from: {sid}.rubrics.yaml\n")
    return dst


def test_a_scenario_uses_a_rubric_file_with_rubrics_from(tmp_path: Path, generated: Path) -> None:
    path = _scenario_with_rubrics(tmp_path, generated)
    loaded = load_scenario(path)
    assert loaded.scenario.rubrics == load_rubric_file(generated / "acs_chest_pain.rubrics.yaml").rubrics
    other = tmp_path / "scn" / "other.rubrics.yaml"
    shutil.copy(generated / "viral_uri.rubrics.yaml", other)
    path.write_text(path.read_text().replace("rubrics_from: acs_chest_pain.rubrics.yaml",
                                             "rubrics_from: other.rubrics.yaml"))
    with pytest.raises(ScenarioError, match="holds the rubric of scenario 'viral_uri', not 'acs_chest_pain'"):
        load_scenario(path)
    path.write_text(path.read_text().replace("other.rubrics.yaml", "missing.rubrics.yaml"))
    with pytest.raises(ScenarioError, match="missing.rubrics.yaml"):
        load_scenario(path)


def test_an_edited_rubric_file_is_kept_unless_forced_and_regeneration_is_stable(tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert main(["rubrics", "generate", "viral_uri", "--out", str(out)]) == 0
    path = out / "viral_uri.rubrics.yaml"
    first = path.read_bytes()
    assert main(["rubrics", "generate", "viral_uri", "--out", str(out)]) == 0
    assert path.read_bytes() == first  # an unedited file is regenerated identically
    data = yaml.safe_load(first)
    data["rubrics"][0]["points"] = -3.0
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    edited = path.read_bytes()
    assert main(["rubrics", "generate", "viral_uri", "--out", str(out)]) == 0
    assert path.read_bytes() == edited
    assert main(["rubrics", "generate", "viral_uri", "--out", str(out), "--force"]) == 0
    assert path.read_bytes() == first


def test_a_judge_run_scores_with_generated_rubrics(tmp_path: Path, generated: Path) -> None:
    scenario = _scenario_with_rubrics(tmp_path, generated)
    out = tmp_path / "judged"
    with FakeChatServer(reply=reference_reader) as judge:
        code = main(["run", "--model", "scripted:reference", "--scenarios", str(scenario), "--k", "1", "--out",
                     str(out), "--quiet", "--judge", "gpt-4o", "--judge-base-url", judge.base_url])
    assert code == 0
    record = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    criteria = {c["criterion"] for c in record["score"]["judge"]["rubric"]}
    expected = {c.criterion for c in load_rubric_file(generated / "acs_chest_pain.rubrics.yaml").rubrics}
    assert criteria == expected
    summary = json.loads((out / "summary.json").read_text())
    assert summary["judge"]["rubric_score"] == pytest.approx(1.0)  # every desirable criterion met, no penalty
    verdicts = {c["criterion"]: c["verdict"] for c in record["score"]["judge"]["rubric"]}
    assert [v for c, v in verdicts.items() if "(under-escalation)" in c] == ["unmet"]
