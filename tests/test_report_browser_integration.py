"""report.html of a small real campaign (hibari TTS, mu-law line, Silero VAD with its timer,
faster-whisper tiny.en, llama.cpp judge: tests/test_campaign_integration.py's chain, fewer
calls) opened in headless Chromium from file://, at 1280 px and at a phone's 390 px; and a
made-up campaign's report (tests/demo_rows.py: five profiles, one with a long name, one with
too few pairs, truncated calls), the same way, for the layout: the page, and at 1280 px every
table, fits the window; every plot's dots, zero line and text lie inside what is seen, at a
readable size, with no scroll box. Screenshots are written under the test's tmp dir (or
``$RIG_SCREENSHOTS``) for a person to look at."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest
from browser import (
    chromium,
    layout_facts,
    need_chromium,
    open_page,
    screenshot,
    screenshot_dir,
)
from demo_rows import demo_rows, demo_summary

from rig.campaign.summary_file import load_summary
from rig.report import write_campaign_report
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
    with _window(width) as driver:
        errors = open_page(driver, campaign / "report.html")
        assert errors == []
        assert driver.execute_script(_VERDICT_JS) == verdict_sentences(summary)
        assert driver.execute_script("return document.querySelectorAll("
                                     "'figure svg[role=img] title').length") >= 3
        # usable at this width: the page itself never scrolls sideways (wide tables and
        # plots scroll inside their wrappers)
        assert driver.execute_script("return window.innerWidth") == width
        assert driver.execute_script(_OVERFLOW_JS) <= width
        check_layout(layout_facts(driver), width, "the small real campaign")
        shot = screenshot(driver, screenshot_dir(tmp_path) / f"report_{width}.png")
    assert shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")


@contextmanager
def _window(width: int):
    """A Chromium whose viewport is ``width`` CSS px (a headless window is at least 500 px
    wide: a phone's viewport is emulated)."""
    with chromium(width=max(width, 500), height=900) as driver:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600})
        yield driver


def check_layout(f: dict, width: int, where: str) -> None:
    """The layout promises (docs/report.md) on :func:`browser.layout_facts`' ``f`` at
    ``width`` px: the page never scrolls sideways; at 1280 px no table does either; every
    plot shown is the drawing for this width, with no scroll box, its dots, zero line and
    text inside what is seen, its text at least 10 px."""
    assert f["inner_w"] == width and f["scroll_w"] <= width, (where, width, f["scroll_w"])
    if width >= 1280:
        wide = [t for t in f["tables"] if t["scroll_w"] > t["client_w"] + 1]
        assert wide == [], (where, width, wide)
    assert f["plots"], where
    for p in f["plots"]:
        at = (where, width, p["id"])
        if p["cls"]:
            assert p["cls"] == ("narrow" if width < 600 else "wide"), at
        assert not p["wrap_scrolls"] and p["width_px"] <= width, (at, p)
        assert p["marks_outside"] == 0 and p["texts_outside"] == [], (at, p)
        assert p["min_text_px"] >= 10, (at, p)
        if p["id"] in ("fig-forest", "fig-waterfall"):  # deltas: a line at no change
            assert p["n_zero"] == 1, (at, p)
        if p["id"] in ("fig-forest", "fig-scores"):
            assert p["n_dots"] >= 1, (at, p)


@pytest.mark.parametrize("width", [1280, 390])
def test_a_wide_campaign_fits_the_screen_and_the_phone(tmp_path: Path, width: int) -> None:
    need_chromium()
    summary, rows = demo_summary(), demo_rows()
    page = write_campaign_report(tmp_path / "report.html", summary, rows)
    with _window(width) as driver:
        assert open_page(driver, page) == []
        f = layout_facts(driver)
        check_layout(f, width, "the made-up campaign")
        forest = [p for p in f["plots"] if p["id"] == "fig-forest"]
        assert forest and forest[0]["n_dots"] == len(summary.profiles) - 1
        shot = screenshot(driver, screenshot_dir(tmp_path) / f"demo_report_{width}.png")
        # every note and call opened: still no sideways scroll
        driver.execute_script("document.querySelectorAll('details').forEach(d => d.open = "
                              "true)")
        assert layout_facts(driver)["scroll_w"] <= width
        driver.execute_script("document.getElementById('calls').scrollIntoView()")
        screenshot(driver, screenshot_dir(tmp_path) / f"demo_calls_{width}.png",
                   full_page=False)
    assert shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")
