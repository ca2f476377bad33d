"""The event log: ``runs/<id>/events.jsonl``, the seam to the dashboard.

One JSON object per line, each with ``type`` and ``t`` (unix time), flushed as it is written so
another process can follow the file. Readers must skip a malformed or truncated line (a killed
writer can leave one) and carry on; ``read_events`` does so and reports how many it skipped.
Each line is redacted as written (``sim.records.redact_json``): a key an endpoint reflected into a
turn's text or an error shows as ``[redacted]``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from sim.records._redact import redact_json


class _Event(BaseModel):
    t: float = Field(default_factory=time.time)


class RunStarted(_Event):
    """``run_started``: a run starts or resumes, with how many encounters it has and how many are already done."""

    type: Literal["run_started"] = "run_started"
    run_id: str
    model: str
    scenarios: list[str]
    k: int
    total: int
    resumed: bool = False
    already_done: int = 0
    planned: dict[str, int] = Field(default={}, description="a persona sweep's planned encounters per scenario (K "
                                                            "per persona it runs under); empty: K each")


class EncounterStarted(_Event):
    """``encounter_started``: an encounter starts."""

    type: Literal["encounter_started"] = "encounter_started"
    scenario_id: str
    k: int


class TurnRecorded(_Event):
    """``turn``: one message of an encounter, with what the other side heard and the facts it revealed."""

    type: Literal["turn"] = "turn"
    scenario_id: str
    k: int
    index: int
    speaker: str
    text: str
    heard_text: str | None = None
    revealed: list[str] = []
    latency_s: float = 0.0


class EncounterFinished(_Event):
    """``encounter_finished``: an encounter was scored, or did not apply.

    With its composite, how it ended (``termination``) and its safety failures.
    """

    type: Literal["encounter_finished"] = "encounter_finished"
    scenario_id: str
    k: int
    composite: float | None
    termination: str
    safety_failures: list[str] = []


class EncounterFailed(_Event):
    """``encounter_failed``: an encounter ended in an error."""

    type: Literal["encounter_failed"] = "encounter_failed"
    scenario_id: str
    k: int
    error: str


class SpeechStarted(_Event):
    """Live calls: ``speaker`` became audible at ``at`` seconds into the call."""

    type: Literal["speech_started"] = "speech_started"
    scenario_id: str
    k: int
    speaker: str
    at: float


class SpeechStopped(_Event):
    """Live calls: ``speaker`` went quiet at ``at`` seconds into the call."""

    type: Literal["speech_stopped"] = "speech_stopped"
    scenario_id: str
    k: int
    speaker: str
    at: float


class LatencyMeasured(_Event):
    """Live calls: voice-to-voice latency of one reply by ``side``, total and per stage (seconds)."""

    type: Literal["latency"] = "latency"
    scenario_id: str
    k: int
    side: str
    turn: int
    total_s: float
    stages: dict[str, float] = {}


class OverlapDetected(_Event):
    """Live calls: ``by`` started talking while the other side was audible."""

    type: Literal["overlap"] = "overlap"
    scenario_id: str
    k: int
    by: str
    at: float


class RunFinished(_Event):
    """``run_finished``: the run ended (or was interrupted), with its aggregate, gate verdict and counts."""

    type: Literal["run_finished"] = "run_finished"
    aggregate: float | None
    gate_triggered: bool
    completed: int
    errors: int
    interrupted: bool = False


Event = Annotated[
    RunStarted | EncounterStarted | TurnRecorded | EncounterFinished | EncounterFailed | RunFinished
    | SpeechStarted | SpeechStopped | LatencyMeasured | OverlapDetected,
    Field(discriminator="type"),
]
_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)

EventSink = Callable[[Event], None]
"""What every producer of events is handed: the runner's ``EventLog``, a live call's, or a test's list."""


class EventLog:
    """Append-only writer; one ``write`` per event, flushed to the OS immediately."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def __call__(self, event: _Event) -> None:
        os.write(self._fd, (redact_json(event.model_dump_json()) + "\n").encode())

    def close(self) -> None:
        """Close the file."""
        os.close(self._fd)


def parse_event(line: str) -> Event:
    """One event from one line; raises ValueError on a malformed line."""
    try:
        return _ADAPTER.validate_python(json.loads(line))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise ValueError(f"malformed event line: {str(exc)[:200]}") from None


def read_events(path: Path) -> tuple[list[Event], int]:
    """All well-formed events in ``path`` and the number of lines skipped as malformed."""
    events: list[Event] = []
    skipped = 0
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                events.append(parse_event(line))
            except ValueError:
                skipped += 1
    return events, skipped
