"""The tables that ``rig probe ...`` prints from a probe's summary (its ``summary.json``
through its model, :mod:`rig.probes.schema`): :func:`print_shibboleth` (hedging, accent
markers), :func:`print_name_swap`, :func:`print_framing`, :func:`print_invariance`."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from rig.console import print_table, stdout_console
from rig.probes.schema import (
    FramingSummary,
    InvarianceSummary,
    NameSwapSummary,
    ShibbolethSummary,
)


def _f(v, d=2) -> str:
    return "n/a" if v is None else (f"{v:.{d}f}" if isinstance(v, float) else str(v))


def print_shibboleth(summary: ShibbolethSummary, out: Path) -> None:
    """The hedging or accent-markers summary: one row per prompt condition."""
    ref, treat = summary.reference, summary.treatment
    t = Table(title=f"probe {summary.probe} ({summary.language}): {treat} (trt) vs {ref} "
                    "(ref), per question",
              box=None, caption="p: paired t-test, or the exact sign test (s) when every "
                                "pair differs by the same non-zero amount; W p: Wilcoxon "
                                "signed-rank; S p: sign test; dec p: the sessions' paired "
                                "decisions, McNemar exact (2 decisions) or Stuart-Maxwell (3)")
    for col in ("condition", "n", "ref", "trt", "diff", "gap %", "p", "W p", "S p", "d_z",
                "dec p"):
        t.add_column(col, justify="left" if col == "condition" else "right", no_wrap=True)

    for cond, d in summary.conditions_detail.items():
        p = d["paired"]
        t.add_row(cond, _f(p["n_pairs"]), _f(p["mean_reference"]), _f(p["mean_treatment"]),
                  _f(p["mean_diff"]), _f(p["gap_pct"], 1),
                  _f(p["p"], 3) + (" s" if p["p_test"] == "sign" else ""),
                  _f(p["wilcoxon_p"], 3), _f(p["sign_p"], 3), _f(p["cohens_dz"]),
                  _f(d["decisions"]["p"], 3))
    print_table(t)
    stdout_console().print(f"replies not scored: {summary.n_rating_failures} ratings, "
                           f"{summary.n_decision_failures} decisions")
    stdout_console().print(f"wrote {out}/scores.parquet, {out}/decisions.parquet, "
                           f"{out}/summary.json, {out}/report.html")


def _wrote(out: Path) -> None:
    stdout_console().print(f"wrote {out}/scores.parquet, {out}/summary.json, {out}/report.html")


def print_name_swap(s: NameSwapSummary, out: Path) -> None:
    """The name-swap summary: per name set, the groups' rates and the bias index."""
    for set_id, per in s.detail.items():
        t = Table(title=f"name swap, name set {set_id}: per group and condition", box=None,
                  caption="bias index: mean over pairs of groups of (1 - p); hire: "
                          "chi-square, qualification: Mann-Whitney, compensation: KS on "
                          "compensation standardised per item (z)")
        for col in ("condition", "group", "hire rate", "mean qual.", "mean comp. USD",
                    "mean comp. z"):
            t.add_column(col, justify="left" if col in ("condition", "group") else "right")
        bi = Table(title=f"bias index, name set {set_id} (n/a: no pair testable)", box=None)
        bi.add_column("condition")
        for f in s.features:
            bi.add_column(f, justify="right")
        for cond, d in per.items():
            for g, r in d["by_group"].items():
                t.add_row(cond, g, _f(r["hire_rate"]), _f(r["mean_qualification"]),
                          _f(r["mean_compensation_usd"], 0), _f(r["mean_compensation_z"]))
            bi.add_row(cond, *[_f(d["features"][f]["bias_index"]["index"])
                               for f in s.features])
        print_table(t)
        print_table(bi)
    stdout_console().print(f"replies not scored: {s.n_failures} of {s.n_asks}")
    _wrote(out)


def print_framing(s: FramingSummary, out: Path) -> None:
    """The dual-framing summary: aligned scores per topic."""
    t = Table(title="dual framing: aligned scores (+ favours target a)", box=None,
              caption="mu: mean aligned score; t p: one-sample t-test against 0; d: Cohen's "
                      "d; asym.: mu affirmative - mu reverse")
    for col in ("topic", "n", "mu aff.", "mu rev.", "mu both", "sd", "t p", "d", "neutral",
                "asym."):
        t.add_column(col, justify="left" if col == "topic" else "right", no_wrap=True)
    rows = [*s.by_topic.items(), ("all topics", s.overall)] if s.overall else []
    for tid, fs in rows:
        o = fs["both"]["one_sample"]
        t.add_row(tid, f"{fs['both']['n_scored']}/{fs['both']['n_asked']}",
                  _f(fs["affirmative"]["one_sample"]["mean"]),
                  _f(fs["reverse"]["one_sample"]["mean"]), _f(o["mean"]), _f(o["sd"]),
                  _f(o["t_p"], 3), _f(o["cohens_d"]), _f(fs["both"]["neutrality_rate"]),
                  _f(fs["asymmetry"]))
    print_table(t)
    stdout_console().print(f"replies not recognised (not scored): {s.n_failures} of "
                           f"{s.n_asks}")
    _wrote(out)


def print_invariance(s: InvarianceSummary, out: Path) -> None:
    """The invariance summary: per perturbation, the measures' paired differences."""
    from rig.probes.invariance import violation_text

    t = Table(title="invariance of the written assessment", box=None,
              caption="violated: Bonferroni-corrected paired p < alpha (paired t-test; the "
                      "exact sign test when every pair differs by the same non-zero amount); "
                      "diff = perturbed - reference; violation rate: violated of the measures "
                      "tested (untestable: under 2 scored pairs)")
    for col in ("perturbation", "kind", "pairs", "changed", *s.measures, "violation rate"):
        t.add_column(col, justify="left" if col in ("perturbation", "kind") else "right")
    for pert, d in s.by_perturbation.items():
        diffs = [_f(x["paired"]["mean_diff"]) + ("*" if x["violated"] else "")
                 for x in d["tests"]]
        t.add_row(pert, d["kind"], f"{d['n_scored']}/{d['n_pairs']}",
                  _f(d["changed_reply_rate"]), *diffs, violation_text(d))
    for kind, d in s.by_kind.items():
        t.add_row(f"all {kind}", "", "", "", *[""] * len(s.measures), violation_text(d))
    print_table(t)
    stdout_console().print("* violated")
    _wrote(out)


#: the printer of each bias probe's summary, by the probe's ``probe.json`` kind
BIAS_PRINTERS = {"name_swap": print_name_swap, "dual_framing": print_framing,
                 "invariance": print_invariance}
