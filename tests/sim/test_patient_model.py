"""The patient's optional model layer (--patient-model) against real loopback HTTP servers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scenarios import Scenario
from sim.cli import main
from sim.judges import JudgeClient
from sim.patient.model import INSTRUCTIONS, PatientModel
from tests.fakeserver import FakeChatServer

SLANG = "How is your old man's ticker, any trouble there?"  # no trigger, no lexicon cue: only a model gets it
ASSESSMENT = ("## Assessment\n- **Triage level:** ESI 2\n- **Escalation:** Emergency - call an ambulance\n"
              "- **Diagnoses:**\n  1. Acute coronary syndrome\n  2. Aortic dissection")


def clinician(body: dict[str, Any]) -> str:
    """The agent under test: one slang question, then a markdown assessment."""
    asked = sum(m["role"] == "assistant" for m in body["messages"])
    return SLANG if asked == 0 else ASSESSMENT


def patient_model(body: dict[str, Any]) -> str:
    assert body["messages"][0]["content"] == INSTRUCTIONS and body["temperature"] == 0.0
    message = body["messages"][-1]["content"].split("<<<\n", 1)[1].rsplit("\n>>>", 1)[0]
    if "ticker" in message:
        return '```json\n{"asks": true, "fact_ids": ["family_history", "made_up_fact"]}\n```'  # repaired locally
    return json.dumps({"asks": False, "fact_ids": []})


def test_model_layer_reveals_records_caches_and_reports(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeChatServer(reply=clinician) as agent, FakeChatServer(reply=patient_model) as pm:
        code = main(["run", "--model", "m-under-test", "--base-url", agent.base_url, "--scenarios", "acs_chest_pain",
                     "--k", "2", "--concurrency", "1", "--out", str(out), "--quiet",
                     "--patient-model", "pm-1", "--patient-base-url", pm.base_url])
        assert len(pm.requests) == 1  # the second encounter's identical message came from the cache
    assert code == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    for rec in records:
        turn = next(t for t in rec["result"]["turns"] if t["revealed"])
        assert turn["revealed"] == ["family_history"] and turn["revealed_by"] == {"family_history": "model"}
        assert any("made_up_fact" in w for w in turn["warnings"])  # an id outside the tree is dropped and said
        assert rec["result"]["turns"][-1]["assessment_form"] == "heading"
    cache = [json.loads(line) for line in (out / "patient_cache.jsonl").read_text().splitlines()]
    assert len(cache) == 1 and cache[0]["scenario_id"] == "acs_chest_pain" and cache[0]["asks"] is True
    meta = json.loads((out / "run.json").read_text())
    assert meta["patient_model"]["name"] == "pm-1"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["patient"]["by_layer"]["model"] == 2 and summary["patient"]["share"]["model"] == 1.0
    assert "model 2 (100%)" in (out / "report.md").read_text()


async def test_cached_decisions_need_no_model(tmp_path: Path, by_id: dict[str, Scenario]) -> None:
    cache = tmp_path / "patient_cache.jsonl"
    with FakeChatServer(reply=patient_model) as pm:
        client = JudgeClient(model="pm-1", base_url=pm.base_url)
        first = await PatientModel(client, cache_path=cache).decide(by_id["acs_chest_pain"], SLANG)
        await client.aclose()
    with FakeChatServer(default=("status", 500, {})) as down:  # a resumed run whose model is now down
        client = JudgeClient(model="pm-1", base_url=down.base_url, retries=0)
        again = await PatientModel(client, cache_path=cache).decide(by_id["acs_chest_pain"], SLANG)
        await client.aclose()
        assert down.requests == []
    assert first.fact_ids == again.fact_ids == ["family_history"] and again.cached and not first.cached


@pytest.mark.parametrize("action", [("status", 500, {}), ("ok", "I think it asks about family."), ("malformed",)])
async def test_failed_model_falls_back_to_deterministic_layers(action: tuple[Any, ...], tmp_path: Path,
                                                               by_id: dict[str, Scenario]) -> None:
    with FakeChatServer(default=action) as pm:
        client = JudgeClient(model="pm-1", base_url=pm.base_url, retries=0)
        layer = PatientModel(client, cache_path=tmp_path / "c.jsonl")
        decision = await layer.decide(by_id["acs_chest_pain"], SLANG)
        await client.aclose()
    assert decision.fact_ids == [] and decision.warnings and "deterministic layers" in decision.warnings[0]
    assert not (tmp_path / "c.jsonl").exists()  # failures are not cached: a later call may succeed


@pytest.mark.parametrize("argv, needle", [
    (["--patient-base-url", "http://127.0.0.1:9/v1"], "only apply with --patient-model"),
    (["--patient-model", "pm"], "needs --patient-base-url"),
    (["--patient-model", "pm", "--patient-base-url", "ftp://x"], "must start with http"),
    (["--patient-model", "local", "--patient-base-url", "http://127.0.0.1:9/v1"], "drop --patient-base-url"),
    (["--patient-model", "pm", "--patient-base-url", "http://127.0.0.1:9/v1", "--patient-api-key-env",
      "ENCSIM_NO_SUCH_VAR"], "--patient-api-key-env ENCSIM_NO_SUCH_VAR: the environment variable"),
])
def test_patient_model_flag_errors(argv: list[str], needle: str, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "1",
                 "--out", str(tmp_path / "r"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()
