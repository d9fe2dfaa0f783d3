"""A replay against human ratings (rig.replay.people): each version's agreement with people
recomputed independently (scipy, plain counts), the segment where B agrees less flagged, the
B - A decision-agreement difference and its interview-clustered interval, could-not-hear and
unrelated ratings left out."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rig.ratings.model import Rating
from rig.replay.people import replay_human_ratings, turn_grades

pytestmark = pytest.mark.unit


def _rating(turn: str, score: float | None, rater: str = "r1", cnh: bool = False) -> Rating:
    return Rating(rater_id=rater, unit_kind="call", unit_id=turn, question_id="q",
                  rubric_version=1, rubric_hash="h", score=score, could_not_hear=cnh,
                  source="import:test.csv")


def _pairs() -> pd.DataFrame:
    """8 interviews x 2 turns; B grades the short-pause turns as A did and misgrades the
    long-pause ones."""
    rng = np.random.default_rng(3)
    rows = []
    for i in range(8):
        for t in range(2):
            human = float(rng.uniform(20, 95))
            long = t == 1
            a = human + float(rng.normal(0, 4))
            rows.append({"turn_key": f"c{i}-t{t}", "call_id": f"c{i}", "question_id": "q",
                         "cutoff": 60.0, "human_true": human, "score_a": a,
                         "score_b": (100 - human) if long else a,
                         "seg_longest_pause_s": "[1, 2)" if long else "<0.5"})
    return pd.DataFrame(rows)


def _ratings(p: pd.DataFrame) -> list[Rating]:
    out = [_rating(k, round(h, 1)) for k, h in zip(p["turn_key"], p["human_true"], strict=True)]
    out += [_rating(p["turn_key"][0], 50.0, rater="r2"), _rating(p["turn_key"][1], None,
                                                                  rater="r3", cnh=True)]
    out.append(_rating("not-a-turn", 10.0))
    return out


def _independent(p: pd.DataFrame, human: pd.Series, col: str) -> tuple[float, float, float]:
    x, y = p[col].to_numpy(), human.to_numpy()
    agree = np.mean((x >= 60) == (y >= 60))
    return stats.spearmanr(x, y)[0], np.mean(np.abs(x - y)), agree


def test_each_version_against_people_matches_an_independent_computation():
    p = _pairs()
    ratings = _ratings(p)
    res = replay_human_ratings(p, ratings, n_boot=500)
    grades = turn_grades(ratings)
    human = p["turn_key"].map(grades["human"])
    assert res["n_turns_rated"] == 16 and res["n_could_not_hear"] == 1
    assert res["n_raters"] == 3
    for v in ("a", "b"):
        sp, mae, agree = _independent(p, human, f"score_{v}")
        got = res["overall"][v.upper()]
        assert got["n_units"] == 16
        assert got["spearman"] == pytest.approx(sp)
        assert got["mae_points"] == pytest.approx(mae)
        assert got["decision_agreement"] == pytest.approx(agree)
    # the difference is B's agreement minus A's, over the same turns
    diff = res["overall"]["decision_agreement_diff"]
    assert diff == pytest.approx(res["overall"]["B"]["decision_agreement"]
                                 - res["overall"]["A"]["decision_agreement"])
    lo, hi = res["overall"]["decision_agreement_diff_ci95"]
    assert lo <= diff <= hi


def test_the_segment_where_b_agrees_less_is_flagged_and_the_other_is_not():
    p = _pairs()
    res = replay_human_ratings(p, _ratings(p), n_boot=500)
    seg = res["segments"]["longest_pause_s"]
    assert seg["[1, 2)"]["b_lower_than_a"] is True
    assert seg["[1, 2)"]["B"]["spearman"] < 0 < seg["[1, 2)"]["A"]["spearman"]
    assert res["segments_b_lower"] == ["longest_pause_s=[1, 2)"]
    assert seg["<0.5"]["b_lower_than_a"] is False
    assert seg["<0.5"]["decision_agreement_diff"] == 0
    assert res["overall"]["b_lower_than_a"] is True


def test_the_first_two_raters_give_the_ceiling_on_the_turns_both_rated():
    p = _pairs()
    ratings = _ratings(p)
    ratings.append(_rating(p["turn_key"][2], 70.0, rater="r2"))
    ratings.append(_rating(p["turn_key"][3], 20.0, rater="r2"))
    res = replay_human_ratings(p, ratings, n_boot=200)
    ir = res["inter_rater"]
    assert ir["raters"] == ["r1", "r2"] and ir["n_units"] == 3


def test_few_interviews_give_no_interval_and_no_rating_gives_nothing():
    p = _pairs()
    few = p[p["call_id"].isin(["c0", "c1", "c2"])]
    res = replay_human_ratings(few, _ratings(p), n_boot=200)
    assert res["overall"]["decision_agreement_diff"] is not None
    assert res["overall"]["decision_agreement_diff_ci95"] is None  # 3 interviews < 5
    assert replay_human_ratings(p, [_rating("elsewhere", 40.0)]) is None
    assert replay_human_ratings(p, []) is None


def test_the_report_section_names_the_segment_and_the_ceiling():
    from rig.replay.people import people_html

    p = _pairs()
    ratings = [*_ratings(p), _rating(p["turn_key"][2], 70.0, rater="r2")]
    page = people_html({"human_ratings": replay_human_ratings(p, ratings, n_boot=200)})
    assert "Against people (16 rated turns, 3 raters)" in page
    assert "B agrees less with people than A in: longest_pause_s=[1, 2)." in page
    assert "Inter-rater ceiling (r1 vs r2, 2 turns)" in page
    assert people_html({}) == ""
