"""Executors on fake stages: the same rows from serial and local workers, a worker SIGKILLed
mid-call (each planned call logged once), a call that kills every worker (given up, no loop),
Ctrl-C (exit 130 and how to resume), the driver killed then resumed, the question-affine
queue. No assertion on wall time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from executor_fakes import ROOT, comparable, make_stages
from kill_util import campaign_driver

from rig.campaign.executors import ExecutorSpec
from rig.campaign.executors.base import MAX_WORKER_DEATHS, TaskQueue
from rig.campaign.runner import CampaignSpec, run_campaign
from rig.campaign.store import CallLog

pytestmark = pytest.mark.unit
#: tests/, which Ray's workers need on their PYTHONPATH (test_executors_ray_integration imports it)
TESTS = Path(__file__).resolve().parent


def spec(out: Path, **kw) -> CampaignSpec:
    base = dict(answers_path=ROOT / "answer_bank" / "core",
                profiles_path=ROOT / "profiles" / "demo",
                pipeline_path=ROOT / "pipelines" / "reference.yaml", out_dir=out,
                repeats=1, profile_ids=("long_pauses",),
                question_ids=("q01_conflict", "q02_upset_customer"), n_boot=200,
                campaign_id="c")
    base.update(kw)
    return CampaignSpec(**base)


def logged_ids(out: Path) -> list[str]:
    lines = (out / "calls.jsonl").read_text().splitlines()
    return [json.loads(x)["call_id"] for x in lines if x.strip()]


@pytest.fixture(scope="module")
def serial_rows(tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("serial") / "c"
    res = run_campaign(spec(out), stages=make_stages(), progress=False,
                       executor=ExecutorSpec("serial"))
    return res.rows


@pytest.mark.parametrize(("workers", "overlap"), [(2, False), (2, True), (1, True)])
def test_local_workers_give_the_serial_rows(tmp_path, serial_rows, workers, overlap):
    # overlap: each worker transcribes the next call while the judge grades this one;
    # --workers 1 --overlap runs one worker process
    res = run_campaign(spec(tmp_path / "c"), stages=make_stages(), progress=False,
                       executor=ExecutorSpec("local", workers=workers, overlap=overlap))
    assert len(res.rows) == 16
    assert comparable(res.rows) == comparable(serial_rows)
    meta = json.loads((tmp_path / "c" / "campaign.json").read_text())
    assert meta["runtime"]["executor"] == "local"
    assert (meta["runtime"]["workers"], meta["runtime"]["overlap"]) == (workers, overlap)
    # the oracle was graded by the workers, once per (answer, seed), and written by the driver
    assert len(CallLog(tmp_path / "c" / "oracle.jsonl").rows()) == 8


@pytest.mark.parametrize("overlap", [False, True])
def test_a_worker_killed_mid_call_loses_nothing_and_runs_nothing_twice(tmp_path, serial_rows,
                                                                       overlap):
    kill = tmp_path / "kill"
    kill.mkdir()
    (kill / "q01_strong").write_text("1")  # the first worker to run its ASR dies (SIGKILL)
    res = run_campaign(spec(tmp_path / "c"), stages=make_stages(kill), progress=False,
                       executor=ExecutorSpec("local", workers=2, overlap=overlap))
    assert (kill / "q01_strong").read_text() == "0"
    ids = logged_ids(tmp_path / "c")
    assert len(ids) == len(set(ids)) == 16
    df = pd.read_parquet(tmp_path / "c" / "calls.parquet")
    assert df["call_id"].is_unique and len(df) == 16 and (df["status"] == "ok").all()
    assert comparable(res.rows) == comparable(serial_rows)
    runtime = json.loads((tmp_path / "c" / "campaign.json").read_text())["runtime"]
    assert runtime["worker_deaths"] == 1 and "SIGKILL" in runtime["death_causes"][0]
    assert runtime["calls_failed_by_worker_deaths"] == 0 and runtime["earlier_runs"] == []
    # a rerun with nothing to do keeps the death on record (it overwrote it before)
    again = run_campaign(spec(tmp_path / "c"), stages=make_stages(kill), progress=False,
                         executor=ExecutorSpec("local", workers=2, overlap=overlap))
    assert again.n_run == 0
    latest = json.loads((tmp_path / "c" / "campaign.json").read_text())["runtime"]
    assert latest["worker_deaths"] == 0 and latest["earlier_runs"] == [
        {k: v for k, v in runtime.items() if k != "earlier_runs"}]


@pytest.mark.parametrize("overlap", [False, True])
def test_a_call_that_kills_every_worker_is_given_up_and_the_rest_run(tmp_path, overlap):
    # with overlap, a death with two calls in flight counts against neither: each runs
    # alone next, so only the calls that kill are given up
    kill = tmp_path / "kill"
    kill.mkdir()
    (kill / "q02_weak").write_text("99")
    res = run_campaign(spec(tmp_path / "c"), stages=make_stages(kill), progress=False,
                       executor=ExecutorSpec("local", workers=2, overlap=overlap))
    df = pd.DataFrame(res.rows)
    bad = df[df["answer_id"] == "q02_weak"]
    assert len(bad) == 2 and (bad["status"] == "error").all()
    assert bad["error"].str.contains(f"{MAX_WORKER_DEATHS} workers died").all()
    assert bad["error"].str.contains("SIGKILL").all()
    assert (df[df["answer_id"] != "q02_weak"]["status"] == "ok").all()
    # 2 calls x 3 counted deaths each (with overlap, maybe some deaths not counted)
    kills = 99 - int((kill / "q02_weak").read_text())
    assert kills == 2 * MAX_WORKER_DEATHS if not overlap else kills >= 2 * MAX_WORKER_DEATHS
    # a rerun retries the given-up calls (here: they die again, still logged once each)
    (kill / "q02_weak").write_text("0")
    again = run_campaign(spec(tmp_path / "c"), stages=make_stages(kill), progress=False,
                         executor=ExecutorSpec("local", workers=2, overlap=overlap))
    assert again.n_run == 2 and all(r["status"] == "ok" for r in again.rows)
    ids = logged_ids(tmp_path / "c")
    assert len(set(ids)) == 16 and len(ids) == 18  # the two failures, superseded


def _start_driver(out: Path, sleep_s: float) -> subprocess.Popen:
    code = campaign_driver(out, sleep_s, spec="test_executors_unit:spec")
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)


def _wait_for_calls(out: Path, n: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if (out / "calls.jsonl").is_file() and len(logged_ids(out)) >= n:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    raise AssertionError("no calls logged")


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)],
                         ids=["ctrl_c", "sigterm"])
def test_an_interrupt_stops_the_workers_and_says_how_to_resume(tmp_path, sig, code):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) exits 130; SIGTERM
    (to the driver only, as `kill PID` or a scheduler's stop) 143; both say how to resume."""
    out = tmp_path / "c"
    proc = _start_driver(out, sleep_s=0.4)
    _wait_for_calls(out, 2, proc)
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == code, stderr
    n = len(logged_ids(out))
    assert f"interrupted: {n} of 16 calls logged; rerun the same command to resume" in (
        stdout + stderr)
    assert "Traceback" not in stderr
    res = run_campaign(spec(out), stages=make_stages(), progress=False,
                       executor=ExecutorSpec("local", workers=2))
    assert res.n_skipped == n and res.n_run == 16 - n
    ids = logged_ids(out)
    assert len(ids) == len(set(ids)) == 16


