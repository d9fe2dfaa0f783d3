"""Probes in other languages on real components: the dual-framing probe in Spanish, French
and German on the embedded llama.cpp judge, and ``rig probe import`` of a tiny published-style
CSV with the real content-similarity model. Sized to a couple of asks per language: the judge
takes 10-60 s a reply on 2 shared cores."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from rig.probes.core import build_scorer
from rig.probes.framing import DEFAULT_FRAMING, FramingSpec, load_topics, run_dual_framing
from rig.probes.framing.languages import FRAMING_LANGUAGES

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def embedded():
    pytest.importorskip("llama_cpp")
    return build_scorer("embedded")


def _one_statement(lang, folder):
    """The shipped set of ``lang`` cut to its first topic's first statement (2 asks)."""
    topics, _ = load_topics(DEFAULT_FRAMING / lang)
    t = topics[0].model_dump()
    t["statements"] = [t["statements"][0]]
    folder.mkdir()
    (folder / "topics.yaml").write_text(yaml.safe_dump({"version": 1, "topics": [t]},
                                                       allow_unicode=True), encoding="utf-8")
    (folder / "wrappers.yaml").write_bytes((DEFAULT_FRAMING / lang / "wrappers.yaml")
                                           .read_bytes())
    return folder


@pytest.mark.parametrize("lang", ["es", "fr", "de"])
def test_dual_framing_in_three_languages_on_the_embedded_judge(tmp_path, embedded, lang):
    out = tmp_path / "run"
    spec = FramingSpec(out, data_path=_one_statement(lang, tmp_path / "set"), iterations=1,
                       seed=0, language=lang)
    res = run_dual_framing(spec, embedded)
    df = pd.read_parquet(out / "scores.parquet")
    assert len(df) == 2 and sorted(df["frame"]) == ["affirmative", "reverse"]
    assert set(df["language"]) == {lang}
    assert df["prompt"].str.contains(FRAMING_LANGUAGES[lang].options_text, regex=False).all()
    assert df["raw"].str.len().gt(0).all()
    ok = df[df["parse_status"] == "ok"]
    assert set(ok["stance"]) <= {"strongly_agree", "agree", "neutral", "disagree",
                                 "strongly_disagree"}
    assert df.loc[df["parse_status"] != "ok", "score"].isna().all()
    assert res.summary.language == lang and res.summary.overall["both"]["n_asked"] == 2
    print(lang, df[["frame", "raw", "stance", "rule"]].to_dict("records"))
    # resumed from the ask log: nothing asked again
    assert run_dual_framing(spec, embedded).n_backend_calls == 0


def test_import_of_a_tiny_published_csv_on_real_components(tmp_path, embedded):
    """Two pairs: one passing rig's checks, one whose hedged twin drops a fact. Real judge,
    real all-MiniLM-L6-v2 content similarity."""
    pytest.importorskip("sentence_transformers")
    from rig.probes.replicate import ImportSpec, run_import

    csv = tmp_path / "bench.csv"
    pd.DataFrame([
        ("Tell me about a hard problem you solved.",
         "I rebuilt the shipping schedule and cut late orders from 30 percent to 5 percent in "
         "six weeks.",
         "I think I sort of rebuilt the shipping schedule and maybe cut late orders from 30 "
         "percent to 5 percent in six weeks."),
        ("Why do you want this role?",
         "I have four years in a call centre and a resolution rate of 85 percent.",
         "I think I have four years in a call centre, maybe."),
    ], columns=["question", "confident_answer", "hedged_answer"]).to_csv(csv, index=False)
    out = tmp_path / "imp"
    res = run_import(ImportSpec(csv, out), embedded)
    s = res.summary
    assert s.n_pairs == 2 and s.n_pairs_with_warnings == 1 and s.n_rating_failures == 0
    same, cut = s.pairs
    assert same.warnings == [] and cut.reference_only_words == ["85", "percent", "rate",
                                                                "resolution"]
    # the real model: near-identical content scores higher than a twin that lost a fact
    assert 0.8 < same.content_similarity <= 1 and cut.content_similarity < same.content_similarity
    for p in s.pairs:
        assert 1 <= p.score_reference <= 5 and 1 <= p.score_treatment <= 5
        assert p.score_gap == p.score_treatment - p.score_reference
    print([(p.pair_id, p.score_reference, p.score_treatment, round(p.content_similarity, 3))
           for p in s.pairs])
    assert (out / "report.html").is_file()
