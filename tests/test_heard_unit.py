"""What the interviewer heard (issue 27): the bot's user-turn events from its frames or its
RTVI messages, the turn it took (no false truncation at an answer's pause), and a bot that
raised no user-speech event failing the call as "the interviewer did not hear the answer",
never scored. Fakes only: frames are stand-in classes named as pipecat's, the call is
:mod:`tests.test_score_sources_unit`'s fake WebRTC call."""

from __future__ import annotations

import json

import pytest
from test_score_sources_unit import BOT_HEARD, bot_record, run

from rig.calls.bots.heard import (
    NOT_HEARD,
    bot_turn,
    new_user_messages,
    record_turn,
    user_texts,
    user_turn_events,
    words_unheard,
)
from rig.calls.bots.record import BotRecord, BotTurn

pytestmark = pytest.mark.unit


class UserStartedSpeakingFrame:  # named as pipecat's: matched by class name
    pass


class UserStoppedSpeakingFrame:
    pass


class VADUserStoppedSpeakingFrame:  # the raw VAD's: not a user-turn event
    pass


class SubclassStarted(UserStartedSpeakingFrame):  # a subclass counts
    pass


def rtvi(t: float, typ: str, **data) -> dict:
    return {"label": "rtvi-ai", "type": typ, "data": data, "t_s": t}


def test_events_from_frames_from_rtvi_or_unknown():
    rec = BotRecord(frames=((2.0, SubclassStarted()), (3.0, VADUserStoppedSpeakingFrame()),
                            (4.0, UserStoppedSpeakingFrame()), (5.0, object())))
    assert user_turn_events(rec) == ((2.0, "started"), (4.0, "stopped"))
    msgs = BotRecord(messages=(rtvi(1.0, "bot-ready"), rtvi(6.0, "user-started-speaking"),
                               rtvi(9.0, "user-stopped-speaking"), {"other": 1, "t_s": 9.5}))
    assert user_turn_events(msgs) == ((6.0, "started"), (9.0, "stopped"))
    # RTVI on but no user event: known, and empty (a deaf bot)
    assert user_turn_events(BotRecord(messages=(rtvi(1.0, "bot-started-speaking"),))) == ()
    # nothing from the bot (RTVI off, no frames): unknown
    assert user_turn_events(BotRecord(messages=({"type": "x", "t_s": 1.0},))) is None


def test_speech_heard_but_no_words_is_named():
    """pipecat's scaffolded Twilio bot: its VAD took the caller's turns, its STT (Whisper
    given 8 kHz audio as 16 kHz) gave no words."""
    turns = ((1.0, UserStartedSpeakingFrame()), (2.0, UserStoppedSpeakingFrame()),
             (5.0, UserStartedSpeakingFrame()))
    note = words_unheard(BotRecord(frames=turns))
    assert note.startswith(": the interviewer heard the caller speak (2 user turn(s)")
    assert "gave no words" in note
    assert words_unheard(BotRecord(frames=turns, heard=((2.5, "hello"),))) == ""
    assert words_unheard(BotRecord(frames=((1.0, object()),))) == ""  # no speech events
    assert words_unheard(BotRecord()) == "" and words_unheard(None) == ""  # unknown
    # from RTVI: speech events but no user-transcription message: only that is claimed
    msgs = BotRecord(messages=(rtvi(1.0, "user-started-speaking"),
                               rtvi(2.0, "user-stopped-speaking")))
    assert words_unheard(msgs).endswith("but it sent no transcript of it (RTVI "
                                        "user-transcription)")


def test_the_turn_ends_where_the_bot_took_it_not_at_the_answers_first_pause():
    # answer from 5 s; the bot's user turn stops at a 1.5 s pause (9 s), restarts, stops at
    # 15 s; the bot speaks at 17 s: the close is 15 s, the pause is no end
    ev = ((5.3, "started"), (9.0, "stopped"), (10.6, "started"), (15.0, "stopped"),
          (18.0, "started"))  # talk after its reply: not in this answer's turn
    heard = ((9.1, "first half"), (15.2, "second half"), (20.0, "later"))
    t = bot_turn(ev, [0.0, 17.0], heard, 5.0, 30.0)
    assert (t.heard_speech, t.speech_start_s, t.close_s, t.closed_by) == (
        True, 5.3, 15.0, "silence_timeout")
    assert t.transcript == "first half second half"


def test_a_bot_that_speaks_over_its_open_user_turn_closes_it_there():
    t = bot_turn(((5.3, "started"),), [17.0], (), 5.0, 30.0)
    assert (t.close_s, t.closed_by) == (17.0, "interviewer_spoke")
    t = bot_turn(((5.3, "started"),), [], (), 5.0, 30.0)  # never spoke again
    assert (t.close_s, t.closed_by) == (30.0, "end_of_audio")


