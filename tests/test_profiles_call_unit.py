"""A call records the condition it ran under: the profile's settings, what the render
measured, the caller channel's chain and measured loss, and WER under both reference policies.
Real synthesis logic (fake engine) and the real numpy channel; fake VAD, ASR and scorer."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rig.answers import load_bank
from rig.asr.whisper import Transcript
from rig.campaign.call import run_call
from rig.channel import Channel
from rig.pipeline import load_pipeline
from rig.profiles import Disfluency, Noise, Pace, Profile
from rig.scorer.fake import FakeScorer
from rig.stages import Stages
from rig.synth import render_answer
from rig.vad import TurnResult

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]


class ToneEngine:
    name, version, sample_rate_hz = "tone", "1", 16000

    def __init__(self) -> None:
        self.voice_id = "tone"

    def synthesize(self, text: str, rate: float):
        from rig.audio import Audio

        n = int(0.05 / rate * self.sample_rate_hz) * max(1, len(text))
        t = np.arange(n) / self.sample_rate_hz
        return Audio((0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), 16000)


@pytest.fixture
def call_row(tmp_path: Path):
    bank = load_bank(ROOT / "answer_bank" / "core")
    question, answer = bank.answers()[0]
    pipeline = load_pipeline(ROOT / "pipelines" / "reference.yaml")
    scorer = FakeScorer()
    oracle = scorer.score(question, answer.clean_text, 0)
    heard: dict = {}

    def render(script, profile, seed, **kw):
        kw.pop("cache_dir", None)
        r = render_answer(script, profile, seed, engine=ToneEngine(), cache_dir=tmp_path, **kw)
        heard["words"] = r.words
        return r

    def detect(audio, params):
        heard["line_rate"] = audio.sample_rate_hz
        return TurnResult(0.5, audio.duration_s, "end_of_audio", ((0.5, audio.duration_s),))

    def transcribe(audio, options):
        return Transcript(" ".join(w.word for w in heard["words"] if not w.is_filler),
                          -0.1, 0.0, audio.duration_s)

    def run(profile: Profile, stages_kw: dict | None = None) -> dict:
        stages = Stages(scorer=scorer, render=render, detect_turn=detect, transcribe=transcribe,
                        **(stages_kw or {}))
        return run_call(question=question, answer=answer, profile=profile, repeat=0, seed=0,
                        pipeline=pipeline, pipeline_version="v", campaign_id="c",
                        stages=stages, oracle=oracle)

    return run


def test_a_call_records_the_profile_render_and_channel(call_row) -> None:
    channel = Channel.model_validate({"steps": [
        {"kind": "g711"}, {"kind": "packet_loss", "model": "gilbert_elliott", "loss_pct": 5,
                           "mean_burst_frames": 3, "concealment": "repeat"}]})
    prof = Profile(profile_id="p", pace=Pace(wpm=150), channel=channel,
                   noise=Noise(kind="white", snr_db=15.0),
                   disfluency=Disfluency(fillers_per_100_words=5.0))
    row = call_row(prof)
    assert row["status"] == "ok", row.get("error")
    assert json.loads(row["profile_json"])["pace"]["wpm"] == 150
    assert row["pace_wpm_target"] == 150 and abs(row["pace_wpm_measured"] / 150 - 1) <= 0.1
    assert row["pace_rate_used"] is not None and row["voice_version"] == "1"
    assert row["snr_db_target"] == 15.0 and abs(row["snr_db_measured"] - 15.0) <= 0.5
    assert row["channel_chain"] == channel.describe()
    assert json.loads(row["channel_steps"])[1]["model"] == "gilbert_elliott"
    assert row["channel_packets"] > 0 and row["channel_output_rate_hz"] == 8000
    assert row["channel_loss_pct"] == pytest.approx(
        100 * row["channel_packets_lost"] / row["channel_packets"])
    assert row["channel_missing_pct_expected"] == pytest.approx(5.0)
    assert row["fillers_spoken"] >= 1 and row["repetitions_spoken"] == 0
    assert row["wer_reference_policy"] == "clean"
    assert row["wer"] == 0.0 and row["wer_verbatim"] > 0.0  # the fillers were not transcribed
    assert row["barge_in_offset_s"] == 0.0 and row["accent_label"] == prof.accent_label


def test_a_replaced_channel_stage_leaves_the_report_columns_empty(call_row) -> None:
    row = call_row(Profile(profile_id="p"), {"caller_channel": lambda a, c, s: a})
    assert row["status"] == "ok"
    assert row["channel_chain"] == "clean wideband" and row["channel_packets"] is None
    clean = call_row(Profile(profile_id="p"))
    assert clean["channel_packets"] == 0 and clean["channel_loss_pct"] is None
