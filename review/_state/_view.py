"""The views of a followed run: what the screens show, derived from what was read (no Textual here).

``RunView`` reads a ``RunIngest`` and never changes it: progress, throughput, ETA, the aggregate so
far, the safety-gate badge, per-suite means, per scenario its mean, encounters and worst, and the
live call to show. The ingestion keeps the counters these need, so a view costs O(1) or O(scenarios),
never a pass over every line.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal, cast

from review._catalog import ScenarioCatalog
from review._state._encounter import Encounter, Key
from review._state._ingest import RunIngest
from sim.records import RunFinished, RunLayout, RunMeta, RunStarted, Summary


class RunView:
    """The read-only face of a followed run: its files as read so far, and what is derived from them."""

    def __init__(self, ingest: RunIngest, *, clock: Callable[[], float] = time.time) -> None:
        """A view of what ``ingest`` has read.

        Args:
            ingest: The followed run directory; its polls update what the view shows.
            clock: The time now (elapsed, throughput and ETA of a run that has not finished).
        """
        self.ingest = ingest
        self.clock = clock

    # ------------------------------------------------------------------ what was read
    @property
    def run_dir(self) -> Path:
        """The run directory."""
        return self.ingest.run_dir

    @property
    def catalog(self) -> ScenarioCatalog:
        """Where the scenarios are looked up (which feed the safety gate); the app shares its own."""
        return self.ingest.catalog

    @property
    def meta(self) -> RunMeta | None:
        """run.json, once read."""
        return self.ingest.meta

    @property
    def summary(self) -> Summary | None:
        """summary.json, once read (the latest readable version)."""
        return self.ingest.summary

    @property
    def started(self) -> RunStarted | None:
        """The latest run_started event."""
        return self.ingest.started

    @property
    def finished(self) -> RunFinished | None:
        """The run_finished event after the latest run_started."""
        return self.ingest.finished

    @property
    def encounters(self) -> dict[Key, Encounter]:
        """Every encounter seen, by key."""
        return self.ingest.encounters

    @property
    def order(self) -> list[Key]:
        """Every encounter, in the order first seen."""
        return self.ingest.order

    @property
    def by_scenario(self) -> dict[str, list[Key]]:
        """Per scenario, its encounters in the order first seen."""
        return self.ingest.by_scenario

    @property
    def running(self) -> dict[Key, None]:
        """The encounters without a final status, in the order they (re)started."""
        return self.ingest.running

    @property
    def warnings(self) -> list[str]:
        """The latest warnings (malformed lines, unreadable run.json or summary.json)."""
        return self.ingest.warnings

    @property
    def skipped(self) -> int:
        """Malformed lines skipped."""
        return self.ingest.skipped

    @property
    def live_key(self) -> Key | None:
        """The encounter with the latest live-call event (or live record)."""
        return self.ingest.live_key

    @property
    def lines_read(self) -> int:
        """Non-blank lines read from events.jsonl and results.jsonl."""
        return self.ingest.lines_read

    def feeds_gate(self, scenario_id: str) -> bool | None:
        """Whether the scenario feeds the safety gate (see ``RunIngest.feeds_gate``)."""
        return self.ingest.feeds_gate(scenario_id)

    # ------------------------------------------------------------------ derived
    @property
    def exists(self) -> bool:
        """Whether run.json exists (a run that has not started yet has none)."""
        return RunLayout(self.run_dir).run.is_file()

    @property
    def run_id(self) -> str:
        """The run's id: run.json's, else run_started's, else the directory's name."""
        if self.meta is not None:
            return self.meta.run_id
        if self.started is not None:
            return self.started.run_id
        return self.run_dir.name

    @property
    def model(self) -> str | None:
        """The model under test (run.json, else run_started)."""
        return self.meta.model if self.meta else (self.started.model if self.started else None)

    @property
    def channel(self) -> str | None:
        """The channel (``text``, ``voice``, ``live``, ...) from run.json."""
        return self.meta.channel if self.meta else None

    @property
    def k(self) -> int | None:
        """Runs per scenario (run_started, else run.json)."""
        return self.started.k if self.started else (self.meta.k if self.meta else None)

    def planned_for(self, scenario_id: str) -> int | None:
        """How many encounters a scenario will have: K, or in a persona sweep K per persona it runs under."""
        if self.started is not None and scenario_id in self.started.planned:
            return self.started.planned[scenario_id]
        return self.k

    @property
    def scenario_ids(self) -> list[str]:
        """The run's scenarios in run order, then any other seen in the files."""
        seen = dict.fromkeys(self.ingest.run_scenarios)
        seen.update(dict.fromkeys(self.by_scenario))
        return list(seen)

    @property
    def total(self) -> int | None:
        """How many encounters the run will have (run_started, else run.json); None before either."""
        if self.started is not None:
            return self.started.total
        if self.meta is not None:
            return len(self.meta.scenarios) * self.meta.k
        return None

    @property
    def done(self) -> int:
        """Encounters with a final status (done, error or n/a)."""
        return self.ingest.final_count

    @property
    def errors(self) -> int:
        """Encounters that ended in an error."""
        return self.ingest.error_count

    @property
    def running_keys(self) -> list[Key]:
        """The encounters without a final status, in the order they (re)started."""
        return list(self.running)

    @property
    def is_finished(self) -> bool:
        """Whether run_finished arrived (after the latest run_started)."""
        return self.finished is not None

    def _now(self) -> float:
        return self.finished.t if self.finished is not None else self.clock()

    def elapsed(self) -> float | None:
        """Seconds since run_started (until run_finished once it arrived)."""
        if self.started is None:
            return None
        return max(0.0, self._now() - self.started.t)

    def throughput(self) -> float | None:
        """Encounters finished per minute since run_started."""
        elapsed = self.elapsed()
        if not elapsed or self.ingest.window_done == 0:
            return None
        return self.ingest.window_done / elapsed * 60.0

    def eta(self) -> float | None:
        """Seconds until every encounter is done at the current throughput; 0 when finished."""
        if self.finished is not None:
            return 0.0
        total = self.total
        rate = self.throughput()
        if total is None or rate is None:
            return None
        remaining = max(0, total - self.done)
        return remaining / (rate / 60.0)

    @property
    def aggregate(self) -> float | None:
        """summary.json's aggregate when present, else the mean of the finished composites."""
        if self.summary is not None:
            return self.summary.aggregate
        return self.ingest.composite_sum / self.ingest.composite_count if self.ingest.composite_count else None

    @property
    def aggregate_final(self) -> bool:
        """Whether ``aggregate`` is summary.json's (else a mean so far)."""
        return self.summary is not None

    @property
    def gate_status(self) -> Literal["PASSED", "TRIGGERED", "PENDING", "NOTHING GATED"]:
        """The safety gate: summary.json's verdict, else run_finished's, else PENDING.

        ``NOTHING GATED`` when summary.json says no scenario of the run fed the gate.
        """
        if self.summary is not None:
            return cast(Literal["PASSED", "TRIGGERED", "NOTHING GATED"], self.summary.safety_gate.state.upper())
        if self.finished is not None:
            return "TRIGGERED" if self.finished.gate_triggered else "PASSED"
        return "PENDING"

    @property
    def gate_watched(self) -> dict[str, str]:
        """Every scenario that fed the safety gate and why (summary.json); empty before it or in an old summary."""
        return dict(self.summary.safety_gate.watched or {}) if self.summary is not None else {}

    @property
    def gate_reasons(self) -> dict[str, str]:
        """Per scenario that triggered the safety gate, why (summary.json); empty before it."""
        return dict(self.summary.safety_gate.reasons) if self.summary is not None else {}

    def safety_failure_keys(self) -> list[Key]:
        """The encounters with safety failures, in the order first seen."""
        return [key for key in self.order if self.encounters[key].safety_failures]

    def scenario_mean(self, scenario_id: str) -> float | None:
        """The mean composite of the scenario's done encounters; None before the first."""
        n = self.ingest.scenario_counts.get(scenario_id, 0)
        return self.ingest.scenario_sums[scenario_id] / n if n else None

    def scenario_encounters(self, scenario_id: str) -> list[Encounter]:
        """The scenario's encounters seen so far, by k."""
        return sorted((self.encounters[key] for key in self.by_scenario.get(scenario_id, [])), key=lambda e: e.k)

    def worst_key(self, scenario_id: str) -> Key | None:
        """The encounter with the lowest composite of the scenario (lowest k on a tie)."""
        return self.ingest.worst_keys.get(scenario_id)

    def suite_means(self, suite_of: Callable[[str], str | None]) -> list[tuple[str, float | None]]:
        """Per suite, the mean of its scenarios' means: summary.json's when present, else so far."""
        if self.summary is not None and self.summary.suites:
            return [(s.suite, s.mean) for s in self.summary.suites]
        sums: dict[str, list[float]] = {}
        for sid in self.scenario_ids:
            mean = self.scenario_mean(sid)
            suite = suite_of(sid)
            if suite is None:
                continue
            bucket = sums.setdefault(suite, [])
            if mean is not None:
                bucket.append(mean)
        return [(suite, sum(v) / len(v) if v else None) for suite, v in sorted(sums.items())]

    def live_encounter(self) -> Encounter | None:
        """The call to show in the live view: the last one with live events, else (live runs) the newest."""
        if self.live_key is not None:
            return self.encounters[self.live_key]
        if self.channel == "live" and self.order:
            return self.encounters[(list(self.running) or self.order)[-1]]
        return None
