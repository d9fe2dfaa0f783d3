"""`rig campaign run --help` and `rig demo --help` put the common options first, the rest in
named panels after them (issue 33, item 8)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rig.cli import app

pytestmark = pytest.mark.unit


def test_campaign_run_help_leads_with_the_common_options():
    out = CliRunner().invoke(app, ["campaign", "run", "--help"], env={"COLUMNS": "100"}).stdout
    panels = ["Options", "Selection", "Repeats and the noise floor",
              "Real calls (transports, bots)", "Workers and threads"]
    at = [out.index(f"─ {p} ") for p in panels]
    assert at == sorted(at), out
    common = out[:at[1]]
    for opt in ("--answers", "--profiles", "--pipeline", "--out", "--repeats", "--profile"):
        assert opt in common
    for opt in ("--transport", "--twilio-to", "--executor", "--ray-address", "--n-boot"):
        assert opt not in common and opt in out


def test_demo_help_puts_the_noise_floor_option_after_the_common_ones():
    out = CliRunner().invoke(app, ["demo", "--help"], env={"COLUMNS": "100"}).stdout
    panel = out.index("─ Repeats and the noise floor ")
    assert out.index("│ --out") < panel < out.index("│ --vary-delivery")
