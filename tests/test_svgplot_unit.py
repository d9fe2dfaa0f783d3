"""rig.report.svgplot's figures keep every value on the axis: the monitor's weekly impact ratio of
1.09 (a small segment beating the reference) was drawn above a 0-1 axis, outside the SVG."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rig.report.svgplot import ForestRow, forest_svg, lines_svg, nice_ticks

pytestmark = pytest.mark.unit


def _view_h(svg: str) -> float:
    return float(re.search(r'viewBox="0 0 \S+ (\S+)"', svg)[1])


def _marker_ys(svg: str) -> list[float]:
    # markers are circles/paths/rects/polygons: take every y-ish coordinate of the lines' runs
    runs = re.findall(r'<polyline points="([^"]+)"', svg)
    return [float(p.split(",")[1]) for r in runs for p in r.split()]


@settings(max_examples=100, deadline=None)
@given(lo=st.floats(-1e6, 1e6), span=st.floats(1e-3, 1e6))
def test_ticks_cover_the_range(lo, span):
    hi = lo + span
    ticks = nice_ticks(lo, hi)
    tol = 1e-9 * max(1.0, abs(lo), abs(hi))  # ticks are rounded to 10 decimals
    assert ticks[0] <= lo + tol and ticks[-1] >= hi - tol


def test_an_impact_ratio_above_1_is_inside_the_plot():
    svg = lines_svg(["2026-W01", "2026-W02", "2026-W03"],
                    {"acme": [0.9, 0.95, 1.09], "ref": [1.0, 1.0, 1.0]},
                    ylabel="impact ratio", title="t", caption="c", threshold=0.8)
    ys = _marker_ys(svg)
    assert ys and all(0 <= y <= _view_h(svg) for y in ys)
    top = min(float(y) for y in re.findall(r'<line x1="56" y1="([\d.]+)"', svg))
    assert min(ys) >= top  # the highest point is on or under the top gridline


def test_a_forest_keeps_every_interval_on_its_axis():
    svg = forest_svg([ForestRow("a", 1.09, (0.2, 1.7)), ForestRow("b", -0.3, (-0.9, 0.1))],
                     xlabel="x", title="t", caption="c")
    xs = [float(x) for x in re.findall(r'<line x1="([\d.]+)"', svg)]
    width = float(re.search(r'viewBox="0 0 (\S+) ', svg)[1])
    assert all(0 <= x <= width for x in xs)
