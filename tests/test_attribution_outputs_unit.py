"""Stage attribution where a reader meets it: report.html's section, the CLI summary line and
the gate's reasons (rows are fakes: tests/test_attribution_unit.py's)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_attribution_unit import attributed_rows

from rig.campaign.attribution import split_text
from rig.campaign.summary import campaign_summary
from rig.gate.campaigns import Campaign
from rig.gate.evaluate import evaluate_gate
from rig.gate.policy import GatePolicy
from rig.report import write_campaign_report

pytestmark = pytest.mark.unit


def test_the_report_has_the_split(tmp_path: Path) -> None:
    rows = attributed_rows()
    s = campaign_summary(rows, campaign_id="c", pipeline_version="v1", n_boot=100)
    page = write_campaign_report(tmp_path / "report.html", s, rows).read_text()
    line = split_text(s.profiles["long_pauses"].attribution)
    # the split beside the profile's row header (its name is not repeated in the cell)
    assert "Stage attribution" in page and f"<td class='text'>{line}</td>" in page


def test_the_report_leaves_the_section_out_without_the_columns(tmp_path: Path) -> None:
    rows = attributed_rows().drop(columns=["loss_turn_detection", "loss_asr"])
    s = campaign_summary(rows, campaign_id="c", pipeline_version="v1", n_boot=50)
    page = write_campaign_report(tmp_path / "report.html", s, rows).read_text()
    assert "Stage attribution" not in page


def test_the_cli_summary_prints_the_split(tmp_path: Path, capsys) -> None:
    from rig.cli.campaign import _print_summary

    s = campaign_summary(attributed_rows(), campaign_id="c", pipeline_version="v1",
                         n_boot=50)
    _print_summary(s, tmp_path)
    out = capsys.readouterr().out
    assert f"long_pauses: {split_text(s.profiles['long_pauses'].attribution)}" in out


def test_the_gates_reasons_show_the_split() -> None:
    cand = Campaign.from_rows(attributed_rows(seed=3), "candidate")
    prev = Campaign.from_rows(attributed_rows(seed=4), "previous")
    res = evaluate_gate(cand, prev, GatePolicy(n_boot=50), include_tables=False)
    flip = [c for c in res.checks if c.check == "flip_rate" and c.subject == "long_pauses"]
    assert flip and "delta split: candidate " in flip[0].reason
    assert "turn detection" in flip[0].reason and "previous " in flip[0].reason
    assert flip[0].detail["attribution"]["candidate"]["n_pairs"] == 8
    assert flip[0].to_dict()["detail"]["attribution"]["candidate"]["mean_delta_ci95"]
