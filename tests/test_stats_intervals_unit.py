"""Intervals against independent computations (statsmodels, scipy) and degenerate inputs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from rig.stats import NotComputable, bootstrap_mean_interval, t_interval, wilson_interval
from rig.stats.intervals import MIN_PAIRS_BOOTSTRAP

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("seed", range(20))
def test_wilson_matches_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    k = int(rng.integers(0, n + 1))
    low, high = wilson_interval(k, n)
    ref = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert low == pytest.approx(ref[0], abs=1e-12)
    assert high == pytest.approx(ref[1], abs=1e-12)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (10, 10), (0, 1), (1, 1)])
def test_wilson_at_the_edges_stays_in_unit_interval(k: int, n: int) -> None:
    low, high = wilson_interval(k, n)
    ref = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert 0.0 <= low <= high <= 1.0
    assert (low, high) == pytest.approx(ref, abs=1e-12)


def test_wilson_with_no_observations_is_not_computable() -> None:
    with pytest.raises(NotComputable, match="n = 0"):
        wilson_interval(0, 0)


def test_wilson_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError, match="between 0 and n"):
        wilson_interval(5, 3)
    with pytest.raises(ValueError, match="confidence"):
        wilson_interval(1, 3, confidence=1.5)


@pytest.mark.parametrize("seed", range(20))
def test_t_interval_matches_scipy_ttest_rel(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    base = rng.normal(60, 10, n)
    prof = base + rng.normal(-2, 5, n)
    ref = stats.ttest_rel(prof, base).confidence_interval(0.95)
    low, high = t_interval(prof - base)
    assert low == pytest.approx(ref.low, rel=1e-10)
    assert high == pytest.approx(ref.high, rel=1e-10)


@pytest.mark.parametrize("seed", range(10))
def test_bootstrap_matches_scipy_percentile_bootstrap(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    x = rng.normal(-3, 6, int(rng.integers(3, 80)))
    ours = bootstrap_mean_interval(x, n_boot=2000, seed=seed)
    ref = stats.bootstrap((x,), np.mean, n_resamples=2000, method="percentile",
                          rng=np.random.default_rng(seed), vectorized=True)
    assert ours == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high),
                                 rel=1e-10)


def test_bootstrap_is_reproducible_and_seed_dependent() -> None:
    x = np.random.default_rng(1).normal(0, 1, 30)
    assert bootstrap_mean_interval(x, 500, 3) == bootstrap_mean_interval(x, 500, 3)
    assert bootstrap_mean_interval(x, 500, 3) != bootstrap_mean_interval(x, 500, 4)


def test_one_value_is_not_computable() -> None:
    with pytest.raises(NotComputable, match="at least 2"):
        t_interval(np.array([1.0]))
    with pytest.raises(NotComputable, match=f"at least {MIN_PAIRS_BOOTSTRAP}"):
        bootstrap_mean_interval(np.array([1.0]))


def test_two_values_t_interval_is_wide_and_bootstrap_refuses() -> None:
    low, high = t_interval(np.array([1.0, 3.0]))
    ref = stats.t.interval(0.95, 1, loc=2.0, scale=1.0)  # sd = sqrt(2), se = 1
    assert (low, high) == pytest.approx(ref)
    with pytest.raises(NotComputable, match="at least 3 pairs"):
        bootstrap_mean_interval(np.array([1.0, 3.0]))


def test_zero_variance_is_not_computable_for_both_intervals() -> None:
    x = np.full(12, 2.5)
    with pytest.raises(NotComputable, match="zero variance"):
        t_interval(x)
    with pytest.raises(NotComputable, match="zero variance"):
        bootstrap_mean_interval(x)


def test_bootstrap_switched_off_and_bad_arguments() -> None:
    x = np.arange(10.0)
    with pytest.raises(NotComputable, match="n_boot = 0"):
        bootstrap_mean_interval(x, n_boot=0)
    with pytest.raises(ValueError, match="n_boot"):
        bootstrap_mean_interval(x, n_boot=-1)
    with pytest.raises(ValueError, match="confidence"):
        t_interval(x, confidence=0.0)
