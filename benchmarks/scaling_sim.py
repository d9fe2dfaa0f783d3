"""A simulated campaign over N Ray nodes, from service times measured on this machine.

Model (see docs/scaling.md): every node runs ``workers_per_node`` workers; each worker loads
its models (``--load-s``) before its first task; tasks are the oracle gradings (a phase that
ends before the calls start: the calls need their oracle grade) and then the calls, taken in
plan order by the first free worker; a task's service time is drawn (with replacement, seeded)
from the measured per-call times. Every result goes to the one driver, which appends and
fsyncs it to ``calls.jsonl`` one at a time (``--append-ms`` each, measured here by appending
real rows with :class:`rig.campaign.store.CallLog`) plus a per-task dispatch cost
(``--dispatch-ms``: Ray's task round trip). The campaign ends when the driver has logged the
last result.

    python benchmarks/scaling_sim.py --calls CAMPAIGN/calls.jsonl [--nodes 1,4,16]
"""

from __future__ import annotations

import argparse
import heapq
import json
import tempfile
import time
from pathlib import Path

import numpy as np

STAGE_COLUMNS = ("t_synth_s", "t_channel_s", "t_vad_s", "t_asr_s", "t_scorer_s")


def measured_append_ms(row: dict, n: int = 200) -> float:
    """Median ms of one driver append (``CallLog.append``: JSON line, write, fsync)."""
    from rig.campaign.store import CallLog

    with tempfile.TemporaryDirectory() as tmp:
        log = CallLog(Path(tmp) / "calls.jsonl")
        times = []
        for i in range(n):
            r = dict(row, call_id=f"sim{i:06d}")
            t0 = time.perf_counter()
            log.append(r)
            times.append(time.perf_counter() - t0)
    return 1000 * float(np.median(times))


def simulate(call_s: np.ndarray, oracle_s: np.ndarray, *, n_calls: int, n_oracle: int,
             workers: int, load_s: float, append_ms: float, dispatch_ms: float,
             seed: int = 0) -> dict:
    """Makespan (s) of one campaign, and where the time went."""
    rng = np.random.default_rng(seed)
    driver_free = 0.0
    free = [(load_s, w) for w in range(workers)]  # (time the worker is free, id)
    heapq.heapify(free)
    per_task = (append_ms + dispatch_ms) / 1000
    driver_busy = 0.0
    phase_end = 0.0
    for phase, n, pool in (("oracle", n_oracle, oracle_s), ("calls", n_calls, call_s)):
        done: list[float] = []
        if phase == "calls":  # the calls start when every oracle grade is logged
            free = [(max(t, phase_end), w) for t, w in free]
            heapq.heapify(free)
        for s in rng.choice(pool, size=n) if n else []:
            t, w = heapq.heappop(free)
            end = t + float(s)
            heapq.heappush(free, (end, w))
            done.append(end)
        for end in sorted(done):  # the driver logs results one at a time, in arrival order
            driver_free = max(driver_free, end) + per_task
            driver_busy += per_task
        phase_end = driver_free
    return {"makespan_s": driver_free, "driver_busy_share": driver_busy / driver_free
            if driver_free else 0.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=Path, required=True,
                    help="a campaign's calls.jsonl (per-call stage times)")
    ap.add_argument("--oracle-s", type=float, default=None,
                    help="seconds per oracle grading (default: the median scorer time)")
    ap.add_argument("--design-calls", type=int, default=480,
                    help="calls run: 672 planned, less the repeats that cannot differ (3 of "
                         "the 7 profiles draw nothing from the seed: 32 x (4 x 3 + 3) = 480)")
    ap.add_argument("--design-oracle", type=int, default=32,
                    help="oracle gradings of the design: 32 distinct scripts (up to 96, one "
                         "per answer and seed, when no worker reuses another seed's grade)")
    ap.add_argument("--service-scale", type=float, default=1.0,
                    help="multiply the measured service times (e.g. 0.2 for a machine 5x "
                         "less loaded than the one measured)")
    ap.add_argument("--nodes", default="1,4,16")
    ap.add_argument("--workers-per-node", type=int, default=1,
                    help="workers per node (a 2-core node like this one: 1)")
    ap.add_argument("--load-s", type=float, default=15.0,
                    help="model load per worker: Whisper + GGUF + Silero (measured)")
    ap.add_argument("--dispatch-ms", type=float, default=5.0)
    ap.add_argument("--append-ms", type=float, default=None,
                    help="driver append + fsync per row (default: measured now)")
    args = ap.parse_args()
    rows = [json.loads(line) for line in args.calls.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("status") == "ok"]
    call_s = np.array([sum(r.get(c) or 0.0 for c in STAGE_COLUMNS) for r in rows])
    audio_s = float(np.mean([r["audio_duration_s"] for r in rows]))
    scorer = np.array([r["t_scorer_s"] for r in rows if (r.get("t_scorer_s") or 0) > 0.05])
    oracle = np.array([args.oracle_s if args.oracle_s is not None else
                       float(np.median(scorer)) if len(scorer) else 1.0])
    call_s, oracle = call_s * args.service_scale, oracle * args.service_scale
    append_ms = args.append_ms if args.append_ms is not None else measured_append_ms(rows[0])
    print(f"measured: {len(rows)} calls, {np.mean(call_s):.2f} s per call (median "
          f"{np.median(call_s):.2f}), {audio_s:.1f} s of audio per call; oracle grading "
          f"{oracle[0]:.2f} s; driver append {append_ms:.2f} ms; dispatch {args.dispatch_ms} "
          f"ms; model load {args.load_s:.1f} s per worker")
    print(f"design: {args.design_calls} calls + {args.design_oracle} oracle gradings")
    for n in (int(x) for x in args.nodes.split(",")):
        w = n * args.workers_per_node
        res = simulate(call_s, oracle, n_calls=args.design_calls, n_oracle=args.design_oracle,
                       workers=w, load_s=args.load_s, append_ms=append_ms,
                       dispatch_ms=args.dispatch_ms)
        span = res["makespan_s"]
        print(f"  {n:3d} node(s), {w:3d} workers: {span / 60:6.1f} min  "
              f"({args.design_calls * audio_s / span:6.1f} audio s per wall s; driver busy "
              f"{100 * res['driver_busy_share']:.1f}% of the time)")
    cap = 1000 / (append_ms + args.dispatch_ms)
    print(f"driver ceiling: {cap:.0f} results/s = {cap * audio_s:.0f} audio s per wall s "
          f"(about {cap * np.mean(call_s):.0f} busy workers)")


if __name__ == "__main__":
    main()
