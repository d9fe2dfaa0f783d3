"""The report's layout logic without a browser (issue 33, item 7): the profile table's column
groups, names cut with their whole text kept, every plot drawn for a screen and for a phone
with every mark inside the phone drawing, no forest interval below 5 pairs, and the words
lost counted in the alignment's words. The browser checks are in
tests/test_report_browser_integration.py; the rows are made up (tests/demo_rows.py)."""

from __future__ import annotations

import re

import pytest
from demo_rows import LONG_NAME, demo_rows, demo_summary

from rig.drilldown import call_words, lost_text
from rig.drilldown.align import align_transcript, alignment_words, lost_words
from rig.report import campaign_report_html
from rig.report.pages import name_cell
from rig.report.plots import NARROW, WIDE, cut, forest_plot, plots_html
from rig.report.table import COLUMNS, GROUPS, columns, groups, profile_table

pytestmark = pytest.mark.unit


def test_every_column_is_in_exactly_one_group_in_order():
    keys = [k for _, ks in GROUPS for k in ks]
    assert sorted(keys) == sorted(c[0] for c in COLUMNS) and len(set(keys)) == len(keys)
    cols = columns(demo_summary().profiles)
    split = groups(cols)
    assert [c for _, cs in split for c in cs] == sorted(
        cols, key=lambda c: keys.index(c[0]))
    assert all(len(cs) <= 7 for _, cs in split)  # few enough columns for 1280 px


def test_a_group_with_no_column_is_left_out():
    cols = [c for c in COLUMNS if c[0] in ("n_pairs", "wer_mean")]
    assert [g for g, _ in groups(cols)] == ["Scores", "What was heard"]


def test_the_table_is_split_and_cuts_long_names_keeping_them_whole_in_title():
    html = profile_table(demo_summary())
    assert html.count("<table class='profiles'>") == len(GROUPS)
    assert html.count(f"title='{LONG_NAME}'") == len(GROUPS)
    assert name_cell("a<b") == "<span class='cut' title='a&lt;b'>a&lt;b</span>"


def test_cut_adds_an_ellipsis_only_when_needed():
    assert cut("short", 10) == "short" and cut("abcdefghij", 5) == "abcd\u2026"


def _svgs(fig: str) -> dict[str, str]:
    return dict(re.findall(r'<svg class="(wide|narrow)"(.*?)</svg>', fig, re.S))


def test_every_plot_is_drawn_wide_and_narrow_with_one_caption():
    html = plots_html(demo_summary(), demo_rows())
    figs = re.findall(r"<figure.*?</figure>", html, re.S)
    assert len(figs) == 4
    for fig in figs:
        svgs = _svgs(fig)
        assert set(svgs) == {"wide", "narrow"} and fig.count("<figcaption>") == 1
        assert f'viewBox="0 0 {WIDE[0]} ' in svgs["wide"]
        assert f'viewBox="0 0 {NARROW[0]} ' in svgs["narrow"]
        # the two titles are labelled apart (one is hidden: display none)
        assert len(set(re.findall(r'aria-labelledby="([^"]+)"', fig))) == 2


def _xs(svg: str) -> list[float]:
    """Every x an element starts or ends at (markers, lines, bars), in user units."""
    out = [float(v) for v in re.findall(r'\b(?:cx|x1|x2)="([-\d.]+)"', svg)]
    out += [float(x) + float(w) for x, w in re.findall(
        r'<rect[^>]*?x="([-\d.]+)"[^>]*?width="([-\d.]+)"', svg)]
    out += [float(v) for v in re.findall(r'([-\d.]+),[-\d.]+', svg)]  # polygon points
    return out


def test_the_narrow_drawings_keep_every_mark_inside_their_width():
    for fig in re.findall(r"<figure.*?</figure>", plots_html(demo_summary(), demo_rows()),
                          re.S):
        narrow = _svgs(fig)["narrow"]
        xs = _xs(narrow)
        assert xs and min(xs) >= 0 and max(xs) <= NARROW[0], (min(xs), max(xs))


