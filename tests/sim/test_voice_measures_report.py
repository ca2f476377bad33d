"""The calls' clinical voice measures in summary.json, report.md and report.html (sim.summary.call_measures).

A call run (interaction metrics, timed turns) gets a "Voice measures" section; a text run of the same scenario gets
none, and its summary.json has no voice_measures key, so text runs' files do not change.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scenarios import LoadedScenario
from scorers import score
from sim.encounter.assessment import parse_assessment
from sim.records import ConversationResult, EncounterRecord, RunMeta, ScenarioRef, Summary, Turn
from sim.store import RunStore
from sim.summary import summarise

FINAL = ("ASSESSMENT: Triage level: ESI 2. Escalation: emergency. Diagnoses: 1. Acute coronary syndrome. "
         "Advice: Call 911 now.")


def _turns(timed: bool) -> list[Turn]:
    spec = [("patient", "I've got this pressure in my chest.", 0.0, 3.0, []),
            ("agent", "Are you sweaty or sick to your stomach?", 4.0, 6.0, []),
            ("patient", "I've been sweating a lot and I feel sick to my stomach.", 7.0, 10.0, ["sweating_nausea"]),
            ("agent", "**Does it spread** to your arm or jaw?", 11.5, 13.0, []),
            ("patient", "It goes into my left arm and up into my jaw.", 14.0, 16.0, ["radiation"]),
            ("agent", FINAL, 17.0, 24.0, [])]
    return [Turn(index=i, speaker=who, text=text, started_at=0.0, ended_at=0.0, revealed=revealed,  # type: ignore[arg-type]
                 channel={"speech_start_s": start, "speech_end_s": end} if timed else {})
            for i, (who, text, start, end, revealed) in enumerate(spec)]


def _run(tmp_path: Path, loaded: LoadedScenario, channel: str) -> tuple[Path, Summary]:
    call = channel == "call"
    turns = _turns(call)
    result = ConversationResult(
        scenario_id=loaded.scenario.id, k=0, seed=0, harness_version="t", model="m", turns=turns,
        gathered_info=["sweating_nausea", "radiation"], final_assessment=FINAL, final_reply=FINAL,
        assessment=parse_assessment(FINAL), termination="assessment", agent_turns=3, turn_limit=12, started_at=0.0,
        ended_at=30.0, interaction={"patient_latency_s": [1.0, 1.0], "agent_latency_s": [1.0, 1.5, 1.0],
                                    "agent_latency_p50_s": 1.0, "agent_latency_p95_s": 1.45, "overlaps": []}
        if call else None)
    meta = RunMeta(run_id=channel, harness_version="t", model="m", channel=channel, k=1, seed=0, created_at=0.0,
                   scenarios=[ScenarioRef(id=loaded.scenario.id, path=str(loaded.path), sha256=loaded.sha256)])
    store = RunStore.create(tmp_path / channel, meta)
    try:
        store.append(EncounterRecord(scenario_id=loaded.scenario.id, k=0, status="ok", result=result,
                                     score=score(result, loaded.scenario), recorded_at=0.0))
        summary = summarise(store, [loaded], meta)
    finally:
        store.close()
    return tmp_path / channel, summary


def test_a_call_run_has_a_voice_measures_section_and_a_text_run_none(tmp_path: Path,
                                                                      library: list[LoadedScenario]) -> None:
    loaded = next(s for s in library if s.scenario.id == "acs_chest_pain")
    root, summary = _run(tmp_path, loaded, "call")
    vm = summary.voice_measures
    assert vm is not None and vm.calls == 1 and vm.red_flag_calls == 1 and vm.advice_given == 1
    advice = vm.per_call[0].safety_advice
    assert advice is not None and advice.fact == "sweating_nausea" and advice.seconds == 7.0
    assert advice.agent_turns == 2 and advice.phrase == "call 911"
    assert summary.live is not None and vm.agent_latency_p50_s == summary.live.agent_latency_p50_s == 1.0
    assert vm.markdown == 2 and vm.flagged_turns == 1 and vm.speakability == pytest.approx(2 / 3)
    on_disk = json.loads((root / "summary.json").read_text())
    assert on_disk["voice_measures"]["advice_p50_s"] == 7.0
    assert Summary.model_validate(on_disk).voice_measures == vm
    report = (root / "report.md").read_text()
    assert "## Voice measures" in report
    assert "given in 1 of 1 call(s) in which a red flag was revealed" in report
    assert "| acs_chest_pain k=0 | 1.00 / 1.45 | sweating_nausea | 7.00 s, 2 turn(s): call 911 |" in report
    page = (root / "report.html").read_text()
    assert '<section id="voice-measures">' in page and 'href="#voice-measures"' in page

    root, summary = _run(tmp_path, loaded, "text")
    assert summary.voice_measures is None
    assert "voice_measures" not in json.loads((root / "summary.json").read_text())
    assert "Voice measures" not in (root / "report.md").read_text()
    assert "voice-measures" not in (root / "report.html").read_text()
