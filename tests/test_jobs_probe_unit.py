"""The probes' asks on the job layer (rig.probes.parallel): 2 local workers give the rows of
one worker (fake scorer), the run resumes from asks.jsonl, and a worker SIGKILLed mid-ask
loses no ask and logs none twice."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pandas as pd
import pytest
from job_fakes import probe_fake

from rig.campaign.executors import ExecutorSpec
from rig.probes import ProbeSpec, run_probe
from rig.probes.parallel import run_probe as on_workers

pytestmark = pytest.mark.unit
TIMING = ["seconds"]


def _spec(out: Path) -> ProbeSpec:
    return ProbeSpec("hedging", out, n_sessions=3, questions_per_session=4, seed=3)


def _frames(res) -> tuple[pd.DataFrame, pd.DataFrame]:
    return (pd.read_parquet(res.out_dir / "scores.parquet").drop(columns=TIMING),
            pd.read_parquet(res.out_dir / "decisions.parquet").drop(columns=TIMING))


def _logged(out: Path) -> list[str]:
    return [json.loads(x)["call_id"] for x in (out / "asks.jsonl").read_text().splitlines()]


def test_two_local_workers_give_the_rows_of_one(tmp_path):
    serial = run_probe(_spec(tmp_path / "s"), probe_fake())
    local = on_workers(run_probe, _spec(tmp_path / "l"), probe_fake(),
                       executor=ExecutorSpec("local", 2),
                       make_scorer=functools.partial(probe_fake))
    for a, b in zip(_frames(local), _frames(serial), strict=True):
        pd.testing.assert_frame_equal(a, b)
    assert local.n_backend_calls == serial.n_backend_calls > 0
    assert sorted(_logged(tmp_path / "l")) == sorted(_logged(tmp_path / "s"))
    assert (tmp_path / "l" / "summary.json").read_text() == (
        tmp_path / "s" / "summary.json").read_text().replace(
        str(tmp_path / "s"), str(tmp_path / "l"))
    again = on_workers(run_probe, _spec(tmp_path / "l"), probe_fake(),
                       executor=ExecutorSpec("local", 2),
                       make_scorer=functools.partial(probe_fake))
    assert again.n_backend_calls == 0  # resumed from asks.jsonl


def test_a_sigkilled_probe_worker_loses_no_ask_and_logs_none_twice(tmp_path):
    serial = run_probe(_spec(tmp_path / "s"), probe_fake())
    kill = tmp_path / "kill"
    kill.mkdir()
    (kill / "ask").write_text("1")
    res = on_workers(run_probe, _spec(tmp_path / "k"), probe_fake(),
                     executor=ExecutorSpec("local", 2),
                     make_scorer=functools.partial(probe_fake, str(kill)))
    assert (kill / "ask").read_text() == "0"  # a worker did die
    ids = _logged(tmp_path / "k")
    assert len(ids) == len(set(ids)) == serial.n_backend_calls
    for a, b in zip(_frames(res), _frames(serial), strict=True):
        pd.testing.assert_frame_equal(a, b)
