"""The caller agent: joins a real call as the candidate and plays pre-rendered answers.

It listens to the interviewer (pipecat's Silero VAD on the received 8 kHz audio, then
faster-whisper on each interviewer utterance) and answers only when the interviewer has asked
something: a question or a request, matched to the bank question it answers, or a silence
after a statement long enough to be a person's cue; small talk gets a short reply in the
profile's voice (:func:`render_replies`), a question it has no answer to gets a skip line, a
thank-you before the answers is waited out and a goodbye ends the call once the interviewer's
turn is over (the rules: :mod:`rig.calls.agent.brain`). It answers repeat requests again, counting
them; with a profile's ``interruption.barge_in_offset_s`` it starts that long before the
question's expected end; it records both sides with timestamps, logs every decision as an
event, and hangs up after the closing or at the time limit (saying why). When the far end
hangs up first, as the reference interviewer does the moment its goodbye ends, the utterance
it was cut short in is still transcribed and logged.

The first answer may start when the question's speech ends, before its words are transcribed
(when the utterance is as long as the question), so its delay is the profile's. Later answers
wait for the words, so their delay is at least the ASR's latency.

The agent is transport-neutral: it drives a :class:`CallerLink` (one per transport in
:mod:`rig.calls.transports`) with 20 ms frames of 8 kHz int16 PCM, on an absolute 20 ms clock.
Its decisions live in :class:`rig.calls.agent.brain.AgentBrain`, a plain state machine with no I/O
(unit-tested with text events); :func:`run_agent` is the real-time loop around it.

Barge-in needs the question's end before it happens: the agent estimates the question's
duration from its text at ``QUESTION_WPM`` words per minute
(:func:`rig.calls.agent.brain.expected_question_s`) and records the offset it actually achieved
(:attr:`AgentResult.response_delay_s`, the call row's ``response_delay_measured_s``, is
negative by that much).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from rig.audio import Audio
from rig.calls.agent.brain import CUE_SILENCE_S, AgentAnswer, AgentBrain
from rig.calls.agent.utterances import REPLY_TEXTS
from rig.calls.media import (
    FRAME_MS,
    SILENT_FRAME,
    PlayoutBuffer,
    audio_to_frames,
    frames_to_audio,
    now_s,
)

#: Audio kept before the VAD's speech onset in each interviewer utterance (five frames), so
#: its ASR hears the first word whole; the utterance's start is dated back by it too.
PRE_ROLL_MS = 100
#: an answer playing at the call's limit is finished, and the interviewer given this long
#: after it to close its turn, before the agent hangs up (s): rig's own limit must not cut
#: the graded answer and read as words the interviewer lost
ANSWER_TAIL_S = 2.0


@dataclass(frozen=True)
class AgentSettings:
    """How the agent listens.

    Attributes:
        stop_ms: silence after interviewer speech that ends an utterance (the
            ``silence_timeout_ms`` of its :class:`rig.vad.TurnTracker`; a response delay
            shorter than this is effectively this long).
        start_ms, confidence, min_volume: pipecat ``VADParams`` for the interviewer's audio.
        asr_model: the faster-whisper model that transcribes the interviewer.
        time_limit_s: the agent hangs up after this long on the call, or before a repeat of
            an answer already given that would run past it; an answer playing at the limit is
            finished first (and :data:`ANSWER_TAIL_S` after it).
        hangup_delay_s: wait after a goodbye before hanging up (speech in it cancels).
        cue_silence_s: silence after a greeting or statement (no question) that the agent
            takes as its cue to speak, and after a thank-you (all answers given) as the end.
        wait_event_s: with no question heard this long, a ``waiting`` event is logged.
        match_questions: match what the interviewer asks against the bank's question texts
            (the matching answer; none matching: the skip line); False: every question or
            request gets the next answer in the bank's order (an interviewer that asks its
            own questions or paraphrases them: ``--answer-in-order``).
    """
    stop_ms: int = 300
    start_ms: int = 100
    confidence: float = 0.6
    min_volume: float = 0.4
    asr_model: str = "whisper-tiny.en"
    time_limit_s: float = 120.0
    hangup_delay_s: float = 0.3
    cue_silence_s: float = CUE_SILENCE_S
    wait_event_s: float = 20.0
    match_questions: bool = True


class CallerLink(Protocol):
    """One transport's caller side. ``playout`` receives the interviewer's audio (8 kHz int16
    PCM); ``closed`` is set when the far end hangs up."""
    transport: str
    playout: PlayoutBuffer
    closed: asyncio.Event

    async def send_frame(self, pcm: bytes) -> None:
        """Send one 20 ms frame (320 bytes of 8 kHz int16 PCM)."""

    async def hangup(self) -> None:
        """End the call from the caller's side."""

    async def stats(self) -> dict:
        """``codec``, ``packet_unit`` (``rtp`` or ``media_message``: what the packet counts
        count), ``packets_sent``, ``packets_received``, ``packets_lost``, ``jitter_ms``."""


