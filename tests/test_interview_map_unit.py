"""The interview mapper on synthetic calls: paraphrased questions matched to the bank,
follow-ups and an off-bank question recorded and skipped, a repeat request answered again
(the last answer graded, under the question's words), the bot's transcript of each answer,
barge-in, and the agent's own view when the bot gives no record."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from rig.audio import Audio
from rig.calls.agent.loop import AgentResult, AnswerPlay
from rig.calls.bots.interview_map import (
    agent_turns,
    default_matcher,
    is_question,
    map_interview,
    text_similarity,
)
from rig.calls.bots.record import BotRecord, BotTurn

pytestmark = pytest.mark.unit
SR = 8000
T0 = 1_000_000.0
BANK = [("q_role", "What was your most recent job, and what did you do there?"),
        ("q_conflict", "Tell me about a time you resolved a conflict with a coworker."),
        ("q_weakness", "What is one weakness you are working on?")]


def agent(plays, duration_s=60.0, heard=(), utterances=()) -> AgentResult:
    a = Audio(np.zeros(SR, np.float32), SR)
    return AgentResult(T0, duration_s, tuple(AnswerPlay(q, T0 + s, T0 + s - 0.5, r)
                                             for q, s, r in plays),
                       0, tuple(heard), (), "interviewer", a, a, 0, tuple(utterances), 0)


def turn(start, end, text) -> BotTurn:
    return BotTurn(start, end, text)


PARAPHRASES = [
    ("To start, tell me about your most recent role and what you did there.", "q_role"),
    ("Tell me about your most recent position and what you did in it.", "q_role"),
    ("Can you describe a conflict with a coworker and how you resolved it?", "q_conflict"),
    ("Which weakness are you working on at the moment?", "q_weakness")]
UNRELATED = ["Where did you grow up?", "Nice. How many people were on that team?",
             "Sorry, could you repeat that?", "Thank you for your time. Goodbye."]


@pytest.mark.parametrize("agents", [True, False], ids=["agent_matcher", "fallback"])
def test_paraphrases_match_their_bank_question_and_unrelated_text_does_not(agents,
                                                                            monkeypatch):
    if not agents:  # the fallback: character trigrams, when question_match is absent
        monkeypatch.setitem(sys.modules, "rig.calls.agent.question_match", None)
    match = default_matcher()
    for said, qid in PARAPHRASES:
        got, sim = match(said, BANK)
        assert got == qid and 0.5 <= sim <= 1, (said, got, sim)
    for said in UNRELATED:
        assert match(said, BANK)[0] is None, said
    assert text_similarity("", "anything") == 0.0
    assert is_question("Please walk me through your week.") and is_question("Ready?")
    assert not is_question("Great, thanks.")


def test_a_whole_interview_maps_to_answers_and_records_what_no_answer_was_for():
    bot = BotRecord(
        said=(turn(0.0, 2.0, "Hi! Thanks for joining today."),
              turn(3.0, 6.0, "To start, tell me about your most recent role and what you "
                             "did there."),
              turn(18.0, 20.0, "Sorry, could you repeat that?"),               # repeat
              turn(32.0, 35.0, "Nice. How many people were on that team?"),     # follow-up
              turn(38.0, 41.0, "Can you tell me about a conflict with a coworker you "
                               "resolved?"),                                     # in bank
              turn(55.0, 57.0, "Where did you grow up?"),                       # off-bank
              turn(60.0, 62.0, "Thank you for your time. Goodbye.")),
        heard=((7.0, "I was a shift lead"), (21.0, "I was a shift lead at a store"),
               (42.0, "We disagreed on rotas")))
    a = agent([("q_role", 6.5, False), ("q_role", 20.5, True), ("q_conflict", 41.5, False)],
              duration_s=63.0)
    m = map_interview(a, bot, BANK)
    assert [(s.question_id, s.repeat, s.end_by) for s in m.answers] == [
        ("q_role", False, "interviewer_spoke"), ("q_role", True, "interviewer_spoke"),
        ("q_conflict", False, "interviewer_spoke")]
    first, again, conflict = m.answers
    assert (first.start_s, first.origin_s, first.end_s) == (6.5, 6.0, 18.0)
    assert m.graded("q_role") is again  # the answer given again replaces the first
    assert again.asked_text == first.asked_text  # the question's words, not "repeat that"
    assert again.asked_text.startswith("To start, tell me about your most recent role")
    assert again.heard_text == "I was a shift lead at a store"
    assert conflict.heard_text == "We disagreed on rotas" and conflict.end_s == 55.0
    assert first.match_similarity > 0.5 and conflict.match_similarity > 0.5
    assert m.graded("q_weakness") is None
    off = [(u.text, u.matched_question_id) for u in m.unanswered]
    assert off == [("Nice. How many people were on that team?", None),
                   ("Where did you grow up?", None)]
    assert m.said_text().startswith("Hi! Thanks for joining today. | To start")
    d = m.to_dict()
    assert len(d["answers"]) == 3 and len(d["unanswered"]) == 2 and len(d["said"]) == 7


def test_a_bank_question_not_planned_in_this_call_is_recorded_with_its_match():
    bot = BotRecord(said=(turn(0.0, 3.0, "What was your most recent job?"),
                          turn(12.0, 15.0, "What is one weakness you are working on?"),
                          turn(20.0, 21.0, "Thanks, goodbye.")))
    m = map_interview(agent([("q_role", 3.5, False)], duration_s=22.0), bot, BANK)
    (u,) = m.unanswered
    assert u.matched_question_id == "q_weakness" and u.similarity > 0.5
    assert m.answers[0].heard_text is None  # the bot exposes no transcript


def test_the_plays_own_match_wins_and_barge_in_answers_the_turn_it_started_inside():
    p = AnswerPlay("q_role", T0 + 2.0, T0 + 2.0, False)
    object.__setattr__(p, "asked_text", "the agent's matched words")  # an extended AnswerPlay
    object.__setattr__(p, "match_similarity", 0.91)
    a = agent([], duration_s=12.0)
    a = AgentResult(a.t0_epoch_s, a.duration_s, (p,), 0, (), (), "interviewer", a.sent,
                    a.received, 0)
    bot = BotRecord(said=(turn(0.0, 3.0, "What was your most recent job?"),
                          turn(10.0, 11.0, "Goodbye.")))
    (span,) = map_interview(a, bot, BANK).answers
    assert (span.asked_text, span.match_similarity) == ("the agent's matched words", 0.91)
    assert span.end_s == 10.0 and map_interview(a, bot, BANK).unanswered == ()


def test_the_agents_view_pairs_its_utterances_with_its_transcripts():
    a = agent([("q_role", 5.0, False)], duration_s=9.0,
              heard=((1.2, "Hello there."), (4.5, "What was your most recent job?")),
              utterances=((0.0, 1.2), (2.0, 4.5)))
    assert agent_turns(a) == (turn(0.0, 1.2, "Hello there."),
                              turn(2.0, 4.5, "What was your most recent job?"))
    m = map_interview(a, None, BANK)
    (span,) = m.answers
    assert span.asked_text == "What was your most recent job?"
    assert span.end_by == "call_end" and span.end_s == 9.0
    assert span.match_similarity == default_matcher()(span.asked_text, BANK[:1])[1] > 0.5
