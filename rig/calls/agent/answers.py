"""The answer a real call's caller agent plays, from the question, the profile and the
answer's rendered caller audio (:func:`agent_answer`)."""

from __future__ import annotations

from rig.answers import Question
from rig.audio import Audio
from rig.calls.agent.actions import AgentAnswer
from rig.calls.agent.brain import expected_question_s
from rig.profiles import Profile

__all__ = ["AgentAnswer", "agent_answer"]


def agent_answer(question: Question, profile: Profile, caller_audio: Audio) -> AgentAnswer:
    """The answer the agent plays: the caller audio without its response delay (the agent
    waits it itself)."""
    n = round(profile.response_delay_s * caller_audio.sample_rate_hz)
    return AgentAnswer(
        question.question_id, Audio(caller_audio.samples[n:].copy(),
                                    caller_audio.sample_rate_hz),
        profile.response_delay_s, profile.interruption.barge_in_offset_s,
        expected_question_s(question.question), question.question,
        profile.interruption.backchannel_after_s, profile.interruption.ask_repeat_slowly)
