"""Kill tests of monitor ingest (issue 19, items 1 and 5): an ingest SIGKILLed at seeded random
moments leaves a database that opens, whose every row is whole and equal to an uninterrupted
ingest's (timings aside), and a rerun completes it; a second process on the same DuckDB file
gets one line (exit 2) naming the file and the process that holds it, and the first one's
file is not harmed. Fake VAD and ASR (the logic under test is the store), the real DuckDB.
No assertion on wall time."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest
from kill_drivers import ingest_driver, monitor_fakes, monitor_rows, write_monitor_calls
from kill_util import finish, kill_group, n_lines, start, wait_until

from rig.monitor.config import MonitorConfig
from rig.monitor.ingest import ingest_folder
from rig.monitor.store import MonitorStore

pytest.importorskip("duckdb")
pytestmark = pytest.mark.integration
N_CALLS = 40


@pytest.fixture(scope="module")
def calls(tmp_path_factory):
    root = tmp_path_factory.mktemp("monitor")
    folder = write_monitor_calls(root / "in", N_CALLS)
    with MonitorStore(root / "ref.duckdb") as store:
        res = ingest_folder(folder, store, MonitorConfig(), stages=monitor_fakes())
    assert res.n_ingested == N_CALLS and not res.bad
    return {"folder": folder, "ref": monitor_rows(root / "ref.duckdb")}


def test_an_ingest_killed_mid_way_leaves_whole_rows_and_a_rerun_completes_it(calls, tmp_path):
    db, progress = tmp_path / "m.duckdb", tmp_path / "progress.txt"
    code = ingest_driver(calls["folder"], db, progress)
    rng = random.Random(19)
    for target in sorted(rng.sample(range(1, N_CALLS - 2), 4)):
        proc = start(code)
        try:
            wait_until(lambda t=target: n_lines(progress) >= t, proc, what=f"{target} calls")
            time.sleep(rng.uniform(0.0, 0.06))
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            kill_group(proc)
        done = n_lines(progress)
        rows = monitor_rows(db)  # opens: DuckDB replays its WAL, nothing half-written
        ingested = sum(1 for x in progress.read_text().splitlines() if x.startswith("ingested"))
        assert ingested <= len(rows) <= ingested + 1, (ingested, len(rows), done)
        assert all(calls["ref"][cid] == row for cid, row in rows.items())  # each row whole
    proc = start(code)
    assert finish(proc) == 0
    assert monitor_rows(db) == calls["ref"]


def test_two_ingests_on_one_duckdb_file_the_second_is_refused_in_one_line(calls, tmp_path):
    db, progress = tmp_path / "m.duckdb", tmp_path / "progress.txt"
    release = tmp_path / "release"
    first = start(ingest_driver(calls["folder"], db, progress, sleep_s=0.1,
                                hold_until=release))
    try:
        assert wait_until(lambda: n_lines(progress) >= 2, first, what="the first ingest")
        second = subprocess.run([sys.executable, "-m", "rig.cli", "monitor", "ingest",
                                 str(calls["folder"]), "--db", str(db)],
                                capture_output=True, text=True, timeout=120,
                                env={**os.environ, "COLUMNS": "300"})
        assert first.poll() is None, "the first ingest let go of the file before the second ran"
        release.touch()
        assert finish(first) == 0
    finally:
        kill_group(first)
    assert second.returncode == 2, second.stderr
    err = second.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert str(db) in err and "another process holds this monitoring database" in err, err
    assert f"PID {first.pid}" in err, err
    assert monitor_rows(db) == calls["ref"]  # the first one's file: whole and complete
