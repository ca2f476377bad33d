"""The annotation bar: the reviewer's verdict, severity and notes for one encounter, and whether they are saved."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui._annotations import Annotation


def annotation_text(draft: Annotation, *, dirty: bool, saved: Annotation | None) -> Text:
    text = Text("review  ", style="bold")
    verdict = draft.verdict
    text.append("verdict ")
    text.append(verdict.upper() if verdict else "—",
                style={"pass": "bold green", "fail": "bold red"}.get(verdict or "", "dim"))
    text.append("  severity ")
    text.append(draft.severity or "none", style="bold yellow" if draft.severity else "dim")
    text.append("  notes ")
    text.append(f"“{draft.notes}”" if draft.notes else "—", style="italic" if draft.notes else "dim")
    text.append("   ")
    if dirty:
        text.append(" UNSAVED ", style="bold black on yellow")
        text.append(" s saves", style="dim")
    elif saved is not None:
        text.append(f"saved (pass {saved.review_pass}, {saved.reviewer})", style="green")
    else:
        text.append("not reviewed", style="dim")
    return text


class AnnotationBar(Static):
    DEFAULT_CSS = """
    AnnotationBar {
        height: auto;
        padding: 0 1;
        border: round $secondary;
    }
    """
