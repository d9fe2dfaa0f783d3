"""What the caller agent may be asked for and what its brain decides: :class:`AgentAnswer`
and :class:`Action` (re-exported by :mod:`rig.calls.agent.brain`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rig.audio import Audio


@dataclass(frozen=True)
class AgentAnswer:
    """One answer the agent may be asked for, in the planned order.

    Attributes:
        question_id: the question it answers.
        audio: the answer as the caller's channel left it, without the leading response delay
            (the agent waits that itself); float32 mono, any rate (sent at 8 kHz).
        response_delay_s: silence between the end of the question and the answer (s).
        barge_in_offset_s: > 0: start this long before the question's expected end (s), and
            ignore the response delay.
        expected_question_s: the question's estimated duration (s), for barge-in and the
            low-latency first start.
        question_text: the bank's wording of the question, to match what is asked ("": not
            matched; answers go in order).
        backchannel_after_s: > 0: say "Mm-hm." this long into the interviewer's speech,
            once, before this answer (the profile's ``interruption.backchannel_after_s``).
        ask_repeat_slowly: ask the question to be repeated more slowly (once) before
            answering it (``interruption.ask_repeat_slowly``).
    """
    question_id: str
    audio: Audio
    response_delay_s: float = 0.5
    barge_in_offset_s: float = 0.0
    expected_question_s: float | None = None
    question_text: str = ""
    backchannel_after_s: float = 0.0
    ask_repeat_slowly: bool = False


@dataclass(frozen=True)
class Action:
    """What the brain wants at ``at_s`` (call-clock s): play answer ``index``, say reply
    ``reply`` (a key of :data:`REPLY_TEXTS`), hang up, or nothing."""
    kind: Literal["answer", "reply", "hangup", "none"]
    at_s: float = 0.0
    index: int = -1
    reply: str = ""
