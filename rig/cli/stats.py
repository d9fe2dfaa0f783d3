"""``rig stats``: thin command-line wrappers over :mod:`rig.stats`; all computation lives
there (``rig gate`` is :mod:`rig.cli.gate`).

Exit codes: 0 ok, 1 a threshold breached (a ratio under ``--threshold``), 2 bad input (the
message names the file, the column or field, and the value).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from rig.cli.common import JsonOpt, RigTyper, fail, or_fail, print_json
from rig.console import stdout_console
from rig.stats.equivalence import equivalence_by_profile
from rig.stats.paired import PairedAnalysis, paired_analysis
from rig.stats.rates import (
    ProportionComparison,
    RateTable,
    compare_proportions,
    scoring_rate_table,
    selection_rate_table,
)
from rig.stats.rows import parse_column_map, read_rows
from rig.stats.sample_size import SampleSize, paired_sample_size

FIGURES: tuple[tuple[str, str], ...] = (
    ("mean_delta", "mean over answers of (profile score - baseline score), repeats averaged "
                   "first, in points."),
    ("ci95", "seeded percentile-bootstrap 95% interval of mean_delta, resampling answers."),
    ("t_ci95", "Student t 95% interval of mean_delta."),
    ("flip_rate", "share of answers whose advance/reject decision differs from the "
                  "baseline's (Wilson 95% interval)."),
    ("tier_inversion", "share of (weak, strong) answer pairs of a question where the weak "
                       "answer on the baseline outscores the strong one on the profile."),
    ("noise floor", "SD of the score difference between two repeats of the same baseline "
                    "call, and the flip rate between repeats; an effect inside it is not "
                    "evidence."),
    ("scoring rate", "share of a category's rows scoring strictly above the median of all "
                     "rows (NYC LL144)."),
    ("selection rate", "share of a category's rows that advanced."),
    ("impact ratio", "a category's rate / the highest category's rate; under 0.8 is flagged "
                     "(29 CFR 1607.4(D))."),
    ("z, p_z", "two-proportion z-test against the highest category (pooled unless "
               "--unpooled)."),
    ("p_fisher", "Fisher's exact test, the one to read when small_sample is set."),
    ("sample size n", "answers per profile to detect --delta points when the paired deltas "
                      "have SD --sd."),
    ("TOST (equivalence)", "a Holm-adjusted p under alpha claims the gap is within plus or "
                           "minus the margin."),
)

HELP = (
    "Statistics on call rows: a campaign's calls.parquet, or your own CSV/Parquet export.\n\n"
    "What each figure means, in one line:\n\n"
    + "\n".join(f"{name}: {text}" for name, text in FIGURES)
    + "\n\nExit codes: 0 ok, 1 a threshold breached, 2 bad input."
)

stats_app = RigTyper(name="stats", help=HELP, no_args_is_help=True, add_completion=False,
                        rich_markup_mode="rich")

ColOpt = Annotated[list[str] | None, typer.Option(
    "--col", help="Map a column of your file onto rig's name: RIG_NAME=YOUR_NAME (repeatable), "
                  "e.g. --col profile_id=condition.")]


def _console() -> Console:
    return stdout_console(highlight=False)


def _f(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _p(x: float | None) -> str:
    if x is None:
        return "n/a"
    return f"{x:.1e}" if x < 1e-4 else f"{x:.4f}"


def _ci(ci: tuple[float, float] | None, pct: bool = False) -> str:
    if ci is None:
        return "n/a"
    return f"[{_pct(ci[0])}, {_pct(ci[1])}]" if pct else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


@stats_app.command("sample-size")
def sample_size_command(
    sd: Annotated[float, typer.Option("--sd", help="SD of the paired deltas, points.")],
    delta: Annotated[float, typer.Option("--delta", help="Smallest effect to detect, points.")],
    alpha: Annotated[float, typer.Option(help="Two-sided significance level.")] = 0.05,
    power: Annotated[float, typer.Option(help="Power to reach.")] = 0.8,
    profiles: Annotated[int | None, typer.Option(
        help="Profiles besides the baseline (to count calls).")] = None,
    repeats: Annotated[int, typer.Option(help="Runs of every call.")] = 1,
    json_out: JsonOpt = False,
) -> None:
    """Answers per profile for a paired campaign (normal formula and t refinement).

    n = ((z(1 - alpha/2) + z(power)) x sd / delta)^2, rounded up.

    calls = n x (profiles + 1) x repeats.
    """
    def compute() -> SampleSize:
        too_many = ValueError(f"--sd / --delta = {sd:g} / {delta:g} needs more answers than "
                              "can be counted; check the units (both in points)")
        if math.isfinite(sd) and math.isfinite(delta) and sd > 0 and delta != 0 and not (
                1e-100 < abs(delta) / sd < 1e100):  # n ~ (sd/delta)^2 over- or underflows
            raise too_many
        try:
            return paired_sample_size(sd, delta, alpha, power, profiles, repeats)
        except OverflowError:
            raise too_many from None

    res: SampleSize = or_fail(compute)
    if json_out:
        print_json(res.to_dict())
        return
    out = _console()
    out.print(f"n = ((z(1-{alpha:g}/2) + z({power:g})) x {sd:g} / {abs(delta):g})^2 = "
              f"{res.n_exact:.1f} -> [bold]{res.n_answers}[/bold] answers per profile")
    out.print(f"t refinement (sd estimated from the data): {res.n_exact_t:.1f} -> "
              f"{res.n_answers_t} answers per profile")
    if res.calls_per_run is not None:
        out.print(f"calls: {res.n_answers} x ({profiles} profiles + baseline) = "
                  f"{res.calls_per_run} per run; x {repeats} runs = [bold]{res.calls_total}"
                  f"[/bold] (t refinement: {res.calls_total_t})")


@stats_app.command("paired")
def paired_command(
    rows: Annotated[Path, typer.Argument(help="Call rows, .csv or .parquet.")],
    baseline: Annotated[str, typer.Option(help="profile_id of the baseline.")] = "baseline",
    score: Annotated[str, typer.Option(help="Score column, points.")] = "score",
    n_boot: Annotated[int, typer.Option(help="Bootstrap resamples.")] = 2000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    col: ColOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Per-profile paired effects against the baseline, with the noise floor.

    Mean paired delta with bootstrap and t intervals, flip rate (Wilson), tier inversions.

    Parse failures are left out and counted.
    """
    df = or_fail(lambda: read_rows(rows, parse_column_map(col or [])))
    res: PairedAnalysis = or_fail(lambda: paired_analysis(df, baseline, n_boot, seed, score))
    if json_out:
        print_json(res.to_dict())
        return
    out = _console()
    if df.attrs.get("n_fault_excluded"):  # rig.stats.rows.drop_fault_excluded
        out.print(f"{df.attrs['n_fault_excluded']} call(s) kept out as faults (a looped "
                  "transcript, an answer the VAD missed, an empty reference: never graded), "
                  "as rig campaign summarize leaves them out; not parse failures")
    t = Table(title=f"Paired effects against {baseline!r} ({rows})")
    t.add_column("profile", no_wrap=True)
    for h in ("pairs", "mean delta", "ci95 boot", "t_ci95", "flips", "flip ci95", "tier inv",
              "parse fail", "in noise"):
        t.add_column(h)
    for p in res.table.values():
        t.add_row(p.profile_id + (" (reference)" if p.is_baseline else ""), str(p.n_pairs),
                  _f(p.mean_delta), _ci(p.ci95), _ci(p.t_ci95), _pct(p.flip_rate),
                  _ci(p.flip_ci95, pct=True),
                  f"{_pct(p.tier_inversion_rate)}/{p.n_tier_pairs}",
                  str(p.n_parse_failures),
                  "n/a" if p.within_noise_floor is None else
                  ("yes" if p.within_noise_floor else "no"))
    out.print(t)
    nf = res.noise_floor
    out.print(f"noise floor ({nf.profile_id}, {nf.n_answers} answers with repeats): SD of "
              f"repeat differences {_f(nf.sd_repeat_diff)} points, repeat flip rate "
              f"{_pct(nf.flip_rate)}" + (f"  [{'; '.join(sorted(set(nf.not_computable.values())))}]"
                                         if nf.not_computable else ""))
    for p in res.table.values():
        for field, why in p.not_computable.items():
            if not p.is_baseline and field in ("mean_delta", "ci95", "t_ci95", "flip_rate",
                                               "tier_inversion_rate"):
                out.print(f"  {p.profile_id}: {field} not computable: {why}")
        for note in p.notes:
            out.print(f"  {p.profile_id}: {note}")


