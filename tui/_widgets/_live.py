"""The live call view: who is speaking, and the latency of every reply by stage."""

from __future__ import annotations

import statistics
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from tui._state import Encounter


def speaking_text(enc: Encounter | None) -> Text:
    if enc is None:
        return Text("no live call in this run (the live view follows `encsim live` calls)", style="dim")
    text = Text(f"{enc.scenario_id} k={enc.k}   ", style="bold")
    if enc.status != "running":
        text.append(f" CALL ENDED ({enc.termination or enc.status}) ", style="bold black on green")
    elif not enc.speaking:
        text.append("○ silence", style="dim")
    else:
        names = sorted(enc.speaking)
        text.append("● " + " + ".join(names) + " speaking", style="bold green" if len(names) == 1 else "bold red")
        if len(names) > 1:
            text.append("  (overlap)", style="red")
    by_side: dict[str, list[float]] = {}
    for lat in enc.latencies:
        by_side.setdefault(lat.side, []).append(lat.total_s)
    text.append(f"   turns {len(enc.turns)} · overlaps {len(enc.overlaps)}")
    for side, values in sorted(by_side.items()):
        text.append(f" · {side} latency median {statistics.median(values):.2f} s")
    return text


class LatencyTable(DataTable[Any]):
    """Per reply: side, turn, voice-to-voice total and the stages (seconds)."""

    STAGES = ("vad_stop", "stt", "decide", "first_tts", "playout")
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]
    DEFAULT_CSS = """
    LatencyTable {
        height: 11;
        border: round $panel-lighten-2;
    }
    LatencyTable:focus {
        border: round $accent;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._shown: tuple[Any, int] = (None, 0)

    def on_mount(self) -> None:
        self.add_column("turn", key="turn", width=4)
        self.add_column("side", key="side", width=7)
        self.add_column("total s", key="total", width=7)
        for stage in self.STAGES:
            self.add_column(stage, key=stage, width=9)

    def show(self, enc: Encounter | None) -> None:
        key = enc.key if enc is not None else None
        shown_key, count = self._shown
        if key != shown_key:
            self.clear()
            count = 0
        lats = enc.latencies if enc is not None else []
        for lat in lats[count:]:
            cells: list[Any] = [Text(str(lat.turn), justify="right"), lat.side,
                                Text(f"{lat.total_s:.2f}", justify="right",
                                     style="bold red" if lat.total_s > 2.0 else "")]
            cells += [Text(f"{lat.stages[s]:.3f}" if s in lat.stages else "—", justify="right") for s in self.STAGES]
            self.add_row(*cells)
        if len(lats) > count:
            self.move_cursor(row=len(lats) - 1)  # follow the newest reply
        self._shown = (key, len(lats))
