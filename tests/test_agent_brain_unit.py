"""The caller agent's decisions (rig.calls.agent.brain.AgentBrain) driven by text events: when it
answers, replies, waits and hangs up in an unscripted conversation, and every decision logged.

Events are what the real-time loop feeds it: ``on_speech_start(t)``, ``on_utterance_end(end,
start)`` (VAD), ``on_utterance(text, end, start)`` (the transcript, later), ``tick(t)``.
"""

from __future__ import annotations

import numpy as np
import pytest

from rig.audio import Audio
from rig.calls.agent.brain import AgentAnswer, AgentBrain, expected_question_s
from rig.calls.agent.utterances import classify_utterance

pytestmark = pytest.mark.unit

SILENCE = Audio(np.zeros(8000, np.float32), 8000)
Q01 = ("Tell me about a time you disagreed with a coworker about how to get something done. "
       "What happened, and how did you handle it?")
Q_HOURS = "How many hours a week can you work, and on which days?"


def answer(qid="q1", delay=0.5, barge=0.0, expected=None, text=""):
    return AgentAnswer(qid, SILENCE, delay, barge, expected, text)


def q01(delay=0.5):
    return answer("q01_conflict", delay, expected=expected_question_s(Q01), text=Q01)


def kinds(b: AgentBrain) -> list[str]:
    return [k for _, k, _ in b.log]


def hear(b: AgentBrain, text: str, start: float, end: float):
    """One interviewer utterance: speech start, VAD end, then its transcript."""
    b.on_speech_start(start)
    b.on_utterance_end(end, start)
    return b.on_utterance(text, end, start)


# --- classification ---------------------------------------------------------------------------
@pytest.mark.parametrize("text,kind", [
    ("Sorry, I didn't catch that. Could you repeat your answer, please?", "repeat_request"),
    ("Could you repeat that?", "repeat_request"),
    ("Can you say that again?", "repeat_request"),
    ("Thank you. That's all the questions I have. Goodbye.", "closing"),
    (Q01, "question"),
    ("Thanks. What was your most recent job?", "question"),
    ("Hello! How can I assist you today?", "small_talk"),
    ("How are you?", "small_talk"),
    ("Tell me about a time you caught an error before it went out.", "request"),
    ("Please walk me through a difficult bug you fixed.", "request"),
    ("Good day. Thank you for your time.", "greeting"),
    ("Thank you for your time. Before we proceed, could you tell me your name?", "question"),
    ("Thank you for sharing that.", "soft_closing"),
    ("I'm the hiring manager for this role.", "statement"),
    ("Please hold on a moment.", "hold"),
    ("Great! Are you ready to begin?", "small_talk"),
    ("Thank you, that is all for today.", "closing"),
])
def test_turns_are_classified_by_their_last_sentence(text, kind):
    assert classify_utterance(text) == kind


# --- answering only when asked ----------------------------------------------------------------
def test_a_greeting_then_the_question_is_answered_after_the_question_only():
    b = AgentBrain([q01()])
    # a short greeting: no tentative start (far shorter than the question), no answer
    assert hear(b, "Hello, and welcome to the interview.", 0.5, 2.0).kind == "none"
    assert b.scheduled is None and "waiting_for_cue" in kinds(b)
    b.tick(3.0)  # under the cue silence
    assert b.scheduled is None
    act = hear(b, Q01, 3.2, 9.0)
    assert act.kind == "answer" and act.index == 0 and act.at_s == pytest.approx(9.5)
    b.started(act, 9.5)
    assert b.plays[0]["asked_text"] == Q01  # the greeting before it was not asking
    assert b.plays[0]["match_similarity"] > 0.95


def test_small_talk_gets_a_short_reply_not_the_answer():
    b = AgentBrain([q01()])
    act = hear(b, "Hello! How can I assist you today?", 0.5, 2.5)
    assert act.kind == "reply" and act.reply == "greeting" and act.at_s == pytest.approx(3.0)
    b.started(act, 3.0)
    b.finished(5.0)
    act = hear(b, "I'm doing well. How are you?", 6.0, 7.5)
    assert act.kind == "reply" and act.reply == "wellbeing"
    b.started(act, 8.0)
    b.finished(9.0)
    act = hear(b, "Great. " + Q01, 10.0, 17.0)
    assert act.kind == "answer" and act.index == 0
    assert "reply_started" in kinds(b) and not b.played