def test_the_driver_killed_then_resumed_logs_each_call_once(tmp_path):
    out = tmp_path / "c"
    proc = _start_driver(out, sleep_s=0.3)
    _wait_for_calls(out, 3, proc)
    os.kill(proc.pid, signal.SIGKILL)  # the driver only: its workers see their pipe close
    proc.communicate(timeout=60)
    run_campaign(spec(out), stages=make_stages(), progress=False,
                 executor=ExecutorSpec("local", workers=2))
    ids = logged_ids(out)
    assert len(ids) == len(set(ids)) == 16


class _T:
    def __init__(self, group: str, i: int) -> None:
        self.group, self.task_id = group, f"{group}{i}"


def test_the_queue_keeps_a_worker_on_its_question():
    q = TaskQueue([_T(g, i) for g in "abc" for i in range(3)])
    first = q.next_for(None)
    second = q.next_for(None, held=[first.group])
    assert (first.group, second.group) == ("a", "b")  # a second worker takes a new question
    assert q.next_for("a", held=["b"]).task_id == "a1"  # and each keeps to its own
    assert q.next_for("b", held=["a"]).task_id == "b1"
    q.next_for("a", held=["b"])
    assert q.next_for("a", held=["b"]).group == "c"  # a is done: the free question
    t = q.next_for("b", held=["c"])
    assert q.death(t, "killed by SIGKILL") is None  # back at the front of its question
    assert q.next_for("b", held=["c"]) is t
    for _ in range(MAX_WORKER_DEATHS - 2):
        assert q.death(t, "killed by SIGKILL") is None
        q.next_for("b")
    failure = q.death(t, "killed by SIGKILL")
    assert failure is not None and "3 workers died" in failure.error


def test_executor_spec_rejects_bad_counts():
    from rig.errors import ConfigError

    with pytest.raises(ConfigError, match="--workers"):
        ExecutorSpec("local", workers=0)
    with pytest.raises(ConfigError, match="--executor"):
        ExecutorSpec("threads")  # type: ignore[arg-type]