@dataclass(frozen=True)
class AnswerPlay:
    """One playing of an answer: ``start_epoch_s`` is when its first frame was sent (wall
    clock); ``origin_epoch_s`` is that minus the response delay (where the rendered answer's
    word timings start). ``asked_text`` is what the interviewer said to ask it (the agent's
    transcript of its turn, less a greeting or thank-you before the question; None when its
    words never arrived) and ``match_similarity`` that text's similarity to the bank's question
    (:func:`rig.calls.agent.question_match.match_question`, 0-1; None when not matched: the answers
    had no question text)."""
    question_id: str
    start_epoch_s: float
    origin_epoch_s: float
    repeat: bool
    asked_text: str | None = None
    match_similarity: float | None = None


@dataclass(frozen=True)
class AgentResult:
    """What the caller agent did and heard on one call.

    ``sent`` and ``received`` are the two sides as the agent's clock saw them, aligned frame by
    frame from ``t0_epoch_s`` (8 kHz float32). ``events`` are (seconds from t0, kind, detail).
    ``utterances`` are the interviewer's utterances as the agent's VAD heard them, (start,
    end) in seconds from t0, the end being where speech ended (the end-of-speech timer
    subtracted). ``underruns`` counts ticks at which the playout ran dry inside a talkspurt
    (:attr:`rig.calls.media.PlayoutBuffer.talkspurt_underruns`); ``empty_ticks`` every tick
    padded with silence (:attr:`~rig.calls.media.PlayoutBuffer.underruns`, which on a sender
    that sends nothing while silent includes all its silence).
    """
    t0_epoch_s: float
    duration_s: float
    plays: tuple[AnswerPlay, ...]
    repeat_requests_heard: int
    heard: tuple[tuple[float, str], ...]
    events: tuple[tuple[float, str, str], ...]
    hung_up_by: Literal["caller", "caller_time_limit", "interviewer"]
    sent: Audio
    received: Audio
    underruns: int
    utterances: tuple[tuple[float, float], ...] = ()
    empty_ticks: int | None = None

    @property
    def time_to_first_answer_s(self) -> float | None:
        """Seconds from connect to the first answer's first frame."""
        return self.plays[0].start_epoch_s - self.t0_epoch_s if self.plays else None

    @property
    def response_delay_s(self) -> float | None:
        """The first answer's first frame minus the end of the question it answers, both as
        the agent heard and did them (its own clock): what a profile's ``response_delay_s``
        sets (at least the end-of-speech timer, ``AgentSettings.stop_ms``). The question is
        the utterance the answer started inside (a barge-in: negative by the offset
        achieved), else the last one that ended before it. None without an answer or an
        utterance heard before it."""
        if not self.plays:
            return None
        start = self.plays[0].start_epoch_s - self.t0_epoch_s
        inside = [e for s, e in self.utterances if s <= start < e]
        if inside:
            return start - inside[0]
        before = [e for _, e in self.utterances if e <= start]
        return start - max(before) if before else None


