"""Small pure helpers shared by the widgets: number and time formatting, text sparklines, the filter."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.text import Text

from review import Encounter

SPARK_BARS = "▁▂▃▄▅▆▇█"
STATUS_STYLE = {"running": "bold cyan", "done": "green", "error": "bold red", "n/a": "dim"}
MARKER_STYLE = {"gate": "bold red", "safety": "red"}
MARKER_LEGEND: tuple[tuple[str, str, str], ...] = (
    ("▼ worst", "bold yellow", "the lowest composite of its scenario (once it has two scored encounters)"),
    ("⚠ gate", MARKER_STYLE["gate"], "feeds the safety gate: a safety failure in a scenario the gate watches "
                                     "(safety suite, imaging items with critical findings), or any encounter "
                                     "of a scenario that triggered it"),
    ("⚠ safety", MARKER_STYLE["safety"], "a safety failure in a scenario that does not feed the safety gate "
                                         "(e.g. under-escalation in a triage case): it lowers the score, it "
                                         "cannot trigger the gate"),
)
"""(marker, style, meaning) of the list's markers, for the help screen and the gate details."""


def score(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def duration(seconds: float | None) -> str:
    """``1:05`` or ``2:03:09``; an em dash when unknown."""
    if seconds is None:
        return "—"
    s = int(round(seconds))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def spark(values: Sequence[float | None], *, lo: float = 0.0, hi: float = 1.0) -> str:
    """A text sparkline on a fixed scale (composites are 0..1); a missing value is a dot."""
    out = []
    for v in values:
        if v is None:
            out.append("·")
            continue
        ratio = 0.0 if hi <= lo else min(1.0, max(0.0, (v - lo) / (hi - lo)))
        out.append(SPARK_BARS[min(len(SPARK_BARS) - 1, int(ratio * len(SPARK_BARS)))])
    return "".join(out)


def status_text(status: str) -> Text:
    return Text(status, style=STATUS_STYLE.get(status, ""))


def marker_text(marker: str | None) -> Text:
    """The safety marker of an encounter or scenario: "⚠ gate", "⚠ safety" or nothing."""
    return Text(f"⚠ {marker}", style=MARKER_STYLE.get(marker, "")) if marker else Text("")


def passed_text(enc: Encounter) -> Text:
    if enc.passed is None:
        return Text("")
    return Text("pass", style="green") if enc.passed else Text("FAIL", style="bold red")


@dataclass(frozen=True)
class EncounterFilter:
    """The list filter typed after ``/``: space-separated terms, all of which must match.

    ``status:running|done|error|n/a``, ``gate`` (marked ⚠ gate: counts for the safety gate),
    ``safety`` (has safety failures: ⚠ safety, and ⚠ gate when it has them), ``fail`` / ``pass`` (score card
    verdict), ``worst`` (worst of K), ``k:N``, ``review:pass|fail|none`` (your annotation), and any
    other word: a substring of the scenario id.
    """

    text: str = ""

    @property
    def terms(self) -> list[str]:
        return self.text.lower().split()

    def __bool__(self) -> bool:
        return bool(self.terms)

    def matches(self, enc: Encounter, verdict_of: Callable[[str], str | None] = lambda _t: None) -> bool:
        return all(self._term(term, enc, verdict_of) for term in self.terms)

    @staticmethod
    def _term(term: str, enc: Encounter, verdict_of: Callable[[str], str | None]) -> bool:
        if term.startswith("status:"):
            want = term[7:].replace("na", "n/a") if term[7:] in ("na", "n-a") else term[7:]
            return bool(want) and enc.status.startswith(want)
        if term.startswith("k:"):
            return term[2:].isdigit() and enc.k == int(term[2:])
        if term.startswith("review:"):
            want = term[7:]
            verdict = verdict_of(enc.trace_id)
            return (verdict is None) if want in ("none", "") else (verdict or "").startswith(want)
        if term == "gate":
            return enc.gate
        if term == "safety":
            return bool(enc.safety_failures)
        if term == "fail":
            return enc.passed is False
        if term == "pass":
            return enc.passed is True
        if term == "worst":
            return enc.worst
        return term in enc.scenario_id.lower()
