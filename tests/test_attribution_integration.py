"""Stage attribution on the real stages (hibari TTS, 8 kHz mu-law line, Silero VAD with the
800 ms timer, faster-whisper tiny.en, the llama.cpp judge): a pause longer than the timer
truncates, and the loss shows at the turn detector; a call that loses no word reuses the
oracle's grade; the columns sum per call and the profile's split sums to its delta."""

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from rig.campaign.runner import CampaignSpec, run_campaign

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    out = tmp_path_factory.mktemp("attribution") / "c"
    # the reference pipeline with a grading budget a loaded shared machine cannot miss: a
    # timed-out oracle grading would leave its calls unattributed (tested on fakes)
    pipe = yaml.safe_load((ROOT / "pipelines" / "reference.yaml").read_text())
    pipe["scorer"]["budget_s"] = 3600
    pipe_path = out.parent / "pipeline.yaml"
    pipe_path.write_text(yaml.safe_dump(pipe))
    spec = CampaignSpec(answers_path=ROOT / "answer_bank" / "mini",
                        profiles_path=ROOT / "profiles" / "demo",
                        pipeline_path=pipe_path, out_dir=out,
                        repeats=1, answer_ids=("q01_strong", "q03_strong"),
                        profile_ids=("long_pauses",), n_boot=500)
    run_campaign(spec, progress=False)
    return (pd.read_parquet(out / "calls.parquet"),
            json.loads((out / "summary.json").read_text()))


def test_truncation_shows_as_a_turn_detection_loss(campaign):
    df, _ = campaign
    assert (df["status"] == "ok").all(), df["error"].tolist()
    lp = df[df["profile_id"] == "long_pauses"]
    assert lp["truncated"].all()
    assert (lp["turn_text_parse_status"] == "ok").all(), lp["scorer_raw"].tolist()
    assert (lp["score_turn_text"] < lp["oracle_score"]).any()
    assert lp["loss_turn_detection"].mean() < 0


def test_a_call_that_lost_no_word_reuses_the_oracle(campaign):
    df, _ = campaign
    base = df[df["profile_id"] == "baseline"]
    assert not base["truncated"].any()
    assert (base["score_turn_text"] == base["oracle_score"]).all()
    assert (base["loss_turn_detection"] == 0).all()


def test_the_columns_sum_per_call_and_per_profile(campaign):
    df, summary = campaign
    ok = df.dropna(subset=["loss_turn_detection", "loss_asr", "score_minus_oracle"])
    assert len(ok) == len(df)
    assert ((ok["loss_turn_detection"] + ok["loss_asr"] - ok["score_minus_oracle"]).abs()
            < 1e-9).all()
    a = summary["profiles"]["long_pauses"]["attribution"]
    assert a["n_pairs"] == 2
    assert a["mean_delta"] == pytest.approx(summary["profiles"]["long_pauses"]["mean_delta"])
    assert a["turn_detection"] + a["asr"] + a["rest"] == pytest.approx(a["mean_delta"])
    assert a["turn_detection"] < 0
