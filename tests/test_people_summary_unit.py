"""summary.json 1.7's ``error_parity`` and ``human_ratings`` (rig.campaign.people_summary),
each figure recomputed independently from the rows and ratings, and the report section."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from test_attribution_unit import attributed_rows

from rig.campaign.summary import campaign_summary
from rig.ratings.model import Rating
from rig.report.people import people_html
from rig.stats.intervals import wilson_interval
from rig.stats.ppi import ppi_mean

pytestmark = pytest.mark.unit


def rating(rater: str, call_id: str, answer_id: str, score: float) -> Rating:
    return Rating(rater_id=rater, unit_kind="call", unit_id=call_id, answer_id=answer_id,
                  question_id="q", rubric_version=1, rubric_hash="h", score=score,
                  source="import:test")


def rated(rows: pd.DataFrame, share: float = 0.6, seed: int = 5) -> list[Rating]:
    """Rater ann grades a share of the calls near the reference grade; bob grades a third
    of those again; one could-not-hear rating is left out."""
    rng = np.random.default_rng(seed)
    out = []
    for _, r in rows.iterrows():
        if rng.uniform() < share:
            out.append(rating("ann", r.call_id, r.answer_id,
                              float(np.clip(r.reference_score + rng.normal(0, 4), 0, 100))))
            if rng.uniform() < 0.33:
                out.append(rating("bob", r.call_id, r.answer_id,
                                  float(np.clip(r.reference_score + rng.normal(0, 4), 0, 100))))
    out.append(rating("cy", rows.call_id.iloc[0], rows.answer_id.iloc[0], 0.0)
               .model_copy(update={"could_not_hear": True}))
    return out


def test_error_parity_recomputed():
    rows = attributed_rows(n_answers=30)
    s = campaign_summary(rows, campaign_id="c", pipeline_version="v", n_boot=200)
    assert s.error_parity is not None and s.human_ratings is None
    per = rows.groupby(["profile_id", "answer_id"]).agg(
        score=("score", "mean"), ref=("reference_score", "first"), cut=("cutoff", "first"))
    for pid in ("baseline", "long_pauses"):
        g = per.loc[pid]
        q = g[g.ref >= g.cut]
        u = g[g.ref < g.cut]
        qr, ua = s.error_parity[pid].qualified_rejected, s.error_parity[pid].unqualified_advanced
        assert (qr.n, qr.errors) == (len(q), int((q.score < q.cut).sum()))
        assert (ua.n, ua.errors) == (len(u), int((u.score >= u.cut).sum()))
        if qr.n:
            assert qr.wilson_ci95 == pytest.approx(wilson_interval(qr.errors, qr.n))
    lp, base = s.error_parity["long_pauses"], s.error_parity["baseline"]
    assert lp.qualified_rejected.rate > base.qualified_rejected.rate or \
        base.qualified_rejected.rate == 0
    if base.qualified_rejected.rate:
        assert lp.qualified_rejected.ratio_to_baseline == pytest.approx(
            lp.qualified_rejected.rate / base.qualified_rejected.rate)


def test_human_ratings_recomputed_and_the_truncating_profile_flagged():
    rows = attributed_rows(n_answers=30)
    ratings = rated(rows)
    s = campaign_summary(rows, campaign_id="c", pipeline_version="v", n_boot=200,
                         ratings=ratings)
    h = s.human_ratings
    assert h.n_ratings == len(ratings) and h.n_raters == 3 and h.n_could_not_hear == 1
    human = (pd.DataFrame([r.model_dump() for r in ratings if not r.could_not_hear])
             .groupby("unit_id")["score"].mean())
    d = rows.assign(human=rows.call_id.map(human)).dropna(subset=["human"])
    assert h.n_calls_rated == len(d) == h.overall.n_units
    assert h.overall.spearman == pytest.approx(stats.spearmanr(d.score, d.human)[0])
    assert h.overall.mae_points == pytest.approx((d.score - d.human).abs().mean())
    for pid in ("baseline", "long_pauses"):
        dp = d[d.profile_id == pid]
        agree = ((dp.score >= dp.cutoff) == (dp.human >= dp.cutoff)).mean()
        assert h.by_profile[pid].agreement.decision_agreement == pytest.approx(agree)
    # the profile that cuts answers short is judged against people worse than the baseline
    assert h.by_profile["long_pauses"].lower_than_baseline is True
    assert h.profiles_lower_than_baseline == ["long_pauses"]
    assert h.by_profile["baseline"].lower_than_baseline is None
    # PPI on answers: judge and human averaged over the profile's calls of each answer
    dd = rows.assign(human=rows.call_id.map(human))
    per = dd.groupby(["profile_id", "answer_id"]).agg(f=("score", "mean"), y=("human", "mean"))
    g = per.loc["long_pauses"]
    p = ppi_mean(g.y.dropna().to_numpy(), g.f[g.y.notna()].to_numpy(), g.f[g.y.isna()].to_numpy())
    m = h.by_profile["long_pauses"].mean
    assert m.estimate == pytest.approx(p.estimate) and m.ci95 == pytest.approx(p.ci95)
    assert m.n_rated + m.n_unrated == 30
    delta = h.by_profile["long_pauses"].paired_delta
    assert delta is not None and h.by_profile["baseline"].paired_delta is None
    # the judge loses ~30 points on the truncating profile; people (who rate the content
    # near its reference grade) do not: the PPI delta is near 0, the judge-only far below
    assert delta.judge_only < -20 and delta.ci95[0] < 0 < delta.ci95[1] + 5
    # inter-rater: ann against bob on the calls both rated
    both = (pd.DataFrame([r.model_dump() for r in ratings if r.rater_id in ("ann", "bob")])
            .pivot_table(index="unit_id", columns="rater_id", values="score").dropna())
    assert h.inter_rater.n_units == len(both)
    assert h.inter_rater.spearman == pytest.approx(stats.spearmanr(both.bob, both.ann)[0])
    page = people_html(s)
    assert "lower than the baseline" in page and "Inter-rater" in page
    assert "qualified rejected" in page
    # the summary goes through its JSON and back
    from rig.campaign.schema import CampaignSummary

    assert CampaignSummary.model_validate(s.to_dict()) == s


def test_error_parity_with_a_degenerate_resample_prints_no_scipy_warning():
    """A resample where neither profile errs gives a 0/0 ratio: the interval is not reported
    and scipy's DegenerateDataWarning (about "BCa", on a percentile interval) is not printed
    (under filterwarnings=error it would fail this test; `rig demo` printed it 7 times)."""
    from rig.stats.parity import error_parity

    rows = pd.DataFrame({
        "profile_id": ["baseline"] * 3 + ["p"] * 3, "answer_id": ["a1", "a2", "a3"] * 2,
        "score": [10, 90, 90, 10, 90, 10], "cutoff": 50, "reference_score": 80})
    out = error_parity(rows, baseline="baseline", n_boot=500)
    qr = out["p"]["qualified_rejected"]
    assert (qr["errors"], qr["ratio_to_baseline"], qr["ratio_ci95"]) == (2, 2.0, None)
