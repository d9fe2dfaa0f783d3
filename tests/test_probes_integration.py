"""The probes on real scorers: the embedded llama.cpp model (grammar-constrained), and the
OpenAI-compatible backend against a real ``python -m llama_cpp.server`` on loopback serving the
same GGUF (the ``llama_server`` fixture of conftest.py). Sized small: the machine has 2 cores
shared with other work."""

from __future__ import annotations

import json
import secrets

import pandas as pd
import pytest
from scipy import stats

from rig.probes import ProbeSpec, build_scorer, run_probe
from rig.scorer.openai_compat import OpenAICompatScorer

pytestmark = pytest.mark.integration
MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
ENV = "RIG_TEST_SERVER_KEY"


def test_a_tiny_hedging_run_on_the_embedded_scorer(tmp_path):
    pytest.importorskip("llama_cpp")
    out = tmp_path / "hedging"
    # one session: 2 questions x 2 variants scored, and the session decided under each
    # variant (each generation takes 5-15 s on one core)
    res = run_probe(ProbeSpec("hedging", out, n_sessions=1, questions_per_session=2, seed=0,
                              conditions=("plain",)), build_scorer("embedded"))
    df = pd.read_parquet(out / "scores.parquet")
    dec = pd.read_parquet(out / "decisions.parquet")
    assert len(df) == 1 * 2 * 2 and len(dec) == 1 * 2
    # the grammar makes every reply parse, the score a whole number 1-5, the reasoning short
    assert (df["parse_status"] == "ok").all(), df["raw"].tolist()
    assert df["score"].between(1, 5).all() and (df["score"] % 1 == 0).all()
    assert (df["reasoning"].str.len() <= 200).all()
    assert (dec["parse_status"] == "ok").all(), dec["raw"].tolist()
    assert set(dec["decision"]) <= {"advance", "advance_with_reservations", "do_not_advance"}
    # session s asks the same questions under both variants
    for _, g in df.groupby("session"):
        by_v = g.groupby("variant")["question_id"].apply(tuple)
        assert by_v["confident"] == by_v["hedged"]
    # the summary's statistics are scipy's on the written scores
    per_q = df.groupby(["question_id", "variant"])["score"].mean().unstack()
    got = res.summary.conditions_detail["plain"]["paired"]
    d = per_q["hedged"] - per_q["confident"]
    assert got["n_pairs"] == len(per_q) and got["mean_diff"] == pytest.approx(d.mean())
    if d.std() > 0:
        assert got["t_p"] == pytest.approx(stats.ttest_rel(per_q["hedged"],
                                                           per_q["confident"]).pvalue)
        assert got["p"] == got["t_p"] and got["p_test"] == "paired_t"
    elif (d != 0).any():  # a constant shift: the exact sign test decides
        assert got["p_test"] == "sign"
        assert got["p"] == pytest.approx(stats.binomtest(int((d > 0).sum()),
                                                         int((d != 0).sum())).pvalue)
    # the decision test pairs each session's two decisions
    dt = res.summary.conditions_detail["plain"]["decisions"]
    assert dt["n_paired"] == 1 and sum(map(sum, dt["table"])) == 1
    assert dt["p"] is not None or dt["not_computable"]["p"]
    assert (out / "report.html").stat().st_size > 1000
    assert json.loads((out / "summary.json").read_text())["scorer"]["backend"] == "llamacpp"


def test_the_openai_backend_against_a_real_llama_cpp_server(llama_server, tmp_path,
                                                           monkeypatch, capsys):
    base, key = llama_server
    monkeypatch.setenv(ENV, key)
    scorer = OpenAICompatScorer(base, MODEL, ENV, max_tokens=160, timeout_s=300)
    out = tmp_path / "openai"
    res = run_probe(ProbeSpec("accent-markers", out, n_sessions=1, questions_per_session=2,
                              seed=1, conditions=("plain",)), scorer)
    df = pd.read_parquet(out / "scores.parquet")
    assert len(df) == 4
    # no grammar is sent: each reply parsed, or is a counted failure without a score
    assert set(df["parse_status"]) <= {"ok", "invalid_json", "missing_field", "out_of_range"}
    assert (df["parse_status"] == "ok").any(), df["raw"].tolist()
    assert df.loc[df["parse_status"] != "ok", "score"].isna().all()
    assert res.summary.n_rating_failures == int((df["parse_status"] != "ok").sum())
    assert res.summary.scorer == scorer.describe()
    for f in out.iterdir():
        assert key.encode() not in f.read_bytes(), f.name
    assert key not in capsys.readouterr().out


def test_a_wrong_key_is_an_error_that_does_not_echo_it(llama_server, monkeypatch):
    base, _ = llama_server
    wrong = "sk-" + secrets.token_hex(16)
    monkeypatch.setenv(ENV, wrong)
    sc = OpenAICompatScorer(base, MODEL, ENV, max_retries=0)
    from rig.probes import parse_rating

    res = sc.complete("s", "u", grammar="", parse=parse_rating, seed=0)
    assert res.parse_status == "error" and "HTTP 401" in res.error
    assert wrong not in res.error
