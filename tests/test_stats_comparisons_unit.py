"""The probes' paired comparison (rig.stats.comparisons) against scipy: t, Wilcoxon, the exact
sign test, d_z, and the p-value a summary reads, on ordinary and degenerate data."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from rig.stats import bonferroni_paired, paired_comparison, sign_test

pytestmark = pytest.mark.unit


def test_paired_comparison_against_scipy_and_degenerate_data():
    rng = np.random.default_rng(0)
    a = rng.integers(1, 6, 40).astype(float)
    b = np.clip(a - rng.integers(0, 3, 40), 1, 5)
    pc = paired_comparison(a, b)
    t = stats.ttest_rel(b, a)
    assert pc.t_p == pytest.approx(t.pvalue) and pc.t_df == 39
    assert pc.wilcoxon_p == pytest.approx(stats.wilcoxon(b - a).pvalue)
    assert pc.cohens_dz == pytest.approx(np.mean(b - a) / np.std(b - a, ddof=1))
    assert pc.p == pc.t_p and pc.p_test == "paired_t"
    # NaN on either side drops the pair
    a2, b2 = np.append(a, np.nan), np.append(b, 3.0)
    assert paired_comparison(a2, b2).n_pairs == 40
    # nothing paired
    pc = paired_comparison([], [])
    assert pc.n_pairs == 0 and pc.mean_diff is None and "no item" in pc.not_computable["t_p"]
    assert pc.p is None and pc.sign_p is None and "no item" in pc.not_computable["p"]
    # one pair: no t-test, so no headline p (the sign test alone is reported: p = 1)
    pc = paired_comparison([3.0], [2.0])
    assert pc.mean_diff == -1 and pc.t_p is None and "at least 2" in pc.not_computable["t_p"]
    assert pc.sign_p == pytest.approx(1.0) and pc.p is None
    assert "at least 2" in pc.not_computable["p"]
    # all equal: no t, no Wilcoxon, no sign test, no d_z, no headline p
    pc = paired_comparison([3, 4, 5], [3, 4, 5])
    assert pc.mean_diff == 0 and pc.t_p is None and pc.wilcoxon_p is None
    assert pc.sign_p is None and pc.p is None and pc.p_test is None
    assert pc.cohens_dz is None and "tied" in pc.not_computable["wilcoxon_p"]
    assert "tied" in pc.not_computable["p"] and "tied" in pc.not_computable["sign_p"]
    with pytest.raises(ValueError, match="differ in length"):
        paired_comparison([1, 2], [1])


def test_a_constant_shift_is_decided_by_the_exact_sign_test():
    # ten hedged answers each exactly 1 point below their confident twin
    ref = np.array([4, 5, 3, 4, 4, 5, 2, 3, 4, 5], dtype=float)
    pc = paired_comparison(ref, ref - 1)
    assert pc.t_p is None and pc.cohens_dz is None
    assert "zero variance" in pc.not_computable["t_p"]
    assert "sign test decides" in pc.not_computable["t_p"]
    assert (pc.sign_n_positive, pc.sign_n_negative) == (0, 10)
    assert pc.sign_p == pytest.approx(2 * 0.5**10) and pc.sign_p == pytest.approx(0.001953125)
    assert pc.sign_p == pytest.approx(stats.binomtest(0, 10, 0.5).pvalue)
    assert pc.p == pc.sign_p and pc.p_test == "sign" and "p" not in pc.not_computable
    # Wilcoxon is still reported beside it (scipy's own p-value for ten equal ranks)
    assert pc.wilcoxon_p == pytest.approx(stats.wilcoxon(np.full(10, -1.0)).pvalue)
    d = pc.to_dict()
    assert d["p_test"] == "sign" and d["t_p"] is None and json.dumps(d)
    # the same shift upward, and a 4-pair shift (p = 2 / 16)
    up = paired_comparison(ref, ref + 2)
    assert up.p_test == "sign" and up.sign_p == pytest.approx(2 * 0.5**10)
    small = paired_comparison([3, 4, 5, 4], [2, 3, 4, 3])
    assert small.p == pytest.approx(0.125) and small.p_test == "sign"


def test_sign_test_equals_scipy_binomtest_with_ties():
    rng = np.random.default_rng(7)
    for n in (5, 12, 40):
        a = rng.integers(1, 6, n).astype(float)
        b = np.clip(a + rng.integers(-2, 2, n), 1, 5)
        d = b - a
        pos, neg = int((d > 0).sum()), int((d < 0).sum())
        pc = paired_comparison(a, b)
        assert (pc.sign_n_positive, pc.sign_n_negative) == (pos, neg)
        assert pc.n_zero_diffs == n - pos - neg
        if pos + neg:
            assert pc.sign_p == pytest.approx(stats.binomtest(pos, pos + neg, 0.5).pvalue)
        assert sign_test(d) == (pos, neg, pc.sign_p)
    assert sign_test([0.0, np.nan]) == (0, 0, None)


def test_bonferroni_uses_the_sign_test_for_a_constant_shift():
    ref = {"a": np.ones(12), "b": np.linspace(0, 1, 12)}
    pert = {"a": np.full(12, 2.0), "b": np.linspace(0, 1, 12) + np.tile([0.1, -0.2], 6)}
    out = {t.measure: t for t in bonferroni_paired(ref, pert, alpha=0.05)}
    assert out["a"].paired.p_test == "sign"
    assert out["a"].p_bonferroni == pytest.approx(min(1.0, 2 * 2 * 0.5**12))
    assert out["a"].violated is True and not out["a"].not_computable
    p_b = stats.ttest_rel(pert["b"], ref["b"]).pvalue
    assert out["b"].p_bonferroni == pytest.approx(min(1.0, 2 * p_b))
    # a single pair stays untestable, with the reason
    one = bonferroni_paired({"a": [1.0]}, {"a": [2.0]})[0]
    assert one.violated is None and "at least 2" in one.not_computable["violated"]
