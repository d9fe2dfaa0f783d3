"""The caller agent's decisions: a plain state machine with no I/O (unit-tested with text
events).

:class:`AgentBrain` takes what the agent hears (speech starts, utterance ends, transcripts)
in call-clock seconds and says what to do: play answer ``i`` at a time, hang up at a time, or
nothing. It recognises repeat requests ("could you repeat that", "sorry, I didn't catch that")
and closings (:func:`classify_utterance`), schedules the first answer when the question's
speech ends (before its words are transcribed, tentatively), and schedules a barge-in answer
from the question's estimated duration (:func:`expected_question_s`, at ``QUESTION_WPM``).
:func:`rig.calls.agent.run_agent` is the real-time loop around it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from rig.audio import Audio

#: Speaking rate assumed for an interviewer's question when estimating its duration (TTS
#: interviewers speak fast: the reference interviewer's hibari voice said a 12-word question
#: at about 255 wpm; a human interviewer nearer 160).
QUESTION_WPM = 230.0

UtteranceKind = Literal["repeat_request", "closing", "other"]

_REPEAT = re.compile(
    r"\b(repeat|say (that|it) again|didn'?t (quite )?(catch|hear|get|understand)|come again|"
    r"pardon|couldn'?t (hear|understand)|one more time)\b", re.IGNORECASE)
_CLOSING = re.compile(r"\b(thank you|thanks|goodbye|good bye|bye|that'?s all|that is all)\b",
                      re.IGNORECASE)


def classify_utterance(text: str) -> UtteranceKind:
    """``repeat_request`` when the interviewer asks to hear the answer again, ``closing`` for a
    thank-you or goodbye, ``other`` (a question) otherwise."""
    if _REPEAT.search(text):
        return "repeat_request"
    if _CLOSING.search(text) and "?" not in text:
        return "closing"
    return "other"


def expected_question_s(text: str, wpm: float = QUESTION_WPM) -> float:
    """Estimated spoken duration of a question (s) at ``wpm`` words per minute."""
    return len(text.split()) * 60.0 / wpm


@dataclass(frozen=True)
class AgentAnswer:
    """One answer the agent may be asked for, in question order.

    Attributes:
        question_id: the question it answers.
        audio: the answer as the caller's channel left it, without the leading response delay
            (the agent waits that itself); float32 mono, any rate (sent at 8 kHz).
        response_delay_s: silence between the end of the question and the answer (s).
        barge_in_offset_s: > 0: start this long before the question's expected end (s), and
            ignore the response delay.
        expected_question_s: the question's estimated duration (s), for barge-in.
    """
    question_id: str
    audio: Audio
    response_delay_s: float = 0.5
    barge_in_offset_s: float = 0.0
    expected_question_s: float | None = None


@dataclass(frozen=True)
class Action:
    """What the brain wants: play answer ``index`` at ``at_s``, hang up at ``at_s``, or
    nothing. Times are seconds on the agent's call clock."""
    kind: Literal["answer", "hangup", "none"]
    at_s: float = 0.0
    index: int = -1


@dataclass
class AgentBrain:
    """The agent's decisions (no I/O). Times are seconds on the call clock."""
    answers: Sequence[AgentAnswer]
    hangup_delay_s: float = 0.3
    current: int = 0
    answered: bool = False
    scheduled: Action | None = None
    tentative: bool = False
    answer_started_s: float = float("-inf")
    repeat_requests: int = 0
    log: list[tuple[float, str, str]] = field(default_factory=list)

    def on_speech_start(self, t_s: float) -> Action:
        """The interviewer started speaking at ``t_s``: a barge-in answer is scheduled then."""
        if self.tentative and self.scheduled is not None:
            self.log.append((t_s, "question_goes_on", ""))  # it was a pause, not the end
            self.scheduled, self.tentative = None, False
        if self.answered or self.scheduled is not None or self.current >= len(self.answers):
            return Action("none")
        a = self.answers[self.current]
        if a.barge_in_offset_s > 0 and a.expected_question_s is not None:
            at = t_s + max(0.0, a.expected_question_s - a.barge_in_offset_s)
            self.scheduled = Action("answer", at, self.current)
            self.log.append((t_s, "barge_in_scheduled", f"{at:.2f}"))
            return self.scheduled
        return Action("none")

    def on_utterance_end(self, end_s: float) -> Action:
        """The interviewer stopped speaking at ``end_s`` (before its words are transcribed).

        While the current question is unanswered, whatever the interviewer said is taken as
        the question and the answer is scheduled at once (tentatively: :meth:`on_speech_start`
        withdraws it if the interviewer goes on before it starts, :meth:`on_utterance` if the
        words were a goodbye), so the response delay does not include the ASR's latency."""
        if (self.answered or self.scheduled is not None
                or self.current >= len(self.answers)):
            return Action("none")
        a = self.answers[self.current]
        self.log.append((end_s, "question_end", ""))
        return self._schedule(self.current, end_s + a.response_delay_s, tentative=True)

    def on_utterance(self, text: str, end_s: float, start_s: float | None = None) -> Action:
        """The interviewer finished an utterance (its speech ran from ``start_s`` to
        ``end_s``; ``start_s`` None: unknown, taken as ``end_s``)."""
        kind = classify_utterance(text)
        self.log.append((end_s, f"heard_{kind}", text))
        if self.current >= len(self.answers):
            return self._hangup(end_s)
        a = self.answers[self.current]
        if not self.answered:
            if kind == "closing":
                return self._hangup(end_s)
            if self.scheduled is not None:  # already scheduled (barge-in or tentative)
                self.tentative = False
                return self.scheduled
            return self._schedule(self.current, end_s + a.response_delay_s)
        begun = end_s if start_s is None else start_s
        if begun < self.answer_started_s:  # the question being answered now (or barged into)
            return Action("none")
        if kind == "repeat_request":
            self.repeat_requests += 1
            return self._schedule(self.current, end_s + a.response_delay_s)
        if kind != "closing" and self.current + 1 < len(self.answers):
            self.current += 1
            self.answered = False
            nxt = self.answers[self.current]
            return self._schedule(self.current, end_s + nxt.response_delay_s)
        self.current = len(self.answers)
        return self._hangup(end_s)

    def started(self, action: Action, t_s: float) -> None:
        """The scheduled answer started playing at ``t_s``."""
        self.answered, self.answer_started_s = True, t_s
        self.scheduled, self.tentative = None, False
        self.log.append((t_s, "answer_started", self.answers[action.index].question_id))

    def _schedule(self, index: int, at_s: float, tentative: bool = False) -> Action:
        self.scheduled, self.tentative = Action("answer", at_s, index), tentative
        return self.scheduled

    def _hangup(self, end_s: float) -> Action:
        self.scheduled = Action("hangup", end_s + self.hangup_delay_s)
        return self.scheduled
