"""What the interviewer bot heard of an answer, from its own events: did it raise a
user-speech event, where did it take the turn, what did its STT hear.

The bot's user-turn events come from its own frames in-process (``UserStartedSpeakingFrame``,
``UserStoppedSpeakingFrame`` and their subclasses, matched by class name so that this module
imports no pipecat) and, over WebRTC, from its RTVI messages (``user-started-speaking``,
``user-stopped-speaking``: pipecat's RTVI observer sends them by default,
``RTVIObserverParams.user_speaking_enabled``). :func:`user_turn_events` returns None when the
bot exposes neither (no frames, no RTVI message): what it heard is then unknown.

:func:`bot_turn` reads the graded answer's turn from those events and the bot's speaking
turns (:attr:`rig.calls.bots.record.BotRecord.said`):

- ``heard_speech``: whether the bot raised a user-speech start during the answer (from its
  first frame, less :data:`LEAD_S`, until the bot next spoke). False is the named failure
  "the interviewer did not hear the answer" (:data:`NOT_HEARD`): such a call gets no score.
- the turn's close is where the interviewer took the turn: its last user-stopped event before
  it next spoke (an answer with pauses is several user turns of the bot's; only the last one,
  the one it replied to, ends the answer), or its speech start when it spoke while its own
  user turn was still open (it talked over the candidate). With no reply at all: its last
  user-stopped event, else the end of the call. Words spoken after the close are lost words.
- ``transcript``: the bot's transcripts (``heard``) from the answer's start until it next spoke.
- ``context_text``: the user messages that entered the bot's LLM context in the same window
  (in-process: :attr:`rig.calls.bots.record.BotRecord.context_heard`): what its LLM was given
  as the candidate's turn, which may differ from its transcripts (an aggregator that drops or
  joins them). None when the bot exposes no LLM context.

All times are seconds on the call clock (the record's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rig.calls.bots.record import BotRecord

#: The row's error when the bot raised no user-speech event during the answer
NOT_HEARD = "the interviewer did not hear the answer"
#: A bot's VAD may start on the first syllable: its events from this long before the answer's
#: first frame count (s)
LEAD_S = 0.5
_STARTED = {"UserStartedSpeakingFrame", "user-started-speaking"}
_STOPPED = {"UserStoppedSpeakingFrame", "user-stopped-speaking"}


class InterviewerDidNotHear(RuntimeError):
    """The bot raised no user-speech event during the answer (:data:`NOT_HEARD`)."""


def _frame_kind(frame: object) -> str | None:
    names = {c.__name__ for c in type(frame).__mro__}
    if names & _STARTED:
        return "started"
    if names & _STOPPED:
        return "stopped"
    return None


def user_turn_events(record: BotRecord) -> tuple[tuple[float, str], ...] | None:
    """``(t_s, "started" | "stopped")`` of the bot's user turns, in time order: from its
    frames in-process, else from its RTVI messages; None when the bot exposes neither (what
    it heard is unknown)."""
    if record.frames:
        out = [(t, k) for t, f in record.frames if (k := _frame_kind(f))]
        return tuple(sorted(out, key=lambda e: e[0]))
    rtvi = [m for m in record.messages if isinstance(m, dict) and m.get("label") == "rtvi-ai"]
    if not rtvi:
        return None
    out = []
    for m in rtvi:
        typ, t = m.get("type"), m.get("t_s")
        if t is None:
            continue
        if typ in _STARTED:
            out.append((float(t), "started"))
        elif typ in _STOPPED:
            out.append((float(t), "stopped"))
    return tuple(sorted(out, key=lambda e: e[0]))


def words_unheard(record: BotRecord | None) -> str:
    """``": the interviewer heard the caller speak (N user turn(s), by its VAD) but its
    speech-to-text gave no words"`` when the bot's user-turn events show speech and it
    transcribed nothing (a bot deaf to words: say pipecat's WhisperSTTService given 8 kHz
    telephone audio as 16 kHz), else ``""``. From RTVI messages only "sent no transcript" is
    claimed (a bot may turn its ``user-transcription`` messages off)."""
    events = user_turn_events(record) if record is not None else None
    turns = sum(k == "started" for _, k in events or ())
    if not turns or record.heard:
        return ""
    what = ("its speech-to-text gave no words" if record.frames else
            "it sent no transcript of it (RTVI user-transcription)")
    return f": the interviewer heard the caller speak ({turns} user turn(s), by its VAD) but {what}"


def user_texts(messages: Sequence[object]) -> list[str]:
    """The text of each ``role: user`` message of an LLM context's messages (pipecat's
    ``LLMContext.get_messages()``: dicts whose ``content`` is a string or a list of parts,
    ``{"type": "text", "text": ...}``); other messages and non-text parts are left out."""
    out = []
    for m in messages:
        if not isinstance(m, dict) or m.get("role") != "user":
            continue
        c = m.get("content")
        if isinstance(c, list):
            c = " ".join(p.get("text", "") for p in c
                         if isinstance(p, dict) and p.get("type") == "text")
        if isinstance(c, str):
            out.append(" ".join(c.split()))
    return out


def new_user_messages(before: Sequence[str], now: Sequence[str]) -> list[str]:
    """The user messages in ``now`` after the longest prefix it shares with ``before`` (a
    context that grew: the new ones; one that was rewritten: from the first change)."""
    k = 0
    while k < min(len(before), len(now)) and before[k] == now[k]:
        k += 1
    return [x for x in now[k:] if x]


@dataclass(frozen=True)
class HeardTurn:
    """The graded answer's turn as the bot took it (see the module). ``heard_speech`` None:
    unknown (the bot exposes no user-turn events); ``speech_start_s`` its first user-speech
    start in the answer (None: none); ``close_s`` where it took the turn; ``closed_by``
    ``silence_timeout`` (its user-stopped event), ``interviewer_spoke`` (it spoke during its
    open user turn), ``end_of_audio`` or ``no_speech``; ``transcript`` its STT's words of the
    answer (None when it exposes no transcripts); ``context_text`` the user messages its LLM
    context took in the answer's turn (None when it exposes no LLM context)."""
    heard_speech: bool | None
    speech_start_s: float | None
    close_s: float
    closed_by: str
    transcript: str | None
    context_text: str | None = None


