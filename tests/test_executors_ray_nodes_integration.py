"""The Ray executor on a real two-node Ray cluster on this machine (a head and a node, each
``ray start`` with the real CLI, one CPU each), with fake stages: a node lost mid-campaign
(every process of it SIGKILLed, as a machine that goes away) has its call re-run on the other
node, every planned call is logged exactly once, the rows equal a serial run's, and
``campaign.json`` records the death. No assertion on wall time. Integration: Ray is the real
component here (the extra ``ray``, in the ``test`` extra). Linux (the nodes' processes are
found in /proc)."""

from __future__ import annotations

import json
import threading

import pytest
from executor_fakes import comparable, make_stages
from ray_cluster import LocalCluster, raylet_pids
from test_executors_unit import logged_ids, spec

from rig.campaign.executors import ExecutorSpec
from rig.campaign.runner import run_campaign

pytestmark = pytest.mark.integration
ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install "
                                        "'rig[ray]')")

#: Seconds each fake call sleeps in ASR: long enough for the kill to land mid-call.
CALL_S = 1.0


@pytest.fixture
def two_nodes():
    """A head and a second node (1 CPU each: one rig actor per node); every process of both
    is gone after the test, and no other raylet on this machine was touched."""
    before = raylet_pids()
    mp = pytest.MonkeyPatch()
    cluster = LocalCluster()
    try:
        for k, v in cluster.driver_env().items():
            mp.setenv(k, v)  # the driver: no token auth
        mp.delenv("RAY_ADDRESS", raising=False)
        cluster.start_head()
        cluster.add_node()
        yield cluster
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.close()
        mp.undo()
    assert all(n.pids() == [] for n in cluster.nodes)
    assert raylet_pids() <= before


def test_a_node_lost_mid_campaign_has_its_calls_run_on_the_other(tmp_path, two_nodes):
    head, node = two_nodes.nodes
    serial = run_campaign(spec(tmp_path / "s"), stages=make_stages(), progress=False)
    killed: dict = {}

    def kill_node() -> None:
        killed["actors"] = node.workers()  # the rig actor it held, mid-call
        killed["logged"] = len(logged_ids(tmp_path / "r"))
        node.kill()

    def on_call(row: dict) -> None:
        # after the 3rd call, once the idle actor has its next call: both actors mid-call
        if len(logged_ids(tmp_path / "r")) == 3 and not killed:
            killed["timer"] = threading.Timer(CALL_S / 3, kill_node)
            killed["timer"].start()

    ex = ExecutorSpec("ray", workers=2, ray_address=two_nodes.address)
    res = run_campaign(spec(tmp_path / "r"), stages=make_stages(sleep_s=CALL_S),
                       progress=False, executor=ex, on_call=on_call)
    killed["timer"].join()
    assert killed["actors"], "no rig actor ran on the second node"
    assert 3 <= killed["logged"] < 16, killed  # lost mid-campaign
    assert node.pids() == [] and head.pids()
    ids = logged_ids(tmp_path / "r")
    assert len(ids) == len(set(ids)) == 16
    assert all(r["status"] == "ok" for r in res.rows)
    assert comparable(res.rows) == comparable(serial.rows)
    runtime = json.loads((tmp_path / "r" / "campaign.json").read_text())["runtime"]
    assert runtime["executor"] == "ray" and runtime["ray_address"] == two_nodes.address
    assert runtime["worker_deaths"] == 1, runtime  # its replacement waits: no CPU left
    assert all(c.startswith("actor lost") for c in runtime["death_causes"]), runtime
    assert runtime["calls_failed_by_worker_deaths"] == 0
