"""One offline HTML page per probe run, in the campaign report's style (inline SVG, no CDN, no
scripts). :func:`table`, :func:`page`, :func:`cell` and :func:`p_fmt` are the building blocks
for other probes."""

from __future__ import annotations

import html
import io
from collections.abc import Sequence
from pathlib import Path

from rig.pages import CSS, fmt
from rig.probes.data import CATEGORIES
from rig.probes.prompts import DECISION_TEXT, DECISIONS

_EXTRA_CSS = """
blockquote{margin:.3rem 0 .6rem 1rem;padding-left:.6rem;border-left:3px solid #ddd;color:#333}
td.left,th.left{text-align:left}
"""


def esc(v: object) -> str:
    return html.escape(str(v))


def p_fmt(p: float | None) -> str:
    """A p-value: 3 significant digits, '< 0.001' below that."""
    if p is None:
        return "n/a"
    return "&lt; 0.001" if p < 0.001 else f"{p:.3f}"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """An HTML table; cells are already-formatted HTML."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def page(title: str, body: str) -> str:
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>'
            f"{esc(title)}</title><style>{CSS}{_EXTRA_CSS}</style></head><body>{body}"
            "</body></html>")


def cell(d: dict, key: str) -> str:
    """A table cell of ``d[key]``: the value (a p-value as :func:`p_fmt` writes it, anything
    else with 2 decimals), or 'n/a' with the reason from ``d["not_computable"]`` as a
    tooltip."""
    v = d.get(key)
    if v is None:
        why = (d.get("not_computable") or {}).get(key, "")
        return f"<span title='{esc(why)}'>n/a</span>" if why else "n/a"
    return p_fmt(v) if key == "p" or key.endswith("_p") else fmt(v, 2)


def paired_p(pc: dict) -> str:
    """The p-value a summary reads (``p``), marked "(sign)" when it is the exact sign test's
    (every pair differs by the same non-zero amount); 'n/a' with the reason otherwise."""
    if pc.get("p") is None:
        return cell(pc, "p")
    return p_fmt(pc["p"]) + (" (sign)" if pc.get("p_test") == "sign" else "")


_DECISION_TEST_NAME = {"mcnemar_exact": "McNemar exact", "stuart_maxwell": "Stuart-Maxwell"}


def _decisions(detail: dict, ref: str, treat: str) -> list[str]:
    """The final-decisions section: counts per variant, the paired test, the paired tables."""
    parts = ["<h2>Final decisions</h2>",
             "<p class='note'>Each session asks the same questions under both variants, so "
             "its two decisions are paired. The test compares them session by session: "
             "McNemar's exact test when two decisions take part in a session decided "
             "differently, Stuart-Maxwell (marginal homogeneity) when three do. Sessions "
             "with a decision under only one variant are left out of the test.</p>"]
    rows = []
    for cond, d in detail.items():
        dt = d["decisions"]
        test = _DECISION_TEST_NAME.get(dt.get("test") or "", "n/a")
        stat = dt.get("statistic")
        stat_s = ("n/a" if stat is None else
                  f"min(b, c) = {int(stat)}" if dt.get("test") == "mcnemar_exact" else
                  f"X² = {fmt(stat, 2)}, df {dt.get('dof')}")
        for i, v in enumerate((ref, treat)):
            c = dt["counts"].get(v, {})
            fails = sum(d["decision_failures"].get(v, {}).values())
            first = i == 0
            rows.append([esc(cond) if first else "", esc(v)]
                        + [fmt(c.get(k, 0)) for k in DECISIONS] + [fmt(fails)]
                        + ([fmt(dt.get("n_paired")), fmt(dt.get("n_discordant")),
                            esc(test), stat_s, cell(dt, "p")] if first else [""] * 5))
    parts.append(table(["condition", "variant"] + [DECISION_TEXT[k] for k in DECISIONS]
                       + ["unparseable", "sessions paired", "decided differently",
                          "paired test", "statistic", "p"], rows))
    notes = []
    for cond, d in detail.items():
        dt = d["decisions"]
        why = (dt.get("not_computable") or {}).get("p")
        if why:
            notes.append(f"<li>{esc(cond)}: paired decision test not computable: "
                         f"{esc(why)}</li>")
        notes += [f"<li>{esc(cond)}: {esc(n)}</li>" for n in dt.get("notes", [])]
    if notes:
        parts.append(f"<ul class='note'>{''.join(notes)}</ul>")
    for cond, d in detail.items():
        tab = d["decisions"].get("table")
        if not tab:
            continue
        levels = d["decisions"].get("levels") or list(DECISIONS)
        parts.append(f"<h3>{esc(cond)}: sessions by decision, {esc(ref)} (rows) x "
                     f"{esc(treat)} (columns)</h3>")
        parts.append(table([""] + [DECISION_TEXT.get(k, k) for k in levels],
                           [[esc(DECISION_TEXT.get(k, k))] + [fmt(n) for n in r]
                            for k, r in zip(levels, tab, strict=True)]))
    return parts


def gap_plot_svg(labels: Sequence[str], gaps: Sequence[float | None],
                 cis: Sequence[Sequence[float] | None], xlabel: str) -> str:
    """Mean differences with 95% t intervals, one row per label, as inline SVG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 0.5 * len(labels) + 1.2))
    for i, (g, ci) in enumerate(zip(gaps, cis, strict=True)):
        if g is None:
            ax.text(0, i, "  not computable", va="center", fontsize=8, color="#888")
            continue
        if ci:
            ax.plot(ci, [i, i], color="#1f5fa8", lw=2)
        ax.plot([g], [i], "o", color="#1f5fa8")
    ax.axvline(0, color="#888", lw=1, ls="--")
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    fig.tight_layout()
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    svg = buf.getvalue()
    return svg[svg.find("<svg"):]


