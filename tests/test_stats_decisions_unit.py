"""Paired decisions (rig.stats.decisions) against statsmodels and scipy computed here, and
against published worked examples: Agresti's presidential approval table (McNemar) and
Stuart's unaided distance vision table (Stuart-Maxwell)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import SquareTable, mcnemar

from rig.stats import paired_decision_test

pytestmark = pytest.mark.unit
LEVELS = ("advance", "advance_with_reservations", "do_not_advance")


def sessions_of(table, levels) -> tuple[list[str], list[str]]:
    """Per-session (reference, treatment) decisions that make up a square table."""
    ref, trt = [], []
    for i, row in enumerate(table):
        for j, n in enumerate(row):
            ref += [levels[i]] * int(n)
            trt += [levels[j]] * int(n)
    return ref, trt


def test_mcnemar_on_agresti_presidential_approval():
    # Agresti, Categorical Data Analysis, the matched-pairs chapter's worked example: approval
    # of the President's performance in two surveys of the same 1600 people; McNemar's
    # z**2 = (86 - 150)**2 / (86 + 150) = 17.36.
    table = [[794, 150], [86, 570]]
    assert mcnemar(np.array(table), exact=False, correction=False).statistic == \
        pytest.approx(17.36, abs=0.005)
    levels = ("approve", "disapprove")
    ref, trt = sessions_of(table, levels)
    dt = paired_decision_test(ref, trt, levels, ("first survey", "second survey"))
    assert dt.test == "mcnemar_exact" and dt.dof is None
    assert dt.n_paired == 1600 and dt.n_discordant == 236 and dt.statistic == 86
    assert dt.table == table
    assert dt.counts == {"first survey": {"approve": 944, "disapprove": 656},
                         "second survey": {"approve": 880, "disapprove": 720}}
    assert dt.p == pytest.approx(stats.binomtest(86, 236, 0.5).pvalue)
    assert dt.p == pytest.approx(mcnemar(np.array(table), exact=True).pvalue)
    assert dt.p < 1e-4


def test_stuart_maxwell_on_stuart_vision_table():
    # Stuart (1955), Biometrika 42:412-416: unaided distance vision of 7477 women, right eye
    # (rows) x left eye (columns), grades highest to lowest; marginal homogeneity X2 = 11.96 on
    # 3 degrees of freedom.
    table = [[1520, 266, 124, 66], [234, 1512, 432, 78], [117, 362, 1772, 205],
             [36, 82, 179, 492]]
    levels = ("1", "2", "3", "4")
    ref, trt = sessions_of(table, levels)
    dt = paired_decision_test(ref, trt, levels, ("right", "left"))
    assert dt.test == "stuart_maxwell" and dt.dof == 3 and dt.n_paired == 7477
    assert dt.statistic == pytest.approx(11.96, abs=0.005)
    ref_sm = SquareTable(np.array(table), shift_zeros=False).homogeneity("stuart_maxwell")
    assert dt.statistic == pytest.approx(ref_sm.statistic)
    assert dt.p == pytest.approx(stats.chi2.sf(ref_sm.statistic, 3))
    assert not dt.notes


def test_random_sessions_equal_statsmodels_computed_here():
    rng = np.random.default_rng(11)
    for k, n in ((2, 30), (3, 40), (3, 200)):
        lv = LEVELS[:k]
        ref = [lv[i] for i in rng.integers(0, k, n)]
        # the treatment drifts one level down in some sessions
        trt = [lv[min(k - 1, lv.index(r) + int(rng.random() < 0.3))] for r in ref]
        trt = [lv[int(rng.integers(0, k))] if rng.random() < 0.2 else t for t in trt]
        tab = np.zeros((k, k), dtype=int)
        for r, t in zip(ref, trt, strict=True):
            tab[lv.index(r), lv.index(t)] += 1
        dt = paired_decision_test(ref, trt, LEVELS)
        assert np.array(dt.table)[:k, :k].tolist() == tab.tolist()
        assert dt.n_discordant == n - int(np.trace(tab))
        if k == 2:
            b, c = int(tab[0, 1]), int(tab[1, 0])
            assert dt.test == "mcnemar_exact" and dt.statistic == min(b, c)
            assert dt.p == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue)
            assert dt.p == pytest.approx(mcnemar(tab, exact=True).pvalue)
        else:
            sm = SquareTable(tab, shift_zeros=False).homogeneity(method="stuart_maxwell")
            assert dt.test == "stuart_maxwell" and dt.dof == 2
            assert dt.statistic == pytest.approx(sm.statistic)
            assert dt.p == pytest.approx(sm.pvalue)
        assert json.dumps(dt.to_dict())


def test_degenerate_tables_say_why():
    # every session decided the same under both: one level, nothing to test
    same = paired_decision_test(["advance"] * 5, ["advance"] * 5, LEVELS, ("c", "h"))
    assert same.p is None and "same decision ('advance')" in same.not_computable["p"]
    assert same.counts["h"] == {"advance": 5, "advance_with_reservations": 0,
                                "do_not_advance": 0}
    # two levels in use, all sessions concordant: no discordant session
    conc = paired_decision_test(["advance", "do_not_advance"] * 3,
                                ["advance", "do_not_advance"] * 3, LEVELS)
    assert conc.p is None and conc.n_discordant == 0
    assert "no discordant session" in conc.not_computable["p"]
    assert conc.not_computable["test"] == conc.not_computable["p"]
    # a level never used: the square table stays 3 x 3, McNemar on the two in play
    ref = ["advance"] * 8 + ["do_not_advance"] * 2
    trt = ["advance"] * 3 + ["do_not_advance"] * 5 + ["do_not_advance"] * 2
    two = paired_decision_test(ref, trt, LEVELS)
    assert two.table == [[3, 0, 5], [0, 0, 0], [0, 0, 2]]
    assert two.test == "mcnemar_exact" and two.tested_decisions == ("advance", "do_not_advance")
    assert two.p == pytest.approx(stats.binomtest(5, 5, 0.5).pvalue)  # 2 / 32
    # a level given only in concordant sessions: left out (Stuart-Maxwell would be singular)
    ref = ["advance"] * 4 + ["advance_with_reservations"] * 3 + ["advance"] * 6
    trt = ["advance"] * 4 + ["advance_with_reservations"] * 3 + ["do_not_advance"] * 6
    conc3 = paired_decision_test(ref, trt, LEVELS)
    assert conc3.test == "mcnemar_exact" and conc3.p == pytest.approx(2 * 0.5**6)
    assert any("left out of the test" in n for n in conc3.notes)
    assert any("instead of Stuart-Maxwell" in n for n in conc3.notes)
    # missing decisions: unpaired sessions counted and left out; a side without any
    ref = ["advance", None, "do_not_advance", "advance"]
    trt = ["do_not_advance", "advance", None, "do_not_advance"]
    part = paired_decision_test(ref, trt, LEVELS)
    assert part.n_paired == 2 and part.n_unpaired == 2
    assert part.counts["reference"]["advance"] == 2  # every parsed decision is counted
    assert any("2 session(s)" in n for n in part.notes)
    none = paired_decision_test(["advance", "advance"], [None, None], LEVELS, ("c", "h"))
    assert "no parsed decision under 'h'" in none.not_computable["p"]
    apart = paired_decision_test(["advance", None], [None, "advance"], LEVELS)
    assert "no session has a parsed decision under both" in apart.not_computable["p"]


def test_disconnected_discordance_is_singular_not_an_error():
    # four levels: sessions change only between 1 and 2, and between 3 and 4
    lv = ("1", "2", "3", "4")
    ref, trt = sessions_of([[5, 3, 0, 0], [1, 5, 0, 0], [0, 0, 5, 4], [0, 0, 1, 5]], lv)
    dt = paired_decision_test(ref, trt, lv)
    assert dt.p is None and "singular" in dt.not_computable["p"]


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="differ in length"):
        paired_decision_test(["advance"], [], LEVELS)
    with pytest.raises(ValueError, match="treatment: session 1: decision 'hire'"):
        paired_decision_test(["advance", "advance"], ["advance", "hire"], LEVELS)
