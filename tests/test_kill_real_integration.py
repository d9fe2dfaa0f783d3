"""Kill test on the real stages (issue 19, item 1): a 4-call campaign (hibari TTS, Silero VAD,
faster-whisper, llama.cpp) whose driver is SIGKILLed twice, mid-run, and resumed: every
planned call in calls.parquet once, rows equal to an uninterrupted run's (timing columns
aside), and the resumed run says how many calls it ran and how many were already done.
Serial executor (the driver runs the calls: its death is the calls' death). No assertion on
wall time."""

from __future__ import annotations

import json
import random
import signal
import time

import pandas as pd
import pytest
from kill_drivers import real_driver
from kill_util import finish, kill_group, log_ids, n_lines, start, wait_until

from rig.campaign.row import RUNTIME_COLUMNS

pytestmark = pytest.mark.integration


def test_the_real_stages_killed_twice_and_resumed_log_each_call_once(tmp_path,
                                                                   real_serial_reference):
    pipeline, ref = real_serial_reference
    assert all(r["status"] == "ok" for r in ref.rows), [r["error"] for r in ref.rows]
    out, log = tmp_path / "c", tmp_path / "driver.log"
    rng = random.Random(19)
    kills = 0

    def logged() -> int:
        return n_lines(out / "oracle.jsonl") + n_lines(out / "calls.jsonl")

    # lines logged: 2 oracle gradings, then 4 calls; kill after the 1st grading and the 1st
    # call of the second run, each plus a random delay (mid-grading or mid-call)
    for target in (1, 3):
        proc = start(real_driver(out, pipeline), log=log)
        try:
            if wait_until(lambda t=target: logged() >= t, proc, timeout_s=600,
                          what=f"{target} lines"):
                time.sleep(rng.uniform(0.5, 3.0))
                if proc.poll() is None:
                    proc.send_signal(signal.SIGKILL)
                    kills += 1
            proc.wait(timeout=60)
        finally:
            kill_group(proc)
    assert kills == 2
    done_before = n_lines(out / "calls.jsonl")
    final_log = tmp_path / "final.log"
    proc = start(real_driver(out, pipeline), log=final_log)
    assert finish(proc, timeout_s=900) == 0, final_log.read_text()[-3000:]
    # the resume says what it did, as `rig campaign run` prints it
    n_run = 4 - done_before
    assert f"{n_run} call{'' if n_run == 1 else 's'} run, {done_before} already done" in " ".join(
        final_log.read_text().split())
    ids = log_ids(out / "calls.jsonl")
    assert len(ids) == len(set(ids)) == 4
    keep = [c for c in pd.read_parquet(out / "calls.parquet").columns
            if c not in RUNTIME_COLUMNS]
    got = pd.read_parquet(out / "calls.parquet")[keep].sort_values("call_id")
    want = pd.read_parquet(ref.out_dir / "calls.parquet")[keep].sort_values("call_id")
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True))
    json.loads((out / "summary.json").read_text())
