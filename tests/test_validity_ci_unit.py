"""rig.stats.validity's bootstrap CIs of Spearman and Pearson correlations, computed for all
resamples at once, against the same resamples correlated one by one by scipy.stats.spearmanr
and pearsonr (the independent computation it replaced): equal to 1e-12."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rig.stats.validity import _corr_cis

pytestmark = pytest.mark.unit


def _one_by_one(x, y, fn, n_boot, seed):
    rng = np.random.default_rng(seed)
    n = len(x)
    vals = []
    for _ in range(n_boot):
        i = rng.integers(0, n, n)
        if np.ptp(x[i]) == 0 or np.ptp(y[i]) == 0:
            continue
        vals.append(fn(x[i], y[i])[0])
    if len(vals) < n_boot / 2:
        return None
    lo, hi = np.percentile(vals, [2.5, 97.5])
    return float(lo), float(hi)


CASES = [
    # grades with ties (points on a 0-100 scale in steps of 5), n from tiny to a bank
    (np.round(np.random.default_rng(1).uniform(0, 100, 40) / 5) * 5,
     np.round(np.random.default_rng(2).uniform(0, 100, 40) / 5) * 5),
    (np.array([10.0, 20, 20, 35, 90]), np.array([15.0, 15, 40, 30, 80])),
    # three values, one repeated: many resamples have no spread and are left out
    (np.array([0.0, 0, 100]), np.array([5.0, 60, 60])),
    (np.linspace(0, 100, 17), np.linspace(0, 100, 17) ** 1.5),  # perfectly monotone
]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize(("which", "fn"), [(0, stats.spearmanr), (1, stats.pearsonr)])
@pytest.mark.parametrize("seed", [0, 7])
def test_all_at_once_equals_one_by_one(case, which, fn, seed):
    x, y = CASES[case]
    want = _one_by_one(x, y, fn, 400, seed)
    got = _corr_cis(x, y, 400, seed)[which]
    if want is None:
        assert got is None
    else:
        assert got == pytest.approx(want, abs=1e-12, rel=0)


def test_too_few_resamples_with_spread_give_none():
    # a resample has spread only when it draws both the last x and the first y: about 44%
    x, y = np.array([0.0, 0, 0, 0, 0, 0, 0, 100]), np.array([1.0, 2, 2, 2, 2, 2, 2, 2])
    assert _one_by_one(x, y, stats.spearmanr, 200, 0) is None
    assert _corr_cis(x, y, 200, 0)[0] is None
    assert _corr_cis(x, y, 0, 0)[1] is None


def test_one_call_draws_the_resamples_of_one_call_each():
    """``_corr_cis`` draws all resamples in one ``rng.integers(0, n, (n_boot, n))``: numpy's
    Generator gives the numbers of ``n_boot`` calls ``rng.integers(0, n, n)``, any n."""
    for n in [*range(1, 66), 255, 256, 1001]:
        a, b = np.random.default_rng(n), np.random.default_rng(n)
        each = np.stack([a.integers(0, n, n) for _ in range(20)])
        assert (b.integers(0, n, (20, n)) == each).all(), n


def _rows(tiers, scores, refs):
    import pandas as pd

    return pd.DataFrame({"question_id": "q1", "tier": tiers, "cutoff": 60.0,
                         "score": scores, "reference_score": refs})


def test_a_tier_that_is_not_one_is_named_not_ranked_lowest():
    from rig.stats.validity import judge_validity

    rows = _rows(["weak", "borderline_high", "strong"], [10.0, 50, 90], [5.0, 55, 95])
    with pytest.raises(ValueError, match="'borderline_high' is not a tier"):
        judge_validity(rows)
    # an answer without a tier (empty or null) is only left out of the tier order
    v = judge_validity(_rows(["weak", "", None, "strong"], [10.0, 50, 70, 90],
                             [5.0, 55, 60, 95]))
    assert v.tier_order_rate == 1.0 and v.n_answers == 4


def test_a_correlation_without_a_ci_says_why():
    from rig.stats.validity import judge_validity

    # n = 3, one value repeated: most resamples have no spread
    v = judge_validity(_rows(["weak", "borderline", "strong"], [0.0, 0, 100], [100.0, 0, 0]),
                       n_boot=2000)
    assert v.spearman is not None and v.spearman_ci95 is None
    assert "fewer than half of the 2000 bootstrap resamples" in v.not_computable[
        "spearman_ci95"]
    v = judge_validity(_rows(["weak", "borderline", "strong"], [10.0, 50, 90],
                             [5.0, 55, 95]), n_boot=0)
    assert v.not_computable["pearson_ci95"] == "n_boot is 0: no bootstrap"
