"""One offline HTML page per probe run, in the campaign report's style (inline SVG, no CDN, no
scripts). Each page leads with its verdict: the gaps with their 95% intervals in plain
sentences and a forest plot (:mod:`rig.report.svgplot`), then the largest gaps side by side, then
the detailed tables. :func:`table`, :func:`page`, :func:`cell`, :func:`p_fmt`,
:func:`gap_sentence` and :func:`side_by_side` are the building blocks for other probes."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from rig.paths import write_text_atomic
from rig.probes.data import CATEGORIES
from rig.probes.prompts import DECISION_TEXT, DECISIONS
from rig.probes.report_language import (
    feature_text,
    lang_attr,
    language_name,
    markers_note,
    quoted,
)
from rig.probes.schema import ShibbolethSummary
from rig.report.pages import CSS, fmt
from rig.report.svgplot import ForestRow, forest_svg, num

_EXTRA_CSS = """
blockquote{margin:.3rem 0 .6rem 0;padding-left:.6rem;border-left:3px solid #ddd;color:#333;
white-space:pre-wrap}
td.left,th.left{text-align:left}
th[scope=row]{background:none;font-weight:600;text-align:left}
.scroll{overflow-x:auto;max-width:100%}
.verdict{font-size:1.05rem;line-height:1.5;max-width:760px}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:.8rem;margin:.4rem 0 1.2rem}
.pair>div{border:1px solid #ddd;border-radius:4px;padding:.5rem .7rem;min-width:0}
.pair h4{margin:0 0 .3rem;font-size:.95rem}
.score{font-weight:700}
.pairs table{font-size:.85rem}.pairs th,.pairs td{padding:.3rem .3rem}
@media (max-width:640px){body{margin:1rem auto}.pair{grid-template-columns:1fr}}
"""


#: each answer variant as the report's prose names it (``article_dropped`` is an identifier)
VARIANT_TEXT = {"confident": "confident", "hedged": "hedged",
                "article_dropped": "article-dropped"}


def variant_text(variant: str) -> str:
    """An answer variant as prose names it: ``"article_dropped"`` -> ``"article-dropped"``
    (an unknown id with its underscores as spaces)."""
    return VARIANT_TEXT.get(variant, variant.replace("_", " "))


def esc(v: object) -> str:
    return html.escape(str(v))


def p_fmt(p: float | None) -> str:
    """A p-value: 3 significant digits, '< 0.001' below that."""
    if p is None:
        return "n/a"
    return "&lt; 0.001" if p < 0.001 else f"{p:.3f}"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """An HTML table (column headers ``<th scope="col">``, each row's first cell a row header
    ``<th scope="row">``) in a box that scrolls sideways on a narrow screen; cells are
    already-formatted HTML."""
    head = "".join(f'<th scope="col">{esc(h)}</th>' for h in headers)
    body = "".join("<tr>" + "".join((f'<th scope="row">{c}</th>' if i == 0 else f"<td>{c}</td>")
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return (f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody>'
            "</table></div>")


def page(title: str, body: str) -> str:
    """A whole offline page: inline styles, no script, no external URL, readable at a phone's
    width (a viewport meta, tables and figures that scroll sideways in their own box)."""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
            f'content="width=device-width,initial-scale=1"><title>{esc(title)}</title><style>'
            f"{CSS}{_EXTRA_CSS}</style></head><body><main>{body}</main></body></html>")


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
            rows.append([esc(cond) if first else "", esc(variant_text(v))]
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
        parts.append(f"<h3>{esc(cond)}: sessions by decision, {esc(variant_text(ref))} "
                     f"(rows) x {esc(variant_text(treat))} (columns)</h3>")
        parts.append(table([""] + [DECISION_TEXT.get(k, k) for k in levels],
                           [[esc(DECISION_TEXT.get(k, k))] + [fmt(n) for n in r]
                            for k, r in zip(levels, tab, strict=True)]))
    return parts


def gap_plot_svg(labels: Sequence[str], gaps: Sequence[float | None],
                 cis: Sequence[Sequence[float] | None], xlabel: str,
                 title: str = "Gaps with 95% intervals", caption: str = "") -> str:
    """Mean differences with 95% t intervals, one row per label, as an inline SVG forest plot
    with its text alternative (:func:`rig.report.svgplot.forest_svg`)."""
    rows = [ForestRow(lb, g, ci) for lb, g, ci in zip(labels, gaps, cis, strict=True)]
    return forest_svg(rows, xlabel=xlabel, title=title,
                      caption=caption or f"{esc(xlabel)}. Dot: the mean; bar: its 95% "
                      "interval; dashed line: no difference.")


def ci_text(ci: Sequence[float] | None, why: str = "", digits: int = 2) -> str:
    """``"95% CI -1.52 to -0.93"``, or why there is none."""
    if ci:
        return f"95% CI {num(ci[0], digits)} to {num(ci[1], digits)}"
    return f"no interval: {why}" if why else "no interval"


def plural(n: int, word: str) -> str:
    """``"1 question"``, ``"3 questions"`` (``word`` in the singular)."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def gap_sentence(label: str, p: dict, subject: str, other: str, ref_name: str,
                 unit: str = "points", pair_word: str = "question pair") -> str:
    """One plain sentence (escaped HTML) of a paired comparison (a ``paired`` dict of
    :func:`rig.stats.comparisons.paired_comparison`): how much lower or higher ``subject``
    scores than ``other``, the 95% t interval and whether it leaves out 0, the gap as a share
    of the mean of ``ref_name``, the p-value and the number of pairs. ``"hedged answers
    score 1.22 points lower than their confident twins (difference -1.22, 95% CI -1.52 to
    -0.93, which leaves out 0; -27.7% of the confident mean; p < 0.001; 27 question
    pairs)"``. With fewer than 2 pairs it says the gap is not measurable (how many pairs,
    how many an interval needs, the observed difference), never that the two score the
    same."""
    d, ci = p.get("mean_diff"), p.get("t_ci95")
    if d is None:
        why = (p.get("not_computable") or {}).get("mean_diff", "no pair")
        return f"<b>{esc(label)}</b>: not measurable ({esc(why)})."
    n = int(p.get("n_pairs") or 0)
    if n < 2:
        return (f"<b>{esc(label)}</b>: the gap between {esc(subject)} and {esc(other)} is not "
                f"measurable from {plural(n, pair_word)}: an interval needs at least 2 "
                f"{pair_word}s (observed difference {num(d)}{' ' + unit if unit else ''}).")
    if abs(d) < 0.005:
        head = f"{esc(subject)} score the same as {esc(other)} on average"
    else:
        head = (f"{esc(subject)} score {num(abs(d))}{' ' + unit if unit else ''} "
                f"{'lower' if d < 0 else 'higher'} than {esc(other)}")
    why = (p.get("not_computable") or {}).get("t_ci95", "")
    clear = ("" if not ci else ", which leaves out 0" if ci[0] > 0 or ci[1] < 0
             else ", which includes 0 (no difference is plausible)")
    pct = (f"; {num(p['gap_pct'], 1)}% of the {esc(ref_name)} mean"
           if p.get("gap_pct") is not None else "")
    return (f"<b>{esc(label)}</b>: {head} (difference {num(d)}, {esc(ci_text(ci, why))}"
            f"{clear}{pct}; p {paired_p(p)}; {plural(int(p.get('n_pairs') or 0), pair_word)}).")


