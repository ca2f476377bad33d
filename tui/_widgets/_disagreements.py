"""The judge disagreements view: per failure-mode judge, the dev and test traces where judge and people disagree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.binding import Binding

from review import Annotation, mode_label
from sim.records import JudgeValidation, JudgeValidity
from tui._widgets._table import RowTable

SPLITS = ("dev", "test")


@dataclass(frozen=True)
class DisagreementRow:
    """One trace where a judge and people disagree, with people's current label and the judge's verdict."""

    mode: str
    split: str
    trace_id: str
    people: bool | None
    """People's label now (``review.mode_label``): True shows the mode, False does not, None no label any more."""
    tpr: float | None
    tnr: float | None
    said: bool | None = None
    """The judge's verdict as validated (judge_validation.json's ``judge_said``); None in files from before it."""

    @property
    def key(self) -> str:
        """The table's row key: judge, split and trace (a trace can disagree with several judges)."""
        return f"{self.mode}|{self.split}|{self.trace_id}"

    @property
    def judge(self) -> bool | None:
        """The judge's verdict as validated; for an older file, the opposite of people's label (None: no label now).

        A trace people relabelled since the validation can then show judge and people agreeing: the row says so.
        """
        if self.said is not None:
            return self.said
        return None if self.people is None else not self.people


def disagreement_rows(validations: list[JudgeValidation], latest: dict[str, Annotation]) -> list[DisagreementRow]:
    """Every disagreement of every judge, dev split before test, in file order.

    Args:
        validations: judge_validation.json.
        latest: The latest annotation per trace id (people's labels are derived from them now).

    Returns:
        The rows.
    """
    rows = []
    for v in validations:
        for split in SPLITS:
            validity: JudgeValidity | None = getattr(v, split)
            if validity is None:  # validated with --dev-only
                continue
            for tid in validity.disagreements:
                ann = latest.get(tid)
                rows.append(DisagreementRow(mode=v.mode, split=split, trace_id=tid,
                                            people=mode_label(ann, v.mode) if ann is not None else None,
                                            tpr=validity.tpr, tnr=validity.tnr,
                                            said=validity.judge_said.get(tid)))
    return rows


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _label(value: bool | None) -> Text:
    if value is None:
        return Text("no label now", style="dim")
    return Text("shows it", style="bold red") if value else Text("does not", style="green")


def validation_summary(validations: list[JudgeValidation]) -> Text:
    """One line per judge: per split its size, TPR and TNR with their 95% intervals, and its disagreements.

    Args:
        validations: judge_validation.json.

    Returns:
        The text above the table.
    """
    text = Text()
    for i, v in enumerate(validations):
        if i:
            text.append("\n")
        text.append(v.mode, style="bold")
        if v.edited:
            text.append(" (edited since built)", style="yellow")
        for split in SPLITS:
            s: JudgeValidity | None = getattr(v, split)
            if s is None:
                text.append(f"  {split}: not run (--dev-only)", style="dim")
                continue
            n = s.tp + s.fn + s.tn + s.fp
            text.append(f"  {split}: n {n} TPR {_rate(s.tpr)}")
            if s.tpr_ci95:
                text.append(f" [{s.tpr_ci95[0]:.2f}, {s.tpr_ci95[1]:.2f}]", style="dim")
            text.append(f" TNR {_rate(s.tnr)}")
            if s.tnr_ci95:
                text.append(f" [{s.tnr_ci95[0]:.2f}, {s.tnr_ci95[1]:.2f}]", style="dim")
            text.append(f" · {len(s.disagreements)} disagree", style="yellow" if s.disagreements else "dim")
            if not s.usable:
                text.append(" UNUSABLE", style="bold red")
    if not validations:
        text.append("judge_validation.json lists no judge", style="dim")
    return text


class DisagreementTable(RowTable):
    """One row per (judge, split, trace) where judge and people disagree; enter opens the transcript."""

    BINDINGS = [
        Binding("enter", "select_cursor", "Open transcript"),
    ]
    DEFAULT_CSS = """
    DisagreementTable {
        height: 1fr;
    }
    """
    COLUMNS: tuple[tuple[str, str, int], ...] = (
        ("judge", "mode", 24), ("split", "split", 5), ("TPR", "tpr", 5), ("TNR", "tnr", 5),
        ("trace", "trace", 22), ("people", "people", 13), ("judge says", "judge", 12),
    )

    def upsert(self, row: DisagreementRow) -> None:
        """Show ``row``, or update it if it changed.

        Args:
            row: The disagreement.
        """
        cells: list[Any] = [row.mode, row.split, Text(_rate(row.tpr), justify="right"),
                            Text(_rate(row.tnr), justify="right"), row.trace_id, _label(row.people),
                            _label(row.judge)]
        self.upsert_row(row.key, (row.people, row.tpr, row.tnr), lambda: cells)
