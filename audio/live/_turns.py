"""Turn-taking of one side of a live call: when to reply, when to yield, when to barge in.

``TurnTaker`` is the brain's base: it collects what the far end said (VAD events and transcripts), replies
once the far end has stopped and everything it said is transcribed, and yields on overlap. Its
``CallLog`` collaborator does the bookkeeping: the timeline ``interaction_metrics`` reads, the
transcript (``Turn`` records) and the events for the event log.

End of turn (``LiveSettings.end_of_turn``). With ``vad`` the far end's turn is over when the VAD has heard
``vad_stop_s`` of silence and the segment is transcribed; a transcript that does not end in "?" waits ``turn_wait_s``
longer. With ``smart-turn`` the VAD stops after ``smart_turn_stop_s`` and Smart Turn v3.2 (``audio.live._end_of_turn``)
judges the far end's audio since its turn began (from half a second before its first speech, the last 8 s), on a
worker thread: asked once the far end has been quiet ``JUDGE_LEAD_S`` less than that stop (its frames' RMS; with a
stop of 0.15 s or more), so the verdict (about 40 ms) is mostly in when the VAD confirms the stop, and asked at the
stop if the far end spoke after it or the stop is shorter. Judged complete, the turn is over as soon as the transcript
is in, if it ends in "?" or the side has no question rule (``turn_wait_s`` 0); otherwise the ``vad`` path's timing
holds, counted from the end of the speech. A transcript that stops where a sentence cannot end ("Have you had any?",
``audio.live._end_of_turn.open_ending``) waits the longest of those times, ``vad_stop_s`` + ``turn_wait_s``.
Either way the reply waits (cancelled if the far end goes on talking).

Barge-in. With ``yield_on_overlap`` a side stops talking when the other starts while it speaks (its
speech is cut, queued audio dropped, and an ``InterruptionFrame`` tells the far end to flush playback);
with ``barge_in_after_s`` the patient cuts in when the agent has talked that long without a pause (``barge_in``:
an interjection that reveals nothing, or the patient brain's red flag). A far-end pause shorter than the ``vad``
path's stop (``vad_stop_s``) does not end its stretch of talk: the barge-in clock runs from the stretch's start, and
a side that cut in does not yield to the far end going on after a breath.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from pipecat.frames.frames import (
    Frame,
    InputTransportMessageFrame,
    InterruptionFrame,
    OutputTransportMessageUrgentFrame,
    TranscriptionFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from audio._pcm import int16_rms
from audio.live._end_of_turn import PRE_SPEECH_S, FarAudio, TurnVerdict, judge_turn, turn_hold_s
from audio.live._metrics import Timeline, TurnTiming, other_side
from audio.live._recording import CallClock
from audio.live._settings import LiveSettings, Side
from audio.live._speaking import FRAME_S, RealtimePacer, SpeakFrame
from audio.live._stt import QUIET_RMS, WhisperSegmentSTT
from sim.records import EventSink, LatencyMeasured, OverlapDetected, SpeechStarted, SpeechStopped, Turn, TurnRecorded

STILL_VOICED_S = 0.1  # the far end counts as still talking if its last voiced frame is at most this old
QUIET_WAIT_S = 30.0   # wait_until_quiet gives up after this long
JUDGE_LEAD_S = 0.05   # smart-turn: the model is asked this long before the VAD's stop, so its verdict is in by then,
EARLY_QUIET_S = 0.1   # ... if that leaves this much quiet at least (less: too many pauses inside words would ask it)


class CallLog:
    """The bookkeeping of one side of a call: what was said, when, and the events that say so.

    It keeps the ``Timeline`` that ``interaction_metrics`` reads (both sides' speech intervals, this side's
    replies stage by stage, the overlaps) and the transcript (``turns``: one ``Turn`` per message, the far
    end's consecutive segments extending one message), with each message's speech times and latencies in
    ``Turn.channel``, and sends the matching events to ``sink`` (speech started and stopped, overlap, turn
    recorded, latency measured). It decides nothing: ``TurnTaker`` tells it what happened.

    Attributes:
        timeline: what ``interaction_metrics`` reads.
        turns: the transcript of the call as this side heard and spoke it.
        replies: replies this side has made (interjections do not count).
        far_turn: the timing of the far end's latest turn, from its VAD stop until this side replies to it.
        reply: the timing of the reply being spoken (None for an interjection or the opening line).
        speaking: the message being spoken.
    """

    def __init__(self, *, own: Side, clock: CallClock, sink: EventSink, scenario_id: str, k: int) -> None:
        self.own: Side = own
        self.far: Side = other_side(own)
        self.clock = clock
        self.sink = sink
        self.scenario_id, self.k = scenario_id, k
        self.timeline = Timeline(own=own)
        self.turns: list[Turn] = []
        self.replies = 0
        self.far_turn: TurnTiming | None = None
        self.reply: TurnTiming | None = None
        self.speaking: Turn | None = None

    @property
    def deciding(self) -> bool:
        """The far end's latest turn has no reply decided yet."""
        return self.far_turn is not None and self.far_turn.decided is None

    # -- this side --
    def own_speech(self, start: bool, at: float, *, far_speaking: bool) -> None:
        """This side became audible (``start``) or silent at ``at``; audible while the far end talks is an overlap."""
        if start:
            self.timeline.own_speech.append([at, None])  # type: ignore[list-item]
            t = self.reply
            if t is not None and t.audible is None:
                t.audible = at
                self._latency(t)
            if self.speaking is not None:
                self.speaking.channel["speech_start_s"] = round(at, 3)
            if far_speaking:
                self.overlap(at, talker=self.own)
        elif self.timeline.own_speech and self.timeline.own_speech[-1][1] is None:
            self.timeline.own_speech[-1][1] = at
            if self.speaking is not None:
                self.speaking.channel["speech_end_s"] = round(at, 3)
        self.sink((SpeechStarted if start else SpeechStopped)(scenario_id=self.scenario_id, k=self.k,
                                                              speaker=self.own, at=at))

    def first_audio(self, turn: int) -> None:
        """The first synthesized audio of reply ``turn`` reached the pacer."""
        t = self.reply
        if t is not None and t.turn == turn and t.first_audio is None:
            t.first_audio = self.clock.now()

    def said(self, text: str, *, revealed: list[str], interjection: bool = False) -> Turn:
        """This side decided to say ``text``: a reply to the far end's latest turn, or an interjection."""
        self.replies += 0 if interjection else 1
        if self.far_turn is not None and not interjection:
            self.far_turn.turn = self.replies
            self.far_turn.decided = self.clock.now()
            self.timeline.turns.append(self.far_turn)
            self.reply, self.far_turn = self.far_turn, None
        else:
            self.reply = None
        turn = self.record(self.own, text, revealed=revealed)
        if self.reply is not None:
            turn.channel.update({"reply_to_s": round(self.reply.heard_end or 0.0, 3)})
        self.speaking = turn
        return turn

    def yielded(self) -> None:
        """This side stopped talking because the far end started: the last overlap was yielded."""
        if self.timeline.overlaps:
            last = self.timeline.overlaps[-1]
            last["yielded"] = True
            last["duration_s"] = round(max(0.0, self.clock.now() - last["at"]), 3)
        if self.reply is not None:
            self.reply.interrupted = True
        if self.speaking is not None:
            self.speaking.warnings.append("interrupted: stopped talking when the other side spoke")

    # -- the far end --
    def far_started(self, at: float) -> None:
        """The far end started speaking at ``at`` (the VAD's start, corrected for its confirmation delay)."""
        self.timeline.far_speech.append([at, None])  # type: ignore[list-item]
        self.sink(SpeechStarted(scenario_id=self.scenario_id, k=self.k, speaker=self.far, at=at))

    def far_stopped(self, at: float, *, vad_stop: float) -> None:
        """The far end stopped speaking at ``at``; the VAD confirmed it at ``vad_stop``. A new far turn begins."""
        if self.timeline.far_speech and self.timeline.far_speech[-1][1] is None:
            self.timeline.far_speech[-1][1] = at
        self.sink(SpeechStopped(scenario_id=self.scenario_id, k=self.k, speaker=self.far, at=at))
        self.far_turn = TurnTiming(turn=self.replies + 1, heard_end=at, vad_stop=vad_stop)

    def far_segment(self, text: str) -> None:
        """Record a transcribed segment of the far end with the speech interval it came from."""
        heard = self.record(self.far, text)
        if self.timeline.far_speech:
            start, end = self.timeline.far_speech[-1]
            heard.channel.setdefault("speech_start_s", round(start, 3))
            if end is not None:
                heard.channel["speech_end_s"] = round(end, 3)

    def far_transcribed(self, text: str) -> None:
        """A segment of the far end's turn was transcribed (``far_segment``), now."""
        self.far_segment(text)
        if self.far_turn is not None:
            self.far_turn.transcribed = self.clock.now()

    def far_turn_complete(self) -> None:
        """The far end's turn is over and transcribed: deciding the reply starts."""
        if self.far_turn is None:
            self.far_turn = TurnTiming(turn=self.replies + 1)
        self.far_turn.transcribed = self.far_turn.transcribed or self.clock.now()

    # -- both --
    def overlap(self, at: float, *, talker: Side) -> None:
        """``talker`` started at ``at`` while the other side was audible."""
        self.timeline.overlaps.append({"at": round(at, 3), "by": talker, "yielded": False, "duration_s": 0.0})
        self.sink(OverlapDetected(scenario_id=self.scenario_id, k=self.k, by=talker, at=at))

    def record(self, speaker: Side, text: str, *, revealed: list[str] | None = None) -> Turn:
        """Add a message; a far-side segment that follows another (no reply between) extends it."""
        now = time.time()
        last = self.turns[-1] if self.turns else None
        if speaker == self.far and last is not None and last.speaker == speaker:
            last.text = f"{last.text} {text}"
            last.ended_at = now
            turn = last
        else:
            turn = Turn(index=len(self.turns), speaker=speaker, text=text, started_at=now, ended_at=now,
                        revealed=revealed or [], agent_turn=None)
            self.turns.append(turn)
        text = turn.text
        self.sink(TurnRecorded(scenario_id=self.scenario_id, k=self.k, index=turn.index, speaker=speaker,
                               text=text, revealed=turn.revealed))
        return turn

    def _latency(self, t: TurnTiming) -> None:
        if t.heard_end is None or t.audible is None:
            return
        stages = {name: round(b - a, 4) for name, a, b in t.stages() if a is not None and b is not None}
        self.sink(LatencyMeasured(scenario_id=self.scenario_id, k=self.k, side=self.own, turn=t.turn,
                                  total_s=t.audible - t.heard_end, stages=stages))
        if self.speaking is not None:
            self.speaking.channel.update({"latency_s": round(t.audible - t.heard_end, 4)}
                                         | {f"{name}_s": v for name, v in stages.items()})


class TurnTaker(FrameProcessor):
    """Shared turn-taking: collect what the far end said, reply once it has stopped, yield on overlap.

    Subclasses implement ``decide_and_say(heard)`` (say something with ``say``, or nothing) and may override
    ``barge_in_line`` or ``barge_in``. Frames from the transport pass through untouched. The bookkeeping (timeline,
    transcript, events) is the ``log``'s.
    """

    MAX_BARGE_INS = 2

    def __init__(self, *, own: Side, clock: CallClock, settings: LiveSettings, sink: EventSink,
                 scenario_id: str, k: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.own: Side = own
        self.far: Side = other_side(own)
        self.clock = clock
        self.settings = settings
        self.log = CallLog(own=own, clock=clock, sink=sink, scenario_id=scenario_id, k=k)
        self.errors: list[str] = []  # what went wrong on this side (the agent failed), for the record
        self.pacer: RealtimePacer | None = None
        self.stt: WhisperSegmentSTT | None = None
        self._far_voiced_at = -1.0
        self._barge_ins = 0
        self._barged_this_turn = False
        self.ended = asyncio.Event()
        self.end_reason: str | None = None
        self._heard: list[str] = []
        self._far_speaking = False
        self._far_stop_at: float | None = None  # when the far end's speech last stopped
        self._far_stretch = 0.0  # when the far end's current stretch of talk began (pauses under vad_stop_s in it)
        self._reply_task: asyncio.Task[None] | None = None
        self._barge_task: asyncio.Task[None] | None = None
        self.far_audio = FarAudio()  # what the end-of-turn model hears (smart-turn only)
        self.verdicts: list[TurnVerdict] = []  # the end-of-turn model's verdicts this side acted on, in order
        self.holds: list[float] = []  # smart-turn: the silence each reply waited for after the far end's speech
        self._turn_start: float | None = None  # when the far end's current turn began (its first speech since a reply)
        self._verdict: asyncio.Task[TurnVerdict] | None = None  # the verdict on the far end's turn at its last stop
        self._early: asyncio.Task[TurnVerdict] | None = None  # one asked in the far end's pause, before its stop
        self._quiet_s = 0.0  # how long the far end has been quiet (its frames' RMS)

    @property
    def turns(self) -> list[Turn]:
        """The transcript of the call so far (the log's)."""
        return self.log.turns

    @property
    def timeline(self) -> Timeline:
        """What ``interaction_metrics`` reads (the log's)."""
        return self.log.timeline

    @property
    def replies(self) -> int:
        """Replies this side has made so far."""
        return self.log.replies

    # -- wiring --
    def attach(self, pacer: RealtimePacer, stt: WhisperSegmentSTT | None = None) -> None:
        self.pacer = pacer
        self.stt = stt

    def on_far_voice(self, at: float) -> None:
        """Called by the input tap for every voiced frame of the far end."""
        self._far_voiced_at = at

    def on_far_audio(self, pcm: bytes, rate: int) -> None:
        """Called by the input tap for every frame of the far end: kept for the end-of-turn model (smart-turn).

        The model is asked early, ``JUDGE_LEAD_S`` before the VAD's stop, once the far end has been quiet that long
        (``EARLY_QUIET_S`` at least) while the VAD says it speaks; voice after that makes the early verdict stale.
        """
        if self.settings.end_of_turn != "smart-turn":
            return
        self.far_audio.add(pcm, rate)
        if int16_rms(pcm) >= QUIET_RMS:
            self._quiet_s, self._early = 0.0, None  # a verdict asked before this voice is stale
            return
        self._quiet_s += len(pcm) / 2 / rate
        early = self.settings.smart_turn_stop_s - JUDGE_LEAD_S
        if self._far_speaking and self._early is None and early >= EARLY_QUIET_S and self._quiet_s >= early:
            self._early = self._ask_model()

    def _ask_model(self) -> asyncio.Task[TurnVerdict]:
        """The model's verdict on the far end's turn so far (from half a second before it began), on a worker thread."""
        now = self.clock.now()
        began = self._turn_start if self._turn_start is not None else now
        task = asyncio.create_task(judge_turn(self.far_audio.last(now - began + PRE_SPEECH_S)))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # a stale one's failure is nobody's
        return task

    @property
    def _transcribing(self) -> bool:
        return self.stt is not None and self.stt.pending > 0

    @property
    def far_quiet(self) -> bool:
        """The far end is not talking and nothing it said waits for its transcript (``PiperSpeaker.prepare``)."""
        return self._far_done

    @property
    def _far_done(self) -> bool:
        """The far end has stopped and everything it said has been transcribed."""
        return not self._far_speaking and not self._transcribing

    def on_own_speech(self, start: bool, at: float) -> None:
        """Called by the pacer when this side becomes audible or silent."""
        self.log.own_speech(start, at, far_speaking=self._far_speaking)

    def on_first_audio(self, turn: int) -> None:
        """Called by the speaker when the first audio of reply ``turn`` is ready."""
        self.log.first_audio(turn)

    def on_transcribed(self, text: str, started: float, ended: float) -> None:
        """Every transcription, even an empty one; a non-empty one also arrives as a TranscriptionFrame."""
        if not text and self._heard and self._far_done:
            self._schedule_reply()

    # -- frames --
    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, VADUserStartedSpeakingFrame):
            await self._far_started(frame.start_secs or self.settings.vad_start_s)
        elif isinstance(frame, VADUserStoppedSpeakingFrame):
            self._far_stopped(frame.stop_secs or self.settings.listening_stop_s)
        elif isinstance(frame, TranscriptionFrame):
            self._heard.append(frame.text)
            self.log.far_transcribed(frame.text)
            if self._far_done:
                self._schedule_reply()
            return
        elif isinstance(frame, InputTransportMessageFrame):
            message = frame.message if isinstance(frame.message, dict) else {}
            if message.get("type") == "hangup":
                await self.end_call("hangup")
            return
        await self.push_frame(frame, direction)

    async def _far_started(self, start_secs: float) -> None:
        at = self.clock.now() - start_secs
        self._far_speaking = True
        # a pause shorter than the vad path's stop (with smart-turn's short stop: a breath between sentences) does
        # not end the far end's stretch of talk: it neither talks over a side that cut in during it nor restarts
        # the barge-in clock
        continuing = self._far_stop_at is not None and at - self._far_stop_at < self.settings.vad_stop_s
        if not continuing:
            self._far_stretch = at
        if self._turn_start is None:
            self._turn_start = at
        self.log.far_started(at)
        if self._reply_task is not None and not self._reply_task.done() and self.log.deciding:
            self._reply_task.cancel()  # the far end went on talking: wait for the rest of its turn
        if self.pacer is not None and self.pacer.speaking:
            self.log.overlap(at, talker=self.far)
            if self.settings.yield_on_overlap and not (continuing and self._barged_this_turn):
                await self._yield()
        if self.settings.barge_in_after_s is not None and self.own == "patient" and not self._barged_this_turn:
            if self._barge_task is not None:
                self._barge_task.cancel()
            self._barge_task = asyncio.create_task(self._barge_in_later(
                max(0.0, self.settings.barge_in_after_s - (self.clock.now() - self._far_stretch))))

    def _far_stopped(self, stop_secs: float) -> None:
        now = self.clock.now()
        self._far_speaking = False
        self._far_stop_at = now - stop_secs
        if self._barge_task is not None:
            self._barge_task.cancel()
            self._barge_task = None
        self.log.far_stopped(now - stop_secs, vad_stop=now)
        if self.settings.end_of_turn == "smart-turn":  # the verdict asked in this pause, or one asked now
            self._verdict, self._early = self._early or self._ask_model(), None
        # the reply waits for this segment's transcript (see on_transcribed and the TranscriptionFrame)

    async def _yield(self) -> None:
        """Stop talking now: drop queued audio, tell the far end to flush what it has buffered."""
        if self.pacer is not None:
            self.pacer.clear()
        self.log.yielded()
        await self.push_frame(InterruptionFrame())  # downstream only: the far end's audio must still reach STT

    async def _barge_in_later(self, after: float) -> None:
        """Cut in if the far end is still talking ``after`` seconds into its speech.

        Once per turn, at most ``MAX_BARGE_INS`` a call; the overlap is recorded when this side becomes audible.
        """
        await asyncio.sleep(after)
        voiced_now = self.clock.now() - self._far_voiced_at <= STILL_VOICED_S
        if self._far_speaking and voiced_now and not self.ended.is_set() and self._barge_ins < self.MAX_BARGE_INS:
            self._barge_ins += 1
            self._barged_this_turn = True
            await self.barge_in()

    async def barge_in(self) -> Turn:
        """Cut in now: say ``barge_in_line`` as an interjection that reveals nothing; returns its message."""
        return await self.say(self.barge_in_line(), revealed=[], interjection=True)

    def barge_in_line(self) -> str:
        """What this side says when it cuts in."""
        return "Sorry to cut in, but it's really bad."

    def _schedule_reply(self) -> None:
        if self.ended.is_set():
            return
        if self._reply_task is None or self._reply_task.done():
            self._reply_task = asyncio.create_task(self._reply())

    async def _reply(self) -> None:
        if not self._heard:
            return
        if self.settings.end_of_turn == "smart-turn":
            await self._hold()  # cancelled if the far end goes on talking
        elif not self._heard[-1].rstrip().endswith("?") and self.settings.turn_wait_s > 0:
            await asyncio.sleep(self.settings.turn_wait_s)  # cancelled if the far end goes on talking
        if not self._far_done:  # more speech or a transcript is on its way; its arrival reschedules
            return
        self._barged_this_turn = False
        heard, began = " ".join(self._heard), self._turn_start
        self._heard, self._turn_start = [], None
        self.log.far_turn_complete()
        try:
            await self.decide_and_say(heard)
        except asyncio.CancelledError:
            self._heard.insert(0, heard)
            self._turn_start = began
            raise

    async def _hold(self) -> None:
        """Smart-turn: wait until the far end's turn is over by the model's verdict (``turn_hold_s``)."""
        verdict: TurnVerdict | None = None
        if self._verdict is not None:
            try:
                verdict = await asyncio.shield(self._verdict)
                self.verdicts.append(verdict)
            except Exception as exc:  # the model failed: the vad path's timing, and a line in the record
                if not any(e.startswith("end-of-turn model") for e in self.errors):
                    self.errors.append(f"end-of-turn model failed, the VAD timing was used: {type(exc).__name__}: "
                                       f"{exc}")
        hold = turn_hold_s(self.settings, heard=" ".join(self._heard), verdict=verdict)
        self.holds.append(hold)
        t = self.log.far_turn
        end = t.heard_end if t is not None and t.heard_end is not None else self.clock.now()
        await asyncio.sleep(max(0.0, end + hold - self.clock.now()))

    async def decide_and_say(self, heard: str) -> None:
        """Answer what the far end said in its turn (``heard``): ``say`` something, or nothing."""
        raise NotImplementedError

    async def say(self, text: str, *, revealed: list[str], interjection: bool = False) -> Turn:
        """Say ``text`` (a reply, or an ``interjection`` that replies to nothing); returns its message."""
        turn = self.log.said(text, revealed=revealed, interjection=interjection)
        await self.push_frame(SpeakFrame(text=text, turn=self.log.replies))
        return turn

    async def wait_until_quiet(self) -> None:
        """Until everything this side queued has been played out."""
        me = asyncio.current_task()
        for _ in range(int(QUIET_WAIT_S / FRAME_S)):
            replying = self._reply_task is not None and not self._reply_task.done() and self._reply_task is not me
            if self.pacer is None or (not self.pacer.speaking and self.pacer.pending_s == 0 and not replying):
                return
            await asyncio.sleep(FRAME_S)

    async def end_call(self, reason: str) -> None:
        """End the call for ``reason`` (once): tell the far end, and let the entry point tear down."""
        if self.ended.is_set():
            return
        self.end_reason = reason
        self.ended.set()
        await self.push_frame(OutputTransportMessageUrgentFrame(message={"type": "call_ended", "reason": reason}))

    async def notify(self, message: dict[str, Any]) -> None:
        """A JSON message to the far end (the web page shows transcripts and status from these)."""
        await self.push_frame(OutputTransportMessageUrgentFrame(message=message))
