"""The caller agent's decisions: a plain state machine with no I/O (unit-tested with text
events in ``tests/test_agent_brain_unit.py``).

:class:`AgentBrain` takes what the agent hears (speech starts, utterance ends, transcripts,
clock ticks) in call-clock seconds and says what to do: play answer ``i`` at a time, say a
short reply (small talk, or the skip line for a question it has no answer to), hang up at a
time, or nothing. Every decision is logged as ``(t_s, kind, detail)`` (:attr:`AgentBrain.log`,
the call's :attr:`rig.calls.agent.loop.AgentResult.events`).

When it answers. The interviewer's *turn* is its utterances since the agent last spoke,
joined; it is classified by :func:`rig.calls.agent.utterances.classify_utterance`. The agent acts
only when the turn is over (no speech going on, every utterance transcribed):
- ``question`` / ``request``: the bank question it asks (:func:`rig.calls.agent.question_match.
  match_question` over ``questions``, the bank's question texts) gets its answer after the
  answer's ``response_delay_s``; a question matching no answer gets the skip line and a
  ``skipped`` event. A request without a question mark that covers under
  :data:`COVERED` of the matched question's words may go on ("Tell me about a time you
  disagreed with a coworker." [pause] "What happened?"): it waits at least
  :data:`REQUEST_GAP_S`. Without question texts, answers go in order.
- ``small_talk``: the matching short reply (asked again how it can help once greeted, it
  takes the floor with its next answer: ``taking_the_floor``); ``hold`` ("One moment,
  please."): nothing, no cue from the silence; ``fragment`` ("Can you"): nothing, no cue:
  it waits for the full question (words said again replace it: ``restarted``); ``greeting`` and
  ``statement``: nothing until a silence of ``cue_silence_s`` (:data:`CUE_SILENCE_S`, a
  person's cue; a shorter gap is inside the interviewer's turn): then a greeting reply, or for
  a statement the answer it matches (else the next answer).
- ``repeat_request``: the last answer again (counted).
- ``closing`` (goodbye): hang up ``hangup_delay_s`` after it; ``soft_closing`` (a thank-you):
  hang up only when every answer has been played and ``cue_silence_s`` passed in silence; with
  answers not given it waits (``closing_wait``).
- Speech that starts before a scheduled answer, reply or hang-up withdraws it (the turn went
  on); it is decided again when the turn is over.
- ``wait_event_s`` without a question: a ``waiting`` event (once per quiet stretch).

The low-latency start. Only the first answer may start before its question's words are
transcribed (so its delay is the profile's, not the ASR's): at an utterance end, when nothing
was played yet, every earlier utterance is transcribed, and the utterance lasted at least
:data:`TENTATIVE_MIN_FRACTION` of the question's estimated duration
(:func:`expected_question_s`) - a greeting or "How are you?" is far shorter than a bank
question. The transcript confirms it, retargets it, or withdraws it if it has not started.
Later answers wait for the transcript. Barge-in answers are scheduled from the question's
estimated duration at its first speech start.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rig.calls.agent.actions import Action, AgentAnswer
from rig.calls.agent.question_match import MATCH_THRESHOLD, coverage, similarities
from rig.calls.agent.utterances import (  # noqa: F401  (re-exported)
    REPLY_TEXTS,
    UtteranceKind,
    classify_utterance,
    is_restart,
    sentences,
    small_talk_reply,
)

#: Speaking rate assumed for an interviewer's question when estimating its duration (the
#: reference interviewer's hibari voice: about 255 wpm; a human interviewer nearer 160).
QUESTION_WPM = 230.0
#: A first answer starts before the transcript only after an utterance at least this share of
#: the question's estimated duration (the hibari interviewer's questions measure about 0.9).
TENTATIVE_MIN_FRACTION = 0.75
#: Least gap (s) after a request with no question mark that covers under ``COVERED`` of the
#: matched question's content words (it may go on after a pause).
REQUEST_GAP_S = 1.2
COVERED = 0.7
#: Silence after a greeting or statement (no question asked) that is a person's cue to speak:
#: above the 3.8 s an LLM bot left between two sentences of one turn (inside its turn).
CUE_SILENCE_S = 6.0


def expected_question_s(text: str, wpm: float = QUESTION_WPM) -> float:
    """Estimated spoken duration of a question (s) at ``wpm`` words per minute."""
    return len(text.split()) * 60.0 / wpm


@dataclass
class AgentBrain:
    """The agent's decisions (no I/O). Times are seconds on the call clock.

    ``questions``: bank question id -> text, for matching (default: the answers' own
    ``question_text``; empty: answers in order). ``plays`` holds, per started answer,
    ``{"question_id", "asked_text", "match_similarity", "repeat"}`` (the text is filled in
    when its transcript arrives)."""
    answers: Sequence[AgentAnswer]
    hangup_delay_s: float = 0.3
    cue_silence_s: float = CUE_SILENCE_S
    wait_event_s: float = 20.0
    questions: Mapping[str, str] | None = None
    match_threshold: float = MATCH_THRESHOLD
    scheduled: Action | None = None
    tentative: bool = False
    barge: bool = False
    played: list[int] = field(default_factory=list)
    plays: list[dict] = field(default_factory=list)
    answer_started_s: float = float("-inf")
    repeat_requests: int = 0
    log: list[tuple[float, str, str]] = field(default_factory=list)
    speaking: bool = False
    pending: int = 0
    turn: list[str] = field(default_factory=list)
    turn_kind: str = ""
    turn_end_s: float = float("-inf")
    quiet_since_s: float = 0.0
    waited: bool = False
    greeted: bool = False
    playing: bool = False
    _last_kind: str = ""
    _bc_at: float | None = None  # when the profile's backchannel is due (call clock)
    asked_slower: bool = False
    _for_start: float | None = None  # speech start of the utterance the answer was set for
    _asked: tuple[str, float | None] = ("", None)
    _now: float = float("-inf")  # the latest call-clock time an event or tick brought

    def __post_init__(self) -> None:
        if self.questions is None:
            self.questions = {a.question_id: a.question_text for a in self.answers
                              if a.question_text}

    # --- properties ---------------------------------------------------------------------------
    @property
    def current(self) -> int:
        """The next answer not yet played (``len(answers)`` when all were)."""
        return next((i for i in range(len(self.answers)) if i not in self.played),
                    len(self.answers))

    @property
    def answered(self) -> bool:
        """Some answer has started playing."""
        return bool(self.played)

    def _ev(self, t_s: float, kind: str, detail: str = "") -> None:
        # logged when decided: the latest clock seen (a transcript arrives after its speech)
        self.log.append((max(t_s, self._now), kind, detail))

    # --- events -------------------------------------------------------------------------------
    def on_speech_start(self, t_s: float) -> Action:
        """The interviewer started speaking at ``t_s``: whatever was scheduled and not started
        is withdrawn (the turn goes on), except a barge-in; a barge-in answer is scheduled."""
        self.speaking, self.waited, self._now = True, False, max(self._now, t_s)
        if self.scheduled is not None and not self.barge:
            what = self.scheduled.reply or f"answer {self._qid(self.scheduled.index)}"
            self._ev(t_s, "question_goes_on" if self.tentative else "withdrawn",
                     f"{self.scheduled.kind} {what}: the interviewer went on")
            self.scheduled, self.tentative = None, False
        if self.answered or self.scheduled is not None or self.current >= len(self.answers):
            return Action("none")
        a = self.answers[self.current]
        if a.backchannel_after_s > 0 and self._bc_at is None:
            self._bc_at = t_s + a.backchannel_after_s
            self._ev(t_s, "backchannel_planned", f"'mm-hm' at {self._bc_at:.2f} if the "
                     "interviewer is still speaking (the profile's backchannel)")
        if a.barge_in_offset_s > 0 and a.expected_question_s is not None:
            at = t_s + max(0.0, a.expected_question_s - a.barge_in_offset_s)
            self.scheduled, self.barge, self._for_start = Action("answer", at, self.current), \
                True, t_s
            self._ev(t_s, "barge_in_scheduled", f"{at:.2f}")
            return self.scheduled
        return Action("none")

    def on_utterance_end(self, end_s: float, start_s: float | None = None) -> Action:
        """The interviewer stopped speaking at ``end_s`` (speech from ``start_s``), before its
        words are transcribed: the first answer may be scheduled now, tentatively (see the
        module docs)."""
        self.speaking, self.pending, self.turn_end_s = False, self.pending + 1, end_s
        self.quiet_since_s, self._bc_at = end_s, None if self._bc_at else self._bc_at
        self._ev(end_s, "question_end", f"speech {'?' if start_s is None else f'{start_s:.2f}'}"
                 f"-{end_s:.2f} s")
        if self.answered or self.scheduled is not None or self.current >= len(self.answers) \
                or self.pending > 1 or self.turn:
            return Action("none")
        a = self.answers[self.current]
        if start_s is not None and a.expected_question_s is not None \
                and end_s - start_s < TENTATIVE_MIN_FRACTION * a.expected_question_s:
            self._ev(end_s, "no_early_start", f"{end_s - start_s:.2f} s is under "
                     f"{TENTATIVE_MIN_FRACTION:g} of the question's {a.expected_question_s:.2f} s:"
                     " waiting for its words")
            return Action("none")
        self._for_start = start_s
        return self._schedule(self.current, end_s + a.response_delay_s, end_s, tentative=True)

    def on_utterance(self, text: str, end_s: float, start_s: float | None = None,
                     now_s: float | None = None) -> Action:
        """The interviewer's utterance (speech ``start_s`` to ``end_s``; ``start_s`` None:
        unknown) was transcribed as ``text``, at ``now_s`` (None: ``end_s``). Times of
        actions count from ``end_s``; an action already due starts at once."""
        self._now = max(self._now, end_s if now_s is None else now_s)
        self.pending = max(0, self.pending - 1)
        begun = end_s if start_s is None else start_s
        if begun < self.answer_started_s and self._last_kind == "answer":  # its question
            self._ev(end_s, "heard_answered_question", text)
            if not self.plays[-1]["asked_text"]:
                self._set_asked(self.plays[-1], text)
            return Action("none")
        if self.turn and is_restart(self.turn[-1], text):
            self._ev(end_s, "restarted", f"{self.turn[-1]!r} was cut off and said again: "
                     "the new words replace it")
            self.turn.pop()
        self.turn.append(text)
        self.turn_end_s = max(self.turn_end_s, end_s)
        kind = self.turn_kind = classify_utterance(" ".join(self.turn))
        self._ev(end_s, f"heard_{kind}", text)
        if self.speaking or self.pending:  # the turn goes on: decide at its end
            self._ev(end_s, "turn_goes_on", "the interviewer is speaking" if self.speaking
                     else f"{self.pending} utterance(s) not yet transcribed")
            return self.scheduled or Action("none")
        return self._decide(kind, self.turn_end_s)

    def tick(self, t_s: float) -> Action:
        """The clock: acts on a cue silence after a greeting or statement, on the quiet
        after a thank-you, and logs a long wait."""
        self._now = max(self._now, t_s)
        if self._bc_at is not None and self._bc_at > 0 and t_s >= self._bc_at \
                and self.speaking and not self.playing:
            self._bc_at = 0.0  # said once
            return Action("reply", t_s, reply="backchannel")
        if self.scheduled is not None or self.speaking or self.pending or self.playing:
            return self.scheduled or Action("none")
        quiet = t_s - max(self.quiet_since_s, self.turn_end_s)
        if self.turn and quiet >= self.cue_silence_s:
            kind = self.turn_kind
            if kind == "soft_closing" and self.current >= len(self.answers):
                self._ev(t_s, "cue_silence", f"{quiet:.1f} s after a thank-you, answers given")
                return self._hangup(t_s, "the interviewer thanked and stopped")
            if kind in ("greeting", "statement"):
                self._ev(t_s, "cue_silence", f"{quiet:.1f} s of silence after a {kind}")
                if kind == "greeting" and not self.greeted:
                    return self._reply("greeting", t_s, t_s)
                return self._answer_turn(t_s, t_s, cue=True)
        if not self.waited and quiet >= self.wait_event_s:
            self.waited = True
            self._ev(t_s, "waiting", f"no question heard for {self.wait_event_s:g} s")
        return Action("none")

    def started(self, action: Action, t_s: float) -> None:
        """The scheduled answer or reply started playing at ``t_s`` (a backchannel leaves the
        interviewer's turn and what was scheduled as they were)."""
        if action.kind == "reply" and action.reply == "backchannel":
            self.playing = True
            self._ev(t_s, "backchannel_started", "'mm-hm' while the interviewer speaks")
            return
        self.scheduled, self.tentative, self.barge = None, False, False
        self.turn, self.turn_kind = [], ""
        self.answer_started_s, self.playing, self._last_kind = t_s, True, action.kind
        if action.kind == "reply":
            self.greeted = self.greeted or action.reply == "greeting"
            self._ev(t_s, "reply_started", action.reply)
            self._asked = ("", None)
            return
        qid = self.answers[action.index].question_id
        info = {"question_id": qid, "asked_text": "", "match_similarity": None,
                "repeat": action.index in self.played}
        self._set_asked(info, *self._asked)
        self.plays.append(info)
        self.played.append(action.index)
        self._asked = ("", None)
        self._ev(t_s, "answer_started", qid)

    def finished(self, t_s: float) -> None:
        """What was playing ended at ``t_s`` (the quiet is measured from here)."""
        self.quiet_since_s, self.playing = max(self.quiet_since_s, t_s), False

    # --- decisions ----------------------------------------------------------------------------
    def _decide(self, kind: str, end_s: float) -> Action:
        if kind == "repeat_request":
            if not self.played:
                self.turn_kind = "statement"
                return Action("none")
            self.repeat_requests += 1
            i = self.played[-1]
            self._asked = (self.plays[-1]["asked_text"], self.plays[-1]["match_similarity"])
            return self._schedule(i, end_s + self.answers[i].response_delay_s, end_s)
        if kind == "small_talk":
            reply = small_talk_reply(self.turn[-1]) or "greeting"
            if reply == "greeting" and self.greeted:  # asked again: a person would go on
                self._ev(end_s, "taking_the_floor", "asked again how it can help, once greeted")
                return self._answer_turn(end_s, end_s + self._delay(), cue=True)
            return self._reply(reply, end_s + self._delay(), end_s)
        if kind in ("question", "request") and not self.asked_slower and self.current < \
                len(self.answers) and self.answers[self.current].ask_repeat_slowly:
            self.asked_slower = True
            self._ev(end_s, "accommodation_request", "the profile asks the question to be "
                     "repeated more slowly before answering")
            return self._reply("slower", end_s + self._delay(), end_s)
        if kind in ("question", "request"):
            return self._answer_turn(end_s, end_s + self._delay(), request=kind == "request")
        if kind == "closing":
            left = len(self.answers) - len(set(self.played))
            return self._hangup(end_s + self.hangup_delay_s,
                                "goodbye" + (f" with {left} answer(s) not given" if left else ""),
                                end_s)
        if kind == "soft_closing" and self.current < len(self.answers):
            self._ev(end_s, "closing_wait", f"a thank-you with {len(self.answers) - self.current}"
                     " answer(s) not given: waiting for a question")
        elif kind == "hold":
            self._ev(end_s, "waiting", "asked to hold: no cue from the silence")
        elif kind == "fragment":
            self._ev(end_s, "waiting", "the question was cut off: waiting for the full "
                     "question (no cue from the silence)")
        elif kind in ("greeting", "statement", "soft_closing"):
            self._ev(end_s, "waiting_for_cue", f"a {kind}: {self.cue_silence_s:g} s of "
                     "silence is the cue")
        if self.scheduled is not None and self.tentative:
            self._ev(end_s, "withdrawn", f"tentative answer: the utterance was a {kind}")
            self.scheduled, self.tentative = None, False
        return Action("none")

    def _answer_turn(self, end_s: float, at_s: float, request: bool = False,
                     cue: bool = False) -> Action:
        text = " ".join(self.turn)
        idx, sim, asked = self._match(text, end_s)
        if cue and (idx is None or idx in self.played):  # a cue asks for what is not given
            idx = self.current if self.current < len(self.answers) else None
            if idx is None:
                self._ev(end_s, "waiting", "a cue, but every answer was given")
                self.turn, self.turn_kind = [], ""
                return Action("none")
        if idx is None:
            self._ev(end_s, "skipped", f"not an answer in the bank: {text!r}")
            return self._reply("skip", at_s, end_s)
        a = self.answers[idx]
        at = end_s + a.response_delay_s if not cue else at_s
        if request and not cue and coverage(text, a.question_text) < COVERED:
            at = max(at, end_s + REQUEST_GAP_S)  # a request may go on after a pause
        self._asked = (asked, sim)
        if self.scheduled is not None and self.scheduled.kind == "answer" \
                and self.scheduled.index == idx:
            if self.tentative:
                self._ev(end_s, "tentative_confirmed", a.question_id)
            self.tentative = False
            return self.scheduled
        return self._schedule(idx, at, end_s)

    def _match(self, text: str, t_s: float) -> tuple[int | None, float | None, str]:
        """The answer the turn asks for, its similarity and the words that asked: the turn or
        its last sentences, whichever is most similar (a greeting before it is not asked)."""
        if not self.questions:  # no texts: the next answer in order
            return (self.current if self.current < len(self.answers) else None), None, text
        qid, sim, asked = self._best(text)
        qid = qid if sim >= self.match_threshold else None
        self._ev(t_s, "matched" if qid else "unmatched", f"{qid or '-'} {sim:.2f}")
        idx = next((i for i, a in enumerate(self.answers)
                    if a.question_id == qid and i not in self.played), None)
        if idx is None and qid is not None:
            idx = next((i for i, a in enumerate(self.answers) if a.question_id == qid), None)
        return idx, sim, asked

    def _delay(self) -> float:
        i = self.current if self.current < len(self.answers) else -1
        return self.answers[i].response_delay_s if self.answers else 0.5

    def _qid(self, i: int) -> str:
        return self.answers[i].question_id if 0 <= i < len(self.answers) else "-"

    def _best(self, text: str, qid: str | None = None) -> tuple[str | None, float, str]:
        """The bank question (``qid``: that one) most similar to ``text`` or to its last
        sentences, the similarity and those words (a greeting or thank-you before a question
        is not part of it; equal: the shorter)."""
        best: tuple[str | None, float, str] = (None, 0.0, text)
        parts = sentences(text)
        for k in range(len(parts)):
            sims = similarities(" ".join(parts[k:]), self.questions or {})
            q = qid if qid is not None else max(sims, key=lambda x: sims[x], default=None)
            if q is not None and 0 < sims.get(q, 0.0) >= best[1]:
                best = (q, sims[q], " ".join(parts[k:]))
        return best

    def _set_asked(self, info: dict, text: str, sim: float | None = None) -> None:
        """A play's ``asked_text`` and ``match_similarity`` (its words arrived late: matched
        to its own question)."""
        if sim is None and text and self.questions and info["question_id"] in self.questions:
            _, sim, text = self._best(text, info["question_id"])
        info["asked_text"], info["match_similarity"] = text, sim

    def _schedule(self, index: int, at_s: float, t_s: float, tentative: bool = False) -> Action:
        self.scheduled, self.tentative = Action("answer", at_s, index), tentative
        self._ev(t_s, "tentative_answer" if tentative else "answer_scheduled",
                 f"{self._qid(index)} at {at_s:.2f}")
        return self.scheduled

    def _replace(self, t_s: float, by: str) -> None:
        if self.scheduled is not None and self.scheduled.kind == "answer":
            self._ev(t_s, "withdrawn", f"answer {self._qid(self.scheduled.index)}: {by}")

    def _reply(self, reply: str, at_s: float, t_s: float) -> Action:
        self._replace(t_s, f"a {reply} reply instead")
        self.scheduled, self.tentative = Action("reply", at_s, reply=reply), False
        self._ev(t_s, "reply_scheduled", f"{reply} at {at_s:.2f}")
        return self.scheduled

    def _hangup(self, at_s: float, why: str, t_s: float | None = None) -> Action:
        t_s = at_s if t_s is None else t_s
        self._replace(t_s, "hanging up instead")
        self.scheduled, self.tentative = Action("hangup", at_s), False
        self._ev(t_s, "hangup_scheduled", f"{why}; at {at_s:.2f}")
        return self.scheduled
