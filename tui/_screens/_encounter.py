"""The encounter screen: transcript, checklist and score card, and the annotation controls."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Footer, Header, Input, Static

from review import Key, PollResult, parse_trace_id
from tui._format import MARKER_STYLE, score
from tui._screens._base import BaseScreen
from tui._widgets import AnnotationBar, DetailsView, Pane, StatusLine, TranscriptView, annotation_text


class EncounterScreen(BaseScreen):
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
