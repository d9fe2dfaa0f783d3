"""Hand-written inline SVG figures for rig's offline pages: a forest (dot-and-interval) plot and
a line plot across weeks, each with its text alternative.

Why not matplotlib here: these two figures are a few lines and labels, and written by hand
they scale with the page (a ``viewBox``, no fixed pixel size), keep their text as text (a
screen reader and a search find it), print sharply, and need no font or backend. Colours are
:data:`rig.report.pages.PALETTE` (Okabe-Ito) and each series also has its own marker shape, so the
figure reads without colour too.

Every figure is a ``<figure>`` holding two ``<svg role="img">`` drawings, 720 units wide for a
screen and 360 for a phone (the CSS shows one), each with a ``<title>`` and a ``<desc>`` (the
values in words: the text alternative a screen reader speaks), and one visible
``<figcaption>`` (:func:`rig.report.svg.twin_figure`, as the campaign report's plots; styled
by :data:`rig.report.pages.CSS`).
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
_NARROW_W = 360
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


def _figure(drawings: tuple[tuple[float, float, str], tuple[float, float, str]], title: str,
            desc: str, caption: str) -> str:
    # the campaign report's figure wrapper (a screen's and a phone's drawing), with an id from
    # the content; the caption is HTML
    return svg.twin_figure(None, *drawings, title, desc, caption, caption_is_html=True,
                           font_size=12)


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
    """A forest (dot-and-interval) plot, one row per :class:`ForestRow`, as a ``<figure>``
    drawn twice (:func:`rig.report.svg.twin_figure`: 720 units wide, labels left of the
    rows, and 360 for a phone, labels above them).

    ``ref``: a vertical dashed line (the value of no difference); ``band``: a shaded
    [low, high] region (a noise floor) named ``band_label``. Rows of different ``series``
    get the palette's colours and marker shapes in order, with a legend. ``limits``: the
    x axis's range (default: the data's, padded). ``caption`` is already-escaped HTML.
    """
    args = (rows, xlabel, ref, band, band_label, limits)
    (hw, bw), (hn, bn) = _forest_body(*args, _W, False), _forest_body(*args, _NARROW_W, True)
    desc = "; ".join(
        f"{r.label}{' (' + r.series + ')' if r.series else ''}: "
        + (f"{num(r.estimate)}" + (f", 95% CI {num(r.ci[0])} to {num(r.ci[1])}" if r.ci
                                   else "")
           if r.estimate is not None else "not computable")
        for r in rows)
    return _figure(((_W, hw, bw), (_NARROW_W, hn, bn)), title, f"{xlabel}. {desc}.",
                   caption)


def _legend(series: list[str], style: dict, x0: float, w: float) -> tuple[list[str], int]:
    """The series' legend from ``x0``, wrapping before ``w``: (its parts, its rows)."""
    parts, x, y = [], x0, 16
    for s in series:
        span = 24 + 7 * len(s)
        if x > x0 and x + span > w:
            x, y = x0, y + 18
        colour, mark = style[s]
        parts.append(marker(mark, x + 5, y - 4, colour, 4.5)
                     + f'<text x="{x + 14}" y="{y}" fill="#222">{esc(s)}</text>')
        x += span
    return parts, (y - 16) // 18 + 1


