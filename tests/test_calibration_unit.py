"""The judge's calibration onto the reference scale (rig.stats.calibration): the fits against
scikit-learn, leave-one-question-out never fitting on the question it scores, and the
out-of-sample gain on a synthetic judge biased upward on weak answers (a fake judge: the real
judge's figures come from `rig scorer validate` gradings)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rig.stats.calibration import fit_calibration, leave_one_question_out

pytestmark = pytest.mark.unit


def bank(seed: int = 0, n_q: int = 10) -> pd.DataFrame:
    """Per question: 3 strong, 2 borderline, 3 weak answers; the judge compresses the scale
    (0.5 x reference + 40: weak answers about 30 points high) with noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_q):
        for ref in (88, 80, 75, 62, 57, 40, 25, 15):
            ref = float(np.clip(ref + rng.normal(0, 3), 0, 100))
            rows.append({"question_id": f"q{q:02d}", "cutoff": 60.0, "reference_score": ref,
                         "score": float(np.clip(0.5 * ref + 40 + rng.normal(0, 4), 0, 100))})
    return pd.DataFrame(rows)


def test_fits_match_scikit_learn():
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LinearRegression

    d = bank()
    lin = fit_calibration(d.score, d.reference_score, "linear")
    sk = LinearRegression().fit(d[["score"]], d.reference_score)
    assert lin.x == pytest.approx((sk.intercept_, sk.coef_[0]))
    iso = fit_calibration(d.score, d.reference_score, "isotonic")
    ski = IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=100).fit(d.score,
                                                                            d.reference_score)
    grid = np.linspace(0, 100, 201)
    assert iso.apply(grid) == pytest.approx(ski.predict(grid))
    with pytest.raises(ValueError, match="3 or more"):
        fit_calibration(np.r_[1.0, 2], np.r_[1.0, 2])
    with pytest.raises(ValueError, match="unknown"):
        fit_calibration(d.score, d.reference_score, "spline")


@pytest.mark.parametrize("method", ["linear", "isotonic"])
def test_held_out_question_never_informs_its_own_prediction(method):
    d = bank(1)
    _, pred = leave_one_question_out(d, method)
    # change q00's reference grades wildly: its own predictions must not move
    e = d.copy()
    e.loc[e.question_id == "q00", "reference_score"] = 100 - e.loc[e.question_id == "q00",
                                                                   "reference_score"]
    _, pred2 = leave_one_question_out(e, method)
    q0 = pred.question_id == "q00"
    assert pred2.loc[q0, "calibrated"].to_numpy() == pytest.approx(
        pred.loc[q0, "calibrated"].to_numpy())
    assert not np.allclose(pred2.loc[~q0, "calibrated"], pred.loc[~q0, "calibrated"])
    # and equals a fit on the other questions alone
    other = d[d.question_id != "q00"]
    fit = fit_calibration(other.score, other.reference_score, method)
    assert pred.loc[q0, "calibrated"].to_numpy() == pytest.approx(
        fit.apply(d.loc[d.question_id == "q00", "score"].to_numpy()))


def test_out_of_sample_gain_on_a_biased_judge():
    d = bank(2)
    fig, pred = leave_one_question_out(d, "linear")
    b, a = fig["before"], fig["after"]
    ref, cut = pred.reference_score, pred.cutoff
    assert b["decision_agreement"] == pytest.approx(
        np.mean((pred.score >= cut) == (ref >= cut)))
    assert a["decision_agreement"] == pytest.approx(
        np.mean((pred.calibrated >= cut) == (ref >= cut)))
    assert a["spearman"] == pytest.approx(stats.spearmanr(pred.calibrated, ref)[0])
    assert b["mean_bias_points"] > 5 and abs(a["mean_bias_points"]) < 3
    assert a["decision_agreement"] > b["decision_agreement"]
    assert a["spearman"] >= b["spearman"] - 0.02  # a monotone map per fold keeps the ranks
    assert fig["n_answers"] == 80 and fig["n_questions"] == 10


def test_missing_scores_are_counted_and_one_question_refused():
    d = bank(3, n_q=3)
    d.loc[0, "score"] = np.nan
    fig, _ = leave_one_question_out(d)
    assert fig["n_left_out"] == 1 and fig["n_answers"] == 23
    with pytest.raises(ValueError, match="2 or more"):
        leave_one_question_out(d[d.question_id == "q00"])
