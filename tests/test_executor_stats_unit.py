"""Workers report their judge's prompt-prefix cache counts and devices to the driver, which
sums them into campaign.json's ``runtime`` block and the CLI's run line: serial, local
workers (with and without overlap) and the sums themselves. Fake stages; no wall time."""

from __future__ import annotations

import json

import pytest
from executor_fakes import make_counting_stages
from test_executors_unit import spec

from rig.campaign.executors import ExecutorSpec, RunStats
from rig.campaign.executors.base import WorkerSetup
from rig.campaign.executors.worker import Worker

pytestmark = pytest.mark.unit


def test_run_stats_sum_the_latest_report_of_each_worker():
    st = RunStats()
    st.record({"worker": "a", "hits": 1, "misses": 1, "asr_device": "cpu",
               "scorer_device": "cpu"})
    st.record({"worker": "a", "hits": 3, "misses": 1, "asr_device": "cpu",
               "scorer_device": "cpu"})  # cumulative: replaces a's first report
    st.record({"worker": "b", "hits": 0, "misses": 2, "asr_device": "cuda",
               "scorer_device": "cpu"})
    st.record(None)
    assert st.judge_prefix_cache() == {"hits": 3, "misses": 3, "hit_rate": 0.5}
    assert st.devices() == {"asr": ["cpu", "cuda"], "scorer": ["cpu"]}
    assert RunStats().judge_prefix_cache() == {"hits": 0, "misses": 0, "hit_rate": None}


def test_a_worker_reports_counts_since_it_was_built():
    from test_executors_unit import ROOT

    from rig.pipeline import load_pipeline

    stages = make_counting_stages("cpu")
    stages.scorer._hits, stages.scorer._misses = 5, 7  # graded before the campaign
    setup = WorkerSetup(load_pipeline(ROOT / "pipelines" / "reference.yaml"), "v", "c",
                        stages=stages)
    w = Worker(setup)
    stages.scorer._hits += 2
    stages.scorer._misses += 1
    rep = w.report()
    assert (rep["hits"], rep["misses"]) == (2, 1)
    assert (rep["asr_device"], rep["scorer_device"]) == ("cpu", "cpu")
    assert w.run_reporting.__doc__


def _prefix_cache(out) -> dict:
    """campaign.json's ``runtime.judge_prefix_cache`` (memoised repeats of a text within one
    process are neither a hit nor a miss)."""
    meta = json.loads((out / "campaign.json").read_text())
    return meta["runtime"]["judge_prefix_cache"]


def test_serial_run_counts_a_miss_per_question_and_phase(tmp_path):
    from rig.campaign.runner import run_campaign

    res = run_campaign(spec(tmp_path / "c"), stages=make_counting_stages("cpu"), progress=False)
    pc = _prefix_cache(tmp_path / "c")
    assert pc == res.runtime["judge_prefix_cache"]
    # grouped by question: oracle q01, oracle q02, calls q01, calls q02 each start with a miss
    assert pc["misses"] == 4
    assert pc["hits"] > 0 and pc["hit_rate"] == pc["hits"] / (pc["hits"] + pc["misses"])
    assert res.runtime["devices_used"] == {"asr": ["cpu"], "scorer": ["cpu"]}


@pytest.mark.parametrize("overlap", [False, True])
def test_local_workers_report_their_counts_to_the_driver(tmp_path, overlap):
    from rig.campaign.runner import run_campaign

    res = run_campaign(spec(tmp_path / "c"), stages=make_counting_stages("cpu"), progress=False,
                       executor=ExecutorSpec("local", workers=2, overlap=overlap))
    pc = _prefix_cache(tmp_path / "c")
    assert pc == res.runtime["judge_prefix_cache"]
    # each worker's first grading of a question misses; the queue keeps a worker on its
    # question, so most gradings hit; nothing graded is lost on the way to the driver
    assert pc["misses"] >= 2 and pc["hits"] > 0
    # 8 oracle gradings, 16 calls, and a turn-text grading per truncated call (attribution)
    n_turn_text = sum(1 for r in res.rows if r.get("words_lost"))
    assert 8 <= pc["hits"] + pc["misses"] <= 8 + 16 + n_turn_text
    assert res.runtime["devices_used"] == {"asr": ["cpu"], "scorer": ["cpu"]}


def test_the_cli_run_line_gives_the_hit_rate(tmp_path, capsys):
    from rig.cli import campaign as cli

    cli._run(spec(tmp_path / "c"), progress=False, stages=make_counting_stages("cpu"))
    cap = capsys.readouterr()
    line = next(x for x in (cap.out + cap.err).splitlines() if "already done" in x)
    assert "judge prefix cache" in line and "hits (" in line and "%)" in line
