"""The noise floor compared like with like (docs/measurement.md, "Noise floor"): a mean delta
against the standard error of a mean delta under no change, a repeat-averaged flip rate
against the no-change flip rate of repeat-averaged decisions, identical repeats reported as
not measured; the same scales in `rig gate` and in `rig monitor`'s shift floor."""

from __future__ import annotations

import json
import math
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from rig.errors import ConfigError
from rig.stats import noise_floor, paired_by_profile
from rig.stats.noise import NOT_MEASURED, NoiseFloor

pytestmark = pytest.mark.unit


def rows_from(scores: dict[tuple[str, str], list[float]], cutoff: float = 50.0,
              transcripts: bool = False) -> pd.DataFrame:
    out = []
    for (aid, pid), vals in scores.items():
        for r, s in enumerate(vals):
            row = {"answer_id": aid, "profile_id": pid, "repeat": r, "score": s,
                   "parse_status": "ok", "cutoff": cutoff}
            if transcripts:
                row["transcript"] = f"{aid} {pid} take {r}"
            out.append(row)
    return pd.DataFrame(out)


def null_campaign(rng: np.random.Generator, n: int, kp: int, kb: int, sigma: float,
                  effect: float = 0.0) -> pd.DataFrame:
    """n answers, true scores spread widely; under no change the profile's calls have the
    same distribution as the baseline's (normal call noise of SD sigma)."""
    true = rng.uniform(20, 80, n)
    scores = {}
    for i in range(n):
        scores[(f"a{i:03d}", "baseline")] = list(true[i] + rng.normal(0, sigma, kb))
        scores[(f"a{i:03d}", "p")] = list(true[i] + effect + rng.normal(0, sigma, kp))
    return rows_from(scores)


# -- the standard error of a mean delta ----------------------------------------------------


def test_se_of_a_mean_delta_matches_simulation_under_known_noise() -> None:
    """Var(mean delta | no change) = sigma^2 (1/kp + 1/kb) / n, recomputed by simulating
    the spread of the mean delta of many null campaigns with a known sigma."""
    rng = np.random.default_rng(11)
    sigma, n, kp, kb = 6.0, 25, 2, 3
    known = NoiseFloor("baseline", n, 0, sigma, math.sqrt(2) * sigma, None, 0, df_within=50)
    se = known.se_mean_delta([kp] * n, [kb] * n)
    means = []
    for _ in range(4000):
        e_p = rng.normal(0, sigma, (n, kp)).mean(axis=1)
        e_b = rng.normal(0, sigma, (n, kb)).mean(axis=1)
        means.append(float(np.mean(e_p - e_b)))
    assert se == pytest.approx(np.std(means, ddof=1), rel=0.04)
    assert se == pytest.approx(sigma * math.sqrt((1 / kp + 1 / kb) / n), rel=1e-12)
    # unequal repeat counts: the per-answer formula
    kps, kbs = [1, 2, 3, 1], [2, 2, 1, 4]
    direct = sigma * math.sqrt(sum(1 / a + 1 / b for a, b in zip(kps, kbs, strict=True))) / 4
    assert known.se_mean_delta(kps, kbs) == pytest.approx(direct, rel=1e-12)
    # the single-call figure is sqrt(n) wider at one repeat a side
    assert known.sd_repeat_diff == pytest.approx(known.se_mean_delta([1] * n, [1] * n)
                                                 * math.sqrt(n))
    se_t, limit = known.mean_delta_limit([kp] * n, [kb] * n)
    assert limit == pytest.approx(stats.t.ppf(0.975, 50) * se_t)


def test_within_noise_floor_holds_about_95_percent_of_null_campaigns() -> None:
    """Under no change |mean delta| <= t x SE about 95% of the time (the old comparison with
    sd_repeat_diff said "within" every time); a real 4-point shift is caught."""
    rng = np.random.default_rng(5)
    within, old_within, caught = [], [], []
    for _ in range(300):
        p = paired_by_profile(null_campaign(rng, 20, 2, 2, 5.0), n_boot=0)["p"]
        within.append(p.within_noise_floor)
        old_within.append(abs(p.mean_delta) <= p.noise_floor_sd)
    for _ in range(40):
        caught.append(not paired_by_profile(null_campaign(rng, 20, 2, 2, 5.0, effect=-4.0),
                                            n_boot=0)["p"].within_noise_floor)
    assert 0.925 <= np.mean(within) <= 0.975
    assert np.mean(old_within) == 1.0
    assert np.mean(caught) >= 0.8


