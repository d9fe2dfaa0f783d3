"""What the kill tests rely on, without killing: an atomic write leaves the old file or the
new one; DuckDB's lock error is read for the holder's PID; a torn row in a call log is set
aside by the next append; the helpers find a driver's workers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from kill_util import (
    children,
    is_spawn_bootstrap_eof,
    tear_last_line,
    tracebacks,
    wait_until,
)

from rig.campaign.store import CallLog, write_text_atomic
from rig.monitor.store import _lock_holder

pytestmark = pytest.mark.unit


def test_an_atomic_write_interrupted_before_the_rename_keeps_the_old_file(tmp_path,
                                                                          monkeypatch):
    path = tmp_path / "summary.json"
    write_text_atomic(path, json.dumps({"v": 1}))
    assert json.loads(path.read_text()) == {"v": 1}

    def crash(*_a):
        raise OSError("killed")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="killed"):
        write_text_atomic(path, json.dumps({"v": 2}))
    assert json.loads(path.read_text()) == {"v": 1}  # never half of the new one


def test_remove_partials_takes_only_a_killed_writers_temporary_files(tmp_path):
    from rig.paths import remove_partials

    left = [tmp_path / ".summary.json.k1x2.partial", tmp_path / "calls.parquet.partial"]
    kept = [tmp_path / "summary.json", tmp_path / "notes.txt", tmp_path / "sub" / "x.partial"]
    (tmp_path / "sub").mkdir()
    for p in left + kept:
        p.write_text("half")
    assert remove_partials(tmp_path, ["report.html"]) == []  # not that output's
    assert remove_partials(tmp_path) == sorted(left)
    assert all(p.exists() for p in kept) and not any(p.exists() for p in left)
    assert remove_partials(tmp_path / "missing") == []


def test_a_resumed_campaign_and_sweep_remove_a_killed_runs_temporary_files(tmp_path):
    """A SIGKILL during an atomic write leaves its temporary file beside the output (the probes'
    kill test saw ``.report.html.<random>.partial``); the campaign's and the sweep's rerun
    remove those in their folders (and the campaign's audio folder), keeping everything else."""
    from executor_fakes import make_stages
    from kill_util import campaign_spec

    from rig.campaign.runner import run_campaign
    from rig.sweep import parse_vary, run_sweep

    spec = campaign_spec(tmp_path / "c", profile_ids=("long_pauses",),
                         question_ids=("q01_conflict",))
    run_campaign(spec, stages=make_stages(), progress=False)
    out = spec.out_dir
    (out / "audio").mkdir(exist_ok=True)
    left = [out / ".report.html.k1x2.partial", out / "calls.parquet.partial",
            out / "audio" / ".x.caller.flac.ab.partial"]
    for p in left:
        p.write_text("half")
    again = run_campaign(spec, stages=make_stages(), progress=False)
    assert again.n_run == 0 and not any(p.exists() for p in left)
    sweep = tmp_path / "s"
    run_sweep(out, [parse_vary("endpointing.silence_timeout_ms=2000")], sweep, n_boot=50,
              stages_for=lambda p: make_stages())
    left = [sweep / ".sweep.json.q.partial",
            next(sweep.glob("variants/*")) / ".calls.parquet.z.partial"]
    for p in left:
        p.write_text("half")
    run_sweep(out, [parse_vary("endpointing.silence_timeout_ms=2000")], sweep, n_boot=50,
              stages_for=lambda p: make_stages())
    assert not any(p.exists() for p in left)
    json.loads((sweep / "sweep.json").read_text())


def test_the_lock_holder_is_read_from_duckdbs_message():
    msg = ('IO Error: Could not set lock on file "/x/m.duckdb": Conflicting lock is held in '
           '/usr/bin/python3.11 (PID 4242). See also https://duckdb.org/docs/concurrency')
    assert _lock_holder(msg) == "PID 4242, python3.11"
    assert _lock_holder('Could not set lock on file "a": Conflicting lock') == "another process"
    assert _lock_holder("IO Error: file is not a valid DuckDB database") is None


def test_a_torn_row_is_moved_aside_by_the_next_append(tmp_path):
    log = CallLog(tmp_path / "calls.jsonl")
    log.append({"call_id": "a", "status": "ok"})
    log.append({"call_id": "b", "status": "ok"})
    assert tear_last_line(log.path)
    again = CallLog(log.path)
    assert again.torn_lines == 1 and [r["call_id"] for r in again.rows()] == ["a", "b"]
    again.append({"call_id": "c", "status": "ok"})
    lines = log.path.read_text().splitlines()
    assert [json.loads(x)["call_id"] for x in lines] == ["a", "b", "c"]
    assert (tmp_path / "calls.jsonl.torn").read_text().startswith('{"call_id":"b"')


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_children_lists_a_process_children(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "import subprocess, sys; "
                             "subprocess.run([sys.executable, '-c', 'import time; "
                             "time.sleep(30)'])"])
    try:
        wait_until(lambda: children(proc.pid), proc, timeout_s=30, what="a child")
        kids = children(proc.pid)
        assert len(kids) == 1 and "time.sleep(30)" in kids[0][1]
    finally:
        for pid, _ in children(proc.pid):
            os.kill(pid, signal.SIGKILL)
        proc.kill()
        proc.wait(timeout=30)


def test_the_spawn_bootstraps_eof_is_told_from_rigs_tracebacks():
    # a spawned interpreter whose parent never writes it its setup (the driver SIGKILLed
    # between the worker's exec and the write): CPython prints this, not rig
    r, w = os.pipe()
    os.close(w)
    try:
        p = subprocess.run([sys.executable, "-c", "from multiprocessing.spawn import "
                            f"spawn_main; spawn_main(pipe_handle={r})", "--multiprocessing-fork"],
                           pass_fds=(r,), capture_output=True, text=True, timeout=60)
    finally:
        os.close(r)
    log = "12 calls run\n" + p.stderr + "36 calls run, 164 already done\n"
    (tb,) = tracebacks(log)
    assert is_spawn_bootstrap_eof(tb), tb
    rigs = ('Traceback (most recent call last):\n  File "/x/rig/campaign/executors/local.py",'
            ' line 86, in worker_main\n    conn.send(x)\nEOFError: Ran out of input\nnext')
    assert tracebacks(rigs) == [rigs.rsplit("\n", 1)[0]]
    assert not is_spawn_bootstrap_eof(tracebacks(rigs)[0])
