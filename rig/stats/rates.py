"""Rates by category: LL144 scoring-rate impact ratios and four-fifths selection-rate ratios.

Definitions (MEASUREMENT.md, "Scoring rate and impact ratio", "Selection rate"):

* **Scoring rate** of a category = share of its rows with a score *strictly above* the median
  of all scored rows (NYC Local Law 144 of 2021 and the DCWP rule, 6 RCNY 5-300: "the rate at
  which individuals in a category receive a score above the sample's median score"). A score
  equal to the median does **not** count as above; with coarse scores (whole points) many rows
  can sit on the median, which lowers every category's rate alike. The median is of the full
  sample, before small categories are excluded.
* **Selection rate** = share of a category's rows that advanced.
* **Impact ratio** = the category's rate / the highest included category's rate. It is
  undefined (None, not 1 and not 0) when the highest rate is 0.
* **Four-fifths rule** (29 CFR 1607.4(D)): a ratio below 0.8 is flagged. The flag is a screen:
  it is shown with a two-proportion z-test against the highest category (pooled by default),
  Fisher's exact test and the sample sizes, and a ``small_sample`` flag, because the rule says
  differences "based on small numbers and ... not statistically significant" may not count.
* **Small categories**: the DCWP rule lets an auditor exclude categories under 2% of the rows
  from the impact ratios; ``min_share`` (default 0.02, 0 keeps all) does that and the excluded
  categories and their row counts are reported.

Parse failures (score NaN or ``parse_status`` not "ok"; for selection rates also a missing
decision) are left out and counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from rig.stats.common import Alternative, jsonable
from rig.stats.rows import (
    RowsError,
    decision_column,
    numeric_column,
    parse_failures,
    require_columns,
    source_of,
)

RateKind = Literal["scoring", "selection"]
#: The four-fifths threshold of 29 CFR 1607.4(D).
FOUR_FIFTHS = 0.8
#: A comparison with a group under this many rows is flagged ``small_sample``.
MIN_N = 30
#: Expected cell count under which the z-test's normal approximation is not trusted
#: (Cochran 1954), which also sets ``small_sample``.
MIN_EXPECTED = 5.0
MISSING_LABEL = "(missing)"
JOIN = " × "


@dataclass(frozen=True)
class ZTest:
    """Two-proportion z-test of rate1 - rate2 (z unitless; p in [0, 1])."""

    z: float | None
    p_value: float | None
    pooled: bool
    alternative: Alternative
    reason: str | None = None

    def to_dict(self) -> dict:
        return jsonable({"z": self.z, "p_value": self.p_value, "pooled": self.pooled,
                         "alternative": self.alternative, "reason": self.reason})  # type: ignore


@dataclass(frozen=True)
class FisherTest:
    """Fisher's exact test on the 2x2 table [[x1, n1 - x1], [x2, n2 - x2]] of whole counts.

    ``counts`` are the whole counts used; ``rounded`` is True when fractional counts (from
    rates) were rounded to get them.
    """

    p_value: float | None
    alternative: Alternative
    counts: tuple[int, int, int, int]
    rounded: bool
    reason: str | None = None

    def to_dict(self) -> dict:
        return jsonable({"p_value": self.p_value, "alternative": self.alternative,  # type: ignore
                         "counts": list(self.counts), "rounded": self.rounded,
                         "reason": self.reason})


def _check_counts(x: float, n: float, name: str) -> None:
    if not (math.isfinite(x) and math.isfinite(n)) or n < 0 or not 0 <= x <= n:
        raise ValueError(f"{name}: need 0 <= x <= n with n >= 0 (got x={x!r}, n={n!r})")


def two_proportion_ztest(x1: float, n1: float, x2: float, n2: float, *, pooled: bool = True,
                         alternative: Alternative = "two-sided") -> ZTest:
    """Two-proportion z-test of p1 = x1/n1 against p2 = x2/n2 (counts may be fractional).

    z = (p1 - p2) / se with, pooled (default), se = sqrt(p(1-p)(1/n1 + 1/n2)), p = (x1+x2) /
    (n1+n2); unpooled, se = sqrt(p1(1-p1)/n1 + p2(1-p2)/n2). p from the standard normal;
    ``alternative`` "larger" tests p1 > p2, "smaller" p1 < p2. Agresti (2013), *Categorical
    Data Analysis*, 3rd ed., sec. 3.1; the same as statsmodels ``proportions_ztest`` (pooled)
    and ``test_proportions_2indep(method="wald")`` (unpooled).

    Not computable (z and p None, ``reason`` set): an empty group, or se = 0 (pooled: both rates
    0 or both 1; unpooled: each rate 0 or 1), where there is no variation to test against.

    Raises:
        ValueError: a count outside [0, n], or an unknown ``alternative``.
    """
    _check_counts(x1, n1, "group 1")
    _check_counts(x2, n2, "group 2")
    if alternative not in ("two-sided", "larger", "smaller"):
        raise ValueError(f"alternative must be two-sided, larger or smaller "
                         f"(got {alternative!r})")
    if n1 == 0 or n2 == 0:
        return ZTest(None, None, pooled, alternative, "a group has no rows (n = 0)")
    p1, p2 = x1 / n1, x2 / n2
    if pooled:
        p = (x1 + x2) / (n1 + n2)
        var = p * (1.0 - p) * (1.0 / n1 + 1.0 / n2)
    else:
        var = p1 * (1.0 - p1) / n1 + p2 * (1.0 - p2) / n2
    if var <= 0.0:
        which = "both rates are 0" if p1 == p2 == 0 else (
            "both rates are 1" if p1 == p2 == 1 else "each rate is 0 or 1")
        return ZTest(None, None, pooled, alternative,
                     f"not computable: {which}, so the standard error is 0")
    z = (p1 - p2) / math.sqrt(var)
    if alternative == "two-sided":
        pv = 2.0 * stats.norm.sf(abs(z))
    elif alternative == "larger":
        pv = stats.norm.sf(z)
    else:
        pv = stats.norm.cdf(z)
    return ZTest(float(z), float(min(1.0, pv)), pooled, alternative)


def fisher_exact_test(x1: float, n1: float, x2: float, n2: float,
                      alternative: Alternative = "two-sided") -> FisherTest:
    """Fisher's exact test of equal proportions (hypergeometric, conditional on the margins).

    Two-sided p = sum of the probabilities of all tables with the same margins that are no more
    likely than the observed one (relative tolerance 1e-7, as R's ``fisher.test``);
    "larger" = P(X >= x1), "smaller" = P(X <= x1). Fisher (1935), *The Design of Experiments*;
    checked against ``scipy.stats.fisher_exact``. Fractional counts are rounded to whole ones.

    Not computable: an empty group.

    Raises:
        ValueError: a count outside [0, n], or an unknown ``alternative``.
    """
    _check_counts(x1, n1, "group 1")
    _check_counts(x2, n2, "group 2")
    a, r1, c, r2 = (round(v) for v in (x1, n1, x2, n2))
    rounded = any(abs(v - round(v)) > 1e-9 for v in (x1, n1, x2, n2))
    counts = (a, r1 - a, c, r2 - c)
    if r1 == 0 or r2 == 0:
        return FisherTest(None, alternative, counts, rounded, "a group has no rows (n = 0)")
    total, col1 = r1 + r2, a + c
    lo, hi = max(0, r1 + col1 - total), min(r1, col1)
    support = np.arange(lo, hi + 1)
    pmf = stats.hypergeom.pmf(support, total, col1, r1)
    obs = float(stats.hypergeom.pmf(a, total, col1, r1))
    if alternative == "two-sided":
        pv = float(pmf[pmf <= obs * (1.0 + 1e-7)].sum())
    elif alternative == "larger":
        pv = float(pmf[support >= a].sum())
    elif alternative == "smaller":
        pv = float(pmf[support <= a].sum())
    else:
        raise ValueError(f"alternative must be two-sided, larger or smaller "
                         f"(got {alternative!r})")
    return FisherTest(min(1.0, pv), alternative, counts, rounded)


def small_sample_reasons(x1: float, n1: float, x2: float, n2: float,
                         min_n: int = MIN_N) -> list[str]:
    """Why a two-group comparison rests on small numbers (empty list when it does not).

    A group under ``min_n`` rows, or an expected cell under 5 in the 2x2 table under the pooled
    rate (Cochran 1954), where the z-test's normal approximation is not to be trusted; read
    Fisher's exact test then (29 CFR 1607.4(D): small-number differences may not count).
    """
    out = []
    if min(n1, n2) < min_n:
        out.append(f"a group has fewer than {min_n} rows (n = {min(n1, n2):g})")
    if n1 + n2 > 0:
        p = (x1 + x2) / (n1 + n2)
        cells = [n1 * p, n1 * (1 - p), n2 * p, n2 * (1 - p)]
        if min(cells) < MIN_EXPECTED:
            out.append(f"an expected cell count is {min(cells):.3g} < {MIN_EXPECTED:g}")
    return out


@dataclass(frozen=True)
class ProportionComparison:
    """Group 1 (x1 of n1) against group 2 (x2 of n2): rates, ratio, tests, small-sample flag.

    ``impact_ratio`` = lower rate / higher rate (None when both rates are 0); ``flagged`` =
    impact_ratio < ``threshold`` (four-fifths rule); ``difference`` = rate1 - rate2.
    """

    x1: float
    n1: float
    x2: float
    n2: float
    rate1: float | None
    rate2: float | None
    difference: float | None
    impact_ratio: float | None
    threshold: float
    flagged: bool | None
    ztest: ZTest
    fisher: FisherTest
    small_sample: bool
    small_sample_reasons: tuple[str, ...]
    not_computable: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {k: jsonable(getattr(self, k)) for k in self.__dataclass_fields__}
        out["ztest"], out["fisher"] = self.ztest.to_dict(), self.fisher.to_dict()
        return out


def compare_proportions(x1: float, n1: float, x2: float, n2: float, *, pooled: bool = True,
                        threshold: float = FOUR_FIFTHS, min_n: int = MIN_N
                        ) -> ProportionComparison:
    """Compare two rates as the four-fifths rule does, with its z-test and Fisher's test.

    Worked example (rig issue 8): 56% of 540 against 38% of 120 gives an impact ratio of
    0.38 / 0.56 = 0.68 and a pooled z of 3.57, "about 3.6" (``x1 = 0.56 * 540``: counts may be
    fractional; Fisher's test rounds them to whole counts).

    Raises:
        ValueError: a count outside [0, n].
    """
    why: dict[str, str] = {}
    r1 = x1 / n1 if n1 > 0 else None
    r2 = x2 / n2 if n2 > 0 else None
    diff = ratio = flagged = None
    if r1 is None or r2 is None:
        why["impact_ratio"] = why["difference"] = "a group has no rows (n = 0)"
    else:
        diff = r1 - r2
        top = max(r1, r2)
        if top == 0:
            why["impact_ratio"] = "both rates are 0: the ratio is undefined (not 1, not 0)"
        else:
            ratio = min(r1, r2) / top
            flagged = ratio < threshold
    if flagged is None:
        why["flagged"] = why.get("impact_ratio", "")
    z = two_proportion_ztest(x1, n1, x2, n2, pooled=pooled)
    if z.reason:
        why["z"] = z.reason
    fisher = fisher_exact_test(x1, n1, x2, n2)
    small = small_sample_reasons(x1, n1, x2, n2, min_n)
    return ProportionComparison(float(x1), float(n1), float(x2), float(n2), r1, r2, diff,
                                ratio, float(threshold), flagged, z, fisher, bool(small),
                                tuple(small), why)


@dataclass(frozen=True)
class CategoryRate:
    """One category's row of a :class:`RateTable` (rates in [0, 1]).

    ``n`` rows scored (parse failures out), ``n_hits`` of them above the median (scoring) or
    advanced (selection). ``impact_ratio`` = rate / reference rate; ``difference`` = rate -
    reference rate. ``z``, ``p_z``, ``p_fisher``, ``small_sample`` compare this category with
    the reference (None for the reference itself; z < 0 when this category's rate is lower).
    ``excluded``: under ``min_share`` of rows.
    """

    category: str
    values: dict[str, str]
    n: int
    n_parse_failures: int
    share: float | None
    n_hits: int
    rate: float | None
    impact_ratio: float | None
    difference: float | None
    is_reference: bool
    excluded: bool
    flagged: bool | None
    z: float | None
    p_z: float | None
    p_fisher: float | None
    small_sample: bool | None
    small_sample_reasons: tuple[str, ...] = ()
    not_computable: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {k: jsonable(getattr(self, k)) for k in self.__dataclass_fields__}
        out["not_computable"] = dict(self.not_computable)
        return out


@dataclass(frozen=True)
class RateTable:
    """Rates by category, shaped like fairlearn's ``MetricFrame``.

    ``overall`` is the rate over all scored rows; ``by_group`` holds the included categories
    (sorted by label), ``excluded`` those under ``min_share``; :meth:`ratio` and
    :meth:`difference` map each included category to its impact ratio and rate difference
    against ``reference`` (the included category with the highest rate; ties go to the first
    label in sorted order). ``median`` is the full-sample median score (scoring rates only).
    """

    kind: RateKind
    by: tuple[str, ...]
    threshold: float
    min_share: float
    pooled: bool
    median: float | None
    n_rows: int
    n_scored: int
    n_parse_failures: int
    overall: float | None
    reference: str | None
    by_group: tuple[CategoryRate, ...]
    excluded: tuple[CategoryRate, ...]
    n_excluded_rows: int
    not_computable: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def ratio(self) -> dict[str, float | None]:
        """Category -> impact ratio (None when undefined)."""
        return {c.category: c.impact_ratio for c in self.by_group}

    def difference(self) -> dict[str, float | None]:
        """Category -> rate - the reference category's rate."""
        return {c.category: c.difference for c in self.by_group}

    @property
    def flagged(self) -> list[str]:
        """Included categories whose impact ratio is below ``threshold``."""
        return [c.category for c in self.by_group if c.flagged]

    def to_dict(self) -> dict:
        out = {k: jsonable(getattr(self, k)) for k in self.__dataclass_fields__}
        out["by_group"] = [c.to_dict() for c in self.by_group]
        out["excluded"] = [c.to_dict() for c in self.excluded]
        out["not_computable"] = dict(self.not_computable)
        out["notes"] = list(self.notes)
        return out


def _labels(rows: pd.DataFrame, by: Sequence[str]
            ) -> tuple[pd.Series, list[str], dict[str, dict[str, str]]]:
    """Category label of every row, every category (with a categorical's unused levels), and
    each category's column values."""
    if not by:
        raise RowsError(source_of(rows), "by", "give at least one category column")
    require_columns(rows, by, "category column")
    parts = pd.DataFrame({c: rows[c].astype("string").fillna(MISSING_LABEL) for c in by})
    label = parts[by[0]]
    for c in by[1:]:
        label = label + JOIN + parts[c]
    uniq = parts.assign(_label=label).drop_duplicates("_label")
    values = {str(lab): {c: str(v) for c, v in zip(by, vals, strict=True)}
              for lab, vals in zip(uniq["_label"], uniq[list(by)].itertuples(index=False),
                                   strict=True)}
    if len(by) == 1 and isinstance(rows[by[0]].dtype, pd.CategoricalDtype):
        for v in rows[by[0]].cat.categories:
            values.setdefault(str(v), {by[0]: str(v)})
    return label, sorted(values), values


def _table(kind: RateKind, rows: pd.DataFrame, by: Sequence[str], hits: pd.Series,
           failed: pd.Series, median: float | None, min_share: float, threshold: float,
           pooled: bool, min_n: int, extra_why: dict[str, str]) -> RateTable:
    if not 0.0 <= min_share < 1.0:
        raise ValueError(f"min_share must be in [0, 1) (got {min_share!r})")
    label, cats, values_of = _labels(rows, by)
    ok = ~failed
    n_scored = int(ok.sum())
    n_by = ok.groupby(label).sum().reindex(cats, fill_value=0).astype(int)
    fail_by = failed.groupby(label).sum().reindex(cats, fill_value=0).astype(int)
    hit_by = hits.where(ok, 0.0).groupby(label).sum().reindex(cats, fill_value=0.0)
    share = (n_by / n_scored) if n_scored else pd.Series(np.nan, index=cats)
    keep = [c for c in cats if n_scored and share[c] >= min_share]
    drop = [c for c in cats if c not in keep]
    rate = {c: (hit_by[c] / n_by[c] if n_by[c] > 0 else None) for c in cats}
    candidates = [c for c in keep if rate[c] is not None]
    reference = max(candidates, key=lambda c: (rate[c], -cats.index(c))) if candidates else None
    top = rate[reference] if reference is not None else None
    why = dict(extra_why)
    notes: list[str] = []
    if reference is None:
        why["reference"] = "no included category has a scored row"
    elif top == 0:
        why["impact_ratio"] = (f"the highest {kind} rate is 0: every impact ratio is undefined "
                               "(not 1 and not 0)")

    def row(c: str, excluded: bool) -> CategoryRate:
        cw: dict[str, str] = {}
        values = values_of[c]
        r = rate[c]
        ratio = diff = z = pz = pf = flagged = small = None
        reasons: tuple[str, ...] = ()
        if r is None:
            cw["rate"] = "no scored rows in this category"
        if excluded:
            cw["impact_ratio"] = (f"excluded: {n_by[c]} rows, under {min_share:.0%} of the "
                                  f"{n_scored} scored rows")
        elif r is not None and top is not None:
            diff = r - top
            if top == 0:
                cw["impact_ratio"] = why["impact_ratio"]
            else:
                ratio = r / top
                flagged = ratio < threshold
            if c != reference:
                cmp = compare_proportions(hit_by[c], n_by[c], hit_by[reference],
                                          n_by[reference], pooled=pooled,
                                          threshold=threshold, min_n=min_n)
                z, pz, pf = cmp.ztest.z, cmp.ztest.p_value, cmp.fisher.p_value
                small, reasons = cmp.small_sample, cmp.small_sample_reasons
                if cmp.ztest.reason:
                    cw["z"] = cmp.ztest.reason
            else:
                cw["z"] = "reference category"
        elif r is not None:
            cw["impact_ratio"] = why.get("reference", "no reference category")
        if flagged is None and "impact_ratio" in cw:
            cw["flagged"] = cw["impact_ratio"]
        return CategoryRate(
            category=c, values=values, n=int(n_by[c]), n_parse_failures=int(fail_by[c]),
            share=None if not n_scored else float(share[c]), n_hits=round(float(hit_by[c])),
            rate=None if r is None else float(r), impact_ratio=ratio, difference=diff,
            is_reference=c == reference, excluded=excluded, flagged=flagged, z=z, p_z=pz,
            p_fisher=pf, small_sample=small, small_sample_reasons=reasons, not_computable=cw)

    n_fail = int(failed.sum())
    if n_fail:
        notes.append(f"{n_fail} rows left out as parse failures")
    if drop:
        notes.append(f"{len(drop)} categories under {min_share:.0%} of rows excluded "
                     f"({int(n_by[drop].sum())} rows)")
    overall = float(hits.where(ok, 0.0).sum() / n_scored) if n_scored else None
    if overall is None:
        why["overall"] = "no scored rows"
    return RateTable(kind, tuple(by), float(threshold), float(min_share), pooled, median,
                     len(rows), n_scored, n_fail, overall, reference,
                     tuple(row(c, False) for c in keep), tuple(row(c, True) for c in drop),
                     int(n_by[drop].sum()) if drop else 0, why, tuple(notes))


def scoring_rate_table(rows: pd.DataFrame, by: Sequence[str], score_col: str = "score", *,
                       min_share: float = 0.02, threshold: float = FOUR_FIFTHS,
                       pooled: bool = True, min_n: int = MIN_N) -> RateTable:
    """LL144 scoring rates and impact ratios of the categories of ``by`` (one or more columns;
    two or more give intersectional categories labelled ``"a × b"``).

    Scoring rate = share of a category's rows scoring strictly above the median of all scored
    rows (a score equal to the median does not count). See the module docstring for the
    definitions and sources (NYC LL144, DCWP rule 6 RCNY 5-300).

    Raises:
        RowsError: a missing column or a non-number score (names file, column, value).
        ValueError: ``min_share`` outside [0, 1).
    """
    require_columns(rows, [score_col])
    score = numeric_column(rows, score_col)
    failed = parse_failures(rows, score_col)
    ok = ~failed
    median = float(score[ok].median()) if ok.any() else None
    why = {} if median is not None else {"median": "no scored rows"}
    hits = (score > median).astype(float) if median is not None else score * 0.0
    return _table("scoring", rows, by, hits.fillna(0.0), failed, median, min_share, threshold,
                  pooled, min_n, why)


def selection_rate_table(rows: pd.DataFrame, by: Sequence[str],
                         decision_col: str = "decision", *, min_share: float = 0.02,
                         threshold: float = FOUR_FIFTHS, pooled: bool = True,
                         min_n: int = MIN_N) -> RateTable:
    """Selection rates (share advanced) and four-fifths ratios of the categories of ``by``.

    ``decision_col`` holds "advance"/"reject" (or booleans, 1/0). A row with no decision, a
    ``parse_status`` other than "ok", or a NaN ``score`` (when that column exists) is a parse
    failure: left out and counted. Source: 29 CFR 1607.4(D); see the module docstring.

    Raises:
        RowsError: a missing column or an unknown decision value (names file, column, value).
        ValueError: ``min_share`` outside [0, 1).
    """
    adv = decision_column(rows, decision_col)
    failed = adv.isna()
    if "score" in rows.columns:
        failed = failed | parse_failures(rows, "score")
    elif "parse_status" in rows.columns:
        failed = failed | parse_failures(rows.assign(_score=0.0), "_score")
    return _table("selection", rows, by, adv.fillna(0.0), failed, None, min_share, threshold,
                  pooled, min_n, {})



def mcnemar_one_sided(b: int, c: int) -> float:
    """Exact one-sided McNemar test on matched binary pairs: p = P(Binomial(b + c, 1/2) >= b).

    ``b`` = pairs that changed in the tested direction (e.g. answers that flip only in the
    candidate, or that advanced before and not now), ``c`` = pairs that changed the other way.
    McNemar (1947), Psychometrika 12:153-157, in its exact binomial form; equals
    ``scipy.stats.binomtest(b, b + c, 0.5, alternative="greater")``. With no discordant pair
    (b + c = 0) there is no evidence of change and p = 1.

    Raises:
        ValueError: a negative count.
    """
    if b < 0 or c < 0:
        raise ValueError(f"counts must be >= 0 (got b={b!r}, c={c!r})")
    if b + c == 0:
        return 1.0
    return float(min(1.0, stats.binom.sf(b - 1, b + c, 0.5)))


def category_labels(rows: pd.DataFrame, by: Sequence[str]) -> pd.Series:
    """The category label of every row as the rate tables use it (``"a × b"`` for two columns;
    an empty cell reads ``(missing)``).

    Raises:
        RowsError: a column of ``by`` is missing, or ``by`` is empty.
    """
    return _labels(rows, by)[0]