def test_profile_row_reports_the_se_from_its_own_repeat_counts() -> None:
    rng = np.random.default_rng(2)
    rows = null_campaign(rng, 12, 1, 3, 4.0)
    row = paired_by_profile(rows, n_boot=0)["p"]
    nf = noise_floor(rows)
    expected = nf.repeat_sd * math.sqrt((1 / 1 + 1 / 3) / 12)
    assert row.noise_floor_se_mean_delta == pytest.approx(expected)
    assert row.noise_floor_mean_delta_limit == pytest.approx(
        stats.t.ppf(0.975, 12 * 2) * expected)
    assert row.noise_floor_flip_repeats == (1, 3)
    assert row.within_noise_floor == (abs(row.mean_delta) <= row.noise_floor_mean_delta_limit)


# -- the flip rate of repeat-averaged decisions --------------------------------------------


def normal_model_flips(rows: pd.DataFrame, profile: str = "p", cutoff: float = 50.0) -> float:
    """The no-change flip rate recomputed with pandas and scipy: per answer scored under both,
    z = (baseline mean - cutoff) / repeat_sd (one-way ANOVA with statsmodels), p(k) =
    Phi(z sqrt(k)), flip = p(kp)(1 - p(kb)) + p(kb)(1 - p(kp))."""
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    base = rows[rows["profile_id"] == "baseline"]
    multi = base[base.groupby("answer_id")["score"].transform("size") >= 2]
    sd = math.sqrt(anova_lm(smf.ols("score ~ C(answer_id)", data=multi).fit()).loc[
        "Residual", "mean_sq"])
    g = rows.groupby(["answer_id", "profile_id"])["score"].agg(["mean", "size"]).unstack()
    g = g.dropna(subset=[("mean", profile), ("mean", "baseline")])
    z = (g[("mean", "baseline")] - cutoff) / sd
    p1 = stats.norm.cdf(z * np.sqrt(g[("size", profile)]))
    p2 = stats.norm.cdf(z * np.sqrt(g[("size", "baseline")]))
    return float(np.mean(p1 * (1 - p2) + p2 * (1 - p1)))


def test_averaged_flip_rate_equals_an_independent_normal_model_computation() -> None:
    rng = np.random.default_rng(12)
    rows = null_campaign(rng, 30, 1, 3, 7.0)
    rows = rows[~((rows["answer_id"] == "a000") & (rows["repeat"] == 2))]  # uneven counts
    row = paired_by_profile(rows, n_boot=0)["p"]
    assert row.noise_floor_flip_rate_averaged == pytest.approx(normal_model_flips(rows),
                                                               rel=1e-9)
    assert row.noise_floor_flip_repeats == (1, 3)


