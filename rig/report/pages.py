"""The look shared by rig's offline HTML pages (campaign, probe, monitor and scorer reports):
one stylesheet (:data:`CSS`), one way to write a figure in a table cell (:func:`fmt`) and one
way to inline a matplotlib figure with its text alternative (:func:`svg`)."""

from __future__ import annotations

import html

#: Okabe & Ito's colour-blind-safe palette ("Color Universal Design", 2002/2008), in the order
#: reports use it: blue, orange, bluish green, vermillion, reddish purple, sky blue, yellow, black.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
           "#000000")

#: The stylesheet every report page inlines (no CDN, no web fonts, no url()): readable at
#: 1280 px with no table scrolling sideways, and at a phone's 390 px (a table too wide for it
#: scrolls inside ``.table-wrap``; a plot drawn twice, rig.report.svg.twin_figure, shows its
#: 360-unit drawing below 600 px, so its text stays readable and nothing is cut), and in
#: print (no scroll boxes, the wide drawings, no rows or figures split across pages). A
#: figure drawn once (a matplotlib one: rig.report.pages.svg) keeps a minimum width and
#: scrolls in its ``.fig-wrap`` on a phone rather than shrinking its text.
#: ``.cut``: a cell cut with an ellipsis (its full text in its ``title``).
CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:1100px;color:#222;padding:0 1rem;line-height:1.45;overflow-wrap:anywhere}
h1{font-size:1.6rem;margin:.2rem 0}
h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}
caption{text-align:left;font-weight:600;padding:.3rem 0}
th,td{border-bottom:1px solid #ddd;padding:.35rem .6rem;text-align:right;
vertical-align:top;overflow-wrap:normal}
table.profiles td{white-space:nowrap}
td.text{text-align:left;min-width:14rem;overflow-wrap:anywhere}
th:first-child,td:first-child{text-align:left}
thead th{background:#f4f4f4}
tbody th{font-weight:600;background:#fafafa}
abbr[title]{text-decoration:underline dotted;cursor:help}
.table-wrap{overflow-x:auto;max-width:100%;margin:1rem 0}
.table-wrap>table{margin:0}
.table-wrap th[scope=row],.table-wrap thead th:first-child{position:sticky;left:0;z-index:1}
.table-wrap:focus{outline:2px solid #0072B2}
.note{color:#555;font-size:.9rem}
.flag{color:#b00020;font-weight:600}
code{background:#f4f4f4;padding:0 .2rem;overflow-wrap:anywhere}
ul.verdict{padding-left:1.2rem}
ul.verdict li{margin:.5rem 0;font-size:1.05rem}
figure{margin:1.5rem 0}
.fig-wrap{overflow-x:auto;max-width:100%}
.fig-wrap svg{display:block;width:100%;height:auto;max-width:760px}
.fig-wrap svg.narrow{display:none}
.fig-wrap svg:not(.wide):not(.narrow){min-width:480px}
.cut{display:inline-block;max-width:14rem;overflow:hidden;text-overflow:ellipsis;
white-space:nowrap;vertical-align:bottom}
figcaption{color:#444;font-size:.9rem;margin-top:.3rem}
dl{font-size:.9rem}dt{font-weight:600}dd{margin:0 0 .4rem 1rem}
dl.legend{columns:2 22rem;font-size:.8rem;color:#444}
dl.legend dt,dl.legend dd{break-inside:avoid-column}
@media (max-width:600px){
body{margin:1rem auto;padding:0 .6rem}
h1{font-size:1.3rem}
:not(.table-wrap)>table{display:block;overflow-x:auto;max-width:100%}
.fig-wrap svg.wide{display:none}
.fig-wrap svg.narrow{display:block;max-width:480px}
.fig-wrap svg:not(.wide):not(.narrow){min-width:600px}
.cut{max-width:9rem}
th,td{padding:.3rem .4rem}
}
@page{size:A4 landscape;margin:1.2cm}
@media print{
body{max-width:none;margin:0;padding:0;font-size:10pt;color:#000}
th,td{padding:.15rem .3rem}
.table-wrap,.fig-wrap{overflow:visible}
.fig-wrap svg{max-width:16cm;min-width:0!important}
.fig-wrap svg.wide{display:block}
.fig-wrap svg.narrow{display:none}
table{font-size:8pt}
tr,figure,li{break-inside:avoid}
h2{break-after:avoid}
.note,figcaption{color:#000}
}
"""


def fmt(v: object, digits: int = 2) -> str:
    """A value as HTML text: None or NaN "n/a", a bool "yes"/"no", a float with ``digits``
    decimals, a pair (an interval) "[low, high]", anything else escaped."""
    if v is None or (isinstance(v, float) and v != v):
        return "n/a"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    if isinstance(v, list | tuple) and len(v) == 2:
        return f"[{fmt(v[0], digits)}, {fmt(v[1], digits)}]"
    return html.escape(str(v))


def name_cell(name: str) -> str:
    """A name (a profile's) for a table cell: escaped, in a ``.cut`` span that ends in an
    ellipsis when the name is wider than the cell allows (CSS), the whole name in its
    ``title``, so one long name cannot widen a table past the screen."""
    return (f"<span class='cut' title='{html.escape(name, quote=True)}'>{html.escape(name)}"
            "</span>")


def svg(fig, *, title: str | None = None, desc: str = "", caption: str = "") -> str:
    """A matplotlib figure as an inline ``<svg>`` element (no XML header, no date, so the same
    figure gives the same bytes); the figure is closed.

    With ``title``: a ``<figure>`` with its text alternative
    (:func:`rig.report.svg.labelled_figure`: role img, ``<title>``, ``<desc>``, the scroll
    box, ``caption`` as a visible figcaption when given). Plain text in, escaped there."""
    import io

    import matplotlib.pyplot as plt

    from rig.report.svg import labelled_figure

    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.find("<svg"):]
    if title is None:
        return text
    end = text.index(">")  # the end of the <svg ...> start tag
    inner = text[end + 1:].rstrip().removesuffix("</svg>")
    return labelled_figure(None, text[:end], inner, title, desc, caption)
