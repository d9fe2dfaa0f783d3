"""The caller agent in unscripted talk (rig.calls.agent.brain, rig.calls.agent.utterances): hold
phrases and small talk with a "?" are not the question, a gap inside the interviewer's turn is
not its end, a cut-off or restarted question is waited out, and every decision is logged with
its reason. Driven by text events, as tests/test_agent_brain_unit.py."""

from __future__ import annotations

import numpy as np
import pytest

from rig.audio import Audio
from rig.calls.agent.brain import CUE_SILENCE_S, AgentAnswer, AgentBrain, expected_question_s
from rig.calls.agent.utterances import classify_utterance, is_fragment, is_restart

pytestmark = pytest.mark.unit

SILENCE = Audio(np.zeros(8000, np.float32), 8000)
Q01 = ("Tell me about a time you disagreed with a coworker about how to get something done. "
       "What happened, and how did you handle it?")
Q_ASK = "Can you tell me about a time you disagreed with a coworker about how to get it done?"


def q01():
    return AgentAnswer("q01_conflict", SILENCE, 0.5, 0.0, expected_question_s(Q01), Q01)


def kinds(b):
    return [k for _, k, _ in b.log]


def hear(b, text, start, end):
    b.on_speech_start(start)
    b.on_utterance_end(end, start)
    return b.on_utterance(text, end, start)


@pytest.mark.parametrize("text,kind", [
    ("Could I please have a moment?", "hold"),
    ("Can you hold on a second?", "hold"),
    ("Thanks. Let me take a moment to pull up your file.", "hold"),
    ("Can you hear me?", "small_talk"),
    ("How are you today?", "small_talk"),
    ("Can you", "fragment"),
    ("Could you tell me", "fragment"),
    ("So what was the-", "fragment"),
    ("Tell me about a time you disagreed with a coworker about the plan", "request"),
    ("Can you tell me about yourself?", "question"),
    ("Take a moment, then tell me about a conflict you handled.", "request"),
])
def test_unscripted_turns_are_classified(text, kind):
    assert classify_utterance(text) == kind


def test_fragments_and_restarts():
    assert is_fragment("Can you") and not is_fragment("Can you hear me?")
    assert is_restart("Can you", Q_ASK)
    assert is_restart("Can you tell me about a time you-", Q_ASK)
    assert is_restart("Can you tell me about a time you disagreed?", Q_ASK)  # said again
    assert not is_restart("Hello, and welcome.", Q_ASK)
    assert not is_restart("Can you", "What was your last job?")


@pytest.mark.parametrize("hold", ["Could I please have a moment?", "Can you hold on a second?"])
def test_a_hold_with_a_question_mark_is_not_the_question(hold):
    b = AgentBrain([q01()])
    assert hear(b, hold, 0.5, 2.0).kind == "none"
    assert ("waiting", "asked to hold: no cue from the silence") in [(k, d) for _, k, d in b.log]
    for t in range(3, 40):
        assert b.tick(float(t)).kind == "none"  # no silence after a hold is a cue
    assert "skipped" not in kinds(b) and not b.played
    act = hear(b, Q01, 40.0, 46.0)
    assert act.kind == "answer" and act.index == 0


@pytest.mark.parametrize("text,reply", [("Can you hear me?", "hearing"),
                                        ("How are you today?", "wellbeing")])
def test_small_talk_gets_a_short_reply_never_the_answer(text, reply):
    b = AgentBrain([q01()])
    act = hear(b, text, 0.5, 1.5)
    assert act.kind == "reply" and act.reply == reply and "skipped" not in kinds(b)


def test_a_gap_inside_the_interviewers_turn_is_not_its_end():
    """The pipecat example bot: a greeting, 3.8 s while its LLM generates, then the question.
    The agent stays silent in the gap and answers the question."""
    b = AgentBrain([q01()])
    assert hear(b, "Hello! I'm Sam, and I'll be your interviewer today.", 0.3, 3.0).kind \
        == "none"
    for t in np.arange(3.0, 6.8, 0.1):
        assert b.tick(float(t)).kind == "none", t  # 3.8 s after the greeting: still its turn
    assert CUE_SILENCE_S > 3.8
    act = hear(b, Q01, 6.8, 12.0)
    assert act.kind == "answer" and act.at_s == pytest.approx(12.5)
    assert not [k for k in kinds(b) if k in ("reply_scheduled", "cue_silence")]


def test_a_cut_off_question_is_waited_out_and_the_full_one_answered():
    b = AgentBrain([q01()])
    assert hear(b, "Can you", 0.5, 1.0).kind == "none"
    assert any(k == "waiting" and "cut off" in d for _, k, d in b.log)
    for t in np.arange(1.0, 15.0, 0.5):
        assert b.tick(float(t)).kind == "none"  # a fragment is never a cue
    act = hear(b, Q_ASK, 15.0, 20.0)
    assert act.kind == "answer" and act.index == 0
    assert "restarted" in kinds(b)
    b.started(act, act.at_s)
    assert b.plays[0]["asked_text"] == Q_ASK and b.plays[0]["match_similarity"] > 0.5


