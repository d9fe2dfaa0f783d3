"""One call through every real stage (hibari TTS, 8 kHz mu-law line, pipecat Silero VAD,
faster-whisper, llama.cpp), in two halves in two processes: the front (render to ASR) in a
spawned worker process, its FrontResult pickled back, the scoring here. The row equals
``run_call``'s in one process, runtime columns aside, and every value has its column's type."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from rig.campaign.call import finish_call, run_call, run_call_front
from rig.campaign.front import FrontResult
from rig.campaign.row import COLUMNS, ROW_TYPES, comparable
from rig.stages import Stages

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]


def _inputs() -> dict:
    from rig.answers import load_bank
    from rig.pipeline import load_pipeline, pipeline_version
    from rig.profiles import load_profiles

    bank = load_bank(ROOT / "answer_bank" / "mini")
    question, answer = next((q, a) for q, a in bank.answers() if a.answer_id == "q01_strong")
    profiles = load_profiles(ROOT / "profiles" / "demo")
    pipeline = load_pipeline(ROOT / "pipelines" / "reference.yaml")
    return dict(question=question, answer=answer, profile=profiles.get("long_pauses"),
                repeat=0, seed=0, pipeline=pipeline, pipeline_version=pipeline_version(pipeline),
                campaign_id="rows")


def _front_in_worker(oracle) -> FrontResult:
    """Runs in the spawned process: the real front stages (the scorer is never called)."""
    from rig.scorer.fake import FakeScorer

    return run_call_front(stages=Stages(scorer=FakeScorer(), asr_device="cpu"), oracle=oracle,
                          **_inputs())


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> tuple[dict, dict]:
    from rig.scorer.factory import build_scorer

    inputs = _inputs()
    stages = Stages(scorer=build_scorer(inputs["pipeline"].scorer), asr_device="cpu",
                    scorer_device="cpu")
    oracle = stages.scorer.score(inputs["question"], inputs["answer"].clean_text, 0)
    whole = run_call(stages=stages, oracle=oracle, **inputs)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        front = pool.submit(_front_in_worker, oracle).result(timeout=600)
    return whole, finish_call(front, stages)


def test_two_processes_give_the_one_process_row(rows) -> None:
    whole, split = rows
    assert whole["status"] == "ok", whole["error"]
    assert whole["parse_status"] == "ok" and whole["truncated"]
    assert comparable(split) == comparable(whole)
    assert split["t_asr_s"] is not None and split["t_scorer_s"] is not None


def test_every_value_has_its_columns_type(rows) -> None:
    py = {"string": str, "float64": float, "int64": int, "bool": bool}
    for row in rows:
        assert list(row) == list(COLUMNS)
        bad = {k: v for k, v in row.items()
               if v is not None and type(v) is not py[ROW_TYPES[k]]}
        assert not bad
    whole = rows[0]
    assert whole["voice_engine"] == "hibari" and whole["voice_version"]
    assert whole["pace_rate_used"] is not None and whole["pace_wpm_measured"] > 0
    assert whole["asr_device"] == whole["scorer_device"] == "cpu"
