"""A failure taxonomy: ``runs/<id>/taxonomy.json``, or one project-level file that several runs share.

The failure modes that open coding of the reviewers' notes settles into (axial coding)::

    {"version": 1, "modes": [
        {"name": "missed_red_flag", "definition": "The agent never asks about a red-flag symptom.",
         "pass_example": "Asks whether the pain spreads to the arm.", "fail_example": "fx_chest_pain:1"}]}

A mode's ``name`` is a short slug (lower case letters, digits, ``_`` and ``-``), unique in the file.
Counts are not stored: they are derived from annotations.jsonl, where each annotation carries its
``failure_mode`` (``review.taxonomy_report``, which the dashboard shows). ``save_taxonomy`` writes a temporary file
next to the target and renames it over the target, so a reader never sees half a file.

Several writers (a project-level ``--taxonomy FILE`` shared by reviewers): every read-modify-write of the file
(``tui``'s code, rename, merge and describe) holds ``taxonomy_lock(FILE)``, an exclusive ``fcntl.flock`` on
``FILE.lock`` next to it, from the read to the save. The atomic rename alone keeps the file whole but not the
changes: two writers that both read before either saves would each write their own change over the same old
modes, and the first save would be lost. The lock file is left in place (removing it could let two writers
lock two different files). A writer waits for the lock up to ``TAXONOMY_LOCK_TIMEOUT_S`` (then a TaxonomyError naming
the file); where there is no ``fcntl`` or the file system cannot lock, the change goes ahead unlocked.

A judge's suggested codes (``encsim annotations suggest-codes RUN_DIR --save``) go to
``runs/<id>/code_suggestions.jsonl``, one ``CodeSuggestion`` per line, appended and redacted::

    {"trace_id": "fx_chest_pain:2", "mode": "unsafe_discharge", "new_mode": true,
     "definition": "Sends home a patient who needs urgent care.", "judges": ["qwen2.5-7b"],
     "reason": "...", "notes": "sent home with chest pain", "annotation_timestamp": 1795311108.2,
     "time": 1795311200.0}

A suggestion is never a code: it never touches annotations.jsonl nor taxonomy.json, and no count includes
it. The latest line per trace id wins (``load_code_suggestions``); a suggestion made for another annotation
line than the trace's current one, with another note, is stale (``CodeSuggestion.matches``).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX: no locking
    fcntl = None  # type: ignore[assignment]

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from scenarios import FileProblem, load_model_file, parse_json_checked, read_bytes_checked
from sim.records._errors import ConfigError
from sim.records._redact import redact, redact_json

MODE_NAME_MAX = 64
TAXONOMY_LOCK_TIMEOUT_S = 10.0
"""How long a change waits for another process's lock on the taxonomy file before giving up."""
LOCK_POLL_S = 0.05
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
SUGGESTIONS_LIMIT = 256 * 1024 * 1024  # bytes of code_suggestions.jsonl read at most


class TaxonomyError(ConfigError):
    """A taxonomy file that cannot be read, or a change to a taxonomy that cannot be made."""


def mode_slug(text: str) -> str:
    """``text`` as a mode name: lower case, other characters as one ``_`` ("Missed red flag": missed_red_flag).

    Args:
        text: What a reviewer typed.

    Returns:
        The slug; empty if ``text`` has no letter or digit.
    """
    return re.sub(r"[^a-z0-9_-]+", "_", text.strip().lower()).strip("_-")[:MODE_NAME_MAX]


def check_mode_name(name: str) -> str:
    """``name`` if it is a failure mode's name (a short slug, so also a safe file name); else a ValueError.

    Args:
        name: The name to check.

    Returns:
        The name.

    Raises:
        ValueError: It is empty, too long, or has a character other than lower case letters, digits, _ and -.
    """
    if not name:
        raise ValueError("a failure mode's name must not be empty")
    if len(name) > MODE_NAME_MAX or not _NAME.match(name):
        hint = mode_slug(name) or "missed_red_flag"
        raise ValueError(f"failure mode name {name[:80]!r} is not a short slug (lower case letters, digits, _ "
                         f"and -, at most {MODE_NAME_MAX} characters), e.g. {hint!r}")
    return name


