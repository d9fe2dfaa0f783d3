"""The scorer interface: a narrow public ``score()`` around each backend's ``_complete()``
(and ``_complete_levels()`` for graded judging).

``score()`` owns prompting, parsing, timing, the time budget and errors; a backend only turns
(system, user, grammar, seed) into raw text, or, in ``expected`` mode
(:mod:`rig.scorer.levels`), into one distribution over the credit levels per criterion. A
backend error is recorded with ``parse_status="error"`` and the error text, a grading past
``budget_s`` with ``parse_status="timeout"`` (a remote endpoint's wall-clock budget; a local
backend sets none and is bounded by tokens, so load never changes its rows), a transcript
that does not fit the judge's context with ``parse_status="too_long"``
(:class:`TranscriptTooLong`: never cut to fit); none ever becomes a score.

Scoring modes (``scorer.mode`` in a pipeline):
    ``argmax``    the judge writes integer points per criterion (grammar-constrained, greedy
                  at temperature 0); the score is their sum.
    ``expected``  the judge's probability distribution over credit levels per criterion is
                  read from its logits; the score is the sum of expected points (G-Eval).

``complete()`` is the same path for callers that bring their own prompt, grammar and parser
(the probes of :mod:`rig.probes`): it returns a :class:`Completion` whose ``value`` is what the
caller's parser made of the reply, or None with a ``parse_status`` saying why not.
"""

from __future__ import annotations

import dataclasses
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from rig.answers import Question
from rig.errors import EngineUnavailable, ModelIntegrityError, ModelMissingError, RigError
from rig.scorer.levels import (
    CriterionGrade,
    levels_user_prompt_head,
    reply_text,
    score_levels,
)
from rig.scorer.prompt import (
    SYSTEM_PROMPT,
    ParseStatus,
    grammar,
    parse_reply,
    rubric_head,
    transcript_block,
)

ScoringMode = Literal["argmax", "expected"]

#: The process's gradings and completions at temperature 0, per scorer identity
#: (:meth:`Scorer.memo_identity`): two scorers built alike (the campaign's, a sweep's, a
#: replay's, in one process) grade an equal prompt once (issue 31 item 2).
_SHARED_MEMOS: dict[tuple, dict] = {}
#: False while :func:`rig.stages.memos_off` holds: every grading and completion runs the model
_MEMO_ON = [True]


class GradingTimeout(RigError):
    """A backend stopped a grading that ran past its deadline."""


class TranscriptTooLong(Exception):
    """A backend found that the prompt (rubric and transcript) and the room its reply needs
    exceed the judge's context window. The transcript is never cut to fit: the grading is
    recorded with ``parse_status='too_long'`` and no score (a deterministic verdict: the same
    transcript is always too long for the same judge and context size)."""


class ModeUnsupported(RigError):
    """The backend cannot grade in the requested mode (e.g. an OpenAI-compatible endpoint
    that returns no ``top_logprobs`` for ``expected`` mode). Stops a campaign: no call could
    be graded."""


@dataclass(frozen=True)
class LevelsReply:
    """A backend's ``expected``-mode reply: per criterion (rubric order) the probabilities of
    the credit levels 0..N_LEVELS-1, and the level it wrote at each position."""
    distributions: list[list[float]]
    chosen: dict[str, int]


@dataclass(frozen=True)
class ScoreResult:
    """One grading. ``score`` is 0-100 (a float: expected points in ``expected`` mode), or
    None when ``parse_status != 'ok'``. ``points`` is points per criterion; ``criteria``
    holds each criterion's :class:`~rig.scorer.levels.CriterionGrade` (with the level
    distribution, top probability and entropy in ``expected`` mode)."""
    score: float | None
    parse_status: ParseStatus
    raw: str
    reason: str | None
    points: dict[str, float] | None
    seconds: float
    temperature: float
    seed: int
    error: str | None = None
    mode: ScoringMode = "argmax"
    criteria: tuple[CriterionGrade, ...] | None = None

    @property
    def top_prob_min(self) -> float | None:
        """The least certain criterion's top-level probability (``expected`` mode)."""
        vals = [c.top_prob for c in self.criteria or () if c.top_prob is not None]
        return min(vals) if vals else None

    @property
    def entropy_mean_bits(self) -> float | None:
        """Mean entropy of the criteria's level distributions, bits (``expected`` mode)."""
        vals = [c.entropy_bits for c in self.criteria or () if c.entropy_bits is not None]
        return sum(vals) / len(vals) if vals else None


V = TypeVar("V")


@dataclass(frozen=True)
class Parsed(Generic[V]):
    """What a caller's parser made of a raw reply: ``value`` only when ``status == 'ok'``;
    ``detail`` says what was wrong otherwise."""
    status: ParseStatus
    value: V | None = None
    detail: str = ""