def side_by_side(left_title: str, left_body: str, right_title: str, right_body: str) -> str:
    """Two panels side by side (stacked on a phone); titles and bodies are escaped HTML."""
    return (f'<div class="pair"><div><h4>{left_title}</h4>{left_body}</div>'
            f"<div><h4>{right_title}</h4>{right_body}</div></div>")


def _shibboleth_verdict(summary: ShibbolethSummary, detail: dict, mit: dict) -> list[str]:
    ref, treat = variant_text(summary.reference), variant_text(summary.treatment)
    parts = ["<h2>Verdict</h2>"]
    for cond, d in detail.items():
        s = gap_sentence(f"{cond} prompt", d["paired"], f"{treat} answers",
                         f"their {ref} twins", ref)
        m = mit.get(cond, {})
        if cond != "plain" and m.get("reduction_points") is not None:
            r = m["reduction_points"]
            how = ("is unchanged" if abs(r) < 0.005 else
                   f"shrinks by {num(abs(r))} points" if r > 0 else
                   f"grows by {num(abs(r))} points")
            s += f" Against the plain prompt the gap {how}."
        dt = d["decisions"]
        if dt.get("n_paired"):
            s += (f" Final decisions: {dt.get('n_discordant', 0)} of {dt['n_paired']} sessions "
                  f"decided differently (p {cell(dt, 'p')}).")
        parts.append(f"<p class='verdict'>{s}</p>")
    rows: list[ForestRow] = []
    cats = [c for c in CATEGORIES if any(c in d["by_category"] for d in detail.values())]
    for cond, d in detail.items():
        rows.append(ForestRow(f"all categories, {cond}", d["paired"].get("mean_diff"),
                              d["paired"].get("t_ci95"), cond))
    first = next(iter(detail), None)
    for cat in cats if first else ():
        c = detail[first]["by_category"].get(cat) or {}
        rows.append(ForestRow(CATEGORIES[cat][0], c.get("mean_diff"), c.get("t_ci95"), first,
                              (c.get("not_computable") or {}).get("mean_diff", "")))
    if first:
        by_cat = sorted(((CATEGORIES[c][0], detail[first]["by_category"][c]) for c in cats
                         if c in detail[first]["by_category"]
                         and detail[first]["by_category"][c].get("mean_diff") is not None),
                        key=lambda kv: -abs(kv[1]["mean_diff"]))
        items = "; ".join(
            f"{esc(lb)} {num(c['mean_diff'])} ({esc(ci_text(c.get('t_ci95')))}, "
            f"{plural(c['n_pairs'], 'question')})" for lb, c in by_cat)
        if items:
            parts.append(f"<p class='verdict'>By interview category ({esc(first)} prompt), "
                         f"{esc(treat)} - {esc(ref)} in points, largest gap first: {items}.</p>")
    if rows:
        parts.append(forest_svg(
            rows, xlabel=f"{treat} - {ref} (points on the 1-5 scale)",
            title=f"Gap between {treat} and {ref} answers by category and prompt",
            caption=f"Mean difference {esc(treat)} - {esc(ref)} per question pair: all "
                    "categories under each prompt condition, then each interview category "
                    f"under the {esc(first or '')} prompt. The dot is the mean, the bar its 95% t "
                    "interval (none with fewer than 2 pairs or no spread), the dashed line no "
                    "difference. Left of the line: the scorer marks the "
                    f"{esc(treat)} answers down."))
    return parts


