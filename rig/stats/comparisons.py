"""Paired comparisons of two conditions on the same items (the probes' score tests).

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
* exact sign test (Dixon and Mood 1946, JASA 41:557-566): with n+ pairs where the treatment
  scored higher and n- where it scored lower (ties dropped), the two-sided binomial p-value of
  n+ out of n+ + n- at probability 1/2, ``scipy.stats.binomtest(n+, n+ + n-, 0.5)``. Ten pairs
  all lower give p = 2 * 0.5**10 = 0.00195.
* Cohen's d for paired data, **d_z = mean_diff / sd_diff** (sd of the differences, n - 1):
  Cohen (1988), eq. 2.3.5; the standardised mean difference of the paired design, not the d
  of two independent groups (which divides by the pooled sd of the scores).

**The p-value a summary reads** (``p``, the test in ``p_test``): the paired t-test's
(``"paired_t"``); when every pair differs by the same non-zero amount (zero variance, so t and
d_z are undefined: the scorer gives every hedged answer exactly 1 point less), the exact sign
test's (``"sign"``), since a constant shift is the clearest difference there is, not a
non-result. Otherwise (fewer than 2 pairs, or every pair tied) ``p`` is None with the reason.

Also here: :func:`one_sample` (t-test against 0 and Cohen's d, the dual-framing probe) and
:func:`bonferroni_paired` (the paired tests of several measures, Bonferroni-corrected, the
invariance probe).

As everywhere in :mod:`rig.stats`, a figure that cannot be computed is None with the reason in
``not_computable``; never NaN.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy import stats

from rig.stats.common import Interval, NotComputable, dataclass_dict, jsonable
from rig.stats.intervals import t_interval

DZ_FORMULA = "d_z = mean(treatment - reference) / sd(treatment - reference), sd with n - 1"
SIGN_TEST = ("exact sign test: scipy.stats.binomtest(n_positive, n_positive + n_negative, "
             "0.5), two-sided, over the pairs whose scores differ (Dixon and Mood 1946)")
P_RULE = ("p: the paired t-test's p-value; when every pair differs by the same non-zero "
          "amount (zero variance: t undefined), the exact sign test's (p_test says which)")
PTest = Literal["paired_t", "sign"]


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
        sign_n_positive, sign_n_negative: pairs where treatment > reference, and <.
        sign_p: the exact two-sided sign test on those counts.
        cohens_dz: mean_diff / sd_diff.
        p, p_test: the p-value a summary reads and its test (see the module docstring):
            ``t_p`` ("paired_t"), or ``sign_p`` ("sign") when the differences are a constant
            non-zero shift.
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
    sign_n_positive: int = 0
    sign_n_negative: int = 0
    sign_p: float | None = None
    p: float | None = None
    p_test: PTest | None = None
    not_computable: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return dataclass_dict(self)


def sign_test(diffs: Sequence[float] | np.ndarray) -> tuple[int, int, float | None]:
    """The exact two-sided sign test on paired differences (Dixon and Mood 1946).

    Args:
        diffs: treatment - reference per pair, shape ``(n,)``; zeros (ties) and NaN dropped.

    Returns:
        ``(n_positive, n_negative, p)``: p = ``scipy.stats.binomtest(n_positive, n_positive +
        n_negative, 0.5).pvalue`` (two-sided); None when no difference is non-zero.
    """
    d = np.asarray(diffs, dtype=float)
    d = d[~np.isnan(d)]
    pos, neg = int(np.sum(d > 0)), int(np.sum(d < 0))
    if pos + neg == 0:
        return pos, neg, None
    return pos, neg, float(stats.binomtest(pos, pos + neg, 0.5).pvalue)


def paired_comparison(reference: Sequence[float] | np.ndarray,
                      treatment: Sequence[float] | np.ndarray, *,
                      wilcoxon: bool = True) -> PairedComparison:
    """Compare paired scores (``reference[i]`` and ``treatment[i]`` are the same item).

    Args:
        reference, treatment: scores, shape ``(n,)`` each, on the probe's scale; NaN on
            either side leaves the pair out.
        wilcoxon: False skips the Wilcoxon test (scipy's exact or permutation p-value for
            small samples with ties can take seconds); its fields are then None with the
            reason "not requested".

    Raises:
        ValueError: the two sides differ in length.

    Never raises on degenerate data: fewer than 2 pairs, or differences without spread, make
    the t-test and d_z None with a reason (a constant non-zero shift is then decided by the
    sign test, ``p_test == "sign"``); all differences zero makes the Wilcoxon and sign tests
    None too.
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
                                None, None, None, not_computable=dict.fromkeys(
                                    ("mean_reference", "mean_treatment", "mean_diff",
                                     "sd_diff", "gap_pct", "t_ci95", "t_stat", "t_df", "t_p",
                                     "wilcoxon_stat", "wilcoxon_p", "cohens_dz", "sign_p",
                                     "p", "p_test"), reason))
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
    n_zero = int(np.sum(d == 0))
    constant_shift = False
    if n < 2:
        for k in ("t_stat", "t_df", "t_p", "t_ci95", "cohens_dz"):
            nc[k] = f"needs at least 2 pairs (got {n})"
    elif sd is not None and sd <= 1e-12 * max(1.0, abs(mean_d)):
        constant_shift = n_zero < n
        why = (f"zero variance: every pair differs by {mean_d:+.6g}; the t statistic and d_z "
               "are undefined" + ("; the sign test decides" if constant_shift else ""))
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
    tied = f"all {n} pairs tied: no signed differences"
    w_stat = w_p = None
    if not wilcoxon:
        nc["wilcoxon_stat"] = nc["wilcoxon_p"] = "not requested"
    elif n_zero == n:
        nc["wilcoxon_stat"] = nc["wilcoxon_p"] = tied
    else:
        try:
            res = stats.wilcoxon(d)
            w_stat, w_p = float(res.statistic), float(res.pvalue)
        except ValueError as exc:  # pragma: no cover - scipy's own refusals
            nc["wilcoxon_stat"] = nc["wilcoxon_p"] = f"scipy.stats.wilcoxon: {exc}"
    n_pos, n_neg, s_p = sign_test(d)
    if s_p is None:
        nc["sign_p"] = tied
    p: float | None
    p_test: PTest | None
    if t_p is not None:
        p, p_test = t_p, "paired_t"
    elif constant_shift and s_p is not None:
        p, p_test = s_p, "sign"
    else:
        p, p_test = None, None
        nc["p"] = nc["p_test"] = tied if n_zero == n else nc["t_p"]
    return PairedComparison(n, n_zero, mean_a, mean_b, mean_d, sd, gap, ci, t_stat, t_df, t_p,
                            w_stat, w_p, dz, n_pos, n_neg, s_p, p, p_test, nc)


