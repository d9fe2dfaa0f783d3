"""What an interviewer bot did on a call, as the rig could see it (:class:`BotRecord`).

Filled by the transport: in-process (:mod:`rig.calls.transports.pipecat_inproc`) from the
bot's own pipecat frames; over WebRTC from the data-channel messages a pipecat bot sends (RTVI
``user-transcription``/``bot-transcription``...) and the rig's ASR of the received audio. Read
by the score sources (:mod:`rig.calls.bots.score_sources`) and written into the call's row and
recording log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from rig.audio import Audio

#: Where a call row's ``score`` came from (the row's ``score_source``):
#: ``interviewer`` the bot's own result (``POST /results``, or the reference interviewer);
#: ``extractor`` a user function read it from the bot's frames, messages or log;
#: ``rig_grade_bot_transcript`` the rig's scorer graded the candidate's turn as the bot's ASR
#: heard it; ``rig_grade_rig_asr`` the rig's scorer graded the rig's own ASR of the
#: bot-side audio (the bot's own input, in-process); ``rig_grade_sent_audio`` the rig's ASR of
#: the audio the rig sent, where the transport does not expose the bot's input (over WebRTC,
#: SIP, Twilio: not what the bot took in). The ``rig_grade_*`` are the rig's grade, never the
#: bot's own decision.
ScoreSource = Literal["interviewer", "extractor", "rig_grade_bot_transcript",
                      "rig_grade_rig_asr", "rig_grade_sent_audio"]


@dataclass(frozen=True)
class BotTurn:
    """One thing the bot said: ``start_s``/``end_s`` on the call clock (s from connect, None
    when unknown), ``text`` its words (the bot's TTS text in-process; the rig's ASR over a
    network transport)."""
    start_s: float | None
    end_s: float | None
    text: str


@dataclass(frozen=True)
class BotRecord:
    """What the bot said, heard and emitted on one call.

    Attributes:
        said: the bot's turns in order.
        heard: ``(t_s, text)``: the bot's own transcripts of the candidate, when the bot
            exposes them (in-process ``TranscriptionFrame``; RTVI ``user-transcription``
            messages over WebRTC); empty when it does not.
        context_heard: in-process only: ``(t_s, text)``: each user message that entered the
            bot's LLM context, at the time the ``LLMContextFrame`` carrying it was first seen
            (copied then: the context object itself holds the end-of-call state); empty when
            the bot has no LLM context (or exposes none).
        messages: JSON messages the bot emitted (data-channel/RTVI messages, function-call
            results, app messages), in order, each a dict.
        frames: in-process only: ``(t_s, frame)`` for every frame the rig's observer saw
            (pipecat ``Frame`` objects), for extractors; empty over a network transport.
        log_lines: the bot's log lines, when captured.
        received_audio: the interviewer-side audio (what the bot's input received), float32
            mono; None when the transport cannot see it.
    """
    said: tuple[BotTurn, ...] = ()
    heard: tuple[tuple[float, str], ...] = ()
    context_heard: tuple[tuple[float, str], ...] = ()
    messages: tuple[dict, ...] = ()
    frames: tuple[tuple[float, object], ...] = field(default=(), repr=False)
    log_lines: tuple[str, ...] = ()
    received_audio: Audio | None = field(default=None, repr=False)
