"""The hand-written SVG primitives of rig's pages (the campaign report's plots,
rig.report.plots; the probe and monitor figures, rig.report.svgplot): no library, no external
reference (no ``xmlns`` URL either: inline ``<svg>`` in HTML needs none), deterministic bytes.

Coordinates are SVG user units; every plot scales to its container through ``viewBox``.
"""

from __future__ import annotations

import hashlib
import html
import math

#: Text size of the plots, in SVG user units (a 640-unit-wide plot shown 640 px wide).
FONT = 13


def esc(v: object) -> str:
    """``v`` as SVG/HTML text."""
    return html.escape(str(v), quote=True)


def nice_ticks(lo: float, hi: float, n: int = 6, steps: tuple[float, ...] = (1, 2, 5),
               cover: bool = True) -> list[float]:
    """Round tick values over [lo, hi]: steps of ``steps`` x 10^k (Heckbert's "nice
    numbers", Graphics Gems 1990), about ``n`` of them (``n - 1`` intervals). ``cover``: one
    more tick when the last falls short of ``hi``. No negative zero."""
    if not math.isfinite(lo) or not math.isfinite(hi) or hi <= lo:
        lo, hi = (lo - 1, lo + 1) if math.isfinite(lo) else (-1, 1)
    raw = (hi - lo) / max(n - 1, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(s * mag for s in (*steps, 10) if s * mag >= raw)
    start = math.floor(lo / step) * step
    ticks, t = [], start
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 10) + 0.0)
        t += step
    if cover and ticks[-1] < hi:
        ticks.append(round(ticks[-1] + step, 10) + 0.0)
    return ticks


class Scale:
    """A linear map from data ``[d0, d1]`` to pixels ``[p0, p1]``."""

    def __init__(self, d0: float, d1: float, p0: float, p1: float) -> None:
        self.d0, self.d1, self.p0, self.p1 = d0, d1, p0, p1

    def __call__(self, v: float) -> float:
        if self.d1 == self.d0:
            return (self.p0 + self.p1) / 2
        return round(self.p0 + (v - self.d0) / (self.d1 - self.d0) * (self.p1 - self.p0), 2)


def tick_label(v: float) -> str:
    """A tick's text: an integer when whole, else up to 2 decimals."""
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.2f}".rstrip("0")


def text(x: float, y: float, s: object, anchor: str = "start", size: int = FONT,
         weight: str = "normal", fill: str = "#222") -> str:
    """One ``<text>`` element."""
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" '
            f'font-weight="{weight}" fill="{fill}">{esc(s)}</text>')


def line(x1: float, y1: float, x2: float, y2: float, stroke: str = "#222",
         width: float = 1.0, dash: str | None = None, cls: str | None = None) -> str:
    """One ``<line>`` element; ``cls``: its class (``"zero"`` marks a plot's line of no
    difference, which the layout test finds)."""
    d = f' stroke-dasharray="{dash}"' if dash else ""
    c = f' class="{cls}"' if cls else ""
    return (f'<line{c} x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="{stroke}" stroke-width="{width}"{d}/>')


def rect(x: float, y: float, w: float, h: float, fill: str, opacity: float = 1.0,
         stroke: str | None = None) -> str:
    """One ``<rect>``; a negative width or height is normalised."""
    if w < 0:
        x, w = x + w, -w
    if h < 0:
        y, h = y + h, -h
    s = f' stroke="{stroke}"' if stroke else ""
    return (f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{fill}" '
            f'fill-opacity="{opacity}"{s}/>')


def marker(shape: str, x: float, y: float, fill: str, r: float = 4.5) -> str:
    """A point marker: ``circle``, ``square``, ``triangle``, ``diamond`` (shapes as well as
    colours tell the series apart, in print and for colour-blind readers), of class ``dot``
    (the layout test finds every one)."""
    if shape == "square":
        return '<rect class="dot"' + rect(x - r, y - r, 2 * r, 2 * r, fill,
                                          stroke="#222")[len("<rect"):]
    if shape == "triangle":
        pts = (f"{x:.1f},{y - r * 1.2:.1f} {x - r:.1f},{y + r * 0.8:.1f} "
               f"{x + r:.1f},{y + r * 0.8:.1f}")
        return f'<polygon class="dot" points="{pts}" fill="{fill}" stroke="#222"/>'
    if shape == "diamond":
        pts = f"{x:.1f},{y - r:.1f} {x + r:.1f},{y:.1f} {x:.1f},{y + r:.1f} {x - r:.1f},{y:.1f}"
        return f'<polygon class="dot" points="{pts}" fill="{fill}" stroke="#222"/>'
    return (f'<circle class="dot" cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{fill}" '
            'stroke="#222"/>')


SHAPES = ("circle", "square", "triangle", "diamond")


