"""Prediction-powered means (rig.stats.ppi): the published formula recomputed by hand, the
reference implementation (ppi-python) where it is installed, and the CI's coverage on
seeded simulations at several judge error structures (93-97% of 95%)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rig.stats.ppi import Z95, power_tuning, ppi_mean, ratings_for_width

pytestmark = pytest.mark.unit


def test_the_published_formula_by_hand():
    y = np.array([60.0, 72, 40, 85, 55])
    f = np.array([70.0, 75, 62, 88, 66])
    fu = np.array([64.0, 80, 58, 90, 71, 67, 59])
    n, big_n = 5, 7
    cov = sum((y - y.mean()) * (f - f.mean())) / (n - 1)
    var_f = sum((f - f.mean()) ** 2) / (n - 1)
    lam = min(1.0, max(0.0, cov / ((1 + n / big_n) * var_f)))
    est = fu.mean() * lam + (y - lam * f).mean()
    rect = y - lam * f
    se = math.sqrt(sum((rect - rect.mean()) ** 2) / (n - 1) / n
                   + lam**2 * sum((fu - fu.mean()) ** 2) / (big_n - 1) / big_n)
    p = ppi_mean(y, f, fu)
    assert p.lam == pytest.approx(lam) and p.estimate == pytest.approx(est)
    assert p.se == pytest.approx(se)
    assert p.ci95 == pytest.approx((est - 1.959964 * se, est + 1.959964 * se), rel=1e-6)
    assert p.judge_only == pytest.approx(np.concatenate([f, fu]).mean())
    # lambda = 1 is the original PPI: the judge's unrated mean plus the mean rectifier
    assert ppi_mean(y, f, fu, lam=1).estimate == pytest.approx(fu.mean() + (y - f).mean())
    # no unrated units: the ratings' own mean and t-free normal CI
    only = ppi_mean(y, f, np.array([]))
    assert only.lam == 0 and only.estimate == pytest.approx(y.mean())


def test_ratings_for_width_reaches_the_width():
    rng = np.random.default_rng(1)
    y = rng.normal(60, 15, 40)
    f = y + rng.normal(5, 6, 40)
    fu = rng.normal(65, 16, 2000)
    p = ppi_mean(y, f, fu)
    n = ratings_for_width(p, 6.0)
    half = Z95 * math.sqrt(p.var_rectifier / n + p.lam**2 * p.var_judge_unrated / 2000)
    assert 2 * half <= 6.0
    half_less = Z95 * math.sqrt(p.var_rectifier / (n - 1)
                                + p.lam**2 * p.var_judge_unrated / 2000)
    assert 2 * half_less > 6.0 or n == 2
    assert ratings_for_width(p, 1e-6) is None or p.lam == 0
    with pytest.raises(ValueError, match="width must be positive"):
        ratings_for_width(p, 0)


def test_refuses_too_few_and_nan():
    with pytest.raises(ValueError, match="at least 2 rated"):
        ppi_mean(np.array([1.0]), np.array([1.0]), np.array([2.0, 3.0]))
    with pytest.raises(ValueError, match="NaN"):
        ppi_mean(np.array([1.0, np.nan]), np.array([1.0, 2]), np.array([2.0]))


def _judges(y: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    e = rng.normal(0, 1, len(y))
    return {
        "unbiased noisy": y + 10 * e,
        "compressing, weak answers inflated": 0.4 * y + 45 + 5 * e,
        "offset below the cutoff": y + 30 * (y < 50) + 8 * e,
        "uninformative": 62 + 15 * e,
    }


@pytest.mark.parametrize("judge", ["unbiased noisy", "compressing, weak answers inflated",
                                   "offset below the cutoff", "uninformative"])
def test_coverage_of_the_95_ci_by_simulation(judge):
    """Human scores 100 * Beta(2, 2) (true mean 50); n = 150 rated, N = 1500 unrated; 2000
    seeded replications: the PPI++ CI covers 50 in 93-97% of them whatever the judge."""
    rng = np.random.default_rng(29)
    n, big_n, reps, hits, judge_only_hits = 150, 1500, 2000, 0, 0
    for _ in range(reps):
        y = 100 * rng.beta(2, 2, n + big_n)
        f = _judges(y, rng)[judge]
        p = ppi_mean(y[:n], f[:n], f[n:])
        hits += p.ci95[0] <= 50 <= p.ci95[1]
        judge_only_hits += abs(p.judge_only - 50) < 1
    assert 0.93 <= hits / reps <= 0.97
    if judge != "unbiased noisy":  # the judge alone is off by more than a point
        assert judge_only_hits / reps < 0.5


def test_power_tuning_is_zero_for_a_judge_without_spread():
    assert power_tuning(np.array([1.0, 2, 3]), np.array([5.0, 5, 5]), 10) == 0.0


def test_against_the_reference_implementation():
    """ppi-python (Angelopoulos et al.'s own package): the same estimate and CI."""
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python is not installed (test extra)")
    rng = np.random.default_rng(7)
    y = 100 * rng.beta(2, 2, 80)
    f = 0.5 * y + 30 + rng.normal(0, 6, 80)
    fu = 0.5 * (100 * rng.beta(2, 2, 900)) + 30 + rng.normal(0, 6, 900)
    ours = ppi_mean(y, f, fu)
    est = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, f, fu, lam=ours.lam))[0])
    lo, hi = (float(np.ravel(v)[0]) for v in ppi_py.ppi_mean_ci(y, f, fu, alpha=0.05,
                                                                 lam=ours.lam))
    assert ours.estimate == pytest.approx(est, rel=1e-9)
    assert ours.ci95 == pytest.approx((lo, hi), rel=1e-3)
    # and its own power tuning gives a weight close to ours
    tuned_lo, tuned_hi = (float(np.ravel(v)[0]) for v in ppi_py.ppi_mean_ci(y, f, fu,
                                                                             alpha=0.05))
    assert (tuned_hi - tuned_lo) == pytest.approx(ours.ci95[1] - ours.ci95[0], rel=0.05)
