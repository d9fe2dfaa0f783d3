"""Calibrating the judge's expected score onto the human (reference) scale, and measuring it
only out of sample (issue 29, item 5).

The judge's ``expected``-mode score ranks answers well but is biased upward on weak answers,
so its decisions at the cutoff are poor. A monotone map ``g`` from the judge's score (0-100)
to the reference scale fixes the level without reordering the answers:

* ``linear``: ordinary least squares ``g(s) = a + b s`` (numpy ``polyfit``), clipped to
  0-100; a slope b > 0 keeps every rank.
* ``isotonic``: the least-squares non-decreasing step function (pool-adjacent-violators;
  scikit-learn ``IsotonicRegression(out_of_bounds="clip")``; Zadrozny and Elkan 2002 for its
  use as a calibrator), which can tie answers that the judge ordered.

**Out of sample only.** :func:`leave_one_question_out` fits ``g`` on every question but one
and applies it to the answers of the question left out, for each question in turn; the
figures are computed on those held-out predictions, so no answer is ever scored by a map
fitted on it (nor on its question's other answers, which share a rubric and cutoff). The
decision is ``g(score) >= cutoff``; agreement is with ``reference >= cutoff`` (the bank's
decision), as in :mod:`rig.stats.validity`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

CalibrationMethod = Literal["linear", "isotonic"]
METHODS: tuple[CalibrationMethod, ...] = ("linear", "isotonic")


@dataclass(frozen=True)
class Calibration:
    """A fitted map from the judge's score to the reference scale (both 0-100 points).

    ``method``; ``x``/``y``: for ``isotonic`` the step function's knots (judge score ->
    calibrated score, interpolated linearly between knots and clipped outside them), for
    ``linear`` ``x`` = (intercept, slope) and ``y`` empty; ``n_fit``: answers fitted on.
    """
    method: CalibrationMethod
    x: tuple[float, ...]
    y: tuple[float, ...]
    n_fit: int

    def apply(self, score: np.ndarray | float) -> np.ndarray:
        """Calibrated scores, same shape as ``score``, clipped to 0-100."""
        s = np.asarray(score, dtype=float)
        out = (self.x[0] + self.x[1] * s if self.method == "linear"
               else np.interp(s, self.x, self.y))
        return np.clip(out, 0.0, 100.0)

    def to_dict(self) -> dict:
        return {"method": self.method, "x": list(self.x), "y": list(self.y),
                "n_fit": self.n_fit}


def fit_calibration(score: np.ndarray, reference: np.ndarray,
                    method: CalibrationMethod = "linear") -> Calibration:
    """Fit ``method`` to (judge score, reference score) pairs, shape ``(n,)`` each.

    Raises:
        ValueError: fewer than 3 pairs, a non-finite value, shapes that differ, or an
            unknown method.
    """
    s, r = np.asarray(score, float), np.asarray(reference, float)
    if s.shape != r.shape or s.ndim != 1:
        raise ValueError(f"score and reference must be 1-D of one length (got {s.shape}, "
                         f"{r.shape})")
    if len(s) < 3:
        raise ValueError(f"{len(s)} pairs: a calibration needs 3 or more")
    if not (np.isfinite(s).all() and np.isfinite(r).all()):
        raise ValueError("score and reference must be finite (drop unparsed gradings)")
    if method == "linear":
        if np.ptp(s) == 0:
            return Calibration("linear", (float(r.mean()), 0.0), (), len(s))
        b, a = np.polyfit(s, r, 1)
        return Calibration("linear", (float(a), float(b)), (), len(s))
    if method == "isotonic":
        from sklearn.isotonic import IsotonicRegression

        iso = IsotonicRegression(increasing=True, out_of_bounds="clip", y_min=0, y_max=100)
        iso.fit(s, r)
        return Calibration("isotonic", tuple(float(v) for v in iso.X_thresholds_),
                           tuple(float(v) for v in iso.y_thresholds_), len(s))
    raise ValueError(f"unknown calibration method {method!r} (known: {', '.join(METHODS)})")


def _figures(pred: np.ndarray, ref: np.ndarray, cutoff: np.ndarray) -> dict:
    rho = stats.spearmanr(pred, ref)[0] if np.ptp(pred) > 0 else float("nan")
    return {"spearman": float(rho), "mae_points": float(np.mean(np.abs(pred - ref))),
            "decision_agreement": float(np.mean((pred >= cutoff) == (ref >= cutoff))),
            "mean_bias_points": float(np.mean(pred - ref))}


def leave_one_question_out(rows: pd.DataFrame, method: CalibrationMethod = "linear",
                           score_col: str = "score", ref_col: str = "reference_score"
                           ) -> tuple[dict, pd.DataFrame]:
    """Out-of-sample figures of ``method`` on one row per answer (columns ``question_id``,
    ``cutoff``, ``score_col``, ``ref_col``; rows with a missing score are left out and
    counted).

    Returns ``(figures, predictions)``: ``figures`` = ``{n_answers, n_questions,
    n_left_out, before: {...}, after: {...}}`` with ``spearman``, ``mae_points``,
    ``decision_agreement`` and ``mean_bias_points`` (after - reference) of the raw and the
    held-out calibrated scores; ``predictions`` = the rows with a ``calibrated`` column.

    Raises:
        ValueError: fewer than 2 questions, or a fold with under 3 answers to fit on.
        KeyError: a column is missing.
    """
    need = ["question_id", "cutoff", score_col, ref_col]
    missing = [c for c in need if c not in rows.columns]
    if missing:
        raise KeyError(f"calibration rows lack column(s) {missing}")
    d = rows.dropna(subset=[score_col, ref_col]).copy()
    questions = sorted(d["question_id"].unique())
    if len(questions) < 2:
        raise ValueError(f"{len(questions)} question(s): leaving one out needs 2 or more")
    d["calibrated"] = np.nan
    for q in questions:
        held = d["question_id"] == q
        fit = fit_calibration(d.loc[~held, score_col].to_numpy(),
                              d.loc[~held, ref_col].to_numpy(), method)
        d.loc[held, "calibrated"] = fit.apply(d.loc[held, score_col].to_numpy())
    ref, cut = d[ref_col].to_numpy(float), d["cutoff"].to_numpy(float)
    figures = {"method": method, "n_answers": len(d), "n_questions": len(questions),
               "n_left_out": len(rows) - len(d),
               "before": _figures(d[score_col].to_numpy(float), ref, cut),
               "after": _figures(d["calibrated"].to_numpy(float), ref, cut)}
    return figures, d
