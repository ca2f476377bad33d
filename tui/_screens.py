"""The dashboard's screens: main, encounter, coding, judge disagreements, reliability, live, gate, help.

Screens read the app's ``RunState`` and annotation drafts; the app calls ``refresh_state(res)``
on every screen in its stack after each poll that changed something.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Header, Input, Sparkline, Static

from review import Key, PollResult, parse_trace_id
from sim.records import CodeSuggestion, JudgeValidation
from tui._format import MARKER_LEGEND, MARKER_STYLE, EncounterFilter, marker_text, score
from tui._widgets import (
    SUGGESTED_STYLE,
    AnnotationBar,
    CodingTable,
    DetailsView,
    DisagreementTable,
    EncounterTable,
    LatencyTable,
    ModeTable,
    Overview,
    Pane,
    ReliabilityTable,
    StatusLine,
    TranscriptView,
    annotation_text,
    disagreement_rows,
    gate_badge,
    reliability_detail,
    reliability_row,
    speaking_text,
    validation_summary,
)

if TYPE_CHECKING:
    from tui._app import DashboardApp

FILTER_HELP = ("filter: words of the scenario id · status:error · gate · safety · fail · pass · worst · k:N · "
               "review:none")


class _Base(Screen[None]):
    """Common to every screen: typed access to the app, and the hook the app calls after a poll."""

    @property
    def dash(self) -> DashboardApp:
        return self.app  # type: ignore[return-value]

    def refresh_state(self, res: PollResult) -> None:  # pragma: no cover - overridden
        pass


# ---------------------------------------------------------------------------------------------- main
class MainScreen(_Base):
    """The run overview on top and the encounter list below it."""

    AUTO_FOCUS = "#encounters"
    BINDINGS = [
        Binding("slash", "filter", "Filter"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("r", "app.reliability", "Reliability"),
        Binding("l", "app.live", "Live"),
        Binding("g", "app.gate", "Gate"),
        Binding("c", "app.coding", "Coding"),
    ]
    DEFAULT_CSS = """
    MainScreen #filter {
        display: none;
    }
    MainScreen #filter.shown {
        display: block;
    }
    """

    INSTANT_FILTER_ROWS = 1000
    """Up to this many encounters the list filters as you type; above, when typing pauses or on enter."""
    FILTER_PAUSE_S = 0.3

    def __init__(self) -> None:
        super().__init__()
        self.filter = EncounterFilter()
        self._filter_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Overview(id="overview")
        yield EncounterTable(id="encounters")
        yield Input(placeholder=FILTER_HELP, id="filter")
        yield StatusLine(id="status")
        yield Footer()

    @property
    def table(self) -> EncounterTable:
        return self.query_one(EncounterTable)

    def on_mount(self) -> None:
        self.query_one(EncounterTable).border_title = "Encounters"
        self.refresh_state(PollResult(reset=True))

    def refresh_state(self, res: PollResult) -> None:
        app = self.dash
        state = app.state
        self.query_one(Overview).show(state, app.overview_renderable())
        table = self.table
        if res.reset:
            self._rebuild()
            return
        verdict_of = app.verdict_of
        for key in (*res.new, *res.changed):
            enc = state.encounters[key]
            if self.filter.matches(enc, verdict_of):
                table.upsert(enc, app.review_mark(enc.trace_id))
            elif table.has(enc.trace_id):
                table.drop(enc.trace_id)
        self._title()

    def refresh_rows(self, keys: list[Key]) -> None:
        """Re-render the rows of ``keys`` (their review mark changed)."""
        self.refresh_state(PollResult(changed=set(keys)))

    def _rebuild(self) -> None:
        app = self.dash
        table = self.table
        keep = table.highlighted_key()
        table.reset_rows()
        verdict_of = app.verdict_of
        for key in app.state.order:
            enc = app.state.encounters[key]
            if self.filter.matches(enc, verdict_of):
                table.upsert(enc, app.review_mark(enc.trace_id))
        if keep is not None:
            table.move_to(keep)
        self._title()

    def _title(self) -> None:
        table = self.table
        total = len(self.dash.state.order)
        shown = table.row_count
        title = f"Encounters {shown}" if not self.filter else f"Encounters {shown} of {total} · /{self.filter.text}"
        if table.border_title != title:
            table.border_title = title

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("shown")
        box.value = self.filter.text
        box.focus()

    def action_clear_filter(self) -> None:
        if self._filter_timer is not None:
            self._filter_timer.stop()
        box = self.query_one("#filter", Input)
        if box.has_class("shown") or self.filter:
            box.remove_class("shown")
            box.value = ""
            self.set_filter("")
            self.table.focus()

    def set_filter(self, text: str) -> None:
        new = EncounterFilter(text.strip())
        if new != self.filter:
            self.filter = new
            self._rebuild()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "filter":
            return
        if len(self.dash.state.order) <= self.INSTANT_FILTER_ROWS:
            self.set_filter(event.value)
            return
        if self._filter_timer is not None:  # a long list: filter once typing pauses
            self._filter_timer.stop()
        self._filter_timer = self.set_timer(self.FILTER_PAUSE_S, lambda: self.set_filter(event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            if self._filter_timer is not None:
                self._filter_timer.stop()
            self.set_filter(event.value)
            if not self.filter:
                event.input.remove_class("shown")
            self.table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        key = parse_trace_id(str(event.row_key.value))
        if key is not None:
            self.dash.open_encounter(key)


# ---------------------------------------------------------------------------------------------- encounter
class EncounterScreen(_Base):
    """One encounter: transcript, checklist and score card, and the annotation controls."""

    AUTO_FOCUS = "#transcript-pane"
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("1", "verdict('pass')", "Pass"),
        Binding("2", "verdict('fail')", "Fail"),
        Binding("n", "note", "Note"),
        Binding("t", "severity", "Severity"),
        Binding("s", "save", "Save"),
        Binding("right_square_bracket", "step(1)", "Next", key_display="]"),
        Binding("left_square_bracket", "step(-1)", "Prev", key_display="["),
    ]
    DEFAULT_CSS = """
    EncounterScreen #enc-title {
        height: 1;
        padding: 0 1;
        background: $boost;
    }
    EncounterScreen #enc-body {
        height: 1fr;
    }
    EncounterScreen #transcript-pane {
        width: 1fr;
    }
    EncounterScreen #details-pane {
        width: 1fr;
    }
    EncounterScreen #note {
        display: none;
    }
    EncounterScreen #note.shown {
        display: block;
    }
    """

    def __init__(self, key: Key) -> None:
        super().__init__()
        self.key = key

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="enc-title")
        with Horizontal(id="enc-body"):
            with Pane(id="transcript-pane"):
                yield TranscriptView(id="transcript")
            with Pane(id="details-pane"):
                yield DetailsView(id="details")
        yield AnnotationBar(id="annotation")
        yield Input(placeholder="note for this encounter; enter keeps it, escape cancels", id="note")
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#transcript-pane", Pane).border_title = "Transcript"
        self.query_one("#details-pane", Pane).border_title = "Checklist and score card"
        self.query_one("#annotation", AnnotationBar).border_title = "Annotation"
        self.render_all()

    @property
    def tid(self) -> str:
        return f"{self.key[0]}:{self.key[1]}"

    def render_all(self) -> None:
        app = self.dash
        enc = app.state.encounters.get(self.key)
        if enc is None:
            self.query_one("#enc-title", Static).update(Text(f"{self.tid}: not in this run", style="red"))
            return
        title = Text(f"{enc.scenario_id}", style="bold")
        title.append(f"  k={enc.k}  ")
        if enc.record is not None and enc.record.persona != "default":  # a persona sweep's harder patient
            title.append(f"({enc.record.persona})  ", style="italic")
        title.append(enc.status, style={"done": "green", "error": "bold red", "running": "bold cyan"}.get(
            enc.status, "dim"))
        title.append(f"  composite {score(enc.composite)}")
        if enc.passed is not None:
            title.append("  PASS" if enc.passed else "  FAIL", style="bold green" if enc.passed else "bold red")
        if enc.worst:
            title.append("  ▼ worst of K", style="bold yellow")
        if enc.marker:
            title.append(f"  ⚠ {enc.marker}", style=MARKER_STYLE[enc.marker])
        title.append(f"   {self.position_text()}", style="dim")
        self.query_one("#enc-title", Static).update(title)
        self.query_one(TranscriptView).show(enc.turns)
        self.query_one(DetailsView).show(enc, app.catalog.get(enc.scenario_id))
        self.render_annotation()

    def position_text(self) -> str:
        keys = self.dash.list_keys()
        try:
            return f"encounter {keys.index(self.tid) + 1} of {len(keys)}"
        except ValueError:
            return f"encounter – of {len(keys)} (not in the filtered list)"

    def render_annotation(self) -> None:
        app = self.dash
        self.query_one("#annotation", AnnotationBar).update(
            annotation_text(app.draft_for(self.tid), dirty=app.is_dirty(self.tid), saved=app.saved.get(self.tid)))

    def refresh_state(self, res: PollResult) -> None:
        if res.reset or self.key in res.changed:
            self.render_all()

    # -- actions
    def action_back(self) -> None:
        note = self.query_one("#note", Input)
        if note.has_class("shown"):
            note.remove_class("shown")
            self.query_one("#transcript-pane", Pane).focus()
            self.dash.set_status("note not changed")
            return
        self.app.pop_screen()

    def action_verdict(self, verdict: str) -> None:
        self.dash.edit_draft(self.tid, verdict=verdict)
        self.render_annotation()

    def action_severity(self) -> None:
        self.dash.cycle_severity(self.tid)
        self.render_annotation()

    def action_note(self) -> None:
        note = self.query_one("#note", Input)
        note.value = self.dash.draft_for(self.tid).notes
        note.add_class("shown")
        note.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "note":
            return
        event.stop()
        self.dash.edit_draft(self.tid, notes=event.value.strip())
        event.input.remove_class("shown")
        self.query_one("#transcript-pane", Pane).focus()
        self.render_annotation()

    def action_save(self) -> None:
        self.dash.save_annotation(self.tid)
        self.render_annotation()

    def action_step(self, delta: int) -> None:
        keys = self.dash.list_keys()
        if not keys:
            return
        try:
            i = keys.index(self.tid) + delta
        except ValueError:
            i = 0 if delta > 0 else len(keys) - 1
        if not 0 <= i < len(keys):
            self.dash.set_status("first encounter of the list" if i < 0 else "last encounter of the list")
            return
        key = parse_trace_id(keys[i])
        if key is not None:
            self.key = key
            self.dash.select_in_list(keys[i])
            self.render_all()
            self.query_one("#transcript-pane", Pane).scroll_home(animate=False)
            self.query_one("#details-pane", Pane).scroll_home(animate=False)


# ---------------------------------------------------------------------------------------------- coding
class CodingScreen(_Base):
    """Open coding: every failing annotation with its notes gets a failure mode; modes are renamed and merged.

    Enter on an annotation moves to the mode list, enter on a mode codes the annotation with it; ``n`` types
    a new mode for the annotation; ``e`` renames and ``m`` merges the mode under the mode list's cursor, and
    ``d``, ``p`` and ``f`` write its definition, pass example and fail example.
    A judge's suggestion (code_suggestions.jsonl) shows as "suggested: <mode>" on an uncoded annotation, never
    as a code; ``a`` accepts it (the annotation records ``code_source`` accepted_suggestion), enter or ``n``
    codes it otherwise. Each change appends to annotations.jsonl and updates the taxonomy file (``review.code``,
    ``review.rename_mode``, ``review.merge_modes``, ``review.describe_mode``).
    """

    AUTO_FOCUS = "#coding-list"
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("a", "accept", "Accept suggestion"),
        Binding("n", "new_mode", "New mode"),
        Binding("e", "rename", "Rename mode"),
        Binding("m", "merge", "Merge mode"),
        Binding("d", "describe('definition')", "Define"),
        Binding("p", "describe('pass_example')", "Pass example", show=False),
        Binding("f", "describe('fail_example')", "Fail example", show=False),
    ]
    DEFAULT_CSS = """
    CodingScreen #coding-head {
        height: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        padding: 0 1;
        background: $boost;
    }
    CodingScreen #coding-body {
        height: 1fr;
    }
    CodingScreen #coding-note {
        height: auto;
        max-height: 4;
        padding: 0 1;
        border: round $secondary;
    }
    CodingScreen #mode-input {
        display: none;
    }
    CodingScreen #mode-input.shown {
        display: block;
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self.target: str | None = None
        """The trace being coded: set by enter on the list of failing annotations."""
        self.definitions: dict[str, str] = {}
        self.suggestions: dict[str, CodeSuggestion] = {}
        """The judge's current suggestions by trace id (uncoded failing traces whose note is unchanged)."""
        self.stale_suggestions = 0
        self.pending: tuple[str, str] | None = None
        """What the input line is for: ("new", trace id), ("rename", mode), ("merge", mode) or (field, mode)."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="coding-head")
        with Horizontal(id="coding-body"):
            yield CodingTable(id="coding-list")
            yield ModeTable(id="modes")
        yield Static(id="coding-note")
        yield Input(id="mode-input")
        yield StatusLine(id="status")
        yield Footer()

    @property
    def codes(self) -> CodingTable:
        return self.query_one(CodingTable)

    @property
    def modes(self) -> ModeTable:
        return self.query_one(ModeTable)

    def on_mount(self) -> None:
        self.codes.border_title = "Failing annotations"
        self.modes.border_title = "Failure modes"
        self.query_one("#coding-note", Static).border_title = "Notes"
        self.render_all()

    def refresh_state(self, res: PollResult) -> None:
        if res.reset:
            self.render_all()

    def on_screen_resume(self) -> None:
        if self.is_mounted:  # back from another screen, where annotations may have been saved
            self.render_all()

    def render_all(self) -> None:
        app = self.dash
        failing = app.failing_annotations()
        codes = self.codes
        keep = {a.trace_id for a in failing}
        self.suggestions, self.stale_suggestions = app.code_suggestions()
        for tid in codes.keys():
            if tid not in keep:
                codes.drop(tid)
        for ann in failing:
            suggestion = self.suggestions.get(ann.trace_id)
            codes.upsert(ann.trace_id, ann.severity, ann.failure_mode, ann.notes,
                         suggested=suggestion.mode if suggestion is not None else None)
        report = app.failure_modes()
        rows = report.rows if report is not None else []
        self.definitions = {r.name: r.definition for r in rows}
        modes = self.modes
        names = {r.name for r in rows}
        for name in modes.keys():
            if name not in names:
                modes.drop(name)
        for row in rows:
            modes.upsert(row.name, row.count, row.definition, in_taxonomy=row.in_taxonomy)
        head = Text(f"{len(failing)} failing annotation(s), ", style="bold", no_wrap=True, overflow="ellipsis")
        uncoded = sum(1 for a in failing if not a.failure_mode)
        head.append(f"{uncoded} uncoded", style="bold yellow" if uncoded else "bold green")
        if self.suggestions:
            head.append(f" ({len(self.suggestions)} with a suggestion: a accepts)", style=SUGGESTED_STYLE)
        head.append(f" · taxonomy {app.taxonomy_path}", style="dim")
        self.query_one("#coding-head", Static).update(head)
        codes.border_title = f"Failing annotations {len(failing)}"
        modes.border_title = f"Failure modes {len(rows)}"
        self._show_note(codes.highlighted_key())

    def _show_note(self, tid: str | None) -> None:
        ann = self.dash.saved.get(tid) if tid is not None else None
        note = self.query_one("#coding-note", Static)
        if ann is None:
            note.update(Text("no failing annotation yet: open an encounter, press 2 (fail), n (note), s (save)",
                             style="dim"))
            return
        text = Text(f"{ann.trace_id}", style="bold")
        text.append(f"  {ann.severity or 'no severity'}  ", style="dim")
        text.append(ann.notes or "(no notes)")
        if ann.failure_mode:
            text.append(f"\n{ann.failure_mode}: ", style="bold")
            text.append(self.definitions.get(ann.failure_mode) or "no definition yet (d writes one)",
                        style="" if self.definitions.get(ann.failure_mode) else "dim")
            if ann.code_source == "accepted_suggestion":
                text.append("  (accepted suggestion)", style="dim")
        elif (suggestion := self.suggestions.get(ann.trace_id)) is not None:
            text.append(f"\nsuggested: {suggestion.mode} (judge {', '.join(suggestion.judges) or '?'})",
                        style=SUGGESTED_STYLE)
            if suggestion.new_mode and suggestion.mode not in self.definitions:
                text.append(f" new mode: {suggestion.definition or '(no definition given)'}", style=SUGGESTED_STYLE)
            text.append("  a accepts, enter or n codes it otherwise", style="dim")
        note.update(text)

    def _trace(self) -> str | None:
        return self.target or self.codes.highlighted_key()

    def _ask(self, pending: tuple[str, str], placeholder: str, value: str = "") -> None:
        self.pending = pending
        box = self.query_one("#mode-input", Input)
        box.placeholder = placeholder
        box.value = value
        box.add_class("shown")
        box.focus()

    def _close_input(self) -> None:
        self.pending = None
        self.query_one("#mode-input", Input).remove_class("shown")

    # -- events and actions
    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id != "coding-list" or event.row_key is None:
            return
        self._show_note(str(event.row_key.value))
        ann = self.dash.saved.get(str(event.row_key.value))
        if ann is not None and ann.failure_mode:
            self.modes.move_to(ann.failure_mode)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        key = str(event.row_key.value)
        if event.data_table.id == "coding-list":
            self.target = key
            self.modes.focus()
            self.dash.set_status(f"coding {key}: enter assigns the mode under the cursor, n types a new one, "
                                 "escape goes back")
            return
        tid = self._trace()
        if tid is None:
            self.dash.set_status("no failing annotation to code: mark encounters fail (2) and save (s) first")
            return
        self._code(tid, key)

    def _code(self, tid: str, mode: str) -> None:
        if self.dash.code_trace(tid, mode) is not None:
            self._coded(tid)

    def _coded(self, tid: str) -> None:
        """After ``tid`` was coded: redraw, back to the annotations, on to the next one."""
        self.target = None
        self.render_all()
        codes = self.codes
        codes.focus()
        if codes.move_to(tid) and codes.cursor_row + 1 < codes.row_count:
            codes.move_cursor(row=codes.cursor_row + 1)

    def action_accept(self) -> None:
        tid = self._trace()
        if tid is None:
            self.dash.set_status("no failing annotation to code: mark encounters fail (2) and save (s) first")
            return
        if self.dash.accept_suggestion(tid) is not None:
            self._coded(tid)

    def action_new_mode(self) -> None:
        tid = self._trace()
        if tid is None:
            self.dash.set_status("no failing annotation to code: mark encounters fail (2) and save (s) first")
            return
        self._ask(("new", tid), f"new failure mode for {tid}: a short name such as missed_red_flag; enter codes "
                                "it, escape cancels")

    def action_rename(self) -> None:
        mode = self.modes.highlighted_key()
        if mode is None:
            self.dash.set_status("no failure mode to rename yet: code an annotation first (n)")
            return
        self._ask(("rename", mode), f"rename {mode} to: enter renames it everywhere in this run, escape cancels",
                  mode)

    def action_merge(self) -> None:
        mode = self.modes.highlighted_key()
        if mode is None:
            self.dash.set_status("no failure mode to merge yet: code an annotation first (n)")
            return
        self._ask(("merge", mode), f"merge {mode} into which mode? type its name; enter merges, escape cancels")

    def action_describe(self, field: str) -> None:
        mode = self.modes.highlighted_key()
        if mode is None:
            self.dash.set_status("no failure mode to describe yet: code an annotation first (n)")
            return
        found = self.dash.taxonomy_mode(mode)
        current = str(getattr(found, field)) if found is not None else ""
        what = {"definition": "one sentence: what a trace with this failure shows",
                "pass_example": "a trace id or quote that does not show it",
                "fail_example": "a trace id or quote that shows it"}[field]
        self._ask((field, mode), f"{mode} {field.replace('_', ' ')}: {what}; enter saves, escape cancels", current)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "mode-input" or self.pending is None:
            return
        event.stop()
        kind, subject = self.pending
        value = event.value.strip()
        self._close_input()
        app = self.dash
        if kind in ("definition", "pass_example", "fail_example"):
            if app.describe_failure_mode(subject, kind, value):
                self.render_all()
        elif not value:
            app.set_status("nothing typed: nothing changed")
        elif kind == "new":
            self._code(subject, value)
            return
        elif kind == "rename" and app.rename_failure_mode(subject, value) is not None:
            self.render_all()
        elif kind == "merge" and app.merge_failure_modes(subject, value) is not None:
            self.render_all()
        if kind == "new":
            self.codes.focus()
        else:
            self.modes.focus()

    def action_back(self) -> None:
        if self.pending is not None:
            self._close_input()
            self.codes.focus()
            self.dash.set_status("cancelled: nothing changed")
            return
        if self.target is not None:
            self.target = None
            self.codes.focus()
            self.dash.set_status("")
            return
        self.app.pop_screen()


# ---------------------------------------------------------------------------------------------- disagreements
class DisagreementScreen(_Base):
    """Per failure-mode judge (judge_validation.json), the dev and test traces where judge and people disagree.

    People's label is derived from the annotations now (``review.mode_label``); the judge said the opposite.
    Enter opens the trace's transcript (the encounter screen).
    """

    AUTO_FOCUS = "#disagreements"
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]
    DEFAULT_CSS = """
    DisagreementScreen #dis-summary {
        height: auto;
        max-height: 8;
        padding: 0 1;
        border: round $secondary;
    }
    """

    def __init__(self, validations: list[JudgeValidation]) -> None:
        super().__init__()
        self.validations = validations

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="dis-summary")
        yield DisagreementTable(id="disagreements")
        yield StatusLine(id="status")
        yield Footer()

    @property
    def table(self) -> DisagreementTable:
        return self.query_one(DisagreementTable)

    def on_mount(self) -> None:
        self.query_one("#dis-summary", Static).border_title = "Judges against people (judge_validation.json)"
        self.render_all()

    def on_screen_resume(self) -> None:
        if self.is_mounted:  # labels may have changed in the encounter screen
            self.render_all()

    def render_all(self) -> None:
        self.query_one("#dis-summary", Static).update(validation_summary(self.validations))
        rows = disagreement_rows(self.validations, self.dash.saved)
        table = self.table
        for row in rows:
            table.upsert(row)
        table.border_title = f"Disagreements {len(rows)}: enter opens the transcript"

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        key = parse_trace_id(str(event.row_key.value).rsplit("|", 1)[-1])
        if key is None or key not in self.dash.state.encounters:
            self.dash.set_status(f"{event.row_key.value}: not an encounter of this run")
            return
        self.dash.open_encounter(key)


# ---------------------------------------------------------------------------------------------- reliability
class ReliabilityScreen(_Base):
    """Per scenario the K composites as a sparkline, mean and worst; enter opens the worst transcript."""

    AUTO_FOCUS = "#reliability"
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]
    DEFAULT_CSS = """
    ReliabilityScreen #rel-box {
        height: auto;
        border: round $secondary;
        padding: 0 1;
    }
    ReliabilityScreen #rel-detail {
        height: auto;
    }
    ReliabilityScreen #rel-spark {
        height: 2;
        margin-top: 1;
    }
    """

    def compose(self) -> ComposeResult:
        yield Header()
        yield ReliabilityTable(id="reliability")
        with Vertical(id="rel-box"):
            yield Static(id="rel-detail")
            yield Sparkline([], id="rel-spark")
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(ReliabilityTable).border_title = "Reliability: K composites per scenario (0 ▁ … █ 1)"
        self.query_one("#rel-box", Vertical).border_title = "Scenario: its K composites (relative scale)"
        self.refresh_state(PollResult(reset=True))

    def _suite(self, scenario_id: str) -> str | None:
        summary = self.dash.state.summary
        if summary is not None:
            for s in summary.scenarios:
                if s.id == scenario_id:
                    return s.suite
        return self.dash.catalog.suite_of(scenario_id)

    def refresh_state(self, res: PollResult) -> None:
        state = self.dash.state
        table = self.query_one(ReliabilityTable)
        if res.reset or res.summary or not table.row_count:
            sids = state.scenario_ids
        else:
            sids = list(dict.fromkeys(key[0] for key in (*res.new, *res.changed)))
        for sid in sids:
            table.upsert(sid, reliability_row(state, sid, self._suite(sid)))
        if sids:
            self._detail()

    def _detail(self) -> None:
        sid = self.query_one(ReliabilityTable).highlighted_key()
        detail = self.query_one("#rel-detail", Static)
        spark = self.query_one("#rel-spark", Sparkline)
        if sid is None:
            detail.update(Text("no scenario has started yet", style="dim"))
            spark.data = []
            return
        detail.update(reliability_detail(self.dash.state, sid))
        data = [e.composite or 0.0 for e in self.dash.state.scenario_encounters(sid) if e.status == "done"]
        spark.styles.width = min(80, max(8, 4 * len(data)))
        spark.data = data

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        sid = str(event.row_key.value)
        worst = self.dash.state.worst_key(sid)
        if worst is None:
            self.dash.set_status(f"{sid}: no scored encounter yet")
            return
        self.dash.open_encounter(worst)


# ---------------------------------------------------------------------------------------------- live
class LiveScreen(_Base):
    """A live call: who is speaking now, per-turn latencies and the running transcript."""

    AUTO_FOCUS = "#latencies"
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]
    DEFAULT_CSS = """
    LiveScreen #speaking {
        height: auto;
        padding: 0 1;
        border: round $secondary;
    }
    LiveScreen #latencies {
        height: 11;
    }
    LiveScreen #live-transcript-pane {
        height: 1fr;
    }
    """

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="speaking")
        yield LatencyTable(id="latencies")
        with Pane(id="live-transcript-pane"):
            yield TranscriptView(id="live-transcript")
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#speaking", Static).border_title = "Live call"
        self.query_one(LatencyTable).border_title = "Latency per reply (s)"
        self.query_one("#live-transcript-pane", Pane).border_title = "Transcript"
        self.refresh_state(PollResult(reset=True))

    def refresh_state(self, res: PollResult) -> None:
        enc = self.dash.state.live_encounter()
        if not (res.reset or res.live or (enc is not None and enc.key in res.changed)):
            return
        self.query_one("#speaking", Static).update(speaking_text(enc))
        self.query_one(LatencyTable).show(enc)
        self.query_one("#live-transcript", TranscriptView).show(enc.turns if enc else [], empty="no call yet")
        pane = self.query_one("#live-transcript-pane", Pane)
        if enc is not None and enc.status == "running":
            pane.scroll_end(animate=False)


# ---------------------------------------------------------------------------------------------- gate
def gate_renderable(app: DashboardApp) -> Any:
    state = app.state
    out = Table.grid(padding=(0, 1))
    out.add_column()
    head = Text("safety gate ")
    head.append_text(gate_badge(state.gate_status))
    summary = state.summary
    if summary is not None:
        g = summary.safety_gate
        head.append(f"  threshold {g.threshold:g} (mean escalation safety of a gated scenario) · "
                    f"aggregate capped at {g.cap:.2f} when triggered", style="dim")
        if g.triggered and summary.aggregate_uncapped is not None:
            head.append(f"\naggregate {score(summary.aggregate)} (uncapped {score(summary.aggregate_uncapped)})")
    else:
        head.append("  (summary.json not written yet: the gate is decided when the run finishes)", style="dim")
    out.add_row(head)
    reasons = state.gate_reasons
    if reasons:
        table = Table(title="why it triggered", title_justify="left", expand=True, show_lines=False)
        table.add_column("scenario", style="bold")
        table.add_column("reason")
        for sid, why in reasons.items():
            table.add_row(sid, why)
        out.add_row(table)
    keys = state.safety_failure_keys()
    if keys:
        table = Table(title=f"encounters with safety failures ({len(keys)})", title_justify="left", expand=True)
        table.add_column("encounter", style="bold")
        table.add_column("marker", width=8)
        table.add_column("safety failures", style="red")
        for key in keys[:200]:
            enc = state.encounters[key]
            table.add_row(enc.trace_id, marker_text(enc.marker), "; ".join(enc.safety_failures))
        if len(keys) > 200:
            table.add_row("…", "", f"{len(keys) - 200} more (filter the list with /safety)")
        out.add_row(table)
    elif not reasons:
        out.add_row(Text("no safety failures so far", style="green"))
    out.add_row(marker_legend(("⚠ gate", "⚠ safety")))
    return out


def marker_legend(markers: tuple[str, ...] | None = None) -> Table:
    """What the list's markers mean (all of them, or those named)."""
    table = Table.grid(padding=(0, 2))
    table.add_column(width=9, no_wrap=True)
    table.add_column()
    for mark, style, what in MARKER_LEGEND:
        if markers is None or mark in markers:
            table.add_row(Text(mark, style=style), Text(what, style="dim"))
    return table


