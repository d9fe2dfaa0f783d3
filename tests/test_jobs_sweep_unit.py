"""`rig sweep` on the job layer (rig.jobs): 2 local workers give the serial sweep's rows and
verdicts (fake stages), and a worker SIGKILLed mid-call loses no call and logs none twice."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest
from job_fakes import SweepStages

from rig.campaign.executors import ExecutorSpec
from rig.campaign.row import comparable
from rig.campaign.runner import CampaignSpec, run_campaign
from rig.sweep import parse_vary, run_sweep

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
from executor_fakes import make_stages  # noqa: E402

VARIES = [parse_vary("endpointing.silence_timeout_ms=500,2000"),
          parse_vary("scorer.temperature=0.0")]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    out = tmp_path_factory.mktemp("jsweep") / "camp"
    spec = CampaignSpec(answers_path=ROOT / "answer_bank" / "mini",
                        profiles_path=ROOT / "profiles" / "demo",
                        pipeline_path=ROOT / "pipelines" / "reference.yaml", out_dir=out,
                        profile_ids=("long_pauses",), n_boot=200)
    run_campaign(spec, stages=make_stages(), progress=False)
    return out


def _rows(folder: Path) -> list[dict]:
    df = pd.read_parquet(folder / "sweep.parquet")
    rows = [comparable(r) for r in df.to_dict("records")]
    return sorted(rows, key=lambda r: (r["variant"], r["call_id"]))


def _table(res) -> list[dict]:
    """The verdict table without its timings (seconds per call differ between runs)."""
    return [{k: v for k, v in r.items() if not k.endswith("_s_per_call")}
            for r in res.sweep["table"]]


def _logged(folder: Path) -> list[str]:
    ids = []
    for log in folder.glob("variants/*/calls.jsonl"):
        ids += [json.loads(x)["call_id"] for x in log.read_text().splitlines() if x]
    return ids


def test_two_local_workers_give_the_serial_sweep(campaign, tmp_path):
    serial = run_sweep(campaign, VARIES, tmp_path / "s", stages_for=SweepStages(), n_boot=200)
    local = run_sweep(campaign, VARIES, tmp_path / "l", stages_for=SweepStages(), n_boot=200,
                      executor=ExecutorSpec("local", 2))
    assert local.n_run == serial.n_run > 0
    assert _table(local) == _table(serial)
    assert pd.DataFrame(_rows(tmp_path / "l")).equals(pd.DataFrame(_rows(tmp_path / "s")))
    again = run_sweep(campaign, VARIES, tmp_path / "l", stages_for=SweepStages(), n_boot=200,
                      executor=ExecutorSpec("local", 2))
    assert again.n_run == 0  # resumed from the logs


def test_a_sigkilled_sweep_worker_loses_nothing_and_logs_nothing_twice(campaign, tmp_path):
    serial = run_sweep(campaign, VARIES[:1], tmp_path / "s", stages_for=SweepStages(),
                       n_boot=200)
    kill = tmp_path / "kill"
    kill.mkdir()
    (kill / "q01_strong").write_text("1")
    res = run_sweep(campaign, VARIES[:1], tmp_path / "k", stages_for=SweepStages(str(kill)),
                    n_boot=200, executor=ExecutorSpec("local", 2))
    assert (kill / "q01_strong").read_text() == "0"  # a worker did die
    ids = _logged(tmp_path / "k")
    assert len(ids) == len(set(ids)) == serial.n_run
    assert _table(res) == _table(serial)
