"""The read-speech bank's questions and answers (``bank.yaml`` ``mode: read_speech``).

A read-speech bank (``rig voices import`` writes one) holds sentences to read aloud, with no
rubric: its questions are :class:`ReadSpeechQuestion` (``rubric``, ``cutoff`` and
``rubric_version`` absent) and its answers :class:`ReadSpeechAnswer` (a ``script`` and no
``tier`` or ``reference_grades``). They are the graded bank's
:class:`~rig.answers.Question` and :class:`~rig.answers.Answer` with the grading taken out;
:func:`rig.answers.load_bank` picks them by the bank's mode. A campaign over such a bank skips
the scorer (:mod:`rig.campaign.read_speech`).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, field_validator, model_validator

from rig.answers import Answer, Question, ReferenceGrade, RubricCriterion


class ReadSpeechAnswer(Answer):
    """A sentence to read aloud (a read-speech bank): ``answer_id`` and ``script`` only; no
    tier, no reference grades (``reference_score`` is None)."""
    tier: None = None  # type: ignore[assignment]
    reference_grades: list[ReferenceGrade] = Field(default_factory=list, max_length=0)

    @field_validator("tier", "reference_grades", mode="before")
    @classmethod
    def _ungraded(cls, v: object) -> object:
        if v:
            raise ValueError("a read-speech prompt (bank.yaml mode: read_speech) is not graded:"
                             " give no tier or reference grades")
        return v

    @property
    def reference_score(self) -> float | None:  # type: ignore[override]
        return None


class ReadSpeechQuestion(Question):
    """A group of read-speech prompts (``bank.yaml`` ``mode: read_speech``): the ``question``
    is the instruction the speaker was given; no rubric, cutoff or tiers, and the scorer never
    grades it (:attr:`graded` is False)."""
    graded: ClassVar[bool] = False
    rubric_version: int = 1
    cutoff: float | None = None  # type: ignore[assignment]
    rubric: list[RubricCriterion] = Field(default_factory=list, max_length=0)
    answers: list[ReadSpeechAnswer] = Field(min_length=1)  # type: ignore[assignment]

    @field_validator("rubric", "cutoff", mode="before")
    @classmethod
    def _no_rubric(cls, v: object) -> object:
        if v:
            raise ValueError("a read-speech bank (bank.yaml mode: read_speech) has no rubric "
                             "or cutoff: the scorer does not run")
        return v

    @field_validator("rubric")
    @classmethod
    def _rubric(cls, v: list[RubricCriterion]) -> list[RubricCriterion]:
        return v  # no rubric: nothing to sum

    @model_validator(mode="after")
    def _check(self) -> ReadSpeechQuestion:
        return self  # no tiers to check

    def scored_rubric(self, style_criteria: str = "keep") -> ReadSpeechQuestion:
        return self
