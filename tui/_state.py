"""Follow a run directory incrementally: the dashboard's data layer (no Textual here).

``RunState(run_dir).poll()`` reads only what was appended since the last poll: it keeps the byte
offset of ``events.jsonl`` and ``results.jsonl`` and consumes complete lines only, so a line another
process is still writing (no trailing newline yet) is left for the next poll. A malformed line is
skipped, counted and described in ``warnings`` (file, line number, why); it never raises.
``summary.json`` is re-read when its mtime or size changes; ``run.json`` is read once it exists.

Everything the screens show is derived here: progress, throughput, ETA, the aggregate so far, the
safety-gate badge, per-suite means, and per encounter (keyed by ``(scenario_id, k)``) its status,
composite, worst-of-K marker, safety marker, transcript and, for live calls, who is speaking, the
latencies and the overlaps. Counters are kept incrementally so a poll costs O(new lines).
Every file is read through ``sim.records.display_json``: escape sequences and control characters an
endpoint put in a transcript or an error are shown as text (``\x1b[2J``), never sent to the terminal.

A results line supersedes an earlier one for the same ``(scenario_id, k)``; a results line older
than the encounter's latest ``encounter_started`` (an error being retried) does not end that retry.

Safety markers: "gate" for an encounter whose scenario triggered the safety gate (summary.json), or
that has a safety failure in a scenario the gate watches (the safety suite, imaging items with
critical findings: ``scorers.gates``); "safety" for a safety failure in
any other scenario (it lowers the score but cannot trigger the gate), or in one that cannot be found.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from scorers import Summary
from sim.records import (
    EncounterFailed,
    EncounterFinished,
    EncounterRecord,
    EncounterStarted,
    LatencyMeasured,
    OverlapDetected,
    RunFinished,
    RunLayout,
    RunMeta,
    RunStarted,
    SpeechStarted,
    SpeechStopped,
    TurnRecorded,
    display_json,
    parse_event,
)
from tui._catalog import ScenarioCatalog

Key = tuple[str, int]
Status = Literal["running", "done", "error", "n/a"]
Marker = Literal["gate", "safety"]
FINAL_STATUSES: tuple[Status, ...] = ("done", "error", "n/a")
MAX_WARNINGS = 50
"""How many warning strings are kept (the count ``skipped`` is exact)."""


def trace_id(scenario_id: str, k: int) -> str:
    """The id of one encounter in annotations: ``"<scenario_id>:<k>"``."""
    return f"{scenario_id}:{k}"


def parse_trace_id(value: str) -> Key | None:
    sid, sep, k = value.rpartition(":")
    if not sep or not sid or not k.lstrip("-").isdigit():
        return None
    return sid, int(k)


class _LineReader:
    """The complete lines appended to a file since the previous read, with their 1-based numbers."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.line_no = 0

    def shrank(self) -> bool:
        """The file is shorter than what was already read (it was replaced or truncated)."""
        try:
            return os.stat(self.path).st_size < self.offset
        except OSError:
            return False

    def read(self) -> list[tuple[int, str]]:
        try:
            size = os.stat(self.path).st_size
        except OSError:
            return []
        if size <= self.offset:
            return []
        with open(self.path, "rb") as fh:
            fh.seek(self.offset)
            data = fh.read(size - self.offset)
        end = data.rfind(b"\n")
        if end < 0:
            return []  # a line still being written: wait for its newline
        self.offset += end + 1
        out = []
        for raw in data[:end].split(b"\n"):
            self.line_no += 1
            out.append((self.line_no, raw.decode("utf-8", errors="replace")))
        return out


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
        return self.scenario_id, self.k

    @property
    def marker(self) -> Marker | None:
        """"gate" (see ``gate``), else "safety" when it has safety failures (in a scenario that does
        not feed the gate), else None."""
        if self.gate:
            return "gate"
        return "safety" if self.safety_failures else None

    @property
    def trace_id(self) -> str:
        return trace_id(self.scenario_id, self.k)

    @property
    def turns(self) -> list[Any]:
        """The transcript: ``sim.records.Turn`` once finished, ``sim.records.TurnRecorded`` while running.

        Both have ``index``, ``speaker``, ``text``, ``heard_text``, ``revealed`` and ``latency_s``.
        """
        result = self.record.result if self.record is not None else None
        if result is not None and (self.status != "running" or not self.event_turns):
            return list(result.turns)
        return [self.event_turns[i] for i in sorted(self.event_turns)]