def test_a_restarted_question_in_one_turn_replaces_its_first_start():
    b = AgentBrain([q01()])
    b.on_speech_start(0.5)
    b.on_utterance_end(1.5, 0.5)
    b.on_speech_start(1.9)  # it starts again before the first words are transcribed
    assert b.on_utterance("Can you tell me about a time you-", 1.5, 0.5).kind == "none"
    assert "turn_goes_on" in kinds(b)  # logged with its reason
    b.on_utterance_end(6.0, 1.9)
    act = b.on_utterance(Q_ASK, 6.0, 1.9)
    assert act.kind == "answer" and b.turn == [Q_ASK]


def test_every_decision_has_a_reason():
    b = AgentBrain([q01()])
    hear(b, "Could I please have a moment?", 0.5, 2.0)
    hear(b, "Can you", 10.0, 10.5)
    hear(b, Q_ASK, 12.0, 17.0)
    for _, kind, detail in b.log:
        if kind in ("waiting", "withdrawn", "turn_goes_on", "restarted", "no_early_start",
                    "answer_scheduled", "reply_scheduled", "matched"):
            assert detail, kind


def test_a_backchannel_profile_says_mm_hm_once_inside_the_question():
    a = AgentAnswer("q01_conflict", SILENCE, 0.5, 0.0, expected_question_s(Q01), Q01,
                    backchannel_after_s=2.0)
    b = AgentBrain([a])
    b.on_speech_start(1.0)
    assert b.tick(2.5).kind == "none"  # not yet
    act = b.tick(3.0)
    assert act.kind == "reply" and act.reply == "backchannel"
    b.started(act, 3.0)
    assert "backchannel_started" in kinds(b) and b.speaking  # the turn goes on
    b.finished(3.4)
    assert b.tick(3.5).kind == "none"  # once
    b.on_utterance_end(8.0, 1.0)
    act = b.on_utterance(Q01, 8.0, 1.0)
    assert act.kind == "answer" and b.turn == [Q01]  # the mm-hm did not cut the turn


def test_an_accommodation_profile_asks_for_a_slower_repeat_then_answers_it():
    a = AgentAnswer("q01_conflict", SILENCE, 0.5, 0.0, expected_question_s(Q01), Q01,
                    ask_repeat_slowly=True)
    b = AgentBrain([a])
    act = hear(b, Q01, 0.5, 6.0)
    assert act.kind == "reply" and act.reply == "slower"
    assert "accommodation_request" in kinds(b)
    b.started(act, act.at_s)
    b.finished(act.at_s + 2.0)
    act = hear(b, "Of course. " + Q01, 9.0, 16.0)
    assert act.kind == "answer" and act.index == 0


def test_the_shipped_real_call_profiles_differ_from_the_baseline_only_in_the_caller():
    """profiles/calls: the baseline, backchannel (1.5 s) and ask_repeat_slowly, each the
    baseline but for its interruption field (so their audio, and any offline call, equal the
    baseline's)."""
    from pathlib import Path

    from rig.profiles import load_profiles

    ps = {p.profile_id: p for p in load_profiles(
        Path(__file__).resolve().parents[1] / "profiles" / "calls").profiles}
    assert sorted(ps) == ["ask_repeat_slowly", "backchannel", "baseline"]
    base = ps["baseline"].model_dump(exclude={"profile_id", "description", "interruption"})
    for pid in ("backchannel", "ask_repeat_slowly"):
        assert ps[pid].model_dump(exclude={"profile_id", "description", "interruption"}) == base
    assert ps["backchannel"].interruption.backchannel_after_s == 1.5
    assert ps["ask_repeat_slowly"].interruption.ask_repeat_slowly is True
    assert ps["baseline"].interruption.backchannel_after_s == 0


def test_asked_again_how_it_can_help_the_agent_takes_the_floor():
    """pipecat's scaffolded assistant asked "How can I assist you today?" after every reply:
    the greeting is said once; asked again, the agent gives its answer (a person would)."""
    b = AgentBrain([q01()])
    act = hear(b, "Hello! How can I assist you today?", 0.5, 2.0)
    assert act.kind == "reply" and act.reply == "greeting"
    b.started(act, 2.5)
    b.finished(4.0)
    act = hear(b, "It's great to meet you. How can I assist you today?", 5.0, 7.0)
    assert act.kind == "answer" and act.index == 0, b.log
    assert "taking_the_floor" in kinds(b)
    # "How are you?" twice is answered twice: only the invitation to speak hands over
    b = AgentBrain([q01()])
    for t in (0.5, 5.0):
        act = hear(b, "How are you today?", t, t + 1.0)
        assert act.kind == "reply" and act.reply == "wellbeing"
        b.started(act, t + 1.5)
        b.finished(t + 2.5)
