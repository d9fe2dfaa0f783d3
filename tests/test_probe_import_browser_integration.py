"""``rig probe import``'s report in headless Chromium at 1280 and 390 px: no sideways scroll
of the page or of the pairs' table, no table row taller than a few lines (a pair's warnings
made a tall, mostly blank row at phone width), every pair's warnings shown below the table.
The run's scorer and embedder are the unit tests' fakes; the browser is real."""

from __future__ import annotations

import pytest
from browser import chromium, layout_facts, open_page, screenshot, screenshot_dir, set_viewport
from test_probe_import_unit import ROWS, embed, hedge_penalty

from rig.probes.replicate import ImportSpec, run_import
from rig.scorer.fake import FakeScorer

pytestmark = pytest.mark.integration

_ROWS_JS = """
return {rows: Array.from(document.querySelectorAll('tbody tr'))
                   .map(r => r.getBoundingClientRect().height),
        warnings: Array.from(document.querySelectorAll('details li')).map(l => l.textContent),
        details_w: Array.from(document.querySelectorAll('details'))
                        .map(d => d.getBoundingClientRect().right)};
"""


def test_the_import_report_fits_a_screen_and_a_phone(tmp_path):
    import pandas as pd

    src = tmp_path / "bench.csv"
    pd.DataFrame(ROWS, columns=["Question", "Confident Answer", "Hedged Answer",
                                "Category"]).to_csv(src, index=False)
    res = run_import(ImportSpec(src, tmp_path / "imp"), FakeScorer(hedge_penalty),
                     embedder=embed)
    page = res.out_dir / "report.html"
    warnings = [w for p in res.summary.pairs for w in p.warnings]
    shots = screenshot_dir(tmp_path / "screenshots")
    with chromium(width=1280) as driver:
        for width in (1280, 390):
            if width < 500:
                set_viewport(driver, width)
            assert open_page(driver, page) == [], width
            f = layout_facts(driver)
            assert f["scroll_w"] <= width, (width, f)
            assert [t for t in f["tables"] if t["scroll_w"] > t["client_w"] + 1] == [], \
                (width, f["tables"])
            r = driver.execute_script(_ROWS_JS)
            assert len(r["rows"]) == len(ROWS) and max(r["rows"]) < 90, (width, r)
            assert sorted(r["warnings"]) == sorted(warnings) and warnings
            assert max(r["details_w"]) <= width, (width, r)
            screenshot(driver, shots / f"probe_import_{width}.png")
