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


def test_rows_identical_ignores_runtime_columns_and_names_a_changed_one(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("rows_identical", BENCH / "rows_identical.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    import json

    def write(name, rows):
        d = tmp_path / name
        d.mkdir()
        (d / "calls.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        return d

    base = {"call_id": "c1", "score": 71.25, "wer": 0.0322580645, "t_asr_s": 1.0,
            "campaign_id": "demo"}
    a = write("a", [base])
    b = write("b", [dict(base, t_asr_s=9.0, campaign_id="other")])
    assert mod.compare(a, b) == 0
    assert "identical: 1 calls" in capsys.readouterr().out
    c = write("c", [dict(base, score=71.25000000000001)])  # bit for bit
    assert mod.compare(a, c) == 1
    out = capsys.readouterr().out
    assert "c1 score: 71.25 != 71.25000000000001" in out and "different: 1 of 1" in out
