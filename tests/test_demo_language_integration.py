"""``rig demo --language es`` end to end at its smallest size (issue 32, item 8): one answer
under the Spanish profile set (3 calls), real espeak-ng, faster-whisper base with language
auto, and the llama.cpp judge; the summary and report are written in the bank's language."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from rig.cli import app

pytestmark = pytest.mark.integration


def test_spanish_demo_smallest(tmp_path: Path) -> None:
    out = tmp_path / "demo-es"
    res = CliRunner().invoke(app, ["demo", "--language", "es", "--answer-id", "es_q01_weak",
                                   "--no-sweep", "--no-audio", "--no-progress",
                                   "--out", str(out)])
    assert res.exit_code == 0, res.output
    rows = pd.read_parquet(out / "calls.parquet")
    assert set(rows["profile_id"]) == {"baseline", "long_pauses", "voice_es_419"}
    assert set(rows["language"]) == {"es"} and rows["score"].notna().all()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["campaign_id"] == "demo-es"
    assert set(summary["profiles"]) >= {"long_pauses", "voice_es_419"}
    assert (out / "report.html").is_file()
