"""Interaction metrics of a live call: latencies, overlaps and silences, from one side's timeline.

Timing. Every time is seconds since the call started (``CallClock``). The pacer knows exactly when this
side's speech starts and ends. The other side's speech is bounded by VAD events corrected for the VAD's
own confirmation delays (``start_secs`` / ``stop_secs``). A brain collects those in a ``Timeline`` as the
call runs (``TurnTiming`` per reply: when each stage of the reply happened); ``interaction_metrics``
derives the per-turn latencies, overlaps (who talked over whom and whether the other yielded) and
silence gaps from it. Percentiles are ``sim.records.percentile`` (numpy's linear interpolation), the one
definition the run-level figures (``Summary.live``) and the dashboard use too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from audio.live._settings import Side
from sim.records import percentile

LONG_SILENCE_S = 2.0  # a silence gap at least this long counts as a long silence
REPLY_SLACK_S = 0.05  # the far end's speech may start this much before ours ends and still be its reply (VAD jitter)


@dataclass
class TurnTiming:
    """Stage times (call seconds) of one reply by this side; None where the stage did not happen."""

    turn: int
    heard_end: float | None = None       # the far end stopped speaking (VAD stop minus stop_secs)
    vad_stop: float | None = None        # VAD confirmed the stop
    transcribed: float | None = None     # the (last) transcript arrived
    decided: float | None = None         # the reply text was ready
    first_audio: float | None = None     # the first synthesized frame reached the pacer
    audible: float | None = None         # the pacer sent the first frame of the reply
    interrupted: bool = False

    def stages(self) -> list[tuple[str, float | None, float | None]]:
        """The reply's stages in order, as ``(name, start, end)``; a bound is None where it did not happen."""
        return [("vad_stop", self.heard_end, self.vad_stop), ("stt", self.vad_stop, self.transcribed),
                ("decide", self.transcribed, self.decided), ("first_tts", self.decided, self.first_audio),
                ("playout", self.first_audio, self.audible)]


STAGES = ("vad_stop", "stt", "decide", "first_tts", "playout")


@dataclass
class Timeline:
    """Everything ``interaction_metrics`` needs, collected by a brain as the call runs."""

    own: Side
    own_speech: list[list[float]] = field(default_factory=list)   # [start, end] pairs (end may be open)
    far_speech: list[list[float]] = field(default_factory=list)
    turns: list[TurnTiming] = field(default_factory=list)
    overlaps: list[dict[str, Any]] = field(default_factory=list)  # as Overlap's fields; the brain updates them


def other_side(side: Side) -> Side:
    """The side at the far end of the call from ``side``."""
    return "agent" if side == "patient" else "patient"


class Overlap(BaseModel):
    """Both sides talked at once: ``by`` started talking at ``at`` (call seconds) while the other was audible."""

    model_config = ConfigDict(frozen=True)

    at: float
    by: Side
    yielded: bool = Field(description="the side that was talking stopped")
    duration_s: float = Field(description="how long both talked (0.0 when nobody yielded)")


class InteractionMetrics(BaseModel):
    """How a live call went as an interaction, from one side's point of view (``own``).

    Latencies are voice to voice: ``<own>_latency_s`` from the far end's speech end to this side's first
    audible frame, per reply; ``<far>_latency_s`` from this side's speech end to the far end's next speech
    start. ``model_dump()`` is the dict a run records as ``ConversationResult.interaction``, keys in the order
    they have always been written (this side's first), ``call_s`` last and only when set.
    """

    model_config = ConfigDict(frozen=True)

    own: Side = Field(exclude=True, description="whose point of view: the side whose timeline this is")
    patient_latency_s: list[float]
    agent_latency_s: list[float]
    patient_latency_p50_s: float | None
    patient_latency_p95_s: float | None
    agent_latency_p50_s: float | None
    agent_latency_p95_s: float | None
    stages_p50_s: dict[str, float | None] = Field(description="median seconds of each stage of this side's replies")
    overlaps: list[Overlap]
    interruptions: int = Field(description="overlaps in which the talking side yielded")
    overlap_s: float
    silence_gaps: int = Field(description="intervals where nobody talks, between the first and last speech")
    long_silences: int
    max_silence_s: float
    mean_silence_s: float
    patient_speech_s: float
    agent_speech_s: float
    timeline: list[TurnTiming] = Field(description="this side's replies, stage by stage")
    call_s: float | None = Field(default=None, description="seconds of call the recording holds (set by the call)")

    @model_serializer(mode="wrap")
    def _in_written_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        own, far = self.own, other_side(self.own)
        order = (f"{own}_latency_s", f"{far}_latency_s", f"{own}_latency_p50_s", f"{own}_latency_p95_s",
                 f"{far}_latency_p50_s", f"{far}_latency_p95_s", "stages_p50_s", "overlaps", "interruptions",
                 "overlap_s", "silence_gaps", "long_silences", "max_silence_s", "mean_silence_s",
                 f"{own}_speech_s", f"{far}_speech_s", "timeline")
        out = {key: data[key] for key in order if key in data}
        if data.get("call_s") is not None:
            out["call_s"] = data["call_s"]
        return out


