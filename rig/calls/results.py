"""Interviewer results keyed by the rig's call id: the store, the webhook, the file import.

An interviewer (the reference one in :mod:`rig.calls.interviewer`, or an external one under
test) returns what it decided for each call, keyed by the ``call_id`` the rig sent with the
call. :class:`ResultStore` keeps them in ``results.jsonl`` (appended and fsync'ed; the last
line for a call id wins) and lets a waiting campaign pick them up.

External interviewers return scores in one of two ways:

* the results webhook, ``POST /results`` with ``Authorization: Bearer <token>`` (the token is
  read from the environment variable named at start-up, never logged), a JSON body
  ``{"call_id": ..., "score": 0-100 or null, "transcript": ..., "decision": ...}`` or a list
  of them (:func:`rig.calls.service.results_router`);
* a CSV or Parquet file with at least ``call_id`` and ``score`` columns
  (:func:`import_scores`).

:func:`match_scores` joins returned scores onto a campaign's call rows and lists the calls with
no returned score (they are kept, with ``external_score`` null, never dropped).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rig.errors import ConfigError


class ExternalScore(BaseModel):
    """One score returned by an external interviewer for one call."""
    model_config = ConfigDict(frozen=True, extra="allow")
    call_id: str = Field(min_length=1, max_length=200)
    score: float | None = Field(None, ge=0, le=100, allow_inf_nan=False)
    transcript: str | None = None
    decision: Literal["advance", "reject"] | None = None


def result_is_attempt(row: dict, attempt_id: str | None) -> bool:
    """Whether a stored result belongs to the caller's attempt ``attempt_id``. A result with
    no ``attempt_id`` (an external interviewer that does not echo it) is accepted."""
    return attempt_id is None or row.get("attempt_id") in (None, attempt_id)


class ResultStore:
    """Results by call id, persisted as JSON lines in ``path``; thread-safe.

    ``put`` takes any pydantic model or dict with a ``call_id``; ``wait`` blocks until one
    arrives for a call id (or the timeout passes, returning None).
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._rows: dict[str, dict] = {}
        self._cv = threading.Condition()
        if path is not None and path.is_file():
            for line in path.read_text().splitlines():
                if line.strip():
                    row = json.loads(line)
                    self._rows[row["call_id"]] = row

    def put(self, result: BaseModel | dict) -> None:
        row = result.model_dump(mode="json") if isinstance(result, BaseModel) else dict(result)
        with self._cv:
            self._rows[row["call_id"]] = row
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with open(self.path, "a") as f:
                    f.write(json.dumps(row) + "\n")
                    f.flush()
                    os.fsync(f.fileno())
            self._cv.notify_all()

    def get(self, call_id: str) -> dict | None:
        with self._cv:
            return self._rows.get(call_id)

    def wait(self, call_id: str, timeout_s: float, attempt_id: str | None = None
             ) -> dict | None:
        """The result for ``call_id`` (of attempt ``attempt_id`` when given: an earlier
        attempt's result is not this call's), or None after ``timeout_s``."""
        def ready() -> bool:
            row = self._rows.get(call_id)
            return row is not None and result_is_attempt(row, attempt_id)

        with self._cv:
            return self._rows[call_id] if self._cv.wait_for(ready, timeout=timeout_s) else None

    def __len__(self) -> int:
        return len(self._rows)


def import_scores(path: str | Path) -> list[ExternalScore]:
    """Read external scores from a CSV or Parquet file (``call_id`` and ``score`` columns at
    least; more columns are kept).

    Raises:
        ConfigError: the file is missing, of another type, lacks a column, or a row is invalid
            (names the file, the row and the field).
    """
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, "", "scores file not found")
    if path.suffix.lower() == ".csv":
        df = pd.read_csv(path, dtype={"call_id": str})
    elif path.suffix.lower() in (".parquet", ".pq"):
        df = pd.read_parquet(path)
    else:
        raise ConfigError(path, "", "scores must be a .csv or .parquet file", path.suffix)
    for col in ("call_id", "score"):
        if col not in df.columns:
            raise ConfigError(path, col, "missing column", list(df.columns))
    out = []
    for i, rec in enumerate(df.to_dict("records")):
        rec = {k: (None if isinstance(v, float) and v != v else v) for k, v in rec.items()}
        try:
            out.append(ExternalScore.model_validate(rec))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(x) for x in err["loc"])
            raise ConfigError(path, f"row {i + 1}: {field}", err["msg"],
                              rec.get(field), has_value=True) from exc
    return out


def match_scores(call_ids: Sequence[str], scores: Sequence[ExternalScore]
                 ) -> tuple[dict[str, ExternalScore], list[str], list[str]]:
    """(scores by call id, call ids with no score returned, returned ids not in the campaign).
    A row with an empty score is not a returned score: its call is listed as missing.

    Raises:
        ConfigError: a call id is returned twice with different scores or decisions (which
            one is right cannot be told; the message names the call id).
    """
    by_id: dict[str, ExternalScore] = {}
    for s in scores:
        if s.score is None:
            continue
        prev = by_id.get(s.call_id)
        if prev is not None and (prev.score, prev.decision) != (s.score, s.decision):
            raise ConfigError("scores", "call_id", "returned twice with different scores "
                              f"({prev.score:g} and {s.score:g})", s.call_id)
        by_id[s.call_id] = s
    wanted = list(dict.fromkeys(call_ids))
    missing = [c for c in wanted if c not in by_id]
    unknown = sorted(set(by_id) - set(wanted))
    return {c: by_id[c] for c in wanted if c in by_id}, missing, unknown
