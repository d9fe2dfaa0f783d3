"""The Ray executor on a real two-node Ray cluster on this machine (a head and a node, each
``ray start`` with the real CLI, one CPU each), with fake stages: a node lost mid-campaign
(every process of it SIGKILLed, as a machine that goes away) has its call re-run on the other
node, every planned call is logged exactly once, the rows equal a serial run's, and
``campaign.json`` records the death. The campaign's driver runs in a process of its own
(tests/ray_nodes_driver.py): Ray reads its auth settings once per process, and the pytest
worker also runs tests that start a local Ray. No assertion on wall time. Integration: Ray
is the real component here (the extra ``ray``, in the ``test`` extra). Linux (the nodes'
processes are found in /proc)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from executor_fakes import comparable, make_stages
from ray_cluster import LocalCluster, raylet_pids
from test_executors_unit import logged_ids, spec

from rig.campaign.runner import run_campaign

pytestmark = pytest.mark.integration
ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install "
                                        "'rig[ray]')")

#: Seconds each fake call sleeps in ASR: long enough for the kill to land mid-call.
CALL_S = 1.0
TESTS = Path(__file__).resolve().parent


@pytest.fixture
def two_nodes():
    """A head and a second node (1 CPU each: one rig actor per node); every process of both
    is gone after the test, and no other raylet on this machine was touched. The driver runs
    in its own process (tests/ray_nodes_driver.py: Ray's auth settings are per process)."""
    before = raylet_pids()
    cluster = LocalCluster()
    try:
        cluster.start_head()
        cluster.add_node()
        yield cluster
    finally:
        cluster.close()
    assert all(n.pids() == [] for n in cluster.nodes)
    assert raylet_pids() <= before


def _rows(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "calls.jsonl").read_text().splitlines() if x.strip()]


def test_a_node_lost_mid_campaign_has_its_calls_run_on_the_other(tmp_path, two_nodes):
    head, node = two_nodes.nodes
    run_campaign(spec(tmp_path / "s"), stages=make_stages(), progress=False)
    out = tmp_path / "r"
    proc = subprocess.Popen(
        [sys.executable, str(TESTS / "ray_nodes_driver.py"), str(out), two_nodes.address,
         str(CALL_S)], env=two_nodes.env, cwd=TESTS.parent, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 600
        # after the 3rd call, once the idle actor has its next call: both actors mid-call
        while not ((out / "calls.jsonl").is_file() and len(logged_ids(out)) >= 3):
            assert proc.poll() is None, proc.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "no 3 calls logged in 10 min"
            time.sleep(0.05)
        time.sleep(CALL_S / 3)
        killed = {"actors": node.workers(), "logged": len(logged_ids(out))}
        node.kill()
        output = proc.communicate(timeout=600)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, output[-3000:]
    assert killed["actors"], "no rig actor ran on the second node"
    assert 3 <= killed["logged"] < 16, killed  # lost mid-campaign
    assert node.pids() == [] and head.pids()
    ids = logged_ids(out)
    assert len(ids) == len(set(ids)) == 16
    rows = _rows(out)
    assert all(r["status"] == "ok" for r in rows)
    assert comparable(rows) == comparable(_rows(tmp_path / "s"))
    runtime = json.loads((out / "campaign.json").read_text())["runtime"]
    assert runtime["executor"] == "ray" and runtime["ray_address"] == two_nodes.address
    assert runtime["worker_deaths"] == 1, runtime  # its replacement waits: no CPU left
    assert all(c.startswith("actor lost") for c in runtime["death_causes"]), runtime
    assert runtime["calls_failed_by_worker_deaths"] == 0
