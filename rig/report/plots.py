"""The campaign report's plots, inline SVG (rig.report.svg), colours from
:data:`rig.report.pages.PALETTE` (Okabe-Ito). Each returns a ``<figure>`` whose ``<title>``,
``<desc>`` and caption say the numbers, or ``""`` when there is nothing to draw.

Each is drawn twice (:func:`rig.report.svg.twin_figure`): 640 units wide for a screen and
360 for a phone (labels above their rows, text at reading size, every dot and the zero line
inside); the page's CSS shows one.

* :func:`forest_plot`: each profile's mean paired delta (points) with its 95% interval (the
  verdict's: rig.report.verdict.verdict_interval; none below 5 pairs, as the verdict) over
  the grey noise-floor band (± ``noise_floor_mean_delta_limit``).
* :func:`rates_plot`: flip rate (with its Wilson 95% CI) and truncation rate per profile.
* :func:`waterfall_plot`: the stage split of each profile's delta (summary ``attribution``):
  turn detection, then ASR, then rest, ending at the mean delta.
* :func:`score_plot`: each call's score against its answer's reference grade (rows), one
  colour and shape per profile, the y = x line and the decision cutoff.
"""

from __future__ import annotations

import math

import pandas as pd

from rig.campaign.attribution import TERMS, rounded_parts
from rig.campaign.schema import CampaignSummary, ProfileAttribution, ProfileSummary
from rig.report.pages import PALETTE
from rig.report.svg import (
    FONT,
    SHAPES,
    Scale,
    line,
    marker,
    nice_ticks,
    rect,
    text,
    tick_label,
    twin_figure,
    x_axis,
)
from rig.report.verdict import percent, points, verdict_interval
from rig.stats.few_pairs import MIN_PAIRS, too_few_pairs

#: The two drawings of each plot (rig.report.svg.twin_figure): ``width`` in SVG user units;
#: ``narrow``: a phone's, labels above their rows instead of beside them.
WIDE, NARROW = (640, False), (360, True)
_LABEL_W = 150
_VALUE_W = 150


def _others(summary: CampaignSummary) -> list[str]:
    return [p for p in summary.profiles if p != summary.baseline]


def cut(s: str, n: int) -> str:
    """``s`` cut to ``n`` characters, an ellipsis at the cut (``n`` >= 2)."""
    return s if len(s) <= n else s[:n - 1] + "\u2026"


def _chars(width_units: float, size: int = FONT, bold: bool = False) -> int:
    """About how many characters of text ``size`` fit ``width_units`` (0.6 em a character,
    0.7 bold: system-ui's widths with room to spare)."""
    return max(4, int(width_units / ((0.7 if bold else 0.6) * size)))


def _forest_ci(d: ProfileSummary) -> tuple[list[float] | None, str]:
    """The interval the plot draws: the verdict's, none below rig.stats.few_pairs.MIN_PAIRS
    pairs (the verdict quotes none there either: 1-3 degrees of freedom)."""
    if too_few_pairs(d):
        return None, "too few pairs"
    return verdict_interval(d)


