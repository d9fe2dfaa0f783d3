"""The suspect columns on a call through the real front stages (hibari TTS, 8 kHz mu-law
line, pipecat Silero VAD, faster-whisper; the scorer is a fake: it grades nothing here): a
normal answer is checked and clean, a one-word answer is flagged turn_suspect, and the row
carries both flags with their types."""

from __future__ import annotations

from pathlib import Path

import pytest

from rig.campaign.call import run_call_front
from rig.scorer.base import ScoreResult
from rig.scorer.fake import FakeScorer
from rig.stages import Stages

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]


def _front(script: str | None):
    from rig.answers import load_bank
    from rig.pipeline import load_pipeline, pipeline_version
    from rig.profiles import load_profiles

    bank = load_bank(ROOT / "answer_bank" / "mini")
    question, answer = next((q, a) for q, a in bank.answers() if a.answer_id == "q01_strong")
    if script is not None:
        answer = answer.model_copy(update={"script": script, "answer_id": "one_word"})
    pipeline = load_pipeline(ROOT / "pipelines" / "reference.yaml")
    oracle = ScoreResult(80.0, "ok", "", None, None, 0.0, 0.0, 0)
    return run_call_front(question=question, answer=answer,
                          profile=load_profiles(ROOT / "profiles" / "demo").get("baseline"),
                          repeat=0, seed=0, pipeline=pipeline,
                          pipeline_version=pipeline_version(pipeline), campaign_id="suspect",
                          stages=Stages(scorer=FakeScorer()), oracle=oracle)


def test_a_normal_answer_is_checked_and_not_suspect() -> None:
    row = _front(None).row
    assert row["status"] == "ok", row["error"]
    assert (row["asr_suspect"], row["turn_suspect"]) == (False, False), (
        row["asr_suspect_reason"], row["turn_suspect_reason"])


def test_a_one_word_answer_is_flagged_on_its_row() -> None:
    row = _front("Yes.").row
    assert row["status"] == "ok", row["error"]
    assert row["turn_suspect"] is True
    assert row["turn_suspect_reason"].split(":")[0] in ("short_speech", "no_speech_detected")
