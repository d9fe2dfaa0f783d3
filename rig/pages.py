"""The look shared by rig's offline HTML pages (campaign, probe, monitor and scorer reports):
one stylesheet (:data:`CSS`), one way to write a figure in a table cell (:func:`fmt`) and one
way to inline a matplotlib figure (:func:`svg`)."""

from __future__ import annotations

import html

#: Okabe & Ito's colour-blind-safe palette ("Color Universal Design", 2002/2008), in the order
#: reports use it: blue, orange, bluish green, vermillion, reddish purple, sky blue, yellow, black.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
           "#000000")

#: The stylesheet every report page inlines (no CDN, no scripts).
CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:1100px;color:#222;padding:0 1rem}
table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}
th,td{border-bottom:1px solid #ddd;padding:.35rem .6rem;text-align:right}
th:first-child,td:first-child{text-align:left}
th{background:#f4f4f4}
.note{color:#555;font-size:.9rem}
.flag{color:#b00020;font-weight:600}
code{background:#f4f4f4;padding:0 .2rem}
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


def svg(fig) -> str:
    """A matplotlib figure as an inline ``<svg>`` element (no XML header, no date, so the same
    figure gives the same bytes); the figure is closed."""
    import io

    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    return text[text.find("<svg"):]
