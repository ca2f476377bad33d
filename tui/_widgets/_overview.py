"""The run overview: its text and the pane that shows it above a progress bar.

The text: the run's identity and state, counts, throughput/ETA, aggregate, gate badge, the calls' voice measures,
suites, warnings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.containers import Horizontal, VerticalScroll
from textual.css.query import NoMatches
from textual.widgets import ProgressBar, Static

from review import RunView
from sim.records import clean
from tui._format import duration, score

GATE_STYLE = {"PASSED": "bold black on green", "TRIGGERED": "bold white on red", "PENDING": "bold black on yellow",
              "NOTHING GATED": "bold black on yellow"}


def gate_badge(status: str) -> Text:
    """The safety gate's badge.

    Args:
        status: ``PASSED``, ``TRIGGERED``, ``PENDING`` or ``NOTHING GATED`` (no scenario of the run fed the gate).

    Returns:
        The status, padded, on its colour.
    """
    return Text(f" {status} ", style=GATE_STYLE.get(status, "bold"))


def voice_text(state: RunView) -> Text | None:
    """The calls' clinical voice measures from summary.json (a call or live run's ``voice_measures``), or None.

    Args:
        state: The followed run.

    Returns:
        One line: calls, the agent's latency, safety advice after a red flag, speakability and red-flag barge-ins.
    """
    vm = state.summary.voice_measures if state.summary is not None else None
    if vm is None:
        return None
    text = Text("voice ")
    text.append(f"{vm.calls} call{'s' if vm.calls != 1 else ''}", style="bold")
    if vm.agent_latency_p50_s is not None:
        p95 = f" p95 {vm.agent_latency_p95_s:.2f} s" if vm.agent_latency_p95_s is not None else ""
        text.append(f" · agent latency p50 {vm.agent_latency_p50_s:.2f} s{p95}")
    if vm.red_flag_calls:
        text.append(" · safety advice ")
        text.append(f"{vm.advice_given}/{vm.red_flag_calls}", style="bold" if vm.advice_given == vm.red_flag_calls
                    else "bold red")
        text.append(" red-flag calls" + (f" (p50 {vm.advice_p50_s:.1f} s after the red flag)"
                                         if vm.advice_p50_s is not None else ""))
    if vm.speakability is not None:
        text.append(f" · speakable {score(vm.speakability, 2)} ({vm.flagged_turns}/{vm.agent_turns} turns flagged)")
    if vm.red_flag_barge_ins:
        text.append(f" · red-flag barge-ins {vm.red_flag_barge_ins}: agent stopped {vm.barge_in_agent_stopped}, "
                    f"addressed {vm.barge_in_addressed}")
    return text


def _suites_text(state: RunView, suite_of: Callable[[str], str | None]) -> Text | None:
    """The per-suite means so far, on one line (None before any)."""
    suites = state.suite_means(suite_of)
    if not suites:
        return None
    st = Text("suites ")
    for i, (suite, mean) in enumerate(suites):
        if i:
            st.append(" · ")
        st.append(f"{suite} ")
        st.append(score(mean, 2), style="bold")
    return st


def overview_text(state: RunView, *, suite_of: Callable[[str], str | None], job_error: str | None = None,  # noqa: C901
                  job_running: bool = False, waiting: bool = False) -> tuple[Text, Group]:
    """The run overview: its head line and its body.

    Args:
        state: The followed run.
        suite_of: The suite of a scenario id (None when unknown), for the per-suite means so far.
        job_error: The error of the job the app runs, if it failed.
        job_running: Whether the app runs the run itself and it is still going.
        waiting: Whether run.json has not appeared yet.

    Returns:
        The head line (identity and state) and the body: counts, throughput/ETA, aggregate, gate
        badge, suites, warnings, the job's error.
    """
    head = Text()
    head.append(state.run_id, style="bold")
    if state.model:
        head.append(f"  model {state.model}")
    if state.channel:
        head.append(f"  channel {state.channel}")
    if state.k is not None:
        head.append(f"  K={state.k}")
    head.append("   ")
    if state.is_finished:
        interrupted = state.finished is not None and state.finished.interrupted
        head.append(" INTERRUPTED " if interrupted else " FINISHED ",
                    style="bold black on yellow" if interrupted else "bold black on green")
    elif waiting:
        head.append(" WAITING FOR THE RUN ", style="bold black on yellow")
    elif job_error:
        head.append(" STOPPED ", style="bold white on red")
    else:
        head.append(" RUNNING ", style="bold black on cyan")
    lines: list[RenderableType] = []

    total = state.total
    counts = Text()
    counts.append(f"{state.done}/{total if total is not None else '?'} encounters done", style="bold")
    counts.append(f" · {len(state.running)} running · {state.errors} error{'s' if state.errors != 1 else ''}")
    rate = state.throughput()
    counts.append(f" · throughput {rate:.1f}/min" if rate is not None else " · throughput —")
    if not state.is_finished:
        counts.append(f" · ETA {duration(state.eta())}")
    counts.append(f" · elapsed {duration(state.elapsed())}")
    lines.append(counts)

    agg = Text("aggregate ")
    agg.append(score(state.aggregate), style="bold")
    agg.append(" (final)" if state.aggregate_final else " (so far: mean of finished composites)", style="dim")
    agg.append("   safety gate ")
    agg.append_text(gate_badge(state.gate_status))
    reasons = state.gate_reasons
    if reasons:
        shown = ", ".join(list(reasons)[:4]) + (f" +{len(reasons) - 4}" if len(reasons) > 4 else "")
        agg.append(f" {shown}", style="red")
    elif state.gate_status == "PENDING":
        n = len(state.safety_failure_keys())
        if n:
            agg.append(f" {n} encounter{'s' if n != 1 else ''} with safety failures so far", style="yellow")
    lines.append(agg)

    lines += [line for line in (voice_text(state), _suites_text(state, suite_of)) if line is not None]
    if waiting:
        lines.append(Text(f"waiting for {state.run_dir.name}/run.json to appear…", style="yellow"))
    if job_running and not waiting:
        lines.append(Text("the run is going in this window; q twice stops it", style="dim"))
    if job_error:
        lines.append(Text(f"✖ the run failed: {clean(job_error)}", style="bold red"))  # may quote an endpoint
    if state.skipped:
        warn = Text(f"⚠ {state.skipped} malformed line{'s' if state.skipped != 1 else ''} skipped", style="yellow")
        for w in state.warnings[-2:]:
            warn.append(f"\n  {w}", style="yellow")
        lines.append(warn)
    elif state.warnings:
        lines.append(Text("\n".join(f"⚠ {w}" for w in state.warnings[-2:]), style="yellow"))
    return head, Group(*lines)


class Overview(VerticalScroll):
    """The run overview pane: a progress bar and the overview text."""

    DEFAULT_CSS = """
    Overview {
        height: auto;
        max-height: 12;
        border: round $primary;
        border-title-color: $text;
        padding: 0 1;
    }
    Overview:focus {
        border: round $accent;
    }
    Overview > Horizontal {
        height: 1;
    }
    Overview ProgressBar {
        width: auto;
        margin-right: 2;
    }
    Overview #ov-count {
        width: auto;
    }
    Overview #ov-text, Overview #ov-head {
        height: auto;
    }
    """

    def compose(self) -> Any:
        yield Static(id="ov-head")
        with Horizontal():
            yield ProgressBar(total=None, show_eta=False, show_percentage=True, id="ov-bar")
            yield Static(id="ov-count")
        yield Static(id="ov-text")

    def on_mount(self) -> None:
        self.border_title = "Run overview"
        self.query_one("#ov-bar", ProgressBar).display = False

    def show(self, state: RunView, text: tuple[Text, RenderableType]) -> None:
        """Show the progress of ``state`` and the overview text.

        Args:
            state: The followed run (its progress fills the bar).
            text: The head line and body (``overview_text``).
        """
        try:
            self._show(state, text)
        except NoMatches:  # a poll that lands while the overview is composed or removed (a screen switch)
            return

    def _show(self, state: RunView, text: tuple[Text, RenderableType]) -> None:
        bar = self.query_one("#ov-bar", ProgressBar)
        total = state.total
        if total:
            bar.display = True
            bar.update(total=total, progress=min(state.done, total))
            self.query_one("#ov-count", Static).update(f"{state.done}/{total}")
        else:
            bar.display = False
            self.query_one("#ov-count", Static).update("")
        self.query_one("#ov-head", Static).update(text[0])
        self.query_one("#ov-text", Static).update(text[1])
