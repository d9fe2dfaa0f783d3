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

:func:`scoring_rate_table` and :func:`selection_rate_table` return one type,
:class:`RateTable`, shaped like fairlearn's ``MetricFrame`` (:mod:`rig.stats.frame`:
``overall``, ``by_group``, ``ratio()``, ``difference()``). Each category's comparison with the
highest one uses the tests of :mod:`rig.stats.proportions` (z-test, Fisher's exact test),
whose names this module also exports.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Literal

import numpy as np
import pandas as pd

from rig.stats.common import jsonable
from rig.stats.frame import GroupFrame
from rig.stats.proportions import (  # re-exported: rig.stats.rates was their home before
    FOUR_FIFTHS,
    MIN_EXPECTED,
    MIN_N,
    FisherTest,
    ProportionComparison,
    ZTest,
    compare_proportions,
    fisher_exact_test,
    mcnemar_one_sided,
    small_sample_reasons,
    two_proportion_ztest,
)
from rig.stats.ratio_ci import impact_ratio_ci
from rig.stats.rows import (
    RowsError,
    decision_column,
    numeric_column,
    parse_failures,
    require_columns,
    source_of,
)

__all__ = [
    "FOUR_FIFTHS",
    "JOIN",
    "MIN_EXPECTED",
    "MIN_N",
    "MISSING_LABEL",
    "CategoryRate",
    "FisherTest",
    "ProportionComparison",
    "RateKind",
    "RateTable",
    "ZTest",
    "category_labels",
    "compare_proportions",
    "fisher_exact_test",
    "mcnemar_one_sided",
    "scoring_rate_table",
    "selection_rate_table",
    "small_sample_reasons",
    "two_proportion_ztest",
]

RateKind = Literal["scoring", "selection"]
MISSING_LABEL = "(missing)"
JOIN = " × "


@dataclass(frozen=True)
class CategoryRate:
    """One category's row of a :class:`RateTable` (rates in [0, 1]).

    ``n`` rows scored (parse failures out), ``n_hits`` of them above the median (scoring) or
    advanced (selection). ``impact_ratio`` = rate / reference rate; ``difference`` = rate -
    reference rate. ``z``, ``p_z``, ``p_fisher``, ``small_sample`` compare this category with
    the reference (None for the reference itself; z < 0 when this category's rate is lower).
    ``excluded``: under ``min_share`` of rows. ``impact_ratio_ci95``: percentile bootstrap
    95% CI of the impact ratio (:mod:`rig.stats.ratio_ci`; None for the reference, or with
    the reason in ``not_computable``).
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
    impact_ratio_ci95: tuple[float, float] | None = None

    def to_dict(self) -> dict:
        out = {k: jsonable(getattr(self, k)) for k in self.__dataclass_fields__}
        out["not_computable"] = dict(self.not_computable)
        return out


@dataclass(frozen=True)
class RateTable(GroupFrame[CategoryRate]):
    """Rates by category, shaped like fairlearn's ``MetricFrame`` (:mod:`rig.stats.frame`).

    ``overall`` is the rate over all scored rows; ``by_group`` holds the included categories
    (sorted by label), ``excluded`` those under ``min_share``; ``reference`` is the included
    category with the highest rate (ties go to the first label in sorted order), so
    :meth:`ratio` maps each included category to its impact ratio and :meth:`difference` to
    its rate difference against it (``method="to_overall"``: against ``overall`` instead);
    :meth:`values` maps it to its rate. ``median`` is the full-sample median score (scoring
    rates only).
    """

    value_field: ClassVar[str] = "rate"
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
           pooled: bool, min_n: int, extra_why: dict[str, str], n_boot: int = 2000,
           seed: int = 0) -> RateTable:
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
        ratio = diff = z = pz = pf = flagged = small = ratio_ci = None
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
                if ratio is not None and n_boot:
                    ratio_ci, no_ci = impact_ratio_ci(
                        hits[ok & (label == c)].to_numpy(float),
                        hits[ok & (label == reference)].to_numpy(float), n_boot=n_boot,
                        seed=seed)
                    if no_ci:
                        cw["impact_ratio_ci95"] = no_ci
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
            p_fisher=pf, small_sample=small, small_sample_reasons=reasons, not_computable=cw,
            impact_ratio_ci95=ratio_ci)

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
                       pooled: bool = True, min_n: int = MIN_N, n_boot: int = 2000,
                       seed: int = 0) -> RateTable:
    """LL144 scoring rates and impact ratios of the categories of ``by`` (one or more columns;
    two or more give intersectional categories labelled ``"a × b"``).

    Scoring rate = share of a category's rows scoring strictly above the median of all scored
    rows (a score equal to the median does not count). See the module docstring for the
    definitions and sources (NYC LL144, DCWP rule 6 RCNY 5-300). Each impact ratio gets a
    bootstrap 95% CI from ``n_boot`` resamples seeded with ``seed`` (0: none).

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
                  pooled, min_n, why, n_boot, seed)


def selection_rate_table(rows: pd.DataFrame, by: Sequence[str],
                         decision_col: str = "decision", *, min_share: float = 0.02,
                         threshold: float = FOUR_FIFTHS, pooled: bool = True,
                         min_n: int = MIN_N, n_boot: int = 2000, seed: int = 0) -> RateTable:
    """Selection rates (share advanced) and four-fifths ratios of the categories of ``by``.

    ``decision_col`` holds "advance"/"reject" (or booleans, 1/0). A row with no decision, a
    ``parse_status`` other than "ok", or a NaN ``score`` (when that column exists) is a parse
    failure: left out and counted. Source: 29 CFR 1607.4(D); see the module docstring. Each
    ratio gets a bootstrap 95% CI as in :func:`scoring_rate_table`.

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
                  pooled, min_n, {}, n_boot, seed)


def category_labels(rows: pd.DataFrame, by: Sequence[str]) -> pd.Series:
    """The category label of every row as the rate tables use it (``"a × b"`` for two columns;
    an empty cell reads ``(missing)``).

    Raises:
        RowsError: a column of ``by`` is missing, or ``by`` is empty.
    """
    return _labels(rows, by)[0]