def interaction_metrics(tl: Timeline, *, gap_threshold_s: float = LONG_SILENCE_S) -> InteractionMetrics:
    """Latencies, overlaps and silence gaps of a call, from this side's point of view.

    Args:
        tl: the timeline one side's brain collected during the call; open speech intervals do not count.
        gap_threshold_s: a silence at least this long counts in ``long_silences``.

    Returns:
        The metrics: ``<own>_latency_s`` (far end's speech end -> our first audible frame, per reply that
        was not interrupted), ``<far>_latency_s`` (our speech end -> the far end's next speech start),
        ``overlaps`` (who started talking over whom and who yielded) and the silence ``gaps`` (intervals
        where nobody talks, between the first and the last speech of the call).
    """
    own = [(s, e) for s, e in tl.own_speech if e is not None]
    far = [(s, e) for s, e in tl.far_speech if e is not None]
    own_lat = [t.audible - t.heard_end for t in tl.turns
               if t.audible is not None and t.heard_end is not None and not t.interrupted]
    far_lat = []
    for _, end in own:
        nxt = [s for s, _ in far if s >= end - REPLY_SLACK_S]
        if nxt:
            far_lat.append(min(nxt) - end)
    spans = sorted(own + far)
    gaps: list[tuple[float, float]] = []
    if spans:
        reach = spans[0][1]
        for s, e in spans[1:]:
            if s > reach:
                gaps.append((reach, s))
            reach = max(reach, e)
    long_gaps = [g for g in gaps if g[1] - g[0] >= gap_threshold_s]
    stages: dict[str, list[float]] = {name: [] for name in STAGES}
    for t in tl.turns:
        if t.interrupted:
            continue
        for name, a, b in t.stages():
            if a is not None and b is not None:
                stages[name].append(b - a)
    own_side, far_side = tl.own, other_side(tl.own)
    return InteractionMetrics.model_validate({
        "own": own_side,
        f"{own_side}_latency_s": own_lat,
        f"{far_side}_latency_s": far_lat,
        f"{own_side}_latency_p50_s": percentile(own_lat, 50),
        f"{own_side}_latency_p95_s": percentile(own_lat, 95),
        f"{far_side}_latency_p50_s": percentile(far_lat, 50),
        f"{far_side}_latency_p95_s": percentile(far_lat, 95),
        "stages_p50_s": {k: percentile(v, 50) for k, v in stages.items()},
        "overlaps": tl.overlaps,
        "interruptions": sum(1 for o in tl.overlaps if o.get("yielded")),
        "overlap_s": float(sum(o.get("duration_s", 0.0) for o in tl.overlaps)),
        "silence_gaps": len(gaps),
        "long_silences": len(long_gaps),
        "max_silence_s": max((b - a for a, b in gaps), default=0.0),
        "mean_silence_s": float(np.mean([b - a for a, b in gaps])) if gaps else 0.0,
        f"{own_side}_speech_s": float(sum(e - s for s, e in own)),
        f"{far_side}_speech_s": float(sum(e - s for s, e in far)),
        "timeline": tl.turns,
    })