def _mean_estimate(gen, n_answers: int, k: int, n_campaigns: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    est = []
    for _ in range(n_campaigns):
        scores = {}
        for i in range(n_answers):
            scores[(f"a{i}", "baseline")] = list(gen(i, k, rng))
            scores[(f"a{i}", "p")] = list(gen(i, k, rng))
        est.append(paired_by_profile(rows_from(scores), n_boot=0)["p"]
                   .noise_floor_flip_rate_averaged)
    return float(np.mean(est))


def test_averaged_flip_rate_estimates_the_true_flip_rate_of_averaged_decisions() -> None:
    """The figures of NoiseFloor.flip_rate_averaged's docstring: 60 answers, 3 repeats a
    side, the estimate against the flip rate of 3-call means simulated from the truth; both
    far below the single-call flip rate."""
    true = np.random.default_rng(8).uniform(40, 60, 60)
    rng = np.random.default_rng(1)
    m1 = true[:, None] + rng.normal(0, 6.0, (60, 20000, 3)).mean(axis=2)
    m2 = true[:, None] + rng.normal(0, 6.0, (60, 20000, 3)).mean(axis=2)
    truth = float(np.mean((m1 >= 50) != (m2 >= 50)))
    s1 = true[:, None] + rng.normal(0, 6.0, (60, 20000))
    s2 = true[:, None] + rng.normal(0, 6.0, (60, 20000))
    single = float(np.mean((s1 >= 50) != (s2 >= 50)))
    est = _mean_estimate(lambda i, k, r: true[i] + r.normal(0, 6.0, k), 60, 3, 20, 2)
    assert truth == pytest.approx(0.23, abs=0.01)
    assert est == pytest.approx(truth, abs=0.04) and est <= truth + 0.01
    assert single > truth + 0.08
    # a judge that gives only 0 or 100: runs a little low, still near
    q = np.random.default_rng(3).beta(0.5, 0.5, 60)
    d1 = (rng.random((60, 20000, 3)) < q[:, None, None]).mean(axis=2)
    d2 = (rng.random((60, 20000, 3)) < q[:, None, None]).mean(axis=2)
    truth01 = float(np.mean((d1 >= 0.5) != (d2 >= 0.5)))
    est01 = _mean_estimate(lambda i, k, r: np.where(r.random(k) < q[i], 100.0, 0.0), 60, 3,
                           20, 4)
    assert est01 == pytest.approx(truth01, abs=0.06) and est01 <= truth01 + 0.01


def test_profile_flip_rate_is_held_to_the_averaged_floor() -> None:
    # baseline repeats straddle the cutoff (single-call flips are common) but their means
    # sit clear of it; the profile moves the answers' means across the cutoff in a few pairs
    scores = {}
    for i in range(20):
        base = [47.0, 63.0, 65.0] if i % 2 else [48.0, 64.0, 66.0]
        scores[(f"a{i}", "baseline")] = base
        scores[(f"a{i}", "p")] = [b - (12.0 if i < 4 else 0.0) for b in base]
    rows = rows_from(scores)
    row = paired_by_profile(rows, n_boot=0)["p"]
    nf = noise_floor(rows)
    assert row.noise_floor_flip_rate == pytest.approx(nf.flip_rate)
    assert row.noise_floor_flip_rate_averaged == pytest.approx(normal_model_flips(rows))
    assert row.noise_floor_flip_rate_averaged < row.flip_rate < row.noise_floor_flip_rate
    assert row.flip_within_noise_floor is False  # it was True against the single-call rate


def test_averaged_flip_rate_not_computable_without_a_cutoff() -> None:
    rows = rows_from({("a1", "baseline"): [40, 60], ("a1", "p"): [50, 55]}).drop(
        columns=["cutoff"]).assign(decision=["reject", "advance", "advance", "advance"])
    row = paired_by_profile(rows, n_boot=0)["p"]
    assert row.noise_floor_flip_rate_averaged is None
    assert row.not_computable["noise_floor_flip_rate_averaged"]


# -- identical repeats: not measured -------------------------------------------------------


def test_identical_repeats_are_not_measured_and_nothing_is_held_to_zero() -> None:
    scores = {(f"a{i}", pid): [50.0 + i] * 2 for i in range(6) for pid in ("baseline", "p")}
    rows = rows_from(scores)
    rows["transcript"] = rows["answer_id"] + " words"  # same transcript in both repeats
    nf = noise_floor(rows)
    assert not nf.measured and nf.reason.startswith(NOT_MEASURED)
    assert "same score and transcript" in nf.reason
    d = nf.to_dict()
    assert d["measured"] is False and d["repeat_sd"] is None and d["sd_repeat_diff"] is None
    row = paired_by_profile(rows, n_boot=0)["p"]
    assert row.within_noise_floor is None and row.noise_floor_se_mean_delta is None
    assert row.not_computable["within_noise_floor"].startswith(NOT_MEASURED)


def test_repeats_that_differ_in_transcript_measure_a_zero_spread() -> None:
    # the audio differed (seeded noise), the scorer gave the same grade: a real measurement
    rows = rows_from({(f"a{i}", "baseline"): [50.0 + i] * 2 for i in range(6)},
                     transcripts=True)
    nf = noise_floor(rows)
    assert nf.measured and nf.repeat_sd == 0.0 and nf.n_identical_repeat_pairs == 0


def test_some_identical_pairs_still_measure() -> None:
    rows = rows_from({("a1", "baseline"): [50.0, 50.0], ("a2", "baseline"): [40.0, 46.0]})
    nf = noise_floor(rows)
    assert nf.measured and nf.n_identical_repeat_pairs == 1 and nf.n_repeat_pairs == 2
    assert nf.repeat_sd == pytest.approx(math.sqrt(18.0 / 2))


def test_repeats_skipped_by_the_planner_are_reported_as_not_measured() -> None:
    rows = rows_from({("a1", "baseline"): [60.0], ("a2", "baseline"): [40.0]})
    nf = noise_floor(rows, repeats_skipped="deterministic: nothing seeded")
    assert not nf.measured
    assert nf.reason.startswith(NOT_MEASURED) and "deterministic: nothing seeded" in nf.reason
    plain = noise_floor(rows)
    assert not plain.measured and "two or more scored repeats" in plain.reason


# -- the gate ------------------------------------------------------------------------------


def _release(rng: np.random.Generator, n: int = 40, k: int = 3, drop: float = 0.0
             ) -> pd.DataFrame:
    true = rng.uniform(35, 65, n)
    out = []
    for i in range(n):
        for pid, shift in (("baseline", 0.0), ("p", drop)):
            for r in range(k):
                out.append({"answer_id": f"a{i:02d}", "profile_id": pid, "repeat": r,
                            "score": true[i] + shift + rng.normal(0, 8.0),
                            "parse_status": "ok", "cutoff": 50.0, "pipeline_version": "v"})
    return pd.DataFrame(out)


def test_gate_flip_margin_is_the_averaged_no_change_flip_rate() -> None:
    from rig.gate import Campaign, GatePolicy, ImpactPolicy, evaluate_gate

    rng = np.random.default_rng(3)
    prev, cand = _release(rng), _release(rng, drop=-20.0)
    res = evaluate_gate(Campaign.from_rows(cand, "cand"), Campaign.from_rows(prev, "prev"),
                        GatePolicy(n_boot=0, impact=ImpactPolicy(enabled=False)))
    flip = next(c for c in res.checks if c.check == "flip_rate")
    assert flip.threshold == pytest.approx(normal_model_flips(prev))
    assert flip.threshold < noise_floor(prev).flip_rate  # the single-call margin is wider
    assert "3- vs 3-repeat means, previous release" in flip.reason
    assert flip.blocked


def test_gate_flip_margin_falls_back_to_min_rise_when_not_measured() -> None:
    from rig.gate import Campaign, FlipPolicy, GatePolicy, ImpactPolicy, evaluate_gate

    rng = np.random.default_rng(4)
    prev = _release(rng, k=1)
    res = evaluate_gate(Campaign.from_rows(prev, "cand"), Campaign.from_rows(prev, "prev"),
                        GatePolicy(n_boot=0, impact=ImpactPolicy(enabled=False),
                                   flip=FlipPolicy(min_rise=0.07)))
    flip = next(c for c in res.checks if c.check == "flip_rate")
    assert flip.threshold == 0.07
    assert any("no noise-floor flip rate for p" in n for n in res.notes)


# -- the monitor's shift floor -------------------------------------------------------------


def _agg(week0: date, n: int, means: list[float], sd: float) -> pd.DataFrame:
    rows = []
    for k, m in enumerate(means):
        rows.append({"week_start": week0 + timedelta(days=7 * k), "dimension": "all",
                     "segment": "all calls", "n_calls": n, "n_scored": n,
                     "n_above_median": n // 2, "n_decided": n, "n_advanced": n // 2,
                     "sum_score": m * n, "sum_sq_score": (sd ** 2) * (n - 1) + m * m * n})
    return pd.DataFrame(rows)


def test_monitor_scorer_floor_is_the_se_of_a_shift_of_means() -> None:
    from rig.monitor.alerts import analyse_week, scorer_floor
    from rig.monitor.config import AlertsConfig
    from rig.monitor.segments import ALL

    cfg = AlertsConfig(scorer_repeat_sd_points=6.0, min_baseline_weeks=3)
    assert scorer_floor(cfg, 100, 400) == pytest.approx(2.0 * 6.0 * math.sqrt(1 / 100 + 1 / 400))
    assert scorer_floor(AlertsConfig(), 100, 400) is None
    week0 = date(2025, 1, 6)
    # two baseline weeks (too few for a week-to-week floor): the floor is the larger of the
    # sampling floor and the scorer floor, never the single-call SD itself
    agg = _agg(week0, 200, [70.0, 70.5, 69.0], 3.0)
    s = analyse_week(agg, week0 + timedelta(days=14), [ALL], AlertsConfig(
        scorer_repeat_sd_points=6.0, baseline_weeks=2)).segments[0]
    n_w, n_b = 200, 400
    scorer = 2.0 * 6.0 * math.sqrt(1 / n_w + 1 / n_b)
    se = math.sqrt(3.0 ** 2 / n_w + _pooled_var(agg, 2) / n_b)
    sampling = stats.norm.ppf(0.975) * se
    assert s.noise_floor == pytest.approx(max(scorer, sampling))
    assert s.noise_floor_source == ("scorer" if scorer > sampling else "sampling")
    assert s.noise_floor < 6.0 * math.sqrt(2)  # what the old floor held a mean shift to


def _pooled_var(agg: pd.DataFrame, weeks: int) -> float:
    b = agg.iloc[:weeks]
    n, s, ss = b["n_scored"].sum(), b["sum_score"].sum(), b["sum_sq_score"].sum()
    return (ss - s * s / n) / (n - 1)


def test_monitor_refuses_the_old_single_call_key(tmp_path: Path) -> None:
    from rig.monitor.config import load_config

    f = tmp_path / "monitor.yaml"
    f.write_text("alerts:\n  scorer_noise_floor_points: 8.5\n")
    with pytest.raises(ConfigError, match="scorer_repeat_sd_points"):
        load_config(f)
    f.write_text("alerts:\n  scorer_repeat_sd_points: 6.0\n")
    assert load_config(f).alerts.scorer_repeat_sd_points == 6.0


def test_noise_floor_from_reads_repeat_sd_and_refuses_an_unmeasured_floor(tmp_path) -> None:
    from summaries import real_summary, summary_like

    from rig.campaign.summary_file import write_summary
    from rig.cli.monitor import _with_scorer_floor
    from rig.errors import RigError
    from rig.monitor.config import MonitorConfig

    s = real_summary()
    good = write_summary(tmp_path / "good.json", summary_like(
        noise_floor=s.noise_floor.model_copy(update={"repeat_sd": 4.5})))
    assert _with_scorer_floor(MonitorConfig(), good).alerts.scorer_repeat_sd_points == 4.5
    bad = write_summary(tmp_path / "bad.json", summary_like(noise_floor=s.noise_floor.model_copy(
        update={"measured": False, "repeat_sd": None, "reason": NOT_MEASURED})))
    with pytest.raises(RigError, match="the repeats are identical"):
        _with_scorer_floor(MonitorConfig(), bad)
    # not a campaign's summary: the error names the file and the field
    part = tmp_path / "part.json"
    part.write_text(json.dumps({"schema_version": "1.5", "noise_floor": None}))
    with pytest.raises(ConfigError, match=r"part.json: campaign_id"):
        _with_scorer_floor(MonitorConfig(), part)


def test_monitor_segments_command_states_the_scaled_scorer_floor() -> None:
    from rig.cli import app

    res = CliRunner().invoke(app, ["monitor", "segments"])
    assert res.exit_code == 0, res.output
    assert "sqrt(1/n_week + 1/n_baseline)" in res.output.replace("\n", " ")
