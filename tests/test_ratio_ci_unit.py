"""Bootstrap CIs of impact ratios (rig.stats.ratio_ci, in the rate tables): against a
hand-written percentile bootstrap, coverage of the true ratio by seeded simulation, and the
cases with no interval."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rig.stats.rates import scoring_rate_table, selection_rate_table
from rig.stats.ratio_ci import impact_ratio_ci

pytestmark = pytest.mark.unit


def hits(k: int, n: int) -> np.ndarray:
    return np.r_[np.ones(k), np.zeros(n - k)]


def test_matches_a_hand_written_percentile_bootstrap():
    a, b = hits(12, 40), hits(25, 40)
    ci, why = impact_ratio_ci(a, b, n_boot=4000, seed=1)
    assert why is None
    rng = np.random.default_rng(99)
    ra = a[rng.integers(0, len(a), (20000, len(a)))].mean(1)
    rb = b[rng.integers(0, len(b), (20000, len(b)))].mean(1)
    lo, hi = np.percentile(ra / rb, [2.5, 97.5])
    assert ci[0] == pytest.approx(lo, abs=0.03) and ci[1] == pytest.approx(hi, abs=0.04)
    assert ci[0] < 12 / 25 < ci[1]
    assert impact_ratio_ci(a, b, n_boot=4000, seed=1) == (ci, None)  # seeded


def test_coverage_of_the_true_ratio():
    rng = np.random.default_rng(5)
    p, q, n = 0.3, 0.5, 150
    inside = 0
    for _ in range(200):
        a = (rng.random(n) < p).astype(float)
        b = (rng.random(n) < q).astype(float)
        ci, _ = impact_ratio_ci(a, b, n_boot=1000, seed=int(rng.integers(1 << 30)))
        inside += ci[0] <= p / q <= ci[1]
    assert 0.89 <= inside / 200 <= 0.99, inside


def test_no_interval_cases():
    assert impact_ratio_ci(hits(1, 1), hits(3, 5))[0] is None
    assert "reference rate is 0" in impact_ratio_ci(hits(0, 5), hits(0, 5))[1]
    assert impact_ratio_ci(hits(3, 3), hits(4, 4)) == ((1.0, 1.0), None)
    ci, why = impact_ratio_ci(hits(1, 3), hits(1, 4), n_boot=500)
    assert ci is None and "rate 0" in why
    with pytest.raises(ValueError, match="n_boot"):
        impact_ratio_ci(hits(1, 3), hits(1, 4), n_boot=0)


def test_rate_tables_carry_the_ci():
    rows = pd.DataFrame({"g": ["a"] * 40 + ["b"] * 40,
                         "decision": ["advance"] * 25 + ["reject"] * 15
                         + ["advance"] * 12 + ["reject"] * 28,
                         "score": np.r_[np.linspace(50, 90, 40), np.linspace(10, 70, 40)]})
    t = selection_rate_table(rows, ["g"], n_boot=1000, seed=3)
    a, b = t.by_group
    assert a.is_reference and a.impact_ratio_ci95 is None
    assert b.impact_ratio == pytest.approx(12 / 25)
    assert b.impact_ratio_ci95[0] < b.impact_ratio < b.impact_ratio_ci95[1]
    assert b.impact_ratio_ci95 == impact_ratio_ci(hits(12, 40), hits(25, 40), n_boot=1000,
                                                  seed=3)[0]
    assert b.to_dict()["impact_ratio_ci95"] == list(b.impact_ratio_ci95) or \
        tuple(b.to_dict()["impact_ratio_ci95"]) == b.impact_ratio_ci95
    s = scoring_rate_table(rows, ["g"], n_boot=0)
    assert all(c.impact_ratio_ci95 is None for c in s.by_group)