def _forest_body(summary: CampaignSummary, names: list[str], geom: tuple[int, bool]):
    """``(height, body, desc)`` of the forest plot at ``geom`` (:data:`WIDE`, :data:`NARROW`)."""
    profs = summary.profiles
    w, narrow = geom
    vals = [0.0]
    for p in names:
        d = profs[p]
        ci, _ = _forest_ci(d)
        vals += [d.mean_delta, *(ci or [])]
        if d.noise_floor_mean_delta_limit is not None:
            vals += [-d.noise_floor_mean_delta_limit, d.noise_floor_mean_delta_limit]
    ticks = nice_ticks(min(vals), max(vals), n=5 if narrow else 6)
    row_h, top = (46, 8) if narrow else (34, 16)
    bottom = top + row_h * len(names)
    sx = (Scale(ticks[0], ticks[-1], 16, w - 16) if narrow
          else Scale(ticks[0], ticks[-1], _LABEL_W, w - _VALUE_W))
    body = [x_axis(sx, ticks, bottom, top, "mean paired delta vs baseline (points)")]
    said = []
    for i, p in enumerate(names):
        d = profs[p]
        y = top + row_h * i + (32 if narrow else row_h / 2)
        lim = d.noise_floor_mean_delta_limit
        if lim is not None:
            body.append(rect(sx(-lim), y - 11, sx(lim) - sx(-lim), 22, "#bbbbbb", 0.5))
        ci, kind = _forest_ci(d)
        if ci:
            body.append(line(sx(ci[0]), y, sx(ci[1]), y, PALETTE[0], 2.5))
            for c in ci:
                body.append(line(sx(c), y - 6, sx(c), y + 6, PALETTE[0], 2))
        body.append(marker("circle", sx(d.mean_delta), y, PALETTE[0], 5))
        value = (f"{points(d.mean_delta)} [{points(ci[0])}, {points(ci[1])}]" if ci
                 else f"{points(d.mean_delta)}" + (f" ({kind})" if kind == "too few pairs"
                                                    else ""))
        if narrow:  # the name and the figures on a line above the row
            room = w - 12 - 0.6 * (FONT - 1) * len(value) - 10
            body.append(text(6, y - 18, cut(p, _chars(room, bold=True)), weight="bold"))
            body.append(text(w - 6, y - 18, value, "end", FONT - 1))
        else:
            body.append(text(_LABEL_W - 8, y + 4, cut(p, _chars(_LABEL_W - 12)), "end"))
            body.append(text(w - _VALUE_W + 8, y + 4, value, size=FONT - 1))
        band = f", noise floor ±{lim:.1f}" if lim is not None else ", noise floor n/a"
        said.append(f"{p}: {points(d.mean_delta)} points"
                    + (f" (95% CI {points(ci[0])} to {points(ci[1])}, {kind} interval)" if ci
                       else f" ({kind}: no interval drawn)" if kind == "too few pairs"
                       else "")
                    + band)
    body.append(line(sx(0), top, sx(0), bottom, "#222", 1, "4 3", cls="zero"))
    return bottom + 50, "".join(body), "; ".join(said)


def forest_plot(summary: CampaignSummary) -> str:
    """Mean paired deltas with 95% intervals and the noise-floor band, one row per profile;
    below rig.stats.few_pairs.MIN_PAIRS pairs the dot alone, said "too few pairs"."""
    profs = summary.profiles
    names = [p for p in _others(summary) if profs[p].mean_delta is not None]
    if not names:
        return ""
    (hw, bw, desc), (hn, bn, _) = (_forest_body(summary, names, g) for g in (WIDE, NARROW))
    band = ("grey band: what repeat noise alone can give" if any(
        profs[p].noise_floor_mean_delta_limit is not None for p in names)
        else "no noise-floor band: the noise floor was not measured")
    few = (f"; no interval below {MIN_PAIRS} pairs (too few pairs)" if any(
        too_few_pairs(profs[p]) for p in names) else "")
    return twin_figure("fig-forest", (WIDE[0], hw, bw), (NARROW[0], hn, bn),
                       "Paired score deltas against the baseline", desc,
                       f"Mean paired delta (points; dot) with its 95% CI (bar){few}; {band}. "
                       f"{desc}.")


