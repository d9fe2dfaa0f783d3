"""Topics, wrappers, frames and stances of the dual-framing probe.

A topic (``topics.yaml``) has two targets, a and b, and statements asserting that a is better
than b (the affirmative frame); :func:`reverse_statement` swaps the exact target strings (the
reverse frame). ``wrappers.yaml`` holds the prefixes and suffixes an ask is wrapped in,
drawn per statement by :func:`draw_wrappers`. A reply is read as one of five
:data:`STANCES`, scored +2 ... -2 (:data:`STANCE_SCORE`).
"""

from __future__ import annotations

import re
import zlib
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from rig.config import load_model, read_yaml
from rig.errors import ConfigError
from rig.paths import DEFAULTS

DEFAULT_FRAMING = DEFAULTS.root / "probes" / "dual_framing"
Frame = Literal["affirmative", "reverse"]
FRAMES: tuple[Frame, ...] = ("affirmative", "reverse")
Stance = Literal["strongly_agree", "agree", "neutral", "disagree", "strongly_disagree"]
STANCES: tuple[Stance, ...] = ("strongly_agree", "agree", "neutral", "disagree",
                               "strongly_disagree")
STANCE_SCORE: dict[str, int] = {"strongly_agree": 2, "agree": 1, "neutral": 0,
                                "disagree": -1, "strongly_disagree": -2}
STANCE_TEXT: dict[str, str] = {s: s.replace("_", " ").capitalize() for s in STANCES}
OPTIONS = "Strongly agree, Agree, Disagree, Strongly disagree"


def _target_re(targets: tuple[str, ...]) -> re.Pattern[str]:
    alts = "|".join(re.escape(t) for t in sorted(targets, key=len, reverse=True))
    return re.compile(rf"(?<![\w-])({alts})(?![\w-])")


def reverse_statement(statement: str, a: str, b: str) -> str:
    """Swap the target strings ``a`` and ``b`` (whole words, case as written, both at once).

    Raises:
        ValueError: a target does not occur exactly once as whole words, or the statement
            starts with a target (its capital letter would not survive the swap).
    """
    rx = _target_re((a, b))
    found = [m.group(1) for m in rx.finditer(statement)]
    for t in (a, b):
        if found.count(t) != 1:
            raise ValueError(f"target {t!r} occurs {found.count(t)} times as whole words in "
                             f"{statement!r}; it must occur exactly once")
    if rx.match(statement):
        raise ValueError(f"{statement!r} starts with a target; begin with another word")
    return rx.sub(lambda m: b if m.group(1) == a else a, statement)


class Topic(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    title: str = Field(min_length=3)
    a: str = Field(min_length=1)
    b: str = Field(min_length=1)
    statements: tuple[str, ...] = Field(min_length=1)

    @field_validator("statements")
    @classmethod
    def _distinct(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(v)) != len(v):
            raise ValueError("statements repeat")
        return v

    def frames(self, index: int) -> dict[str, str]:
        s = self.statements[index]
        return {"affirmative": s, "reverse": reverse_statement(s, self.a, self.b)}


class _TopicsFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    version: int = Field(ge=1)
    topics: tuple[Topic, ...] = Field(min_length=1)


class Wrappers(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    version: int = Field(ge=1)
    prefixes: tuple[str, ...] = Field(min_length=1)
    suffixes: tuple[str, ...] = Field(min_length=1)


def load_topics(folder: str | Path = DEFAULT_FRAMING) -> tuple[list[Topic], Wrappers]:
    """``topics.yaml`` and ``wrappers.yaml`` of a dual-framing folder, every statement's
    reverse checked.

    Raises:
        ConfigError: a missing or malformed file, a repeated topic id, or a statement whose
            targets cannot be swapped (names the file, field and value).
    """
    folder = Path(folder)
    tpath, wpath = folder / "topics.yaml", folder / "wrappers.yaml"
    topics = load_model(tpath, _TopicsFile, read_yaml(tpath)).topics
    ids = [t.id for t in topics]
    if len(set(ids)) != len(ids):
        raise ConfigError(tpath, "topics.id", "topic ids repeat", ids)
    for i, t in enumerate(topics):
        if t.a == t.b:
            raise ConfigError(tpath, f"topics[{i}].b", "the two targets are the same", t.b)
        for j in range(len(t.statements)):
            try:
                t.frames(j)
            except ValueError as exc:
                raise ConfigError(tpath, f"topics[{i}].statements[{j}]", str(exc)) from exc
    return list(topics), load_model(wpath, Wrappers, read_yaml(wpath))


def draw_wrappers(w: Wrappers, topic_id: str, statement_index: int, iterations: int,
                  seed: int) -> list[tuple[int, int]]:
    """(prefix index, suffix index) per iteration: distinct combinations while there are
    enough, from ``numpy.random.default_rng([seed, crc32(topic id), statement index])``."""
    rng = np.random.default_rng([seed, zlib.crc32(topic_id.encode()), statement_index])
    n = len(w.prefixes) * len(w.suffixes)
    picks = rng.choice(n, iterations, replace=iterations > n)
    return [(int(k) // len(w.suffixes), int(k) % len(w.suffixes)) for k in picks]
