"""The "Triage accuracy" section of report.md and report.html, summary.json's ``triage_accuracy`` and the CLI
line, end to end with the scripted controls; and no section (``null``) for runs without escalation targets."""

from __future__ import annotations

import contextlib
import io
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from scenarios import load_library
from scorers import aggregate
from sim.cli import main
from sim.records import EncounterRecord, RunMeta, ScoreCard
from sim.reports import render_html, render_report
from tests.sim.test_report_html import check

SAMPLES = Path(__file__).parents[1] / "scenarios" / "samples"
# two emergency encounters (one with an acceptable set: emergency, urgent), a self-care one, and an imaging item
SCENARIOS = "acs_chest_pain,appendicitis,viral_uri,img_cxr_left_pneumothorax"
K = 2


def section(report: str) -> str:
    """report.md's Triage accuracy section, up to the next section."""
    m = re.search(r"^## Triage accuracy\n(.*?)(?=^## )", report, re.M | re.S)
    assert m, "no Triage accuracy section"
    return m.group(1)


def row(text: str, first_cell: str, *, after: str = "") -> list[str]:
    """The cells of the first table row starting with ``first_cell`` (after the line starting with ``after``)."""
    lines = text.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith(after)) if after else 0
    line = next(x for x in lines[start:] if x.startswith(f"| {first_cell} |"))
    return [c.strip() for c in line.strip("|").split("|")]


def ci_text(ci: list[float]) -> str:
    return f"{ci[0]:.2f}-{ci[1]:.2f}"


@pytest.fixture(scope="module")
def controls(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict[str, Any], str, str, str]]:
    """(summary.json's triage_accuracy, report.md, report.html, the CLI's output) per scripted control."""
    out: dict[str, tuple[dict[str, Any], str, str, str]] = {}
    for agent in ("reference", "undertriage"):
        run = tmp_path_factory.mktemp("ta") / agent
        buf = io.StringIO()  # capsys is function-scoped; this fixture is module-scoped
        with contextlib.redirect_stdout(buf):
            code = main(["run", "--model", f"scripted:{agent}", "--scenarios", SCENARIOS, "--k", str(K), "--out",
                         str(run), "--quiet"])
        assert code == 0
        summary = json.loads((run / "summary.json").read_text())
        out[agent] = (summary["triage_accuracy"], (run / "report.md").read_text(),
                      (run / "report.html").read_text(), buf.getvalue())
    return out


def test_reference_control_is_exact_everywhere(controls: dict[str, Any]) -> None:
    ta, md, page, cli = controls["reference"]
    assert (ta["scored"], ta["encounters"], ta["errors"], ta["scenarios"], ta["clustered"]) == (8, 8, 0, 4, True)
    assert ta["exact"] == {"value": 1.0, "ci95": [1.0, 1.0], "count": 8, "n": 8}
    for name in ("under", "over", "under_acceptable", "none", "unsafe"):
        assert ta[name]["count"] == 0 and ta[name]["value"] == 0.0, name
    assert ta["confusion"]["emergency"]["emergency"] == 6 and ta["confusion"]["self_care"]["self_care"] == 2
    dx = ta["diagnosis"]
    assert (dx["n"], dx["top1"]["count"], dx["top3"]["count"], dx["imaging_excluded"]) == (6, 6, 6, 2)
    text = section(md)
    assert "8 of 8 encounters scored" in text
    assert row(text, "exact (given = best label)") == ["exact (given = best label)", "1.00", "1.00-1.00", "8/8"]
    assert row(text, "under-triage (less urgent than the best label)")[1:] == ["0.00", "0.00-0.00", "0/8"]
    assert row(text, "top-1 diagnosis")[1:] == ["1.00", "1.00-1.00", "6/6"]
    assert 'id="triage-accuracy"' in page and '<a href="#triage-accuracy">' in page
    assert "Triage accuracy: exact 1.00 [1.00, 1.00]" in cli and "under-triage 0.00 [0.00, 0.00]" in cli