def test_a_multi_sentence_question_is_one_turn():
    b = AgentBrain([q01()])
    act = hear(b, "This is a teamwork role. " + Q01 + " Take your time.", 0.6, 9.0)
    # a long utterance: the first answer may start tentatively, confirmed by the transcript
    assert act.kind == "answer" and act.at_s == pytest.approx(9.5)
    assert "tentative_answer" in kinds(b) and "tentative_confirmed" in kinds(b)


def test_a_question_with_a_pause_inside_waits_for_its_end():
    b = AgentBrain([q01(delay=0.5)])
    part1 = "Tell me about a time you disagreed with a coworker."
    b.on_speech_start(0.5)
    b.on_utterance_end(3.0, 0.5)  # short of the whole question: no tentative start
    assert b.scheduled is None
    act = b.on_utterance(part1, 3.0, 0.5)
    # a request without a question mark that covers little of the question: it may go on
    assert act.kind == "answer" and act.at_s == pytest.approx(3.0 + 1.2)
    b.on_speech_start(3.6)  # it does: the answer is withdrawn before it starts
    assert b.scheduled is None and "withdrawn" in kinds(b)
    b.on_utterance_end(6.0, 3.6)
    act = b.on_utterance("What happened, and how did you handle it?", 6.0, 3.6)
    assert act.kind == "answer" and act.at_s == pytest.approx(6.5)
    b.started(act, 6.5)
    assert b.plays[0]["asked_text"] == part1 + " What happened, and how did you handle it?"


def test_transcripts_arriving_while_the_interviewer_still_speaks_decide_nothing():
    b = AgentBrain([q01()])
    b.on_speech_start(0.5)
    b.on_utterance_end(3.0, 0.5)
    b.on_speech_start(3.5)  # goes on before the first transcript is in
    assert b.on_utterance("Tell me about a time you disagreed with a coworker.", 3.0,
                          0.5).kind == "none"
    b.on_utterance_end(6.0, 3.5)
    act = b.on_utterance("What happened, and how did you handle it?", 6.0, 3.5)
    assert act.kind == "answer" and act.at_s == pytest.approx(6.5)


def test_thanks_before_any_question_is_not_a_closing():
    b = AgentBrain([q01()])
    act = hear(b, "Good day. Thank you for your time.", 0.5, 2.5)
    assert act.kind == "none"
    act = hear(b, "Thank you for taking the time to speak with me.", 3.0, 5.0)
    assert act.kind == "none" and b.scheduled is None
    assert "hangup_scheduled" not in kinds(b)
    act = hear(b, "Before we proceed, " + Q01, 5.5, 12.0)
    assert act.kind == "answer"


def test_thanks_with_answers_not_given_waits_and_says_so():
    b = AgentBrain([q01()])
    assert hear(b, "Thank you for joining us.", 0.5, 2.0).kind == "none"
    assert "closing_wait" in kinds(b)
    assert b.tick(10.0).kind == "none"  # a thank-you is never a cue to answer


def test_a_greeting_then_silence_is_a_cue_for_a_greeting_reply():
    b = AgentBrain([q01()], cue_silence_s=3.0)
    hear(b, "Hello, this is Sam from the hiring team.", 0.5, 2.5)
    assert b.tick(5.0).kind == "none"
    act = b.tick(5.5)
    assert act.kind == "reply" and act.reply == "greeting"
    assert "cue_silence" in kinds(b)


def test_asked_to_hold_the_agent_waits_through_the_silence():
    b = AgentBrain([q01()], cue_silence_s=3.0)
    hear(b, "One moment, please, let me pull up your file.", 0.5, 3.0)
    for t in range(4, 15):
        assert b.tick(float(t)).kind == "none"
    act = hear(b, Q01, 15.0, 21.0)
    assert act.kind == "answer"


def test_a_statement_then_silence_is_a_cue_to_answer():
    b = AgentBrain([q01()], cue_silence_s=3.0)
    hear(b, "I'd love to hear about disagreeing with a coworker.", 0.5, 3.0)
    b.tick(6.0)
    act = b.scheduled
    assert act is not None and act.kind == "answer" and act.index == 0