@dataclass
class PollResult:
    """What one poll changed."""

    new: list[Key] = field(default_factory=list)
    """Encounters seen for the first time, in order."""
    changed: set[Key] = field(default_factory=set)
    """Encounters whose row or transcript may have changed (includes the new ones)."""
    overview: bool = False
    live: bool = False
    reset: bool = False
    """The files were replaced: everything was re-read; rebuild every view."""
    summary: bool = False
    """A new summary.json was read (gate reasons, suites and the final aggregate may have changed)."""

    @property
    def any(self) -> bool:
        return bool(self.new or self.changed or self.overview or self.live or self.reset or self.summary)


class RunState:
    """The incrementally followed state of one run directory."""

    def __init__(self, run_dir: Path, *, clock: Callable[[], float] = time.time,
                 catalog: ScenarioCatalog | None = None) -> None:
        self.run_dir = Path(run_dir)
        self.clock = clock
        self.catalog = catalog if catalog is not None else ScenarioCatalog()
        """Where the scenarios are looked up (which feed the safety gate); the app shares its own."""
        self._init()

    def _init(self) -> None:
        self.meta: RunMeta | None = None
        self.summary: Summary | None = None
        self.started: RunStarted | None = None
        self.finished: RunFinished | None = None
        self.encounters: dict[Key, Encounter] = {}
        self.order: list[Key] = []
        self.by_scenario: dict[str, list[Key]] = {}
        self.running: dict[Key, None] = {}
        self.warnings: list[str] = []
        self.skipped = 0
        self.live_key: Key | None = None
        self.lines_read = 0
        self._events = _LineReader(RunLayout(self.run_dir).events)
        self._results = _LineReader(RunLayout(self.run_dir).results)
        self._summary_stamp: tuple[int, int] | None = None
        self._meta_stamp: tuple[int, int] | None = None
        self._run_scenarios: list[str] = []
        self._final = 0
        self._errors = 0
        self._sum = 0.0
        self._n = 0
        self._sc_sum: dict[str, float] = {}
        self._sc_n: dict[str, int] = {}
        self._window_done = 0
        self._gate_scenarios: set[str] = set()
        self._worst: dict[str, Key | None] = {}

    # ------------------------------------------------------------------ polling
    def poll(self) -> PollResult:
        """Read what was appended since the last poll; never raises on bad data."""
        res = PollResult()
        if self._events.shrank() or self._results.shrank():
            self._init()
            res.reset = True
        new_meta = self._poll_meta(res)
        touched: set[str] = set()
        for line_no, line in self._events.read():
            if not line.strip():
                continue
            self.lines_read += 1
            try:
                event = parse_event(display_json(line))
            except ValueError as exc:
                self._warn(f"{RunLayout.EVENTS_FILE} line {line_no}: skipped, {exc}")
                continue
            self._apply_event(event, res, touched)
        for line_no, line in self._results.read():
            if not line.strip():
                continue
            self.lines_read += 1
            try:
                rec = EncounterRecord.model_validate_json(display_json(line))
            except (ValidationError, ValueError) as exc:
                why = str(exc).splitlines()[0][:160]
                self._warn(f"{RunLayout.RESULTS_FILE} line {line_no}: skipped, not an encounter record ({why})")
                continue
            self._apply_record(rec, res, touched)
        if self._poll_summary(res) or new_meta:
            for enc in self.encounters.values():
                self._update_gate(enc, res)
        for sid in touched:
            self._update_worst(sid, res)
        for key in res.changed:
            self._update_gate(self.encounters[key], res)
        if res.new or res.changed:
            res.overview = True
        return res

    def _warn(self, text: str) -> None:
        self.skipped += 1
        self.warnings.append(text)
        del self.warnings[:-MAX_WARNINGS]

    def _poll_meta(self, res: PollResult) -> bool:
        """Read run.json once it exists; True when it was read now."""
        if self.meta is not None:
            return False
        path = RunLayout(self.run_dir).run
        try:
            st = os.stat(path)
        except OSError:
            return False
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == self._meta_stamp:
            return False
        self._meta_stamp = stamp
        try:
            self.meta = RunMeta.model_validate_json(display_json(path.read_text(encoding="utf-8")))
        except (OSError, ValidationError, ValueError) as exc:
            self.warnings.append(f"{RunLayout.RUN_FILE}: unreadable ({str(exc).splitlines()[0][:160]})")
            del self.warnings[:-MAX_WARNINGS]
            return False
        if not self._run_scenarios:
            self._run_scenarios = [s.id for s in self.meta.scenarios]
        self.catalog.add_meta(self.meta)
        res.overview = True
        return True

    def _poll_summary(self, res: PollResult) -> bool:
        path = RunLayout(self.run_dir).summary
        try:
            st = os.stat(path)
        except OSError:
            return False
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == self._summary_stamp:
            return False
        self._summary_stamp = stamp
        try:
            self.summary = Summary.model_validate_json(display_json(path.read_text(encoding="utf-8")))
        except (OSError, ValidationError, ValueError) as exc:
            self.warnings.append(f"{RunLayout.SUMMARY_FILE}: unreadable, kept the previous one "
                                 f"({str(exc).splitlines()[0][:160]})")
            del self.warnings[:-MAX_WARNINGS]
            return False
        self._gate_scenarios = set(self.summary.safety_gate.scenarios)
        res.overview = res.summary = True
        return True

    # ------------------------------------------------------------------ applying lines
    def _get(self, scenario_id: str, k: int, res: PollResult, touched: set[str]) -> Encounter:
        key = (scenario_id, k)
        enc = self.encounters.get(key)
        if enc is None:
            enc = Encounter(scenario_id=scenario_id, k=k)
            self.encounters[key] = enc
            self.order.append(key)
            self.by_scenario.setdefault(scenario_id, []).append(key)
            self.running[key] = None
            res.new.append(key)
        res.changed.add(key)
        touched.add(scenario_id)
        return enc

    def _account(self, enc: Encounter, sign: int) -> None:
        """Add (sign=1) or remove (sign=-1) the encounter's share of the running counters."""
        if enc.status in FINAL_STATUSES:
            self._final += sign
        else:
            if sign > 0:
                self.running[enc.key] = None
            else:
                self.running.pop(enc.key, None)
        if enc.status == "error":
            self._errors += sign
        if enc.status == "done" and enc.composite is not None:
            self._sum += sign * enc.composite
            self._n += sign
            sid = enc.scenario_id
            self._sc_sum[sid] = self._sc_sum.get(sid, 0.0) + sign * enc.composite
            self._sc_n[sid] = self._sc_n.get(sid, 0) + sign

    def _apply_event(self, ev: Any, res: PollResult, touched: set[str]) -> None:
        if isinstance(ev, RunStarted):
            self.started = ev
            self.finished = None
            self._window_done = 0
            if ev.scenarios:
                self._run_scenarios = list(ev.scenarios)
            res.overview = True
            return
        if isinstance(ev, RunFinished):
            self.finished = ev
            res.overview = True
            return
        enc = self._get(ev.scenario_id, ev.k, res, touched)
        if isinstance(ev, EncounterStarted):
            self._account(enc, -1)
            enc.status, enc.composite, enc.passed, enc.error = "running", None, None, None
            enc.termination, enc.safety_failures = None, []
            enc.started_t, enc.finished_t = ev.t, None
            enc.event_turns = {}
            enc.speaking = {}
            self._account(enc, +1)
        elif isinstance(ev, TurnRecorded):
            if enc.status == "running" or enc.record is None:
                enc.event_turns[ev.index] = ev
        elif isinstance(ev, EncounterFinished | EncounterFailed):
            self._account(enc, -1)
            if isinstance(ev, EncounterFailed):
                enc.status, enc.error, enc.composite, enc.termination = "error", ev.error, None, "error"
                enc.safety_failures = []
            else:
                enc.status = "n/a" if ev.termination == "not_applicable" else "done"
                enc.composite, enc.termination = ev.composite, ev.termination
                enc.safety_failures = list(ev.safety_failures)
            enc.finished_t = ev.t
            enc.speaking = {}
            if enc.record is not None and (enc.started_t is None or enc.record.recorded_at >= enc.started_t):
                self._take_record(enc, enc.record)  # the record of this attempt came first
            self._account(enc, +1)
            self._window_done += 1
        elif isinstance(ev, SpeechStarted | SpeechStopped | LatencyMeasured | OverlapDetected):
            enc.live = True
            if isinstance(ev, SpeechStarted):
                enc.speaking[ev.speaker] = ev.at
            elif isinstance(ev, SpeechStopped):
                enc.speaking.pop(ev.speaker, None)
            elif isinstance(ev, LatencyMeasured):
                enc.latencies.append(ev)
            else:
                enc.overlaps.append(ev)
            self.live_key = enc.key
            res.live = True

    def _apply_record(self, rec: EncounterRecord, res: PollResult, touched: set[str]) -> None:
        enc = self._get(rec.scenario_id, rec.k, res, touched)
        stale = enc.status == "running" and enc.started_t is not None and rec.recorded_at < enc.started_t
        if stale:  # an earlier attempt's record while a retry runs: keep it, do not end the retry
            enc.record = rec
            return
        self._account(enc, -1)
        self._take_record(enc, rec)
        self._account(enc, +1)
        if enc.live:
            self.live_key = self.live_key or enc.key
            res.live = True

    @staticmethod
    def _take_record(enc: Encounter, rec: EncounterRecord) -> None:
        enc.record = rec
        statuses: dict[str, Status] = {"ok": "done", "error": "error", "not_applicable": "n/a"}
        enc.status = statuses[rec.status]
        score = rec.score
        enc.composite = score.composite if score is not None else None
        enc.passed = score.passed if score is not None else None
        enc.safety_failures = list(score.safety_failures) if score is not None else []
        if rec.result is not None:
            enc.termination = rec.result.termination
        elif rec.status == "error":
            enc.termination = "error"
        enc.error = rec.error
        if enc.finished_t is None:
            enc.finished_t = rec.recorded_at
        enc.speaking = {}
        enc.event_turns = {}  # the record's transcript is the whole truth now
        if rec.result is not None and rec.result.interaction is not None:
            enc.live = True

    def _update_worst(self, sid: str, res: PollResult) -> None:
        scored = [(enc.composite, enc.k) for key in self.by_scenario.get(sid, [])
                  if (enc := self.encounters[key]).status == "done" and enc.composite is not None]
        worst = (sid, min(scored)[1]) if scored else None
        self._worst[sid] = worst
        mark = worst if len(scored) >= 2 else None
        for key in self.by_scenario.get(sid, []):
            enc = self.encounters[key]
            flag = key == mark
            if enc.worst != flag:
                enc.worst = flag
                res.changed.add(key)

    def _update_gate(self, enc: Encounter, res: PollResult) -> None:
        flag = enc.scenario_id in self._gate_scenarios or (
            bool(enc.safety_failures) and self.feeds_gate(enc.scenario_id) is True)
        if enc.gate != flag:
            enc.gate = flag
            res.changed.add(enc.key)

    def feeds_gate(self, scenario_id: str) -> bool | None:
        """Whether the scenario feeds the safety gate: True when summary.json names it as triggering it,
        else the scenario's own definition (``scorers.gates``); None when it cannot be
        found, or before run.json (which says where the run's scenarios are) has been read."""
        if scenario_id in self._gate_scenarios:
            return True
        if self.meta is None:
            return None
        return self.catalog.feeds_gate(scenario_id)

    # ------------------------------------------------------------------ derived
    @property
    def exists(self) -> bool:
        return RunLayout(self.run_dir).run.is_file()

    @property
    def run_id(self) -> str:
        if self.meta is not None:
            return self.meta.run_id
        if self.started is not None:
            return self.started.run_id
        return self.run_dir.name

    @property
    def model(self) -> str | None:
        return self.meta.model if self.meta else (self.started.model if self.started else None)

    @property
    def channel(self) -> str | None:
        return self.meta.channel if self.meta else None

    @property
    def k(self) -> int | None:
        return self.started.k if self.started else (self.meta.k if self.meta else None)

    @property
    def scenario_ids(self) -> list[str]:
        """The run's scenarios in run order, then any other seen in the files."""
        seen = dict.fromkeys(self._run_scenarios)
        seen.update(dict.fromkeys(self.by_scenario))
        return list(seen)

    @property
    def total(self) -> int | None:
        if self.started is not None:
            return self.started.total
        if self.meta is not None:
            return len(self.meta.scenarios) * self.meta.k
        return None

    @property
    def done(self) -> int:
        """Encounters with a final status (done, error or n/a)."""
        return self._final

    @property
    def errors(self) -> int:
        return self._errors

    @property
    def running_keys(self) -> list[Key]:
        return list(self.running)

    @property
    def is_finished(self) -> bool:
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
        if not elapsed or self._window_done == 0:
            return None
        return self._window_done / elapsed * 60.0

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
        return self._sum / self._n if self._n else None

    @property
    def aggregate_final(self) -> bool:
        return self.summary is not None

    @property
    def gate_status(self) -> Literal["PASSED", "TRIGGERED", "PENDING"]:
        if self.summary is not None:
            return "TRIGGERED" if self.summary.safety_gate.triggered else "PASSED"
        if self.finished is not None:
            return "TRIGGERED" if self.finished.gate_triggered else "PASSED"
        return "PENDING"

    @property
    def gate_reasons(self) -> dict[str, str]:
        return dict(self.summary.safety_gate.reasons) if self.summary is not None else {}

    def safety_failure_keys(self) -> list[Key]:
        return [key for key in self.order if self.encounters[key].safety_failures]

    def scenario_mean(self, scenario_id: str) -> float | None:
        n = self._sc_n.get(scenario_id, 0)
        return self._sc_sum[scenario_id] / n if n else None

    def scenario_encounters(self, scenario_id: str) -> list[Encounter]:
        return sorted((self.encounters[key] for key in self.by_scenario.get(scenario_id, [])), key=lambda e: e.k)

    def worst_key(self, scenario_id: str) -> Key | None:
        """The encounter with the lowest composite of the scenario (lowest k on a tie)."""
        return self._worst.get(scenario_id)

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