def _largest_gaps(detail: dict, language: str = "en") -> list[str]:
    """The questions whose two answers scored furthest apart, the two answers side by side
    with their scores and the scorer's reasoning; the question, the answers and the
    reasoning marked with the set's ``language`` (:func:`rig.probes.report_language.
    lang_attr`)."""
    lang = lang_attr(language)
    parts = ["<h2>The largest gaps, side by side</h2>",
             "<p class='note'>The same question answered with the same content twice; the "
             "scorer's score and reasoning under each.</p>"]
    for cond, d in detail.items():
        ex = d.get("largest_gaps") or []
        parts.append(f"<h3>{esc(cond)} prompt</h3>")
        if not ex:
            parts.append("<p class='note'>No question scored differently.</p>")
            continue
        for e in ex:
            panels = []
            for role in ("reference", "treatment"):
                r = e[role]
                panels += [f"{esc(variant_text(r['variant']))}: score <span class='score'>"
                           f"{r['score']:g}</span>",
                           f"<blockquote{lang}>{esc(r['answer'])}</blockquote><p class='note'>"
                           f"reasoning: <i{lang}>{esc(r['reasoning'])}</i></p>"]
            cat = CATEGORIES.get(e["category"], (e["category"],))[0]
            parts.append(f"<p><b>{esc(e['question_id'])}</b> ({esc(cat)}), difference "
                         f"{num(e['diff'])}: {quoted(e['question'], language)}</p>"
                         + side_by_side(*panels))
    return parts


