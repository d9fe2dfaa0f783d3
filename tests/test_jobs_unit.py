"""rig.jobs: items mapped over serial and local workers give the same results, each worker
builds once, a SIGKILLed worker loses nothing and runs nothing twice, and `rig scorer
validate` on 2 local workers gives the serial rows (fake scorer)."""

from __future__ import annotations

import job_fakes
import pytest
from job_fakes import failing_worker, fake_scorer, square_worker

from rig.answers import load_bank
from rig.campaign.executors import ExecutorSpec
from rig.errors import ConfigError, RigError
from rig.jobs import Item, JobSetup, executor_spec, run_items
from rig.paths import DEFAULTS
from rig.scorer.validate import validate_bank

pytestmark = pytest.mark.unit

ITEMS = [Item(f"i{x:02d}", x, group=str(x % 3)) for x in range(12)]


def _run(spec, setup):
    got: dict = {}
    order: list[str] = []

    def keep(item_id, res):
        assert item_id not in got, f"{item_id} twice"
        got[item_id] = res
        order.append(item_id)

    stats = run_items(ITEMS, setup, spec, keep)
    return got, order, stats


def _ys(got):
    return {k: v["y"] for k, v in got.items()}


def test_serial_and_local_workers_give_the_same_results_and_build_once_per_worker():
    job_fakes.BUILT.clear()
    serial, _, st = _run(None, JobSetup(square_worker))
    assert len(job_fakes.BUILT) == 1 and st.n_results == 12
    local, _, st = _run(ExecutorSpec("local", 2), JobSetup(square_worker))
    assert _ys(local) == _ys(serial) == {it.item_id: it.payload ** 2 for it in ITEMS}
    pids = {v["pid"] for v in local.values()}
    assert len(pids) <= 2 and st.n_workers_started == 2  # a build per worker, not per item


def test_a_sigkilled_worker_loses_nothing_and_runs_nothing_twice(tmp_path):
    (tmp_path / "5").write_text("1")
    got, order, st = _run(ExecutorSpec("local", 2), JobSetup(square_worker, (str(tmp_path),)))
    assert (tmp_path / "5").read_text() == "0"  # it did die
    assert st.n_worker_deaths == 1
    assert sorted(order) == sorted(it.item_id for it in ITEMS)  # each once
    assert _ys(got) == {it.item_id: it.payload ** 2 for it in ITEMS}


def test_an_item_that_kills_every_worker_is_given_up_and_the_rest_run(tmp_path):
    (tmp_path / "4").write_text("9")
    failures = []
    got: dict = {}
    run_items(ITEMS, JobSetup(square_worker, (str(tmp_path),)), ExecutorSpec("local", 2),
              got.__setitem__, failures.append)
    assert [f.task.item_id for f in failures] == ["i04"]
    assert sorted(got) == sorted(it.item_id for it in ITEMS if it.item_id != "i04")
    with pytest.raises(RigError, match="i04"):
        (tmp_path / "4").write_text("9")
        run_items(ITEMS, JobSetup(square_worker, (str(tmp_path),)), ExecutorSpec("local", 2),
                  lambda *_: None)


@pytest.mark.parametrize("spec", [None, ExecutorSpec("local", 2)])
def test_an_error_in_an_item_is_raised_in_the_driver(spec):
    with pytest.raises(ValueError, match="bad item"):
        run_items(ITEMS[:2], JobSetup(failing_worker), spec, lambda *_: None)


def test_bad_options_and_duplicate_ids_are_refused():
    with pytest.raises(ConfigError, match="--executor"):
        executor_spec("threads", 1)
    with pytest.raises(ConfigError, match="--workers"):
        executor_spec("local", 0)
    with pytest.raises(RigError, match="unique"):
        run_items([ITEMS[0], ITEMS[0]], JobSetup(square_worker), None, lambda *_: None)


def test_validate_on_two_local_workers_gives_the_serial_rows():
    bank = load_bank(DEFAULTS.answer_bank / "mini")
    serial = validate_bank(bank, fake_scorer, ["argmax"], repeats=2)
    seen = []
    local = validate_bank(bank, fake_scorer, ["argmax"], repeats=2, on_grading=seen.append,
                          executor=ExecutorSpec("local", 2))

    def drop_time(rows):
        return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]

    assert drop_time(local.rows) == drop_time(serial.rows)
    assert len(seen) == len(serial.rows) == 2 * len(bank.answers())


@pytest.mark.parametrize("cmd", [
    ["scorer", "validate"],
    ["sweep", "reports/none", "--vary", "endpointing.silence_timeout_ms=500", "--out", "x"],
    ["probe", "hedging"],
    ["probe", "name-swap"],
    ["probe", "dual-framing"],
    ["probe", "invariance"],
])
def test_the_job_commands_take_the_executor_options_and_refuse_bad_ones(cmd, tmp_path):
    from typer.testing import CliRunner

    from rig.cli import app

    res = CliRunner().invoke(app, [*cmd, "--executor", "threads"])
    assert res.exit_code == 2 and "--executor" in res.output, res.output
    res = CliRunner().invoke(app, [*cmd, "--executor", "local", "--ray-address", "auto"])
    assert res.exit_code == 2 and "--ray-address" in res.output, res.output
