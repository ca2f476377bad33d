"""Interaction metrics of a live call: latencies, overlaps and silences, from one side's timeline.

Timing. Every time is seconds since the call started (``CallClock``). The pacer knows exactly when this
side's speech starts and ends. The other side's speech is bounded by VAD events corrected for the VAD's
own confirmation delays (``start_secs`` / ``stop_secs``). A brain collects those in a ``Timeline`` as the
call runs (``TurnTiming`` per reply: when each stage of the reply happened); ``interaction_metrics``
derives the per-turn latencies, overlaps (who talked over whom and whether the other yielded) and
silence gaps from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from audio.live._settings import Side


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


@dataclass
class Timeline:
    """Everything ``interaction_metrics`` needs, collected by a brain as the call runs."""

    own: Side
    own_speech: list[list[float]] = field(default_factory=list)   # [start, end] pairs (end may be open)
    far_speech: list[list[float]] = field(default_factory=list)
    turns: list[TurnTiming] = field(default_factory=list)
    overlaps: list[dict[str, Any]] = field(default_factory=list)


def _pct(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def interaction_metrics(tl: Timeline, *, gap_threshold_s: float = 2.0) -> dict[str, Any]:
    """Latencies, overlaps and silence gaps of a call, from this side's point of view.

    * ``own_latency``: far end's speech end -> our first audible frame, per reply (voice to voice);
    * ``far_latency``: our speech end -> the far end's next speech start (VAD start minus start_secs);
    * ``overlaps``: intervals where both talk, with who started talking over whom and who yielded;
    * ``gaps``: intervals where nobody talks, between the first and the last speech of the call.
    """
    own = [(s, e) for s, e in tl.own_speech if e is not None]
    far = [(s, e) for s, e in tl.far_speech if e is not None]
    own_lat = [t.audible - t.heard_end for t in tl.turns
               if t.audible is not None and t.heard_end is not None and not t.interrupted]
    far_lat = []
    for _, end in own:
        nxt = [s for s, _ in far if s >= end - 0.05]
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
    stages: dict[str, list[float]] = {"vad_stop": [], "stt": [], "decide": [], "first_tts": [], "playout": []}
    for t in tl.turns:
        if t.interrupted:
            continue
        for name, a, b in (("vad_stop", t.heard_end, t.vad_stop), ("stt", t.vad_stop, t.transcribed),
                           ("decide", t.transcribed, t.decided), ("first_tts", t.decided, t.first_audio),
                           ("playout", t.first_audio, t.audible)):
            if a is not None and b is not None:
                stages[name].append(b - a)
    own_side = tl.own
    far_side = "agent" if own_side == "patient" else "patient"
    return {
        f"{own_side}_latency_s": own_lat,
        f"{far_side}_latency_s": far_lat,
        f"{own_side}_latency_p50_s": _pct(own_lat, 50),
        f"{own_side}_latency_p95_s": _pct(own_lat, 95),
        f"{far_side}_latency_p50_s": _pct(far_lat, 50),
        f"{far_side}_latency_p95_s": _pct(far_lat, 95),
        "stages_p50_s": {k: _pct(v, 50) for k, v in stages.items()},
        "overlaps": tl.overlaps,
        "interruptions": sum(1 for o in tl.overlaps if o.get("yielded")),
        "overlap_s": float(sum(o.get("duration_s", 0.0) for o in tl.overlaps)),
        "silence_gaps": len(gaps),
        "long_silences": len(long_gaps),
        "max_silence_s": max((b - a for a, b in gaps), default=0.0),
        "mean_silence_s": float(np.mean([b - a for a, b in gaps])) if gaps else 0.0,
        f"{own_side}_speech_s": float(sum(e - s for s, e in own)),
        f"{far_side}_speech_s": float(sum(e - s for s, e in far)),
        "timeline": [vars(t) for t in tl.turns],
    }