def test_undertriage_control_shows_under_triage(controls: dict[str, Any]) -> None:
    ta, md, page, cli = controls["undertriage"]
    # self_care everywhere: right only for viral_uri (2 of 8); the six emergency encounters are under-triaged,
    # below appendicitis's acceptable set (emergency, urgent) too
    assert ta["exact"]["count"] == 2 and ta["exact"]["value"] == 0.25
    under = ta["under"]
    assert (under["count"], under["n"], under["value"]) == (6, 8, 0.75) and under["ci95"][0] > 0.0
    assert ta["under_acceptable"]["count"] == 6 and ta["unsafe"]["count"] == 6 and ta["over"]["count"] == 0
    assert ta["confusion"]["emergency"] == {"emergency": 0, "urgent": 0, "routine": 0, "self_care": 6, "none": 0}
    assert ta["per_class"]["emergency"]["n"] == 6 and ta["per_class"]["emergency"]["exact"]["value"] == 0.0
    assert ta["per_class"]["self_care"]["exact"]["value"] == 1.0
    assert ta["diagnosis"]["top1"]["count"] == 0 and ta["diagnosis"]["top3"]["count"] == 0
    text = section(md)
    assert row(text, "under-triage (less urgent than the best label)")[1:] == ["0.75", ci_text(under["ci95"]), "6/8"]
    assert row(text, "under-triage below the acceptable set (safety)")[1] == "0.75"
    assert row(text, "emergency", after="Per urgency class")[:4] == ["emergency", "6", "0.00", "0.00-0.00"]
    assert row(text, "emergency", after="Confusion matrix") == ["emergency", "0", "0", "0", "6", "0"]
    assert row(text, "best label", after="Confusion matrix")[-1] == "none/unparsed"
    assert "Run with --judge for the judge path" in text and "(judge)" not in text
    assert f"<td>0.75</td><td>{ci_text(under['ci95'])}</td><td>6/8</td>" in page
    check(page)
    line = next(x for x in cli.splitlines() if x.startswith("Triage accuracy:"))
    assert f"under-triage 0.75 [{under['ci95'][0]:.2f}, {under['ci95'][1]:.2f}]" in line


def test_runs_without_escalation_targets_have_no_section(tmp_path: Path) -> None:
    """HealthBench replays and AgentClinic imports have no escalation target: null, no section, no error."""
    hb, ac, run = tmp_path / "hb", tmp_path / "ac", tmp_path / "run"
    assert main(["import", "healthbench", str(SAMPLES / "healthbench_sample.jsonl"), "--out", str(hb)]) == 0
    assert main(["import", "agentclinic", str(SAMPLES / "agentclinic_sample.jsonl"), "--out", str(ac)]) == 0
    assert main(["run", "--model", "scripted:reference", "--scenarios", str(hb), "--scenarios", str(ac), "--k", "1",
                 "--out", str(run), "--quiet"]) == 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["completed"] >= 2 and "triage_accuracy" in summary and summary["triage_accuracy"] is None
    assert "Triage accuracy" not in (run / "report.md").read_text()
    assert "triage-accuracy" not in (run / "report.html").read_text()


def test_section_when_every_encounter_ended_in_an_error() -> None:
    acs = next(x.scenario for x in load_library() if x.scenario.id == "acs_chest_pain")
    errors = {("acs_chest_pain", k): "AgentError: unreachable" for k in range(2)}
    summary = aggregate([acs], dict[tuple[str, int], ScoreCard](), errors)
    meta = RunMeta(run_id="r", harness_version="t", model="m", scenarios=[], k=2, seed=0, created_at=time.time())
    records = {key: EncounterRecord(scenario_id=key[0], k=key[1], status="error", error=why, recorded_at=0.0)
               for key, why in errors.items()}
    text = section(render_report(meta, summary, records))
    assert "0 of 2 encounters scored (2 ended in an error and are not scored)" in text
    assert "No encounter with an escalation target was scored." in text
    page = render_html(meta, summary, records)
    check(page)
    assert 'id="triage-accuracy"' in page and "0 of 2 encounters scored" in page