def test_the_forest_plot_draws_no_interval_below_5_pairs():
    s = demo_summary()
    assert s.profiles["few_pairs"].n_pairs == 3
    fig = forest_plot(s)
    assert "-7.6 (too few pairs)" in fig and "no interval below 5 pairs" in fig
    assert "few_pairs: -7.6 points (too few pairs: no interval drawn)" in fig
    narrow = _svgs(fig)["narrow"]
    # 3 other profiles with 5+ pairs: 3 intervals of 3 lines each (bar and two caps)
    assert narrow.count('stroke="#0072B2" stroke-width="2.5"') == 3
    assert narrow.count('class="zero"') == 1


def test_words_lost_are_counted_in_the_alignments_words():
    script = "we hired twenty five people"  # normalised: we hired 25 people
    steps = align_transcript(script, "we hired")
    lost = lost_words(steps, ["twenty", "five", "people"], 3, 5)
    assert (lost.n_lost, lost.n_total, lost.n_deleted) == (2, 4, 2)
    assert lost.text() == "2 of 4 words lost (3 of 5 as written)"
    said = alignment_words(steps, lost)
    assert "2 deleted" in said and "of the 2 deleted, 2 were spoken after the turn" in said
    assert "0 missed by the ASR" in said


def test_a_lost_word_the_asr_wrote_anyway_is_said():
    steps = align_transcript("we agreed to restock", "we agreed restock")
    lost = lost_words(steps, ["restock"], 1, 4)
    assert (lost.n_lost, lost.n_deleted) == (1, 0)
    assert "1 of the 1 lost words align with a word the ASR wrote" in alignment_words(
        steps, lost)


def test_the_call_line_and_the_alignment_say_the_same_count():
    row = demo_rows().iloc[-1].to_dict()  # few_pairs: the script's last words lost
    words, steps, lost = call_words(row, None)
    assert sum(w.lost for w in words) == row["words_lost"] == lost.n_deleted
    assert lost_text(row, lost) == f"{row['words_lost']} of {row['words_total']} words lost"
    assert f"of the {lost.n_deleted} deleted, {lost.n_deleted} were spoken" in \
        alignment_words(steps, lost)
    assert lost_text({"words_lost": 2, "words_total": 9}, None) == "2 of 9 words lost"


def test_the_page_says_the_repeated_note_once_and_the_cut_list(tmp_path):
    html = campaign_report_html(tmp_path, demo_summary(), demo_rows())
    assert re.search(r"Truncated calls: 3 of \d+ shown", html)
    notes = re.search(r"<details><summary>n/a and notes.*?</details>", html, re.S)
    items = re.findall(r"<li>.*?</li>", notes.group(0)) if notes else []
    assert len(items) == len(set(items))


def test_the_probe_and_monitor_figures_have_a_phone_drawing_with_every_mark_inside():
    from rig.report.svgplot import ForestRow, forest_svg, lines_svg

    rows = [ForestRow("a category with a name far too long for a phone's line", -1.2,
                      (-4.5, 1.2), "plain"),
            ForestRow("b", None, series="anti_bias", why="one question: no interval " * 4),
            ForestRow("c", 0.4, (-0.1, 0.9), "a third series named at some length")]
    fig = forest_svg(rows, xlabel="hedged - confident (points)", title="t", caption="c",
                     band=(-0.5, 0.5), band_label="noise floor")
    weeks = [f"2025-W{i:02d}" for i in range(1, 13)]
    lines = lines_svg(weeks, {f"segment {i}": [0.5 + 0.04 * k for k in range(12)]
                              for i in range(5)}, ylabel="impact ratio", title="t",
                      caption="c", threshold=0.8, threshold_label="0.8: four-fifths line")
    for f in (fig, lines):
        narrow = _svgs(f)["narrow"]
        xs = _xs(narrow)
        assert xs and min(xs) >= 0 and max(xs) <= NARROW[0], (min(xs), max(xs))
    assert _svgs(fig)["narrow"].count('class="zero"') == 1
    # a phone shows 4 week labels, not 12
    assert len(re.findall(r">2025-W\d\d</text>", _svgs(lines)["narrow"])) <= 4
