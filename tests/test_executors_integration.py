"""The local executor with the real stages (hibari TTS, Silero VAD, faster-whisper, llama.cpp):
2 answers x 2 profiles on two worker processes, each overlapping ASR and scoring, give the rows
of the serial run, timing columns aside; the workers report the judge's prefix-cache counts."""

from __future__ import annotations

import pytest
from executor_fakes import comparable
from kill_drivers import real_spec

from rig.campaign.executors import ExecutorSpec
from rig.campaign.runner import run_campaign

pytestmark = pytest.mark.integration


def test_two_local_workers_give_the_serial_rows_with_the_real_stages(tmp_path,
                                                                    real_serial_reference):
    # conftest's serial run of kill_drivers.real_spec, on reference.yaml with a grading budget
    # no load can miss (a grading over budget is a timeout, which depends on the machine's
    # load, not on the executor)
    pipeline, serial = real_serial_reference
    # overlapping: each worker's next call runs render .. ASR while the judge grades this one
    local = run_campaign(real_spec(tmp_path / "local", pipeline), progress=False,
                         executor=ExecutorSpec("local", workers=2, overlap=True))
    assert len(serial.rows) == 4
    assert all(r["status"] == "ok" for r in serial.rows), [r["error"] for r in serial.rows]
    assert comparable(local.rows) == comparable(serial.rows)
    # the real judge's prefix-cache counts came back from the workers (and the device used);
    # a rubric another process left on disk is a hit (rig.scorer.kv_store)
    for res in (serial, local):
        pc = res.runtime["judge_prefix_cache"]
        assert pc["hits"] + pc["misses"] >= 2, pc
        assert res.runtime["devices_used"]["scorer"] == ["cpu"]