def write_shibboleth_report(path: str | Path, summary: ShibbolethSummary) -> Path:
    """Write ``report.html`` for a hedging or accent-markers run from its summary."""
    path = Path(path)
    ref_id, treat_id = summary.reference, summary.treatment
    ref, treat = variant_text(ref_id), variant_text(treat_id)
    detail: dict = summary.conditions_detail
    mit: dict = summary.mitigation
    sc = summary.scorer
    parts = [
        f"<h1>Probe: {esc(summary.probe)}</h1>",
        f"<p class='note'>Scorer <code>{esc(sc.get('backend'))}</code> "
        f"<code>{esc(sc.get('model'))}</code>"
        + (f" at <code>{esc(sc['base_url'])}</code>" if sc.get("base_url") else "")
        + f", temperature {fmt(sc.get('temperature'))} · probe data "
        f"<code>{esc(summary.data_version)}</code> in {esc(language_name(summary.language))} "
        f"(<code>{esc(summary.language)}</code>) · {summary.n_sessions} sessions x "
        f"{summary.questions_per_session} questions per condition, seed {summary.seed} · "
        f"{summary.n_ratings} ratings ({summary.n_rating_failures} unparseable or out of "
        f"range, not scored) · {summary.n_decisions} decisions "
        f"({summary.n_decision_failures} unparseable).</p>",
        f"<p class='note'>Each question has a <b>{esc(ref)}</b> answer and its <b>"
        f"{esc(treat)}</b> twin with the same content, differing only in "
        f"{feature_text(summary)}. Each answer is rated 1-5 under its interview "
        "category; after a session's ratings the scorer decides: advance, advance with "
        "reservations, or do not advance.</p>",
        *markers_note(summary),
        *_shibboleth_verdict(summary, detail, mit),
        *_largest_gaps(detail, summary.language),
        "<h2>Details</h2><h3>Gap by prompt condition</h3>",
        f"<p class='note'>Difference = {esc(treat)} - {esc(ref)} (points on the 1-5 scale); "
        f"gap % = difference / mean {esc(ref)}. {esc(summary.pairing)} Effect size: "
        f"{esc(summary.effect_size)} (Cohen's d for paired data). Reduction = |gap plain| "
        "- |gap under the mitigation|. p = the paired t-test's p-value, or the exact sign "
        "test's, marked (sign), when every pair differs by the same non-zero amount and t is "
        "undefined; the t, Wilcoxon signed-rank and sign tests are shown side by side.</p>",
    ]
    rows = []
    for cond, d in detail.items():
        p = d["paired"]
        m = mit.get(cond, {})
        red = ("(reference)" if cond == "plain" else
               f"{cell(m, 'reduction_points')} ({cell(m, 'reduction_pct')}%)")
        rows.append([esc(cond), fmt(p["n_pairs"]), cell(p, "mean_reference"),
                     cell(p, "mean_treatment"), cell(p, "mean_diff"), cell(p, "gap_pct"),
                     fmt(p.get("t_ci95")), paired_p(p), cell(p, "t_p"),
                     cell(p, "wilcoxon_p"), cell(p, "sign_p"), cell(p, "cohens_dz"), red])
    parts.append(table(["condition", "questions paired", f"mean {ref}", f"mean {treat}",
                        "difference", "gap %", "95% CI (t)", "p", "paired t p", "Wilcoxon p",
                        "sign p", "d_z", "reduction vs plain (points, %)"], rows))
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

    parts += _decisions(detail, ref_id, treat_id)

    parts.append("<h3>By interview category</h3>")
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

    fails = []
    for cond, d in detail.items():
        for v, c in d["rating_failures"].items():
            fails.append(f"<li>{esc(cond)}, {esc(variant_text(v))}: ratings "
                         + ", ".join(f"{esc(k)} {n}" for k, n in c.items()) + "</li>")
        for v, c in d["decision_failures"].items():
            fails.append(f"<li>{esc(cond)}, {esc(variant_text(v))}: decisions "
                         + ", ".join(f"{esc(k)} {n}" for k, n in c.items()) + "</li>")
    parts += ["<h2>Replies not scored</h2>",
              f"<ul>{''.join(fails) or '<li>none: every reply parsed</li>'}</ul>",
              f"<p class='note'>Reference points: {esc(summary.reference_points)}.</p>"]
    write_text_atomic(path, page(f"rig probe {summary.probe}", "\n".join(parts)))
    return path
