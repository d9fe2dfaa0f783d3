"""The local executor with the real stages (hibari TTS, Silero VAD, faster-whisper, llama.cpp):
2 answers x 2 profiles on two worker processes, each overlapping ASR and scoring, give the rows
of the serial run, timing columns aside; the workers report the judge's prefix-cache counts."""

from __future__ import annotations

from pathlib import Path

import pytest
from executor_fakes import comparable

from rig.campaign.executors import ExecutorSpec
from rig.campaign.runner import CampaignSpec, run_campaign

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]


def spec(out: Path, pipeline: Path) -> CampaignSpec:
    return CampaignSpec(answers_path=ROOT / "answer_bank" / "mini",
                        profiles_path=ROOT / "profiles" / "demo",
                        pipeline_path=pipeline, out_dir=out,
                        repeats=1, answer_ids=("q01_strong", "q03_strong"),
                        profile_ids=("long_pauses",), n_boot=200, campaign_id="x")


def test_two_local_workers_give_the_serial_rows_with_the_real_stages(tmp_path):
    # the reference pipeline without its grading budget: a grading over budget is recorded
    # as a timeout, which depends on the machine's load, not on the executor
    text = (ROOT / "pipelines" / "reference.yaml").read_text()
    assert "  budget_s: 120\n" in text
    pipeline = tmp_path / "reference.yaml"
    pipeline.write_text(text.replace("  budget_s: 120\n", ""))
    serial = run_campaign(spec(tmp_path / "serial", pipeline), progress=False,
                          executor=ExecutorSpec("serial"))
    # overlapping: each worker's next call runs render .. ASR while the judge grades this one
    local = run_campaign(spec(tmp_path / "local", pipeline), progress=False,
                         executor=ExecutorSpec("local", workers=2, overlap=True))
    assert len(serial.rows) == 4
    assert all(r["status"] == "ok" for r in serial.rows), [r["error"] for r in serial.rows]
    assert comparable(local.rows) == comparable(serial.rows)
    # the real judge's prefix-cache counts came back from the workers (and the device used)
    for res in (serial, local):
        pc = res.runtime["judge_prefix_cache"]
        assert pc["misses"] >= 1 and pc["hits"] + pc["misses"] >= 2, pc
        assert res.runtime["devices_used"]["scorer"] == ["cpu"]
