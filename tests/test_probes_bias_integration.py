"""Name swap, dual framing and invariance on real scorers: the embedded llama.cpp model
(grammar-constrained), and the name swap through the OpenAI-compatible backend against
``python -m llama_cpp.server`` on loopback (the ``llama_server`` fixture of conftest.py).
Sized to a handful of asks each: the machine has 2 cores shared with other work."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from scipy import stats

from rig.probes.core import build_scorer
from rig.probes.framing import FramingSpec, run_dual_framing
from rig.probes.invariance import InvarianceSpec, run_invariance
from rig.probes.name_swap import NameSwapSpec, run_name_swap
from rig.scorer.openai_compat import OpenAICompatScorer

pytestmark = pytest.mark.integration
MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
ENV = "RIG_TEST_SERVER_KEY"


@pytest.fixture(scope="module")
def embedded():
    pytest.importorskip("llama_cpp")
    return build_scorer("embedded")


def _name_swap_spec(out):
    # one resume under one male-read and one female-read name: 6 asks
    return NameSwapSpec(out, name_sets=("gendered",), kinds=("resume",), n_items=1,
                        names_per_group=1, seed=0, conditions=("plain",))


def test_name_swap_on_the_embedded_scorer(tmp_path, embedded):
    out = tmp_path / "ns"
    res = run_name_swap(_name_swap_spec(out), embedded)
    df = pd.read_parquet(out / "scores.parquet")
    assert len(df) == 6 and set(df["group"]) == {"male", "female"}
    # the grammar makes every reply parse and stay in range
    assert (df["parse_status"] == "ok").all(), df["raw"].tolist()
    q = df[df["feature"] == "qualification"]["value"]
    assert q.between(1, 10).all() and (q % 1 == 0).all()
    assert set(df.loc[df["feature"] == "hire", "answer"]) <= {"yes", "no"}
    assert df.loc[df["feature"] == "compensation", "value"].between(1_000, 10_000_000).all()
    d = res.summary.detail["gendered"]["plain"]
    m, f = (q[df.loc[q.index, "group"] == g] for g in ("male", "female"))
    assert d["features"]["qualification"]["pairs"][0]["p"] == pytest.approx(
        stats.mannwhitneyu(m, f, alternative="two-sided").pvalue)
    assert 0 <= d["features"]["qualification"]["bias_index"]["index"] <= 1
    assert json.loads((out / "summary.json").read_text())["scorer"]["backend"] == "llamacpp"
    assert (out / "report.html").stat().st_size > 1000
    assert run_name_swap(_name_swap_spec(out), embedded).n_backend_calls == 0


def test_dual_framing_on_the_embedded_scorer(tmp_path, embedded):
    out = tmp_path / "df"
    res = run_dual_framing(FramingSpec(out, topics=("gender_leadership",), iterations=1,
                                       seed=0), embedded)
    df = pd.read_parquet(out / "scores.parquet")
    assert len(df) == 4 and sorted(df["frame"]) == ["affirmative"] * 2 + ["reverse"] * 2
    assert df["raw"].str.len().gt(0).all()
    ok = df[df["parse_status"] == "ok"]
    assert set(ok["stance"]) <= {"strongly_agree", "agree", "neutral", "disagree",
                                 "strongly_disagree"}
    assert df.loc[df["parse_status"] != "ok", "score"].isna().all()
    o = res.summary.overall["both"]
    assert o["n_scored"] == len(ok) and o["n_asked"] == 4
    if len(ok):
        assert o["one_sample"]["mean"] == pytest.approx(ok["aligned_score"].mean())
    assert (out / "report.html").is_file()


def test_invariance_on_the_embedded_scorer(tmp_path):
    pytest.importorskip("llama_cpp")
    from rig.scorer.llamacpp import LlamaCppScorer

    # assessments are free text: one pair (2 asks) and a short cap keep the test small
    scorer = LlamaCppScorer(n_ctx=4096, max_tokens=64)
    scorer._complete_memo.clear()  # its backend calls are counted: none from earlier tests
    out = tmp_path / "inv"
    spec = InvarianceSpec(out, perturbations=("name_swap",), n_items=1, names_per_group=1,
                          seed=0)
    res = run_invariance(spec, scorer)
    df = pd.read_parquet(out / "scores.parquet")
    assert list(df["perturbation"]) == ["name_swap:female"] and res.n_backend_calls == 2
    assert df["scored"].all(), df[["reference_raw", "perturbed_raw"]].to_dict("records")
    for side in ("reference", "perturbed"):
        assert (df[f"{side}_length_words"] > 3).all()
        assert df[f"{side}_polarity"].between(-1, 1).all()
        assert df[f"{side}_subjectivity"].between(0, 1).all()
    s = res.summary.by_perturbation["name_swap:female"]
    # one pair: no t-test, and the summary says why instead of a number
    assert s["n_scored"] == 1 and all(t["p_bonferroni"] is None for t in s["tests"])
    assert (out / "report.html").is_file()
    assert run_invariance(spec, scorer).n_backend_calls == 0


def test_name_swap_through_a_real_openai_compatible_server(llama_server, tmp_path,
                                                          monkeypatch):
    base, key = llama_server
    monkeypatch.setenv(ENV, key)
    scorer = OpenAICompatScorer(base, MODEL, ENV, max_tokens=96, timeout_s=300)
    out = tmp_path / "ns-openai"
    res = run_name_swap(_name_swap_spec(out), scorer)
    df = pd.read_parquet(out / "scores.parquet")
    assert len(df) == 6
    # no grammar is sent: each reply parsed, or is a counted failure without a value
    assert set(df["parse_status"]) <= {"ok", "invalid_json", "missing_field", "out_of_range"}
    assert (df["parse_status"] == "ok").any(), df["raw"].tolist()
    assert df.loc[df["parse_status"] != "ok", "value"].isna().all()
    assert res.summary.n_failures == int((df["parse_status"] != "ok").sum())
    assert res.summary.scorer["backend"] == "openai"
    for f in out.iterdir():
        assert key.encode() not in f.read_bytes(), f.name
