"""The offline ``report.html`` of ``rig scorer validate``: figures per scoring mode beside the
bank's own inter-grader ceiling, and scatters of judge vs reference grade (inline SVG)."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from rig.paths import write_text_atomic
from rig.report.pages import CSS as _CSS
from rig.report.pages import fmt as _fmt
from rig.report.pages import svg

_FIGURES = [
    ("n_answers", "answers", 0), ("spearman", "Spearman", 3),
    ("spearman_ci95", "Spearman 95% CI", 2), ("pearson", "Pearson", 3),
    ("pearson_ci95", "Pearson 95% CI", 2), ("mae_points", "mean abs. error (points)", 1),
    ("decision_agreement", "decision agreement", 3), ("cohen_kappa", "Cohen's kappa", 3),
    ("tier_order_rate", "questions in tier order", 3),
    ("tier_pair_concordance", "tier pairs in order", 3),
    ("distinct_scores", "distinct scores", 0), ("retest_sd", "test-retest SD", 2),
    ("retest_identical", "repeats identical", 0), ("verdict", "verdict", 0),
]
_TIER_COLOUR = {"strong": "#1a7f37", "borderline": "#d9822b", "weak": "#b00020"}


def _scatter_svg(rows: pd.DataFrame, mode: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = rows[(rows["mode"] == mode) & (rows["parse_status"] == "ok")]
    d = d.groupby("answer_id").agg(score=("score", "mean"), ref=("reference_score", "first"),
                                   cutoff=("cutoff", "first"), tier=("tier", "first"))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4.4))
    for tier, g in d.groupby("tier"):
        c = _TIER_COLOUR.get(str(tier), "#555")
        a1.scatter(g["ref"], g["score"], s=22, color=c, label=str(tier))
        a2.scatter(g["ref"] - g["cutoff"], g["score"] - g["cutoff"], s=22, color=c)
    a1.plot([0, 100], [0, 100], color="#888", lw=1, ls="--")
    a1.set(xlim=(0, 100), ylim=(-2, 102), xlabel="reference grade (mean of graders)",
           ylabel=f"judge score ({mode})", title="judge vs reference")
    a1.legend(frameon=False, fontsize=8)
    a2.axhline(0, color="#888", lw=1)
    a2.axvline(0, color="#888", lw=1)
    a2.set(xlabel="reference - cutoff", ylabel="judge - cutoff",
           title="decisions: agree in the top-right and bottom-left quadrants")
    fig.tight_layout()
    agree = int(((d["ref"] >= d["cutoff"]) == (d["score"] >= d["cutoff"])).sum())
    words = (f"{len(d)} answers; judge score against the reference grade (left) and both "
             f"against the question's cutoff (right): the decisions agree on {agree} of "
             f"{len(d)}")
    return svg(fig, title=f"Judge ({mode}) against the reference grades", desc=words + ".",
               caption=words + ".")


def write_validity_report(path: Path, result: dict) -> Path:
    """Write the page for a :func:`rig.scorer.validate.summarise` result."""
    cols = [(f"judge: {m}", d["validity"]) for m, d in result["modes"].items()]
    if "inter_grader" in result:
        g = result["inter_grader"]
        cols.append((f"grader {g['graders'][1]} vs {g['graders'][0]} (ceiling)",
                     g["validity"]))
    head = "".join(f"<th>{html.escape(c)}</th>" for c, _ in cols)
    body = "".join(
        f"<tr><td>{html.escape(label)}</td>"
        + "".join(f"<td>{_fmt(v.get(k), digits)}</td>" for _, v in cols) + "</tr>"
        for k, label, digits in _FIGURES)
    secs = "".join(
        f"<li>{html.escape(m)}: median {_fmt(d['seconds_per_grading']['median'])} s, max "
        f"{_fmt(d['seconds_per_grading']['max'])} s per grading; {d['n_failures']} of "
        f"{d['n_gradings']} gradings failed (parse, error or timeout)</li>"
        for m, d in result["modes"].items())
    crit = "".join(
        f"<li>{html.escape(m)}: {d['criteria'].get('n_pairs', 0)} (answer, criterion) pairs, "
        f"mean absolute error {_fmt(d['criteria'].get('mae_share'), 3)} of a criterion's "
        f"maximum, Pearson {_fmt(d['criteria'].get('pearson'), 3)}</li>"
        for m, d in result["modes"].items())
    rows = pd.DataFrame(result["answers"])
    plots = "".join(f"<h2>{html.escape(m)}</h2>{_scatter_svg(rows, m)}"
                    for m in result["modes"])
    caveat = html.escape(result.get("inter_grader", {}).get("caveat", ""))
    doc = f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>rig scorer validate: {html.escape(str(result.get('bank')))}</title>
<style>{_CSS}</style></head><body>
<h1>Judge validity on {html.escape(str(result.get('bank')))}</h1>
<p class="note">Pipeline <code>{html.escape(str(result.get('pipeline_version')))}</code>.
The judge grades every clean script of the bank (no audio); its scores are compared with the
bank's reference grades (the mean of its graders). Decisions: score &gt;= the question's
cutoff. A judge that cannot rank clean scripts cannot measure what the audio path takes
from them.</p>
<table><tr><th>figure</th>{head}</tr>{body}</table>
<p class="note">The last column is the bank's own graders against each other: the ceiling.
{caveat}.</p>
<h2>Time and failures</h2><ul>{secs}</ul>
<h2>Per criterion, against grader a's points</h2><ul>{crit}</ul>
{plots}
</body></html>"""
    write_text_atomic(path, doc)
    return path
