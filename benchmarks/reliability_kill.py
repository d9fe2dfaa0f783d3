"""Kills survived: the issue-19 kill scenario of a campaign, measured and printed as figures.

A 200-call campaign (answer_bank/core's 40 answers x 5 demo profiles) on fake stages, run by
the local executor with 2 worker processes, is SIGKILLed at 20 moments drawn from a seeded
random generator, alternating the driver and one of its workers, and resumed after each
(``tests/kill_util.py``: the same machinery as
``tests/test_kill_campaign_integration.py``); then it is
compared with the same campaign run uninterrupted. Prints one line and, with ``--json``, the
figures::

    20 kills (10 driver, 10 worker) survived: 200 planned calls, 0 lost, 0 duplicated,
    0 rows differing from an uninterrupted run; 1 torn line injected, 0 left

``kill_figures()`` returns the same dict for ``benchmarks/reliability.py``. Linux (the worker
processes are found in /proc). A few minutes on 2 cores.

    python benchmarks/reliability_kill.py [--seed 19] [--kills 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"


def kill_figures(seed: int = 19, n_kills: int = 20, workdir: str | Path | None = None) -> dict:
    """Run the kill scenario and return its figures: ``kills``, ``driver_kills``,
    ``worker_kills``, ``kills_survived`` (kills after which the resumed run finished with
    exit 0), ``calls_planned``, ``calls_lost`` (planned, not in calls.parquet),
    ``calls_duplicated`` (more than once in calls.parquet, or logged ``ok`` twice),
    ``rows_differing`` (from the uninterrupted run, timing columns aside; -1 when calls were
    lost or duplicated), ``torn_lines_injected`` / ``torn_lines_left`` /
    ``torn_lines_moved_aside`` (calls.jsonl), ``drivers_started``.

    Raises:
        TimeoutError: a wait ran past ``kill_util.WAIT_S`` (a hung run is a failure)."""
    sys.path.insert(0, str(TESTS))
    import kill_util

    with tempfile.TemporaryDirectory(prefix="rig-kill-", dir=workdir) as tmp:
        root = Path(tmp)
        ref = kill_util.reference_campaign(root / "ref")
        run = kill_util.kill_campaign(root / "killed", seed=seed, n_kills=n_kills,
                                      log=root / "driver.log")
        return kill_util.campaign_kill_figures(root / "killed", ref, run)


def line(fig: dict) -> str:
    """The figures in one sentence."""
    return (f"{fig['kills']} kills ({fig['driver_kills']} driver, {fig['worker_kills']} worker),"
            f" {fig['kills_survived']} survived: {fig['calls_planned']} planned calls, "
            f"{fig['calls_lost']} lost, {fig['calls_duplicated']} duplicated, "
            f"{fig['rows_differing']} rows differing from an uninterrupted run; "
            f"{fig['torn_lines_injected']} torn line injected, {fig['torn_lines_left']} left")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = ap.parse_args()
    fig = kill_figures(args.seed, args.kills)
    print(line(fig))
    if args.json:
        print(json.dumps(fig, indent=2))


if __name__ == "__main__":
    main()
