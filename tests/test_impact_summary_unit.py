"""summary.json 1.8's ``impact_ratios`` (rig.campaign.impact_summary): rates and ratios
recomputed independently from the rows, the CI from rig.stats.ratio_ci on the same hits, and
the report's table."""

from __future__ import annotations

import pytest
from test_attribution_unit import attributed_rows

from rig.campaign.summary import campaign_summary
from rig.report.people import people_html
from rig.stats.ratio_ci import impact_ratio_ci

pytestmark = pytest.mark.unit


def test_impact_ratios_recomputed_and_shown():
    rows = attributed_rows(n_answers=30)
    s = campaign_summary(rows, campaign_id="c", pipeline_version="v", n_boot=300)
    assert s.impact_ratios is not None
    per = rows.groupby(["profile_id", "answer_id"]).agg(
        score=("score", "mean"), cut=("cutoff", "first"))
    median = per.score.median()
    hits = {"scoring": per.score > median, "selection": per.score >= per.cut}
    for kind, hit in hits.items():
        t = s.impact_ratios[kind]
        rate = hit.groupby(level=0).mean()
        ref = rate.idxmax()
        assert t.reference == ref
        if kind == "scoring":
            assert t.median == pytest.approx(median)
        for pid, p in t.by_profile.items():
            assert p.n == len(per.loc[pid])
            assert p.rate == pytest.approx(rate[pid])
            assert p.impact_ratio == pytest.approx(rate[pid] / rate[ref])
            if pid == ref:
                assert p.is_reference and p.impact_ratio_ci95 is None
            else:
                want, _ = impact_ratio_ci(hit.loc[pid].to_numpy(float),
                                          hit.loc[ref].to_numpy(float), n_boot=300, seed=0)
                assert p.impact_ratio_ci95 == pytest.approx(want)
                assert p.flagged == (p.impact_ratio < 0.8)
    page = people_html(s)
    assert "Impact ratios by profile" in page
    lp = s.impact_ratios["selection"].by_profile["long_pauses"]
    if not lp.is_reference:
        assert f"{lp.impact_ratio:.2f}" in page


def test_one_profile_has_no_impact_ratios():
    rows = attributed_rows(n_answers=10)
    rows = rows[rows.profile_id == "baseline"]
    s = campaign_summary(rows, campaign_id="c", pipeline_version="v", n_boot=200)
    assert s.impact_ratios is None
