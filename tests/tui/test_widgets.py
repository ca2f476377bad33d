"""Rendering of the encounter details for cases the fixture runs do not cover: imaging, n/a, error."""

from __future__ import annotations

import io
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
