"""Statistics of the probes: paired comparisons, decision counts, group tests, bias index.

:func:`paired_comparison` compares scores of the same items under a reference condition (the
confident answer) and a treatment (its hedged or article-dropped twin):

* ``mean_diff`` = mean over pairs of (treatment - reference); negative means the treatment
  was marked down. ``gap_pct`` = ``mean_diff / mean_reference * 100``, relative to the
  reference mean. (The benchmark's "about 25% lower" for 2.61 vs 3.28 is 0.67 / 2.61, relative
  to the hedged mean; on rig's definition the same figures give -20.4%.)
* paired t-test: t = mean_diff / (sd_diff / sqrt(n)), two-sided, n - 1 degrees of freedom,
  sd with n - 1 (Student 1908; equals ``scipy.stats.ttest_rel(treatment, reference)``).
* Wilcoxon signed-rank test on the differences with scipy's defaults
  (``scipy.stats.wilcoxon(treatment - reference)``: zero differences dropped, exact or normal
  p-value as scipy chooses, two-sided).
* Cohen's d for paired data, **d_z = mean_diff / sd_diff** (sd of the differences, n - 1):
  Cohen (1988), eq. 2.3.5; the standardised mean difference of the paired design, not the d
  of two independent groups (which divides by the pooled sd of the scores).

:func:`decision_test` runs ``scipy.stats.chi2_contingency`` (its defaults: Yates' continuity
correction only when the table has one degree of freedom) on the condition x decision table,
after dropping decisions no session received in either condition; a table with fewer than two
decisions or a condition without decisions is "not computable", never an error.

For the name-swap, dual-framing and invariance probes: :func:`group_test` (chi-square,
Mann-Whitney U, Kolmogorov-Smirnov between two groups), :func:`standardise_by_item`,
:func:`bias_index` (mean over unordered pairs of groups of 1 - p), :func:`one_sample` (t-test
against 0 and Cohen's d) and :func:`bonferroni_paired` (paired t-tests of several measures,
Bonferroni-corrected).

As everywhere in :mod:`rig.stats`, a figure that cannot be computed is None with the reason in
``not_computable``; never NaN.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from rig.stats.common import Interval, NotComputable, jsonable
from rig.stats.intervals import t_interval

DZ_FORMULA = "d_z = mean(treatment - reference) / sd(treatment - reference), sd with n - 1"


@dataclass(frozen=True)
class PairedComparison:
    """Reference vs treatment on the same items (scores on the probe's scale).

    Fields:
        n_pairs: items scored under both; n_zero_diffs: pairs with equal scores.
        mean_reference, mean_treatment: means over the pairs.
        mean_diff, sd_diff: mean and sd (n - 1) of treatment - reference.
        gap_pct: mean_diff / mean_reference * 100.
        t_ci95: Student t 95% interval of mean_diff.
        t_stat, t_df, t_p: the paired t-test (two-sided).
        wilcoxon_stat, wilcoxon_p: the Wilcoxon signed-rank test (scipy's defaults).
        cohens_dz: mean_diff / sd_diff.
    """
    n_pairs: int
    n_zero_diffs: int
    mean_reference: float | None
    mean_treatment: float | None
    mean_diff: float | None
    sd_diff: float | None
    gap_pct: float | None
    t_ci95: Interval | None
    t_stat: float | None
    t_df: int | None
    t_p: float | None
    wilcoxon_stat: float | None
    wilcoxon_p: float | None
    cohens_dz: float | None
    not_computable: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {k: jsonable(getattr(self, k)) for k in self.__dataclass_fields__}
        out["not_computable"] = dict(self.not_computable)
        return out


def paired_comparison(reference: Sequence[float] | np.ndarray,
                      treatment: Sequence[float] | np.ndarray, *,
                      wilcoxon: bool = True) -> PairedComparison:
    """Compare paired scores (``reference[i]`` and ``treatment[i]`` are the same item).

    Pairs with a missing score on either side (NaN) are left out. Never raises on degenerate
    data: fewer than 2 pairs, or differences without spread, make the t-test and d_z None
    with a reason; all differences zero makes the Wilcoxon test None too. ``wilcoxon=False``
    skips the Wilcoxon test (scipy's exact or permutation p-value for small samples with
    ties can take seconds); its fields are then None with the reason "not requested".
    """
    a = np.asarray(reference, dtype=float)
    b = np.asarray(treatment, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"reference and treatment differ in length ({a.size} vs {b.size})")
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    d = b - a
    n = int(d.size)
    nc: dict[str, str] = {}
    if n == 0:
        reason = "no item was scored under both conditions"
        return PairedComparison(0, 0, None, None, None, None, None, None, None, None, None,
                                None, None, None, dict.fromkeys(
                                    ("mean_reference", "mean_treatment", "mean_diff",
                                     "sd_diff", "gap_pct", "t_ci95", "t_stat", "t_df", "t_p",
                                     "wilcoxon_stat", "wilcoxon_p", "cohens_dz"), reason))
    mean_a, mean_b, mean_d = float(a.mean()), float(b.mean()), float(d.mean())
    gap = mean_d / mean_a * 100.0 if mean_a != 0 else None
    if gap is None:
        nc["gap_pct"] = "the reference mean is 0"
    sd = float(d.std(ddof=1)) if n >= 2 else None
    if sd is None:
        nc["sd_diff"] = "needs at least 2 pairs"
    t_stat = t_p = dz = None
    t_df = n - 1 if n >= 2 else None
    ci = None
    if n < 2:
        for k in ("t_stat", "t_df", "t_p", "t_ci95", "cohens_dz"):
            nc[k] = f"needs at least 2 pairs (got {n})"
    elif sd is not None and sd <= 1e-12 * max(1.0, abs(mean_d)):
        why = (f"zero variance: every pair differs by {mean_d:+.6g}; the t statistic and d_z "
               "are undefined")
        for k in ("t_stat", "t_p", "t_ci95", "cohens_dz"):
            nc[k] = why
    else:
        se = sd / math.sqrt(n)
        t_stat = mean_d / se
        t_p = float(2.0 * stats.t.sf(abs(t_stat), n - 1))
        dz = mean_d / sd
        try:
            ci = t_interval(d)
        except NotComputable as exc:  # pragma: no cover - guarded above
            nc["t_ci95"] = exc.reason
    n_zero = int(np.sum(d == 0))
    w_stat = w_p = None
    if not wilcoxon:
        nc["wilcoxon_stat"] = nc["wilcoxon_p"] = "not requested"
    elif n_zero == n:
        why = f"all {n} pairs tied: no signed ranks"
        nc["wilcoxon_stat"] = nc["wilcoxon_p"] = why
    else:
        try:
            res = stats.wilcoxon(d)
            w_stat, w_p = float(res.statistic), float(res.pvalue)
        except ValueError as exc:  # pragma: no cover - scipy's own refusals
            nc["wilcoxon_stat"] = nc["wilcoxon_p"] = f"scipy.stats.wilcoxon: {exc}"
    return PairedComparison(n, n_zero, mean_a, mean_b, mean_d, sd, gap, ci, t_stat, t_df, t_p,
                            w_stat, w_p, dz, nc)


@dataclass(frozen=True)
class DecisionTest:
    """Decision counts per condition and the chi-square test of independence.

    ``counts[condition][decision]`` holds every decision of the vocabulary (zeros included);
    ``tested_decisions`` the columns left after dropping decisions no session received;
    ``expected_min`` the smallest expected count (below 5 the chi-square approximation is
    rough, and ``notes`` says so).
    """
    counts: dict[str, dict[str, int]]
    tested_decisions: tuple[str, ...]
    chi2: float | None
    dof: int | None
    p: float | None
    expected_min: float | None
    not_computable: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        out = {k: jsonable(getattr(self, k)) for k in self.__dataclass_fields__}
        out["not_computable"] = dict(self.not_computable)
        out["notes"] = list(self.notes)
        return out


def decision_test(counts: Mapping[str, Mapping[str, int]],
                  decisions: Sequence[str]) -> DecisionTest:
    """Chi-square test on the conditions x decisions table (``counts[condition][decision]``).

    Decisions nobody received are dropped (an all-zero column makes the expected count 0); a
    table left with fewer than 2 decisions or 2 conditions, or a condition without any
    decision, is not computable and says why.
    """
    conds = list(counts)
    full = {c: {d: int(counts[c].get(d, 0)) for d in decisions} for c in conds}
    table = np.array([[full[c][d] for d in decisions] for c in conds], dtype=float)
    keep = [j for j in range(len(decisions)) if table.size and table[:, j].sum() > 0]
    tested = tuple(decisions[j] for j in keep)
    fields = ("chi2", "dof", "p", "expected_min")

    def nc(reason: str) -> DecisionTest:
        return DecisionTest(full, tested, None, None, None, None, dict.fromkeys(fields, reason))

    if len(conds) < 2:
        return nc("needs two conditions")
    empty = [c for c in conds if sum(full[c].values()) == 0]
    if empty:
        return nc(f"no parsed decision under {empty[0]!r}")
    if len(keep) < 2:
        only = tested[0] if tested else "none"
        return nc(f"every session received the same decision ({only!r}): nothing to test")
    sub = table[:, keep]
    res = stats.chi2_contingency(sub)
    notes = []
    dropped = [d for d in decisions if d not in tested]
    if dropped:
        notes.append(f"decisions nobody received were left out of the test: {dropped}")
    emin = float(np.min(res.expected_freq))
    if emin < 5:
        notes.append(f"smallest expected count {emin:.2f} < 5: the chi-square approximation "
                     "is rough at this sample size")
    return DecisionTest(full, tested, float(res.statistic), int(res.dof), float(res.pvalue),
                        emin, {}, tuple(notes))


# -- groups of an audit study (name swap) ----------------------------------------------------
#
# After "Quantifying Gender Bias in Large Language Models: When ChatGPT Becomes a Hiring
# Manager" (2024), an audit design after Bertrand and Mullainathan (2004): the same material
# under names of different groups, each feature compared between every pair of groups.

GroupTestKind = Literal["chi_square", "mann_whitney", "ks"]


@dataclass(frozen=True)
class GroupTest:
    """One feature compared between two groups of names.

    Fields:
        group_a, group_b: the groups (in the name set's order).
        test: ``chi_square`` (hire: 2 x 2 table of groups x yes/no,
            ``scipy.stats.chi2_contingency`` with its default Yates correction),
            ``mann_whitney`` (qualification: ``scipy.stats.mannwhitneyu``, two-sided, the
            Wilcoxon rank-sum test), or ``ks`` (standardised compensation:
            ``scipy.stats.ks_2samp``, two-sided).
        n_a, n_b: scored replies per group.
        statistic, p: the test's statistic (chi-square, U of group_a, or D) and p-value.
    """
    group_a: str
    group_b: str
    test: GroupTestKind
    n_a: int
    n_b: int
    statistic: float | None
    p: float | None
    not_computable: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {k: jsonable(getattr(self, k)) for k in self.__dataclass_fields__}
        out["not_computable"] = dict(self.not_computable)
        return out


def _nc_group(a: str, b: str, test: GroupTestKind, n_a: int, n_b: int, why: str) -> GroupTest:
    return GroupTest(a, b, test, n_a, n_b, None, None, {"statistic": why, "p": why})


def group_test(test: GroupTestKind, group_a: str, values_a: Sequence[float],
               group_b: str, values_b: Sequence[float]) -> GroupTest:
    """Compare one feature between two groups (values: hire 1/0, qualification 1-10, or
    standardised compensation; NaN values are dropped).

    Not computable (None with the reason, never an exception): a group without values; for
    chi-square, every reply in both groups the same (a zero column in the 2 x 2 table).
    """
    a = np.asarray(values_a, dtype=float)
    b = np.asarray(values_b, dtype=float)
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    na, nb = int(a.size), int(b.size)
    if na == 0 or nb == 0:
        empty = group_a if na == 0 else group_b
        return _nc_group(group_a, group_b, test, na, nb, f"no scored reply for {empty!r}")
    if test == "chi_square":
        table = np.array([[np.sum(a == 1), np.sum(a == 0)], [np.sum(b == 1), np.sum(b == 0)]])
        if (table.sum(axis=0) == 0).any():
            only = "yes" if table[:, 1].sum() == 0 else "no"
            return _nc_group(group_a, group_b, test, na, nb,
                             f"every reply in both groups was {only!r}: nothing to test")
        res = stats.chi2_contingency(table)
        return GroupTest(group_a, group_b, test, na, nb, float(res.statistic),
                         float(res.pvalue))
    if test == "mann_whitney":
        res = stats.mannwhitneyu(a, b, alternative="two-sided")
    elif test == "ks":
        res = stats.ks_2samp(a, b)
    else:
        raise ValueError(f"unknown group test {test!r}")
    return GroupTest(group_a, group_b, test, na, nb, float(res.statistic), float(res.pvalue))


def standardise_by_item(items: Sequence[str], groups: Sequence[str],
                        values: Sequence[float]) -> tuple[np.ndarray, dict[str, str]]:
    """Standardise compensations within each item, as the audit paper does (2024):
    z = (value - mean of the item's values) / RMS of the item's per-group standard
    deviations, RMS = sqrt(mean over groups of sd_g**2), sd with n - 1.

    Args:
        items, groups, values: one entry per scored reply (US dollars; NaN = not scored).

    Returns:
        The standardised values (dimensionless; NaN where not scored or the item was left
        out) and ``excluded``: item -> why it was left out (a group with fewer than 2 scored
        values, or every group's values constant, so the scale is 0).
    """
    df = pd.DataFrame({"item": list(items), "group": list(groups),
                       "value": np.asarray(values, dtype=float)})
    z = np.full(len(df), np.nan)
    excluded: dict[str, str] = {}
    all_groups = sorted(set(df["group"]))
    for item, g in df.groupby("item", sort=True):
        ok = g.dropna(subset=["value"])
        counts = ok.groupby("group")["value"].count().reindex(all_groups, fill_value=0)
        if (counts < 2).any():
            short = [str(k) for k, n in counts.items() if n < 2]
            excluded[str(item)] = f"fewer than 2 scored values for {short}"
            continue
        sds = ok.groupby("group")["value"].std(ddof=1)
        scale = float(np.sqrt(np.mean(sds.to_numpy() ** 2)))
        if scale <= 0:
            excluded[str(item)] = (
                f"every reply was {float(ok['value'].iloc[0]):g}: no spread to standardise"
                if ok["value"].nunique() == 1 else
                "each group's values are constant but differ between groups (scale 0)")
            continue
        idx = ok.index.to_numpy()
        z[idx] = (ok["value"].to_numpy() - float(ok["value"].mean())) / scale
    return z, excluded


@dataclass(frozen=True)
class BiasIndex:
    """The audit paper's bias index of one feature: the mean over unordered pairs of groups
    of (1 - p). 0: no pair differs at all; near 1: every pair differs strongly.

    ``n_pairs``: pairs of groups; ``n_used``: pairs whose p-value was computable (the index
    averages these); ``left_out``: pair -> why its p is missing.
    """
    index: float | None
    n_pairs: int
    n_used: int
    left_out: dict[str, str]
    not_computable: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {k: jsonable(getattr(self, k)) for k in self.__dataclass_fields__}
        out["not_computable"] = dict(self.not_computable)
        return out


def bias_index(tests: Sequence[GroupTest]) -> BiasIndex:
    """Mean over the unordered pairs of groups of (1 - p), pairs without a p left out.

    With n groups there are n(n - 1)/2 unordered pairs, and the index is
    ``sum over pairs {i, j} of (1 - p_ij) / (n(n - 1)/2)``. The paper (2024) prints the sum
    over *ordered* pairs (i, j), i != j, with the factor 2/(n(n-1)); each unordered pair then
    counts twice, so the printed formula gives twice the mean and can exceed 1. rig uses the
    mean over unordered pairs, which stays in [0, 1] and equals the paper's index as
    described in words. Hand-worked: three groups with pair p-values 0.2, 0.5, 0.9 give
    ((1 - 0.2) + (1 - 0.5) + (1 - 0.9)) / 3 = 0.4667 (the printed formula: 0.9333).
    """
    left_out = {f"{t.group_a} vs {t.group_b}": (t.not_computable.get("p") or "no p-value")
                for t in tests if t.p is None}
    ps = [t.p for t in tests if t.p is not None]
    if not ps:
        why = ("no pair of groups" if not tests else
               "no pair of groups has a computable p-value")
        return BiasIndex(None, len(tests), 0, left_out, {"index": why})
    return BiasIndex(float(np.mean([1.0 - p for p in ps])), len(tests), len(ps), left_out)


# -- one sample (dual framing) and paired measures with Bonferroni (invariance) ----------------

@dataclass(frozen=True)
class OneSample:
    """Scores against 0: n, mean, sd (n - 1), the one-sample t-test (two-sided, n - 1 df;
    equals ``scipy.stats.ttest_1samp(x, 0)``) and Cohen's d = mean / sd (Cohen 1988, the
    one-sample standardised mean difference)."""
    n: int
    mean: float | None
    sd: float | None
    t_stat: float | None
    t_df: int | None
    t_p: float | None
    cohens_d: float | None
    not_computable: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {k: jsonable(getattr(self, k)) for k in self.__dataclass_fields__}
        out["not_computable"] = dict(self.not_computable)
        return out


def one_sample(values: Sequence[float] | np.ndarray) -> OneSample:
    """Test the mean of ``values`` (NaN dropped) against 0. Fewer than 2 values, or values
    without spread, leave t, p and d None with the reason."""
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    n = int(x.size)
    if n == 0:
        why = "no scored value"
        return OneSample(0, None, None, None, None, None, None,
                         dict.fromkeys(("mean", "sd", "t_stat", "t_df", "t_p", "cohens_d"),
                                       why))
    mean = float(x.mean())
    if n < 2:
        why = f"needs at least 2 values (got {n})"
        return OneSample(n, mean, None, None, None, None, None,
                         dict.fromkeys(("sd", "t_stat", "t_df", "t_p", "cohens_d"), why))
    sd = float(x.std(ddof=1))
    if sd <= 1e-12 * max(1.0, abs(mean)):
        why = f"zero variance: every value is {mean:+.6g}; t and d are undefined"
        return OneSample(n, mean, sd, None, n - 1, None, None,
                         dict.fromkeys(("t_stat", "t_p", "cohens_d"), why))
    t = mean / (sd / math.sqrt(n))
    p = float(2.0 * stats.t.sf(abs(t), n - 1))
    return OneSample(n, mean, sd, t, n - 1, p, mean / sd)


@dataclass(frozen=True)
class MeasureTest:
    """One measure of a perturbation: the paired comparison (reference vs perturbed) and its
    Bonferroni-adjusted p-value ``p_bonferroni = min(1, t_p * m)``, m = the measures tested
    together. ``violated``: p_bonferroni < alpha; None when the t-test is not computable and
    the differences are not all zero (all zero is no violation)."""
    measure: str
    paired: PairedComparison
    m: int
    alpha: float
    p_bonferroni: float | None
    violated: bool | None
    not_computable: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {k: jsonable(getattr(self, k)) for k in self.__dataclass_fields__
               if k != "paired"}
        out["paired"] = self.paired.to_dict()
        out["not_computable"] = dict(self.not_computable)
        return out


def bonferroni_paired(reference: Mapping[str, Sequence[float]],
                      perturbed: Mapping[str, Sequence[float]],
                      alpha: float = 0.05) -> list[MeasureTest]:
    """Paired t-tests of several measures of the same pairs, Bonferroni-corrected over the
    measures (m = number of measures; Bonferroni 1936, Dunn 1961).

    Args:
        reference, perturbed: measure -> values per pair (same pairs, same order).
        alpha: the family-wise error rate.
    """
    m = len(reference)
    out = []
    for name, ref in reference.items():
        pc = paired_comparison(ref, perturbed[name], wilcoxon=False)
        nc: dict[str, str] = {}
        if pc.t_p is not None:
            p_adj: float | None = min(1.0, pc.t_p * m)
            violated: bool | None = p_adj < alpha
        elif pc.n_pairs > 0 and pc.n_zero_diffs == pc.n_pairs:
            p_adj, violated = None, False
            nc["p_bonferroni"] = "every pair has the same value: no difference to test"
        else:
            p_adj, violated = None, None
            why = pc.not_computable.get("t_p", "t-test not computable")
            nc["p_bonferroni"] = nc["violated"] = why
        out.append(MeasureTest(name, pc, m, alpha, p_adj, violated, nc))
    return out
