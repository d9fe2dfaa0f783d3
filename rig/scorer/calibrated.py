"""A calibration file for the judge (issue 29, item 5): maps of its score onto the reference
scale (:mod:`rig.stats.calibration`), fitted on a bank's gradings by ``rig scorer validate``,
arranged so that no answer is ever scored by a map fitted on its own question.

``calibration.json`` (:class:`CalibrationFile`) holds:

* ``held_out``: per question of the fitting bank, the map fitted on every *other* question
  (leave one question out);
* ``all``: the map fitted on every question, for questions the fitting bank does not hold;
* the out-of-sample figures before and after (Spearman, MAE, decision agreement, bias), and
  where the gradings came from (bank, pipeline version of the judge, method).

:meth:`CalibrationFile.apply` takes a question id and the judge's score and returns the
calibrated score: the question's held-out map when the fitting bank held the question, else
``all``. A campaign on the shipped bank is therefore scored out of sample, answer by answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rig.errors import ConfigError
from rig.jsonfile import read_json
from rig.stats.calibration import (
    Calibration,
    CalibrationMethod,
    fit_calibration,
    leave_one_question_out,
)

CALIBRATION_VERSION = 1


class MapDump(BaseModel):
    """One fitted map (:class:`rig.stats.calibration.Calibration`)."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    method: CalibrationMethod
    x: list[float]
    y: list[float]
    n_fit: int

    def calibration(self) -> Calibration:
        return Calibration(self.method, tuple(self.x), tuple(self.y), self.n_fit)


class CalibrationFile(BaseModel):
    """``calibration.json`` (see the module)."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    version: int = CALIBRATION_VERSION
    method: CalibrationMethod
    source: str = Field(description="the gradings fitted on (validity folder) and their bank")
    judge_pipeline_version: str | None = Field(None, description="the judge that graded them")
    held_out: dict[str, MapDump]
    all: MapDump
    out_of_sample: dict = Field(description="leave-one-question-out figures, before/after")

    def apply(self, question_id: str, score: float) -> float:
        """The calibrated score (0-100) of the judge's ``score`` on ``question_id``."""
        m = self.held_out.get(question_id, self.all)
        return float(m.calibration().apply(score))


def _dump(c: Calibration) -> MapDump:
    return MapDump(**c.to_dict())


def answers_frame(validity_dir: Path, mode: str = "expected") -> pd.DataFrame:
    """One row per answer (repeats averaged) from ``validity_dir/answers.csv`` as ``rig scorer
    validate --out`` writes it, for one scoring ``mode``.

    Raises:
        ConfigError: no answers.csv, a missing column, or no row of ``mode``.
    """
    path = Path(validity_dir) / "answers.csv"
    if not path.is_file():
        raise ConfigError(path, "answers.csv", "missing: run rig scorer validate --out "
                          f"{validity_dir} first")
    d = pd.read_csv(path)
    need = {"mode", "answer_id", "question_id", "cutoff", "reference_score", "score"}
    if not need <= set(d.columns):
        raise ConfigError(path, "columns", f"lacks {sorted(need - set(d.columns))}")
    d = d[d["mode"] == mode]
    if d.empty:
        raise ConfigError(path, "mode", f"no gradings in mode {mode!r}", mode, True)
    return d.groupby("answer_id", as_index=False).agg(
        question_id=("question_id", "first"), cutoff=("cutoff", "first"),
        reference_score=("reference_score", "first"), score=("score", "mean"))


def build_calibration(validity_dir: Path, method: CalibrationMethod = "linear",
                      mode: str = "expected") -> CalibrationFile:
    """Fit the held-out maps and the full map on a validity folder's gradings and measure
    them out of sample (:func:`rig.stats.calibration.leave_one_question_out`).

    Raises:
        ConfigError: from :func:`answers_frame`, or the gradings do not support a fit
            (fewer than 2 questions; names the folder).
    """
    d = answers_frame(validity_dir, mode)
    try:
        figures, _ = leave_one_question_out(d, method)
        ok = d.dropna(subset=["score"])
        held = {q: _dump(fit_calibration(ok.loc[ok.question_id != q, "score"].to_numpy(),
                                         ok.loc[ok.question_id != q, "reference_score"]
                                         .to_numpy(), method))
                for q in sorted(ok["question_id"].unique())}
        full = _dump(fit_calibration(ok["score"].to_numpy(), ok["reference_score"].to_numpy(),
                                     method))
    except ValueError as exc:
        raise ConfigError(validity_dir, "answers.csv", str(exc)) from None
    vjson = Path(validity_dir) / "validity.json"
    meta = read_json(vjson) if vjson.is_file() else {}
    return CalibrationFile(method=method, source=f"{validity_dir} ({meta.get('answers_path')})",
                           judge_pipeline_version=meta.get("pipeline_version"),
                           held_out=held, all=full, out_of_sample=figures)


def calibration_sha256(path: str | Path) -> str:
    """sha256 of the calibration file's bytes (in ``pipeline_version``).

    Raises:
        ConfigError: the file is missing."""
    import hashlib

    p = Path(path)
    if not p.is_file():
        raise ConfigError(p, "scorer.calibration", "no such file (write it with rig scorer "
                          "calibrate)")
    return hashlib.sha256(p.read_bytes()).hexdigest()


def load_calibration(path: str | Path) -> CalibrationFile:
    """Read ``calibration.json``.

    Raises:
        ConfigError: missing, not JSON, or not a :class:`CalibrationFile` (names the field).
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, "scorer.calibration", "no such file (write it with rig scorer "
                          "calibrate)")
    try:
        return CalibrationFile.model_validate(read_json(path))
    except json.JSONDecodeError as exc:
        raise ConfigError(path, "", f"not JSON ({exc})") from None
    except ValidationError as exc:
        e = exc.errors()[0]
        raise ConfigError(path, ".".join(str(p) for p in e["loc"]), e["msg"]) from None


def calibrated_scorer(inner, calibration: CalibrationFile):
    """``inner`` (a :class:`rig.scorer.base.Scorer`) whose :meth:`score` returns the
    calibrated score (:meth:`CalibrationFile.apply` on the question) in ``score``; the
    criteria, points and raw reply stay the judge's own (their sum is the uncalibrated
    score). A grading without a score passes unchanged."""
    import dataclasses

    from rig.scorer.base import Scorer

    class CalibratedScorer(Scorer):
        name = f"{inner.name}+calibrated"
        temperature = inner.temperature
        with_reason = inner.with_reason
        mode = inner.mode
        budget_s = inner.budget_s
        reproducible_at_zero = inner.reproducible_at_zero

        def score(self, question, transcript: str, seed: int):
            res = inner.score(question, transcript, seed)
            if res.score is None:
                return res
            return dataclasses.replace(res, score=calibration.apply(question.question_id,
                                                                    res.score))

        def _complete(self, system, user, grammar, seed, *, head="", deadline=None):
            return inner._complete(system, user, grammar, seed, head=head, deadline=deadline)

        def __getattr__(self, attr):  # the engine's own attributes (model path, threads)
            return getattr(inner, attr)

    return CalibratedScorer()