def write_shibboleth_report(path: str | Path, summary: dict) -> Path:
    """Write ``report.html`` for a hedging or accent-markers run from its summary."""
    path = Path(path)
    ref, treat = summary["reference"], summary["treatment"]
    detail: dict = summary.get("conditions_detail", {})
    mit: dict = summary.get("mitigation", {})
    sc = summary.get("scorer", {})
    parts = [
        f"<h1>Probe: {esc(summary['probe'])}</h1>",
        f"<p class='note'>Scorer <code>{esc(sc.get('backend'))}</code> "
        f"<code>{esc(sc.get('model'))}</code>"
        + (f" at <code>{esc(sc['base_url'])}</code>" if sc.get("base_url") else "")
        + f", temperature {fmt(sc.get('temperature'))} · probe data "
        f"<code>{esc(summary['data_version'])}</code> · {summary['n_sessions']} sessions x "
        f"{summary['questions_per_session']} questions per condition, seed {summary['seed']} · "
        f"{summary['n_ratings']} ratings ({summary['n_rating_failures']} unparseable or out of "
        f"range, not scored) · {summary['n_decisions']} decisions "
        f"({summary['n_decision_failures']} unparseable).</p>",
        f"<p class='note'>Each question has a <b>{esc(ref)}</b> answer and a <b>{esc(treat)}"
        f"</b> twin with the same content, differing only in {esc(summary['feature'])}. Each "
        "answer is rated 1-5 under its interview category; after a session's ratings the "
        "scorer decides: advance, advance with reservations, or do not advance.</p>",
        "<h2>Gap by prompt condition</h2>",
        f"<p class='note'>Difference = {esc(treat)} - {esc(ref)} (points on the 1-5 scale); "
        f"gap % = difference / mean {esc(ref)}. {esc(summary['pairing'])} Effect size: "
        f"{esc(summary['effect_size'])} (Cohen's d for paired data). Reduction = |gap plain| "
        "- |gap under the mitigation|. p = the paired t-test's p-value, or the exact sign "
        "test's, marked (sign), when every pair differs by the same non-zero amount and t is "
        "undefined; the t, Wilcoxon signed-rank and sign tests are shown side by side.</p>",
    ]
    rows, labels, gaps, cis = [], [], [], []
    for cond, d in detail.items():
        p = d["paired"]
        m = mit.get(cond, {})
        red = ("(reference)" if cond == "plain" else
               f"{cell(m, 'reduction_points')} ({cell(m, 'reduction_pct')}%)")
        rows.append([esc(cond), fmt(p["n_pairs"]), cell(p, "mean_reference"),
                     cell(p, "mean_treatment"), cell(p, "mean_diff"), cell(p, "gap_pct"),
                     fmt(p.get("t_ci95")), paired_p(p), cell(p, "t_p"),
                     cell(p, "wilcoxon_p"), cell(p, "sign_p"), cell(p, "cohens_dz"), red])
        labels.append(cond)
        gaps.append(p.get("mean_diff"))
        cis.append(p.get("t_ci95"))
    parts.append(table(["condition", "questions paired", f"mean {ref}", f"mean {treat}",
                        "difference", "gap %", "95% CI (t)", "p", "paired t p", "Wilcoxon p",
                        "sign p", "d_z", "reduction vs plain (points, %)"], rows))
    if labels:
        parts.append(gap_plot_svg(labels, gaps, cis,
                                  f"mean {treat} - {ref} per question (points, 95% t CI)"))
    rows = []
    for cond, d in detail.items():
        p = d["paired_by_session"]
        rows.append([esc(cond), fmt(p["n_pairs"]), cell(p, "mean_reference"),
                     cell(p, "mean_treatment"), cell(p, "mean_diff"), paired_p(p),
                     cell(p, "t_p"), cell(p, "wilcoxon_p"), cell(p, "sign_p"),
                     cell(p, "cohens_dz")])
    parts += ["<h3>Paired by session</h3>",
              table(["condition", "sessions", f"mean {ref}", f"mean {treat}", "difference",
                     "p", "paired t p", "Wilcoxon p", "sign p", "d_z"], rows)]

    parts += _decisions(detail, ref, treat)

    parts.append("<h2>By interview category</h2>")
    conds = list(detail)
    rows = []
    for cat, (label, _) in CATEGORIES.items():
        first = detail[conds[0]]["by_category"].get(cat) if conds else None
        if not first:
            continue
        row = [esc(label), fmt(first["n_pairs"]), cell(first, "mean_reference"),
               cell(first, "mean_treatment")]
        for cond in conds:
            c = detail[cond]["by_category"].get(cat, {})
            row.append(f"{cell(c, 'mean_diff')} ({cell(c, 'gap_pct')}%)" if c else "n/a")
        rows.append(row)
    parts.append(table(["category", "questions paired", f"mean {ref} ({conds[0] if conds else ''})",
                        f"mean {treat} ({conds[0] if conds else ''})"]
                       + [f"difference (gap %) {c}" for c in conds], rows))

    parts.append("<h2>The largest gaps, with the scorer's reasoning</h2>")
    for cond, d in detail.items():
        ex = d.get("largest_gaps") or []
        parts.append(f"<h3>{esc(cond)}</h3>")
        if not ex:
            parts.append("<p class='note'>No question scored differently.</p>")
            continue
        for e in ex:
            items = "".join(
                f"<li><b>{esc(e[role]['variant'])}</b> (score {fmt(e[role]['score'])}): "
                f"<blockquote>{esc(e[role]['answer'])}</blockquote>reasoning: "
                f"<i>{esc(e[role]['reasoning'])}</i></li>" for role in ("reference", "treatment"))
            parts.append(f"<p><b>{esc(e['question_id'])}</b> "
                         f"({esc(CATEGORIES[e['category']][0])}), difference "
                         f"{fmt(e['diff'])}: {esc(e['question'])}</p><ul>{items}</ul>")

    fails = []
    for cond, d in detail.items():
        for v, c in d["rating_failures"].items():
            fails.append(f"<li>{esc(cond)}, {esc(v)}: ratings "
                         + ", ".join(f"{esc(k)} {n}" for k, n in c.items()) + "</li>")
        for v, c in d["decision_failures"].items():
            fails.append(f"<li>{esc(cond)}, {esc(v)}: decisions "
                         + ", ".join(f"{esc(k)} {n}" for k, n in c.items()) + "</li>")
    parts += ["<h2>Replies not scored</h2>",
              f"<ul>{''.join(fails) or '<li>none: every reply parsed</li>'}</ul>",
              f"<p class='note'>Reference points: {esc(summary['reference_points'])}.</p>"]
    path.write_text(page(f"rig probe {summary['probe']}", "\n".join(parts)), encoding="utf-8")
    return path
