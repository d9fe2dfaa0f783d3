"""Graded judging (``scorer.mode: expected``): a credit level per criterion, read as a
probability distribution, and the criterion's expected points.

In ``expected`` mode the judge rates each rubric criterion on the credit levels
``0 .. N_LEVELS - 1`` (:data:`LEVEL_ANCHORS` says what each means), one digit each. The
backend reads the model's distribution over those level tokens at the position where the
digit is written (a softmax over the level tokens' logits only, in float64 from float32
logits), and the criterion earns its expected points::

    points_c = max_points_c * sum_l P(level = l) * l / (N_LEVELS - 1)

The score is the sum over criteria (0-100). This is G-Eval's probability-weighted scoring
(Liu et al. 2023, "G-Eval: NLG Evaluation using GPT-4 with Better Human Alignment", EMNLP,
section 2.3), applied per rubric criterion. Per criterion the result also keeps the top
level's probability and the distribution's Shannon entropy in bits (0 when the judge is
certain, log2(N_LEVELS) at most).

The reply text (``raw``) is the JSON the judge wrote with the level it chose at each
position, ``{"levels": {"<criterion_id>": <level>, ...}}``; it is kept for inspection only,
the score comes from the distributions.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rig.answers import Question
from rig.scorer.prompt import ParseStatus

#: The credit levels a criterion can get, 0 .. N_LEVELS - 1 (one digit token each).
N_LEVELS = 5
LEVEL_ANCHORS: tuple[str, ...] = (
    "0 = not addressed at all",
    "1 = touched on only vaguely, no specifics",
    "2 = partly met: some relevant specifics, clear gaps",
    "3 = mostly met: specific and relevant, a minor gap",
    "4 = fully met: specific, complete and convincing",
)
LEVEL_DIGITS: tuple[str, ...] = tuple(str(i) for i in range(N_LEVELS))


@dataclass(frozen=True)
class CriterionGrade:
    """One criterion's grade.

    Fields:
        criterion_id: the rubric criterion.
        points_max: its maximum points (int, the rubric's).
        points: points awarded (0..points_max): expected points in ``expected`` mode,
            the integer the judge wrote in ``argmax`` mode.
        level_probs: P(level = l) for l = 0 .. N_LEVELS - 1 (sums to 1), or None in
            ``argmax`` mode.
        top_prob: the largest of ``level_probs`` (None in ``argmax`` mode).
        entropy_bits: Shannon entropy of ``level_probs`` in bits (None in ``argmax`` mode).
    """
    criterion_id: str
    points_max: int
    points: float
    level_probs: tuple[float, ...] | None = None
    top_prob: float | None = None
    entropy_bits: float | None = None

    def to_dict(self) -> dict:
        return {"criterion_id": self.criterion_id, "points_max": self.points_max,
                "points": self.points,
                "level_probs": list(self.level_probs) if self.level_probs else None,
                "top_prob": self.top_prob, "entropy_bits": self.entropy_bits}


def level_distribution(logits: Sequence[float] | np.ndarray) -> np.ndarray:
    """Softmax over the level tokens' logits only (shape ``(N_LEVELS,)``, any float dtype),
    computed in float64 with the max subtracted. Returns float64 probabilities summing to 1.

    Raises:
        ValueError: not ``N_LEVELS`` finite values.
    """
    z = np.asarray(logits, dtype=np.float64)
    if z.shape != (N_LEVELS,) or not np.all(np.isfinite(z)):
        raise ValueError(f"need {N_LEVELS} finite level logits, got {z!r}")
    e = np.exp(z - z.max())
    return e / e.sum()


def grade_criterion(criterion_id: str, points_max: int,
                    probs: Sequence[float] | np.ndarray) -> CriterionGrade:
    """Expected points, top probability and entropy of one criterion's level distribution.

    ``probs``: P(level = l), l = 0 .. N_LEVELS - 1 (normalised here if it does not sum to 1).

    Raises:
        ValueError: wrong length, a negative or non-finite value, or a zero sum.
    """
    p = np.asarray(probs, dtype=np.float64)
    if p.shape != (N_LEVELS,) or not np.all(np.isfinite(p)) or (p < 0).any() or p.sum() <= 0:
        raise ValueError(f"need {N_LEVELS} non-negative probabilities, got {p!r}")
    p = p / p.sum()
    levels = np.arange(N_LEVELS, dtype=np.float64)
    expected = float(points_max * (p * levels).sum() / (N_LEVELS - 1))
    nz = p[p > 0]
    entropy = float(-(nz * np.log2(nz)).sum())
    return CriterionGrade(criterion_id, points_max, expected,
                          tuple(float(x) for x in p), float(p.max()), max(0.0, entropy))


def levels_user_prompt_head(question: Question) -> str:
    """The ``expected``-mode user message up to the transcript (same for every call of a
    question, so a backend may keep its evaluation)."""
    lines = [f"Interview question: {question.question}", "",
             f"Rubric (rate each criterion on a credit level from 0 to {N_LEVELS - 1}):"]
    for c in question.rubric:
        lines.append(f"- {c.id} (worth {c.points} points): {c.description}")
    example = ", ".join(f'"{c.id}": <0-{N_LEVELS - 1}>' for c in question.rubric)
    lines += [
        "",
        "Credit levels: " + "; ".join(LEVEL_ANCHORS) + ".",
        "",
        f'Reply as JSON: {{"levels": {{{example}}}}}',
        "",
        "Candidate's answer (transcript):",
        '"""',
        "",
    ]
    return "\n".join(lines)


def reply_prefix() -> str:
    """What the judge's reply starts with, before the first criterion's key."""
    return '{"levels": {'


def reply_key(criterion_id: str, first: bool) -> str:
    """The text written before a criterion's level digit."""
    return ("" if first else ", ") + f'"{criterion_id}": '


def reply_text(levels: dict[str, int]) -> str:
    """The reply JSON for the chosen levels (what ``raw`` records)."""
    return json.dumps({"levels": levels})


@dataclass(frozen=True)
class LevelsResult:
    """What :func:`score_levels` made of one grading."""
    status: ParseStatus
    score: float | None
    criteria: tuple[CriterionGrade, ...] | None
    detail: str = ""


def score_levels(question: Question, distributions: Sequence[Sequence[float]] | None
                 ) -> LevelsResult:
    """The score (0-100, a float) from one level distribution per rubric criterion, in the
    rubric's order. Never raises: a missing or malformed distribution is a failure
    (``missing_field``/``out_of_range``) with ``score=None``."""
    if distributions is None or len(distributions) != len(question.rubric):
        n = 0 if distributions is None else len(distributions)
        return LevelsResult("missing_field", None, None,
                            f"{n} level distributions for {len(question.rubric)} criteria")
    grades = []
    for c, probs in zip(question.rubric, distributions, strict=True):
        try:
            grades.append(grade_criterion(c.id, c.points, probs))
        except ValueError as exc:
            return LevelsResult("out_of_range", None, None, f"{c.id}: {exc}")
    score = math.fsum(g.points for g in grades)
    return LevelsResult("ok", min(100.0, max(0.0, score)), tuple(grades))
