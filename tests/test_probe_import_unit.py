"""``rig probe import``: published sets read as they are (CSV and rig's layout), rig's checks
as warnings per pair, score gaps beside content gaps, the summary recomputed, the CLI (fake
scorer, fake embedder)."""

from __future__ import annotations

import json
import shutil
from html import escape

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from rig.cli.probe import probe_app
from rig.errors import ConfigError
from rig.probes.replicate import ImportSpec, read_pairs, run_import
from rig.scorer.fake import FakeScorer

pytestmark = pytest.mark.unit

#: a published-style set: the first pair passes rig's checks, the second drops two content
#: words, the third drops a fact and has no hedge
ROWS = [
    ("Tell me about a hard problem you solved.",
     "I rebuilt the shipping schedule and cut late orders from 30 percent to 5 percent in "
     "six weeks.",
     "I think I sort of rebuilt the shipping schedule and maybe cut late orders from 30 "
     "percent to 5 percent in six weeks.", "problem_solving"),
    ("How do you handle conflict?",
     "I meet each person separately and then agree a written rota with both of them.",
     "I guess I might meet each person and then perhaps agree on a rota with both of them.",
     "teambuilding"),
    ("Why this role?",
     "I have four years in a call centre and a resolution rate of 85 percent.",
     "I have four years in a call centre.", ""),
]


def hedge_penalty(user: str, seed: int) -> str:
    """Rates 4, minus 1 for a hedged twin, minus 1 more for a short answer."""
    ans = user.rsplit('"""', 2)[-2]
    score = 4 - any(h in ans for h in ("I think", "I guess")) - (len(ans.split()) < 12)
    return json.dumps({"score": score, "reasoning": "rated"})


def embed(texts):
    """A stand-in embedder: bag of words over a fixed vocabulary, L2-normalised."""
    vocab = sorted({w for t in texts for w in t.split()})
    v = np.array([[t.split().count(w) for w in vocab] for t in texts], dtype=float)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def csv_path(tmp_path):
    p = tmp_path / "bench.csv"
    pd.DataFrame(ROWS, columns=["Question", "Confident Answer", "Hedged Answer",
                                "Category"]).to_csv(p, index=False)
    return p


