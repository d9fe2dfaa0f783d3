"""The bad-input corpus (issue 19 item 2) walked through the real CLI.

Each case of ``tests/data/bad/cases.yaml`` is given to the command its setup names (``rig
campaign run``, ``rig profiles check``, ``rig monitor ingest --strict``, ``rig monitor
segments``, ``rig stats paired``), in a fresh folder: exit 2, one stderr line naming the file
with the case's ``FILE: FIELD: problem``, no traceback, nothing written, and beside a bad
monitor call the good one still stored. The inputs rig accepts and converts (24-bit WAV, curly
quotes...) load as documented in docs/inputs.md; scorer replies that cannot be parsed are
parse failures, never scores. The walker is ``benchmarks/reliability_bad.py`` (its figures go
into ``benchmarks/reliability.py``).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("reliability_bad",
                                               ROOT / "benchmarks" / "reliability_bad.py")
rb = importlib.util.module_from_spec(_spec)
sys.modules["reliability_bad"] = rb
_spec.loader.exec_module(rb)

SETUPS, CASES = rb.load_cases()
#: corpus files that are no case: the valid templates the cases were made from, the config
#: every ingest case runs under, the good recording beside each bad call, the generator
SUPPORT = {"bank/good_question.yaml", "monitor/range_0_100.yaml", "audio/good.wav",
           "cases.yaml", "make_corpus.py"}


def test_the_index_lists_every_corpus_file():
    listed = {c["file"] for c in CASES}
    on_disk = set()
    for p in rb.CORPUS.rglob("*"):
        rel = p.relative_to(rb.CORPUS).as_posix()
        if p.is_file() and rel not in SUPPORT and "__pycache__" not in rel:
            folder_case = next((f for f in listed if rel.startswith(f + "/")), None)
            on_disk.add(folder_case or rel)
    assert on_disk - listed == set(), "corpus files without a case"
    assert {f for f in listed if not f.startswith("generated/")} - on_disk == set()
    assert len(on_disk) >= 60
    assert all(c["setup"] in SETUPS or c["setup"] in (
        "scorer_reply", "rating_reply", "accept_audio", "accept_bank", "accept_stats")
        for c in CASES)
    kinds = {c["setup"] for c in CASES}
    assert {"bank", "profile", "noise", "pipeline", "monitor_config", "sidecar", "recording",
            "manifest", "stats", "args", "scorer_reply"} <= kinds


@pytest.mark.parametrize("case", CASES, ids=[c["file"] + ":" + c["setup"] for c in CASES])
def test_bad_input(case):
    out = rb.run_case(case, SETUPS)
    assert out.traceback is None, out.traceback
    assert out.ok, f"{case['file']}: {out.problems}\nstderr: {out.stderr}"


@pytest.mark.parametrize("file, setup", [
    ("bank/yaml11_no_category.yaml", "bank"),
    ("profiles/duplicate_key.yaml", "profile"),
    ("audio/mp3_named.wav", "noise"),
    ("monitor/config_score_range_reversed.yaml", "monitor_config"),
    ("stats/inf_score.csv", "stats"),
])
def test_bad_input_in_a_real_process(file, setup):
    """A few cases through ``python -m rig.cli`` (the process boundary: exit status, stderr
    as a terminal-less log sees it)."""
    case = next(c for c in CASES if c["file"] == file and c["setup"] == setup)
    out = rb.run_case(case, SETUPS, subprocess_mode=True)
    assert out.ok, f"{file}: {out.problems}\nstderr: {out.stderr}"


def test_figures_have_the_promised_shape(monkeypatch):
    """``bad_input_figures`` counts what ``walk`` returns (two cases here, to stay quick)."""
    picked = [c for c in CASES if c["file"] in ("bank/tab_indent.yaml", "audio/pcm_24.wav")]
    monkeypatch.setattr(rb, "load_cases", lambda: (SETUPS, picked))
    f = rb.bad_input_figures()
    assert f == {"tried": 2, "named_errors": 1, "accepted": 1, "tracebacks": 0,
                 "rows_lost": 0, "unexpected": []}
