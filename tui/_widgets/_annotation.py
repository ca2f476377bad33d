"""The annotation bar: the reviewer's verdict, severity and notes for one encounter, and whether they are saved."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from review import Annotation


def annotation_text(draft: Annotation, *, dirty: bool, saved: Annotation | None) -> Text:
    """The annotation bar's line: verdict, severity and notes, and whether they are saved.

    Args:
        draft: The annotation as edited (the saved one when there is no draft).
        dirty: Whether ``draft`` has unsaved changes.
        saved: The annotation last saved for the encounter, or None.

    Returns:
        The line.
    """
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
    """The encounter screen's annotation bar; its screen updates it with ``annotation_text``."""

    DEFAULT_CSS = """
    AnnotationBar {
        height: auto;
        padding: 0 1;
        border: round $secondary;
    }
    """
