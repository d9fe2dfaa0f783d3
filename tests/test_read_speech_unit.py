"""Read-speech mode with fake stages: the bank format, no scorer, the per speaker and per
group figures (recomputed here), the summary and the report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from corpus_layouts import make_vctk
from test_campaign_unit import make_stages

from rig.campaign.read_speech import read_speech_summary
from rig.campaign.runner import CampaignSpec, run_campaign
from rig.campaign.schema import JudgeValidityNotMeasured
from rig.errors import ConfigError
from rig.scorer.fake import FakeScorer
from rig.stats.intervals import bootstrap_mean_interval, wilson_interval
from rig.voices.corpus_import import import_corpus

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]


class NeverScorer(FakeScorer):
    """Fails the call if anything asks it for a grade."""

    def score(self, question, transcript, seed):
        raise AssertionError("a read-speech call was scored")


def _bank(tmp_path: Path, meta: str, question: str) -> Path:
    d = tmp_path / "bank"
    d.mkdir(parents=True)
    (d / "bank.yaml").write_text(meta)
    (d / "read.yaml").write_text(question)
    return d


READ = """question_id: read
category: read_speech
question: Read the sentence aloud.
answers:
  - {answer_id: s1, script: "Please call Stella."}
"""


def test_read_speech_bank_needs_no_rubric_and_refuses_one(tmp_path):
    from rig.answers import load_bank

    bank = load_bank(_bank(tmp_path, "name: r\nmode: read_speech\n", READ))
    q = bank.questions[0]
    assert bank.read_speech and not q.graded and q.cutoff is None and q.rubric == []
    assert q.answers[0].reference_score is None and q.answers[0].tier is None
    with pytest.raises(ConfigError, match=r"read.yaml: rubric: .*has no rubric "
                       r"or cutoff"):
        load_bank(_bank(tmp_path / "x", "name: r\nmode: read_speech\n", READ + (
            "rubric: [{id: a, description: a criterion here, points: 100}]\n")))
    with pytest.raises(ConfigError, match=r"read.yaml: answers\[0\].tier: .*is "
                       r"not graded"):
        load_bank(_bank(tmp_path / "y", "name: r\nmode: read_speech\n",
                        READ.replace('script: "Please', 'tier: strong, script: "Please')))
    # the same file in a graded bank still needs its rubric and tiers
    with pytest.raises(ConfigError, match=r"read.yaml: .*(rubric|cutoff)"):
        load_bank(_bank(tmp_path / "z", "name: r\n", READ))
    with pytest.raises(ConfigError, match=r"bank.yaml: mode"):
        load_bank(_bank(tmp_path / "w", "name: r\nmode: reading\n", READ))
    assert load_bank(ROOT / "answer_bank" / "core").read_speech is False


def _rows() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = []
    for pid, n in (("baseline", 6), ("b", 5), ("c", 4)):
        for i in range(n):
            rows.append({"profile_id": pid, "status": "error" if pid == "c" and i == 0
                         else "ok", "wer": float(rng.uniform(0, 0.5)),
                         "truncated": bool(i % 3 == 0),
                         "content_similarity": float(rng.uniform(0.6, 1.0))})
    return pd.DataFrame(rows)


def test_figures_per_speaker_and_group_recomputed():
    rows = _rows()
    groups = {"baseline": {"speaker_id": "s_a", "group": "Scottish"},
              "b": {"speaker_id": "s_b", "group": "Scottish"},
              "c": {"speaker_id": "s_c", "group": "unlabelled"}}
    rs = read_speech_summary(rows, groups, n_boot=500, seed=0).model_dump()
    assert list(rs["by_speaker"]) == ["s_a", "s_b", "s_c"]
    assert list(rs["by_group"]) == ["Scottish", "unlabelled"]
    assert rs["by_group"]["Scottish"]["speakers"] == ["s_a", "s_b"]
    for name, pids in (("s_c", ["c"]), ("Scottish", ["baseline", "b"])):
        d = rs["by_speaker"].get(name) or rs["by_group"][name]
        g = rows[rows["profile_id"].isin(pids)]
        ok = g[g["status"] == "ok"]
        assert d["n_calls"] == len(g) and d["n_failed_calls"] == int((g["status"] != "ok").sum())
        assert d["wer_mean"] == pytest.approx(ok["wer"].mean())
        assert d["content_similarity_mean"] == pytest.approx(ok["content_similarity"].mean())
        assert d["truncation_rate"] == pytest.approx(ok["truncated"].mean())
        assert d["n_truncated"] == int(ok["truncated"].sum())
        assert tuple(d["truncation_ci95"]) == pytest.approx(
            wilson_interval(int(ok["truncated"].sum()), len(ok)))
        assert tuple(d["wer_ci95"]) == pytest.approx(
            bootstrap_mean_interval(ok["wer"].to_numpy(), 500, 0))
        assert d["wer_ci95"][0] <= d["wer_mean"] <= d["wer_ci95"][1]
    assert rs["by_speaker"]["s_a"]["profile_id"] == "baseline"
    # too few calls for a bootstrap: null with the reason, never a made-up interval
    tiny = read_speech_summary(rows.head(2), {}, n_boot=500).model_dump()
    d = tiny["by_speaker"]["baseline"]
    assert d["wer_ci95"] is None and "needs at least 3 calls" in d["not_computable"]["wer_ci95"]
    assert d["truncation_ci95"] is not None  # Wilson is defined for n >= 1


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rs")
    res = import_corpus("vctk", make_vctk(tmp / "vctk"), tmp / "voices")
    spec = CampaignSpec(answers_path=res.bank_dir, profiles_path=res.profiles_dir,
                        pipeline_path=ROOT / "pipelines" / "reference.yaml",
                        out_dir=tmp / "run", repeats=1, n_boot=200)
    return run_campaign(spec, stages=make_stages(scorer=NeverScorer()), progress=False), tmp


def test_campaign_over_a_read_speech_bank_never_scores(corpus_run):
    _, tmp = corpus_run
    df = pd.read_parquet(tmp / "run" / "calls.parquet")
    assert len(df) == 6 and (df["status"] == "ok").all(), df["error"].tolist()
    assert (df["parse_status"] == "not_scored").all() and df["score"].isna().all()
    assert (df["oracle_parse_status"] == "not_scored").all() and df["oracle_score"].isna().all()
    assert (df["turn_text_parse_status"] == "not_scored").all()
    assert df["tier"].isna().all() and df["cutoff"].isna().all()
    assert not (tmp / "run" / "oracle.jsonl").exists() or not (
        tmp / "run" / "oracle.jsonl").read_text().strip()
    meta = json.loads((tmp / "run" / "campaign.json").read_text())
    assert meta["mode"] == "read_speech"
    assert meta["speaker_groups"]["vctk_p902"] == {
        "speaker_id": "vctk_p902", "group": "Scottish", "corpus": "vctk",
        "corpus_speaker_id": "p902"}


def test_read_speech_summary_report_and_summarize(corpus_run):
    from typer.testing import CliRunner

    from rig.campaign.summary_file import load_summary
    from rig.cli import app

    res, tmp = corpus_run
    s = res.summary
    assert s.mode == "read_speech"
    assert s.judge_validity == JudgeValidityNotMeasured(
        verdict="not_measured", reason="read-speech campaign: no scorer ran")
    rs = s.read_speech
    assert list(rs.by_speaker) == ["vctk_p901", "vctk_p902"]
    assert rs.by_speaker["vctk_p902"].group == "Scottish"
    assert set(rs.by_group) == {"English", "Scottish"}
    df = pd.read_parquet(tmp / "run" / "calls.parquet")
    for sid, pid in (("vctk_p901", "baseline"), ("vctk_p902", "vctk_p902")):
        g = df[df["profile_id"] == pid]
        assert rs.by_speaker[sid].wer_mean == pytest.approx(g["wer"].mean())
        assert s.profiles[pid].wer_mean == pytest.approx(g["wer"].mean())
    assert load_summary(tmp / "run" / "summary.json").read_speech is not None
    page = (tmp / "run" / "report.html").read_text()
    assert "Read-speech campaign" in page and "no scorer ran" in page
    assert "vctk_p902 (Scottish): WER" in page and "Per speaker group" in page
    before = (tmp / "run" / "summary.json").read_text()
    out = CliRunner().invoke(app, ["campaign", "summarize", str(tmp / "run"), "--n-boot", "200"])
    assert out.exit_code == 0, out.output
    assert "group Scottish (1 speaker): WER" in out.output
    assert (tmp / "run" / "summary.json").read_text() == before
