"""Confidence intervals: Wilson for a proportion, Student t and percentile bootstrap for a mean.

All three raise :class:`~rig.stats.common.NotComputable` on data they cannot honestly summarise
(no observations, too few, no spread); the table builders turn that into ``None`` and a reason.
"""

from __future__ import annotations

import math

import numpy as np

from rig.stats.common import Interval, NotComputable, interval

#: The percentile bootstrap needs this many pairs: with two, only three resample means exist.
MIN_PAIRS_BOOTSTRAP = 3
#: Below this many pairs the percentile bootstrap undercovers (it uses the plug-in sd and
#: normal tails). Measured by ``benchmarks/stats_simulation.py`` (simulated campaigns of
#: :mod:`rig.stats.simulation`, 1,000 per size x 6 profiles, seed 20240801, 2,000 resamples):
#: its 95% interval covered the true mean delta 88.3% of the time with 8 pairs, 91.8% with 16,
#: 93.0% with 24 and 94.0% with 32, where the t-interval covered 94.7-95.5% (binomial
#: standard error of each figure 0.3-0.4 points). The tables add a note below this many pairs;
#: read the t-interval there.
SMALL_SAMPLE_PAIRS = 30


def _check_confidence(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1 (got {confidence!r})")
    return float(confidence)


def wilson_interval(successes: float, n: float, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a proportion ``successes / n`` (both counts; result in [0, 1]).

    Formula: Wilson, E. B. (1927), "Probable inference, the law of succession, and statistical
    inference", JASA 22:209-212; the same as statsmodels ``proportion_confint(method="wilson")``.
    Unlike the Wald interval it stays inside [0, 1] and is informative at 0 or n successes.

    Raises:
        NotComputable: ``n`` is 0 (no observations).
        ValueError: ``successes`` outside [0, n], or ``confidence`` outside (0, 1).
    """
    _check_confidence(confidence)
    if n <= 0:
        raise NotComputable("no observations (n = 0)")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n={n} (got {successes!r})")
    from scipy import stats  # imported where used: ~2 s a campaign worker need not pay

    z = stats.norm.ppf(1.0 - (1.0 - confidence) / 2.0)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2.0 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denom
    # at 0 or n successes the bound is exactly 0 or 1 (float rounding gave 0.9999999999999999,
    # an interval that missed its own estimate: tests/test_properties_stats_unit.py)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return interval(low, high)


#: Values larger than this are divided by their largest magnitude before they are summed (the
#: square of 1e155 overflows float64) and the interval multiplied back; points and seconds
#: never come near it, so their intervals are computed exactly as before.
SCALE_ABOVE = 1e100


def _scaled(x: np.ndarray) -> tuple[np.ndarray, float]:
    top = float(np.max(np.abs(x))) if x.size else 0.0
    return (x / top, top) if top > SCALE_ABOVE else (x, 1.0)


def _unscaled(low: float, high: float, scale: float) -> Interval:
    low, high = low * scale, high * scale
    if not (math.isfinite(low) and math.isfinite(high)):
        raise NotComputable("the interval lies beyond the range of float64 numbers")
    return interval(low, high)


def _spread_check(values: np.ndarray, what: str, scale: float = 1.0) -> None:
    if values.size and np.ptp(values) <= 1e-9 * max(1.0 / scale,
                                                   float(np.max(np.abs(values)))):
        raise NotComputable(
            f"zero variance: all {values.size} {what} equal {float(values[0]) * scale:.6g}; "
            "an interval would claim a certainty the data cannot give")


def t_interval(values: np.ndarray, confidence: float = 0.95) -> Interval:
    """Student t interval for the mean of ``values`` (same units as the values).

    mean +/- t(1 - (1 - confidence)/2, n - 1) * sd / sqrt(n), sd with n - 1 degrees of freedom
    (Student 1908; for paired deltas this is ``scipy.stats.ttest_rel(...).confidence_interval``).

    Raises:
        NotComputable: fewer than 2 values, or all values equal (zero variance).
        ValueError: ``confidence`` outside (0, 1).
    """
    _check_confidence(confidence)
    x = np.asarray(values, dtype=float)
    if x.size < 2:
        raise NotComputable(f"needs at least 2 pairs (got {x.size})")
    x, scale = _scaled(x)
    _spread_check(x, "pairs", scale)
    mean = float(np.mean(x))
    se = float(np.std(x, ddof=1)) / math.sqrt(x.size)
    from scipy import stats

    half = float(stats.t.ppf(1.0 - (1.0 - confidence) / 2.0, x.size - 1)) * se
    return _unscaled(mean - half, mean + half, scale)


def bootstrap_mean_interval(values: np.ndarray, n_boot: int = 2000, seed: int = 0,
                            confidence: float = 0.95) -> Interval:
    """Seeded percentile bootstrap interval for the mean of ``values`` (same units).

    Draws ``n_boot`` resamples of the values with replacement (indices from
    ``numpy.random.default_rng(seed).integers(0, n, (n_boot, n))``), takes each resample's
    mean, and returns the (1 - confidence)/2 and (1 + confidence)/2 percentiles of those means
    (linear interpolation). Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch.
    13; identical to ``scipy.stats.bootstrap(method="percentile", rng=default_rng(seed))``.
    The percentile interval undercovers in small samples (it uses the plug-in sd and normal
    tails); below :data:`SMALL_SAMPLE_PAIRS` read the t-interval.

    Raises:
        NotComputable: fewer than :data:`MIN_PAIRS_BOOTSTRAP` values, all values equal, or
            ``n_boot`` is 0 (bootstrap switched off).
        ValueError: ``n_boot`` negative, or ``confidence`` outside (0, 1).
    """
    _check_confidence(confidence)
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0 (got {n_boot!r})")
    if n_boot == 0:
        raise NotComputable("bootstrap switched off (n_boot = 0)")
    x = np.asarray(values, dtype=float)
    if x.size < MIN_PAIRS_BOOTSTRAP:
        raise NotComputable(
            f"needs at least {MIN_PAIRS_BOOTSTRAP} pairs for a percentile bootstrap "
            f"(got {x.size}); see the t-interval")
    x, scale = _scaled(x)
    _spread_check(x, "pairs", scale)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, (int(n_boot), x.size))
    means = x[idx].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.percentile(means, [100.0 * tail, 100.0 * (1.0 - tail)])
    return _unscaled(float(low), float(high), scale)
