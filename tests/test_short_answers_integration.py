"""The short-answer bank (answer_bank/short) through the real stages: hibari TTS, the 8 kHz
mu-law line, pipecat's Silero VAD and faster-whisper, under profiles/short (baseline and
quick_reply). Every answer is one or two words; each call ends in a named outcome: heard
(transcribed, graded) or ``vad_missed`` (not transcribed, never graded), and the summary's
capture rate for 1-2 word answers counts them."""

from __future__ import annotations

from pathlib import Path

import pytest

from rig.scorer.fake import FakeScorer
from rig.stages import Stages

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]


def test_short_answers_are_heard_or_named_missed(tmp_path: Path) -> None:
    import pandas as pd

    from rig.answers import load_bank
    from rig.campaign.plan import CampaignSpec
    from rig.campaign.runner import run_campaign
    from rig.campaign.summary_file import load_summary
    from rig.script import reference_text

    bank = load_bank(ROOT / "answer_bank" / "short")
    assert all(1 <= len(reference_text(a.script).split()) <= 2 for _, a in bank.answers())
    spec = CampaignSpec(answers_path=ROOT / "answer_bank" / "short",
                        profiles_path=ROOT / "profiles" / "short",
                        pipeline_path=ROOT / "pipelines" / "reference.yaml",
                        out_dir=tmp_path / "c", repeats=1, n_boot=200, audio=False,
                        question_ids=("s01_work_authorised", "s03_forklift_years"))
    run_campaign(spec, stages=Stages(scorer=FakeScorer()), progress=False)
    rows = pd.read_parquet(tmp_path / "c" / "calls.parquet")
    assert len(rows) == 6 * 2 and set(rows["status"]) == {"ok"}, rows["error"].tolist()
    for r in rows.to_dict("records"):
        assert r["words_total"] <= 2
        if isinstance(r["faults"], str) and "vad_missed" in r["faults"]:
            assert pd.isna(r["transcript"]) and r["parse_status"] == "not_scored"
            assert pd.isna(r["score"])
        else:
            assert r["transcript"] and r["turn_closed_by"] == "silence_timeout"
            assert r["parse_status"] == "ok"
    s = load_summary(tmp_path / "c" / "summary.json")
    for pid, p in s.profiles.items():
        mine = rows[rows["profile_id"] == pid]
        missed = mine["faults"].fillna("").str.contains("vad_missed").sum()
        (bin_,) = p.capture_by_length
        assert bin_.words == "1-2" and bin_.n_calls == len(mine)
        assert bin_.n_captured == len(mine) - missed
