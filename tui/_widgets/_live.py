"""The live call view: who is speaking, and the latency of every reply by stage."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from review import Encounter, Key
from sim.records import percentile
from tui._widgets._table import RowTable


def speaking_text(enc: Encounter | None) -> Text:
    """The live view's head: who is speaking now (or the call ended), turns, overlaps, median latencies.

    Args:
        enc: The live call (``RunState.live_encounter``), or None.

    Returns:
        The line.
    """
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
        median = percentile(values, 50)  # as the reports compute it; every side listed has a value
        if median is not None:
            text.append(f" · {side} latency median {median:.2f} s")
    return text


class LatencyTable(RowTable):
    """Per reply: side, turn, voice-to-voice total and the stages (seconds); the newest reply last."""

    STAGES = ("vad_stop", "stt", "decide", "first_tts", "playout")
    DEFAULT_CSS = """
    LatencyTable {
        height: 11;
    }
    """
    COLUMNS: tuple[tuple[str, str, int], ...] = (
        ("turn", "turn", 4), ("side", "side", 7), ("total s", "total", 7), *((stage, stage, 9) for stage in STAGES),
    )

    def __init__(self, **kwargs: Any) -> None:
        """Create the table.

        Args:
            **kwargs: Passed to ``DataTable`` (``id``, ``classes``, ...).
        """
        super().__init__(**kwargs)
        self._shown: tuple[Key | None, int] = (None, 0)

    def show(self, enc: Encounter | None) -> None:
        """Show the replies of ``enc``: only the new ones when it is the call already shown.

        Args:
            enc: The live call (``RunState.live_encounter``), or None.
        """
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
