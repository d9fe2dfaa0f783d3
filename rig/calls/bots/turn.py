"""What an in-process bot's frames say of the graded turn (:func:`inproc_result`), and the
bot's record written beside the call's recording (:func:`write_bot_record`)."""

from __future__ import annotations

from rig.calls.bots.record import BotRecord


def inproc_result(record: BotRecord, t0_epoch_s: float, answer_start_epoch_s: float,
                  question_id: str, call_id: str) -> dict:
    """The bot's own view of the graded turn, in the shape of an interviewer's result
    (:class:`rig.calls.interviewer.results.InterviewResult` as a dict, one question), for a bot that
    posts no result: what the rig saw in its frames, with no score.

    The turn is the answer's turn as the bot took it (:func:`rig.calls.bots.heard.bot_turn`):
    ``turn_speech_start_epoch_s`` its first ``UserStartedSpeakingFrame`` in the answer,
    ``turn_close_epoch_s`` where it took the turn (its last ``UserStoppedSpeakingFrame``
    before it next spoke, or its speech start when it spoke over its own open user turn; the
    end of its record when it did neither), ``heard_speech`` whether it raised a user-speech
    event at all. ``transcript`` is the bot's ``TranscriptionFrame`` texts from the answer's
    start until the bot next spoke. ``score`` is None and ``parse_status`` ``not_scored``:
    another score source grades it (:mod:`rig.calls.bots.record`'s ``ScoreSource``).

    Args:
        record: the call's :class:`BotRecord` (times: s from ``t0_epoch_s``).
        t0_epoch_s: the call clock's zero, epoch s.
        answer_start_epoch_s: the answer's first frame, epoch s.
    """
    from rig.calls.bots.heard import record_turn, turn_result

    a = answer_start_epoch_s - t0_epoch_s
    end_s = record.frames[-1][0] if record.frames else a
    turn = record_turn(record, a, max(end_s, a))
    before = [s.end_s for s in record.said if s.end_s is not None and s.end_s <= a + 0.5]
    prompt_end = (max(before) if before else a) + t0_epoch_s
    return {"call_id": call_id, "transport": "pipecat_inproc", "status": "ok",
            "error": None, "questions": [turn_result(turn, t0_epoch_s, prompt_end,
                                                     question_id)]}


def write_bot_record(path, record: BotRecord) -> None:
    """Write ``record`` as JSON beside the call's recording (atomically): ``said`` (start,
    end, text), ``heard`` ((t, text)), ``context_heard`` ((t, text): user messages that
    entered its LLM context), ``frames`` ((t, frame class name) for the frames
    that mark turns, transcripts, text and errors; not the periodic ``*SpeakingFrame`` s,
    metrics or transport messages). Times: s on the call clock."""
    import json

    from rig.paths import write_text_atomic

    noisy = ("UserSpeakingFrame", "BotSpeakingFrame", "MetricsFrame",
             "VADSpeechActivityFrame", "OutputTransportMessageUrgentFrame",
             "OutputTransportMessageFrame")
    frames = [(round(t, 3), type(f).__name__) for t, f in record.frames
              if type(f).__name__ not in noisy]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps({
        "said": [{"start_s": s.start_s, "end_s": s.end_s, "text": s.text}
                 for s in record.said],
        "heard": list(record.heard), "context_heard": list(record.context_heard),
        "frames": frames}, indent=1))
