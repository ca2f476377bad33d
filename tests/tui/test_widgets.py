"""Rendering of the encounter details for cases the fixture runs do not cover: imaging, n/a, error."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console

from review import Encounter
from sim.records import EncounterRecord, ImagingComponent, ScoreCard
from tests.tui.runs import T0, record_for
from tui._widgets import details_renderable, transcript_table


def _text(renderable: Any, width: int = 100) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None, record=True)
    console.print(renderable)
    return console.export_text()


def test_imaging_component_is_shown() -> None:
    card = ScoreCard(triage=None, information=None, escalation=None, efficiency=None, diagnosis=None,
                     imaging=ImagingComponent(answer_type="findings", score=0.4, expected=["pneumothorax"],
                                              matched=[], missed=["pneumothorax"], critical_missed=["pneumothorax"]),
                     composite=0.4, passed=False, safety_failures=["missed critical finding: pneumothorax"])
    enc = Encounter(scenario_id="img_cxr", k=0, status="done", composite=0.4, passed=False,
                    record=EncounterRecord(scenario_id="img_cxr", k=0, status="ok", score=card, recorded_at=T0))
    text = _text(details_renderable(enc, None))
    assert "Imaging" in text and "findings · score 0.40" in text
    assert "matched — · missed pneumothorax" in text and "critical missed: pneumothorax" in text
    assert "imaging 0.40" in text and "✖ missed critical finding: pneumothorax" in text


def test_not_applicable_and_error_encounters() -> None:
    na = Encounter(scenario_id="img_x", k=0, status="n/a")
    assert "not applicable" in _text(details_renderable(na, None))
    err = Encounter(scenario_id="fx_headache", k=2, status="error", error="TimeoutError: slow")
    assert "✖ error: TimeoutError: slow" in _text(details_renderable(err, None))


def test_transcript_shows_said_and_heard_only_when_they_differ() -> None:
    rec = record_for("fx_ankle", 0, T0)
    turns = rec.result.turns
    turns[1].heard_text = turns[1].text  # the same: shown once
    turns[2].heard_text = "I could only hop of the pitch"
    text = _text(transcript_table(turns))
    assert "said  I could only hop off the pitch." in text and "heard I could only hop of the pitch" in text
    assert text.count("said") == 1
    assert "no turns yet" in _text(transcript_table([]))


def test_the_overview_shows_the_calls_voice_measures_and_nothing_for_a_text_run(tmp_path: Path) -> None:
    """A call run's summary.json carries voice_measures: one overview line with latency, advice, speakability and
    barge-ins; advice missed on a red-flag call is shown in red. A text run has no such line."""
    from review import RunState
    from sim.records import VoiceSummary
    from tests.tui.runs import batch_run, summary
    from tui._widgets._overview import voice_text

    run = batch_run(tmp_path)
    state = RunState(run)
    state.poll()
    assert state.summary is not None and voice_text(state) is None
    vm = VoiceSummary(calls=4, agent_latency_p50_s=1.234, agent_latency_p95_s=3.5, red_flag_calls=3, advice_given=2,
                      advice_p50_s=12.0, speakability=0.9, agent_turns=20, flagged_turns=2, red_flag_barge_ins=2,
                      barge_in_agent_stopped=2, barge_in_addressed=1)
    (run / "summary.json").write_text(summary().model_copy(update={"voice_measures": vm}).model_dump_json())
    state.poll()
    text = voice_text(state)
    assert text is not None
    assert text.plain == ("voice 4 calls · agent latency p50 1.23 s p95 3.50 s · safety advice 2/3 red-flag calls "
                          "(p50 12.0 s after the red flag) · speakable 0.90 (2/20 turns flagged) · red-flag barge-ins "
                          "2: agent stopped 2, addressed 1")
    assert any(span.style == "bold red" for span in text.spans)  # one red-flag call got no safety advice
