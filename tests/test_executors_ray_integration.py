"""The Ray executor on a real Ray (a local instance), with fake stages: the same rows as the
serial run, and an actor killed mid-call (SIGKILL) leaves every planned call logged exactly
once. No assertion on wall time. Integration: Ray is the real component here (the extra
``ray``, in the ``test`` extra)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from executor_fakes import comparable, make_counting_stages, make_stages
from test_executors_unit import TESTS, logged_ids, spec

from rig.campaign.executors import ExecutorSpec
from rig.campaign.runner import run_campaign

pytestmark = pytest.mark.integration
ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install "
                                        "'rig[ray]')")


@pytest.fixture
def local_ray():
    """A local Ray instance whose workers import the fakes (tests/ on their PYTHONPATH)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("PYTHONPATH", str(TESTS))
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
    mp.undo()


def test_ray_actors_give_the_serial_rows_and_survive_a_killed_actor(tmp_path, local_ray):
    serial = run_campaign(spec(tmp_path / "s"), stages=make_stages(), progress=False)
    res = run_campaign(spec(tmp_path / "r"), stages=make_counting_stages(), progress=False,
                       executor=ExecutorSpec("ray", workers=2))
    assert comparable(res.rows) == comparable(serial.rows)
    meta = json.loads((tmp_path / "r" / "campaign.json").read_text())
    assert meta["runtime"]["executor"] == "ray"
    # each actor's judge counts and devices came back with its results
    pc = meta["runtime"]["judge_prefix_cache"]
    assert pc == res.runtime["judge_prefix_cache"]
    assert pc["misses"] >= 2 and pc["hits"] > 0, pc
    assert meta["runtime"]["devices_used"] == {"asr": [], "scorer": []}  # fakes: no device
    kill = tmp_path / "kill"
    kill.mkdir()
    (kill / "q01_strong").write_text("1")  # the actor that runs its ASR first dies
    res = run_campaign(spec(tmp_path / "k"), stages=make_stages(kill), progress=False,
                       executor=ExecutorSpec("ray", workers=2))
    assert (kill / "q01_strong").read_text() == "0"
    ids = logged_ids(tmp_path / "k")
    assert len(ids) == len(set(ids)) == 16
    df = pd.read_parquet(tmp_path / "k" / "calls.parquet")
    assert len(df) == 16 and (df["status"] == "ok").all()
    assert comparable(res.rows) == comparable(serial.rows)
    assert res.runtime["worker_deaths"] == 1


def test_ray_without_workers_records_how_many_it_started(tmp_path, local_ray):
    res = run_campaign(spec(tmp_path / "r"), stages=make_stages(), progress=False,
                       executor=ExecutorSpec("ray"))
    meta = json.loads((tmp_path / "r" / "campaign.json").read_text())
    assert meta["runtime"]["workers"] == res.runtime["workers"] >= 1