def test_no_user_speech_event_in_the_answer_is_not_heard_and_unknown_is_unknown():
    # a user turn of the greeting's echo, before the answer: not the answer's
    deaf = bot_turn(((1.0, "started"), (2.0, "stopped")), [0.0, 17.0], (), 5.0, 30.0)
    assert deaf.heard_speech is False and deaf.closed_by == "no_speech"
    assert deaf.close_s == 17.0 and deaf.transcript == ""
    unknown = bot_turn(None, [17.0], (), 5.0, 30.0)
    assert unknown.heard_speech is None and unknown.transcript is None
    rec = BotRecord(said=(BotTurn(0.0, 4.0, "Q?"),), frames=((9.0, object()),))
    assert record_turn(rec, 5.0, 9.0).heard_speech is False


# --- the LLM context as a source of what the bot heard (item 1) -------------------------------
class LLMContextFrame:  # named as pipecat's
    pass


def test_user_texts_of_an_llm_context():
    msgs = [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": "  I  led the   team. "},
            {"role": "assistant", "content": "Okay."},
            {"role": "user", "content": [{"type": "text", "text": "Then"},
                                         {"type": "image_url", "image_url": "x"},
                                         {"type": "text", "text": "we shipped."}]},
            "not a dict", {"role": "user", "content": None}]
    assert user_texts(msgs) == ["I led the team.", "Then we shipped."]


def test_new_user_messages_after_the_shared_prefix():
    assert new_user_messages([], ["a"]) == ["a"]
    assert new_user_messages(["a"], ["a", "b", "c"]) == ["b", "c"]
    assert new_user_messages(["a", "b"], ["a", "b"]) == []
    assert new_user_messages(["a", "b"], ["a", "B"]) == ["B"]  # rewritten from the change
    assert new_user_messages(["a"], ["a", ""]) == []


def test_the_context_text_is_the_answers_turn_and_unknown_without_a_context():
    ev = ((5.3, "started"), (15.0, "stopped"))
    ctx = ((2.0, "the greeting's echo"), (15.4, "my answer"), (15.5, "in two parts"),
           (25.0, "the next answer"))
    t = bot_turn(ev, [0.0, 17.0], (), 5.0, 30.0, ctx)
    assert t.context_text == "my answer in two parts"
    assert bot_turn(ev, [0.0, 17.0], (), 5.0, 30.0).context_text is None
    assert bot_turn(ev, [0.0, 17.0], (), 5.0, 30.0, ()).context_text == ""
    # from a record: none in the window but a context frame seen: "" (known, empty)
    rec = BotRecord(said=(BotTurn(0.0, 4.0, "Q?"), BotTurn(17.0, 18.0, "Okay.")),
                    frames=((5.3, UserStartedSpeakingFrame()),
                            (15.0, UserStoppedSpeakingFrame()), (1.0, LLMContextFrame())))
    assert record_turn(rec, 5.0, 30.0).context_text == ""
    rec = BotRecord(said=rec.said, frames=rec.frames[:2])
    assert record_turn(rec, 5.0, 30.0).context_text is None
    rec = BotRecord(said=rec.said, frames=rec.frames, context_heard=((15.4, "my answer"),))
    assert record_turn(rec, 5.0, 30.0).context_text == "my answer"


class _Context:  # an LLMContext stand-in: its messages change after each push, as a bot's do
    def __init__(self) -> None:
        self.messages: list[dict] = [{"role": "system", "content": "x"}]

    def get_messages(self) -> list[dict]:
        return self.messages


def test_the_inproc_link_copies_the_context_when_its_frame_passes():
    """The frame holds the context object, which ends the call holding every message: the
    link keeps what was new at each push, with that push's time."""
    from rig.calls.bots.app import BotApp
    from rig.calls.transports.pipecat_inproc import PipecatInprocLink

    link = PipecatInprocLink(BotApp("pipecat:b.py:f", None, "f", "create", lambda t: None), {})
    ctx = _Context()
    ctx.messages.append({"role": "user", "content": "first answer"})
    link._snapshot_context(3.0, ctx)
    ctx.messages += [{"role": "assistant", "content": "Okay."},
                     {"role": "user", "content": "second answer"}]
    link._snapshot_context(9.0, ctx)
    link._snapshot_context(9.5, object())  # not a context: nothing read, nothing raised
    ctx.messages.append({"role": "user", "content": "added after the call"})
    assert link.bot_record().context_heard == ((3.0, "first answer"), (9.0, "second answer"))


# --- through the campaign: a fake WebRTC call with the bot's RTVI messages --------------------
def rtvi_record(user_events: bool, heard: bool = True) -> BotRecord:
    """:func:`tests.test_score_sources_unit.bot_record` (answer from 5.5 s, the bot's
    goodbye at 14 s) with RTVI messages: its user turn 5.8-8.0 s, a pause, 8.9-12.5 s."""
    base = bot_record(heard=heard, score_message=False)
    msgs = [rtvi(0.0, "bot-ready"), rtvi(0.1, "bot-started-speaking")]
    if user_events:
        msgs += [rtvi(5.8, "user-started-speaking"), rtvi(8.0, "user-stopped-speaking"),
                 rtvi(8.9, "user-started-speaking"), rtvi(12.5, "user-stopped-speaking")]
    return BotRecord(said=base.said, heard=base.heard, messages=tuple(msgs))


