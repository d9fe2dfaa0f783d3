"""The driver of tests/test_executors_ray_nodes_integration.py, run in a process of its own:
Ray reads its auth settings once per process, so a driver that joins the test's token-less
cluster (``RAY_AUTH_MODE=disabled``) must not share a process with the tests that start a
local Ray of their own (a pytest worker runs several; the second would inherit the first's
settings and fail to reach its own GCS).

    python tests/ray_nodes_driver.py OUT ADDRESS SLEEP_S

runs the fake-stage campaign of test_executors_unit.spec into OUT on the Ray cluster at
ADDRESS with 2 actors, each fake call sleeping SLEEP_S in ASR."""

from __future__ import annotations

import sys
from pathlib import Path

from executor_fakes import make_stages
from test_executors_unit import spec

from rig.campaign.executors import ExecutorSpec
from rig.campaign.runner import run_campaign

if __name__ == "__main__":
    out, address, sleep_s = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    run_campaign(spec(out), stages=make_stages(sleep_s=sleep_s), progress=False,
                 executor=ExecutorSpec("ray", workers=2, ray_address=address))
