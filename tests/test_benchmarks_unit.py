"""benchmarks/reliability.py loads each part's script as a module (no run here)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def test_reliability_loads_the_kill_and_bad_input_parts():
    spec = importlib.util.spec_from_file_location("reliability", BENCH / "reliability.py")
    rel = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rel)
    # a module defining a dataclass must be in sys.modules while it executes
    assert callable(rel._module(BENCH / "reliability_bad.py", "bad").bad_input_figures)
    assert callable(rel._module(BENCH / "reliability_kill.py", "kills").kill_figures)
