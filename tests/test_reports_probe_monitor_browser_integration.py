"""The probe reports (hedging, name swap, dual framing, invariance) and the monitor report in
headless Chromium, from ``file://``, as a reader opens them: no console error, the page and
its figures render, every table header is scoped, nothing is wider than a 390 px phone
(tables and figures scroll in their own box); a screenshot of each at 1280 px and at 390 px
is written under the test's output (or ``$RIG_SCREENSHOTS``) for a person to look at. Every
plot is checked as the campaign report's (check_layout): the drawing for the width, its dots,
zero line and text inside what is seen, at a readable size.

The probe summaries come from real probe runs on a fake scorer, the monitor's from aggregate
rows with a known effect (the builders of tests/test_reports_probe_monitor_unit.py)."""

from __future__ import annotations

import pytest
from browser import chromium, layout_facts, open_page, screenshot, screenshot_dir
from test_report_browser_integration import check_layout
from test_reports_probe_monitor_unit import monitor_aggregates, probe_runs

from rig.monitor.config import MonitorConfig
from rig.monitor.report import report_from_aggregates, write_report

pytestmark = pytest.mark.integration

_PAGE_FACTS_JS = """
const th = Array.from(document.querySelectorAll('th'));
// the figures shown: each is drawn for a screen and for a phone, one hidden
const figs = Array.from(document.querySelectorAll('figure svg'))
                  .filter(s => s.getClientRects().length > 0);
return {h1: (document.querySelector('h1') || {}).textContent || '',
        n_th: th.length, th_unscoped: th.filter(t => !t.getAttribute('scope')).length,
        n_svg: figs.length,
        svg_sizes: figs.map(s => { const r = s.getBoundingClientRect();
                                   return [r.width, r.height]; }),
        svg_labelled: figs.every(s => s.getAttribute('role') === 'img' &&
                                      s.querySelector('title') && s.querySelector('desc')),
        verdict: document.querySelectorAll('.verdict').length,
        scroll_w: document.documentElement.scrollWidth,
        client_w: document.documentElement.clientWidth,
        external: Array.from(document.querySelectorAll('[src],[href]'))
                       .map(e => e.getAttribute('src') || e.getAttribute('href'))
                       .filter(u => /^(https?:)?\\/\\//.test(u))};
"""


def test_probe_and_monitor_reports_load_clean_at_desktop_and_phone_width(tmp_path):
    pages = {k: path for k, (path, _s) in probe_runs(tmp_path / "probes").items()}
    report = report_from_aggregates(monitor_aggregates(), MonitorConfig())
    pages["monitor"] = write_report(report, tmp_path / "monitor")["report"]
    shots = screenshot_dir(tmp_path / "screenshots")
    with chromium(width=1280) as driver:
        for width in (1280, 390):
            if width < 500:  # a desktop window stops at ~500 px: emulate the phone instead
                driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
                    "width": width, "height": 844, "deviceScaleFactor": 1, "mobile": True})
            for name, path in pages.items():
                errors = open_page(driver, path)
                assert errors == [], f"{name} at {width} px: {errors}"
                f = driver.execute_script(_PAGE_FACTS_JS)
                where = f"{name} at {width} px"
                assert f["h1"].strip(), f"{where}: no heading (the page did not load)"
                assert f["n_th"] > 0 and f["th_unscoped"] == 0, where
                assert f["n_svg"] >= 1 and f["svg_labelled"], where
                assert all(w > 100 and h > 50 for w, h in f["svg_sizes"]), (where, f)
                assert f["verdict"] >= 1 and f["external"] == [], where
                assert f["scroll_w"] <= f["client_w"] == (width if width < 500 else
                                                          f["client_w"]), (where, f)
                check_layout(layout_facts(driver), width, name)
                png = screenshot(driver, shots / f"{name}-{width}.png")
                assert png.stat().st_size > 5000
    print(f"screenshots: {shots}")
