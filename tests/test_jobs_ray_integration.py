"""rig.jobs on a real local Ray (2 CPUs): a sweep, a probe run and a validate run on 2 Ray
actors give the results of one worker (fake stages and scorers), and an actor SIGKILLed
mid-item has its item run again elsewhere, once. Integration: Ray is the real component."""

from __future__ import annotations

import functools
import json

import pandas as pd
import pytest
from job_fakes import SweepStages, fake_scorer, probe_fake, square_worker
from test_executors_unit import TESTS
from test_jobs_probe_unit import _frames, _spec
from test_jobs_sweep_unit import VARIES, _rows, _table
from test_jobs_sweep_unit import campaign as campaign

from rig.answers import load_bank
from rig.campaign.executors import ExecutorSpec
from rig.jobs import Item, JobSetup, run_items
from rig.paths import DEFAULTS
from rig.probes import run_probe
from rig.probes.parallel import run_probe as on_workers
from rig.scorer.validate import validate_bank
from rig.sweep import run_sweep

pytestmark = pytest.mark.integration
ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install "
                                        "'rig[ray]')")
RAY = ExecutorSpec("ray", 2)


@pytest.fixture(scope="module")
def local_ray():
    mp = pytest.MonkeyPatch()
    mp.setenv("PYTHONPATH", str(TESTS))
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
    mp.undo()


def test_ray_items_survive_a_killed_actor(tmp_path, local_ray):
    items = [Item(f"i{x}", x) for x in range(8)]
    (tmp_path / "3").write_text("1")
    got: dict = {}

    def keep(k, v):
        assert k not in got
        got[k] = v["y"]

    stats = run_items(items, JobSetup(square_worker, (str(tmp_path),)), RAY, keep)
    assert (tmp_path / "3").read_text() == "0" and stats.n_worker_deaths == 1
    assert got == {f"i{x}": x * x for x in range(8)}


def test_validate_sweep_and_probe_on_ray_give_the_serial_results(tmp_path, local_ray,
                                                                  campaign):
    bank = load_bank(DEFAULTS.answer_bank / "mini")
    serial = validate_bank(bank, fake_scorer, ["argmax"])
    on_ray = validate_bank(bank, fake_scorer, ["argmax"], executor=RAY)
    drop = lambda rows: [{k: v for k, v in r.items() if k != "seconds"} for r in rows]  # noqa
    assert drop(on_ray.rows) == drop(serial.rows)

    s = run_sweep(campaign, VARIES, tmp_path / "s", stages_for=SweepStages(), n_boot=200)
    r = run_sweep(campaign, VARIES, tmp_path / "r", stages_for=SweepStages(), n_boot=200,
                  executor=RAY)
    assert _table(r) == _table(s) and r.n_run == s.n_run
    assert pd.DataFrame(_rows(tmp_path / "r")).equals(pd.DataFrame(_rows(tmp_path / "s")))

    ps = run_probe(_spec(tmp_path / "ps"), probe_fake())
    pr = on_workers(run_probe, _spec(tmp_path / "pr"), probe_fake(), executor=RAY,
                    make_scorer=functools.partial(probe_fake))
    for a, b in zip(_frames(pr), _frames(ps), strict=True):
        pd.testing.assert_frame_equal(a, b)
    assert json.loads((tmp_path / "pr" / "summary.json").read_text())["probe"] == "hedging"
