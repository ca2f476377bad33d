"""The run directory: the whole truth about one run.

The files and their names are described in ``sim.records.RunLayout``.

Every writer here redacts at the write boundary (``sim.records.redact_json``): JSON files are redacted as their
final serialised text (``redact_json``: every registered key in every escaping, URL userinfo), and
report.md is also neutralised (escape sequences and control characters made visible, newlines
kept). A reflected key therefore shows as ``[redacted]`` in the stored transcript too; the encounter
was scored before it was written. ``read_meta`` registers the keys of the variables a run names
(agent, judges, patient model) that are set, so ``encsim report`` / ``compare`` redact them as well.

For a (scenario, k) pair that has several lines (an error later retried with --retry-errors), the
last line wins.

A store keeps the records it has read and appended (as stored: redacted) while results.jsonl is exactly the
bytes it has seen (its size says so; a torn last line is never cached): ``load_records`` at the end of a run
then reads nothing again instead of re-validating every line. A file that grew or changed behind its back
(another process) is read again in full.

Reading results.jsonl (``load_records``) never changes it. A line that is not an encounter record is
skipped and recorded (``RunStore.skipped``: line number and reason); a last line without its line end
that does not parse is a torn write (a run killed mid-write) and is set aside (``RunStore.torn_line``).
Each becomes one warning line naming the file and line (``RunStore.notices``, and the ``warn``
callback, which ``encsim report`` and ``encsim run --resume`` print). Only a writer that is about to
append (``RunStore.open(root, lock=..., append=True)``, used by ``--resume``) removes a torn last
line, and it moves it to ``results.jsonl.torn-<YYYYmmdd-HHMMSS>`` first, saying so, so the next
record starts on a line of its own and nothing is lost (a last line that parses but lacks its line
end just gets one).

Lock: one writer per run directory. ``RunStore.create`` (a new run) and ``RunStore.open(root,
lock=...)`` (``encsim run --resume``, and ``encsim report``, which rewrites summary.json, report.md
and report.html) take an exclusive ``fcntl.flock`` on ``.lock`` and hold it until ``close()`` (or
the process ends: the kernel releases it, so a lock left by a dead process never blocks). The file
holds the holder's pid, command and start time, which a refused second writer names: it gets a
ConfigError (exit 2) instead of running every pending encounter a second time. Readers (``encsim
watch``, ``compare``, ``pairwise``) take no lock. Where ``fcntl`` or the file system offers no lock,
writers proceed unlocked.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX: no locking
    fcntl = None  # type: ignore[assignment]

from pydantic import ValidationError

from scenarios import (
    FileProblem,
    decode_checked,
    load_model_file,
    non_finite_problem,
    parse_json_checked,
    read_bytes_checked,
)
from sim.records import (
    ConfigError,
    EncounterRecord,
    JudgeRef,
    RunLayout,
    RunMeta,
    Summary,
    UnscoredEncounter,
    clean,
    redact_json,
    register_env,
)

SUMMARY_LIMIT = 64 * 1024 * 1024  # bytes: summary.json holds aggregates, far below this for any real run


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


@dataclass(frozen=True)
class SkippedLine:
    """A line of results.jsonl that is not an encounter record: its 1-based number and why."""

    line: int
    reason: str


def _why_not_a_record(exc: ValueError, what: str = "an encounter record") -> str:
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    if errors and errors[0]["type"] == "json_invalid":
        return "not valid JSON"
    first = errors[0] if errors else {"loc": (), "msg": str(exc)}
    where = ".".join(str(part) for part in first["loc"]) or "the line"
    return f"not {what} ({where}: {first['msg']})"


class RunStore:
    """One run directory: its files (``layout``), its lock, and the notices of reading results.jsonl.

    Open one with ``create`` or ``open``; the module docstring says how each file is read and written.

    Args:
        root: the run directory.
        warn: called once per new notice (skipped line, torn last line), e.g. to print it.
    """

    def __init__(self, root: Path, *, warn: Callable[[str], None] | None = None) -> None:
        self.root = Path(root)
        self.layout = RunLayout(self.root)
        self.warn = warn  # called once per new notice (skipped line, torn last line), e.g. to print it
        self.notices: list[str] = []
        self.skipped: list[SkippedLine] = []
        self.torn_line: int | None = None
        self.torn_moved_to: Path | None = None
        self._lock: IO[bytes] | None = None
        # the records as stored and the file size they stand for (module docstring); None = read the file
        self._cache: dict[tuple[str, int], EncounterRecord] | None = None
        self._cache_size = 0
        self._cache_inode: int | None = None  # None: the file did not exist yet
        self._cache_lock = threading.Lock()
        self._unscored_checked = False  # whether unscored.jsonl's last line was checked for a torn end

    @property
    def results_path(self) -> Path:
        """The path of results.jsonl."""
        return self.layout.results

    @property
    def events_path(self) -> Path:
        """The path of events.jsonl."""
        return self.layout.events

    @property
    def patient_cache_path(self) -> Path:
        """The path of the patient model's cache (patient_cache.jsonl)."""
        return self.layout.patient_cache

    @classmethod
    def create(cls, root: Path, meta: RunMeta, *, warn: Callable[[str], None] | None = None) -> RunStore:
        """A new run directory, locked for this writer until ``close()``."""
        root = Path(root)
        exists = ConfigError(f"--out {root}: a run already exists there. Resume it with "
                             f"`encsim run --resume {root}`, or choose another --out.")
        if RunLayout(root).run.exists():
            raise exists
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"--out {root}: cannot create the run directory ({exc.strerror}). "
                              "Choose a writable path.") from None
        store = cls(root, warn=warn)
        try:
            store.lock("encsim run")
            if RunLayout(root).run.exists():  # another process created it between the check and the lock
                raise exists
            store.write_meta(meta)
        except BaseException:
            store.close()
            raise
        return store

    @classmethod
    def open(cls, root: Path, *, lock: str | None = None, append: bool = False,
             warn: Callable[[str], None] | None = None) -> RunStore:
        """An existing run directory.

        ``lock`` (the command, e.g. "encsim run --resume") takes the directory's lock for a writer, refused when
        another process holds it; ``append`` (with ``lock``) also sets a torn last line of results.jsonl aside,
        so that records can be appended.
        """
        root = Path(root)
        if not RunLayout(root).run.is_file():
            raise ConfigError(f"{root}: not a run directory (no {RunLayout.RUN_FILE}). Give the folder that "
                              "`encsim run` created, e.g. runs/<id>.")
        store = cls(root, warn=warn)
        if lock is None and not append:
            return store
        try:
            store.lock(lock or "encsim run --resume")
            if append:
                store.repair_tail()
        except BaseException:
            store.close()
            raise
        return store

    def lock(self, command: str) -> None:
        """Hold the run directory's exclusive lock until ``close()``.

        A ConfigError naming the holder's pid if another process holds it. A no-op where there is no ``fcntl`` or
        the file system cannot lock.
        """
        if fcntl is None or self._lock is not None:
            return
        path = self.layout.lock
        try:
            fh = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT, 0o644), "r+b")
        except OSError as exc:
            raise ConfigError(f"{self.root}: cannot write in the run directory ({exc.strerror}); `{command}` "
                              "writes there. Check its permissions, or copy the run directory somewhere "
                              "writable.") from None
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _lock_holder(fh)
            fh.close()
            raise ConfigError(
                f"{self.root}: `{command}` cannot start: another encsim process ({holder}) is writing this run "
                f"directory (it holds {path}). Two writers would run the same encounters twice and overwrite each "
                f"other's summary; wait for it to finish (`encsim watch {self.root}` follows it) or stop it, "
                "then retry.") from None
        except OSError:  # the file system offers no locks (some network mounts): go on unlocked
            fh.close()
            return
        fh.seek(0)
        fh.truncate()
        fh.write((json.dumps({"pid": os.getpid(), "command": command,
                              "started_at": datetime.datetime.now().isoformat(timespec="seconds")}) + "\n").encode())
        fh.flush()
        self._lock = fh

    def close(self) -> None:
        """Release the lock (if held). The lock file stays: removing it could let two writers lock two files."""
        fh, self._lock = self._lock, None
        if fh is not None:
            try:
                fh.seek(0)
                fh.truncate()
            finally:
                fh.close()  # closing the descriptor releases the flock

    def _notice(self, message: str) -> None:
        if message not in self.notices:
            self.notices.append(message)
            if self.warn is not None:
                self.warn(message)

    def read_meta(self) -> RunMeta:
        """The run's metadata (run.json); registers for redaction the keys of the variables it names that are set.

        Raises:
            ConfigError: run.json cannot be read as run metadata.
        """
        path = self.layout.run
        meta = load_model_file(path, RunMeta, what="a run's metadata", error=ConfigError, syntax="json",
                               fix="An unreadable run.json cannot be resumed or reported: restore it as the run "
                                   "wrote it, or start a new run.")
        refs: list[RunMeta | JudgeRef] = [meta, *meta.judges, *([meta.patient_model] if meta.patient_model else [])]
        for ref in refs:
            register_env(ref.api_key_env)
        return meta

    def write_meta(self, meta: RunMeta) -> None:
        """Write run.json, redacted, atomically."""
        _write_atomic(self.layout.run, redact_json(meta.model_dump_json(indent=2)))

    def repair_tail(self) -> None:
        """Before appending, end the file on a whole record.

        A last line without its line end gets one if it is a record; otherwise (a torn write) it is moved to
        ``results.jsonl.torn-<time>`` and cut from results.jsonl, with a notice.
        """
        path = self.results_path
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read the run's results ({exc.strerror}). Check its permissions.") \
                from None
        if not data or data.endswith(b"\n"):
            return
        start = data.rfind(b"\n") + 1
        tail = data[start:]
        with open(path, "rb+") as fh:
            if not tail.strip() or _is_record(tail):
                fh.seek(0, os.SEEK_END)
                fh.write(b"\n")
            else:
                stamp = time.strftime("%Y%m%d-%H%M%S")
                dest = self.layout.torn(stamp)
                n = 1
                while dest.exists():
                    n += 1
                    dest = self.layout.torn(f"{stamp}-{n}")
                with open(dest, "xb") as side:
                    side.write(tail)
                    side.flush()
                    os.fsync(side.fileno())
                fh.truncate(start)
                self.torn_line, self.torn_moved_to = data.count(b"\n", 0, start) + 1, dest
                self._notice(f"{path} line {self.torn_line}: the last line was cut short (a run killed mid-write); "
                             f"it was moved to {dest} so that new records start on a line of their own, and its "
                             "encounter is run again.")
            fh.flush()
            os.fsync(fh.fileno())

    def append(self, record: EncounterRecord) -> None:
        """Append one record to results.jsonl, redacted, with a single write, and fsync it."""
        dumped = record.model_dump_json()
        text = redact_json(dumped)
        line = (text + "\n").encode()
        inode = _append_line(self.results_path, line)
        with self._cache_lock:
            if self._cache is not None and self._cache_inode in (None, inode):
                # what a reader of the line gets: the record itself, unless redaction changed the line
                stored = record if text == dumped else EncounterRecord.model_validate_json(text)
                self._cache[(stored.scenario_id, stored.k)] = stored
                self._cache_size += len(line)
                self._cache_inode = inode
            else:
                self._cache = None

    def keep_unscored(self, entry: UnscoredEncounter) -> None:
        """Append a finished conversation to unscored.jsonl before it is scored: redacted, one write, fsync'd.

        The first line this store writes starts on a line of its own even after a line torn by a kill.
        """
        line = (redact_json(entry.model_dump_json()) + "\n").encode()
        if not self._unscored_checked:  # once per store: only an earlier process can have left a torn line
            self._unscored_checked = True
            with contextlib.suppress(FileNotFoundError), open(self.layout.unscored, "rb") as fh:
                if fh.seek(0, os.SEEK_END) > 0:
                    fh.seek(-1, os.SEEK_END)
                    if fh.read(1) != b"\n":
                        line = b"\n" + line
        _append_line(self.layout.unscored, line)

    def load_unscored(self, planned: Callable[[str, int, str], bool] | None = None
                      ) -> dict[tuple[str, int, str], UnscoredEncounter]:
        """unscored.jsonl by (scenario id, k, persona), the last line winning; {} without the file.

        A line that does not parse is left out, so its encounter is simply run again: silently for a last line
        torn by a kill mid-write, with a notice (``warn``) naming the file and line for any other. A line of an
        encounter that ``planned`` (scenario id, k, persona) says is not in the run's plan is named in a notice
        too; it is returned all the same (the runner never asks for it). Never changes the file.
        """
        path = self.layout.unscored
        try:
            lines = path.read_bytes().split(b"\n")
        except FileNotFoundError:
            return {}
        out: dict[tuple[str, int, str], UnscoredEncounter] = {}
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = UnscoredEncounter.model_validate_json(line)
            except ValueError as exc:
                if number < len(lines):  # a whole line (the file's last one without its line end is torn)
                    why = _why_not_a_record(exc, "a kept conversation")
                    self._notice(f"{path} line {number}: {why}; it is left out and its encounter runs again.")
                continue
            if planned is not None and not planned(entry.scenario_id, entry.k, entry.persona):
                self._notice(f"{path} line {number}: skipped, {entry.scenario_id} k={entry.k} persona "
                             f"{entry.persona} is not an encounter of this run's plan (its scenarios, --k and "
                             "--personas); this run never scores it.")
            out[(entry.scenario_id, entry.k, entry.persona)] = entry
        return out

    def drop_unscored(self) -> None:
        """Remove unscored.jsonl: once every conversation in it has its record in results.jsonl."""
        self.layout.unscored.unlink(missing_ok=True)

    def load_records(self) -> tuple[dict[tuple[str, int], EncounterRecord], int]:
        """The latest record per (scenario, k), and how many lines were skipped as not records.

        A torn last line is not counted. Never changes the file; ``skipped``, ``torn_line`` and ``notices`` say
        what was left out, line by line.
        """
        out: dict[tuple[str, int], EncounterRecord] = {}
        path = self.results_path
        skipped: list[SkippedLine] = []
        torn: int | None = None
        with self._cache_lock:
            if self._cache is not None:
                try:
                    st = os.stat(path)
                    unchanged = st.st_size == self._cache_size and self._cache_inode in (None, st.st_ino)
                except OSError:
                    unchanged = False
                if unchanged:
                    return dict(self._cache), len(self.skipped)
            self._cache = None
        try:
            fh = open(path, "rb")
        except FileNotFoundError:
            self.skipped = []
            with self._cache_lock:
                self._cache, self._cache_size, self._cache_inode = {}, 0, None
            return out, 0
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read the run's results ({exc.strerror}). Check its permissions.") \
                from None
        with fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    rec = _record(line)
                except ValueError as exc:  # pydantic's ValidationError is one
                    if line.endswith(b"\n"):
                        skipped.append(SkippedLine(number, _why_not_a_record(exc)))
                    else:
                        torn = number
                    continue
                out[(rec.scenario_id, rec.k)] = rec
            size, inode = fh.tell(), os.fstat(fh.fileno()).st_ino
        self.skipped = skipped
        if torn is None:
            with self._cache_lock:
                self._cache, self._cache_size, self._cache_inode = dict(out), size, inode
        for s in skipped:
            self._notice(f"{path} line {s.line}: skipped, {s.reason}; an encounter it held counts as not run.")
        if torn is not None:
            self.torn_line = torn
            self._notice(f"{path} line {torn}: the last line is cut short (a run killed mid-write); it is set aside "
                         "and its encounter counts as not run. The file is left as it is: `encsim run --resume "
                         f"{self.root}` moves the line to {RunLayout.TORN_PREFIX}<time> and runs the encounter again.")
        return out, len(skipped)

    def write_summary(self, summary: Summary) -> Path:
        """Write summary.json, redacted, atomically; returns its path."""
        path = self.layout.summary
        _write_atomic(path, redact_json(summary.model_dump_json(indent=2)))
        return path

    def read_summary(self) -> Summary:
        """The run's summary.json, after the checks of every file a user may have edited (``scenarios._files``).

        Raises:
            ValueError: the file is not a summary (a folder or device, too big, not UTF-8, nested too deep, NaN).
            pydantic.ValidationError: its contents are not a summary.
        """
        try:
            data = parse_json_checked(decode_checked(read_bytes_checked(self.layout.summary, SUMMARY_LIMIT)))
        except FileProblem as exc:
            raise ValueError(f"{exc.reason}{exc.where}") from None
        return Summary.model_validate(data)

    def write_report(self, text: str) -> Path:
        """Write report.md, redacted and neutralised (``clean``), atomically; returns its path."""
        path = self.layout.report
        _write_atomic(path, clean(text))
        return path


