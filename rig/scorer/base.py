"""The scorer interface: a narrow public ``score()`` around each backend's ``_complete()``.

``score()`` owns prompting, parsing, timing and errors; a backend only turns (system, user,
grammar, seed) into raw text. A backend error is recorded with ``parse_status="error"`` and
the error text; it never becomes a score.

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
from typing import Generic, TypeVar

from rig.answers import Question
from rig.errors import EngineUnavailable, ModelIntegrityError, ModelMissingError, RigError
from rig.scorer.prompt import SYSTEM_PROMPT, ParseStatus, grammar, parse_reply, user_prompt


@dataclass(frozen=True)
class ScoreResult:
    """One grading. ``score`` is 0-100, or None when ``parse_status != 'ok'``."""
    score: float | None
    parse_status: ParseStatus
    raw: str
    reason: str | None
    points: dict[str, int] | None
    seconds: float
    temperature: float
    seed: int
    error: str | None = None


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


class Scorer(ABC):
    """Grades a transcript against a question's rubric."""

    name: str = "scorer"
    temperature: float = 0.0
    with_reason: bool = False

    def score(self, question: Question, transcript: str, seed: int) -> ScoreResult:
        """Grade ``transcript`` for ``question``. Never raises.

        At temperature 0 decoding is greedy and the seed plays no part, so an identical
        (rubric, transcript) pair is graded once per process and the result reused: repeats of
        a call whose audio did not change then agree exactly, as they would on a fresh model.
        """
        key = (question.rubric_hash, transcript.strip())
        if self.temperature == 0 and key in self._memo:
            return dataclasses.replace(self._memo[key], seed=seed, seconds=0.0)
        t0 = time.perf_counter()
        try:
            raw = self._complete(SYSTEM_PROMPT,
                                 user_prompt(question, transcript, self.with_reason),
                                 grammar(question, self.with_reason), seed)
        except RigError:
            # a missing model package or engine is not a reply: the call fails (and is retried
            # on resume) instead of being recorded as a scorer failure
            raise
        except Exception as exc:  # any backend failure is recorded, the campaign goes on
            return ScoreResult(None, "error", "", None, None, time.perf_counter() - t0,
                               self.temperature, seed, f"{type(exc).__name__}: {exc}")
        parsed = parse_reply(raw, question)
        res = ScoreResult(parsed.score, parsed.status, raw, parsed.reason, parsed.points,
                          time.perf_counter() - t0, self.temperature, seed,
                          parsed.detail or None)
        if self.temperature == 0:
            self._memo[key] = res
        return res

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
        memo = self.__dict__.setdefault("_complete_memo", {})
        cached = self.temperature == 0 and key in memo
        t0 = time.perf_counter()
        if cached:
            raw = memo[key]
        else:
            try:
                raw = self._complete(system, user, grammar, seed)
            except (ModelMissingError, ModelIntegrityError, EngineUnavailable):
                raise  # setup, not a reply: the caller stops with the install hint
            except Exception as exc:  # a backend failure is recorded, the caller goes on
                return Completion(None, "error", "", time.perf_counter() - t0,
                                  self.temperature, seed, f"{type(exc).__name__}: {exc}")
            if self.temperature == 0:
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

    @property
    def _memo(self) -> dict:
        if "_memo_store" not in self.__dict__:
            self.__dict__["_memo_store"] = {}
        return self.__dict__["_memo_store"]

    @abstractmethod
    def _complete(self, system: str, user: str, grammar: str, seed: int) -> str:
        """Return the model's raw reply text."""
