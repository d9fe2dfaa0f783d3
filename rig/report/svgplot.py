"""Hand-written inline SVG figures for rig's offline pages: a forest (dot-and-interval) plot and
a line plot across weeks, each with its text alternative.

Why not matplotlib here: these two figures are a few lines and labels, and written by hand
they scale with the page (a ``viewBox``, no fixed pixel size), keep their text as text (a
screen reader and a search find it), print sharply, and need no font or backend. Colours are
:data:`rig.report.pages.PALETTE` (Okabe-Ito) and each series also has its own marker shape, so the
figure reads without colour too.

Every figure is a ``<figure>`` holding the ``<svg role="img">`` with a ``<title>`` and a
``<desc>`` (the values in words: the text alternative a screen reader speaks), and a visible
``<figcaption>`` (:func:`rig.report.svg.figure`, as the campaign report's plots; styled by
:data:`rig.report.pages.CSS`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from rig.report import svg
from rig.report.pages import PALETTE
from rig.report.svg import esc, marker

MARKERS = ("circle", "square", "diamond", "triangle")
_W = 720
_LABEL_W = 210
_RIGHT = 20
_ROW_H = 26


def num(v: float | None, digits: int = 2) -> str:
    """A number for a sentence: a proper minus sign, ``n/a`` for None."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v:.{digits}f}".replace("-", "\u2212")


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering ``lo`` to ``hi`` (steps of 1, 2, 2.5 or 5 x
    10^k, :func:`rig.report.svg.nice_ticks`): the first tick is at or below ``lo`` and the last
    at or above ``hi``, so no value in [lo, hi] is drawn outside the axis (a monitor's impact
    ratio of 1.09 fell above a 0-1 axis, out of the picture, before)."""
    if hi <= lo:
        hi = lo + 1.0
    return svg.nice_ticks(lo, hi, n + 1, steps=(1, 2, 2.5, 5), cover=True)


def _figure(svg_body: str, width: float, height: float, title: str, desc: str,
            caption: str) -> str:
    # the campaign report's figure wrapper, with an id from the content; the caption is HTML
    return svg.figure(None, width, height, title, desc, svg_body, caption,
                      caption_is_html=True, font_size=12)


@dataclass(frozen=True)
class ForestRow:
    """One row of a forest plot: an estimate with its interval (None: not computable, the
    reason shown in its place), in series ``series`` (the legend's entry)."""
    label: str
    estimate: float | None
    ci: Sequence[float] | None = None
    series: str = ""
    why: str = ""


def forest_svg(rows: Sequence[ForestRow], *, xlabel: str, title: str, caption: str,
               ref: float | None = 0.0, band: Sequence[float] | None = None,
               band_label: str = "", limits: Sequence[float] | None = None) -> str:
    """A forest (dot-and-interval) plot, one row per :class:`ForestRow`, as a ``<figure>``.

    ``ref``: a vertical dashed line (the value of no difference); ``band``: a shaded
    [low, high] region (a noise floor) named ``band_label``. Rows of different ``series``
    get the palette's colours and marker shapes in order, with a legend. ``limits``: the
    x axis's range (default: the data's, padded). ``caption`` is already-escaped HTML.
    """
    series = list(dict.fromkeys(r.series for r in rows))
    style = {s: (PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)])
             for i, s in enumerate(series)}
    vals = [v for r in rows for v in ([r.estimate] if r.estimate is not None else [])
            + list(r.ci or [])]
    vals += [ref] if ref is not None else []
    vals += list(band or [])
    lo, hi = (min(vals), max(vals)) if vals else (-1.0, 1.0)
    pad = (hi - lo) * 0.05 or 0.5
    ticks = nice_ticks(*limits) if limits else nice_ticks(lo - pad, hi + pad)
    lo, hi = ticks[0], ticks[-1]
    legend_h = 22 if len(series) > 1 else 0
    top = 8 + legend_h
    height = top + _ROW_H * len(rows) + 44

    def x_of(v: float) -> float:
        return _LABEL_W + (v - lo) / (hi - lo) * (_W - _LABEL_W - _RIGHT)

    parts = []
    if band:
        parts.append(f'<rect x="{x_of(band[0]):.1f}" y="{top}" width="'
                     f'{x_of(band[1]) - x_of(band[0]):.1f}" height="{_ROW_H * len(rows)}" '
                     'fill="#000" fill-opacity="0.08"/>')
    base = top + _ROW_H * len(rows)
    for t in ticks:
        parts.append(f'<line x1="{x_of(t):.1f}" y1="{top}" x2="{x_of(t):.1f}" y2="{base}" '
                     'stroke="#e4e4e4"/>'
                     f'<text x="{x_of(t):.1f}" y="{base + 15}" text-anchor="middle" '
                     f'fill="#333">{esc(num(t, _digits(ticks)))}</text>')
    if ref is not None:
        parts.append(f'<line x1="{x_of(ref):.1f}" y1="{top}" x2="{x_of(ref):.1f}" '
                     f'y2="{base}" stroke="#555" stroke-dasharray="4 3"/>')
    parts.append(f'<text x="{(_LABEL_W + _W - _RIGHT) / 2:.0f}" y="{base + 34}" '
                 f'text-anchor="middle" fill="#222">{esc(xlabel)}</text>')
    for i, r in enumerate(rows):
        y = top + _ROW_H * i + _ROW_H / 2
        colour, mark = style[r.series]
        label = r.label if len(r.label) <= 30 else r.label[:29] + "\u2026"
        parts.append(f'<text x="{_LABEL_W - 8}" y="{y + 4:.1f}" text-anchor="end" '
                     f'fill="#222">{esc(label)}</text>')
        if r.estimate is None:
            parts.append(f'<text x="{_LABEL_W + 4}" y="{y + 4:.1f}" fill="#666">'
                         f'not computable{": " + esc(r.why[:60]) if r.why else ""}</text>')
            continue
        if r.ci:
            parts.append(f'<line x1="{x_of(r.ci[0]):.1f}" y1="{y:.1f}" x2="{x_of(r.ci[1]):.1f}"'
                         f' y2="{y:.1f}" stroke="{colour}" stroke-width="2.5"/>')
        parts.append(marker(mark, x_of(r.estimate), y, colour, 5.0))
    if len(series) > 1:
        x = _LABEL_W
        for s in series:
            colour, mark = style[s]
            parts.append(marker(mark, x + 5, 12, colour, 4.5)
                         + f'<text x="{x + 14}" y="{16}" fill="#222">{esc(s)}</text>')
            x += 24 + 7 * len(s)
    if band:
        parts.append(f'<text x="{x_of(band[1]) + 3:.1f}" y="{top + 11}" fill="#555" '
                     f'font-size="10">{esc(band_label)}</text>')
    desc = "; ".join(
        f"{r.label}{' (' + r.series + ')' if r.series else ''}: "
        + (f"{num(r.estimate)}" + (f", 95% CI {num(r.ci[0])} to {num(r.ci[1])}" if r.ci
                                   else "")
           if r.estimate is not None else "not computable")
        for r in rows)
    return _figure("".join(parts), _W, height, title, f"{xlabel}. {desc}.", caption)


