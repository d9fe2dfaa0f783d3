"""Stage attribution on the real stages (hibari TTS, 8 kHz mu-law line, Silero VAD with the
800 ms timer, faster-whisper tiny.en, the llama.cpp judge): a pause longer than the timer
truncates, and the loss shows at the turn detector; a call that loses no word reuses the
oracle's grade; the columns sum per call and the profile's split sums to its delta."""

import json

import pandas as pd
import pytest

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def campaign(small_real_campaign):
    """conftest's shared small real campaign (q01_strong, q03_strong under the baseline,
    long_pauses and short_pauses): its rows and summary.json."""
    return (pd.read_parquet(small_real_campaign / "calls.parquet"),
            json.loads((small_real_campaign / "summary.json").read_text()))


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
