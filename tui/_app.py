"""``DashboardApp``: follows a run directory and shows it; optionally runs the run itself as a worker.

Without a job it watches a run another process writes (``encsim watch``). With a job (a coroutine
factory: an in-process ``encsim run --tui`` or ``encsim live --tui``) it runs the job in its own
event loop and follows ``run_dir`` exactly the same way; the directory may appear only later. A job
that raises leaves the app open with the error in the overview; ``job_result`` holds what it returned.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import RenderableType
from rich.text import Text
from textual.app import App
from textual.binding import Binding

from review import (
    Annotation,
    AnnotationStore,
    Key,
    PollResult,
    RunState,
    ScenarioCatalog,
    TaxonomyReport,
    check_run_dir,
    code,
    current_suggestions,
    describe_mode,
    merge_modes,
    next_severity,
    parse_trace_id,
    rename_mode,
    taxonomy_file,
    taxonomy_report,
)
from sim.records import (
    CodeSuggestion,
    EncSimError,
    FailureMode,
    JudgeValidation,
    RunLayout,
    load_run_validation,
    load_taxonomy,
)
from tui._dashboard import Dashboard
from tui._screens import (
    BaseScreen,
    CodingScreen,
    DisagreementScreen,
    EncounterScreen,
    GateScreen,
    HelpScreen,
    LiveScreen,
    MainScreen,
    ReliabilityScreen,
)
from tui._widgets import StatusLine, overview_text


class DashboardApp(App[Any]):
    """The encsim dashboard."""

    TITLE = "encsim"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("r", "reliability", "Reliability", show=False),
        Binding("l", "live", "Live", show=False),
        Binding("g", "gate", "Gate", show=False),
        Binding("c", "coding", "Coding", show=False),
        Binding("v", "disagreements", "Judge disagreements", show=False),
        Binding("tab", "focus_next", "Pane", show=False),
        Binding("shift+tab", "focus_previous", "Pane", show=False),
    ]

    def __init__(self, run_dir: Path, *, job: Callable[[], Awaitable[Any]] | None = None,
                 reviewer: str | None = None, taxonomy_path: Path | None = None, poll_interval: float = 0.25,
                 clock: Callable[[], float] = time.time) -> None:
        run_dir = Path(run_dir)
        if job is None:
            check_run_dir(run_dir)
        super().__init__()
        self.run_dir = run_dir
        self.poll_interval = poll_interval
        self.clock = clock
        self.catalog = ScenarioCatalog()
        self.state = RunState(run_dir, clock=clock, catalog=self.catalog)
        self.store = AnnotationStore(run_dir, reviewer=reviewer, clock=clock)
        self.taxonomy_path = taxonomy_file(run_dir, taxonomy_path)
        self.saved: dict[str, Annotation] = {}
        self.drafts: dict[str, Annotation] = {}
        self.job_result: Any = None
        self.job_error: str | None = None
        self._job = job
        self._job_running = False
        self._quit_armed = False
        self._live_shown = False
        self._annotations_loaded = False
        self._status = ""
        self.main = MainScreen()

    # ------------------------------------------------------------------ lifecycle
    def get_default_screen(self) -> MainScreen:
        """The main screen, after a first read of the run and its annotations."""
        self._first_poll()
        return self.main

    def on_mount(self) -> None:
        """Start polling the run and the job (a run to watch) if there is one; a live run opens the live screen."""
        self.set_interval(self.poll_interval, self.poll, name="poll")
        if self._job is not None:
            self._job_running = True
            self.run_worker(self._run_job(), name="job", group="job", exit_on_error=False)
        self._maybe_show_live()

    def _first_poll(self) -> None:
        self.state.poll()
        self._after_meta()
        self._load_annotations()

    def _load_annotations(self) -> None:
        if self._annotations_loaded or not self.run_dir.is_dir():
            return
        self.saved = self.store.load()
        self._annotations_loaded = True
        if self.store.skipped:
            self.set_status(f"⚠ {self.store.skipped} malformed annotation line(s) skipped: {self.store.warnings[-1]}")

    def _after_meta(self) -> None:
        self.catalog.add_meta(self.state.meta)
        self.sub_title = self.state.run_id

    async def _run_job(self) -> None:
        assert self._job is not None
        try:
            self.job_result = await self._job()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # shown in the overview; the app stays open
            self.job_error = f"{type(exc).__name__}: {exc}"
            self.set_status(f"✖ the run failed: {self.job_error}")
        finally:
            self._job_running = False
        self.poll(force=True)

    def poll(self, force: bool = False) -> PollResult:
        """Read what the run appended and update every screen; the app's timer calls it."""
        had_meta = self.state.meta is not None
        res = self.state.poll()
        if not had_meta and self.state.meta is not None:
            self._after_meta()
        self._load_annotations()
        if res.reset:
            self._live_shown = False
        if force or not self.state.is_finished or self._job_running:
            res.overview = True  # throughput, ETA and elapsed move with the clock
        if res.any and self.is_running:  # not while Textual prunes the screens on exit
            for screen in self.screen_stack:
                if isinstance(screen, BaseScreen) and screen.is_mounted:
                    screen.refresh_state(res)
        self._maybe_show_live()
        return res

    def _maybe_show_live(self) -> None:
        if self._live_shown or self.state.channel != "live" or not self.main.is_attached or not self.is_running:
            return
        self._live_shown = True
        if not isinstance(self.screen, LiveScreen):
            self.push_screen(LiveScreen())

    # ------------------------------------------------------------------ views helpers
    @property
    def waiting(self) -> bool:
        """Whether the run has not started yet (no run.json): the overview says it is waiting."""
        return not self.state.exists

    def overview_renderable(self) -> tuple[Text, RenderableType]:
        """The run overview (``overview_text``): its head line and its body."""
        return overview_text(self.state, suite_of=self.catalog.suite_of, job_error=self.job_error,
                             job_running=self._job_running, waiting=self.waiting)

    def list_keys(self) -> list[str]:
        """Trace ids of the encounter list in its current (filtered) order."""
        return self.main.table.keys() if self.main.is_attached else []

    def select_in_list(self, tid: str) -> None:
        """Move the encounter list's cursor to ``tid``."""
        self.main.table.move_to(tid)

    def set_status(self, text: str) -> None:
        """Show ``text`` on the status line of every screen."""
        self._status = text
        for screen in self.screen_stack:
            for line in screen.query(StatusLine):
                line.update(text)

    @property
    def status_text(self) -> str:
        """The status line's current text."""
        return self._status

    # ------------------------------------------------------------------ annotations
    def verdict_of(self, tid: str) -> str | None:
        """The verdict of ``tid``'s annotation, the unsaved draft first; None without one."""
        ann = self.drafts.get(tid) or self.saved.get(tid)
        return ann.verdict if ann is not None else None

    def review_mark(self, tid: str) -> str:
        """The encounter list's review mark: the verdict (or "noted"), with ``*`` while a draft is unsaved."""
        ann = self.drafts.get(tid) or self.saved.get(tid)
        if ann is None:
            return ""
        mark = ann.verdict or "noted"
        return f"{mark}*" if tid in self.drafts else mark

    def draft_for(self, tid: str) -> Annotation:
        """The annotation being edited for ``tid``: its draft, else the saved one, else a new one."""
        return self.drafts.get(tid) or self.saved.get(tid) or Annotation(trace_id=tid)

    def is_dirty(self, tid: str) -> bool:
        """Whether ``tid`` has an unsaved draft."""
        return tid in self.drafts

    @property
    def unsaved(self) -> int:
        """How many drafts are unsaved."""
        return len(self.drafts)

    def edit_draft(self, tid: str, **changes: Any) -> Annotation:
        """Change ``tid``'s draft by ``changes`` (Annotation fields) and refresh its row; returns the draft."""
        draft = replace(self.draft_for(tid), **changes)
        self.drafts[tid] = draft
        self._row_changed(tid)
        return draft

    def cycle_severity(self, tid: str) -> Annotation:
        """Move ``tid``'s draft to the next severity tag (``next_severity``)."""
        return self.edit_draft(tid, severity=next_severity(self.draft_for(tid).severity))

    def save_annotation(self, tid: str) -> Annotation | None:
        """Append ``tid``'s draft to annotations.jsonl; None (and a status line) if the file cannot be written."""
        draft = self.draft_for(tid)
        try:
            saved = self.store.save(draft)
        except OSError as exc:
            self.set_status(f"✖ could not save to {self.store.path.name}: {exc.strerror or exc}")
            return None
        self.saved[tid] = saved
        self.drafts.pop(tid, None)
        self._row_changed(tid)
        self.set_status(f"saved {tid}: {saved.verdict or 'no verdict'}"
                        f"{', ' + saved.severity if saved.severity else ''} (review pass {saved.review_pass}, "
                        f"{saved.reviewer}) to {self.store.path.name}")
        return saved

    # ------------------------------------------------------------------ failure modes
    def failing_annotations(self) -> list[Annotation]:
        """The saved annotations whose verdict is fail (latest per trace id), in trace order."""
        return sorted((a for a in self.saved.values() if a.verdict == "fail"),
                      key=lambda a: parse_trace_id(a.trace_id) or (a.trace_id, 0))

    def failure_modes(self) -> TaxonomyReport | None:
        """The taxonomy's modes with their counts; None (and a status line) if the taxonomy file is invalid."""
        try:
            return taxonomy_report(self.run_dir, self.taxonomy_path)
        except EncSimError as exc:
            self.set_status(f"✖ {exc}")
            return None

    def code_trace(self, tid: str, mode: str | None) -> Annotation | None:
        """Code ``tid`` with failure mode ``mode`` (``review.code``); None (and a status line) if it cannot be."""
        try:
            saved = code(self.run_dir, tid, mode, taxonomy_path=self.taxonomy_path, reviewer=self.store.reviewer,
                         clock=self.clock)
        except (EncSimError, OSError) as exc:
            self.set_status(f"✖ {exc}")
            return None
        self._coded(tid, saved)
        self.set_status(f"coded {tid}: {saved.failure_mode or 'no failure mode'} (to {self.store.path.name} and "
                        f"{self.taxonomy_path.name})")
        return saved

    def code_suggestions(self) -> tuple[dict[str, CodeSuggestion], int]:
        """The judge's suggestions still to accept (``review.current_suggestions``) and how many are stale."""
        try:
            return current_suggestions(self.run_dir, self.saved)
        except OSError as exc:
            self.set_status(f"✖ could not read {RunLayout.CODE_SUGGESTIONS_FILE}: {exc.strerror or exc}")
            return {}, 0

    def accept_suggestion(self, tid: str) -> Annotation | None:
        """Code ``tid`` with its suggested mode, recorded as an accepted suggestion; None (and a status line) if not.

        A new mode is added to the taxonomy with the judge's definition.
        """
        suggestion = self.code_suggestions()[0].get(tid)
        if suggestion is None:
            self.set_status(f"{tid}: no current suggestion to accept (none, already coded, or made for an "
                            "earlier note); enter or n codes it")
            return None
        try:
            saved = code(self.run_dir, tid, suggestion.mode, taxonomy_path=self.taxonomy_path,
                         reviewer=self.store.reviewer, clock=self.clock, definition=suggestion.definition,
                         source="accepted_suggestion")
        except (EncSimError, OSError) as exc:
            self.set_status(f"✖ {exc}")
            return None
        self._coded(tid, saved)
        self.set_status(f"accepted the suggestion for {tid}: {saved.failure_mode} (to {self.store.path.name} and "
                        f"{self.taxonomy_path.name})")
        return saved

    def _coded(self, tid: str, saved: Annotation) -> None:
        self.saved[tid] = saved
        if tid in self.drafts:  # an unsaved edit keeps the new code when it is saved
            self.drafts[tid] = replace(self.drafts[tid], failure_mode=saved.failure_mode,
                                       code_source=saved.code_source)
        self._row_changed(tid)

    def judge_validation(self) -> list[JudgeValidation] | None:
        """judge_validation.json of the run; None (and a notification) when it is missing or malformed."""
        path = RunLayout(self.run_dir).judge_validation
        try:
            return load_run_validation(path)
        except FileNotFoundError:
            message = (f"no judge validation in this run ({path.name}): run `encsim judges validate "
                       f"{self.run_dir} --judge ...` first")
        except EncSimError as exc:
            message = f"✖ {exc}"
        self.set_status(message)
        self.notify(message, severity="warning", timeout=8)
        return None

    def rename_failure_mode(self, old: str, new: str) -> int | None:
        """Rename mode ``old`` to ``new`` (``review.rename_mode``); the re-coded count, or None (and a status line)."""
        try:
            n = rename_mode(self.run_dir, old, new, taxonomy_path=self.taxonomy_path, reviewer=self.store.reviewer,
                            clock=self.clock)
        except (EncSimError, OSError) as exc:
            self.set_status(f"✖ {exc}")
            return None
        self._recoded(old)
        self.set_status(f"renamed {old}: {n} annotation(s) re-coded")
        return n

    def merge_failure_modes(self, src: str, into: str) -> int | None:
        """Fold mode ``src`` into ``into`` (``review.merge_modes``); the re-coded count, or None (and a status line)."""
        try:
            n = merge_modes(self.run_dir, src, into, taxonomy_path=self.taxonomy_path, reviewer=self.store.reviewer,
                            clock=self.clock)
        except (EncSimError, OSError) as exc:
            self.set_status(f"✖ {exc}")
            return None
        self._recoded(src)
        self.set_status(f"merged {src} into {into}: {n} annotation(s) re-coded")
        return n

    def taxonomy_mode(self, name: str) -> FailureMode | None:
        """The mode ``name`` of the taxonomy file; None if it has none (or the file is invalid: a status line)."""
        try:
            return load_taxonomy(self.taxonomy_path).get(name)
        except EncSimError as exc:
            self.set_status(f"✖ {exc}")
            return None

    def describe_failure_mode(self, name: str, field: str, value: str) -> bool:
        """Set ``field`` (definition, pass_example, fail_example) of mode ``name``; False (and a status line) if not."""
        try:
            describe_mode(self.run_dir, name, taxonomy_path=self.taxonomy_path, **{field: value})
        except (EncSimError, OSError) as exc:
            self.set_status(f"✖ {exc}")
            return False
        self.set_status(f"{name}: {field.replace('_', ' ')} saved to {self.taxonomy_path.name}")
        return True

    def _recoded(self, old: str) -> None:
        self.saved = self.store.load()
        for tid, draft in list(self.drafts.items()):
            if draft.failure_mode == old:
                self.drafts[tid] = replace(draft, failure_mode=self.saved[tid].failure_mode
                                           if tid in self.saved else None)

    def _row_changed(self, tid: str) -> None:
        key = parse_trace_id(tid)
        if key is not None and key in self.state.encounters and self.main.is_attached:
            self.main.refresh_rows([key])

    # ------------------------------------------------------------------ actions
    def open_encounter(self, key: Key) -> None:
        """Show the encounter ``key``: in the current screen if it is an encounter screen, else in a new one."""
        if isinstance(self.screen, EncounterScreen):
            self.screen.key = key
            self.screen.render_all()
            return
        self.push_screen(EncounterScreen(key))

    def _push_once(self, kind: type[BaseScreen]) -> None:
        if isinstance(self.screen, kind):
            return
        for screen in self.screen_stack:
            if isinstance(screen, kind):  # already open below: go back to it
                while not isinstance(self.screen, kind):
                    self.pop_screen()
                return
        self.push_screen(kind())

    def action_help(self) -> None:
        """Show the help screen."""
        self._push_once(HelpScreen)

    def action_reliability(self) -> None:
        """Show the reliability screen."""
        self._push_once(ReliabilityScreen)

    def action_live(self) -> None:
        """Show the live call screen."""
        self._push_once(LiveScreen)

    def action_coding(self) -> None:
        """Show the coding screen: failing annotations and their failure modes."""
        self._push_once(CodingScreen)

    def action_disagreements(self) -> None:
        """Show where each failure-mode judge and people disagree (judge_validation.json), if the run has it."""
        if isinstance(self.screen, DisagreementScreen) or any(
                isinstance(s, DisagreementScreen) for s in self.screen_stack):
            self._push_once(DisagreementScreen)
            return
        validations = self.judge_validation()
        if validations is not None:
            self.push_screen(DisagreementScreen(validations))

    def action_gate(self) -> None:
        """Show the safety gate screen."""
        self._push_once(GateScreen)

    async def action_quit(self) -> None:
        """Quit, after a warning and a second press while annotations are unsaved or the run is still going."""
        reasons = []
        if self.unsaved:
            reasons.append(f"{self.unsaved} unsaved annotation{'s' if self.unsaved != 1 else ''} (s saves)")
        if self._job_running:
            reasons.append("the run is still going (quitting stops it)")
        if reasons and not self._quit_armed:
            self._quit_armed = True
            self.set_status("⚠ " + "; ".join(reasons) + ". Press q again to quit.")
            return
        self.exit(self.job_result)


if TYPE_CHECKING:
    _SCREENS_SEE: type[Dashboard] = DashboardApp  # mypy checks that the app is what the screens use of it