def _rate_table_output(res: RateTable, json_out: bool) -> None:
    if json_out:
        print_json(res.to_dict())
    else:
        out = _console()
        title = (f"{res.kind.capitalize()} rates by {' x '.join(res.by)}"
                 + (f" (median score {res.median:g}; above = strictly above)"
                    if res.median is not None else ""))
        t = Table(title=title)
        t.add_column("category", no_wrap=True)
        for h in ("n", "rate", "ratio", "ratio 95% CI", "flag", "z", "p_z", "p_fisher",
                  "small n"):
            t.add_column(h)
        for c in res.by_group:
            t.add_row(c.category + (" (highest)" if c.is_reference else ""), str(c.n),
                      _pct(c.rate), _f(c.impact_ratio, 3),
                      (f"[{c.impact_ratio_ci95[0]:.2f}, {c.impact_ratio_ci95[1]:.2f}]"
                       if c.impact_ratio_ci95 else "n/a"),
                      "n/a" if c.flagged is None else (f"< {res.threshold:g}" if c.flagged
                                                       else "ok"),
                      _f(c.z), _p(c.p_z), _p(c.p_fisher),
                      "n/a" if c.small_sample is None else ("yes" if c.small_sample else "no"))
        out.print(t)
        if res.excluded:
            out.print(f"excluded (under {res.min_share:.0%} of rows): "
                      + ", ".join(f"{c.category} (n={c.n})" for c in res.excluded)
                      + f"; {res.n_excluded_rows} rows")
        for why in sorted(set(res.not_computable.values())):
            out.print(f"not computable: {why}")
        for note in res.notes:
            out.print(note)
    if res.flagged:
        raise typer.Exit(1)


