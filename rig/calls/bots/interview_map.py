"""A bot's whole interview mapped to answers: which question each answer answered, how the
bot asked it, what the bot heard of it, and the questions it asked that no answer was for.

Input: what the caller agent did (:class:`rig.calls.agent.loop.AgentResult`: its plays and the
interviewer's utterances as it heard them) and what the bot said and heard
(:class:`rig.calls.bots.record.BotRecord`). Every time is on the call clock: seconds from the
agent's connect (``AgentResult.t0_epoch_s``); a ``BotRecord``'s times are taken on the same clock
(the in-process transport and the WebRTC link stamp them from the connect).

Per answer played (:class:`AnswerSpan`): the bot's turn it answered (``asked_text``: the play's
own ``asked_text`` when the agent heard it, else the last bot turn that started before the
answer), the similarity of that text to the bank's question (the play's own, else
:func:`default_matcher`'s: :mod:`rig.calls.agent.question_match`), the answer's span on the call
clock (from its first frame to the bot's next turn, the next answer or the call's end,
whichever is first: ``end_by`` says which) and the bot's own transcript of it (``heard_text``:
its ``heard`` entries inside the span). A repeat request answered again gives a second span for
the same question, ``repeat`` True; the graded span of a question is its last
(:meth:`InterviewMap.graded`), and its ``asked_text`` stays the question's, not the repeat
request's.

Bot turns that no answer followed and that read as a question (a question mark, or a request
such as "tell me about ...") are ``unanswered`` (with the bank question they match, if any):
a follow-up, an off-bank question, or a bank question not planned in this call. They are
recorded (the call's ``<call_id>.interview.json``) and graded by no one.

The runner's contract is one row per planned call: the planned answer's graded span gives the
row (:mod:`rig.calls.run.caller`); the rest goes to the recording log.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from rig.calls.bots.record import BotRecord, BotTurn

#: Words that make a turn with no question mark a request for an answer
REQUEST_RE = re.compile(r"\b(tell me|describe|walk me through|explain|talk about|share|"
                        r"give me an example|can you|could you|would you|what|how|why)\b",
                        re.IGNORECASE)
#: The least similarity (0-1, :func:`text_similarity`) at which a bot turn is taken as a bank
#: question, when no matcher from :mod:`rig.calls.agent.question_match` is at hand. On the unit
#: tests' paraphrases the right question scores 0.6-0.9 and the others 0.1-0.37.
MATCH_THRESHOLD = 0.5


def _trigrams(text: str) -> Counter:
    t = " " + " ".join(re.findall(r"[a-z0-9']+", text.lower())) + " "
    return Counter(t[i:i + 3] for i in range(len(t) - 2))


def text_similarity(a: str, b: str) -> float:
    """Cosine of the two texts' character-trigram counts (lower case, punctuation out), 0-1:
    tolerant of paraphrase ("the last job you had" / "your most recent job"), inflection and
    ASR spelling. The fallback matcher when :mod:`rig.calls.agent.question_match` is not
    installed."""
    ca, cb = _trigrams(a), _trigrams(b)
    dot = sum(ca[w] * cb[w] for w in ca)
    na = sum(v * v for v in ca.values()) ** 0.5
    nb = sum(v * v for v in cb.values()) ** 0.5
    return dot / (na * nb) if na and nb else 0.0


def default_matcher() -> Callable[[str, Sequence[tuple[str, str]]], tuple[str | None, float]]:
    """``(text, [(question_id, question_text), ...]) -> (question_id or None, similarity)``:
    the caller agent's matcher, :func:`rig.calls.agent.question_match.match_question` (TF-IDF
    cosine, its threshold) when present, else :func:`text_similarity` with
    :data:`MATCH_THRESHOLD`."""
    try:
        from rig.calls.agent.question_match import match_question
    except ImportError:
        match_question = None
    if match_question is not None:
        def agent_match(text: str, questions: Sequence[tuple[str, str]]
                        ) -> tuple[str | None, float]:
            qid, sim = match_question(text, dict(questions))
            return qid, round(float(sim), 4)
        return agent_match

    def match(text: str, questions: Sequence[tuple[str, str]]) -> tuple[str | None, float]:
        best = max(((text_similarity(text, q), qid) for qid, q in questions),
                   default=(0.0, None))
        return (best[1] if best[0] >= MATCH_THRESHOLD else None), round(best[0], 4)
    return match


def is_question(text: str) -> bool:
    """A bot turn that asks for an answer: it holds a question mark or a request."""
    return "?" in text or bool(REQUEST_RE.search(text))


@dataclass(frozen=True)
class AnswerSpan:
    """One answer played. Times: s on the call clock.

    ``start_s`` its first frame; ``origin_s`` where the rendered answer's word timings start
    (``start_s`` minus the response delay); ``end_s`` where the rig takes the answer's turn as
    over, ``end_by`` ``interviewer_spoke`` (the bot's next turn started), ``next_answer`` or
    ``call_end``; ``asked_text`` the bot's words for the question, ``match_similarity`` their
    similarity to the bank's question (0-1, None when not computed); ``heard_text`` the bot's
    transcript of the answer (None when the bot exposes none)."""
    question_id: str
    play_index: int
    repeat: bool
    start_s: float
    origin_s: float
    end_s: float
    end_by: str
    asked_text: str | None
    match_similarity: float | None
    heard_text: str | None


@dataclass(frozen=True)
class UnansweredTurn:
    """A bot turn that asked something no answer followed: ``matched_question_id`` the bank
    question it matches (None: off-bank, e.g. a follow-up), ``similarity`` 0-1."""
    start_s: float | None
    text: str
    matched_question_id: str | None
    similarity: float


@dataclass(frozen=True)
class InterviewMap:
    """The interview as answers (:class:`AnswerSpan`, in play order), the questions left
    unanswered and the bot's turns it was built from."""
    answers: tuple[AnswerSpan, ...]
    unanswered: tuple[UnansweredTurn, ...]
    said: tuple[BotTurn, ...]

    def graded(self, question_id: str) -> AnswerSpan | None:
        """The span of ``question_id`` that is graded: its last play (an answer given again
        after a repeat request replaces the first), or None when it was never played."""
        spans = [a for a in self.answers if a.question_id == question_id]
        return spans[-1] if spans else None

    def said_text(self) -> str:
        """Every bot turn's text, in order, joined with `` | ``."""
        return " | ".join(t.text for t in self.said if t.text.strip())

    def to_dict(self) -> dict:
        return {"answers": [asdict(a) for a in self.answers],
                "unanswered": [asdict(u) for u in self.unanswered],
                "said": [asdict(t) for t in self.said]}


def agent_turns(agent) -> tuple[BotTurn, ...]:
    """The bot's turns as the caller agent heard them (its VAD's utterances paired with its
    ASR's text by their end), for a transport that gives no :class:`BotRecord` of its own."""
    texts = {round(end, 3): text for end, text in agent.heard}
    out = []
    for start, end in agent.utterances:
        text = texts.get(round(end, 3))
        if text is not None:
            out.append(BotTurn(start, end, text))
    return tuple(out)


def map_interview(agent, record: BotRecord | None,
                  questions: Sequence[tuple[str, str]] = (),
                  matcher: Callable | None = None) -> InterviewMap:
    """Map one call (see the module docstring).

    Args:
        agent: the caller agent's :class:`rig.calls.agent.loop.AgentResult` (``plays`` may carry
            ``asked_text`` and ``match_similarity``; older plays do not).
        record: the bot's record; None or one with no ``said``: the agent's view
            (:func:`agent_turns`) gives the bot's turns.
        questions: ``(question_id, question_text)`` of the bank, for the similarities and
            the unanswered turns' matches.
        matcher: as :func:`default_matcher` returns (default: that).
    """
    said = tuple(record.said) if record is not None and record.said else agent_turns(agent)
    heard = tuple(record.heard) if record is not None else ()
    match = matcher or default_matcher()
    qtext = dict(questions)
    t0, end_call = agent.t0_epoch_s, agent.duration_s
    starts = [p.start_epoch_s - t0 for p in agent.plays]
    spans: list[AnswerSpan] = []
    first_asked: dict[str, tuple[str | None, float | None]] = {}
    for i, p in enumerate(agent.plays):
        start = starts[i]
        nxt_bot = [t.start_s for t in said if t.start_s is not None and t.start_s > start]
        nxt_play = starts[i + 1] if i + 1 < len(starts) else None
        end, end_by = end_call, "call_end"
        if nxt_play is not None and nxt_play < end:
            end, end_by = nxt_play, "next_answer"
        if nxt_bot and min(nxt_bot) < end:
            end, end_by = min(nxt_bot), "interviewer_spoke"
        asked = getattr(p, "asked_text", None) or None  # "": its words never arrived
        sim = getattr(p, "match_similarity", None) if asked else None
        if p.repeat and p.question_id in first_asked:
            asked, sim = first_asked[p.question_id]
        if asked is None:
            before = [t for t in said if t.start_s is not None and t.start_s <= start]
            asked = before[-1].text if before else None
        if sim is None and asked and p.question_id in qtext:
            sim = match(asked, [(p.question_id, qtext[p.question_id])])[1]
        first_asked.setdefault(p.question_id, (asked, sim))
        inside = [txt for t, txt in heard if start - 0.5 <= t < end + 0.5]
        spans.append(AnswerSpan(p.question_id, i, bool(p.repeat), start,
                                p.origin_epoch_s - t0, end, end_by, asked, sim,
                                " ".join(inside).strip() if heard else None))
    unanswered = []
    for j, turn in enumerate(said):
        if turn.start_s is None or not is_question(turn.text):
            continue
        nxt = said[j + 1].start_s if j + 1 < len(said) else None
        answered = any(s >= turn.start_s and (nxt is None or s < nxt) for s in starts)
        if answered:
            continue
        qid, sim = match(turn.text, questions) if questions else (None, 0.0)
        unanswered.append(UnansweredTurn(turn.start_s, turn.text, qid, float(sim)))
    return InterviewMap(tuple(spans), tuple(unanswered), said)