def _transcriber(model: str) -> Callable[[Audio], str]:
    from rig.asr.whisper import AsrOptions
    from rig.calls.locks import transcribe_serial

    opts = AsrOptions(model=model)  # the model is shared by concurrent calls: serialised
    return lambda audio: transcribe_serial(audio, opts).text


def render_replies(synthesize: Callable[[str], Audio]) -> dict[str, Audio]:
    """The agent's short replies (:data:`rig.calls.agent.utterances.REPLY_TEXTS`: greeting, small
    talk, the skip line), each ``synthesize(text)`` (float32 mono, any rate). A reply that
    cannot be rendered (a recorded voice has no such recording) is left out: the agent then
    logs ``reply_unavailable`` and stays silent where it would have said it."""
    out: dict[str, Audio] = {}
    for key, text in REPLY_TEXTS.items():
        try:
            out[key] = synthesize(text)
        except Exception:
            continue
    return out


async def run_agent(link: CallerLink, answers: Sequence[AgentAnswer],
                    settings: AgentSettings = AgentSettings(),
                    transcribe: Callable[[Audio], str] | None = None,
                    replies: Mapping[str, Audio] | None = None,
                    questions: Mapping[str, str] | None = None) -> AgentResult:
    """Run the agent on a connected ``link`` until it or the far end hangs up.

    Args:
        link: a connected transport (media flowing).
        answers: the answers, in the planned order.
        settings: listening, cue and time-limit settings.
        transcribe: audio -> text for interviewer utterances (default: faster-whisper
            ``settings.asr_model``); runs in a worker thread.
        replies: reply kind -> audio (:func:`render_replies`); None: no replies (each one
            the agent would say is logged ``reply_unavailable``).
        questions: bank question id -> text to match what is asked against (default: the
            answers' ``question_text``).
    """
    from rig.vad import TurnParams, TurnTracker, silero_analyzer

    transcribe = transcribe or _transcriber(settings.asr_model)
    vad = silero_analyzer(8000, TurnParams(silence_timeout_ms=settings.stop_ms,
                                     start_ms=settings.start_ms, confidence=settings.confidence,
                                     min_volume=settings.min_volume))
    # the one turn tracker (rig.vad.tracker) on the agent's frame clock, with its pre-roll
    tracker = TurnTracker(settings.start_ms, settings.stop_ms, frame_ms=FRAME_MS,
                          pre_roll_ms=PRE_ROLL_MS)
    brain = AgentBrain(answers, settings.hangup_delay_s, settings.cue_silence_s,
                       settings.wait_event_s, questions if settings.match_questions else {})
    frames = {i: audio_to_frames(a.audio) for i, a in enumerate(answers)}
    reply_frames = {k: audio_to_frames(a) for k, a in (replies or {}).items()}
    dt = FRAME_MS / 1000
    loop = asyncio.get_running_loop()
    t0_mono, t0_epoch = loop.time(), now_s()
    sent: list[bytes] = []
    received: list[bytes] = []
    starts: list[tuple[float, float]] = []  # per answer play: start and origin (epoch s)
    heard: list[tuple[float, str]] = []
    pending: list[tuple[asyncio.Future, float, float]] = []
    utterances: list[tuple[float, float]] = []
    playing: list[bytes] = []
    seg_start_k = 0  # the frame the current utterance's audio starts at
    far_end_gone = False  # the far end hung up and everything it sent has been heard
    hung_up_by = "caller_time_limit"
    answer_end_s, extended = -math.inf, False  # the last answer's end on the call clock
    k = 0
    try:
        while True:
            t = k * dt
            delay = t0_mono + t - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            act = brain.tick(t) if not playing else brain.scheduled
            if (act is not None and act.kind in ("answer", "reply") and t >= act.at_s
                    and not playing and not far_end_gone):
                if act.kind == "answer" and act.index in brain.played and (
                        t + len(frames[act.index]) * dt > settings.time_limit_s):
                    # a repeat the call's limit would cut: the answer already given stays
                    # the graded one (rig's own limit must not read as words lost)
                    brain.log.append((t, "time_limit", "hanging up: the repeat of "
                                      f"{answers[act.index].question_id} would run past "
                                      f"the call's limit of {settings.time_limit_s:g} s"))
                    break
                if act.kind == "answer":
                    a = answers[act.index]
                    playing = list(frames[act.index])
                    answer_end_s = t + len(playing) * dt
                    start = t0_epoch + t
                    lead = 0.0 if a.barge_in_offset_s > 0 else a.response_delay_s
                    starts.append((start, start - lead))
                else:
                    playing = list(reply_frames.get(act.reply, ()))
                    if not playing:
                        brain.log.append((t, "reply_unavailable", act.reply))
                brain.started(act, t)
                if not playing:
                    brain.finished(t)
            if act is not None and act.kind == "hangup" and t >= act.at_s:
                hung_up_by = "caller"
                break
            was_playing = bool(playing)
            out = playing.pop(0) if playing else SILENT_FRAME
            if was_playing and not playing:
                brain.finished(t + dt)
            await link.send_frame(out)
            sent.append(out)
            inp = link.playout.read_frame()
            received.append(inp)
            if not far_end_gone and link.closed.is_set() and link.playout.buffered_s == 0:
                far_end_gone = True
                brain.log.append((t, "far_end_hung_up", ""))
                if tracker.speaking:
                    # the far end hung up as its last utterance ended (the reference
                    # interviewer closes the call right after its goodbye), before the
                    # end-of-speech timer ran out: that utterance is still transcribed and
                    # heard (the log shows the closing remark), though nothing more is played
                    utt = frames_to_audio(received[seg_start_k:k + 1])
                    utterances.append((seg_start_k * dt, t))
                    pending.append((loop.run_in_executor(None, transcribe, utt), t,
                                    seg_start_k * dt))
            for ev in [] if far_end_gone else await tracker.feed(vad, inp):
                if ev.kind == "speech_started":
                    seg_start_k = ev.frame
                    brain.on_speech_start(ev.t_s)
                elif ev.kind == "speech_stopped":
                    end_s = ev.t_s
                    utt = frames_to_audio(received[seg_start_k:k + 1])
                    utterances.append((seg_start_k * dt, end_s))
                    brain.on_utterance_end(end_s, seg_start_k * dt)
                    pending.append((loop.run_in_executor(None, transcribe, utt), end_s,
                                    seg_start_k * dt))
            for item in [p for p in pending if p[0].done()]:
                pending.remove(item)
                fut, end_s, start_s = item
                text = fut.result()
                heard.append((end_s, text))
                brain.on_utterance(text, end_s, start_s, now_s=t)
            if far_end_gone and not pending:
                hung_up_by = "interviewer"
                break
            if t >= settings.time_limit_s and t < answer_end_s + ANSWER_TAIL_S:
                if not extended:
                    extended = True
                    brain.log.append((t, "limit_extended", "an answer is playing: the call "
                                      f"goes on to its end and {ANSWER_TAIL_S:g} s after"))
            elif t >= settings.time_limit_s:
                left = len(answers) - len(set(brain.played))
                brain.log.append((t, "time_limit", f"hanging up at the call's limit of "
                                  f"{settings.time_limit_s:g} s: {left} answer(s) not given, "
                                  "no closing heard"))
                break
            k += 1
    finally:
        await vad.cleanup()
        if hung_up_by != "interviewer":
            await link.hangup()
    plays = tuple(AnswerPlay(info["question_id"], start, origin, info["repeat"],
                             info["asked_text"] or None, info["match_similarity"])
                  for (start, origin), info in zip(starts, brain.plays, strict=True))
    return AgentResult(t0_epoch, k * dt, plays, brain.repeat_requests, tuple(heard),
                       tuple(brain.log), hung_up_by, frames_to_audio(sent),
                       frames_to_audio(received), link.playout.talkspurt_underruns,
                       tuple(utterances), link.playout.underruns)
