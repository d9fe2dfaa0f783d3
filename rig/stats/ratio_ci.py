"""Bootstrap confidence interval of an impact ratio (one category's rate / the reference
category's rate), as fairlearn's ``MetricFrame`` gives for its ratios (fairlearn 0.10+,
``n_boot`` and ``ci_quantiles``: a percentile bootstrap of the metric over resampled rows).

The two categories' rows are different people (or calls), so each category's 0/1 hits are
resampled on their own, with replacement, at their own size (``scipy.stats.bootstrap`` with
two samples, ``paired=False``), and the ratio of the resampled means is taken; the interval is
the 2.5th and 97.5th percentiles of ``n_boot`` such ratios (``method="percentile"``), from
``numpy.random.default_rng(seed)``. What is held fixed: which category is the reference (the
one with the highest observed rate) and, for LL144 scoring rates, the full-sample median that
defines a hit; the interval is conditional on both.

A resample in which the reference's rate is 0 has no ratio; when that happens the interval
is not given (None, with the reason) rather than computed from the remaining resamples.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats


def _ratio(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    num, den = np.mean(a, axis=axis), np.mean(b, axis=axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def impact_ratio_ci(hits: np.ndarray, ref_hits: np.ndarray, *, n_boot: int = 2000,
                    seed: int = 0, level: float = 0.95
                    ) -> tuple[tuple[float, float] | None, str | None]:
    """``(ci, None)`` or ``(None, reason)``: the percentile bootstrap ``level`` CI of
    mean(hits) / mean(ref_hits) (see the module).

    Args:
        hits: the category's hits, 0/1 floats, shape ``(n,)``.
        ref_hits: the reference category's hits, shape ``(m,)``.
        n_boot: resamples (at least 1; a campaign's ``n_boot``, whose other intervals take
            as few: a small one gives a rough interval, not an error).
        seed: seed of the resampling.

    Raises:
        ValueError: ``n_boot`` under 1 or ``level`` outside (0, 1).
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1 (got {n_boot})")
    if not 0 < level < 1:
        raise ValueError(f"level must be within (0, 1) (got {level})")
    a, b = np.asarray(hits, float), np.asarray(ref_hits, float)
    if len(a) < 2 or len(b) < 2:
        return None, f"{min(len(a), len(b))} row(s) in a category: a bootstrap needs 2 or more"
    if b.sum() == 0:
        return None, "the reference rate is 0: the ratio is undefined"
    if a.std() == 0 and b.std() == 0:
        r = float(a.mean() / b.mean())
        return (r, r), None  # every resample gives the same ratio
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():  # NaN resamples: answered below, not warned about
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        res = stats.bootstrap((a, b), _ratio, paired=False, vectorized=True,
                              n_resamples=n_boot, method="percentile", confidence_level=level,
                              random_state=rng)
    lo, hi = res.confidence_interval
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return None, ("a resample of the reference category had rate 0: no ratio; more rows "
                      "are needed for a bootstrap CI")
    return (float(lo), float(hi)), None
