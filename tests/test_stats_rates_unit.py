"""Rates, ratios and two-proportion tests against statsmodels/scipy and hand computation."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats import proportion as sm_proportion
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportions_ztest

from rig.stats import (
    RowsError,
    compare_proportions,
    fisher_exact_test,
    scoring_rate_table,
    selection_rate_table,
    two_proportion_ztest,
)
from rig.stats.proportions import mcnemar_one_sided, small_sample_reasons

pytestmark = pytest.mark.unit


# -- the published worked example (Uniform Guidelines Q&A) ---------------------------------


def test_worked_example_56_of_540_against_38_of_120() -> None:
    res = compare_proportions(0.56 * 540, 540, 0.38 * 120, 120)
    assert round(res.impact_ratio, 2) == 0.68
    assert res.impact_ratio == pytest.approx(0.38 / 0.56)
    assert res.flagged is True
    assert res.ztest.z == pytest.approx(3.57, abs=0.01)  # "about 3.6"
    z_sm, p_sm = proportions_ztest([0.56 * 540, 0.38 * 120], [540, 120])
    assert res.ztest.z == pytest.approx(z_sm, rel=1e-12)
    assert res.ztest.p_value == pytest.approx(p_sm, rel=1e-10)
    assert res.fisher.rounded and res.fisher.counts == (302, 238, 46, 74)
    assert res.fisher.p_value == pytest.approx(
        stats.fisher_exact([[302, 238], [46, 74]]).pvalue, rel=1e-9)
    assert res.small_sample is False
    json.dumps(res.to_dict(), allow_nan=False)


# -- z-test ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(25))
def test_pooled_ztest_matches_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n1, n2 = (int(v) for v in rng.integers(5, 500, 2))
    x1, x2 = int(rng.integers(1, n1)), int(rng.integers(1, n2))
    for alt, sm_alt in (("two-sided", "two-sided"), ("larger", "larger"),
                        ("smaller", "smaller")):
        ours = two_proportion_ztest(x1, n1, x2, n2, alternative=alt)
        z, p = proportions_ztest([x1, x2], [n1, n2], alternative=sm_alt)
        assert ours.z == pytest.approx(z, rel=1e-12)
        assert ours.p_value == pytest.approx(p, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("seed", range(25))
def test_unpooled_ztest_matches_statsmodels_wald(seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    n1, n2 = (int(v) for v in rng.integers(5, 500, 2))
    x1, x2 = int(rng.integers(1, n1)), int(rng.integers(1, n2))
    ours = two_proportion_ztest(x1, n1, x2, n2, pooled=False)
    ref = sm_proportion.test_proportions_2indep(x1, n1, x2, n2, method="wald", compare="diff")
    assert ours.z == pytest.approx(ref.statistic, rel=1e-10)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-8)


@pytest.mark.parametrize(("x1", "n1", "x2", "n2", "why"), [
    (0, 50, 0, 80, "both rates are 0"),
    (50, 50, 80, 80, "both rates are 1"),
    (0, 0, 3, 10, "no rows"),
    (3, 10, 0, 0, "no rows"),
])
def test_ztest_not_computable_says_so(x1, n1, x2, n2, why) -> None:
    res = two_proportion_ztest(x1, n1, x2, n2)
    assert res.z is None and res.p_value is None and why in res.reason


def test_unpooled_ztest_with_rates_0_and_1_is_not_computable_but_pooled_is() -> None:
    assert two_proportion_ztest(0, 10, 10, 10, pooled=False).reason is not None
    assert two_proportion_ztest(0, 10, 10, 10).z == pytest.approx(-np.sqrt(20.0))


def test_ztest_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError, match="0 <= x <= n"):
        two_proportion_ztest(11, 10, 1, 10)
    with pytest.raises(ValueError, match="alternative"):
        two_proportion_ztest(1, 10, 1, 10, alternative="less")  # type: ignore[arg-type]


# -- Fisher and McNemar -----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(30))
def test_fisher_matches_scipy(seed: int) -> None:
    rng = np.random.default_rng(2000 + seed)
    n1, n2 = (int(v) for v in rng.integers(1, 60, 2))
    x1, x2 = int(rng.integers(0, n1 + 1)), int(rng.integers(0, n2 + 1))
    table = [[x1, n1 - x1], [x2, n2 - x2]]
    for alt, sp in (("two-sided", "two-sided"), ("larger", "greater"), ("smaller", "less")):
        ours = fisher_exact_test(x1, n1, x2, n2, alternative=alt)
        assert ours.p_value == pytest.approx(stats.fisher_exact(table, sp).pvalue, rel=1e-9)


def test_fisher_with_both_rates_zero_is_one_and_with_an_empty_group_not_computable() -> None:
    assert fisher_exact_test(0, 10, 0, 12).p_value == pytest.approx(1.0)
    res = fisher_exact_test(0, 0, 1, 12)
    assert res.p_value is None and "no rows" in res.reason


@pytest.mark.parametrize(("b", "c"), [(0, 0), (5, 0), (0, 5), (7, 3), (12, 11), (30, 10)])
def test_mcnemar_one_sided_matches_scipy_and_statsmodels(b: int, c: int) -> None:
    p = mcnemar_one_sided(b, c)
    if b + c == 0:
        assert p == 1.0
        return
    assert p == pytest.approx(stats.binomtest(b, b + c, 0.5, alternative="greater").pvalue)
    two = mcnemar([[10, b], [c, 10]], exact=True).pvalue
    if b >= c:  # the two-sided exact test doubles the smaller tail
        assert min(1.0, 2 * p) == pytest.approx(two)


def test_small_sample_flag() -> None:
    assert small_sample_reasons(10, 20, 12, 25) != []  # groups under 30
    assert any("expected cell" in r for r in small_sample_reasons(1, 200, 2, 300))
    assert small_sample_reasons(100, 200, 120, 300) == []


def test_compare_proportions_with_both_rates_zero_has_no_ratio() -> None:
    res = compare_proportions(0, 40, 0, 50)
    assert res.impact_ratio is None and res.flagged is None
    assert "undefined" in res.not_computable["impact_ratio"]
    assert res.ztest.z is None
    json.dumps(res.to_dict(), allow_nan=False)


# -- rate tables ------------------------------------------------------------------------------


def _rows(seed: int = 0, n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    ch = rng.choice(["narrow", "wide"], n)
    score = np.round(rng.normal(60, 10, n) - 4 * (g == "c") - 2 * (ch == "narrow"))
    dec = np.where(score >= 62, "advance", "reject")
    return pd.DataFrame({"group": g, "channel": ch, "score": score, "decision": dec,
                         "parse_status": "ok"})


def test_scoring_rate_table_matches_hand_computation() -> None:
    df = _rows()
    table = scoring_rate_table(df, ["group"], min_share=0.0)
    med = float(np.median(df["score"]))
    assert table.median == med
    rates = {g: float((d["score"] > med).mean()) for g, d in df.groupby("group")}
    top = max(rates, key=rates.get)
    assert table.reference == top
    for c in table.by_group:
        assert c.rate == pytest.approx(rates[c.category])
        assert c.impact_ratio == pytest.approx(rates[c.category] / rates[top])
        assert c.difference == pytest.approx(rates[c.category] - rates[top])
        if not c.is_reference:
            d = df[df["group"] == c.category]
            r = df[df["group"] == top]
            z, p = proportions_ztest([(d["score"] > med).sum(), (r["score"] > med).sum()],
                                     [len(d), len(r)])
            assert c.z == pytest.approx(z) and c.p_z == pytest.approx(p)
            ft = stats.fisher_exact([[(d["score"] > med).sum(), (d["score"] <= med).sum()],
                                     [(r["score"] > med).sum(), (r["score"] <= med).sum()]])
            assert c.p_fisher == pytest.approx(ft.pvalue)
    assert table.overall == pytest.approx(float((df["score"] > med).mean()))
    assert table.ratio() == {c.category: c.impact_ratio for c in table.by_group}
    json.dumps(table.to_dict(), allow_nan=False)


def test_scores_equal_to_the_median_do_not_count_as_above() -> None:
    df = pd.DataFrame({"g": ["x"] * 5 + ["y"] * 5,
                       "score": [50, 50, 50, 60, 70, 50, 50, 50, 50, 40]})
    table = scoring_rate_table(df, ["g"], min_share=0.0)
    assert table.median == 50
    assert {c.category: c.rate for c in table.by_group} == {"x": 0.4, "y": 0.0}


def test_all_scoring_rates_zero_gives_undefined_ratios() -> None:
    df = pd.DataFrame({"g": list("xxyy"), "score": [50, 50, 50, 50]})
    table = scoring_rate_table(df, ["g"], min_share=0.0)
    for c in table.by_group:
        assert c.rate == 0.0 and c.impact_ratio is None and c.flagged is None
        assert "undefined" in c.not_computable["impact_ratio"]
    assert table.flagged == []


def test_selection_rate_table_matches_hand_computation() -> None:
    df = _rows(1)
    table = selection_rate_table(df, ["group"], min_share=0.0)
    rates = {g: float((d["decision"] == "advance").mean()) for g, d in df.groupby("group")}
    top = max(rates.values())
    for c in table.by_group:
        assert c.rate == pytest.approx(rates[c.category])
        assert c.impact_ratio == pytest.approx(rates[c.category] / top)
        assert c.flagged == (rates[c.category] / top < 0.8)


def test_intersectional_categories() -> None:
    df = _rows(2)
    table = selection_rate_table(df, ["group", "channel"], min_share=0.0)
    assert {c.category for c in table.by_group} == {
        f"{g} × {ch}" for g in "abc" for ch in ("narrow", "wide")}
    one = next(c for c in table.by_group if c.category == "c × narrow")
    assert one.values == {"group": "c", "channel": "narrow"}
    sub = df[(df["group"] == "c") & (df["channel"] == "narrow")]
    assert one.n == len(sub)
    assert one.rate == pytest.approx((sub["decision"] == "advance").mean())


def test_small_categories_are_excluded_and_counted() -> None:
    df = _rows(3, 1000)
    df.loc[:9, "group"] = "tiny"  # 1% of rows
    table = selection_rate_table(df, ["group"])  # min_share 2% by default
    assert [c.category for c in table.excluded] == ["tiny"]
    assert table.n_excluded_rows == 10
    assert "tiny" not in table.ratio()
    assert table.excluded[0].impact_ratio is None
    assert "excluded" in table.excluded[0].not_computable["impact_ratio"]
    kept = selection_rate_table(df, ["group"], min_share=0.0)
    assert "tiny" in kept.ratio()


def test_empty_category_of_a_categorical_column() -> None:
    df = _rows(4, 200)
    df["group"] = pd.Categorical(df["group"], categories=["a", "b", "c", "empty"])
    table = selection_rate_table(df, ["group"], min_share=0.0)
    empty = next(c for c in table.by_group if c.category == "empty")
    assert empty.n == 0 and empty.rate is None and empty.impact_ratio is None
    assert "no scored rows" in empty.not_computable["rate"]
    json.dumps(table.to_dict(), allow_nan=False)


def test_category_whose_rows_all_failed_to_parse() -> None:
    df = _rows(5, 300)
    df.loc[df["group"] == "c", "score"] = np.nan
    df.loc[df["group"] == "c", "parse_status"] = "invalid_json"
    table = scoring_rate_table(df, ["group"], min_share=0.0)
    c = next(x for x in table.by_group if x.category == "c")
    assert c.n == 0 and c.rate is None and c.n_parse_failures == (df["group"] == "c").sum()
    assert table.n_parse_failures == c.n_parse_failures
    assert table.median == float(df["score"].median())  # median of the scored rows only


def test_selection_rows_with_a_failed_parse_are_left_out() -> None:
    df = _rows(6, 200)
    df.loc[:19, "parse_status"] = "timeout"
    df.loc[20:29, "decision"] = None
    table = selection_rate_table(df, ["group"], min_share=0.0)
    assert table.n_parse_failures == 30 and table.n_scored == 170


def test_missing_and_bad_columns_are_named() -> None:
    df = _rows(7, 50)
    with pytest.raises(RowsError, match="segment: column missing"):
        selection_rate_table(df, ["segment"])
    df.loc[3, "decision"] = "maybe"
    with pytest.raises(RowsError, match=r"decision: row 4: .*\(got 'maybe'\)"):
        selection_rate_table(df, ["group"])
    with pytest.raises(RowsError, match="at least one"):
        selection_rate_table(_rows(7, 50), [])
    with pytest.raises(ValueError, match="min_share"):
        selection_rate_table(_rows(7, 50), ["group"], min_share=1.5)


def test_unpooled_table_option_matches_unpooled_ztest() -> None:
    df = _rows(8)
    table = selection_rate_table(df, ["group"], min_share=0.0, pooled=False)
    ref = next(c for c in table.by_group if c.is_reference)
    for c in table.by_group:
        if not c.is_reference:
            z = two_proportion_ztest(c.n_hits, c.n, ref.n_hits, ref.n, pooled=False)
            assert c.z == pytest.approx(z.z)
