"""What an in-process bot's frames say of the graded turn (:func:`inproc_result`), and the
bot's record written beside the call's recording (:func:`write_bot_record`)."""

from __future__ import annotations

from rig.calls.bots.record import BotRecord


def inproc_result(record: BotRecord, t0_epoch_s: float, answer_start_epoch_s: float,
                  question_id: str, call_id: str) -> dict:
    """The bot's own view of the graded turn, in the shape of an interviewer's result
    (:class:`rig.calls.interviewer.results.InterviewResult` as a dict, one question), for a bot that
    posts no result: what the rig saw in its frames, with no score.

    The turn is the bot's first user turn that began after the answer's first frame (less
    0.5 s: its VAD may start on the first syllable it heard): ``turn_speech_start_epoch_s``
    its ``UserStartedSpeakingFrame``, ``turn_close_epoch_s`` its ``UserStoppedSpeakingFrame``
    (the bot's end-of-turn decision: the end of audio when it made none). ``transcript`` is
    the bot's ``TranscriptionFrame`` texts from the answer's start until the bot next spoke
    after that turn (what it had heard of the answer when it replied). ``score`` is None and
    ``parse_status`` ``not_scored``: another score source grades it
    (:mod:`rig.calls.bots.record`'s ``ScoreSource``).

    Args:
        record: the call's :class:`BotRecord` (times: s from ``t0_epoch_s``).
        t0_epoch_s: the call clock's zero, epoch s.
        answer_start_epoch_s: the answer's first frame, epoch s.
    """
    from pipecat.frames.frames import UserStartedSpeakingFrame, UserStoppedSpeakingFrame

    a = answer_start_epoch_s - t0_epoch_s
    starts = [t for t, f in record.frames if isinstance(f, UserStartedSpeakingFrame)
              and t >= a - 0.5]
    start = starts[0] if starts else None
    stops = [t for t, f in record.frames if isinstance(f, UserStoppedSpeakingFrame)
             and start is not None and t >= start]
    end_s = record.frames[-1][0] if record.frames else a
    close = stops[0] if stops else end_s
    replies = [s.start_s for s in record.said if s.start_s is not None and s.start_s >= close]
    until = replies[0] if replies else float("inf")
    text = " ".join(x for t, x in record.heard if a - 0.5 <= t <= until)
    before = [s.end_s for s in record.said if s.end_s is not None and s.end_s <= a + 0.5]
    prompt_end = (max(before) if before else a) + t0_epoch_s
    q = {"question_id": question_id, "question_end_epoch_s": prompt_end,
         "prompt_end_epoch_s": prompt_end,
         "turn_speech_start_epoch_s": None if start is None else start + t0_epoch_s,
         "turn_close_epoch_s": close + t0_epoch_s,
         "turn_closed_by": ("no_speech" if start is None else
                            "silence_timeout" if stops else "end_of_audio"),
         "transcript": " ".join(text.split()), "asr_avg_logprob": None,
         "asr_no_speech_prob": None, "repeat_requests": 0, "attempts": (),
         "score": None, "parse_status": "not_scored", "scorer_raw": "",
         "scorer_reason": None, "scorer_error": None, "seed": 0, "t_asr_s": None,
         "t_scorer_s": None}
    return {"call_id": call_id, "transport": "pipecat_inproc", "status": "ok",
            "error": None, "questions": [q]}


def write_bot_record(path, record: BotRecord) -> None:
    """Write ``record`` as JSON beside the call's recording (atomically): ``said`` (start,
    end, text), ``heard`` ((t, text)), ``frames`` ((t, frame class name) for the frames
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
        "heard": list(record.heard), "frames": frames}, indent=1))
