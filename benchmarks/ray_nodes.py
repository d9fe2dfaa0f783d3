"""Ray over nodes: the same fake-stage campaign on one Ray node and on two, timed side by side
in one run, and on two nodes of which one is lost a quarter of the way through.

The nodes are started with the real CLI (``ray start --head`` / ``ray start --address``,
``tests/ray_cluster.py``), one CPU each, **on this one machine** (loopback: the head is joined
at 127.0.0.1:PORT), so the ratio measures what rig and Ray cost to spread a campaign over two
raylets (dispatch, an actor on another node, the driver writing every row), not a second
machine's hardware. The calls are ``tests/executor_fakes.py``'s fake stages (no models):

* ``--work sleep``: each call's ASR sleeps ``--call-s`` (no CPU): 2 nodes ideally 2.00x;
* ``--work cpu``: each call's ASR keeps a core busy for ``--call-s`` of CPU time: the two
  nodes share this machine's cores with whatever else runs, so the load is printed with each
  run (``os.getloadavg()``, 1-minute, before and after).

The lost node: every process of the second node SIGKILLed after a quarter of the calls are
logged (as ``tests/test_executors_ray_nodes_integration.py`` does); its call in flight is run
again on the head (Ray's own health checks and timeouts). Each campaign's wall time includes
its actors' start (the driver joins the cluster once, before the first). The campaign:
2 questions x 4 answers of ``answer_bank/core`` x (``baseline`` and ``--profiles`` others of
``profiles/demo``): 32 calls at the defaults. Linux. About a minute at the defaults.

    python benchmarks/ray_nodes.py [--work sleep|cpu] [--call-s 0.5] [--profiles 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
#: Profiles beside ``baseline`` (a campaign always runs it): each adds 8 calls.
PROFILES = ("long_pauses", "short_pauses", "slow", "noise_10db")


def _spec(out: Path, n_profiles: int):
    from rig.campaign.runner import CampaignSpec

    return CampaignSpec(answers_path=ROOT / "answer_bank" / "core",
                        profiles_path=ROOT / "profiles" / "demo",
                        pipeline_path=ROOT / "pipelines" / "reference.yaml", out_dir=out,
                        repeats=1, profile_ids=PROFILES[:n_profiles],
                        question_ids=("q01_conflict", "q02_upset_customer"), n_boot=200,
                        campaign_id="c")


def _n_logged(out: Path) -> int:
    f = out / "calls.jsonl"
    return sum(1 for x in f.read_text().splitlines() if x.strip()) if f.is_file() else 0


def ray_nodes_figures(work: str = "sleep", call_s: float = 0.5, n_profiles: int = 3) -> dict:
    """Run the three campaigns; return their figures: per run ``wall_s``, ``calls``,
    ``load_before`` / ``load_after``, ``worker_deaths``; ``ratio_2_over_1`` (1-node wall
    over 2-node wall) and ``ratio_lost_over_1``; the machine's ``cpus``."""
    sys.path.insert(0, str(TESTS))
    import ray
    import ray_cluster
    from executor_fakes import make_stages

    stages = (make_stages(sleep_s=call_s) if work == "sleep"
              else make_stages(spin_s=call_s))
    fig: dict = {"work": work, "call_s": call_s, "cpus": os.cpu_count(), "runs": {}}
    with tempfile.TemporaryDirectory(prefix="rig-ray-nodes-") as tmp, \
            ray_cluster.LocalCluster() as cluster:
        os.environ.pop("RAY_ADDRESS", None)
        os.environ.update(cluster.driver_env())
        cluster.start_head()
        ray.init(address=cluster.address, log_to_driver=False)
        try:
            _three_runs(fig, cluster, ray, Path(tmp), stages, n_profiles, call_s)
        finally:
            ray.shutdown()
    r = fig["runs"]
    fig["ratio_2_over_1"] = round(r["1_node"]["wall_s"] / r["2_nodes"]["wall_s"], 2)
    fig["ratio_lost_over_1"] = round(r["1_node"]["wall_s"] / r["2_nodes_one_lost"]["wall_s"], 2)
    return fig


def _three_runs(fig, cluster, ray, tmp: Path, stages, n_profiles: int, call_s: float) -> None:
    """1 node (the head alone), then 2 nodes, then 2 nodes with the second one lost."""
    from rig.campaign.executors import ExecutorSpec
    from rig.campaign.runner import run_campaign
    from rig.runtime import Runtime

    one_thread = Runtime(asr_threads=1, scorer_threads=1)  # an actor fits a 1-CPU node

    def run(name: str, workers: int, lose: dict | None = None) -> None:
        out = tmp / name
        load0 = os.getloadavg()[0]

        def on_call(_row) -> None:
            # once the actor just freed has its next call: both nodes mid-call
            if lose is not None and _n_logged(out) == lose["at"] and "timer" not in lose:
                lose["timer"] = threading.Timer(call_s / 3, lose["node"].kill)
                lose["timer"].start()

        t0 = time.monotonic()
        res = run_campaign(_spec(out, n_profiles), stages=stages, progress=False,
                           executor=ExecutorSpec("ray", workers=workers, runtime=one_thread),
                           on_call=on_call)
        wall = time.monotonic() - t0
        if lose is not None:
            lose["timer"].join()
        fig["runs"][name] = {"wall_s": round(wall, 2), "calls": len(res.rows),
                             "workers": workers, "load_before": round(load0, 2),
                             "load_after": round(os.getloadavg()[0], 2),
                             "worker_deaths": res.runtime["worker_deaths"],
                             "ok": sum(r["status"] == "ok" for r in res.rows)}

    run("1_node", 1)
    node = cluster.add_node()
    while sum(n["Alive"] for n in ray.nodes()) < 2:
        time.sleep(0.2)
    run("2_nodes", 2)
    n_calls = fig["runs"]["2_nodes"]["calls"]
    run("2_nodes_one_lost", 2, lose={"at": max(1, n_calls // 4), "node": node})


def lines(fig: dict) -> list[str]:
    out = [f"fake calls ({fig['work']}, {fig['call_s']} s each) on Ray nodes started with "
           f"`ray start` on this one machine ({fig['cpus']} CPUs, loopback), 1 CPU each:"]
    for name, r in fig["runs"].items():
        out.append(f"  {name:17s} {r['calls']} calls, {r['ok']} ok, {r['workers']} actors: "
                   f"{r['wall_s']:6.2f} s  (worker deaths {r['worker_deaths']}; load "
                   f"{r['load_before']} -> {r['load_after']})")
    out.append(f"  2 nodes / 1 node: {fig['ratio_2_over_1']}x faster; with the second node "
               f"lost at 1/4: {fig['ratio_lost_over_1']}x")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", choices=("sleep", "cpu"), default="sleep")
    ap.add_argument("--call-s", type=float, default=0.5)
    ap.add_argument("--profiles", type=int, default=3, choices=range(1, len(PROFILES) + 1))
    ap.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = ap.parse_args()
    fig = ray_nodes_figures(args.work, args.call_s, args.profiles)
    print("\n".join(lines(fig)))
    if args.json:
        print(json.dumps(fig, indent=2))


if __name__ == "__main__":
    main()