def bot_turn(events: Sequence[tuple[float, str]] | None, said_starts: Sequence[float | None],
             heard: Sequence[tuple[float, str]], answer_start_s: float, end_s: float,
             context: Sequence[tuple[float, str]] | None = None) -> HeardTurn:
    """The answer's turn as the bot took it.

    Args:
        events: :func:`user_turn_events` (None: unknown).
        said_starts: the start of each of the bot's speaking turns (None: unknown).
        heard: the bot's transcripts ``(t_s, text)``.
        answer_start_s: the answer's first frame.
        end_s: the call's end (or the end of what the bot's record covers).
        context: the user messages that entered the bot's LLM context ``(t_s, text)``
            (None: it exposes no LLM context).
    """
    a = answer_start_s - LEAD_S
    replies = sorted(t for t in said_starts if t is not None and t > answer_start_s)
    reply = replies[0] if replies else None
    until = reply if reply is not None else end_s
    text_until = reply if reply is not None else float("inf")
    texts = [x for t, x in heard if a <= t <= text_until]
    transcript = " ".join(" ".join(texts).split()) if heard or events is not None else None
    ctx = None if context is None else " ".join(
        " ".join(x for t, x in context if a <= t <= text_until).split())
    if events is None:
        return HeardTurn(None, None, until, "end_of_audio", transcript, ctx)
    inside = [(t, k) for t, k in events if a <= t <= until]
    first = next((i for i, (_, k) in enumerate(inside) if k == "started"), None)
    if first is None:
        return HeardTurn(False, None, until, "no_speech", transcript, ctx)
    start = inside[first][0]
    last_t, last_k = inside[-1]
    if last_k == "stopped":
        close, by = last_t, "silence_timeout"
    elif reply is not None:
        close, by = reply, "interviewer_spoke"
    else:
        close, by = end_s, "end_of_audio"
    return HeardTurn(True, start, close, by, transcript, ctx)


def record_turn(record: BotRecord, answer_start_s: float, end_s: float) -> HeardTurn:
    """:func:`bot_turn` on a :class:`BotRecord` (its LLM context: unknown when it pushed no
    ``LLMContextFrame``)."""
    has_context = bool(record.context_heard) or any(
        type(f).__name__ == "LLMContextFrame" for _, f in record.frames)
    return bot_turn(user_turn_events(record), [s.start_s for s in record.said],
                    record.heard, answer_start_s, end_s,
                    record.context_heard if has_context else None)


def turn_result(turn: HeardTurn, t0_epoch_s: float, prompt_end_epoch_s: float,
                question_id: str) -> dict:
    """``turn`` as one question of an interviewer's result (epoch times; no score:
    ``parse_status`` ``not_scored``), the shape the call's stages read."""
    return {"question_id": question_id, "question_end_epoch_s": prompt_end_epoch_s,
            "prompt_end_epoch_s": prompt_end_epoch_s,
            "turn_speech_start_epoch_s": (None if turn.speech_start_s is None
                                          else turn.speech_start_s + t0_epoch_s),
            "turn_close_epoch_s": turn.close_s + t0_epoch_s,
            "turn_closed_by": turn.closed_by, "transcript": turn.transcript or "",
            "asr_avg_logprob": None, "asr_no_speech_prob": None, "repeat_requests": 0,
            "attempts": (), "score": None, "parse_status": "not_scored", "scorer_raw": "",
            "scorer_reason": None, "scorer_error": None, "seed": 0, "t_asr_s": None,
            "t_scorer_s": None, "heard_speech": turn.heard_speech,
            "context_text": turn.context_text}