def test_a_statement_after_every_answer_is_not_answered_again():
    b = AgentBrain([q01()], cue_silence_s=3.0)
    b.started(hear(b, Q01, 0.6, 7.0), 7.5)
    b.finished(30.0)
    hear(b, "That's a good example of handling a disagreement with a coworker.", 31.0, 34.0)
    for t in range(35, 45):
        b.tick(float(t))
    assert b.scheduled is None and len(b.played) == 1
    assert ("waiting", "a cue, but every answer was given") in [(k, d) for _, k, d in b.log]


# --- closings ---------------------------------------------------------------------------------
def test_a_thank_you_ends_the_call_only_after_the_answers_and_the_turn():
    b = AgentBrain([q01()], cue_silence_s=3.0)
    act = hear(b, Q01, 0.6, 7.0)
    b.started(act, 7.5)
    b.finished(20.0)
    assert hear(b, "Thank you for your time.", 21.0, 22.5).kind == "none"
    b.on_speech_start(23.0)  # the turn goes on: not over yet
    b.on_utterance_end(25.0, 23.0)
    b.on_utterance("We will be in touch next week.", 25.0, 23.0)
    assert b.tick(27.0).kind == "none"
    act = b.tick(28.0)
    assert act.kind == "hangup" and act.at_s == pytest.approx(28.0)


def test_a_goodbye_hangs_up_unless_the_interviewer_goes_on():
    b = AgentBrain([q01()])
    b.started(hear(b, Q01, 0.6, 7.0), 7.5)
    b.finished(20.0)
    act = hear(b, "Thank you. That's all the questions I have. Goodbye.", 21.0, 24.0)
    assert act.kind == "hangup" and act.at_s == pytest.approx(24.3)
    b.on_speech_start(24.2)
    assert b.scheduled is None and "withdrawn" in kinds(b)


def test_a_goodbye_before_any_question_hangs_up_and_says_what_was_not_given():
    b = AgentBrain([q01()])
    act = hear(b, "Sorry, we have to end here. Goodbye.", 0.5, 3.0)
    assert act.kind == "hangup"
    assert "1 answer(s) not given" in b.log[-1][2]


# --- timeouts ---------------------------------------------------------------------------------
def test_a_long_silence_is_logged_once_as_waiting():
    b = AgentBrain([q01()], wait_event_s=20.0)
    for t in range(0, 45):
        b.tick(float(t))
    waits = [e for e in b.log if e[1] == "waiting"]
    assert len(waits) == 1 and waits[0][0] == 20.0
    assert waits[0][2] == "no question heard for 20 s"
    act = hear(b, "What are your salary expectations?", 45.0, 46.0)  # speech resets it
    b.started(act, 46.5)
    b.finished(48.0)
    for t in range(46, 70):
        b.tick(float(t))
    assert len([e for e in b.log if e[1] == "waiting"]) == 2


def test_no_waiting_event_while_the_agent_speaks():
    b = AgentBrain([q01()], wait_event_s=5.0)
    b.started(hear(b, Q01, 0.6, 7.0), 7.5)
    for t in range(8, 30):
        b.tick(float(t))
    assert "waiting" not in kinds(b)


# --- question matching ------------------------------------------------------------------------
def test_a_paraphrased_question_gets_its_answer():
    b = AgentBrain([q01(), answer("q_hours", 0.5, text=Q_HOURS)])
    act = hear(b, "How many hours per week are you able to work, and what days?", 0.5, 4.0)
    assert act.kind == "answer" and act.index == 1  # matched, not the planned order
    b.started(act, 4.5)
    b.finished(8.0)
    act = hear(b, "Can you describe a situation where you and a colleague disagreed on how "
               "to do something? How did you deal with it?", 9.0, 15.0)
    assert act.kind == "answer" and act.index == 0
    b.started(act, 15.5)
    assert [p["question_id"] for p in b.plays] == ["q_hours", "q01_conflict"]
    assert all(p["match_similarity"] >= 0.3 for p in b.plays)


def test_a_question_not_in_the_bank_is_skipped_and_logged():
    b = AgentBrain([q01()])
    act = hear(b, "What are your salary expectations?", 0.5, 2.5)
    assert act.kind == "reply" and act.reply == "skip"
    assert "skipped" in kinds(b) and "unmatched" in kinds(b)
    b.started(act, 3.0)
    b.finished(5.0)
    assert not b.played
    act = hear(b, Q01, 6.0, 12.0)
    assert act.kind == "answer" and act.index == 0


