"""Statistics of a probe: a paired comparison of two conditions and a decision-count test.

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

As everywhere in :mod:`rig.stats`, a figure that cannot be computed is None with the reason in
``not_computable``; never NaN.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
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
                      treatment: Sequence[float] | np.ndarray) -> PairedComparison:
    """Compare paired scores (``reference[i]`` and ``treatment[i]`` are the same item).

    Pairs with a missing score on either side (NaN) are left out. Never raises on degenerate
    data: fewer than 2 pairs, or differences without spread, make the t-test and d_z None
    with a reason; all differences zero makes the Wilcoxon test None too.
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
    if n_zero == n:
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