def _digits(ticks: Sequence[float]) -> int:
    """The fewest decimals (up to 3) that write every tick exactly (0.25 needs 2)."""
    for d in range(4):
        if all(abs(round(t, d) - t) < 1e-9 for t in ticks):
            return d
    return 3


def lines_svg(x_labels: Sequence[str], series: dict[str, Sequence[float | None]], *,
              ylabel: str, title: str, caption: str, threshold: float | None = None,
              threshold_label: str = "", y_min: float = 0.0) -> str:
    """Lines across ``x_labels`` (weeks), one per entry of ``series`` (None: no point that
    week, the line breaks), with a dashed horizontal ``threshold`` line, as a ``<figure>``.
    ``caption`` is already-escaped HTML."""
    names = list(series)
    style = {s: (PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)])
             for i, s in enumerate(names)}
    vals = [v for vs in series.values() for v in vs if v is not None]
    vals += [threshold] if threshold is not None else []
    ticks = nice_ticks(min([y_min, *vals]), max(vals or [1.0]))
    lo, hi = ticks[0], ticks[-1]
    left, top, plot_h = 56, 10, 220
    legend_rows = math.ceil(len(names) / 4)
    height = top + plot_h + 48 + 18 * legend_rows
    n = len(x_labels)

    def x_of(i: int) -> float:
        return left + (i + 0.5) * (_W - left - _RIGHT) / max(1, n)

    def y_of(v: float) -> float:
        return top + plot_h - (v - lo) / (hi - lo) * plot_h

    parts = []
    for t in ticks:
        parts.append(f'<line x1="{left}" y1="{y_of(t):.1f}" x2="{_W - _RIGHT}" '
                     f'y2="{y_of(t):.1f}" stroke="#e4e4e4"/><text x="{left - 6}" '
                     f'y="{y_of(t) + 4:.1f}" text-anchor="end" fill="#333">'
                     f'{esc(num(t, _digits(ticks)))}</text>')
    every = max(1, math.ceil(n / 10))
    for i, w in enumerate(x_labels):
        if i % every == 0 or i == n - 1:
            parts.append(f'<text x="{x_of(i):.1f}" y="{top + plot_h + 16}" '
                         f'text-anchor="middle" fill="#333">{esc(w)}</text>')
    if threshold is not None:
        parts.append(f'<line x1="{left}" y1="{y_of(threshold):.1f}" x2="{_W - _RIGHT}" '
                     f'y2="{y_of(threshold):.1f}" stroke="{PALETTE[3]}" stroke-width="1.5" '
                     f'stroke-dasharray="6 4"/><text x="{_W - _RIGHT - 2}" '
                     f'y="{y_of(threshold) - 5:.1f}" text-anchor="end" fill="{PALETTE[3]}">'
                     f'{esc(threshold_label)}</text>')
    parts.append(f'<text transform="translate(14 {top + plot_h / 2:.0f}) rotate(-90)" '
                 f'text-anchor="middle" fill="#222">{esc(ylabel)}</text>')
    for s, vs in series.items():
        colour, mark = style[s]
        run: list[str] = []
        for i, v in enumerate([*vs, None]):
            if v is None:
                if len(run) > 1:
                    parts.append(f'<polyline points="{" ".join(run)}" fill="none" '
                                 f'stroke="{colour}" stroke-width="2"/>')
                run = []
                continue
            run.append(f"{x_of(i):.1f},{y_of(v):.1f}")
            parts.append(marker(mark, x_of(i), y_of(v), colour, 4.0))
    for j, s in enumerate(names):
        colour, mark = style[s]
        x = left + (j % 4) * 165
        y = top + plot_h + 36 + 18 * (j // 4)
        label = s if len(s) <= 20 else s[:19] + "\u2026"
        parts.append(marker(mark, x + 5, y - 4, colour, 4.5)
                     + f'<text x="{x + 14}" y="{y}" fill="#222">{esc(label)}</text>')
    desc = "; ".join(f"{s}: " + ", ".join(f"{w} {num(v)}" for w, v in zip(x_labels, vs,
                                                                           strict=True))
                     for s, vs in series.items())
    extra = f" Dashed line: {threshold_label}." if threshold is not None else ""
    return _figure("".join(parts), _W, height, title, f"{ylabel} by week.{extra} {desc}.",
                   caption)
