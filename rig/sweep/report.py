"""``report.html`` of a sweep: one offline page (no scripts, the plot inlined as SVG with
its values in words; laid out for 1280 px and a phone's width).

A table per profile x variant (delta, 95% t interval, TOST p, flip and truncation rates,
WER, costs, verdict) and, per varied setting, a plot of each profile's delta against the
setting's value (the campaign's own value included), with the t intervals as error bars.
"""

from __future__ import annotations

import html
from pathlib import Path

from rig.paths import write_text_atomic
from rig.report.pages import CSS, fmt, svg


def _plot(path: str, points: dict[str, list[tuple[object, float, list | None]]]) -> str:
    """Delta (points) against the value of ``path``, one line per profile."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    values = sorted({x for pts in points.values() for x, _, _ in pts},
                    key=lambda v: (not isinstance(v, int | float), v if isinstance(
                        v, int | float) else str(v)))
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    pos = {v: (float(v) if numeric else i) for i, v in enumerate(values)}
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for pid, pts in sorted(points.items()):
        pts = sorted(pts, key=lambda t: pos[t[0]])
        xs = [pos[x] for x, _, _ in pts]
        ys = [y for _, y, _ in pts]
        err = [[y - (ci[0] if ci else y) for _, y, ci in pts],
               [(ci[1] if ci else y) - y for _, y, ci in pts]]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=pid)
    ax.axhline(0, color="#888", lw=0.8)
    if not numeric:
        ax.set_xticks(list(pos.values()), [str(v) for v in values])
    ax.set_xlabel(path)
    ax.set_ylabel("mean paired delta (points)")
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    words = "; ".join(
        f"{pid}: " + ", ".join(f"{x}: {fmt(y, 1)}" + (f" [{fmt(ci[0], 1)}, {fmt(ci[1], 1)}]"
                                                     if ci else "")
                               for x, y, ci in sorted(pts, key=lambda t: pos[t[0]]))
        for pid, pts in sorted(points.items()))
    return svg(fig, title=f"Mean paired delta against {path}",
               desc=f"Mean paired delta in points (95% t interval) per value of {path}. "
                    f"{words}.", caption=f"Each profile's mean paired delta against the "
               f"baseline (points, with its 95% t interval) at each value of {path}. {words}.")


def plot_points(sweep: dict) -> dict[str, dict[str, list]]:
    """path -> profile -> [(setting value, delta, t interval)] from the variants that differ
    from the campaign in that setting only (and the campaign at its own value), baseline
    profile left out."""
    camp = next(v for v in sweep["variants"] if v["variant_id"] == "campaign")
    out: dict[str, dict[str, list]] = {}
    for vary in sweep["varies"]:
        path = vary["path"]
        by_profile: dict[str, list] = {}
        for v in sweep["variants"]:
            others = {k: x for k, x in v["settings"].items() if k != path}
            if others != {k: x for k, x in camp["settings"].items() if k != path}:
                continue  # a grid cell that changes another setting too
            x = v["settings"].get(path)
            for r in sweep["table"]:
                if r["variant"] == v["variant_id"] and r["verdict"] != "baseline" \
                        and r["mean_delta"] is not None:
                    by_profile.setdefault(r["profile_id"], []).append(
                        (x, r["mean_delta"], r["ci95"]))
        out[path] = by_profile
    return out


def write_sweep_report(path: Path, sweep: dict) -> Path:
    """Write ``report.html`` for ``sweep`` (the content of ``sweep.json``)."""
    cols = ("variant", "profile", "pairs", "mean delta", "95% CI (t)", "campaign delta",
            "TOST p", "flip rate", "truncation", "WER mean", "WER pooled", "dead air added (s)",
            "ASR s/call", "scorer s/call", "verdict")
    body = []
    for r in sweep["table"]:
        cls = ' class="flag"' if r["verdict"] == "widens" else ""
        cells = (r["variant"], r["profile_id"], r["n_pairs"], r["mean_delta"], r["ci95"],
                 r["campaign_mean_delta"], r["tost_p"], r["flip_rate"], r["truncation_rate"],
                 r["wer_mean"], r.get("wer_pooled"), r["dead_air_added_s"],
                 r["asr_s_per_call"],
                 r["scorer_s_per_call"], r["verdict"])
        body.append("<tr>" + "".join(
            f"<td{cls if i == len(cells) - 1 else ''}>{fmt(c, 3 if i in (6, 7, 8, 9, 10) else 2)}"
            "</td>" for i, c in enumerate(cells)) + "</tr>")
    plots = "".join(f"<h2>delta against <code>{html.escape(p)}</code></h2>{_plot(p, pts)}"
                    for p, pts in plot_points(sweep).items() if pts)
    variants = "".join(
        f"<li><code>{html.escape(v['variant_id'])}</code>: {html.escape(v['pipeline_version'])}"
        f", re-run from {html.escape(str(v['rerun_from'] or 'nothing (the campaign)'))}, "
        f"{v['n_calls']} calls ({v['n_run_now']} made in the last run)</li>"
        for v in sweep["variants"])
    page = f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>sweep of {html.escape(sweep['campaign_id'])}</title><style>{CSS}</style></head><body>
<h1>Sweep of campaign {html.escape(sweep['campaign_id'])}</h1>
<p class="note">Each variant is the campaign's pipeline with the settings named changed; its
deltas are against its own baseline. Verdicts against the campaign's delta, equivalence margin
+-{fmt(sweep['margin_points'])} points (docs/sweep.md defines each verdict). Dead air added:
the endpointing timer's change, silence every candidate waits through on every turn.</p>
<ul>{variants}</ul>
<div class="table-wrap" tabindex="0"><table><caption>Each variant's deltas and verdict, per
profile</caption><thead><tr>{''.join(f'<th scope="col">{c}</th>' for c in cols)}</tr></thead>
<tbody>{''.join(body)}</tbody></table></div>
{plots}
</body></html>
"""
    write_text_atomic(path, page)
    return path