@stats_app.command("impact")
def impact_command(
    rows: Annotated[Path, typer.Argument(help="Call rows, .csv or .parquet.")],
    by: Annotated[str, typer.Option(
        "--by", help="Category column, or two joined by a comma for intersections.")],
    score: Annotated[str | None, typer.Option(
        help="Score column: LL144 scoring rates (the default, column 'score').")] = None,
    decision: Annotated[str | None, typer.Option(
        help="Decision column (advance/reject): four-fifths selection rates.")] = None,
    min_share: Annotated[float, typer.Option(
        help="Exclude categories under this share of rows (LL144 allows 0.02).")] = 0.02,
    threshold: Annotated[float, typer.Option(help="Impact ratio that flags.")] = 0.8,
    min_n: Annotated[int, typer.Option(help="Rows under which small_sample is set.")] = 30,
    unpooled: Annotated[bool, typer.Option(
        "--unpooled", help="Unpooled z-test standard error.")] = False,
    col: ColOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Impact ratios by category (LL144 scoring rates or four-fifths selection rates).

    --score (the default): scoring rates; --decision: selection rates.

    Each category is compared with the highest one by z and Fisher tests.

    Exit 1 when a ratio is under --threshold.
    """
    if score is not None and decision is not None:
        fail("give --score or --decision, not both")
    cols = [c.strip() for c in by.split(",") if c.strip()]

    def compute() -> RateTable:
        df = read_rows(rows, parse_column_map(col or []))
        if decision is not None:
            return selection_rate_table(df, cols, decision, min_share=min_share,
                                        threshold=threshold, pooled=not unpooled, min_n=min_n)
        return scoring_rate_table(df, cols, score or "score", min_share=min_share,
                                  threshold=threshold, pooled=not unpooled, min_n=min_n)

    _rate_table_output(or_fail(compute), json_out)


def _count(text: str, n: float, name: str) -> float:
    """A count, or a rate like ``56%`` of ``n``; ValueError naming the argument otherwise."""
    t = text.strip()
    try:
        return float(t[:-1]) / 100.0 * n if t.endswith("%") else float(t)
    except ValueError:
        raise ValueError(f"{name}: not a count or a rate like 56% (got {text!r})") from None


@stats_app.command("ztest")
def ztest_command(
    x1: Annotated[str, typer.Argument(help="Successes in group 1 (a count, or a rate like 56%).")],
    n1: Annotated[float, typer.Argument(help="Size of group 1.")],
    x2: Annotated[str, typer.Argument(help="Successes in group 2 (a count, or a rate like 38%).")],
    n2: Annotated[float, typer.Argument(help="Size of group 2.")],
    unpooled: Annotated[bool, typer.Option(
        "--unpooled", help="Unpooled standard error (default: pooled).")] = False,
    threshold: Annotated[float, typer.Option(help="Impact ratio that flags.")] = 0.8,
    min_n: Annotated[int, typer.Option(help="Group size under which small_sample is set.")] = 30,
    json_out: JsonOpt = False,
) -> None:
    """Two-proportion z-test and four-fifths impact ratio of two rates.

    Also Fisher's exact test and the small-sample flag. X1 and X2: counts, or rates like 56%.

    Exit 1 when the ratio is under --threshold.
    """

    def compute() -> ProportionComparison:
        return compare_proportions(_count(x1, n1, "X1"), n1, _count(x2, n2, "X2"), n2,
                                   pooled=not unpooled, threshold=threshold, min_n=min_n)

    res = or_fail(compute)
    if json_out:
        print_json(res.to_dict())
    else:
        out = _console()
        out.print(f"rates: {_pct(res.rate1)} of {res.n1:g} vs {_pct(res.rate2)} of {res.n2:g}"
                  f" (difference {_f(None if res.difference is None else 100 * res.difference, 1)}"
                  " points)")
        ratio = "n/a" if res.impact_ratio is None else f"{res.impact_ratio:.2f}"
        flag = "" if res.flagged is None else (
            f"  below {threshold:g}: flagged" if res.flagged else f"  (>= {threshold:g})")
        out.print(f"impact ratio (lower / higher): {ratio}{flag}"
                  + (f"  [{res.not_computable['impact_ratio']}]"
                     if "impact_ratio" in res.not_computable else ""))
        z = res.ztest
        out.print(f"z ({'pooled' if z.pooled else 'unpooled'}): "
                  + (f"{z.z:.2f}, p = {z.p_value:.3g}" if z.z is not None and z.p_value
                     is not None else f"not computable: {z.reason}"))
        fi = res.fisher
        out.print("Fisher's exact: " + (f"p = {fi.p_value:.3g}" if fi.p_value is not None
                                        else f"not computable: {fi.reason}")
                  + (f" (counts rounded to {fi.counts[0]}/{fi.counts[0] + fi.counts[1]} and "
                     f"{fi.counts[2]}/{fi.counts[2] + fi.counts[3]})" if fi.rounded else ""))
        if res.small_sample:
            out.print("small sample: " + "; ".join(res.small_sample_reasons)
                      + " (29 CFR 1607.4(D): small-number differences may not count)")
    if res.flagged:
        raise typer.Exit(1)


@stats_app.command("equivalence")
def equivalence_command(
    rows: Annotated[Path, typer.Argument(help="Call rows, .csv or .parquet.")],
    margin: Annotated[float, typer.Option(help="Largest gap that counts as parity, points.")],
    baseline: Annotated[str, typer.Option(help="profile_id of the baseline.")] = "baseline",
    alpha: Annotated[float, typer.Option(help="Family-wise error rate (Holm).")] = 0.05,
    score: Annotated[str, typer.Option(help="Score column, points.")] = "score",
    col: ColOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Equivalence per profile: TOST for no gap larger than --margin points, Holm-corrected."""
    res = or_fail(lambda: equivalence_by_profile(
        read_rows(rows, parse_column_map(col or [])), margin, baseline, alpha, score))
    if json_out:
        print_json({"margin": margin, "alpha": alpha, "baseline": baseline,
               "profiles": {k: v.to_dict() for k, v in res.items()}})
        return
    out = _console()
    t = Table(title=f"Equivalence within +/-{margin:g} points of {baseline!r} (TOST, Holm)")
    t.add_column("profile", no_wrap=True)
    for h in ("pairs", "mean delta", "90% CI", "p (TOST)", "p (Holm)", "parity"):
        t.add_column(h)
    for p, e in res.items():
        t.add_row(p, str(e.tost.n), _f(e.tost.mean), _ci(e.tost.ci90), _p(e.tost.p_value),
                  _p(e.p_holm), "n/a" if e.equivalent is None else
                  ("shown" if e.equivalent else "not shown"))
    out.print(t)
    for p, e in res.items():
        if e.tost.reason:
            out.print(f"  {p}: not computable: {e.tost.reason}")