def test_cli_options_make_the_executor_and_bad_ones_exit_2(tmp_path):
    from typer.testing import CliRunner

    from rig.cli import app
    from rig.cli.campaign import executor_spec

    ex = executor_spec("local", 3, None, 1, 2, None, False)
    assert (ex.kind, ex.workers, ex.overlap, ex.runtime.asr_threads) == ("local", 3, False, 2)
    assert executor_spec("ray", None, "auto", 1, None, None, None).ray_address == "auto"
    args = ["campaign", "run", "--answers", str(ROOT / "answer_bank" / "core"),
            "--profiles", str(ROOT / "profiles" / "demo"),
            "--pipeline", str(ROOT / "pipelines" / "reference.yaml"),
            "--out", str(tmp_path / "c")]
    res = CliRunner().invoke(app, [*args, "--ray-address", "auto"])
    assert res.exit_code == 2 and "--ray-address" in res.output, res.output
    res = CliRunner().invoke(app, [*args, "--executor", "threads"])
    assert res.exit_code == 2 and "--executor" in res.output, res.output


def test_concurrent_calls_of_a_transport_are_written_by_the_driver_thread_only(tmp_path,
                                                                               serial_rows):
    import threading

    from rig.campaign.call import run_call

    ran_in, wrote_in = set(), set()

    def call_fn(**kw):  # stands for a real transport's caller: its own line per call
        ran_in.add(threading.current_thread().name)
        return run_call(**{**kw, "stages": make_stages(sleep_s=0.05)})

    res = run_campaign(spec(tmp_path / "c"), stages=make_stages(), progress=False,
                       call_fn=call_fn, on_call=lambda row: wrote_in.add(
                           threading.current_thread().name),
                       executor=ExecutorSpec("local", workers=2, concurrency=3))
    assert wrote_in == {threading.current_thread().name}
    assert len(ran_in) > 1 and all(n.startswith("rig-call") for n in ran_in)
    assert comparable(res.rows) == comparable(serial_rows)
    ids = logged_ids(tmp_path / "c")
    assert len(ids) == len(set(ids)) == 16


@pytest.mark.parametrize("address, words", [
    ("nonsense", "auto, local, HOST:PORT"), ("127.0.0.1:1", "nothing answers at 127.0.0.1:1")])
def test_a_bad_ray_address_is_refused_in_words(address, words):
    """A malformed address gave Ray's traceback, and one where nothing listens hung on
    Ray's GCS timeouts: both are refused before Ray is asked."""
    from rig.campaign.executors.ray import _check_address
    from rig.errors import RigError

    with pytest.raises(RigError, match="--ray-address") as err:
        _check_address(address)
    assert words in str(err.value)


def test_ray_refuses_actors_larger_than_any_node(monkeypatch):
    """Each actor reserves its thread budget in CPUs (sized from the driver machine's cores);
    on a cluster of smaller nodes Ray kept it pending for good: a silent hang. Refused."""
    from types import SimpleNamespace

    from rig.campaign.executors import ray as ray_executor
    from rig.errors import RigError
    from rig.runtime import Runtime

    fake = SimpleNamespace(
        is_initialized=lambda: True, cluster_resources=lambda: {"CPU": 2.0},
        nodes=lambda: [{"Alive": True, "Resources": {"CPU": 1.0}},
                       {"Alive": False, "Resources": {"CPU": 8.0}}],
        remote=lambda **kw: lambda cls: cls)
    monkeypatch.setattr(ray_executor, "_ray", lambda: fake)
    setup = SimpleNamespace(runtime=Runtime(2, 2))
    with pytest.raises(RigError, match="largest Ray node has 1; pass --asr-threads"), \
            ray_executor.RayExecutor(setup, 1, None):
        pass
    with ray_executor.RayExecutor(SimpleNamespace(runtime=Runtime(1, 1)), None, None) as ex:
        assert ex.n_workers == 2


def test_a_local_worker_sizes_its_thread_pools_to_its_cpus_and_keeps_the_users(monkeypatch):
    """A spawned worker starts with OMP/OpenBLAS/MKL pools of its own CPUs, as a Ray actor does;
    a value the user set is kept, and the driver's environment is left as it was."""
    import multiprocessing as mp
    from types import SimpleNamespace

    from spawn_env import env_of

    from rig.campaign.executors.base import THREAD_POOL_ENV, worker_cpus
    from rig.campaign.executors.local import thread_pools_sized

    for k in THREAD_POOL_ENV:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "3")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "")  # empty: unset for OpenBLAS too
    setup = SimpleNamespace(runtime=SimpleNamespace(asr_threads=1, scorer_threads=2))
    assert worker_cpus(setup) == 2 and worker_cpus(SimpleNamespace(runtime=None)) == 1
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    with thread_pools_sized(worker_cpus(setup)):
        p = ctx.Process(target=env_of, args=(q, THREAD_POOL_ENV))
        p.start()
    seen = q.get(timeout=60)
    p.join(timeout=60)
    assert seen == {"OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2", "MKL_NUM_THREADS": "3"}
    assert "OMP_NUM_THREADS" not in os.environ and os.environ["MKL_NUM_THREADS"] == "3"
    assert os.environ["OPENBLAS_NUM_THREADS"] == ""
