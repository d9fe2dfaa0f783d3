"""tests/conftest.py pins each pytest-xdist worker to its own share of the CPUs; a crashed
worker's replacement (gwN, gwN+1, ...) takes the slot the dead worker left, not a live one's."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

TESTS = Path(__file__).resolve().parent


def _claimer(run: str, first: int) -> subprocess.Popen:
    code = (f"import sys; sys.path.insert(0, {str(TESTS)!r}); from conftest import _claim_slot; "
            f"print(_claim_slot({run!r}, 2, {first}), flush=True); sys.stdin.read()")
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


def test_a_replacement_worker_takes_the_slot_its_dead_worker_left():
    run = uuid.uuid4().hex
    with _claimer(run, 0) as gw0:
        with _claimer(run, 1) as gw1:
            assert (gw0.stdout.readline().strip(), gw1.stdout.readline().strip()) == ("0", "1")
            gw1.kill()
        with _claimer(run, 2 % 2) as gw2:  # gw2 % 2 names gw0's slot, which gw0 still holds
            assert gw2.stdout.readline().strip() == "1"
            gw2.kill()
        gw0.kill()


def _widen() -> None:  # the nested run may use every CPU, not this (pinned) worker's one
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, range(os.cpu_count() or 1))


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs os.sched_setaffinity")
def test_after_a_worker_crash_the_two_workers_still_run_on_different_cpus(tmp_path):
    probe = textwrap.dedent("""
        import os, time, pytest
        pytestmark = pytest.mark.unit
        @pytest.mark.parametrize("k", range(4))
        def test_probe(k):
            w = os.environ["PYTEST_XDIST_WORKER"]
            with open(os.environ["PIN_LOG"], "a") as f:
                f.write(f"{w} {sorted(os.sched_getaffinity(0))}\\n")
            if w == "gw1" and k == 1:
                try:
                    os.close(os.open(os.environ["PIN_LOG"] + ".crashed", os.O_CREAT | os.O_EXCL))
                    os._exit(3)
                except FileExistsError:
                    pass
            time.sleep(0.3)
        """)
    for name in ("test_a_probe_unit.py", "test_b_probe_unit.py"):
        (tmp_path / name).write_text(probe)
    (tmp_path / "conftest.py").write_text(textwrap.dedent(f"""
        import importlib.util, sys
        sys.path.insert(0, {str(TESTS)!r})
        spec = importlib.util.spec_from_file_location(
            "rig_conftest", {str(TESTS / "conftest.py")!r})
        rig_conftest = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(rig_conftest)
        def pytest_configure(config):
            rig_conftest._pin_xdist_worker()
        """))
    log = tmp_path / "pin.log"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PYTEST_") and k != "RIG_TEST_PIN"} | {"PIN_LOG": str(log)}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-n", "2", "--dist", "loadfile", "-c", os.devnull, "--rootdir",
                          str(tmp_path), str(tmp_path)], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, preexec_fn=_widen)
    assert log.exists(), out.stdout + out.stderr
    seen = dict(line.split(" ", 1) for line in log.read_text().splitlines())
    assert "gw2" in seen, (seen, out.stdout + out.stderr)  # gw1 crashed and was replaced
    if seen["gw0"] == seen["gw1"]:
        pytest.skip(f"fewer than 2 CPUs here: nothing pinned ({seen})")
    assert seen["gw2"] != seen["gw0"], seen
