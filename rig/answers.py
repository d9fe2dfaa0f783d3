"""The graded answer bank: questions, rubrics, cutoffs and scripted answers in three tiers.

Layout of a bank folder: one YAML file per question (any name ending in ``.yaml``), plus an
optional ``bank.yaml`` with the bank's metadata (``name``, ``version``, ``graded_by``,
``mode``).

``mode: read_speech`` (``rig voices import`` writes such banks) marks a bank of sentences to
read aloud, with no rubric: :func:`load_bank` reads its questions and answers as
:class:`rig.read_speech_bank.ReadSpeechQuestion` and :class:`~rig.read_speech_bank.
ReadSpeechAnswer` (no rubric, cutoff, tier or reference grades). A campaign over it skips the
scorer (:mod:`rig.campaign.read_speech`).

Script marks (inline, removed from the WER reference):
    ``[pause 1.2s]``  silence of 1.2 seconds inside the answer;
    ``[um]``, ``[uh]``, ``[erm]``, ``[hmm]``  a spoken filler.
The WER reference policy is ``clean``: the spoken script words without marks or fillers.
``verbatim`` keeps the fillers (see :func:`reference_text`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rig.config import content_hash, load_model, read_yaml, yaml_files
from rig.errors import ConfigError
from rig.script_fractions import spell_fractions, unslash_fractions

Tier = Literal["strong", "borderline", "weak"]
BankMode = Literal["graded", "read_speech"]
ReferencePolicy = Literal["clean", "verbatim"]

FILLERS = ("um", "uh", "erm", "hmm")
_MARK = re.compile(r"\[\s*(pause\s+(?P<pause>\d+(?:\.\d+)?)\s*s|(?P<filler>um|uh|erm|hmm))\s*\]",
                   re.IGNORECASE)
_ANY_BRACKET = re.compile(r"\[[^\]]*\]")

#: How far from the cutoff a tier's mean reference grade may sit (points on the 0-100 scale).
BORDERLINE_BAND = 8.0
CLEAR_MARGIN = 10.0


@dataclass(frozen=True)
class Words:
    text: str


@dataclass(frozen=True)
class Pause:
    pause_s: float


@dataclass(frozen=True)
class Filler:
    word: str


Segment = Words | Pause | Filler


def parse_script(script: str) -> list[Segment]:
    """Split a script into spoken word runs, pauses and fillers, in order.

    Raises:
        ValueError: an unknown ``[...]`` mark (the message quotes it).
    """
    out: list[Segment] = []
    pos = 0
    for m in _MARK.finditer(script):
        before = script[pos:m.start()]
        bad = _ANY_BRACKET.search(before)
        if bad:
            raise ValueError(f"unknown script mark {bad.group(0)!r}; use [pause 1.2s] or "
                             f"[{']/['.join(FILLERS)}]")
        if before.strip():
            out.append(Words(" ".join(before.split())))
        if m.group("pause"):
            out.append(Pause(float(m.group("pause"))))
        else:
            out.append(Filler(m.group("filler").lower()))
        pos = m.end()
    rest = script[pos:]
    bad = _ANY_BRACKET.search(rest)
    if bad:
        raise ValueError(f"unknown script mark {bad.group(0)!r}; use [pause 1.2s] or "
                         f"[{']/['.join(FILLERS)}]")
    if rest.strip():
        out.append(Words(" ".join(rest.split())))
    return out


#: Typographic characters a word processor or chat tool puts in a script, and their plain forms
#: (the voices read the plain ones; the WER normaliser compares plain text).
_PLAIN = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
                        "\u2032": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"',
                        "\u201f": '"', "\u2033": '"', "\u2013": "-", "\u2014": " - ",
                        "\u2026": "..."})
_RTL_BIDI = {"R", "AL", "RLE", "RLO", "RLI", "LRE", "LRO", "LRI", "FSI", "PDF", "PDI"}


def normalise_script(script: str) -> str:
    """A script as the voices speak it: Unicode NFKC (a non-breaking or other odd space
    becomes a space, full-width letters plain), curly quotes and apostrophes straight, en/em
    dashes and the ellipsis character plain, line breaks (CR LF too) as spaces; a typographic
    fraction as words ("½" -> "one half", "2¾" -> "2 and three quarters") and one written
    with the fraction slash U+2044 ("1⁄2") as "1/2", so the voices and the WER reference read
    the same words.

    Raises:
        ValueError: a character no voice speaks: right-to-left letters (Hebrew, Arabic) or
            bidirectional controls, letters and digits of other scripts than Latin (CJK,
            Cyrillic, Devanagari...), emoji and other symbols, control characters, or
            invisible format characters (zero-width space, joiner); the message names it
            (``U+200B ZERO WIDTH SPACE at character 41``) and the fix."""
    text = unslash_fractions(unicodedata.normalize("NFKC", spell_fractions(script)))
    text = text.translate(_PLAIN)
    for i, ch in enumerate(text):
        if ch in "\n\r\t":
            continue
        cat, bidi = unicodedata.category(ch), unicodedata.bidirectional(ch)
        why = ("right-to-left text: the voices speak English; give the answer in English"
               if bidi in _RTL_BIDI else
               "not Latin script: the voices and the ASR speak English; give the answer in "
               "English" if cat[0] in "LN" and not ch.isascii()
               and not unicodedata.name(ch, "").startswith("LATIN") else
               "an emoji or symbol: voices skip or misread it; write the words"
               if cat == "So" or 0x1F000 <= ord(ch) <= 0x1FAFF else
               "a control or invisible format character: delete it"
               if cat in ("Cc", "Cf", "Co", "Cs", "Cn") else None)
        if why:
            name = unicodedata.name(ch, "unnamed")
            raise ValueError(f"script has U+{ord(ch):04X} {name} at character {i}: {why}")
    return " ".join(text.split()) if "\n" in text or "\r" in text else text


def reference_text(script: str, policy: ReferencePolicy = "clean") -> str:
    """The WER reference: spoken words without marks; ``verbatim`` keeps fillers."""
    parts = []
    for seg in parse_script(script):
        if isinstance(seg, Words):
            parts.append(seg.text)
        elif isinstance(seg, Filler) and policy == "verbatim":
            parts.append(seg.word)
    return " ".join(parts)


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


class BankMeta(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str
    version: int = 1
    graded_by: str = ""
    description: str = ""
    mode: BankMode = Field("graded", description="graded: questions with rubrics (the "
                           "default); read_speech: prompts read aloud, no rubric")


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
        from rig.read_speech_bank import ReadSpeechQuestion  # it imports this module

        model: type[Question] = ReadSpeechQuestion
    else:
        model = Question
    questions: list[Question] = []
    seen_q: dict[str, Path] = {}
    seen_a: dict[str, Path] = {}
    for f in files:
        q = load_model(f, model, read_yaml(f))
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


def __getattr__(name: str) -> object:
    """The read-speech classes, moved to :mod:`rig.read_speech_bank`, still importable from
    here (lazily: that module imports this one)."""
    if name in ("ReadSpeechAnswer", "ReadSpeechQuestion"):
        from rig import read_speech_bank

        return getattr(read_speech_bank, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