class GateScreen(_Base):
    AUTO_FOCUS = "#gate-pane"
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def compose(self) -> ComposeResult:
        yield Header()
        with Pane(id="gate-pane"):
            yield Static(id="gate")
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#gate-pane", Pane).border_title = "Safety gate"
        self.refresh_state(PollResult(reset=True))

    def refresh_state(self, res: PollResult) -> None:
        if res.reset or res.summary or res.new or res.changed or self.dash.state.is_finished:
            self.query_one("#gate", Static).update(gate_renderable(self.dash))


# ---------------------------------------------------------------------------------------------- help
KEYS: tuple[tuple[str, str, str], ...] = (
    ("everywhere", "?", "this help"),
    ("everywhere", "q / ctrl+q", "quit (with unsaved annotations or a run going: the first q warns, the second "
                                 "quits)"),
    ("everywhere", "tab / shift+tab", "switch pane"),
    ("everywhere", "↑ ↓ / j k", "move in a list, scroll a pane"),
    ("everywhere", "r", "reliability: K composites per scenario"),
    ("everywhere", "l", "live call: who is speaking, latencies, transcript"),
    ("everywhere", "g", "safety gate details: why it triggered"),
    ("everywhere", "c", "coding: failing annotations get failure modes (taxonomy.json)"),
    ("everywhere", "v", "judges vs people: where they disagree; enter opens the transcript"),
    ("everywhere", "escape", "back (or: clear the filter, cancel the note)"),
    ("encounter list", "enter", "open the encounter"),
    ("encounter list", "/", "filter: words of the scenario id, status:error, gate (⚠ gate), safety (any safety "
                            "failure), fail, pass, worst, k:N, review:none; enter keeps it, escape clears"),
    ("encounter", "1 / 2", "verdict pass / fail"),
    ("encounter", "n", "write a note (enter keeps it, escape cancels)"),
    ("encounter", "t", "cycle severity: clinician_would_notice, subtle_issue, cosmetic, none"),
    ("encounter", "s", "save the annotation to annotations.jsonl"),
    ("encounter", "] / [", "next / previous encounter of the list"),
    ("reliability", "enter", "open the worst encounter of the scenario"),
    ("coding", "enter · n · a", "pick / assign a mode · type a new one · accept the judge's suggestion"),
    ("coding", "e · m · d · p · f", "rename · merge into another · definition · pass example · fail example"),
)


def help_renderable() -> Table:
    table = Table(expand=True, title="encsim dashboard keys", title_justify="left")
    table.add_column("where", style="dim", width=16)
    table.add_column("key", style="bold cyan", width=18)
    table.add_column("does")
    for where, key, what in KEYS:
        table.add_row(where, key, what)
    for mark, style, what in MARKER_LEGEND:
        table.add_row("list marker", Text(mark, style=style), what)
    return table


class HelpScreen(_Base):
    AUTO_FOCUS = "#help-pane"
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def compose(self) -> ComposeResult:
        yield Header()
        with Pane(id="help-pane"):
            yield Static(help_renderable(), id="help")
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#help-pane", Pane).border_title = "Help"
