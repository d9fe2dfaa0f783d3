"""Prediction-powered inference for a mean: a few human ratings plus many judge scores give
an estimate of the mean *human-scale* score with a valid 95% CI, whatever the judge's errors.

Notation (Angelopoulos, Bates, Fannjiang, Jordan and Zrnic 2023, "Prediction-powered
inference", Science 382: 669-674): ``n`` rated units with the human score ``Y_i`` and the
judge's score ``f_i``; ``N`` further units with the judge's score ``f~_j`` only (disjoint
from the rated ones). The PPI++ estimator (Angelopoulos, Duchi and Zrnic 2023, "PPI++:
Efficient prediction-powered inference", arXiv:2311.01453, eq. 3 and Example 6.1) is

    theta(lambda) = mean_j(lambda * f~_j) + mean_i(Y_i - lambda * f_i)

with variance ``Var(Y - lambda f) / n + lambda^2 Var(f~) / N`` and the power-tuning

    lambda* = Cov(Y, f) / ((1 + n / N) * Var(f))

(estimated from the same data, clipped to [0, 1] as ``ppi_py`` does with ``clip=True``).
``lambda = 1`` is the original PPI; ``lambda = 0`` the classical mean of the ratings alone.
The 95% CI is ``theta +/- z_0.975 * SE`` (normal approximation, as ``ppi_py.ppi_mean_ci``).
A judge whose scores are biased or noisy only widens the CI: the rectifier ``Y - lambda f``
carries the bias, so the coverage holds (checked by simulation in the tests).

:func:`ratings_for_width` inverts the variance: the ``n`` at which the CI's full width is
``width`` points, at the estimated variances and the same ``N``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

Z95 = float(stats.norm.ppf(0.975))


@dataclass(frozen=True)
class PPIMean:
    """One prediction-powered mean (points, 0-100 for scores).

    ``estimate`` and ``ci95``: the PPI++ mean and its 95% CI; ``se``: its standard error;
    ``lam``: the power-tuning weight used; ``n_rated``/``n_unrated``: n and N;
    ``judge_only``: the plain mean of the judge's scores over all n + N units (no CI:
    it carries the judge's bias); ``ratings_only_ci95``: the classical CI from the ratings
    alone (lambda = 0), for comparison."""
    estimate: float
    ci95: tuple[float, float]
    se: float
    lam: float
    n_rated: int
    n_unrated: int
    judge_only: float
    ratings_only_ci95: tuple[float, float] | None
    var_rectifier: float
    var_judge_unrated: float


def _var(x: np.ndarray) -> float:
    return float(np.var(x, ddof=1)) if len(x) > 1 else 0.0


def power_tuning(y: np.ndarray, f: np.ndarray, n_unrated: int) -> float:
    """lambda* = Cov(Y, f) / ((1 + n/N) Var(f)), clipped to [0, 1]; 0 when ``N`` is 0 or the
    judge's rated scores have no spread (PPI++, Example 6.1)."""
    n = len(y)
    if n_unrated == 0 or n < 2 or _var(f) == 0:
        return 0.0
    cov = float(np.cov(y, f, ddof=1)[0, 1])
    lam = cov / ((1 + n / n_unrated) * _var(f))
    return float(min(1.0, max(0.0, lam)))


def ppi_mean(y_rated: np.ndarray, f_rated: np.ndarray, f_unrated: np.ndarray, *,
             lam: float | None = None) -> PPIMean:
    """The PPI++ mean of the human-scale score.

    Args:
        y_rated: human scores of the rated units, shape ``(n,)``.
        f_rated: the judge's scores of the same units, shape ``(n,)``.
        f_unrated: the judge's scores of the units no one rated, shape ``(N,)``.
        lam: a fixed weight (1: PPI; 0: ratings only); None: power-tuned.

    Raises:
        ValueError: fewer than 2 rated units, shapes that differ, or a non-finite value.
    """
    y, f, fu = (np.asarray(a, float) for a in (y_rated, f_rated, f_unrated))
    if y.shape != f.shape or y.ndim != 1:
        raise ValueError(f"y_rated and f_rated must be 1-d of one length ({y.shape}, {f.shape})")
    if len(y) < 2:
        raise ValueError(f"PPI needs at least 2 rated units (got {len(y)})")
    if not (np.isfinite(y).all() and np.isfinite(f).all() and np.isfinite(fu).all()):
        raise ValueError("PPI inputs hold a NaN or infinite score")
    n, big_n = len(y), len(fu)
    lam = power_tuning(y, f, big_n) if lam is None else float(lam)
    if big_n == 0:
        lam = 0.0
    rect = y - lam * f
    v_rect, v_fu = _var(rect), _var(fu)
    est = float(rect.mean() + (lam * fu.mean() if big_n else 0.0))
    se = math.sqrt(v_rect / n + (lam**2 * v_fu / big_n if big_n else 0.0))
    se_y = math.sqrt(_var(y) / n)
    judge_all = float(np.concatenate([f, fu]).mean())
    return PPIMean(est, (est - Z95 * se, est + Z95 * se), se, lam, n, big_n, judge_all,
                   (float(y.mean() - Z95 * se_y), float(y.mean() + Z95 * se_y)), v_rect, v_fu)


def ratings_for_width(p: PPIMean, width: float) -> int | None:
    """Rated units needed for a 95% CI of full width ``width`` (same units as the scores), at
    ``p``'s variances, weight and unrated count: the least n with
    ``2 z sqrt(V_rect / n + lam^2 V_f / N) <= width``. None when the judge-only term alone is
    wider (more unrated calls, not more ratings, would be needed).

    Raises:
        ValueError: ``width`` is not positive."""
    if width <= 0:
        raise ValueError(f"width must be positive (got {width})")
    room = (width / (2 * Z95)) ** 2 - (p.lam**2 * p.var_judge_unrated / p.n_unrated
                                        if p.n_unrated else 0.0)
    if room <= 0:
        return None
    return max(2, math.ceil(p.var_rectifier / room))