def _rates_body(summary: CampaignSummary, names: list[str], geom: tuple[int, bool]):
    """``(height, body, desc)`` of the rates plot at ``geom``."""
    profs = summary.profiles
    w, narrow = geom
    bar_h = 14
    row_h, top = (64, 30) if narrow else (46, 30)
    bottom = top + row_h * len(names)
    # room right of 100% for the longest label, so none is cut at the figure's edge
    longest = max((len(_flip_label(profs[p]) or "") for p in names), default=0)
    left = 10 if narrow else _LABEL_W
    sx = Scale(0, 1, left, w - max(70, math.ceil(longest * 0.62 * (FONT - 2)) + 12))
    ticks = [0, 0.5, 1.0] if narrow else [0, 0.25, 0.5, 0.75, 1.0]
    xlabel = "share of pairs (flips) / of calls (truncation)"
    body = [x_axis(sx, ticks, bottom, top, "" if narrow else xlabel, fmt=percent)]
    if narrow:
        body.append(text(w / 2, bottom + 35, "share: flips of pairs, truncation of calls",
                         "middle"))
    lx = 6 if narrow else _LABEL_W
    body.append(rect(lx, 6, 12, 12, PALETTE[0]))
    body.append(text(lx + 18, 16, "flip rate (95% CI)", size=FONT - 1))
    body.append(rect(lx + 170, 6, 12, 12, PALETTE[1]))
    body.append(text(lx + 188, 16, "truncation rate", size=FONT - 1))
    said = []
    for i, p in enumerate(names):
        d, y0 = profs[p], top + row_h * i + (22 if narrow else 6)
        if narrow:
            body.append(text(6, y0 - 6, cut(p, _chars(w - 12, bold=True)), weight="bold"))
        else:
            body.append(text(_LABEL_W - 8, y0 + bar_h + 4, cut(p, _chars(_LABEL_W - 12)),
                             "end"))
        parts = [p]
        for j, (key, colour, what) in enumerate((("flip_rate", PALETTE[0], "flip rate"),
                                                 ("truncation_rate", PALETTE[1],
                                                  "truncation"))):
            v, y = getattr(d, key), y0 + j * (bar_h + 3)
            if v is None:
                body.append(text(sx(0) + 4, y + bar_h - 3, "n/a", size=FONT - 2))
                parts.append(f"{what} n/a")
                continue
            body.append(rect(sx(0), y, sx(v) - sx(0), bar_h, colour))
            label = percent(v)
            if key == "flip_rate":
                ci = d.flip_ci95
                if ci:
                    body.append(line(sx(ci[0]), y + bar_h / 2, sx(ci[1]), y + bar_h / 2,
                                     "#222", 1.2))
                label = _flip_label(d)
            right = max(sx(v), sx(ci[1]) if key == "flip_rate" and d.flip_ci95 else 0)
            body.append(text(right + 5, y + bar_h - 3, label, size=FONT - 2))
            parts.append(f"{what} {label}")
        said.append(", ".join(parts))
    return bottom + 50, "".join(body), "; ".join(said)


def rates_plot(summary: CampaignSummary) -> str:
    """Flip rate (Wilson 95% CI whiskers) and truncation rate per profile, 0-100%."""
    names = _others(summary)
    if not names:
        return ""
    (hw, bw, desc), (hn, bn, _) = (_rates_body(summary, names, g) for g in (WIDE, NARROW))
    return twin_figure("fig-rates", (WIDE[0], hw, bw), (NARROW[0], hn, bn),
                       "Flip rate and truncation rate per profile", desc,
                       "Flips: decisions that differ from the baseline's. Truncation: calls "
                       f"with script words spoken after the turn closed. {desc}.")


def _flip_label(d: ProfileSummary) -> str | None:
    """A profile's flip label, ``"1/2 = 50% [9%, 91%]"`` (None without a flip rate)."""
    if d.flip_rate is None:
        return None
    label = percent(d.flip_rate)
    ci = d.flip_ci95
    if ci:
        label += f" [{percent(ci[0])}, {percent(ci[1])}]"
    if d.n_flips is not None:
        label = f"{d.n_flips}/{d.n_pairs} = {label}"
    return label


def _split(d: ProfileSummary) -> ProfileAttribution | None:
    """The profile's stage split when its mean delta is computed, else None."""
    a = d.attribution
    return a if a is not None and a.mean_delta is not None else None


