"""Faults through the real stages.

* The reference interviewer's outage watchdog on real speech (LibriVox, ../shared/data/speech)
  and pipecat's Silero VAD: frames stop mid-answer, and the turn closes the outage window after
  the last frame (``media_outage``), not at the 120 s maximum.
* A simulated call under the shipped ``media_outage_4s`` profile (hibari TTS, 8 kHz mu-law line,
  Silero VAD, faster-whisper): the turn closes by ``media_outage``, the row carries the outage
  and the fault, and the words after the outage were never heard.
* A one-word answer ("Yes.") under a VAD start window longer than the word: the VAD never
  hears it, the recording is not transcribed, and no score is given.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rig.scorer.base import ScoreResult
from rig.scorer.fake import FakeScorer
from rig.stages import Stages

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]
SPEECH = (ROOT.parent / "shared" / "data" / "speech" / "pocketsphinx" / "librivox"
          / "sense_and_sensibility_01_austen_64kb-0870.wav")


def _bank_answer(script: str | None = None):
    from rig.answers import load_bank

    bank = load_bank(ROOT / "answer_bank" / "mini")
    q, a = next((q, a) for q, a in bank.answers() if a.answer_id == "q01_strong")
    if script is not None:
        a = a.model_copy(update={"script": script, "answer_id": "short"})
    return q, a


def test_the_interviewer_closes_a_turn_whose_frames_stop() -> None:
    from rig.audio import float_to_pcm16, read_wav
    from rig.calls.interviewer.session import InterviewerSettings, InterviewSession
    from rig.calls.media import CALL_RATE_HZ, FRAME_BYTES, now_s
    from rig.pipeline import load_pipeline

    pipeline = load_pipeline(ROOT / "pipelines" / "reference.yaml")
    q, _ = _bank_answer()
    audio = read_wav(SPEECH).resample(CALL_RATE_HZ)
    pcm = float_to_pcm16(audio.samples[: int(3.0 * CALL_RATE_HZ)]).tobytes()  # mid-sentence
    session = InterviewSession(call_id="outage", questions=[q], pipeline=pipeline,
                               pipeline_version="v", scorer=FakeScorer(),
                               settings=InterviewerSettings())

    async def scenario():
        waiter = asyncio.ensure_future(session._wait_turn(now_s()))
        for i in range(0, len(pcm), FRAME_BYTES):  # 20 ms frames, at the pace they'd arrive
            await session.feed(pcm[i:i + FRAME_BYTES], CALL_RATE_HZ)
            await asyncio.sleep(0.02)
        last = session._last_frame_s
        turn = await asyncio.wait_for(waiter, 30)  # far below the 120 s maximum turn
        return turn, last

    turn, last = asyncio.run(scenario())
    assert turn.speech_start_s is not None
    assert turn.closed_by == "media_outage"
    assert turn.close_s == pytest.approx(last + pipeline.faults.outage_window_ms / 1000)


def _front(answer_script: str | None, profile_id: str, **pipeline_update):
    from rig.campaign.call import run_call_front
    from rig.pipeline import load_pipeline, pipeline_version
    from rig.profiles import load_profiles

    q, a = _bank_answer(answer_script)
    pipeline = load_pipeline(ROOT / "pipelines" / "reference.yaml")
    if pipeline_update:
        pipeline = pipeline.model_copy(update=pipeline_update)
    folder = "core" if profile_id != "baseline" else "demo"
    profile = load_profiles(ROOT / "profiles" / folder).get(profile_id)
    oracle = ScoreResult(80.0, "ok", "", None, None, 0.0, 0.0, 0)
    return run_call_front(question=q, answer=a, profile=profile, repeat=0, seed=0,
                          pipeline=pipeline, pipeline_version=pipeline_version(pipeline),
                          campaign_id="faults", stages=Stages(scorer=FakeScorer()),
                          oracle=oracle)


def test_a_media_outage_mid_answer_closes_the_simulated_turn() -> None:
    front = _front(None, "media_outage_4s")
    row = front.row
    assert row["status"] == "ok", row["error"]
    assert row["turn_closed_by"] == "media_outage"
    assert row["faults"] == "media_outage" and row["fault_excluded"] is False
    assert row["outage_s"] == 4.0
    assert row["speech_start_s"] < row["outage_start_s"] < row["speech_end_s"]
    assert row["turn_close_s"] == pytest.approx(row["outage_start_s"] + 1.0)
    assert row["words_lost"] > 0 and row["truncated"]
    assert front.transcript  # graded on what arrived before the outage
    assert row["wer_spoken_reference_words"] < row["wer_reference_words"]


def test_an_answer_the_vad_never_heard_is_neither_transcribed_nor_scored() -> None:
    from rig.campaign.call import finish_call
    from rig.pipeline import VadSettings

    front = _front("Yes.", "baseline", vad=VadSettings(start_ms=2000))
    row = front.row
    assert row["status"] == "ok", row["error"]
    assert row["faults"] == "vad_missed" and row["fault_excluded"] is True
    assert row.get("transcript") is None and row.get("wer") is None  # the ASR never ran
    done = finish_call(front, Stages(scorer=FakeScorer()))
    assert done["score"] is None and done["parse_status"] == "not_scored"
    assert done["score_turn_text"] is None
