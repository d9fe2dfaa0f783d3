"""Which bank question an interviewer asked: :func:`match_question` by text similarity.

A bot that knows nothing about rig words its questions its own way ("Can you describe a
situation where you and a colleague disagreed?" for the bank's "Tell me about a time you
disagreed with a coworker ..."), and the caller agent hears them through its own ASR. The
matcher is fast and offline (no model: it runs on every interviewer turn, in the real-time
loop): TF-IDF cosine over normalised content words.

Method:
- Normalise each text: lower case, words only (``[a-z0-9']+``), contractions' ``'s``/``n't``
  dropped, a small synonym map folded (``colleague`` -> ``coworker``, ``client`` ->
  ``customer``, ...: :data:`SYNONYMS`), stop words and interview boilerplate removed
  (:data:`STOP_WORDS`: "tell me about a time", "can you describe", "walk me through" carry no
  content: every question of a bank has them), then a crude suffix stemmer
  (:func:`stem`: ``handle``/``handled``/``handling``/``handles`` -> ``handl``).
- Weights: term frequency times smoothed inverse document frequency over the candidate
  questions, ``idf(w) = ln((1 + N) / (1 + df(w))) + 1`` (scikit-learn's ``smooth_idf``
  default), so a word shared by every candidate counts less than one that tells them apart;
  a word of the text that no candidate has weighs 1 (as a word every candidate has).
- Similarity: the cosine of the two weight vectors, in [0, 1].

The threshold :data:`MATCH_THRESHOLD` (0.3) was set on ``answer_bank/core``'s ten questions
(``tests/test_agent_question_match_unit.py``): the bank's own texts through ASR-like errors score
0.8-1.0, human paraphrases 0.45-0.9 (the runner-up at least 0.15 lower, under 0.35), and
off-bank questions ("What are your salary expectations?", "Where do you see yourself in five
years?", "Good day. Thank you for your time.") under 0.2, against the whole bank or any one
question alone.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping

#: A question whose best similarity is below this is not in the bank (see the module docs).
MATCH_THRESHOLD = 0.3

#: Words folded to one form before matching (both sides).
SYNONYMS: dict[str, str] = {
    "colleague": "coworker", "colleagues": "coworker", "co-worker": "coworker",
    "coworkers": "coworker", "teammate": "coworker", "teammates": "coworker",
    "client": "customer", "clients": "customer", "customers": "customer",
    "mistake": "error", "mistakes": "error", "errors": "error",
    "angry": "upset", "frustrated": "upset", "irate": "upset",
    "problem": "issue", "problems": "issue", "issues": "issue",
    "deal": "handle", "dealt": "handle", "manage": "handle", "managed": "handle",
    "approached": "approach", "tackle": "approach", "tackled": "approach",
    "position": "role", "situation": "time", "occasion": "time",
    "disagreement": "disagree", "disagreed": "disagree", "conflict": "disagree",
    "better": "improve", "improvement": "improve", "improved": "improve",
    "quota": "goal", "target": "goal", "targets": "goal",
    "last": "recent", "latest": "recent", "previous": "recent", "current": "recent",
}

#: Function words and interview boilerplate (every question has them).
_STOP = """
a about above after again all also am an and any are as at be been before being below between
both but by can could did do does doing done during each either few for from further get got
had has have having he her here hers him his how i if in into is it its itself just let lets me
more most my myself no nor not now of off on once only or other our ours out over own please
same she should so some such than that the their them then there these they this those through
to too under until up very was we were what when where which while who whom why will with would
you your yours yourself us ok okay well right great thanks thank work job
tell describe walk share explain talk give example examples time times something anything
question questions next first one like kind sort really might may maybe think thing things
day today see
"""
STOP_WORDS = frozenset(_STOP.split())


def stem(word: str) -> str:
    """A crude English suffix stemmer: ``handle``, ``handled``, ``handling``, ``handles``
    -> ``handl``."""
    for suffix in ("ingly", "edly", "ing", "ed", "es", "ly", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) >= 5 else word


def content_words(text: str) -> list[str]:
    """The normalised content words of ``text`` (see the module docs), in order."""
    out: list[str] = []
    for w in re.findall(r"[a-z0-9][a-z0-9'-]*", text.lower()):
        w = re.sub(r"('s|n't|'re|'ve|'ll|'d|'m)$", "", w).strip("'-")
        w = SYNONYMS.get(w, w)
        if w and w not in STOP_WORDS:
            out.append(stem(w))
    return out


def _vector(words: Iterable[str], idf: Mapping[str, float], default_idf: float
            ) -> dict[str, float]:
    tf = Counter(words)
    return {w: n * idf.get(w, default_idf) for w, n in tf.items()}


def _cosine(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    dot = sum(v * b.get(w, 0.0) for w, v in a.items())
    na = math.sqrt(sum(v * v for v in a.values()))
    nb = math.sqrt(sum(v * v for v in b.values()))
    return dot / (na * nb) if na and nb else 0.0


Questions = Mapping[str, str] | Iterable[tuple[str, str]]


def _pairs(questions: Questions) -> list[tuple[str, str]]:
    """``questions`` as (id, text) pairs: a mapping id -> text, or (id, text) pairs."""
    items = questions.items() if isinstance(questions, Mapping) else questions
    return [(str(qid), str(text)) for qid, text in items]


def similarities(text: str, questions: Questions) -> dict[str, float]:
    """TF-IDF cosine of ``text`` with each of ``questions`` (id -> text, or (id, text)
    pairs), in [0, 1]."""
    docs = {qid: content_words(q) for qid, q in _pairs(questions)}
    n = len(docs)
    df = Counter(w for words in docs.values() for w in set(words))
    idf = {w: math.log((1 + n) / (1 + d)) + 1 for w, d in df.items()}
    default = 1.0  # a word no candidate has: the weight of a word every candidate has
    query = _vector(content_words(text), idf, default)
    return {qid: _cosine(query, _vector(words, idf, default)) for qid, words in docs.items()}


def match_question(text: str, questions: Questions,
                   threshold: float = MATCH_THRESHOLD) -> tuple[str | None, float]:
    """The bank question ``text`` asks, by text similarity.

    Args:
        text: what the interviewer said (its ASR transcript, or the bot's own text).
        questions: the candidate bank questions: question id -> question text, or
            ``(question_id, question_text)`` pairs.
        threshold: the least similarity of a match (default :data:`MATCH_THRESHOLD`).

    Returns:
        ``(question_id, similarity)`` of the most similar question when its similarity is at
        least ``threshold``, else ``(None, best similarity)`` (0.0 without candidates or
        content words). Ties go to the first question in ``questions``' order.
    """
    sims = similarities(text, questions)
    if not sims:
        return None, 0.0
    best = max(sims, key=lambda q: sims[q])  # first of equals: dicts keep order
    return (best if sims[best] >= threshold else None), sims[best]


def coverage(text: str, question: str) -> float:
    """The share (0-1) of ``question``'s distinct content words that ``text`` contains: how
    much of a bank question the interviewer has said so far (1.0 for a question without
    content words)."""
    want = set(content_words(question))
    return len(want & set(content_words(text))) / len(want) if want else 1.0
