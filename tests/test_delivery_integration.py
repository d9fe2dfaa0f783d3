"""The noise floor of the deterministic reference pipeline, measured by the path the output
suggests (issue 33, item 3): `rig campaign run ... --vary-delivery 5` on a tiny campaign
through every real stage (hibari, the 8 kHz line, Silero VAD, Whisper, the llama.cpp judge).
Each repeat is spoken at its own rate, so the baseline's repeats are run, not skipped, and
differ; the floor is measured rather than "not measured"."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from rig.cli import app

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]


def test_vary_delivery_measures_the_floor_of_a_deterministic_pipeline(tmp_path):
    out = tmp_path / "floor"
    res = CliRunner().invoke(app, [
        "campaign", "run", "--answers", str(ROOT / "answer_bank" / "mini"),
        "--profiles", str(ROOT / "profiles" / "demo"),
        "--pipeline", str(ROOT / "pipelines" / "reference.yaml"), "--out", str(out),
        "--profile", "baseline", "--answer-id", "q01_strong", "--answer-id", "q01_border_hi",
        "--baseline-repeats", "2", "--vary-delivery", "5", "--no-progress", "--no-audio"])
    assert res.exit_code == 0, res.output
    meta = json.loads((out / "campaign.json").read_text())
    summary = json.loads((out / "summary.json").read_text())
    assert meta["delivery_sd_pct"] == 5.0 and summary["repeats_skipped"]["n"] == 0
    rows = pd.read_parquet(out / "calls.parquet")
    assert len(rows) == 4 and (rows["status"] == "ok").all()
    # each (answer, repeat) spoken at its own rate
    assert rows.groupby("answer_id")["pace_rate_used"].nunique().eq(2).all()
    nf = summary["noise_floor"]
    # q01_strong's two deliveries are transcribed differently (measured: the transcripts
    # differ, the WER does not), so the judge's scores differ and the floor is measured
    assert nf["measured"] is True, nf["reason"]
    assert nf["repeat_sd"] is not None and nf["n_repeat_pairs"] == 2
    assert "noise floor: " not in res.stdout  # nothing to advise ...
    # ... and the measured floor is said on screen, in points (issue 33's fresh-clone tester)
    assert "noise floor (baseline): one call's score moves by SD" in res.stdout
