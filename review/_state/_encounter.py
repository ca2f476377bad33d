"""One encounter as the dashboard sees it, and how encounters are named.

An encounter is keyed by ``(scenario_id, k)`` (``Key``); annotations name it by its trace id,
``"<scenario_id>:<k>"``.

Safety markers: "gate" for an encounter whose scenario triggered the safety gate (summary.json), or
that has a safety failure in a scenario the gate watches (the safety suite, imaging items with
critical findings: ``scorers.gates``); "safety" for a safety failure in
any other scenario (it lowers the score but cannot trigger the gate), or in one that cannot be found.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from sim.records import EncounterRecord, LatencyMeasured, OverlapDetected, Turn, TurnRecorded

Key = tuple[str, int]
Status = Literal["running", "done", "error", "n/a"]
Marker = Literal["gate", "safety"]
FINAL_STATUSES: tuple[Status, ...] = ("done", "error", "n/a")
TranscriptTurn = Turn | TurnRecorded
"""One message of a transcript: a finished record's ``Turn``, or a running encounter's ``turn`` event."""


def trace_id(scenario_id: str, k: int) -> str:
    """The id of one encounter in annotations: ``"<scenario_id>:<k>"``."""
    return f"{scenario_id}:{k}"


def parse_trace_id(value: str) -> Key | None:
    """The key of a trace id.

    Args:
        value: A trace id, ``"<scenario_id>:<k>"``.

    Returns:
        ``(scenario_id, k)``, or None when ``value`` is not a trace id.
    """
    sid, sep, k = value.rpartition(":")
    if not sep or not sid or not k.lstrip("-").isdigit():
        return None
    return sid, int(k)


@dataclass(eq=False)
class Encounter:
    """One (scenario, k) as the dashboard sees it."""

    scenario_id: str
    k: int
    status: Status = "running"
    composite: float | None = None
    passed: bool | None = None
    termination: str | None = None
    safety_failures: list[str] = field(default_factory=list)
    error: str | None = None
    started_t: float | None = None
    finished_t: float | None = None
    record: EncounterRecord | None = None
    event_turns: dict[int, TurnRecorded] = field(default_factory=dict)
    worst: bool = False
    """The lowest composite of its scenario (marked once the scenario has two scored encounters)."""
    gate: bool = False
    """It counts for the safety gate: its scenario triggered the gate, or the encounter has safety
    failures and its scenario feeds the gate (safety suite, imaging item with critical findings)."""
    speaking: dict[str, float] = field(default_factory=dict)
    """Live calls: speaker -> when (seconds into the call) they became audible; empty in silence."""
    latencies: list[LatencyMeasured] = field(default_factory=list)
    overlaps: list[OverlapDetected] = field(default_factory=list)
    live: bool = False
    """A live call: speech, latency or overlap events arrived, or its record has interaction metrics."""

    @property
    def key(self) -> Key:
        """``(scenario_id, k)``."""
        return self.scenario_id, self.k

    @property
    def marker(self) -> Marker | None:
        """The safety marker: "gate" (see ``gate``), else "safety" when it has safety failures.

        A "safety" encounter's scenario does not feed the gate (or cannot be found); None without
        safety failures.
        """
        if self.gate:
            return "gate"
        return "safety" if self.safety_failures else None

    @property
    def trace_id(self) -> str:
        """``"<scenario_id>:<k>"``, its id in annotations."""
        return trace_id(self.scenario_id, self.k)

    @property
    def turns(self) -> list[TranscriptTurn]:
        """The transcript: ``sim.records.Turn`` once finished, ``sim.records.TurnRecorded`` while running.

        Both have ``index``, ``speaker``, ``text``, ``heard_text``, ``revealed`` and ``latency_s``.
        """
        result = self.record.result if self.record is not None else None
        if result is not None and (self.status != "running" or not self.event_turns):
            return list(result.turns)
        return [self.event_turns[i] for i in sorted(self.event_turns)]

