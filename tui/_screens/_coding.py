"""The coding screen: failing annotations get failure modes; modes are renamed, merged and described."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Footer, Header, Input, Static

from review import PollResult
from sim.records import CodeSuggestion
from tui._screens._base import BaseScreen
from tui._widgets import SUGGESTED_STYLE, CodingTable, ModeTable, StatusLine


class CodingScreen(BaseScreen):
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