_STAGES = (("turn_detection", "turn detection", PALETTE[3]), ("asr", "ASR", PALETTE[5]),
           ("rest", "rest (scorer noise)", PALETTE[4]))


def _waterfall_body(summary: CampaignSummary, names: list[str], geom: tuple[int, bool]):
    """``(height, body, desc)`` of the waterfall at ``geom``."""
    profs = summary.profiles
    w, narrow = geom
    vals = [0.0]
    for p in names:
        a, run = _split(profs[p]), 0.0
        for k, _, _ in _STAGES:
            run += getattr(a, k) or 0.0
            vals.append(run)
        vals.append(a.mean_delta)
    ticks = nice_ticks(min(vals), max(vals), n=5 if narrow else 6)
    step_h, gap, top = 20, 22, 10
    bottom = top + len(names) * 4 * step_h + gap * len(names)
    label_end = 104 if narrow else _LABEL_W + 32
    sx = Scale(ticks[0], ticks[-1], label_end + 8, w - (50 if narrow else 90))
    body = [x_axis(sx, ticks, bottom, top, "points of the mean delta, by stage")]
    said, y = [], top
    for p in names:
        a, run = _split(profs[p]), 0.0
        body.append(text(8, y + 12, cut(p, _chars(w - 16, bold=True)), weight="bold"))
        y += gap - 6
        parts = []
        # the figures written are rounded so the steps add up to the total written
        terms = [getattr(a, k) for k in TERMS]
        shown = (dict(zip(TERMS, rounded_parts(a.mean_delta, terms, 1), strict=True))
                 if all(t is not None for t in terms) else {})
        for k, label, colour in (*_STAGES, ("mean_delta", "total", "#000000")):
            v = getattr(a, k)
            if v is None:
                parts.append(f"{label} n/a")
                y += step_h
                continue
            start, end = (0.0, v) if k == "mean_delta" else (run, run + v)
            body.append(rect(sx(start), y + 3, sx(end) - sx(start) or 1, step_h - 6, colour))
            short = label.split(" (")[0] if narrow else label
            body.append(text(label_end, y + step_h - 6, short, "end", FONT - 2))
            written = points(shown.get(k, v))
            body.append(text(max(sx(start), sx(end)) + 5, y + step_h - 6, written,
                             size=FONT - 2))
            if k != "mean_delta":
                run = end
            parts.append(f"{label} {written}")
            y += step_h
        y += 6
        said.append(f"{p}: " + ", ".join(parts))
    body.append(line(sx(0), top, sx(0), bottom, "#222", 1, "4 3", cls="zero"))
    return bottom + 50, "".join(body), "; ".join(said)


def waterfall_plot(summary: CampaignSummary) -> str:
    """The attribution waterfall: per profile with a split, turn detection, ASR and rest as
    steps from 0, and the total (the mean delta) as a black bar."""
    profs = summary.profiles
    names = [p for p in _others(summary) if _split(profs[p]) is not None]
    if not names:
        return ""
    (hw, bw, desc), (hn, bn, _) = (_waterfall_body(summary, names, g)
                                   for g in (WIDE, NARROW))
    return twin_figure("fig-waterfall", (WIDE[0], hw, bw), (NARROW[0], hn, bn),
                       "Where each profile's delta was lost", desc,
                       "Each profile's mean delta (points) split by stage: turn detection "
                       "(the turn closed early), ASR (the transcript), rest (scorer noise "
                       f"between repeats); the steps sum to the total. {desc}.")


