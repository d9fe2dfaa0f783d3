"""The graded answer bank: questions, rubrics, cutoffs and scripted answers in three tiers.

Layout of a bank folder: one YAML file per question (any name ending in ``.yaml``), plus an
optional ``bank.yaml`` with the bank's metadata (``name``, ``version``, ``graded_by``,
``mode``).

``mode: read_speech`` (``rig voices import`` writes such banks) marks a bank of sentences to
read aloud, with no rubric: :func:`load_bank` reads its questions and answers as
:class:`ReadSpeechQuestion` and :class:`ReadSpeechAnswer` (no rubric, cutoff, tier or
reference grades). A campaign over it skips the scorer (:mod:`rig.campaign.read_speech`).

An answer's script, its marks (``[pause 1.2s]``, ``[um]``) and its WER reference are
:mod:`rig.script`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rig.config import content_hash, load_model, read_yaml, yaml_files
from rig.errors import ConfigError
from rig.script import normalise_script, parse_script, reference_text

Tier = Literal["strong", "borderline", "weak"]
BankMode = Literal["graded", "read_speech"]

#: How far from the cutoff a tier's mean reference grade may sit (points on the 0-100 scale).
BORDERLINE_BAND = 8.0
CLEAR_MARGIN = 10.0

class RubricCriterion(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str = Field(min_length=10)
    points: int = Field(gt=0, le=100)
    style: bool = Field(False, description="the criterion grades how the answer sounds "
                        "(e.g. communicates clearly), not what it says; "
                        "scorer.style_criteria: drop leaves it out")

    def hash_dump(self) -> dict:
        """The criterion as :attr:`Question.rubric_hash` hashes it: ``style`` only when
        true, so a rubric without style tags keeps the hash it had before the tag existed."""
        return self.model_dump(exclude=set() if self.style else {"style"})


def rescale_points(points: list[int], total: int = 100) -> list[int]:
    """Integer points proportional to ``points`` summing to ``total``, by largest remainder
    (Hamilton's method; ties to the earlier criterion). Each result is at least 1.

    Raises:
        ValueError: ``points`` is empty or has a value below 1."""
    if not points or min(points) < 1:
        raise ValueError(f"points must be positive integers (got {points!r})")
    raw = [p * total / sum(points) for p in points]
    out = [max(1, int(r)) for r in raw]
    order = sorted(range(len(points)), key=lambda i: (-(raw[i] - int(raw[i])), i))
    i = 0
    while sum(out) < total:
        out[order[i % len(order)]] += 1
        i += 1
    while sum(out) > total:  # only when a floor of 1 lifted a share
        j = max(range(len(out)), key=lambda k: (out[k] - raw[k], -k))
        out[j] -= 1
    return out


class ReferenceGrade(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    grader_id: str = Field(min_length=1)
    score: float = Field(ge=0, le=100)


class Answer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    answer_id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    tier: Tier
    script: str = Field(min_length=1)
    reference_grades: list[ReferenceGrade] = Field(min_length=2)
    note: str = ""
    twin_of: str | None = Field(None, pattern=r"^[A-Za-z0-9_.-]+$", description="the "
                                "answer_id (in another language's bank) this answer "
                                "translates: a translated twin (answer_bank/README.md)")

    @field_validator("script", mode="before")
    @classmethod
    def _normalised(cls, v: object) -> object:
        return normalise_script(v) if isinstance(v, str) else v

    @field_validator("script")
    @classmethod
    def _marks_parse(cls, v: str) -> str:
        parse_script(v)
        if not reference_text(v).strip():
            raise ValueError("script has no spoken words")
        return v

    @property
    def reference_score(self) -> float:
        return sum(g.score for g in self.reference_grades) / len(self.reference_grades)

    @property
    def clean_text(self) -> str:
        """The script's spoken words without marks (what the oracle scorer grades)."""
        return reference_text(self.script, "clean")


class Question(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    question_id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    category: str = Field(min_length=1)
    question: str = Field(min_length=5)
    rubric_version: int = Field(ge=1)
    cutoff: float = Field(ge=0, le=100, description="advance when score >= cutoff (0-100)")
    rubric: list[RubricCriterion] = Field(min_length=1)
    answers: list[Answer] = Field(min_length=3)
    language: str = Field("en", description="the language of the question, rubric and "
                          "scripts; set from bank.yaml's language by load_bank")

    @field_validator("language")
    @classmethod
    def _language(cls, v: str) -> str:
        from rig.language import check_language

        return check_language(v)

    @field_validator("rubric")
    @classmethod
    def _rubric(cls, v: list[RubricCriterion]) -> list[RubricCriterion]:
        total = sum(c.points for c in v)
        if total != 100:
            raise ValueError(f"rubric points must sum to 100, they sum to {total} ("
                             + " + ".join(f"{c.id} {c.points}" for c in v) + ")")
        ids = [c.id for c in v]
        if len(set(ids)) != len(ids):
            raise ValueError(f"rubric criterion ids repeat: {ids}")
        return v

    @model_validator(mode="after")
    def _check(self) -> Question:
        tiers = {a.tier for a in self.answers}
        if tiers != {"strong", "borderline", "weak"}:
            raise ValueError(f"needs answers in all three tiers, has {sorted(tiers)}")
        for i, a in enumerate(self.answers):
            ref, c = a.reference_score, self.cutoff
            ok = {
                "strong": ref >= c + CLEAR_MARGIN,
                "borderline": abs(ref - c) <= BORDERLINE_BAND,
                "weak": ref <= c - CLEAR_MARGIN,
            }[a.tier]
            if not ok:
                raise ValueError(
                    f"answers[{i}] ({a.answer_id}): tier {a.tier!r} does not fit its mean "
                    f"reference grade {ref:.1f} against cutoff {c:g} (strong >= cutoff+"
                    f"{CLEAR_MARGIN:g}, borderline within {BORDERLINE_BAND:g}, weak <= "
                    f"cutoff-{CLEAR_MARGIN:g})")
        return self

    #: the scorer grades this question's answers (False: a read-speech prompt, no rubric)
    graded: ClassVar[bool] = True

    @property
    def rubric_hash(self) -> str:
        return content_hash({"v": self.rubric_version, "rubric": [c.hash_dump() for c in
                                                                  self.rubric],
                             "cutoff": self.cutoff, "question": self.question})


    def scored_rubric(self, style_criteria: str = "keep") -> Question:
        """The question as the scorer grades it under ``scorer.style_criteria``: itself
        (``keep``), or without its ``style: true`` criteria, the others' points rescaled to
        sum to 100 (:func:`rescale_points`), when ``drop``. Cutoff, answers and reference
        grades are kept (the reference grades graded the whole rubric). Its
        :attr:`rubric_hash` differs from the original's when a criterion was dropped.

        Raises:
            ConfigError: ``drop`` and every criterion is tagged style (nothing left to grade).
            ValueError: ``style_criteria`` is neither ``keep`` nor ``drop``."""
        if style_criteria not in ("keep", "drop"):
            raise ValueError(f"scorer.style_criteria must be keep or drop (got "
                             f"{style_criteria!r})")
        kept = [c for c in self.rubric if not c.style]
        if style_criteria == "keep" or len(kept) == len(self.rubric):
            return self
        if not kept:
            raise ConfigError(f"question {self.question_id}", "rubric",
                              "scorer.style_criteria: drop leaves no criterion (every one is "
                              "tagged style: true)")
        pts = rescale_points([c.points for c in kept])
        rubric = [c.model_copy(update={"points": p}) for c, p in zip(kept, pts, strict=True)]
        return Question.model_validate({**self.model_dump(), "rubric":
                                        [c.model_dump() for c in rubric]})


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


class BankMeta(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str
    version: int = 1
    graded_by: str = ""
    description: str = ""
    mode: BankMode = Field("graded", description="graded: questions with rubrics (the "
                           "default); read_speech: prompts read aloud, no rubric")
    language: str = Field("en", description="the language every question, rubric and "
                          "script of the bank is written in (a Whisper code: rig.language)")

    @field_validator("language")
    @classmethod
    def _language(cls, v: str) -> str:
        from rig.language import check_language

        return check_language(v)


@dataclass(frozen=True)
class AnswerBank:
    meta: BankMeta
    questions: tuple[Question, ...]
    path: Path

    @property
    def read_speech(self) -> bool:
        """A read-speech bank (``bank.yaml`` ``mode: read_speech``): no rubric, no scorer."""
        return self.meta.mode == "read_speech"

    def answers(self) -> list[tuple[Question, Answer]]:
        return [(q, a) for q in self.questions for a in q.answers]

    def question(self, question_id: str) -> Question:
        for q in self.questions:
            if q.question_id == question_id:
                return q
        raise KeyError(question_id)


def load_bank(path: str | Path) -> AnswerBank:
    """Load and validate a bank folder (or a single question file).

    Raises:
        ConfigError: a file is malformed, an id repeats across files, or the folder has none.
    """
    path = Path(path)
    if path.is_file():
        files, folder = [path], path.parent
    elif path.is_dir():
        files = [p for p in yaml_files(path) if p.name != "bank.yaml"]
        folder = path
    else:
        raise ConfigError(path, "", "answer bank not found")
    if not files:
        raise ConfigError(path, "", "no question files (*.yaml) in the answer bank folder")
    meta_path = folder / "bank.yaml"
    meta = (load_model(meta_path, BankMeta) if meta_path.is_file()
            else BankMeta(name=folder.name))
    if meta.mode == "read_speech":
        model: type[Question] = ReadSpeechQuestion
    else:
        model = Question
    questions: list[Question] = []
    seen_q: dict[str, Path] = {}
    seen_a: dict[str, Path] = {}
    for f in files:
        data = read_yaml(f)
        if isinstance(data, dict) and data.get("language", meta.language) != meta.language:
            raise ConfigError(f, "language", f"differs from the bank's language "
                              f"{meta.language!r} (bank.yaml): a bank is in one language",
                              data["language"])
        if isinstance(data, dict):
            data = {**data, "language": meta.language}
        q = load_model(f, model, data)
        if q.question_id in seen_q:
            raise ConfigError(f, "question_id", f"repeats {seen_q[q.question_id]}", q.question_id)
        seen_q[q.question_id] = f
        for i, a in enumerate(q.answers):
            if a.answer_id in seen_a:
                raise ConfigError(f, f"answers[{i}].answer_id",
                                  f"repeats an id in {seen_a[a.answer_id]}", a.answer_id)
            seen_a[a.answer_id] = f
        questions.append(q)
    return AnswerBank(meta=meta, questions=tuple(questions), path=path)
