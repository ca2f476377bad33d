"""The transcript: turns by speaker, with what the channel made of them (said / heard) and the facts revealed."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from review import TranscriptTurn

SPEAKER_STYLE = {"patient": "bold magenta", "agent": "bold cyan", "harness": "dim italic"}


def transcript_table(turns: Sequence[TranscriptTurn], *, empty: str = "no turns yet") -> RenderableType:
    """Turns by speaker; when the channel changed a message (voice), both said and heard text.

    Args:
        turns: ``sim.records.Turn`` or ``sim.records.TurnRecorded`` (``Encounter.turns``).
        empty: What to show when there is no turn.

    Returns:
        A grid: turn index, speaker, text (and the facts a turn revealed).
    """
    if not turns:
        return Text(empty, style="dim")
    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(width=4, justify="right", style="dim")
    grid.add_column(width=7)
    grid.add_column(ratio=1)
    for t in turns:
        speaker = str(t.speaker)
        body = Text(t.text or "")
        heard = getattr(t, "heard_text", None)
        if heard is not None and heard.strip() != (t.text or "").strip():
            body = Text("said  ", style="dim")
            body.append(t.text or "")
            body.append("\nheard ", style="dim")
            body.append(heard, style="italic yellow")
        revealed = list(getattr(t, "revealed", []) or [])
        if revealed:
            body.append(f"\n↳ revealed {', '.join(revealed)}", style="green")
        grid.add_row(f"[{t.index}]", Text(speaker, style=SPEAKER_STYLE.get(speaker, "bold")), body)
    return grid


class TranscriptView(Static):
    """A transcript pane's content: ``transcript_table`` of the turns shown."""

    DEFAULT_CSS = """
    TranscriptView {
        height: auto;
    }
    """

    def show(self, turns: Sequence[TranscriptTurn], *, empty: str = "no turns yet") -> None:
        """Show ``turns``.

        Args:
            turns: The transcript (``Encounter.turns``).
            empty: What to show when there is no turn.
        """
        self.update(transcript_table(turns, empty=empty))