def test_benchmark_csv_read_as_it_is(csv_path, tmp_path):
    pairs = read_pairs(csv_path, "hedging-benchmark")
    assert [p.pair_id for p in pairs] == ["row0001", "row0002", "row0003"]
    assert pairs[0].category == "problem_solving" and pairs[2].category is None
    assert pairs[1].source == "bench.csv:3"
    odd = tmp_path / "odd.csv"
    odd.write_text("q,a,b\nWhy?,Because I can do the job well.,I think I can do it.\n",
                   encoding="utf-8")
    with pytest.raises(ConfigError, match=r"odd.csv: header: no column for question .*"
                                          r"the file has \['q', 'a', 'b'\].*--column"):
        read_pairs(odd, "hedging-benchmark")
    got = read_pairs(odd, "hedging-benchmark", {"question": "q", "confident": "a",
                                                "hedged": "b"})
    assert got[0].treatment == "I think I can do it."
    with pytest.raises(ConfigError, match=r"--column hedged: no such header"):
        read_pairs(odd, "hedging-benchmark", {"question": "q", "confident": "a",
                                              "hedged": "B"})
    odd.write_text("question,confident,hedged\nWhy?,,I think so.\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"odd.csv: line 2: confident: empty"):
        read_pairs(odd, "hedging-benchmark")
    with pytest.raises(ConfigError, match=r"--layout: unknown layout"):
        read_pairs(odd, "paper")


def test_import_scores_gaps_beside_content_gaps(csv_path, tmp_path):
    out = tmp_path / "imp"
    res = run_import(ImportSpec(csv_path, out), FakeScorer(hedge_penalty), embedder=embed)
    s = res.summary
    assert s.probe == "imported" and s.n_pairs == 3 and s.n_pairs_with_warnings == 2
    p1, p2, p3 = s.pairs
    assert (p1.score_reference, p1.score_treatment, p1.score_gap) == (4, 3, -1)
    assert p1.warnings == [] and p1.reference_only_words == []
    assert p1.treatment_only_words == []   # "think", "sort", "maybe" are hedge words
    assert p2.reference_only_words == ["separately", "written"]
    assert any("lacks content words" in w for w in p2.warnings)
    assert p3.reference_only_words == ["85", "percent", "rate", "resolution"]
    assert any("0 hedge markers" in w for w in p3.warnings)
    assert p3.score_gap == -1  # the short twin loses a point for content, not style
    # content similarity is the embedder's cosine of the twins, after WER's normalisation
    from rig.asr.wer import normalize

    pairs = read_pairs(csv_path, "hedging-benchmark")
    v = embed([normalize(pairs[1].reference), normalize(pairs[1].treatment)])
    assert p2.content_similarity == pytest.approx(float(v[0] @ v[1]))
    assert 0 < p2.content_similarity < 1
    # the summary's gaps recomputed
    gaps = np.array([p.score_gap for p in s.pairs])
    assert s.paired["mean_diff"] == pytest.approx(gaps.mean())
    assert s.paired_passing["n_pairs"] == 1 and s.paired_warned["n_pairs"] == 2
    assert s.paired_warned["mean_diff"] == pytest.approx(gaps[1:].mean())
    df = pd.read_parquet(out / "scores.parquet")
    assert list(df["pair_id"]) == ["row0001", "row0002", "row0003"]
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "separately, written" in html and "Pairs with warnings (2 of 3)" in html
    # resumed from the ask log
    again = run_import(ImportSpec(csv_path, out), FakeScorer(hedge_penalty), embedder=embed)
    assert again.n_backend_calls == 0


def test_a_set_rig_probe_check_refuses_is_imported_with_warnings(tmp_path):
    from rig.probes.data import DEFAULT_SHIBBOLETH

    folder = tmp_path / "set"
    shutil.copytree(DEFAULT_SHIBBOLETH / "es", folder)
    f = folder / "initiative.yaml"
    f.write_text(f.read_text(encoding="utf-8").replace(
        "y creo que la dirección lo extendió a toda la clínica",
        "y creo que la dirección lo aprobó"), encoding="utf-8")
    runner = CliRunner()
    res = runner.invoke(probe_app, ["check", str(folder), "--language", "es"])
    assert res.exit_code == 2 and "rig probe import" in res.output
    out = tmp_path / "imp"
    run = run_import(ImportSpec(folder, out, layout="rig-pairs", language="es"),
                     FakeScorer(hedge_penalty), embedder=embed)
    s = run.summary
    assert s.n_pairs == 6 and s.n_pairs_with_warnings == 1 and s.language == "es"
    bad = next(p for p in s.pairs if p.warnings)
    assert bad.pair_id == "in_es01" and "extendió" in bad.reference_only_words
    assert "aprobó" in bad.treatment_only_words
    assert "rough guide" in s.content_similarity_note
    # the report is English; each pair's question and lacking words are marked Spanish
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.startswith('<!doctype html><html lang="en">')
    assert all(f'<span lang="es">{escape(p.question)}</span>' in html for p in s.pairs)
    assert f'<span lang="es">{escape(", ".join(bad.reference_only_words))}</span>' in html


def test_import_cli_and_summarize(csv_path, tmp_path, monkeypatch):
    import rig.cli.probe_import as cli
    import rig.probes.replicate.run as run_mod

    monkeypatch.setattr(cli, "_scorer", lambda spec: FakeScorer(hedge_penalty))
    real = run_mod.content_similarity_of_pairs
    monkeypatch.setattr(run_mod, "content_similarity_of_pairs",
                        lambda pairs, embedder=None: real(pairs, embed))
    out = tmp_path / "cli"
    runner = CliRunner()
    res = runner.invoke(probe_app, ["import", str(csv_path), "--out", str(out),
                                    "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "score gap beside content gap" in res.output and "passing rig's checks" in res.output
    before = json.loads((out / "summary.json").read_text())
    (out / "summary.json").unlink()
    res = runner.invoke(probe_app, ["summarize", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads((out / "summary.json").read_text()) == before
    bad = runner.invoke(probe_app, ["import", str(csv_path), "--column", "answer=x",
                                    "--out", str(out)])
    assert bad.exit_code == 2 and "ROLE=HEADER" in bad.output


def test_the_terminal_table_says_when_it_cuts_a_pairs_missing_words():
    from rig.cli.probe_import import _first_words

    assert _first_words([]) == "none"
    assert _first_words(["85", "percent"]) == "85, percent"
    assert _first_words([str(i) for i in range(10)]) == "0, 1, 2, 3, 4, 5, ... (+4 more)"


def test_a_parquet_file_named_csv_is_named_and_said_what_it_looks_like(csv_path, tmp_path):
    fake = tmp_path / "pairs.csv"
    pd.read_csv(csv_path).to_parquet(fake)
    with pytest.raises(ConfigError, match="Parquet") as exc:
        read_pairs(fake, "hedging-benchmark")
    assert "pairs.csv" in str(exc.value) and "to_csv" in str(exc.value)
    res = CliRunner().invoke(probe_app, ["import", str(fake), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "Parquet" in res.output
    assert "Expected" not in res.output  # not pandas' raw parser error
    assert not (tmp_path / "o").exists()
    utf16 = tmp_path / "u16.csv"
    utf16.write_text("question,confident,hedged\na,b,c\n", encoding="utf-16")
    with pytest.raises(ConfigError, match="NUL bytes"):
        read_pairs(utf16, "hedging-benchmark")


def test_a_folder_of_another_run_is_refused_before_the_judge_or_embedder_loads(
        csv_path, tmp_path, monkeypatch):
    import rig.cli.probe_import as cli
    import rig.probes.replicate.run as run_mod

    loaded = []
    monkeypatch.setattr(cli, "_scorer", lambda spec: loaded.append("judge"))
    monkeypatch.setattr(run_mod, "content_similarity_of_pairs",
                        lambda *a, **k: loaded.append("embedder"))
    out = tmp_path / "other"
    out.mkdir()
    (out / "probe.json").write_text(json.dumps({"probe": "hedging", "language": "en"}))
    res = CliRunner().invoke(probe_app, ["import", str(csv_path), "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert "probe.json" in res.output and "hedging" in res.output and loaded == []
    with pytest.raises(ConfigError, match="probe"):
        run_import(ImportSpec(csv_path, out), None)
    assert loaded == []