def _score_body(summary: CampaignSummary, rows: pd.DataFrame, df: pd.DataFrame,
                geom: tuple[int, bool]):
    """``(height, body, desc)`` of the score plot at ``geom``: the legend right of the square
    (wide) or below it (narrow)."""
    w, narrow = geom
    order = [p for p in summary.profiles if p in set(df["profile_id"])]
    order += sorted(set(df["profile_id"]) - set(order))
    left, top = (46, 14) if narrow else (60, 14)
    size = w - left - 14 if narrow else 380
    height = top + size + 50 + (18 * len(order) + 4 if narrow else 0)
    lo = min(0.0, float(df["score"].min()), float(df["reference_score"].min()))
    hi = max(100.0, float(df["score"].max()), float(df["reference_score"].max()))
    ticks = nice_ticks(lo, hi)
    sx = Scale(ticks[0], ticks[-1], left, left + size)
    sy = Scale(ticks[0], ticks[-1], top + size, top)
    body = [x_axis(sx, ticks, top + size, top, "reference grade (points)")]
    for t in ticks:
        body.append(line(left, sy(t), left + size, sy(t), "#e3e3e3"))
        body.append(text(left - 6, sy(t) + 4, tick_label(t), "end", FONT - 1))
    body.append(f'<text transform="translate({12 if narrow else 16} {top + size / 2:.0f}) '
                f'rotate(-90)" text-anchor="middle" font-size="{FONT}" fill="#222">'
                "score (points)</text>")
    body.append(line(sx(ticks[0]), sy(ticks[0]), sx(ticks[-1]), sy(ticks[-1]), "#888", 1,
                     "2 3"))
    cut_ = rows["cutoff"].dropna().unique() if "cutoff" in rows else []
    if len(cut_) == 1 and math.isfinite(float(cut_[0])):
        c = float(cut_[0])
        body.append(line(sx(c), top, sx(c), top + size, "#888", 1, "6 3"))
        body.append(line(left, sy(c), left + size, sy(c), "#888", 1, "6 3"))
    said = []
    for i, p in enumerate(order):
        colour, shape = PALETTE[i % len(PALETTE)], SHAPES[i % len(SHAPES)]
        g = df[df["profile_id"] == p]
        for r in g.itertuples():
            body.append(marker(shape, sx(float(r.reference_score)), sy(float(r.score)),
                               colour, 4))
        if narrow:
            lx, ly, room = 12, top + size + 62 + 18 * i, w - 40
        else:
            lx, ly, room = left + size + 24, top + 10 + 20 * i, w - left - size - 40
        body.append(marker(shape, lx, ly - 4, colour, 5))
        body.append(text(lx + 12, ly, cut(p, _chars(room, FONT - 1)), size=FONT - 1))
        mae = (g["score"] - g["reference_score"]).abs().mean()
        said.append(f"{p}: {len(g)} calls, mean score {g['score'].mean():.1f}, mean "
                    f"|score - reference| {mae:.1f}")
    return height, "".join(body), "; ".join(said)


def score_plot(summary: CampaignSummary, rows: pd.DataFrame) -> str:
    """Each scored call's score against its answer's reference grade (points), one colour and
    marker per profile; the y = x line and the cutoff (dashed) when the rows have one."""
    if rows is None or rows.empty or not {"reference_score", "score", "profile_id"} <= set(
            rows.columns):
        return ""
    df = rows[["reference_score", "score", "profile_id"]].dropna()
    if "status" in rows:
        df = df[rows.loc[df.index, "status"] == "ok"]
    if df.empty:
        return ""
    (hw, bw, desc), (hn, bn, _) = (_score_body(summary, rows, df, g) for g in (WIDE, NARROW))
    cut_ = rows["cutoff"].dropna().unique() if "cutoff" in rows else []
    cut_txt = f" Dashed lines: the cutoff ({float(cut_[0]):.0f})." if len(cut_) == 1 else ""
    return twin_figure("fig-scores", (WIDE[0], hw, bw), (NARROW[0], hn, bn),
                       "Score against the reference grade", desc,
                       "Each call's score (points) against its answer's reference grade; "
                       f"dotted line: score = reference.{cut_txt} {desc}.")


def plots_html(summary: CampaignSummary, rows: pd.DataFrame) -> str:
    """The plots section's figures, in reading order."""
    return "".join((forest_plot(summary), rates_plot(summary), waterfall_plot(summary),
                    score_plot(summary, rows)))
