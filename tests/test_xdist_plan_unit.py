"""How tests are shared between pytest-xdist workers (tests/xdist_plan.py): files that share
a session fixture are one unit, units go longest first, and every file in the plan exists."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import xdist_plan

pytestmark = pytest.mark.unit
TESTS = Path(__file__).resolve().parent


def test_files_sharing_a_session_fixture_are_one_unit():
    a = xdist_plan.scope("tests/test_attribution_integration.py")
    assert a == xdist_plan.scope("tests/test_report_browser_integration.py") == \
        "small_real_campaign"
    assert xdist_plan.scope("tests/test_kill_real_integration.py") == "real_serial_reference"
    assert xdist_plan.scope("tests/test_vad_unit.py") == "tests/test_vad_unit.py"


def test_every_file_named_in_the_plan_exists_and_uses_its_fixture():
    for fixture, names in xdist_plan.SHARED.items():
        for name in names:
            assert fixture in (TESTS / name).read_text(encoding="utf-8"), (fixture, name)
    for name in xdist_plan.WALL_S:
        assert (TESTS / name).is_file(), name


def test_workers_get_the_longest_units_first_in_a_stable_order():
    def item(nodeid):
        return SimpleNamespace(nodeid=nodeid)

    ids = ["tests/test_a_unit.py::t1", "tests/test_attribution_integration.py::t",
           "tests/test_b_unit.py::t", "tests/test_bot_inproc_integration.py::t1",
           "tests/test_a_unit.py::t2", "tests/test_report_browser_integration.py::t",
           "tests/test_bot_inproc_integration.py::t2"]
    items = [item(i) for i in ids]
    xdist_plan.order_for_workers(SimpleNamespace(), items)  # not a worker: unchanged
    assert [i.nodeid for i in items] == ids
    xdist_plan.order_for_workers(SimpleNamespace(workerinput={}), items)
    assert [i.nodeid for i in items] == [
        "tests/test_bot_inproc_integration.py::t1", "tests/test_bot_inproc_integration.py::t2",
        "tests/test_attribution_integration.py::t", "tests/test_report_browser_integration.py::t",
        "tests/test_a_unit.py::t1", "tests/test_a_unit.py::t2", "tests/test_b_unit.py::t"]
