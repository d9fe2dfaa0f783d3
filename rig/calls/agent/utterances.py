"""What an interviewer's turn does, from its words: :func:`classify_utterance`.

The caller agent (:mod:`rig.calls.agent.brain`) answers only when the interviewer has *asked*
something. A turn (the interviewer's utterances since the agent last spoke, joined) is
classified by its sentences, in this order:

``repeat_request``  "could you repeat that", "sorry, I didn't catch that" anywhere;
``hold``            the last sentence asks for a moment ("Could I please have a moment?",
                    "Can you hold on a second?"), even with a ``?``: the interviewer will go on;
``small_talk``      the last sentence is a question of :data:`SMALL_TALK` ("How are you?",
                    "How are you today?", "How can I assist you today?", "Can you hear me?",
                    "Are you ready?");
``fragment``        the last sentence was cut off: a trailing ``-``/``...``, or no closing
                    ``.?!``, at most :data:`FRAGMENT_MAX_WORDS` words and an opening that leads
                    to a question ("Can you", "Could you tell me", "What was"); the agent
                    waits for the full question;
``question``        the last sentence ends in ``?``;
``closing``         the last sentence says goodbye ("Goodbye.", "That's all the questions I
                    have.", "Have a nice day."): the interviewer ends the call;
``request``         a sentence asks for an answer without a question mark ("Tell me about
                    ...", "Please describe ...", "Walk me through ...");
``hold``            "Please hold on", "One moment", "Bear with me": the interviewer will go on;
``greeting``        "Hello", "Good day", "Welcome" (and no question or request);
``soft_closing``    "Thank you (for your time)", "Thanks for sharing" (and nothing above):
                    a thank-you that may close the call or lead to the next question;
``statement``       anything else.

So "Thank you for your time. Before we proceed, could you tell me your name?" is a
``question`` (the turn ends in one), not a closing, and "Good day. Thank you for your time." is
a ``greeting``. What the agent does with each kind is in :class:`rig.calls.agent.brain.AgentBrain`.
"""

from __future__ import annotations

import re
from typing import Literal

UtteranceKind = Literal["repeat_request", "small_talk", "question", "closing", "request",
                        "hold", "greeting", "soft_closing", "statement", "fragment"]

#: Small-talk reply kinds and what the agent says (rendered in the profile's voice).
REPLY_TEXTS: dict[str, str] = {
    "greeting": "Hello, I'm here for the interview.",
    "wellbeing": "I'm well, thank you.",
    "hearing": "Yes, I can hear you.",
    "ready": "Yes, I'm ready.",
    "skip": "I'm sorry, I don't have an answer for that one.",
    "backchannel": "Mm-hm.",
    "slower": "Could you repeat that more slowly, please?",
}

#: Small-talk questions and the reply kind each gets, first match wins.
SMALL_TALK: tuple[tuple[re.Pattern, str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), k) for p, k in (
        (r"\bhow (are|r) (you|ya)\b|\bhow('s| is) (it going|your day)\b|\bhow do you do\b",
         "wellbeing"),
        (r"\b(can|could|do) you hear me\b|\bam i (coming through|audible)\b", "hearing"),
        (r"\bare you ready\b|\bshall we (begin|start)\b|\bready to (begin|start)\b", "ready"),
        (r"\bhow (can|may|could) i (help|assist)\b|\bwhat can i do for you\b|"
         r"\bwho (am i|is this) speaking (to|with)\b", "greeting"),
    ))

_REPEAT = re.compile(
    r"\b(repeat|say (that|it) again|didn'?t (quite )?(catch|hear|get|understand)|come again|"
    r"pardon|couldn'?t (hear|understand)|one more time)\b", re.IGNORECASE)
_FAREWELL = re.compile(
    r"\b(good ?bye|bye|that'?s all|that is all|that concludes|end of (the|our) interview|"
    r"have a (nice|good|great) (day|evening|one)|take care)\b", re.IGNORECASE)
_REQUEST = re.compile(
    r"\b(tell me|tell us|describe|walk (me|us) through|explain|talk (me |us )?about|share|"
    r"give (me|us) an example|i'?d like to hear|i would like to hear|let'?s (talk|hear))\b",
    re.IGNORECASE)
_GREETING = re.compile(r"\b(hello|hi|hey|good (morning|afternoon|evening|day)|welcome|"
                       r"nice to (meet|speak))\b", re.IGNORECASE)
_HOLD = re.compile(r"\b(hold on|hold the line|one moment|just a (moment|second|sec)|bear with me|"
                   r"give me a (moment|second|sec)|(have|take|need) a (moment|second|sec|minute)|"
                   r"(wait|hold) (a|one) (moment|second|sec|minute))\b", re.IGNORECASE)
#: Openings that lead into a question or request: a last sentence that starts so and has no
#: closing punctuation was cut off (the interviewer was interrupted, or restarts).
_OPENING = re.compile(
    r"^(can|could|would|will|do|did|have|are|is|what|how|why|when|where|which|who|tell|"
    r"describe|walk|please|so|and|let'?s|i'?d like)\b", re.IGNORECASE)
_THANKS = re.compile(r"\b(thank you|thanks)\b", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    """``text`` split after ``.``, ``?`` and ``!`` (empty pieces dropped)."""
    return [s.strip() for s in re.split(r"(?<=[.?!])\s+", text.strip()) if s.strip()]


def classify_utterance(text: str) -> UtteranceKind:
    """The kind of an interviewer turn (see the module docs for the rules and their order)."""
    parts = sentences(text)
    if not parts:
        return "statement"
    last = parts[-1]
    if _REPEAT.search(text):
        return "repeat_request"
    if _HOLD.search(last) and not _REQUEST.search(last):
        return "hold"
    if is_fragment(last):
        return "fragment"
    if last.endswith("?"):
        return "small_talk" if small_talk_reply(last) else "question"
    if _FAREWELL.search(last):
        return "closing"
    if any(_REQUEST.search(s) for s in parts):
        return "request"
    if _HOLD.search(last):
        return "hold"
    if _GREETING.search(text):
        return "greeting"
    if _THANKS.search(text):
        return "soft_closing"
    return "statement"


#: An unpunctuated opening longer than this is taken as said whole (the ASR left out the mark).
FRAGMENT_MAX_WORDS = 5


def is_fragment(sentence: str) -> bool:
    """The sentence was cut off: it ends in ``-``, ``...`` or ``…``, or it has no closing
    ``.?!`` and opens like a question or request ("Can you", "Tell me about")."""
    s = sentence.strip()
    if s.endswith(("-", "...", "…", "—")):
        return True
    return (not s.endswith((".", "?", "!")) and len(s.split()) <= FRAGMENT_MAX_WORDS
            and bool(_OPENING.match(s)))


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def is_restart(before: str, text: str) -> bool:
    """``text`` says ``before`` again: ``before`` was cut off (:func:`is_fragment`) and ``text``
    opens with its words, or ``text`` opens with ``before``'s first four words or more (the
    interviewer restarted its question)."""
    a, b = _words(before), _words(text)
    parts = sentences(before)
    if not a:
        return False
    if is_fragment(parts[-1] if parts else before):
        return b[:len(a)] == a
    return len(a) >= 4 and b[:4] == a[:4]


def small_talk_reply(text: str) -> str | None:
    """The reply kind (a key of :data:`REPLY_TEXTS`) of a small-talk question, or None."""
    return next((k for p, k in SMALL_TALK if p.search(text)), None)
