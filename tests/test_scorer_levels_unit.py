"""Graded judging (expected mode) arithmetic, the time budget, the OpenAI logprobs reader and
the validity figures, on hand-computed values and independent computations (scipy,
statsmodels). No model here: the real GGUF is in test_scorer_integration.py."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rig.answers import load_bank
from rig.scorer.base import GradingTimeout, ModeUnsupported, Scorer
from rig.scorer.fake import FakeScorer
from rig.scorer.levels import N_LEVELS, grade_criterion, level_distribution, score_levels
from rig.scorer.openai_levels import levels_from_logprobs
from rig.scorer.validate import reference_criterion_points, summarise, validate_bank
from rig.stats.validity import judge_validity, tier_order

pytestmark = pytest.mark.unit
BANK = load_bank("answer_bank/core")


def test_level_softmax_is_over_the_level_logits_only():
    p = level_distribution([0.0, 0.0, 0.0, 0.0, math.log(2.0)])
    assert p.tolist() == pytest.approx([1 / 6] * 4 + [2 / 6])
    # float32 logits far from 0 do not overflow
    p = level_distribution(np.array([1000, 999, 0, 0, 0], dtype=np.float32))
    assert p[0] == pytest.approx(1 / (1 + math.exp(-1)))
    with pytest.raises(ValueError):
        level_distribution([0.0, 1.0])


def test_expected_points_top_prob_and_entropy_by_hand():
    assert N_LEVELS == 5
    g = grade_criterion("empathy", 25, [0.1, 0.2, 0.3, 0.4, 0.0])
    # E[level] = 0.2 + 0.6 + 1.2 = 2.0 -> 25 * 2 / 4
    assert g.points == pytest.approx(12.5)
    assert g.top_prob == pytest.approx(0.4)
    h = -(0.1 * math.log2(0.1) + 0.2 * math.log2(0.2) + 0.3 * math.log2(0.3)
          + 0.4 * math.log2(0.4))
    assert g.entropy_bits == pytest.approx(h)
    certain = grade_criterion("x", 20, [0, 0, 0, 0, 1])
    assert (certain.points, certain.entropy_bits, certain.top_prob) == (20.0, 0.0, 1.0)
    uniform = grade_criterion("x", 20, [1] * 5)  # normalised: E[level] = 2
    assert uniform.points == pytest.approx(10.0)
    assert uniform.entropy_bits == pytest.approx(math.log2(5))
    with pytest.raises(ValueError):
        grade_criterion("x", 20, [0.5, -0.1, 0.6, 0, 0])


def test_score_levels_sums_expected_points_and_fails_on_a_missing_criterion():
    q = BANK.questions[0]
    dists = [[0, 0, 0.5, 0.5, 0]] * len(q.rubric)  # E[level] = 2.5 everywhere
    res = score_levels(q, dists)
    assert res.status == "ok"
    assert res.score == pytest.approx(sum(c.points * 2.5 / 4 for c in q.rubric))
    assert [c.criterion_id for c in res.criteria] == [c.id for c in q.rubric]
    short = score_levels(q, dists[:-1])
    assert (short.status, short.score) == ("missing_field", None)
    bad = score_levels(q, [[0, 0, 0, 0, 0], *dists[1:]])
    assert (bad.status, bad.score) == ("out_of_range", None)


def test_expected_mode_scores_fall_off_the_grid_and_keep_criteria():
    q, a = BANK.answers()[0]
    s = FakeScorer(mode="expected")
    res = s.score(q, a.clean_text, 0)
    assert res.mode == "expected" and res.parse_status == "ok"
    assert res.score != round(res.score)
    assert len(res.criteria) == len(q.rubric)
    assert sum(c.points for c in res.criteria) == pytest.approx(res.score)
    assert 0 < res.top_prob_min <= 1 and res.entropy_mean_bits > 0
    assert json.loads(res.raw)["levels"].keys() == {c.id for c in q.rubric}
    # a truncated transcript scores lower
    half = " ".join(a.clean_text.split()[:20])
    assert s.score(q, half, 0).score < res.score


class _Slow(FakeScorer):
    def __init__(self, sleep_s: float, mode="argmax", raise_timeout=False):
        super().__init__(mode=mode)
        self.sleep_s, self.raise_timeout = sleep_s, raise_timeout
        self.budget_s = 0.05

    def _complete(self, system, user, grammar, seed, *, head="", deadline=None):
        time.sleep(self.sleep_s)
        if self.raise_timeout:
            raise GradingTimeout("stopped while generating")
        return super()._complete(system, user, grammar, seed)


@pytest.mark.parametrize("raise_timeout", [False, True])
def test_a_grading_over_budget_is_a_timeout_never_a_score(raise_timeout):
    q, a = BANK.answers()[0]
    s = _Slow(0.1, raise_timeout=raise_timeout)
    res = s.score(q, a.clean_text, 0)
    assert res.parse_status == "timeout" and res.score is None
    assert "budget of 0.05 s" in res.error
    # a timeout is not memoised: the next grading runs again
    s.sleep_s, s.raise_timeout = 0.0, False
    assert s.score(q, a.clean_text, 0).parse_status == "ok"


def test_a_backend_without_levels_refuses_expected_mode():
    class ArgmaxOnly(Scorer):
        name = "argmax-only"
        mode = "expected"

        def _complete(self, system, user, grammar, seed, **_):
            return ""

    q, a = BANK.answers()[0]
    with pytest.raises(ModeUnsupported, match="cannot grade in expected mode"):
        ArgmaxOnly().score(q, a.clean_text, 0)


def _tok(token, top):
    return {"token": token, "logprob": math.log(top.get(token.strip(), 1e-3)),
            "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in top.items()]}


def test_openai_logprobs_give_renormalised_level_distributions():
    plain = {"{": 1.0}
    content = [_tok('{"', plain), _tok("levels", plain), _tok('":', plain), _tok(' {"', plain),
               _tok("situation", plain), _tok('":', plain),
               _tok(" 3", {" 3": 0.5, " 2": 0.25, "2": 0.05, " x": 0.2}),
               _tok(', "', plain), _tok("outcome", plain), _tok('":', plain), _tok(" ", plain),
               _tok("4", {"4": 0.6, "3": 0.2, "0": 0.2}), _tok("}}", plain)]
    reply = levels_from_logprobs(content, ["situation", "outcome"])
    assert reply.chosen == {"situation": 3, "outcome": 4}
    s, o = reply.distributions
    assert s == pytest.approx([0, 0, 0.3, 0.5, 0], rel=1e-9)  # " 2" and "2" both count
    assert np.asarray(s).sum() == pytest.approx(0.8)  # renormalised later by grade_criterion
    assert grade_criterion("s", 20, s).points == pytest.approx(20 * (2 * 0.375 + 3 * 0.625) / 4)
    assert o == pytest.approx([0.2, 0, 0, 0.2, 0.6])
    # a criterion the reply never writes is missing, never a score
    assert len(levels_from_logprobs(content, ["situation", "empathy"]).distributions) == 1


def test_reference_points_parse_for_every_core_answer():
    for q, a in BANK.answers():
        pts = reference_criterion_points(q, a)
        assert pts is not None, a.answer_id
        assert list(pts) == [c.id for c in q.rubric]
        assert all(0 <= pts[c.id] <= c.points for c in q.rubric)


def _rows(scores):
    pairs = BANK.answers()
    return pd.DataFrame({"question_id": [q.question_id for q, _ in pairs],
                         "tier": [a.tier for _, a in pairs],
                         "cutoff": [q.cutoff for q, _ in pairs],
                         "reference_score": [a.reference_score for _, a in pairs],
                         "score": scores})


def test_validity_figures_match_scipy_statsmodels_and_hand_counts():
    ref = np.array([a.reference_score for _, a in BANK.answers()])
    rng = np.random.default_rng(1)
    judge = np.clip(ref + rng.normal(0, 12, len(ref)), 0, 100).round(1)
    rows = _rows(judge)
    v = judge_validity(rows, n_boot=500)
    assert v.spearman == pytest.approx(stats.spearmanr(judge, ref)[0])
    assert v.pearson == pytest.approx(stats.pearsonr(judge, ref)[0])
    assert v.spearman_ci95[0] < v.spearman < v.spearman_ci95[1]
    assert v.mae_points == pytest.approx(np.abs(judge - ref).mean())
    cut = rows["cutoff"].to_numpy()
    dj, dr = judge >= cut, ref >= cut
    assert v.decision_agreement == pytest.approx((dj == dr).mean())
    po = (dj == dr).mean()
    pe = dj.mean() * dr.mean() + (1 - dj.mean()) * (1 - dr.mean())
    assert v.cohen_kappa == pytest.approx((po - pe) / (1 - pe))
    assert v.distinct_scores == len(set(judge.round(1)))


def test_cohen_kappa_worked_example():
    # 50 items, table [[20, 5], [10, 15]]: po = 0.7, pe = 0.5, kappa = 0.4 (a standard
    # textbook example, e.g. the kappa article of Wikipedia)
    df = pd.DataFrame({"question_id": ["q"] * 50, "tier": ["strong"] * 50,
                       "cutoff": [50.0] * 50,
                       "reference_score": [60] * 20 + [40] * 5 + [60] * 10 + [40] * 15,
                       "score": [60] * 25 + [40] * 25})
    assert judge_validity(df, n_boot=200).cohen_kappa == pytest.approx(0.4)


def test_tier_order_counts_questions_and_pairs():
    df = pd.DataFrame({"question_id": ["a"] * 4 + ["b"] * 4,
                       "tier": ["strong", "borderline", "borderline", "weak"] * 2,
                       "score": [90, 60, 55, 10, 90, 95, 50, 50]})
    rate, conc = tier_order(df)
    # a: all 5 cross-tier pairs ordered; b: strong<border(95) fails, border(50)=weak(50) tie
    # b's pairs: s>b1 no, s>b2 yes, s>w yes, b1>w yes, b2>w tie (0.5) -> 3.5 of 5
    assert rate == 0.5
    assert conc == pytest.approx((5 + 3.5) / 10)


def test_validate_bank_with_a_fake_judge_recomputes_from_its_rows():
    run = validate_bank(BANK, lambda m: FakeScorer(mode=m), ["argmax", "expected"], repeats=2)
    assert len(run.rows) == 2 * 2 * 40
    res = summarise(run, n_boot=200)
    rows = pd.DataFrame(res["answers"])
    for mode in ("argmax", "expected"):
        per = rows[rows["mode"] == mode].groupby("answer_id").agg(
            s=("score", "mean"), r=("reference_score", "first"))
        v = res["modes"][mode]["validity"]
        assert v["spearman"] == pytest.approx(stats.spearmanr(per["s"], per["r"])[0])
        assert v["retest_identical"] is True and v["retest_sd"] == 0.0
    assert res["modes"]["expected"]["validity"]["distinct_scores"] >= 10
    ig = res["inter_grader"]
    assert ig["graders"] == ["rig-author-a", "rig-author-b"]
    assert ig["validity"]["decision_agreement"] == 1.0
    assert "not independent" in ig["caveat"]
    # the second repeat graded the answers in another order
    r1 = [r["answer_id"] for r in run.rows if r["mode"] == "argmax" and r["repeat"] == 1]
    assert r1 != [a.answer_id for _, a in BANK.answers()]


def test_write_validation_writes_json_csv_and_an_offline_page(tmp_path):
    from rig.scorer.validate import write_validation

    run = validate_bank(load_bank("answer_bank/mini"), lambda m: FakeScorer(mode=m),
                        ["argmax", "expected"])
    res = summarise(run, n_boot=100)
    res["pipeline_version"] = "reference-x"
    files = write_validation(tmp_path / "v", res)
    assert json.loads(files["validity"].read_text())["modes"].keys() == {"argmax", "expected"}
    assert len(pd.read_csv(files["answers"])) == 16
    page = files["report"].read_text()
    assert page.count("<svg") == 2 and "<script" not in page and "<link" not in page
    assert "ceiling" in page and "reference-x" in page


def test_no_validity_verdict_below_ten_answers_but_the_figures_stay():
    """Five answers cannot judge a judge: the demo's five called `adequate` a judge the whole
    bank calls `low`. The figures are still given, with the reason for no verdict."""
    ref = np.array([a.reference_score for _, a in BANK.answers()])
    full = _rows(ref)  # a perfect judge
    assert judge_validity(full, n_boot=200).verdict == "adequate"
    few = full.iloc[:5]
    v = judge_validity(few, n_boot=200)
    assert v.verdict == "not_measured" and v.spearman is not None
    d = v.to_dict()
    assert "at least 10" in d["not_computable"]["verdict"]
    assert d["thresholds"]["min_answers"] == 10


def test_report_gives_figures_and_no_verdict_on_few_answers():
    from summaries import summary_like

    from rig.campaign.schema import JudgeValidity
    from rig.report import _validity_html

    ref = np.array([a.reference_score for _, a in BANK.answers()])
    v = judge_validity(_rows(ref).iloc[:5], n_boot=200).to_dict()
    v = JudgeValidity(**v, scoring_mode=None, source="five answers")
    page = _validity_html(summary_like(judge_validity=v))
    assert "No verdict: 5 answers" in page and "Spearman" in page and "Warning" not in page
