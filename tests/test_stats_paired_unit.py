"""Paired analysis and noise floor, recomputed independently on the same rows."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.proportion import proportion_confint

from rig.stats import RowsError, noise_floor, paired_analysis, paired_by_profile, paired_deltas
from rig.stats.noise import NOT_MEASURED
from rig.stats.simulation import Design, simulate_campaign

pytestmark = pytest.mark.unit


def rows_from(scores: dict[tuple[str, str], list[float]], cutoff: float = 50.0,
              tiers: dict[str, tuple[str, str]] | None = None) -> pd.DataFrame:
    """Rows from {(answer, profile): [score per repeat]}; NaN marks a parse failure."""
    out = []
    for (aid, pid), reps in scores.items():
        q, tier = (tiers or {}).get(aid, ("q1", "borderline"))
        for r, s in enumerate(reps):
            failed = s is None or (isinstance(s, float) and math.isnan(s))
            out.append({"answer_id": aid, "question_id": q, "tier": tier, "profile_id": pid,
                        "repeat": r, "score": np.nan if failed else s,
                        "parse_status": "invalid_json" if failed else "ok", "cutoff": cutoff,
                        "decision": None if failed else ("advance" if s >= cutoff else
                                                         "reject"),
                        "wer": 0.1, "truncated": False})
    return pd.DataFrame(out)


def independent(rows: pd.DataFrame, baseline: str = "baseline") -> dict:
    """Plain-Python recomputation of the paired figures (no rig code)."""
    acc: dict[tuple[str, str], list[float]] = defaultdict(list)
    fails: dict[str, int] = defaultdict(int)
    cut: dict[str, float] = {}
    tier: dict[str, str] = {}
    qid: dict[str, str] = {}
    for r in rows.to_dict("records"):
        cut[r["answer_id"]] = r["cutoff"]
        tier[r["answer_id"]], qid[r["answer_id"]] = r["tier"], r["question_id"]
        if r["parse_status"] != "ok" or pd.isna(r["score"]):
            fails[r["profile_id"]] += 1
            continue
        acc[(r["answer_id"], r["profile_id"])].append(float(r["score"]))
    mean = {k: sum(v) / len(v) for k, v in acc.items()}
    out = {}
    for p in {k[1] for k in mean} - {baseline}:
        answers = sorted(a for (a, q) in mean if q == p and (a, baseline) in mean)
        d = np.array([mean[(a, p)] - mean[(a, baseline)] for a in answers])
        flips = sum((mean[(a, p)] >= cut[a]) != (mean[(a, baseline)] >= cut[a])
                    for a in answers)
        inv = tot = 0
        for w in [a for a in tier if tier[a] == "weak" and (a, baseline) in mean]:
            for s in [a for a in tier if tier[a] == "strong" and qid[a] == qid[w]
                      and (a, p) in mean]:
                tot += 1
                inv += mean[(w, baseline)] > mean[(s, p)]
        out[p] = {"d": d, "answers": answers, "flips": flips, "inv": inv, "tot": tot,
                  "fails": fails[p]}
    return out


@pytest.fixture(scope="module")
def campaign() -> pd.DataFrame:
    return simulate_campaign(Design(parse_failure_rate=0.05), seed=11)


def test_table_matches_independent_recomputation(campaign: pd.DataFrame) -> None:
    table = paired_by_profile(campaign, n_boot=2000, seed=5)
    ref = independent(campaign)
    assert next(iter(table)) == "baseline" and table["baseline"].is_baseline
    for p, r in ref.items():
        row = table[p]
        d = r["d"]
        assert row.n_pairs == len(d)
        assert row.mean_delta == pytest.approx(d.mean(), rel=1e-12)
        assert row.sd_delta == pytest.approx(d.std(ddof=1), rel=1e-12)
        tci = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
        assert row.t_ci95 == pytest.approx((tci.low, tci.high), rel=1e-10)
        boot = stats.bootstrap((d,), np.mean, n_resamples=2000, method="percentile",
                               rng=np.random.default_rng(5), vectorized=True)
        assert row.ci95 == pytest.approx((boot.confidence_interval.low,
                                          boot.confidence_interval.high), rel=1e-10)
        assert row.n_flips == r["flips"]
        assert row.flip_rate == pytest.approx(r["flips"] / len(d))
        assert row.flip_ci95 == pytest.approx(
            proportion_confint(r["flips"], len(d), method="wilson"), abs=1e-12)
        assert (row.n_tier_inversions, row.n_tier_pairs) == (r["inv"], r["tot"])
        assert row.tier_inversion_rate == pytest.approx(r["inv"] / r["tot"])
        assert row.n_parse_failures == r["fails"]


def test_paired_deltas_agree_with_scipy_ttest_rel(campaign: pd.DataFrame) -> None:
    deltas = paired_deltas(campaign)
    table = paired_by_profile(campaign, n_boot=0)
    for p, d in deltas.items():
        assert len(d) == table[p].n_pairs
        assert d.mean() == pytest.approx(table[p].mean_delta)
    # ttest_rel on the two repeat-averaged columns gives the same interval
    avg = campaign[campaign["parse_status"] == "ok"].groupby(
        ["answer_id", "profile_id"])["score"].mean().unstack()
    both = avg[["baseline", "noise_10db"]].dropna()
    ci = stats.ttest_rel(both["noise_10db"], both["baseline"]).confidence_interval()
    assert table["noise_10db"].t_ci95 == pytest.approx((ci.low, ci.high), rel=1e-10)


def test_to_dict_is_json_without_nan(campaign: pd.DataFrame) -> None:
    analysis = paired_analysis(campaign, n_boot=200)
    text = json.dumps(analysis.to_dict(), allow_nan=False)
    back = json.loads(text)
    assert back["profiles"]["baseline"]["ci95"] is None
    assert isinstance(back["profiles"]["noise_10db"]["ci95"], list)
    assert back["noise_floor"]["sd_repeat_diff"] > 0


def test_baseline_row_is_zero_by_construction(campaign: pd.DataFrame) -> None:
    row = paired_by_profile(campaign, n_boot=0)["baseline"]
    assert row.mean_delta == 0.0 and row.flip_rate == 0.0 and row.n_flips == 0
    assert row.ci95 is None and "by construction" in row.not_computable["ci95"]
    assert row.within_noise_floor is None


def test_bootstrap_seed_per_profile_does_not_depend_on_other_profiles(
        campaign: pd.DataFrame) -> None:
    full = paired_by_profile(campaign, n_boot=500, seed=3)
    only = campaign[campaign["profile_id"].isin(["baseline", "accent_gb"])]
    part = paired_by_profile(only, n_boot=500, seed=3)
    assert part["accent_gb"].ci95 == full["accent_gb"].ci95


def test_parse_failures_are_left_out_and_counted() -> None:
    nan = float("nan")
    rows = rows_from({("a1", "baseline"): [60, 62], ("a1", "p"): [nan, 40],
                      ("a2", "baseline"): [55, 57], ("a2", "p"): [nan, nan],
                      ("a3", "baseline"): [70, 70], ("a3", "p"): [68, 66],
                      ("a4", "baseline"): [45, 47], ("a4", "p"): [44, 40]})
    row = paired_by_profile(rows, n_boot=100)["p"]
    assert row.n_parse_failures == 3 and row.n_calls == 8
    assert row.n_answers == 3 and row.n_pairs == 3  # a2 has no scored repeat under p
    assert row.mean_delta == pytest.approx(((40 - 61) + (67 - 70) + (42 - 46)) / 3)
    assert any("did not parse" in n for n in row.notes)


def test_parse_status_failure_with_a_score_is_still_left_out() -> None:
    rows = rows_from({("a1", "baseline"): [60], ("a1", "p"): [50],
                      ("a2", "baseline"): [60], ("a2", "p"): [40]})
    rows.loc[(rows["answer_id"] == "a2") & (rows["profile_id"] == "p"), "parse_status"] = "bad"
    row = paired_by_profile(rows, n_boot=0)["p"]
    assert row.n_pairs == 1 and row.mean_delta == -10 and row.n_parse_failures == 1


def test_one_pair_gives_a_delta_but_no_intervals() -> None:
    rows = rows_from({("a1", "baseline"): [60, 62], ("a1", "p"): [50, 52]})
    row = paired_by_profile(rows)["p"]
    assert row.n_pairs == 1 and row.mean_delta == -10
    assert row.ci95 is None and row.t_ci95 is None and row.sd_delta is None
    assert "at least 3" in row.not_computable["ci95"]
    assert "at least 2" in row.not_computable["t_ci95"]
    assert row.flip_rate == 0.0  # 61 and 51 both reach the cutoff 50: no flip


def test_one_pair_flip_arithmetic() -> None:
    rows = rows_from({("a1", "baseline"): [60, 62], ("a1", "p"): [40, 42]})
    row = paired_by_profile(rows)["p"]
    assert row.n_flips == 1 and row.flip_rate == 1.0
    assert row.flip_ci95 == pytest.approx(proportion_confint(1, 1, method="wilson"))


def test_two_pairs_give_a_t_interval_but_no_bootstrap() -> None:
    rows = rows_from({("a1", "baseline"): [60], ("a1", "p"): [50],
                      ("a2", "baseline"): [70], ("a2", "p"): [66]})
    row = paired_by_profile(rows)["p"]
    ci = stats.ttest_rel([50, 66], [60, 70]).confidence_interval()
    assert row.t_ci95 == pytest.approx((ci.low, ci.high))
    assert row.ci95 is None and "at least 3" in row.not_computable["ci95"]
    assert any("read t_ci95" in n for n in row.notes)


def test_zero_variance_gives_no_interval_and_says_why() -> None:
    rows = rows_from({(f"a{i}", p): [60 + i - (5 if p == "p" else 0)]
                      for i in range(8) for p in ("baseline", "p")})
    row = paired_by_profile(rows)["p"]
    assert row.mean_delta == pytest.approx(-5.0) and row.sd_delta == 0.0
    assert row.ci95 is None and row.t_ci95 is None
    assert "zero variance" in row.not_computable["ci95"]
    assert not any("read t_ci95" in n for n in row.notes)
    assert any("t_ci95 is not computable" in n for n in row.notes)
    assert "zero variance" in row.not_computable["t_ci95"]


def test_profile_with_only_parse_failures_has_no_pairs() -> None:
    nan = float("nan")
    rows = rows_from({("a1", "baseline"): [60], ("a1", "p"): [nan],
                      ("a2", "baseline"): [61], ("a2", "p"): [nan]})
    row = paired_by_profile(rows)["p"]
    assert row.n_pairs == 0 and row.mean_delta is None and row.flip_rate is None
    assert row.n_parse_failures == 2
    assert "no pairs" in row.not_computable["mean_delta"]
    assert row.tier_inversion_rate is None
    json.dumps(row.to_dict(), allow_nan=False)


def test_unpaired_answers_are_left_out_and_noted() -> None:
    rows = rows_from({("a1", "baseline"): [60], ("a1", "p"): [50],
                      ("a2", "p"): [40], ("a3", "baseline"): [30], ("a3", "p"): [35]})
    row = paired_by_profile(rows)["p"]
    assert row.n_answers == 3 and row.n_pairs == 2
    assert any("no scored baseline partner" in n for n in row.notes)


def test_tier_inversion_definition() -> None:
    tiers = {"w1": ("q1", "weak"), "w2": ("q1", "weak"), "s1": ("q1", "strong"),
             "s2": ("q2", "strong"), "w3": ("q2", "weak"), "b1": ("q1", "borderline")}
    scores = {("w1", "baseline"): [40], ("w2", "baseline"): [55], ("s1", "baseline"): [80],
              ("s2", "baseline"): [85], ("w3", "baseline"): [30], ("b1", "baseline"): [60],
              ("w1", "p"): [40], ("w2", "p"): [50], ("s1", "p"): [50], ("s2", "p"): [30],
              ("w3", "p"): [30], ("b1", "p"): [60]}
    row = paired_by_profile(rows_from(scores, tiers=tiers))["p"]
    # q1 pairs: (w1 40 vs s1 50) no, (w2 55 vs s1 50) yes; q2: (w3 30 vs s2 30) tie: no
    assert (row.n_tier_inversions, row.n_tier_pairs) == (1, 3)
    assert row.tier_inversion_rate == pytest.approx(1 / 3)
    base = paired_by_profile(rows_from(scores, tiers=tiers))["baseline"]
    assert base.tier_inversion_rate == 0.0


def test_tier_inversion_without_tier_columns_is_not_computable() -> None:
    rows = rows_from({("a1", "baseline"): [60], ("a1", "p"): [50]}).drop(columns=["tier"])
    row = paired_by_profile(rows)["p"]
    assert row.tier_inversion_rate is None
    assert "question_id and tier" in row.not_computable["tier_inversion_rate"]


def test_flips_without_cutoff_use_single_repeat_decisions() -> None:
    rows = rows_from({("a1", "baseline"): [60], ("a1", "p"): [40],
                      ("a2", "baseline"): [60], ("a2", "p"): [55]}).drop(columns=["cutoff"])
    row = paired_by_profile(rows)["p"]
    assert row.n_flips == 1 and row.flip_rate == 0.5


def test_flips_without_cutoff_and_with_repeats_are_not_computable() -> None:
    rows = rows_from({("a1", "baseline"): [60, 61], ("a1", "p"): [40, 41]})
    rows = rows.drop(columns=["cutoff"])
    row = paired_by_profile(rows)["p"]
    assert row.flip_rate is None and "cannot be averaged" in row.not_computable["flip_rate"]
    rows = rows.drop(columns=["decision"])
    row = paired_by_profile(rows)["p"]
    assert "no cutoff column and no decision column" in row.not_computable["flip_rate"]


def test_decision_on_repeat_averaged_score() -> None:
    # baseline 48 and 54 -> mean 51 advances; profile 52 and 46 -> 49 rejects: one flip,
    # although one repeat of each sits on the other side.
    rows = rows_from({("a1", "baseline"): [48, 54], ("a1", "p"): [52, 46]})
    assert paired_by_profile(rows)["p"].n_flips == 1


# -- noise floor ---------------------------------------------------------------------------


def test_noise_floor_with_two_repeats_is_rms_of_differences() -> None:
    rng = np.random.default_rng(3)
    true = rng.normal(50, 10, 40)
    r1, r2 = true + rng.normal(0, 3, 40), true + rng.normal(0, 3, 40)
    rows = rows_from({(f"a{i}", "baseline"): [r1[i], r2[i]] for i in range(40)})
    nf = noise_floor(rows)
    diff = r2 - r1
    assert nf.sd_repeat_diff == pytest.approx(math.sqrt(np.mean(diff ** 2)), rel=1e-12)
    assert nf.n_answers == 40 and nf.n_repeat_pairs == 40
    flips = int(np.sum((r1 >= 50) != (r2 >= 50)))
    assert nf.n_flips == flips and nf.flip_rate == pytest.approx(flips / 40)


def test_noise_floor_with_three_repeats_matches_anova_within_mean_square() -> None:
    rng = np.random.default_rng(4)
    true = rng.normal(55, 8, 25)
    reps = {(f"a{i}", "baseline"): list(true[i] + rng.normal(0, 2.5, 3)) for i in range(25)}
    rows = rows_from(reps)
    nf = noise_floor(rows)
    fit = smf.ols("score ~ C(answer_id)", data=rows).fit()
    ms_within = anova_lm(fit).loc["Residual", "mean_sq"]
    assert nf.repeat_sd == pytest.approx(math.sqrt(ms_within), rel=1e-10)
    assert nf.sd_repeat_diff == pytest.approx(math.sqrt(2 * ms_within), rel=1e-10)
    pairs = flips = 0
    for s in reps.values():
        for x, y in combinations(s, 2):
            pairs += 1
            flips += (x >= 50) != (y >= 50)
    assert nf.n_repeat_pairs == pairs == 75
    assert nf.n_flips == flips


def test_noise_floor_needs_two_repeats() -> None:
    rows = rows_from({("a1", "baseline"): [60], ("a2", "baseline"): [40]})
    nf = noise_floor(rows)
    assert nf.sd_repeat_diff is None and nf.flip_rate is None
    assert "two or more scored repeats" in nf.not_computable["sd_repeat_diff"]
    row = paired_by_profile(rows_from({("a1", "baseline"): [60], ("a1", "p"): [50],
                                       ("a2", "baseline"): [40], ("a2", "p"): [45]}))["p"]
    assert row.within_noise_floor is None
    assert "repeats" in row.not_computable["within_noise_floor"]


def test_noise_floor_of_a_deterministic_pipeline_is_not_measured() -> None:
    # was: sd_repeat_diff == 0.0 and flip_rate == 0.0; identical repeats measure nothing, so
    # the floor is "not measured" (MEASUREMENT.md), never a 0 presented as a measurement
    rows = rows_from({(f"a{i}", "baseline"): [50.0 + i, 50.0 + i] for i in range(5)})
    nf = noise_floor(rows)
    assert nf.measured is False and nf.reason.startswith(NOT_MEASURED)
    assert nf.sd_repeat_diff is None and nf.flip_rate is None
    assert nf.n_identical_repeat_pairs == nf.n_repeat_pairs == 5


def test_within_noise_floor_label() -> None:
    # every baseline answer's two repeats differ by 4 points: the noise floor is 4
    scores = {}
    for i in range(10):
        scores[(f"a{i}", "baseline")] = [60.0 + i, 64.0 + i]
        scores[(f"a{i}", "small")] = [61.0 + i, 64.0 + i]  # delta +0.5
        scores[(f"a{i}", "large")] = [40.0 + i + (i % 3), 44.0 + i]  # delta about -19
    table = paired_by_profile(rows_from(scores))
    nf = table["small"].noise_floor_sd
    assert nf == pytest.approx(4.0)
    assert table["small"].within_noise_floor is True
    assert table["large"].within_noise_floor is False


def test_noise_floor_excludes_parse_failures() -> None:
    nan = float("nan")
    rows = rows_from({("a1", "baseline"): [60, nan], ("a2", "baseline"): [40, 44],
                      ("a3", "baseline"): [70, 72]})
    nf = noise_floor(rows)
    assert nf.n_answers == 2 and nf.sd_repeat_diff == pytest.approx(math.sqrt((16 + 4) / 2))


# -- bad input -------------------------------------------------------------------------------


def test_missing_baseline_is_bad_input() -> None:
    rows = rows_from({("a1", "p"): [50]})
    with pytest.raises(RowsError, match="baseline") as err:
        paired_by_profile(rows)
    assert err.value.field == "profile_id"


def test_missing_column_names_the_column() -> None:
    rows = rows_from({("a1", "baseline"): [50]}).drop(columns=["answer_id"])
    with pytest.raises(RowsError, match="answer_id: column missing"):
        paired_by_profile(rows)


def test_non_number_score_names_row_and_value() -> None:
    rows = rows_from({("a1", "baseline"): [50], ("a1", "p"): [40]})
    rows["score"] = rows["score"].astype(object)
    rows.loc[1, "score"] = "forty"
    rows.attrs["source"] = "mine.csv"
    with pytest.raises(RowsError) as err:
        paired_by_profile(rows)
    assert str(err.value) == "mine.csv: score: not a number in row 2 (got 'forty')"


def test_duplicate_call_is_bad_input() -> None:
    rows = rows_from({("a1", "baseline"): [50], ("a1", "p"): [40]})
    rows = pd.concat([rows, rows.iloc[[0]]], ignore_index=True)
    with pytest.raises(RowsError, match="same call appears twice"):
        paired_by_profile(rows)


def test_a_failed_attempt_beside_a_scored_one_is_not_a_duplicate() -> None:
    rows = rows_from({("a1", "baseline"): [50], ("a1", "p"): [40]})
    retry = rows.iloc[[1]].assign(score=np.nan, parse_status="timeout")
    row = paired_by_profile(pd.concat([rows, retry], ignore_index=True))["p"]
    assert row.mean_delta == -10 and row.n_parse_failures == 1


def test_inconsistent_cutoff_is_bad_input() -> None:
    rows = rows_from({("a1", "baseline"): [50], ("a1", "p"): [40]})
    rows.loc[1, "cutoff"] = 70
    with pytest.raises(RowsError, match="different cutoffs"):
        paired_by_profile(rows)


def test_negative_n_boot_is_rejected() -> None:
    rows = rows_from({("a1", "baseline"): [50], ("a1", "p"): [40]})
    with pytest.raises(ValueError, match="n_boot"):
        paired_by_profile(rows, n_boot=-5)


def test_custom_score_column() -> None:
    rows = rows_from({("a1", "baseline"): [50], ("a1", "p"): [40]}).rename(
        columns={"score": "grade"})
    assert paired_by_profile(rows, score_col="grade")["p"].mean_delta == -10
