"""A small campaign through every real stage: hibari TTS, 8 kHz mu-law line, pipecat Silero
VAD with an 800 ms endpointing timer, faster-whisper tiny.en, llama.cpp Qwen2.5-Coder-1.5B."""

import json
from pathlib import Path

import pandas as pd
import pytest

from rig.campaign.runner import run_campaign
from rig.campaign.summary import build_summary

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def campaign(small_real_campaign_spec):
    """conftest's shared campaign (2 answers x baseline, long_pauses, short_pauses) and its
    summary.json."""
    spec = small_real_campaign_spec
    return spec, json.loads((spec.out_dir / "summary.json").read_text())


def test_every_call_ran_through_the_real_chain(campaign):
    spec, _summary = campaign
    df = pd.read_parquet(spec.out_dir / "calls.parquet")
    assert len(df) == 6 and df["call_id"].is_unique
    assert (df["status"] == "ok").all(), df["error"].tolist()
    assert (df["parse_status"] == "ok").all(), df["scorer_raw"].tolist()
    assert (df["voice_engine"] == "hibari").all()
    assert df["pipeline_version"].nunique() == 1
    assert df["oracle_score"].notna().all()


def test_graded_judging_fills_the_scorer_columns_and_the_validity_block(campaign):
    spec, summary = campaign
    df = pd.read_parquet(spec.out_dir / "calls.parquet")
    assert (df["scorer_mode"] == "expected").all()
    assert (df["score"] != df["score"].round()).any()  # off the integer grid
    crit = json.loads(df["scorer_criteria_json"].iloc[0])
    assert len(crit) == 4 and all(abs(sum(c["level_probs"]) - 1) < 1e-9 for c in crit)
    assert df["scorer_top_prob_min"].between(0, 1).all()
    v = summary["judge_validity"]
    assert v["scoring_mode"] == "expected" and v["n_answers"] == 2
    assert v["verdict"] == "not_measured"  # two answers cannot be ranked
    assert "spearman" in v["not_computable"]


def test_a_pause_longer_than_the_timer_truncates_and_a_shorter_one_does_not(campaign):
    spec, _summary = campaign
    df = pd.read_parquet(spec.out_dir / "calls.parquet").set_index("profile_id")
    assert df.loc["long_pauses", "truncated"].all()
    assert (df.loc["long_pauses", "words_lost_share"] > 0.2).all()
    assert (df.loc["long_pauses", "turn_closed_by"] == "silence_timeout").all()
    assert not df.loc["short_pauses", "truncated"].any()
    assert not df.loc["baseline", "truncated"].any()
    # the ASR is fine on what it heard; the words were lost at the turn detector
    assert (df.loc["baseline", "wer"] <= 0.15).all()
    assert (df.loc["long_pauses", "wer_spoken"] <= 0.2).all()
    assert (df.loc["long_pauses", "wer"] >= df.loc["long_pauses", "words_lost_share"] - 0.1
            ).all()


def test_summary_equals_a_recomputation_from_calls_parquet(campaign):
    spec, _summary = campaign
    df = pd.read_parquet(spec.out_dir / "calls.parquet")
    on_disk = json.loads((spec.out_dir / "summary.json").read_text())
    plan = json.loads((spec.out_dir / "campaign.json").read_text())
    again = build_summary(df, campaign_id=on_disk["campaign_id"],
                          pipeline_version=on_disk["pipeline_version"], n_boot=spec.n_boot,
                          repeats_skipped=plan.get("repeats_skipped"),
                          floor_advice=plan.get("noise_floor_advice"))
    # what the run adds beside the rows: the log's extra rows, the resolved pipeline and the
    # judge's bank-wide verdict (looked up by bank and pipeline version, not from the rows)
    for k in ("n_log_rows_not_in_plan", "pipeline", "judge_validity_bank"):
        on_disk.pop(k, None)
    assert json.loads(json.dumps(again)) == on_disk
    lp = on_disk["profiles"]["long_pauses"]
    assert lp["truncation_rate"] == 1.0 and lp["n_pairs"] == 2
    html = (spec.out_dir / "report.html").read_text()
    assert "<svg" in html and "<script src" not in html  # offline: nothing fetched
    assert 'src="http' not in html and "<link" not in html


def test_rerun_resumes_with_nothing_to_do(campaign):
    spec, _summary = campaign
    again = run_campaign(spec, progress=False)
    assert again.n_run == 0 and again.n_skipped == 6
