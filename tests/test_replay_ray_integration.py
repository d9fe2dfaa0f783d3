"""rig replay on Ray's process pool (a real local Ray instance) with fake stages: the same
rows as the serial run. Integration: Ray is the real component here (extra ``ray``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_replay_unit import _comparable, _recordings, _run

pytestmark = pytest.mark.integration
ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install "
                                        "'rig[ray]')")
TESTS = Path(__file__).resolve().parent


def test_ray_pool_gives_the_serial_rows(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(TESTS))  # Ray's workers import the fakes
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        rec = _recordings(tmp_path)
        serial, _ = _run(tmp_path, rec, 2000, 700, out="serial")
        pooled, s = _run(tmp_path, rec, 2000, 700, out="ray", executor="ray", workers=2)
    finally:
        ray.shutdown()
    assert _comparable(pooled.rows) == _comparable(serial.rows)
    assert s["overall"]["flips"] == 3