def test_without_question_texts_answers_go_in_order():
    b = AgentBrain([answer("q1"), answer("q2", delay=1.0)])
    b.started(hear(b, "What was your last job?", 0.5, 2.0), 2.5)
    act = b.on_utterance("Thanks. Now, how do you handle a deadline?", 10.0)
    assert act.kind == "answer" and act.index == 1 and act.at_s == pytest.approx(11.0)


# --- the low-latency first start, repeats, barge-in (behaviour kept from before) -------------
def test_the_first_question_is_answered_after_the_response_delay_before_its_words():
    b = AgentBrain([answer(delay=0.8)])
    act = b.on_utterance_end(4.0)
    assert act.kind == "answer" and act.at_s == pytest.approx(4.8) and b.tentative
    assert b.on_utterance("What was your last job?", 4.0).at_s == pytest.approx(4.8)
    assert not b.tentative
    b.started(act, 4.8)
    assert b.answered and b.scheduled is None


def test_a_tentative_start_is_withdrawn_when_the_words_are_not_a_question():
    b = AgentBrain([q01()])
    b.on_speech_start(0.5)
    act = b.on_utterance_end(7.0, 0.5)  # long enough to be the question
    assert act.kind == "answer" and b.tentative
    assert b.on_utterance("Welcome to Acme. This call is recorded for quality and "
                          "training purposes.", 7.0, 0.5).kind == "none"
    assert b.scheduled is None and "withdrawn" in kinds(b)


def test_a_tentative_answers_late_words_are_its_asked_text_without_the_greeting():
    b = AgentBrain([q01()])
    b.on_speech_start(0.5)
    act = b.on_utterance_end(9.0, 0.5)
    b.started(act, 9.5)  # the words arrive after the answer started
    b.on_utterance("Hello, this is your screening interview. " + Q01, 9.0, 0.5, now_s=11.0)
    assert b.plays[0]["asked_text"] == Q01 and b.plays[0]["match_similarity"] > 0.95
    assert b.log[-1] == (11.0, "heard_answered_question",
                         "Hello, this is your screening interview. " + Q01)


def test_a_pause_inside_the_question_withdraws_the_tentative_answer():
    b = AgentBrain([answer(delay=0.5)])
    b.on_utterance_end(2.0)
    b.on_speech_start(2.3)
    assert b.scheduled is None and "question_goes_on" in kinds(b)


def test_repeat_requests_are_answered_again_and_counted():
    b = AgentBrain([answer(delay=0.5)])
    act = b.on_utterance_end(3.0)
    b.started(act, 3.5)
    b.on_utterance("What was your last job?", 3.0)  # the question's words, late: ignored
    assert b.scheduled is None and b.repeat_requests == 0
    assert b.plays[0]["asked_text"] == "What was your last job?"
    act = b.on_utterance("Sorry, I didn't catch that. Could you repeat that?", 12.0)
    assert act.kind == "answer" and act.at_s == pytest.approx(12.5) and b.repeat_requests == 1
    b.started(act, 12.5)
    assert b.plays[1]["repeat"]
    act = b.on_utterance("Thank you. Goodbye.", 25.0)
    assert act.kind == "hangup" and act.at_s == pytest.approx(25.3)


def test_barge_in_starts_before_the_expected_end_of_the_question():
    q = "What was your most recent job, and what did you do there?"
    exp = expected_question_s(q)
    assert exp == pytest.approx(12 * 60 / 230)  # 12 words at 230 wpm
    b = AgentBrain([answer(barge=1.0, expected=exp)])
    act = b.on_speech_start(1.0)
    assert act.kind == "answer" and act.at_s == pytest.approx(1.0 + exp - 1.0)
    assert b.on_utterance_end(3.0).kind == "none"  # already scheduled
    b.on_speech_start(3.2)  # a pause inside the question does not withdraw a barge-in
    assert b.scheduled is not None


def test_the_question_heard_after_a_barge_in_is_not_taken_for_a_closing():
    b = AgentBrain([answer(barge=1.5, expected=4.5)])
    act = b.on_speech_start(1.0)
    b.started(act, 4.0)
    b.on_utterance_end(5.5, 1.0)
    assert b.on_utterance("What was your most recent job?", 5.5, start_s=1.0).kind == "none"
    assert b.scheduled is None
    assert b.on_utterance("Thank you. Goodbye.", 15.0, start_s=13.0).kind == "hangup"