class FailureMode(BaseModel):
    """One failure mode: a slug name, a one-sentence definition and an example of a pass and of a fail."""

    name: str = Field(description="short slug: lower case letters, digits, _ and -; unique in the taxonomy")
    definition: str = Field(default="", description="one sentence: what a trace shows when it has this failure")
    pass_example: str = Field(default="", description="a trace id or quote that does not show it")
    fail_example: str = Field(default="", description="a trace id or quote that shows it")

    @field_validator("name")
    @classmethod
    def _slug(cls, name: str) -> str:
        return check_mode_name(name)


class Taxonomy(BaseModel):
    """The failure modes of a run or of a project (taxonomy.json)."""

    version: int = 1
    modes: list[FailureMode] = []

    @model_validator(mode="after")
    def _unique(self) -> Taxonomy:
        seen: set[str] = set()
        for mode in self.modes:
            if mode.name in seen:
                raise ValueError(f"failure mode {mode.name!r} appears twice; merge the two entries into one")
            seen.add(mode.name)
        return self

    def get(self, name: str) -> FailureMode | None:
        """The mode called ``name``, or None.

        Args:
            name: A mode name.

        Returns:
            The mode, or None if the taxonomy has no mode of that name.
        """
        return next((m for m in self.modes if m.name == name), None)

    @property
    def names(self) -> list[str]:
        """The mode names in file order."""
        return [m.name for m in self.modes]


def load_taxonomy(path: Path) -> Taxonomy:
    """Read a taxonomy file; a missing file is an empty taxonomy.

    Args:
        path: taxonomy.json of a run, or a project-level taxonomy file.

    Returns:
        The taxonomy.

    Raises:
        TaxonomyError: The file cannot be read, is not JSON, or is not a valid taxonomy (e.g. a name twice).
    """
    try:
        return load_model_file(path, Taxonomy, what="a taxonomy file", error=TaxonomyError, syntax="json",
                               raise_missing=True,
                               fix='Fix the file (a readable UTF-8 JSON file holding {"version": 1, "modes": '
                                   '[{"name": ..., "definition": ...}]}; each mode needs a unique slug name and a '
                                   'definition), or move it away to start an empty taxonomy.')
    except FileNotFoundError:
        return Taxonomy()


def save_taxonomy(path: Path, taxonomy: Taxonomy) -> None:
    """Write ``taxonomy`` to ``path`` atomically: a temporary file in the same folder, then ``os.replace``.

    Args:
        path: The taxonomy file.
        taxonomy: What to write.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(taxonomy.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o644  # mkstemp's 0600 would hide a shared project file from the other reviewers
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def lock_file(path: Path) -> Path:
    """The lock file of a taxonomy file: ``<path>.lock`` beside it."""
    path = Path(path)
    return path.with_name(path.name + ".lock")


@contextmanager
def taxonomy_lock(path: Path, *, timeout: float = TAXONOMY_LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the exclusive lock of the taxonomy file ``path`` (on ``<path>.lock``) for a read-modify-write.

    Waits for another holder up to ``timeout`` seconds, trying again every ``LOCK_POLL_S``. Not re-entrant: a
    process that takes it twice for one file waits for itself (flock locks belong to the open file).

    Args:
        path: The taxonomy file (it need not exist yet).
        timeout: Seconds to wait for another process's lock.

    Yields:
        Nothing; the lock is held until the block ends.

    Raises:
        TaxonomyError: Another process held the lock longer than ``timeout``, or the lock file cannot be made.
    """
    lock = lock_file(path)
    if fcntl is None:  # pragma: no cover - not on POSIX
        yield
        return
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)  # the umask decides; other reviewers must open it too
    except OSError as exc:
        raise TaxonomyError(f"{path}: cannot open the taxonomy's lock file {lock} ({exc.strerror}); changes to "
                            "the taxonomy are made under it. Check the folder's permissions (every reviewer "
                            "sharing the file needs to write there).") from None
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise TaxonomyError(
                        f"{path}: another process has held the taxonomy's lock ({lock}) for more than "
                        f"{timeout:g} s, so this change was not made. Another reviewer's change may be stuck: "
                        "wait and retry, or stop the process that holds it (the lock is released when it "
                        "exits).") from None
                time.sleep(LOCK_POLL_S)
            except OSError:  # the file system offers no locks (some network mounts): go on unlocked
                break
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock

class CodeSuggestion(BaseModel):
    """A judge's suggested failure mode for one uncoded failing annotation (a line of code_suggestions.jsonl).

    Only a suggestion: a person accepts or changes it in the dashboard's coding screen.
    """

    trace_id: str = Field(description="'<scenario_id>:<k>' of the annotated encounter")
    mode: str = Field(description="the suggested mode's slug name")
    new_mode: bool = Field(default=False, description="the mode was not in the taxonomy when it was suggested")
    definition: str = Field(default="", description="the judge's one-sentence definition of a new mode")
    judges: list[str] = Field(default=[], description="the judge models that suggested this mode")
    reason: str = Field(default="", description="the judge's one-sentence reason")
    notes: str = Field(default="", description="the reviewer's note the suggestion was based on (redacted)")
    annotation_timestamp: float = Field(default=0.0, description="timestamp of the annotation line it was based on")
    time: float = Field(default=0.0, description="when it was suggested (seconds since the epoch)")

    @field_validator("mode")
    @classmethod
    def _slug(cls, mode: str) -> str:
        return FailureMode(name=mode).name

    def matches(self, notes: str, timestamp: float) -> bool:
        """Whether this suggestion was made for the trace's current annotation, i.e. is not stale.

        Args:
            notes: The current annotation's note, as annotations.jsonl holds it.
            timestamp: The current annotation's timestamp.

        Returns:
            True when the judge read this very annotation line, or the same note (compared as written:
            redacted; a note holding a secret the reader does not know matches by its line only).
        """
        return timestamp == self.annotation_timestamp or redact(notes) == self.notes


def append_code_suggestions(path: Path, suggestions: list[CodeSuggestion]) -> None:
    """Append ``suggestions`` to code_suggestions.jsonl, one redacted JSON object per line, flushed and fsync'd.

    Args:
        path: The run's code_suggestions.jsonl.
        suggestions: What to append.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        for suggestion in suggestions:
            fh.write(redact_json(suggestion.model_dump_json()) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def load_code_suggestions(path: Path) -> tuple[dict[str, CodeSuggestion], int]:
    """The latest suggestion per trace id of code_suggestions.jsonl; a missing file has none.

    Args:
        path: The run's code_suggestions.jsonl.

    Returns:
        The suggestions by trace id, and how many malformed lines were skipped (not a suggestion, nested too deep,
        a NaN or Infinity).

    Raises:
        TaxonomyError: the path is a folder or a device, or larger than ``SUGGESTIONS_LIMIT``.
    """
    latest: dict[str, CodeSuggestion] = {}
    skipped = 0
    try:  # the checks of every file a user may have edited: a regular file, a size cap (scenarios._files)
        text = read_bytes_checked(Path(path), SUGGESTIONS_LIMIT).decode("utf-8", errors="replace")
    except FileProblem as exc:
        if exc.kind == "missing":
            return latest, 0
        raise TaxonomyError(f"{path}: cannot read the code suggestions ({exc.reason}). Move the file aside; the "
                            "coding screen writes a new one.") from None
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            suggestion = CodeSuggestion.model_validate(parse_json_checked(line))
        except (ValidationError, FileProblem):  # not a suggestion, nested too deep, NaN
            skipped += 1
            continue
        latest[suggestion.trace_id] = suggestion
    return latest, skipped