def _append_line(path: Path, line: bytes) -> int:
    """Append ``line`` to ``path`` with one write and fsync it; the file's inode."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
        return os.fstat(fd).st_ino
    finally:
        os.close(fd)


def _record(line: bytes) -> EncounterRecord:
    """One line of results.jsonl as a record; a ValueError if it is not one (NaN and Infinity are not numbers)."""
    if (why := non_finite_problem(line)) is not None:
        raise ValueError(why)
    return EncounterRecord.model_validate_json(line)


def _is_record(line: bytes) -> bool:
    try:
        _record(line)
    except ValueError:
        return False
    return True


def _lock_holder(fh: IO[bytes]) -> str:
    """Who holds a lock, from the lock file: "pid 123: `encsim run`, since 2026-01-01T10:00:00"."""
    try:
        fh.seek(0)
        info = json.loads(fh.read(4096) or b"{}")
        return f"pid {int(info['pid'])}: `{info.get('command', 'encsim')}`, since {info.get('started_at', '?')}"
    except (OSError, ValueError, KeyError, TypeError):
        return "pid unknown"


def new_run_id(model: str) -> str:
    """A new run id: the local time (``YYYYmmdd-HHMMSS``) and the model name as a slug of at most 40 characters."""
    slug = "".join(c if c.isalnum() else "-" for c in model.lower()).strip("-")[:40]
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{slug}"

