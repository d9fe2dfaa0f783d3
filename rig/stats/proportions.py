"""Tests of two proportions: the four-fifths comparison, its z-test, Fisher's exact test and
McNemar's exact test on matched pairs.

* :func:`two_proportion_ztest`  pooled or unpooled z-test of p1 = x1/n1 against p2 = x2/n2
  (Agresti 2013, sec. 3.1).
* :func:`fisher_exact_test`     Fisher's exact test of equal proportions (Fisher 1935).
* :func:`small_sample_reasons`  why a comparison rests on small numbers (a group under
  :data:`MIN_N` rows, an expected cell under 5: Cochran 1954).
* :func:`compare_proportions`   two rates as the four-fifths rule (29 CFR 1607.4(D)) compares
  them: impact ratio, difference, both tests and the small-sample flag.
* :func:`mcnemar_one_sided`     exact one-sided McNemar test on matched binary pairs
  (McNemar 1947).

Rates are shares in [0, 1]; counts may be fractional (a rate times n), and Fisher's test rounds
them to whole counts. The rate tables by category (:mod:`rig.stats.rates`) build on these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from rig.stats.common import Alternative, jsonable

#: The four-fifths threshold of 29 CFR 1607.4(D).
FOUR_FIFTHS = 0.8
#: A comparison with a group under this many rows is flagged ``small_sample``.
MIN_N = 30
#: Expected cell count under which the z-test's normal approximation is not trusted
#: (Cochran 1954), which also sets ``small_sample``.
MIN_EXPECTED = 5.0


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