# -- one sample (dual framing) and paired measures with Bonferroni (invariance) ---------------

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
        return dataclass_dict(self)


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
    Bonferroni-adjusted p-value ``p_bonferroni = min(1, p * m)``, m = the measures tested
    together, p = the comparison's ``p`` (the paired t-test's, or the exact sign test's when
    every pair differs by the same non-zero amount). ``violated``: p_bonferroni < alpha; False
    when every pair has the same value (no difference); None when no test is computable
    (fewer than 2 pairs)."""
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
    """Paired tests of several measures of the same pairs, Bonferroni-corrected over the
    measures (m = number of measures; Bonferroni 1936, Dunn 1961). Each measure's p is its
    :func:`paired_comparison`'s ``p``: the paired t-test, or the exact sign test for a
    constant non-zero shift.

    A measure is ``violated`` (adjusted p < ``alpha``), not (a p at or above it, or every
    pair tied, from 2 pairs up), or None (untestable: fewer than 2 pairs, or no test
    computable; the reason in ``not_computable``).

    Args:
        reference, perturbed: measure -> values per pair, shape ``(n,)`` each (same pairs,
            same order).
        alpha: the family-wise error rate.
    """
    m = len(reference)
    out = []
    for name, ref in reference.items():
        pc = paired_comparison(ref, perturbed[name], wilcoxon=False)
        nc: dict[str, str] = {}
        if pc.p is not None:
            p_adj: float | None = min(1.0, pc.p * m)
            violated: bool | None = p_adj < alpha
        elif pc.n_pairs >= 2 and pc.n_zero_diffs == pc.n_pairs:
            p_adj, violated = None, False
            nc["p_bonferroni"] = "every pair has the same value: no difference to test"
        elif pc.n_pairs == 1:  # one tied pair is no evidence of "no difference" either
            p_adj, violated = None, None
            nc["p_bonferroni"] = nc["violated"] = "needs at least 2 scored pairs (got 1)"
        else:
            p_adj, violated = None, None
            why = pc.not_computable.get("p", "no paired test computable")
            nc["p_bonferroni"] = nc["violated"] = why
        out.append(MeasureTest(name, pc, m, alpha, p_adj, violated, nc))
    return out
