"""Ratings imported into a real campaign (the session's small_real_campaign, copied: real
TTS, line, VAD, ASR and llama.cpp judge), then ``rig campaign summarize``: ``summary.json``
holds ``human_ratings`` with the judge-human agreement and the prediction-powered figures per
profile, and ``report.html`` shows them. The figures are checked against the call rows (the
judge-only means, the rated counts) and, where every unit is rated, against their definition:
PPI with every unit rated is the mean of the human grades."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _rig(*args: str) -> subprocess.CompletedProcess:
    run = subprocess.run([sys.executable, "-m", "rig.cli", *args], capture_output=True,
                         text=True, env=_env(), timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return run


def test_imported_ratings_reach_summary_and_report(small_real_campaign, tmp_path):
    folder = tmp_path / "camp"
    shutil.copytree(small_real_campaign, folder)
    rows = pd.read_parquet(folder / "calls.parquet")
    rows = rows[rows.status == "ok"]
    # ann rates every call, bob the baseline's: human grades near the reference, lower
    # for the truncating profile
    lines = ["call_id,rater,total"]
    human = {}
    for r in rows.itertuples():
        h = float(r.reference_score) - (15.0 if r.profile_id == "long_pauses" else 0.0)
        human[r.call_id] = h
        lines.append(f"{r.call_id},ann,{h:g}")
        if r.profile_id == "baseline":
            lines.append(f"{r.call_id},bob,{h - 4:g}")
    csv = tmp_path / "ratings.csv"
    csv.write_text("\n".join(lines) + "\n")
    out = _rig("ratings", "import", str(csv), "--into", str(folder), "--json")
    assert json.loads(out.stdout)["added"] == len(lines) - 1
    _rig("campaign", "summarize", str(folder), "--n-boot", "200")

    s = json.loads((folder / "summary.json").read_text())
    h = s["human_ratings"]
    assert h["n_raters"] == 2 and h["n_ratings"] == len(lines) - 1
    assert h["n_calls_rated"] == len(rows)
    assert h["inter_rater"]["n_units"] == int((rows.profile_id == "baseline").sum())
    assert h["inter_rater"]["mae_points"] == pytest.approx(4.0)
    for pid, g in rows.groupby("profile_id"):
        p = h["by_profile"][pid]
        assert p["agreement"]["n_units"] == len(g)
        m = p["mean"]
        # per answer: human grade = mean of the raters' (ann's and bob's on the baseline)
        per_answer = [(human[c] + (human[c] - 4)) / 2 if pid == "baseline" else human[c]
                      for c in g.call_id]
        assert m["n_rated"] == len(g) and m["n_unrated"] == 0
        assert m["estimate"] == pytest.approx(sum(per_answer) / len(per_answer), abs=1e-6)
        assert m["judge_only"] == pytest.approx(g.score.mean(), abs=1e-6)
        assert m["ci95"][0] <= m["estimate"] <= m["ci95"][1]
        if pid != "baseline":
            d = p["paired_delta"]
            assert d is not None and d["n_rated"] == len(g)
    assert h["by_profile"]["long_pauses"]["paired_delta"]["estimate"] == pytest.approx(-13.0)
    # the share advanced, in percent: every answer rated, so PPI is people's own share
    for pid, g in rows.groupby("profile_id"):
        adv = h["by_profile"][pid]["advance_rate_pct"]
        per = g.assign(h=g.call_id.map(human)).groupby("answer_id").agg(
            h=("h", "mean"), f=("score", "mean"), cutoff=("cutoff", "first"))
        assert adv["estimate"] == pytest.approx(100 * (per.h >= per.cutoff).mean())
        assert adv["judge_only"] == pytest.approx(100 * (per.f >= per.cutoff).mean())
    assert "ratings.csv" in h["ppi_sample_note"]  # imported, not drawn at random

    imp = s["impact_ratios"]["selection"]["by_profile"]
    assert set(imp) == {"baseline", "long_pauses", "short_pauses"}
    page = (folder / "report.html").read_text()
    assert "Against human ratings" in page and "mean (PPI, 95% CI)" in page
    assert "Impact ratios by profile" in page
    est = h["by_profile"]["long_pauses"]["mean"]["estimate"]
    assert f"{est:.1f}" in page
