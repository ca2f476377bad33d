r"""Reading a run directory incrementally: the poll (no Textual here).

``RunIngest(run_dir).poll()`` reads only what was appended since the last poll: it keeps the byte
offset of ``events.jsonl`` and ``results.jsonl`` and consumes complete lines only, so a line another
process is still writing (no trailing newline yet) is left for the next poll. A malformed line is
skipped, counted and described in ``warnings`` (file, line number, why); it never raises.
``summary.json`` is re-read when its mtime or size changes; ``run.json`` is read once it exists.
When either log is shorter than what was read (the files were replaced), everything is read again.

Every file is read through ``sim.records.display_json``: escape sequences and control characters an
endpoint put in a transcript or an error are shown as text (``\x1b[2J``), never sent to the terminal.

A results line supersedes an earlier one for the same ``(scenario_id, k)``; a results line older
than the encounter's latest ``encounter_started`` (an error being retried) does not end that retry.

What is read is kept as it arrives: per encounter (``Encounter``) its status, composite, transcript,
live-call events, worst-of-K and gate flags, and, for the views (``review._state._view``), counters kept
incrementally so a poll costs O(new lines): final and error counts, sums of composites overall and
per scenario, the encounters finished since run_started, and the worst encounter of each scenario.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from review._catalog import ScenarioCatalog
from review._state._encounter import FINAL_STATUSES, Encounter, Key, Status
from sim.records import (
    EncounterFailed,
    EncounterFinished,
    EncounterRecord,
    EncounterStarted,
    Event,
    LatencyMeasured,
    OverlapDetected,
    RunFinished,
    RunLayout,
    RunMeta,
    RunStarted,
    SpeechStarted,
    SpeechStopped,
    Summary,
    TurnRecorded,
    display_json,
    parse_event,
)

MAX_WARNINGS = 50
"""How many warning strings are kept (the count ``skipped`` is exact)."""


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
        """The complete lines appended since the last read, as ``(line number, text)``."""
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


@dataclass
class PollResult:
    """What one poll changed."""

    new: list[Key] = field(default_factory=list)
    """Encounters seen for the first time, in order."""
    changed: set[Key] = field(default_factory=set)
    """Encounters whose row or transcript may have changed (includes the new ones)."""
    overview: bool = False
    """The overview may have changed (run events, run.json, summary.json, or any encounter)."""
    live: bool = False
    """A live call's speech, latency or overlap changed (or a live call's record arrived)."""
    reset: bool = False
    """The files were replaced: everything was re-read; rebuild every view."""
    summary: bool = False
    """A new summary.json was read (gate reasons, suites and the final aggregate may have changed)."""

    @property
    def any(self) -> bool:
        """Whether anything changed."""
        return bool(self.new or self.changed or self.overview or self.live or self.reset or self.summary)


class RunIngest:
    """What has been read of one run directory, and the poll that reads more.

    The fields are the run's files as read so far; the views (``RunView``) derive what the screens
    show from them and never change them.
    """

    def __init__(self, run_dir: Path, *, catalog: ScenarioCatalog | None = None) -> None:
        """Follow ``run_dir`` (nothing is read before the first ``poll``).

        Args:
            run_dir: The run directory; it may not exist yet.
            catalog: Where the scenarios are looked up (which feed the safety gate); a new one if None.
        """
        self.run_dir = Path(run_dir)
        self.catalog = catalog if catalog is not None else ScenarioCatalog()
        """Where the scenarios are looked up (which feed the safety gate); the app shares its own."""
        self._reset()

    def _reset(self) -> None:
        self.meta: RunMeta | None = None
        self.summary: Summary | None = None
        self.started: RunStarted | None = None
        self.finished: RunFinished | None = None
        self.encounters: dict[Key, Encounter] = {}
        self.order: list[Key] = []
        """Every encounter, in the order first seen."""
        self.by_scenario: dict[str, list[Key]] = {}
        self.running: dict[Key, None] = {}
        """The encounters without a final status, in the order they (re)started."""
        self.warnings: list[str] = []
        self.skipped = 0
        """Malformed lines skipped."""
        self.live_key: Key | None = None
        """The encounter with the latest live-call event (or live record)."""
        self.lines_read = 0
        self._events = _LineReader(RunLayout(self.run_dir).events)
        self._results = _LineReader(RunLayout(self.run_dir).results)
        self._summary_stamp: tuple[int, int] | None = None
        self._meta_stamp: tuple[int, int] | None = None
        self.run_scenarios: list[str] = []
        """The run's scenarios in run order (run_started, else run.json)."""
        self.final_count = 0
        """Encounters with a final status (done, error or n/a)."""
        self.error_count = 0
        self.composite_sum = 0.0
        """Sum of the composites of the done encounters that have one (``composite_count`` of them)."""
        self.composite_count = 0
        self.scenario_sums: dict[str, float] = {}
        """Per scenario, the sum of its done encounters' composites (``scenario_counts`` of them)."""
        self.scenario_counts: dict[str, int] = {}
        self.window_done = 0
        """Encounters finished since the latest run_started (the throughput's window)."""
        self.gate_scenarios: set[str] = set()
        """The scenarios summary.json says triggered the safety gate."""
        self.worst_keys: dict[str, Key | None] = {}
        """Per scenario, its encounter with the lowest composite (lowest k on a tie)."""

    # ------------------------------------------------------------------ polling
    def poll(self) -> PollResult:
        """Read what was appended since the last poll; never raises on bad data.

        Returns:
            What the poll changed.
        """
        res = PollResult()
        if self._events.shrank() or self._results.shrank():
            self._reset()
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
        if not self.run_scenarios:
            self.run_scenarios = [s.id for s in self.meta.scenarios]
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
        self.gate_scenarios = set(self.summary.safety_gate.scenarios)
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
            self.final_count += sign
        else:
            if sign > 0:
                self.running[enc.key] = None
            else:
                self.running.pop(enc.key, None)
        if enc.status == "error":
            self.error_count += sign
        if enc.status == "done" and enc.composite is not None:
            self.composite_sum += sign * enc.composite
            self.composite_count += sign
            sid = enc.scenario_id
            self.scenario_sums[sid] = self.scenario_sums.get(sid, 0.0) + sign * enc.composite
            self.scenario_counts[sid] = self.scenario_counts.get(sid, 0) + sign

    def _apply_event(self, ev: Event, res: PollResult, touched: set[str]) -> None:
        if isinstance(ev, RunStarted):
            self.started = ev
            self.finished = None
            self.window_done = 0
            if ev.scenarios:
                self.run_scenarios = list(ev.scenarios)
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
            self.window_done += 1
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
        self.worst_keys[sid] = worst
        mark = worst if len(scored) >= 2 else None
        for key in self.by_scenario.get(sid, []):
            enc = self.encounters[key]
            flag = key == mark
            if enc.worst != flag:
                enc.worst = flag
                res.changed.add(key)

    def _update_gate(self, enc: Encounter, res: PollResult) -> None:
        flag = enc.scenario_id in self.gate_scenarios or (
            bool(enc.safety_failures) and self.feeds_gate(enc.scenario_id) is True)
        if enc.gate != flag:
            enc.gate = flag
            res.changed.add(enc.key)

    def feeds_gate(self, scenario_id: str) -> bool | None:
        """Whether the scenario feeds the safety gate.

        Args:
            scenario_id: The scenario.

        Returns:
            True when summary.json names it as triggering the gate, else the scenario's own
            definition (``scorers.gates``); None when it cannot be found, or before run.json (which
            says where the run's scenarios are) has been read.
        """
        if scenario_id in self.gate_scenarios:
            return True
        if self.meta is None:
            return None
        return self.catalog.feeds_gate(scenario_id)