def _forest_body(rows: Sequence[ForestRow], xlabel: str, ref: float | None,
                 band: Sequence[float] | None, band_label: str,
                 limits: Sequence[float] | None, w: int, narrow: bool) -> tuple[float, str]:
    """``(height, body)`` of :func:`forest_svg` ``w`` units wide; ``narrow``: each row's
    label on a line above it."""
    series = list(dict.fromkeys(r.series for r in rows))
    style = {s: (PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)])
             for i, s in enumerate(series)}
    vals = [v for r in rows for v in ([r.estimate] if r.estimate is not None else [])
            + list(r.ci or [])]
    vals += [ref] if ref is not None else []
    vals += list(band or [])
    lo, hi = (min(vals), max(vals)) if vals else (-1.0, 1.0)
    pad = (hi - lo) * 0.05 or 0.5
    ticks = nice_ticks(*limits) if limits else nice_ticks(lo - pad, hi + pad,
                                                          4 if narrow else 5)
    lo, hi = ticks[0], ticks[-1]
    legend, n_legend = _legend(series, style, 12 if narrow else _LABEL_W, w - 6)
    legend_h = 4 + 18 * n_legend if len(series) > 1 else 0
    top = 8 + legend_h
    row_h, left, right = (40, 14, 14) if narrow else (_ROW_H, _LABEL_W, _RIGHT)
    # a phone's labels sit above their rows, wrapped onto at most two lines (a dual-framing
    # topic's title is up to 62 characters); the rows below move down by the extra line
    lines = [_wrap2(r.label, (w - 12) // 8) if narrow else [r.label] for r in rows]
    ys, y0 = [], top
    for ls in lines:
        extra = 14 * (len(ls) - 1)
        ys.append(y0 + extra + (27 if narrow else row_h / 2))
        y0 += row_h + extra
    rows_h = y0 - top
    height = top + rows_h + 44

    def x_of(v: float) -> float:
        return left + (v - lo) / (hi - lo) * (w - left - right)

    parts = []
    if band:
        parts.append(f'<rect x="{x_of(band[0]):.1f}" y="{top}" width="'
                     f'{x_of(band[1]) - x_of(band[0]):.1f}" height="{rows_h}" '
                     'fill="#000" fill-opacity="0.08"/>')
    base = top + rows_h
    for t in ticks:
        parts.append(f'<line x1="{x_of(t):.1f}" y1="{top}" x2="{x_of(t):.1f}" y2="{base}" '
                     'stroke="#e4e4e4"/>'
                     f'<text x="{x_of(t):.1f}" y="{base + 15}" text-anchor="middle" '
                     f'fill="#333">{esc(num(t, _digits(ticks)))}</text>')
    if ref is not None:
        parts.append(f'<line class="zero" x1="{x_of(ref):.1f}" y1="{top}" x2="{x_of(ref):.1f}" '
                     f'y2="{base}" stroke="#555" stroke-dasharray="4 3"/>')
    parts.append(f'<text x="{(left + w - right) / 2:.0f}" y="{base + 34}" '
                 f'text-anchor="middle" fill="#222">{esc(_cut(xlabel, (w - 12) // 7))}</text>')
    for i, r in enumerate(rows):
        y = ys[i]
        colour, mark = style[r.series]
        if narrow:
            for k, line in enumerate(lines[i]):
                parts.append(f'<text x="6" y="{y - 13 - 14 * (len(lines[i]) - 1 - k):.1f}" '
                             f'font-weight="bold" fill="#222">{esc(line)}</text>')
        else:
            parts.append(f'<text x="{_LABEL_W - 8}" y="{y + 4:.1f}" text-anchor="end" '
                         f'fill="#222">{esc(cut_label(r.label, 30))}</text>')
        if r.estimate is None:
            room = (w - left - 4 - 100) // 7
            parts.append(f'<text x="{left + 4}" y="{y + 4:.1f}" fill="#666">'
                         f'not computable{": " + esc(_cut(r.why, room)) if r.why else ""}'
                         "</text>")
            continue
        if r.ci:
            parts.append(f'<line x1="{x_of(r.ci[0]):.1f}" y1="{y:.1f}" x2="{x_of(r.ci[1]):.1f}"'
                         f' y2="{y:.1f}" stroke="{colour}" stroke-width="2.5"/>')
        parts.append(marker(mark, x_of(r.estimate), y, colour, 5.0))
    if len(series) > 1:
        parts += legend
    if band:
        x = x_of(band[1]) + 3
        anchor = "start"
        if x + 6 * len(band_label) > w:  # no room right of the band: left of it
            x, anchor = x_of(band[0]) - 3, "end"
        parts.append(f'<text x="{x:.1f}" y="{top + 11}" fill="#555" text-anchor="{anchor}" '
                     f'font-size="10">{esc(band_label)}</text>')
    return height, "".join(parts)


def _wrap2(s: str, n: int) -> list[str]:
    """``s`` on lines of at most ``n`` characters, broken at spaces; at most two lines, the
    second cut by :func:`cut_label` (keeping a trailing ': PART' whole)."""
    import textwrap

    if len(s) <= n:
        return [s]
    first = textwrap.wrap(s, n, break_long_words=True)[0]
    return [first, cut_label(s[len(first):].strip(), n)]


def cut_label(s: str, n: int) -> str:
    """A row label ``NAME: PART`` cut to ``n`` characters in its name, keeping the part after
    the last ': ' whole (a dual-framing row's frame), so rows of one name stay told apart;
    else :func:`_cut`. The figure's text alternative keeps every label whole."""
    head, sep, tail = s.rpartition(": ")
    if len(s) <= n or not sep or len(tail) + 4 > n:
        return _cut(s, n)
    return _cut(head, n - len(tail) - 2) + sep + tail


def _cut(s: str, n: int) -> str:
    """``s`` cut to ``n`` characters with an ellipsis."""
    return s if len(s) <= n else s[:max(1, n - 1)] + "\u2026"


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
    week, the line breaks), with a dashed horizontal ``threshold`` line, as a ``<figure>``
    drawn twice (720 units wide, and 360 for a phone: fewer week labels, the legend in two
    columns). ``caption`` is already-escaped HTML."""
    args = (x_labels, series, ylabel, threshold, threshold_label, y_min)
    (hw, bw), (hn, bn) = _lines_body(*args, _W, False), _lines_body(*args, _NARROW_W, True)
    desc = "; ".join(f"{s}: " + ", ".join(f"{w} {num(v)}" for w, v in zip(x_labels, vs,
                                                                           strict=True))
                     for s, vs in series.items())
    extra = f" Dashed line: {threshold_label}." if threshold is not None else ""
    return _figure(((_W, hw, bw), (_NARROW_W, hn, bn)), title,
                   f"{ylabel} by week.{extra} {desc}.", caption)


def _lines_body(x_labels: Sequence[str], series: dict[str, Sequence[float | None]],
                ylabel: str, threshold: float | None, threshold_label: str, y_min: float,
                w: int, narrow: bool) -> tuple[float, str]:
    """``(height, body)`` of :func:`lines_svg` ``w`` units wide."""
    names = list(series)
    style = {s: (PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)])
             for i, s in enumerate(names)}
    vals = [v for vs in series.values() for v in vs if v is not None]
    vals += [threshold] if threshold is not None else []
    ticks = nice_ticks(min([y_min, *vals]), max(vals or [1.0]))
    lo, hi = ticks[0], ticks[-1]
    per_row, col_w = (2, 170) if narrow else (4, 165)
    left, top, plot_h = 56, 10, 220
    legend_rows = math.ceil(len(names) / per_row)
    height = top + plot_h + 48 + 18 * legend_rows
    n = len(x_labels)

    def x_of(i: int) -> float:
        return left + (i + 0.5) * (w - left - _RIGHT) / max(1, n)

    def y_of(v: float) -> float:
        return top + plot_h - (v - lo) / (hi - lo) * plot_h

    parts = []
    for t in ticks:
        parts.append(f'<line x1="{left}" y1="{y_of(t):.1f}" x2="{w - _RIGHT}" '
                     f'y2="{y_of(t):.1f}" stroke="#e4e4e4"/><text x="{left - 6}" '
                     f'y="{y_of(t) + 4:.1f}" text-anchor="end" fill="#333">'
                     f'{esc(num(t, _digits(ticks)))}</text>')
    every = max(1, math.ceil(n / (4 if narrow else 10)))
    for i, wk in enumerate(x_labels):
        if i % every == 0 or (i == n - 1 and not narrow):
            parts.append(f'<text x="{x_of(i):.1f}" y="{top + plot_h + 16}" '
                         f'text-anchor="middle" fill="#333">{esc(wk)}</text>')
    if threshold is not None:
        parts.append(f'<line x1="{left}" y1="{y_of(threshold):.1f}" x2="{w - _RIGHT}" '
                     f'y2="{y_of(threshold):.1f}" stroke="{PALETTE[3]}" stroke-width="1.5" '
                     f'stroke-dasharray="6 4"/><text x="{w - _RIGHT - 2}" '
                     f'y="{y_of(threshold) - 5:.1f}" text-anchor="end" fill="{PALETTE[3]}">'
                     f'{esc(_cut(threshold_label, (w - left - _RIGHT) // 7))}</text>')
    parts.append(f'<text transform="translate(14 {top + plot_h / 2:.0f}) rotate(-90)" '
                 f'text-anchor="middle" fill="#222">{esc(_cut(ylabel, plot_h // 7))}</text>')
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
        x = (12 if narrow else left) + (j % per_row) * col_w
        y = top + plot_h + 36 + 18 * (j // per_row)
        parts.append(marker(mark, x + 5, y - 4, colour, 4.5)
                     + f'<text x="{x + 14}" y="{y}" fill="#222">{esc(_cut(s, 20))}</text>')
    return height, "".join(parts)