@dataclass(frozen=True)
class Completion(Generic[V]):
    """One prompt run through a backend and a caller's parser.

    ``value`` is None unless ``parse_status == 'ok'``: a reply that does not parse, or parses
    to something out of range, keeps its ``raw`` text and ``error`` (the parser's detail, or
    the backend's error for ``parse_status == 'error'``) and is never a value. ``cached`` is
    True when the raw reply was reused from an identical earlier prompt at temperature 0.
    """
    value: V | None
    parse_status: ParseStatus
    raw: str
    seconds: float
    temperature: float
    seed: int
    error: str | None = None
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.parse_status == "ok"


def forget_gradings() -> None:
    """Clear every shared memo of this process (:meth:`Scorer.memo_identity`): the next
    grading of any prompt is computed afresh (a test that counts the judge's work)."""
    _SHARED_MEMOS.clear()


class Scorer(ABC):
    """Grades a transcript against a question's rubric."""

    name: str = "scorer"
    temperature: float = 0.0
    with_reason: bool = False
    mode: ScoringMode = "argmax"
    #: seconds one grading may take; past it the grading is a ``timeout`` (None: no limit).
    #: Remote endpoints only: a local backend leaves it None (bounded by tokens, not time)
    budget_s: float | None = None
    #: the same prompt at temperature 0 always gives the same reply (llama.cpp here: yes; a
    #: remote endpoint: not promised), so :meth:`score` may reuse a grading within a process
    reproducible_at_zero: bool = True

    def score(self, question: Question, transcript: str, seed: int) -> ScoreResult:
        """Grade ``transcript`` for ``question`` in this scorer's ``mode``. Never raises for a
        reply or a backend failure (those are recorded); raises :class:`RigError` when the
        scorer cannot run at all (a missing model package or engine, an unsupported mode).

        At temperature 0 an identical (rubric, transcript) pair is graded once per process
        and the result reused (``seconds=0``), for backends that are ``reproducible_at_zero``
        (a remote endpoint is asked again: its repeats are real), also across scorers with
        the same :meth:`memo_identity`. That hides nothing: llama.cpp
        evaluates a prompt the same way whatever was graded before it (the rubric prefix and
        the transcript as two fixed batches), so a fresh process gives the same grade.
        """
        key = (question.rubric_hash, transcript.strip(), self.mode)
        memoise = self.temperature == 0 and self.reproducible_at_zero and _MEMO_ON[0]
        if memoise and key in self._memo:
            return dataclasses.replace(self._memo[key], seed=seed, seconds=0.0)
        t0 = time.perf_counter()
        deadline = time.monotonic() + self.budget_s if self.budget_s else None
        try:
            if self.mode == "expected":
                res = self._score_expected(question, transcript, seed, deadline)
            else:
                head = rubric_head(question, self.with_reason)
                raw = self._complete(SYSTEM_PROMPT, head + transcript_block(transcript),
                                     grammar(question, self.with_reason), seed, head=head,
                                     deadline=deadline)
                parsed = parse_reply(raw, question)
                crit = (tuple(CriterionGrade(c.id, c.points, float(parsed.points[c.id]))
                              for c in question.rubric) if parsed.points else None)
                res = ScoreResult(parsed.score, parsed.status, raw, parsed.reason,
                                  parsed.points, 0.0, self.temperature, seed,
                                  parsed.detail or None, "argmax", crit)
        except GradingTimeout as exc:
            res = self._timeout(seed, str(exc))
        except TranscriptTooLong as exc:
            res = ScoreResult(None, "too_long", "", None, None, 0.0, self.temperature, seed,
                              str(exc), self.mode)
        except RigError:
            # a missing model package or engine is not a reply: the call fails (and is retried
            # on resume) instead of being recorded as a scorer failure
            raise
        except Exception as exc:  # any backend failure is recorded, the campaign goes on
            res = ScoreResult(None, "error", "", None, None, 0.0, self.temperature, seed,
                              f"{type(exc).__name__}: {exc}", self.mode)
        seconds = time.perf_counter() - t0
        if deadline is not None and res.parse_status != "timeout" and seconds > self.budget_s:
            res = self._timeout(seed, f"took {seconds:.1f} s", raw=res.raw)
        res = dataclasses.replace(res, seconds=seconds)
        if memoise and res.parse_status not in ("error", "timeout"):
            self._memo[key] = res
        return res

    def _timeout(self, seed: int, detail: str, raw: str = "") -> ScoreResult:
        return ScoreResult(None, "timeout", raw, None, None, 0.0, self.temperature, seed,
                           f"grading over its budget of {self.budget_s:g} s ({detail})",
                           self.mode)

    def _score_expected(self, question: Question, transcript: str, seed: int,
                        deadline: float | None) -> ScoreResult:
        head = levels_user_prompt_head(question)
        reply = self._complete_levels(SYSTEM_PROMPT, head, transcript_block(transcript),
                                      [c.id for c in question.rubric], seed,
                                      deadline=deadline)
        lv = score_levels(question, reply.distributions)
        points = {g.criterion_id: g.points for g in lv.criteria} if lv.criteria else None
        return ScoreResult(lv.score, lv.status, reply_text(reply.chosen), None, points, 0.0,
                           self.temperature, seed, lv.detail or None, "expected", lv.criteria)

    def _complete_levels(self, system: str, head: str, tail: str,
                         criterion_ids: list[str], seed: int, *,
                         deadline: float | None = None) -> LevelsReply:
        """``expected`` mode: the user message is ``head + tail``; return, per criterion in
        order, the probabilities of levels 0..N_LEVELS-1 at the position where the judge
        writes that criterion's level (see :mod:`rig.scorer.levels`)."""
        raise ModeUnsupported(f"the {self.name} scorer backend cannot grade in expected mode")

    def complete(self, system: str, user: str, *, grammar: str,
                 parse: Callable[[str], Parsed[V]], seed: int) -> Completion[V]:
        """Run a caller's own prompt through the backend and parse the reply.

        Raises only when the scorer cannot run at all (a missing model package or engine, a
        model failing its checksum); every other failure, an endpoint's error included, is a
        :class:`Completion` with ``parse_status='error'`` and the error text.

        Args:
            system, user: the chat messages.
            grammar: GBNF constraining the reply; backends that cannot take a grammar (an
                OpenAI-compatible endpoint) ignore it, so ``parse`` must check everything.
            parse: raw text -> :class:`Parsed`; an exception in it is recorded as
                ``parse_status='error'``.
            seed: the sampling seed (no part at temperature 0).

        At temperature 0 an identical (system, user, grammar) prompt is sent once per process
        and its raw reply reused (``cached=True``, ``seconds=0``), as :meth:`score` does.
        A backend failure is not memoised: the next call tries again.
        """
        key = (system, user, grammar)
        memo = self._complete_memo
        cached = self.temperature == 0 and _MEMO_ON[0] and key in memo
        t0 = time.perf_counter()
        if cached:
            raw = memo[key]
        else:
            try:
                raw = self._complete(system, user, grammar, seed)
            except (ModeUnsupported, ModelMissingError, ModelIntegrityError, EngineUnavailable):
                raise  # setup, not a reply: the caller stops with the install hint
            except TranscriptTooLong as exc:  # never cut to fit: recorded, not answered
                return Completion(None, "too_long", "", time.perf_counter() - t0,
                                  self.temperature, seed, str(exc))
            except Exception as exc:  # a backend failure is recorded, the caller goes on
                return Completion(None, "error", "", time.perf_counter() - t0,
                                  self.temperature, seed, f"{type(exc).__name__}: {exc}")
            if self.temperature == 0 and _MEMO_ON[0]:
                memo[key] = raw
        seconds = 0.0 if cached else time.perf_counter() - t0
        try:
            parsed = parse(raw)
        except Exception as exc:
            return Completion(None, "error", raw, seconds, self.temperature, seed,
                              f"parser raised {type(exc).__name__}: {exc}", cached)
        value = parsed.value if parsed.status == "ok" else None
        return Completion(value, parsed.status, raw, seconds, self.temperature, seed,
                          parsed.detail or None, cached)

    def prefix_cache_stats(self) -> dict[str, int]:
        """Prompt-prefix cache counts since this scorer was made: ``hits`` (a grading found
        its rubric prefix still evaluated in the backend's KV cache, or restored a copy of
        it, and evaluated only the rest) and ``misses`` (the prefix was evaluated afresh).
        A backend that keeps no prefix state of its own (a remote endpoint) reports zeros;
        graded replies reused from the in-process memo are neither."""
        return {"hits": 0, "misses": 0}

    def memo_identity(self) -> tuple | None:
        """What makes two scorers of this backend give the same reply to the same prompt at
        temperature 0: scorers with equal identities share one memo per process. None (the
        default) keeps a memo for this instance alone; a backend whose replies depend only on
        its settings (the embedded judge: model, reply cap, context, offload) returns them."""
        return None

    def _memo_for(self, kind: str) -> dict:
        ident = self.memo_identity()
        if ident is None:
            return self.__dict__.setdefault(f"_{kind}_memo_store", {})
        return _SHARED_MEMOS.setdefault((kind, *ident), {})

    @property
    def _memo(self) -> dict:
        """Gradings by (rubric hash, stripped transcript, mode), shared per
        :meth:`memo_identity`; ``clear()`` forgets this identity's gradings."""
        return self._memo_for("score")

    @property
    def _complete_memo(self) -> dict:
        """Raw replies by (system, user, grammar), shared as :attr:`_memo` is."""
        return self._memo_for("complete")

    @abstractmethod
    def _complete(self, system: str, user: str, grammar: str, seed: int, *, head: str = "",
                  deadline: float | None = None) -> str:
        """Return the model's raw reply text.

        ``head``: a prefix of ``user`` shared by many requests (the rubric), which a backend
        may keep evaluated; ``deadline``: a :func:`time.monotonic` time after which the
        backend may stop and raise :class:`GradingTimeout`."""