def x_axis(scale: Scale, ticks: list[float], y: float, top: float, label: str,
           grid: bool = True, fmt=tick_label) -> str:
    """A bottom x axis at ``y`` with tick labels (``fmt(value)``), light grid lines up to
    ``top`` and a label below."""
    out = [line(scale.p0, y, scale.p1, y, "#888")]
    for t in ticks:
        x = scale(t)
        if grid:
            out.append(line(x, top, x, y, "#e3e3e3"))
        out.append(line(x, y, x, y + 4, "#888"))
        out.append(text(x, y + 17, fmt(t), "middle", FONT - 1))
    out.append(text((scale.p0 + scale.p1) / 2, y + 35, label, "middle"))
    return "".join(out)


def figure(fig_id: str | None, width: float, height: float, title: str, desc: str,
           body: str, caption: str, *, caption_is_html: bool = False,
           font_size: int | None = None) -> str:
    """A ``<figure>`` with the inline SVG of ``body`` (``width`` x ``height`` user units) and
    its text alternative: :func:`labelled_figure`. ``font_size``: the SVG's default text size
    in user units (None: the SVG default)."""
    size = "" if font_size is None else f' font-size="{font_size}"'
    start = (f'<svg viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" '
             f'height="{height:.0f}" font-family="system-ui, sans-serif"{size}')
    return labelled_figure(fig_id, start, body, title, desc, caption,
                           caption_is_html=caption_is_html)


def twin_figure(fig_id: str | None, wide: tuple[float, float, str],
                narrow: tuple[float, float, str], title: str, desc: str, caption: str, *,
                caption_is_html: bool = False, font_size: int | None = None) -> str:
    """A ``<figure>`` drawn twice: ``wide`` and ``narrow`` are each ``(width, height, body)``
    in SVG user units (the wide one about 640 units, the narrow one about 360: its text at
    reading size on a 390 px phone, every mark inside). rig.report.pages.CSS shows the narrow
    one below 600 px and the wide one above it and in print; the hidden one is
    ``display: none``, so a screen reader reads one title and one ``desc``. One caption.
    ``fig_id`` and ``caption`` as :func:`labelled_figure`; ``font_size`` as :func:`figure`."""
    if fig_id is None:
        fig_id = "fig" + hashlib.sha1((title + desc).encode()).hexdigest()[:10]
    fid = esc(fig_id)
    size = "" if font_size is None else f' font-size="{font_size}"'
    svgs = []
    for cls, sfx, (w, h, body) in (("wide", "", wide), ("narrow", "-n", narrow)):
        svgs.append(f'<svg class="{cls}" viewBox="0 0 {w:.0f} {h:.0f}" width="{w:.0f}" '
                    f'height="{h:.0f}" font-family="system-ui, sans-serif"{size} role="img" '
                    f'aria-labelledby="{fid}{sfx}-t {fid}{sfx}-d"><title id="{fid}{sfx}-t">'
                    f'{esc(title)}</title><desc id="{fid}{sfx}-d">{esc(desc)}</desc>{body}'
                    "</svg>")
    cap = caption if caption_is_html else esc(caption)
    return (f'<figure id="{fid}"><div class="fig-wrap">{"".join(svgs)}</div>'
            + (f"<figcaption>{cap}</figcaption>" if cap else "") + "</figure>")


def labelled_figure(fig_id: str | None, svg_start: str, body: str, title: str, desc: str,
                    caption: str, *, caption_is_html: bool = False) -> str:
    """A ``<figure>`` holding an SVG (its start tag ``svg_start`` without the closing ``>``,
    then ``body``) made an image with a text alternative: role img, a ``<title>`` and a
    ``<desc>`` naming it (``desc``: the values in words, what a screen reader speaks), in a
    ``div.fig-wrap`` (rig.report.pages.CSS: it fits its column; a figure that must stay
    readable on a phone is drawn twice, :func:`twin_figure`), and ``caption`` as a visible
    ``<figcaption>`` (readable without the picture, and in print; none when empty).

    ``fig_id``: the element id; None derives one from ``title`` and ``desc`` (unique within a
    page, the same bytes for the same figure). ``caption`` is plain text, escaped here, unless
    ``caption_is_html`` (already-escaped HTML)."""
    if fig_id is None:
        fig_id = "fig" + hashlib.sha1((title + desc).encode()).hexdigest()[:10]
    fid = esc(fig_id)
    cap = caption if caption_is_html else esc(caption)
    return (f'<figure id="{fid}"><div class="fig-wrap">{svg_start} role="img" '
            f'aria-labelledby="{fid}-t {fid}-d"><title id="{fid}-t">{esc(title)}</title>'
            f'<desc id="{fid}-d">{esc(desc)}</desc>{body}</svg></div>'
            + (f"<figcaption>{cap}</figcaption>" if cap else "") + "</figure>")
