"""One stored human rating, and the strict reader of a folder's ``ratings.jsonl``.

A rating grades one *unit* on the rubric's 0-100 scale (points per criterion summing to the
score, or a total alone):

* ``unit_kind == "call"``: one call's audio as the interviewer heard it (a campaign's
  ``call_id``, or a replay's ``turn_key``); it stands for that call only;
* ``unit_kind == "answer"``: an answer's script (the content, no audio); it stands for every
  call of that answer, under every profile, as the bank's reference grades do.

``ratings.jsonl`` holds one JSON object per line (:class:`Rating`); the file is only ever
rewritten whole (:func:`rig.ratings.importer.append_ratings`), so it never holds a torn line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rig.config import DuplicateKeyError, loads_strict
from rig.errors import ConfigError

RATINGS_FILE = "ratings.jsonl"
UnitKind = Literal["call", "answer"]


class Rating(BaseModel):
    """One rater's grade of one unit. ``score`` is 0-100 (the sum of ``points`` when they are
    given); ``points`` maps criterion id to points (0..the criterion's maximum); ``levels``,
    when the rater graded credit levels, maps criterion id to level (points = maximum x
    level / 4)."""
    model_config = ConfigDict(extra="forbid", frozen=True)

    rater_id: str = Field(min_length=1)
    unit_kind: UnitKind
    unit_id: str = Field(min_length=1, description="call_id (a replay's turn_key) or answer_id")
    answer_id: str | None = Field(None, description="the answer rated (None: a replay turn)")
    question_id: str
    rubric_version: int
    rubric_hash: str
    score: float | None = Field(ge=0, le=100, description="None only with could_not_hear "
                                "(a rater of the collect page who could not grade)")
    points: dict[str, float] | None = None
    levels: dict[str, int] | None = Field(None, description="credit level per criterion, "
                                          "0..4 (rig.scorer.levels.LEVEL_ANCHORS), when the "
                                          "rater graded levels (rig ratings collect)")
    could_not_hear: bool = False
    rated_at: str | None = Field(None, description="ISO 8601 time, as the tool gave it")
    source: str = Field(description="where it came from: import:<file name>, or collect "
                        "(the rating page)")

    @model_validator(mode="after")
    def _graded(self) -> Rating:
        if self.score is None and not self.could_not_hear:
            raise ValueError("score is missing (only a could_not_hear rating may lack one)")
        return self

    @property
    def key(self) -> tuple[str, str, str]:
        """(rater, unit kind, unit id): one rating each; a second one is refused."""
        return (self.rater_id, self.unit_kind, self.unit_id)


def read_ratings(folder: str | Path) -> list[Rating]:
    """The ratings in ``folder/ratings.jsonl`` ([] when there is none).

    Raises:
        ConfigError: a line is not a JSON object, names a key twice, or is not a
            :class:`Rating` (names the file, line and field).
    """
    path = Path(folder) / RATINGS_FILE
    if not path.is_file():
        return []
    out: list[Rating] = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = loads_strict(line)
        except (json.JSONDecodeError, DuplicateKeyError) as exc:
            raise ConfigError(path, f"line {i}", f"not a JSON rating ({exc})") from None
        try:
            out.append(Rating.model_validate(obj))
        except ValidationError as exc:
            e = exc.errors()[0]
            field = ".".join(str(p) for p in e["loc"])
            raise ConfigError(path, f"line {i}: {field}", e["msg"], e.get("input"),
                              has_value=True) from None
    return out
