"""Property tests (hypothesis, ``ci`` profile of ``tests/props.py``) for the statistics: no
exception on any finite input (a figure that cannot be computed is None with a reason, or
:class:`~rig.stats.common.NotComputable`), a confidence interval contains its estimate, rates
and ratios lie in [0, 1], p-values in [0, 1], and a permutation of the rows changes nothing."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from props import CI, counted

from rig.stats import paired_by_profile
from rig.stats.common import NotComputable, jsonable
from rig.stats.comparisons import paired_comparison
from rig.stats.intervals import bootstrap_mean_interval, t_interval, wilson_interval
from rig.stats.proportions import fisher_exact_test, two_proportion_ztest
from rig.stats.rates import scoring_rate_table, selection_rate_table

pytestmark = pytest.mark.unit

#: finite values of any size (1e300 included: a sum may overflow, a figure must not be NaN)
finite = st.floats(allow_nan=False, allow_infinity=False)
#: scores as a campaign has them: points, with parse failures (NaN) among them
points = st.one_of(st.floats(0, 100), st.integers(0, 100).map(float), st.just(math.nan))


def _dict(x) -> str:
    return json.dumps(jsonable(x), sort_keys=True, default=str)


def _close(a, b) -> bool:
    """Equal, or equal up to the float rounding of a sum taken in another order."""
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


@CI
@given(n=st.integers(0, 10**6), frac=st.floats(0, 1), confidence=st.floats(0.5, 0.999))
@counted
def test_wilson_interval_contains_the_rate_inside_0_1(n, frac, confidence):
    x = round(frac * n)
    try:
        iv = wilson_interval(x, n, confidence)
    except NotComputable:
        assert n == 0
        return
    assert 0.0 <= iv[0] <= x / n <= iv[1] <= 1.0


@CI
@given(values=st.lists(finite, max_size=60), seed=st.integers(0, 2**32 - 1))
@counted
def test_t_and_bootstrap_intervals_contain_the_mean_or_say_why_not(values, seed):
    x = np.asarray(values)
    for make in (lambda v: t_interval(v), lambda v: bootstrap_mean_interval(v, 200, seed)):
        try:
            iv = make(x)
        except NotComputable as exc:
            assert str(exc)
            continue
        top = float(np.max(np.abs(x)))
        mean = float(np.mean(x / top)) * top if top > 1e100 else float(np.mean(x))
        assert math.isfinite(iv[0]) and math.isfinite(iv[1])
        tol = 1e-9 * max(1.0, abs(mean))
        assert iv[0] - tol <= mean <= iv[1] + tol


@CI
@given(pairs=st.lists(st.tuples(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6)), max_size=30),
       order=st.randoms(use_true_random=False))
@counted
def test_paired_comparison_is_total_and_ignores_the_order_of_pairs(pairs, order):
    ref, treat = [p[0] for p in pairs], [p[1] for p in pairs]
    out = paired_comparison(ref, treat, wilcoxon=len(pairs) <= 12)
    for p in (out.t_p, out.wilcoxon_p, out.sign_p, out.p):
        assert p is None or 0.0 <= p <= 1.0
    if out.t_ci95 is not None and out.mean_diff is not None:
        tol = 1e-9 * max(1.0, abs(out.mean_diff))
        assert out.t_ci95[0] - tol <= out.mean_diff <= out.t_ci95[1] + tol
    shuffled = list(pairs)
    order.shuffle(shuffled)
    again = paired_comparison([p[0] for p in shuffled], [p[1] for p in shuffled],
                              wilcoxon=len(pairs) <= 12)
    assert again.n_pairs == out.n_pairs and again.p_test == out.p_test
    for f in ("mean_diff", "t_p", "sign_p", "wilcoxon_p", "cohens_dz"):
        assert _close(getattr(again, f), getattr(out, f)), f


@CI
@given(n1=st.integers(0, 10**5), n2=st.integers(0, 10**5), f1=st.floats(0, 1),
       f2=st.floats(0, 1), pooled=st.booleans())
@counted
def test_two_proportion_tests_give_p_values_in_0_1(n1, n2, f1, f2, pooled):
    x1, x2 = round(f1 * n1), round(f2 * n2)
    z = two_proportion_ztest(x1, n1, x2, n2, pooled=pooled)
    assert (z.p_value is None) == (z.reason is not None)
    assert z.p_value is None or 0.0 <= z.p_value <= 1.0
    if max(n1, n2) <= 2000:  # Fisher's exact test sums the hypergeometric: keep it quick
        f = fisher_exact_test(x1, n1, x2, n2)
        assert f.p_value is None or 0.0 <= f.p_value <= 1.0


def _rows():
    row = st.fixed_dictionaries({
        "answer_id": st.sampled_from(["a1", "a2", "a3", "a4", "a5", "a6"]),
        "profile_id": st.sampled_from(["baseline", "fast", "noisy"]),
        "repeat": st.integers(0, 2), "score": points,
        "group": st.sampled_from(["x", "y", "z", ""]),
        "sex": st.sampled_from(["f", "m"]),
        "decision": st.sampled_from(["advance", "reject", None])})
    return st.lists(row, min_size=1, max_size=40).map(
        lambda rs: pd.DataFrame(rs).drop_duplicates(["answer_id", "profile_id", "repeat"]))


@CI
@given(rows=_rows(), order=st.randoms(use_true_random=False))
@counted
def test_rate_tables_have_rates_in_0_1_and_ignore_row_order(rows, order):
    perm = list(range(len(rows)))
    order.shuffle(perm)
    shuffled = rows.iloc[perm].reset_index(drop=True)
    for make in (lambda r: scoring_rate_table(r, ["group"]),
                 lambda r: selection_rate_table(r, ["group", "sex"])):
        table = make(rows)
        for c in (*table.by_group, *table.excluded):
            for v in (c.rate, c.impact_ratio, c.share, c.p_z, c.p_fisher):
                assert v is None or 0.0 <= v <= 1.0 + 1e-12
        assert table.overall is None or 0.0 <= table.overall <= 1.0
        assert _dict(make(shuffled).to_dict()) == _dict(table.to_dict())


@CI
@given(rows=_rows(), order=st.randoms(use_true_random=False))
@counted
def test_paired_table_ignores_row_order(rows, order):
    if not (rows["profile_id"] == "baseline").any():
        rows = pd.concat([rows, pd.DataFrame([{"answer_id": "a1", "profile_id": "baseline",
                                                "repeat": 9, "score": 50.0}])])
    perm = list(range(len(rows)))
    order.shuffle(perm)
    shuffled = rows.iloc[perm].reset_index(drop=True)
    rows = rows.drop(columns=["decision"])
    shuffled = shuffled.drop(columns=["decision"])
    table = paired_by_profile(rows, n_boot=100, seed=1)
    again = paired_by_profile(shuffled, n_boot=100, seed=1)
    assert list(table) == list(again)
    for pid, row in table.items():
        a, b = row.to_dict(), again[pid].to_dict()
        assert a.keys() == b.keys()
        for k in a:
            if isinstance(a[k], float):
                assert _close(a[k], b[k]), (pid, k)
            elif k not in ("bootstrap_ci95",):
                assert _dict(a[k]) == _dict(b[k]), (pid, k)
        for k, v in a.items():
            if k.endswith("rate") and isinstance(v, float):
                assert 0.0 <= v <= 1.0, (pid, k, v)


@CI
@given(n1=st.integers(0, 5000), n2=st.integers(0, 5000), f1=st.floats(0, 1),
       f2=st.floats(0, 1), b=st.integers(0, 500), c=st.integers(0, 500))
@counted
def test_proportion_comparison_and_mcnemar_stay_in_0_1(n1, n2, f1, f2, b, c):
    from rig.stats.proportions import compare_proportions, mcnemar_one_sided

    x1, x2 = round(f1 * n1), round(f2 * n2)
    cmp = compare_proportions(x1, n1, x2, n2)
    for v in (cmp.rate1, cmp.rate2, cmp.impact_ratio):
        assert v is None or 0.0 <= v <= 1.0
    assert cmp.difference is None or -1.0 <= cmp.difference <= 1.0
    assert 0.0 <= mcnemar_one_sided(b, c) <= 1.0


LEVELS = ("advance", "advance with reservations", "do not advance")


@CI
@given(pairs=st.lists(st.tuples(st.sampled_from((*LEVELS, None)),
                                st.sampled_from((*LEVELS, None))), max_size=60),
       order=st.randoms(use_true_random=False))
@counted
def test_paired_decision_test_is_total_and_ignores_session_order(pairs, order):
    from rig.stats.decisions import paired_decision_test

    out = paired_decision_test([p[0] for p in pairs], [p[1] for p in pairs], LEVELS)
    assert out.p is None or 0.0 <= out.p <= 1.0
    assert out.n_paired + out.n_unpaired <= len(pairs)
    shuffled = list(pairs)
    order.shuffle(shuffled)
    again = paired_decision_test([p[0] for p in shuffled], [p[1] for p in shuffled], LEVELS)
    assert _dict(again.table) == _dict(out.table) and _close(again.p, out.p)
    assert again.test == out.test