def test_a_webrtc_bot_that_heard_is_graded_to_its_own_turn_end(tmp_path):
    row, asr = run(tmp_path, rtvi_record(True, heard=False), "rig",
                   interviewer_url="http://127.0.0.1:9")
    assert row["status"] == "ok", row["error"]
    assert row["interviewer_heard_speech"] is True
    # its last user-stopped event before it spoke (12.5 s) less the origin (5 s); the pause
    # at 8 s is no end of the turn
    assert row["turn_close_s"] == pytest.approx(7.5)
    assert row["turn_closed_by"] == "silence_timeout"
    assert row["score_source"] == "rig_grade_sent_audio" and row["score"] is not None
    (audio,) = asr  # the rig's ASR hears the answer up to the bot's turn, not the call's end
    assert audio.duration_s == pytest.approx(7.5)


def test_a_webrtc_bot_transcript_fills_interviewer_heard(tmp_path):
    row, asr = run(tmp_path, rtvi_record(True), "rig", interviewer_url="http://127.0.0.1:9")
    assert row["interviewer_heard"] == BOT_HEARD and row["transcript"] == BOT_HEARD
    assert row["score_source"] == "rig_grade_bot_transcript" and not asr


def test_a_deaf_bot_fails_the_call_never_scored_its_words_kept(tmp_path):
    row, asr = run(tmp_path, rtvi_record(False, heard=False), "rig",
                   interviewer_url="http://127.0.0.1:9")
    assert row["status"] == "error" and NOT_HEARD in row["error"]
    assert row["score"] is None and row["score_source"] is None and not asr
    assert row["interviewer_heard_speech"] is False
    assert "Goodbye" in row["interviewer_said"]  # what it said, in the failed row too


def test_without_user_events_what_the_bot_heard_is_unknown_and_audio_stops_after_answer(
        tmp_path):
    from rig.calls.run.score import AFTER_ANSWER_S

    full = bot_record(heard=False)  # the bot never speaks again: the span runs to the end
    row, asr = run(tmp_path, BotRecord(said=full.said[:2]), "rig")
    assert row["status"] == "ok" and row["interviewer_heard_speech"] is None
    (audio,) = asr
    # the answer's render (its delay, its words, 1 s) and AFTER_ANSWER_S, not the 15 s to the
    # call's end (trailing silence, where Whisper invents words)
    answer_s = row["audio_duration_s"]
    assert audio.duration_s == pytest.approx(answer_s + AFTER_ANSWER_S, abs=0.01)
    assert audio.duration_s < 20.0 - 5.0


def test_report_says_the_real_reason_of_a_failed_call(tmp_path):
    run(tmp_path, rtvi_record(False, heard=False), "rig", interviewer_url="http://127.0.0.1:9")
    page = (tmp_path / "c" / "report.html").read_text()
    assert "calls left out: the scorer reply did not parse" not in page
    # the call's stage (the real call runs in the channel stage) and its reason
    assert f"1 of 1 calls left out: 1 channel: {NOT_HEARD}" in page
    summary = json.loads((tmp_path / "c" / "summary.json").read_text())
    assert NOT_HEARD in json.dumps(summary)
    # the call's recording is linked: the report does not also say no audio was recorded
    assert "recordings/" in page and ".wav" in page
    assert "No call audio was recorded" not in page
    assert "The bot raised no user-speech event during the answer" in page


def test_a_call_the_agent_never_answered_keeps_what_the_bot_said(tmp_path):
    """The bot's words are in the failed row (issue 27: ``interviewer_said`` was null in
    failed calls though the bot's messages carried its text)."""
    from dataclasses import replace

    from test_score_sources_unit import fake_caller, spec, stages

    from rig.campaign.runner import run_campaign

    out = tmp_path / "c"
    with fake_caller(out, rtvi_record(False), "rig",
                     interviewer_url="http://127.0.0.1:9") as caller:
        place = caller._place

        async def no_answer(base, params, answer, replies=None):
            res, stats = await place(base, params, answer, replies)
            return replace(res, plays=()), stats

        caller._place = no_answer
        run_campaign(spec(out), stages=stages([]), progress=False, call_fn=caller)
    (row,) = [json.loads(x) for x in (out / "calls.jsonl").read_text().splitlines()]
    assert row["status"] == "error" and "never answered" in row["error"]
    assert row["interviewer_said"].startswith("Hello, thanks for joining.")
    assert "Goodbye" in row["interviewer_said"] and row["score"] is None
