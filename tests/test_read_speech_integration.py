"""rig voices import on a VCTK-layout folder of real speech, then a read-speech campaign per
speaker through the real chain (recorded voice, G.711 line, Silero VAD and the endpointing
timer, faster-whisper tiny.en, content similarity); no scorer.

The corpus is built from ../shared/data/speech/cmu-arctic (tests/corpus_layouts.py: two
"speakers", three shared prompts, three prompts only one of them read). About 40 s on 2 cores.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from corpus_layouts import SHARED_ARCTIC, make_vctk
from typer.testing import CliRunner

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    if not SHARED_ARCTIC.is_dir():
        pytest.skip(f"{SHARED_ARCTIC}: the shared speech data is not here")
    from rig.cli import app
    from rig.models import ensure_model
    from rig.pipeline import load_pipeline

    try:
        ensure_model(load_pipeline(ROOT / "pipelines" / "reference.yaml").asr.model)
    except Exception as exc:  # the model package is missing: say which
        pytest.skip(str(exc))
    tmp = tmp_path_factory.mktemp("read_speech")
    root = make_vctk(tmp / "VCTK-Corpus-0.92", real=True)
    imp = CliRunner().invoke(app, ["voices", "import", str(root), "--layout", "vctk",
                                   "--speakers", "p901,p902", "--out", str(tmp / "voices")])
    assert imp.exit_code == 0, imp.output
    run = CliRunner().invoke(app, [
        "campaign", "run", "--answers", str(tmp / "voices" / "bank"), "--profiles",
        str(tmp / "voices" / "profiles"), "--pipeline", str(ROOT / "pipelines" /
                                                            "reference.yaml"),
        "--out", str(tmp / "run"), "--workers", "1", "--no-progress"])
    assert run.exit_code == 0, run.output
    return tmp / "run", run.output


def test_read_speech_campaign_per_speaker_wer_and_truncation(campaign):
    out, console = campaign
    df = pd.read_parquet(out / "calls.parquet")
    assert len(df) == 6 and (df["status"] == "ok").all(), df["error"].tolist()
    assert set(df["answer_id"]) == {"vctk_001", "vctk_002", "vctk_003"}  # shared ones only
    assert (df["parse_status"] == "not_scored").all() and df["score"].isna().all()
    assert (df["voice_engine"] == "recorded").all()
    assert not (out / "oracle.jsonl").exists() or not (out / "oracle.jsonl").read_text().strip()
    s = json.loads((out / "summary.json").read_text())
    assert s["mode"] == "read_speech" and s["judge_validity"]["verdict"] == "not_measured"
    rs = s["read_speech"]
    assert {sid: d["group"] for sid, d in rs["by_speaker"].items()} == {
        "vctk_p901": "English", "vctk_p902": "Scottish"}
    for sid, pid in (("vctk_p901", "baseline"), ("vctk_p902", "vctk_p902")):
        g, d = df[df["profile_id"] == pid], rs["by_speaker"][sid]
        assert d["n_calls"] == 3 and d["n_failed_calls"] == 0
        assert d["wer_mean"] == pytest.approx(g["wer"].mean())
        assert d["truncation_rate"] == pytest.approx(g["truncated"].astype(float).mean())
        assert d["n_truncated"] == int(g["truncated"].sum())
        # real speech read clearly reaches the ASR: most of each prompt is heard
        assert d["wer_mean"] < 0.5, g[["answer_id", "transcript"]].to_string()
        assert g["transcript"].str.split().str.len().min() >= 3
        lo, hi = d["truncation_ci95"]
        assert lo <= d["truncation_rate"] <= hi
        if d["content_similarity_mean"] is None:
            assert s["content_similarity_note"]
        else:
            assert d["content_similarity_mean"] > 0.6
    assert rs["by_group"]["Scottish"]["speakers"] == ["vctk_p902"]
    page = (out / "report.html").read_text()
    wer = rs["by_speaker"]["vctk_p902"]["wer_mean"]
    assert f"vctk_p902 (Scottish): WER {wer:.3f}" in page
    assert "Per speaker group" in page and "id='calls'" in page
    assert f"vctk_p902 (Scottish): WER {wer:.3f}" in console
