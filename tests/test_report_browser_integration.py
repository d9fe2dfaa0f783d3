"""report.html of a small real campaign (hibari TTS, mu-law line, Silero VAD with its timer,
faster-whisper tiny.en, llama.cpp judge: tests/test_campaign_integration.py's chain, fewer
calls) opened in headless Chromium from file://, at 1280 px and at a phone's 390 px.
Screenshots are written under the test's tmp dir for a person to look at."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from browser import chromium, need_chromium, open_page, screenshot

from rig.campaign.summary_file import load_summary
from rig.report.verdict import verdict_sentences

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]

_VERDICT_JS = ("return Array.from(document.querySelectorAll('#verdict ul.verdict > li'))"
               ".map(li => li.textContent)")
_OVERFLOW_JS = "return document.documentElement.scrollWidth"


@pytest.fixture(scope="module")
def campaign(small_real_campaign: Path) -> Path:
    """conftest's shared campaign: 2 answers x (baseline, long_pauses, short_pauses)."""
    need_chromium()
    return small_real_campaign


@pytest.mark.parametrize("width", [1280, 390])
def test_the_report_loads_clean_and_says_the_verdict(campaign: Path, tmp_path: Path,
                                                     width: int) -> None:
    summary = load_summary(campaign / "summary.json")
    rows = pd.read_parquet(campaign / "calls.parquet")
    assert len(rows) == 6 and (rows["status"] == "ok").all()
    with chromium(width=max(width, 500), height=900) as driver:
        # headless windows are at least 500 px wide: a phone's viewport is emulated
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600})
        errors = open_page(driver, campaign / "report.html")
        assert errors == []
        assert driver.execute_script(_VERDICT_JS) == verdict_sentences(summary)
        assert driver.execute_script("return document.querySelectorAll("
                                     "'figure svg[role=img] title').length") >= 3
        # usable at this width: the page itself never scrolls sideways (wide tables and
        # plots scroll inside their wrappers)
        assert driver.execute_script("return window.innerWidth") == width
        assert driver.execute_script(_OVERFLOW_JS) <= width
        shot = screenshot(driver, tmp_path / f"report_{width}.png")
    assert shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")
