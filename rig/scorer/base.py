"""The scorer interface: a narrow public ``score()`` around each backend's ``_complete()``.

``score()`` owns prompting, parsing, timing and errors; a backend only turns (system, user,
grammar, seed) into raw text. A backend error is recorded with ``parse_status="error"`` and
the error text; it never becomes a score.
"""

from __future__ import annotations

import dataclasses
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass

from rig.answers import Question
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

    @property
    def _memo(self) -> dict:
        if "_memo_store" not in self.__dict__:
            self.__dict__["_memo_store"] = {}
        return self.__dict__["_memo_store"]

    @abstractmethod
    def _complete(self, system: str, user: str, grammar: str, seed: int) -> str:
        """Return the model's raw reply text."""
