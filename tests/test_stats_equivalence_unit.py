"""TOST and Holm against statsmodels, and the degenerate cases."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import ttost_paired

from rig.stats import equivalence_by_profile, holm, paired_deltas, tost_paired
from rig.stats.simulation import Design, simulate_campaign

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("seed", range(20))
def test_tost_matches_statsmodels_ttost_paired(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 80))
    base = rng.normal(60, 10, n)
    prof = base + rng.normal(rng.normal(0, 2), 4, n)
    margin = float(rng.uniform(1, 6))
    ours = tost_paired(prof - base, margin)
    p, lower, upper = ttost_paired(prof, base, -margin, margin)
    assert ours.p_value == pytest.approx(p, rel=1e-9)
    assert (ours.t_lower, ours.p_lower) == pytest.approx(lower[:2], rel=1e-9)
    assert (ours.t_upper, ours.p_upper) == pytest.approx(upper[:2], rel=1e-9)
    assert ours.df == lower[2] == n - 1


def test_tost_interval_duality() -> None:
    d = np.random.default_rng(5).normal(0.5, 3, 40)
    res = tost_paired(d, 2.0, alpha=0.05)
    inside = res.ci90[0] > -2.0 and res.ci90[1] < 2.0
    assert inside == (res.p_value < 0.05)


@pytest.mark.parametrize("seed", range(20))
def test_holm_matches_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 0.2, int(rng.integers(1, 12)))
    ours = holm(list(p), alpha=0.05)
    rej, adj, _, _ = multipletests(p, alpha=0.05, method="holm")
    assert [a for a, _ in ours] == pytest.approx(list(adj))
    assert [r for _, r in ours] == list(rej)


def test_holm_skips_not_computable_entries() -> None:
    out = holm([0.01, None, 0.04], alpha=0.05)
    assert out[1] == (None, None)
    _, adj, _, _ = multipletests([0.01, 0.04], method="holm")
    assert [out[0][0], out[2][0]] == pytest.approx(list(adj))
    assert holm([]) == []
    with pytest.raises(ValueError, match="outside"):
        holm([1.5])


@pytest.mark.parametrize(("deltas", "why"), [
    ([], "at least 2"), ([1.0], "at least 2"), ([2.0, 2.0, 2.0], "zero variance")])
def test_tost_degenerate_inputs(deltas, why) -> None:
    res = tost_paired(np.array(deltas), 3.0)
    assert res.p_value is None and why in res.reason
    json.dumps(res.to_dict(), allow_nan=False)


def test_tost_bad_margin_and_alpha() -> None:
    with pytest.raises(ValueError, match="margin"):
        tost_paired(np.arange(5.0), 0.0)
    with pytest.raises(ValueError, match="alpha"):
        tost_paired(np.arange(5.0), 1.0, alpha=0.6)


def test_equivalence_by_profile_with_holm() -> None:
    rows = simulate_campaign(Design(), seed=21)
    res = equivalence_by_profile(rows, margin=3.0)
    deltas = paired_deltas(rows)
    assert set(res) == set(deltas)
    raw = []
    for p, e in res.items():
        d = deltas[p].to_numpy()
        ref = ttost_paired(d, np.zeros_like(d), -3.0, 3.0)[0]
        assert e.tost.p_value == pytest.approx(ref, rel=1e-9)
        raw.append((p, ref))
    rej, adj, _, _ = multipletests([r for _, r in raw], alpha=0.05, method="holm")
    for (p, _), a, r in zip(raw, adj, rej, strict=True):
        assert res[p].p_holm == pytest.approx(a)
        assert res[p].equivalent == bool(r)
    assert res["long_pauses"].equivalent is False  # a true -6 gap is not within 3 points
    json.dumps({p: e.to_dict() for p, e in res.items()}, allow_nan=False)


def test_equivalence_with_a_degenerate_profile() -> None:
    rows = pd.DataFrame({"answer_id": ["a1", "a1", "a2", "a2"],
                         "profile_id": ["baseline", "p", "baseline", "p"],
                         "score": [60.0, 58.0, 50.0, 48.0]})
    res = equivalence_by_profile(rows, margin=3.0)
    assert res["p"].equivalent is None and "zero variance" in res["p"].tost.reason
