"""report.html's structure without a browser: verdict first, plots with text alternatives,
real table headers with column help, no external URL anywhere but in text (rows are fakes,
the summary is real: tests/test_attribution_unit.py's rows)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from summaries import profile_like, real_summary, summary_like
from test_attribution_unit import attributed_rows

from rig.campaign.schema import CampaignSummary
from rig.campaign.summary import campaign_summary
from rig.report import write_campaign_report
from rig.report.pages import PALETTE
from rig.report.verdict import verdict_sentences

pytestmark = pytest.mark.unit


class Page(HTMLParser):
    """Tags with their attributes, the text of each verdict item, and every text run."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.stack: list[str] = []
        self.verdict: list[str] = []
        self.in_verdict = False
        self.in_li = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "ul" and "verdict" in (a.get("class") or ""):
            self.in_verdict = True
        if tag == "li" and self.in_verdict:
            self.in_li = True
            self.verdict.append("")

    def handle_endtag(self, tag):
        if tag == "ul":
            self.in_verdict = False
        if tag == "li":
            self.in_li = False

    def handle_data(self, data):
        if self.in_li and self.in_verdict:
            self.verdict[-1] += data


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> tuple[str, Page, CampaignSummary]:
    rows = attributed_rows()
    s = campaign_summary(rows, campaign_id="c", pipeline_version="v1", n_boot=100)
    path = write_campaign_report(tmp_path_factory.mktemp("r") / "report.html", s, rows)
    text = path.read_text()
    p = Page()
    p.feed(text)
    return text, p, s


def test_the_verdict_comes_first_and_says_the_sentences(page) -> None:
    text, p, s = page
    assert p.verdict == verdict_sentences(s)
    assert text.index("id=\"verdict\"") < text.index("id='plots'") < text.index("<table")


def test_no_external_url_outside_text(page) -> None:
    text, p, _ = page
    for tag, attrs in p.tags:
        for k, v in attrs.items():
            assert not re.search(r"https?://", v or ""), (tag, k, v)
        assert tag not in ("link", "iframe", "img") and not (tag == "script" and "src" in
                                                              attrs)
    css = re.findall(r"<style>(.*?)</style>", text, re.S)
    assert css and not any("url(" in c or "@import" in c for c in css)


def test_plots_have_text_alternatives_and_the_palette(page) -> None:
    text, p, s = page
    svgs = [a for t, a in p.tags if t == "svg"]
    # forest, rates, waterfall, scores: each drawn for a screen and for a phone
    assert [a["class"] for a in svgs] == ["wide", "narrow"] * 4
    for a in svgs:
        assert a["role"] == "img" and len(a["aria-labelledby"].split()) == 2
        for ref in a["aria-labelledby"].split():
            assert f'id="{ref}"' in text
    assert text.count("<figcaption>") == 4
    lp = s.profiles["long_pauses"]
    assert f"{lp.n_flips}/{lp.n_pairs}" in text  # the rates plot says its numbers
    assert PALETTE[0] in text and PALETTE[1] in text


def test_table_headers_have_scope_and_help(page) -> None:
    _, p, s = page
    ths = [a for t, a in p.tags if t == "th"]
    assert ths and all(a.get("scope") in ("col", "row") for a in ths)
    rows = [a for a in ths if a["scope"] == "row"]
    assert len(rows) >= len(s.profiles)
    helps = [a["title"] for t, a in p.tags if t == "abbr"]
    assert any("points" in h for h in helps) and all(h for h in helps)


def test_the_calls_section_comes_from_the_drilldown(tmp_path: Path, monkeypatch) -> None:
    import rig.drilldown

    seen = {}

    def fake(campaign_dir, summary, rows):
        seen["dir"] = campaign_dir
        return "<section id='calls'>CALLS</section>"

    monkeypatch.setattr(rig.drilldown, "drilldown_html", fake)
    rows = attributed_rows(n_answers=3, repeats=1)
    s = campaign_summary(rows, campaign_id="c", pipeline_version="v1", n_boot=50)
    text = write_campaign_report(tmp_path / "report.html", s, rows).read_text()
    assert seen["dir"] == tmp_path and text.index("<table") < text.index("CALLS")


def test_an_empty_campaign_still_writes_a_page(tmp_path: Path) -> None:
    import pandas as pd

    s = campaign_summary(pd.DataFrame(), campaign_id="c", pipeline_version="v", n_boot=50)
    text = write_campaign_report(tmp_path / "r.html", s, pd.DataFrame()).read_text()
    assert "Pipeline version v; 0 calls; the baseline profile is baseline." in text
    assert "<svg" not in text


def test_the_forest_caption_names_the_band_only_when_one_is_drawn() -> None:
    from rig.report.plots import forest_plot

    prof = profile_like(mean_delta=-3.0, t_ci95=(-5.0, -1.0), ci95=None, n_pairs=5,
                        noise_floor_mean_delta_limit=None)
    base = real_summary().profiles["baseline"]
    s = summary_like(profiles={"baseline": base, "slow": prof})
    assert "noise floor was not measured" in forest_plot(s) and "<rect" not in forest_plot(s)
    s = summary_like(profiles={"baseline": base, "slow": profile_like(
        prof, noise_floor_mean_delta_limit=2.0)})
    assert "grey band: what repeat noise alone can give" in forest_plot(s)
    assert "<rect" in forest_plot(s)


def test_the_waterfall_writes_steps_that_add_up_to_its_total() -> None:
    from rig.report.plots import waterfall_plot

    a = {"mean_delta": -23.42, "turn_detection": -23.14, "asr": -0.14, "rest": -0.14}
    s = summary_like(profiles={"baseline": real_summary().profiles["baseline"],
                               "lp": profile_like(attribution=a)})
    # each rounded on its own: -23.1 - 0.1 - 0.1 = -23.3, written beside a total of -23.4
    assert ("lp: turn detection -23.2, ASR -0.1, rest (scorer noise) -0.1, total -23.4"
            in waterfall_plot(s))
