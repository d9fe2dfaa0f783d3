"""Equivalence: evidence that a profile's gap is smaller than a margin, not only "no difference
found".

Per profile, a paired two one-sided tests procedure (TOST; Schuirmann 1987, J Pharmacokinet
Biopharm 15:657-680) on the repeat-averaged paired deltas d (points):

    H0: mean(d) <= -margin  or  mean(d) >= +margin      H1: -margin < mean(d) < +margin
    t_lower = (mean + margin) / se,  p_lower = P(T > t_lower)
    t_upper = (mean - margin) / se,  p_upper = P(T < t_upper),   se = sd / sqrt(n), df = n - 1
    p = max(p_lower, p_upper)

which equals statsmodels ``ttost_paired(profile, baseline, -margin, margin)``. Equivalently,
the 1 - 2 alpha (90%) t-interval lies inside (-margin, margin).

Across profiles the p-values are Holm-corrected (Holm 1979, Scand J Statist 6:65-70): sort the
m computable p-values, adjusted p_(i) = max over j <= i of min(1, (m - j + 1) p_(j)); a profile
is declared equivalent when its adjusted p < alpha. This controls the family-wise error rate
(the chance of declaring any non-equivalent profile equivalent) at alpha. Profiles whose TOST is
not computable are left out of the family (m counts only computable tests) and get None.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from rig.stats.common import Interval, NotComputable, dataclass_dict, jsonable
from rig.stats.intervals import t_interval
from rig.stats.paired import paired_deltas


@dataclass(frozen=True)
class Tost:
    """Paired TOST result. ``mean`` and ``margin`` in points; p-values in [0, 1]; ``ci90`` is
    the 1 - 2 alpha t-interval. All statistics None (``reason`` set) when not computable."""

    n: int
    margin: float
    alpha: float
    mean: float | None
    sd: float | None
    df: int | None
    t_lower: float | None
    t_upper: float | None
    p_lower: float | None
    p_upper: float | None
    p_value: float | None
    ci90: Interval | None
    reason: str | None = None

    def to_dict(self) -> dict:
        return dataclass_dict(self)


def _check_margin(margin: float, alpha: float) -> None:
    if not (math.isfinite(margin) and margin > 0):
        raise ValueError(f"margin must be > 0 points (got {margin!r})")
    if not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must be between 0 and 0.5 (got {alpha!r})")


def tost_paired(deltas: Sequence[float] | np.ndarray, margin: float,
                alpha: float = 0.05) -> Tost:
    """TOST of |mean(deltas)| < ``margin`` on paired deltas (profile - baseline, points).

    Not computable (None statistics, ``reason`` set): fewer than 2 deltas, or zero variance
    (every delta equal: the t statistics would be infinite).

    Raises:
        ValueError: ``margin`` <= 0 or ``alpha`` outside (0, 0.5).
    """
    _check_margin(margin, alpha)
    d = np.asarray(deltas, dtype=float)
    d = d[np.isfinite(d)]
    n = int(d.size)
    mean = float(d.mean()) if n else None
    try:
        ci = t_interval(d, 1.0 - 2.0 * alpha)
    except NotComputable as exc:
        return Tost(n, float(margin), float(alpha), mean, None, None, None, None, None, None,
                    None, None, exc.reason)
    sd = float(d.std(ddof=1))
    se = sd / math.sqrt(n)
    df = n - 1
    t_lo = (d.mean() + margin) / se
    t_up = (d.mean() - margin) / se
    p_lo = float(stats.t.sf(t_lo, df))
    p_up = float(stats.t.cdf(t_up, df))
    return Tost(n, float(margin), float(alpha), mean, sd, df, float(t_lo), float(t_up), p_lo,
                p_up, max(p_lo, p_up), ci)


def holm(p_values: Sequence[float | None], alpha: float = 0.05
         ) -> list[tuple[float | None, bool | None]]:
    """Holm step-down adjustment (Holm 1979). Returns (adjusted p, rejected) per input, in
    input order; None entries (not computable) stay None and are not part of the family.

    Raises:
        ValueError: a p-value outside [0, 1], or ``alpha`` outside (0, 1).
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1 (got {alpha!r})")
    idx = [i for i, p in enumerate(p_values) if p is not None and math.isfinite(p)]
    for i in idx:
        if not 0.0 <= p_values[i] <= 1.0:  # type: ignore[operator]
            raise ValueError(f"p-value {i} outside [0, 1] (got {p_values[i]!r})")
    out: list[tuple[float | None, bool | None]] = [(None, None)] * len(p_values)
    m = len(idx)
    order = sorted(idx, key=lambda i: p_values[i])  # type: ignore[arg-type,return-value]
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(p_values[i])))  # type: ignore[arg-type]
        out[i] = (running, running < alpha)
    return out


@dataclass(frozen=True)
class ProfileEquivalence:
    """One profile's TOST with its Holm-adjusted p-value. ``equivalent`` is True when the
    adjusted p < alpha (parity claimed within the margin), False when not, None when the TOST is
    not computable."""

    profile_id: str
    tost: Tost
    p_holm: float | None
    equivalent: bool | None

    def to_dict(self) -> dict:
        return {"profile_id": self.profile_id, **self.tost.to_dict(),
                "p_holm": jsonable(self.p_holm), "equivalent": self.equivalent}


def equivalence_by_profile(rows: pd.DataFrame, margin: float, baseline: str = "baseline",
                           alpha: float = 0.05, score_col: str = "score"
                           ) -> dict[str, ProfileEquivalence]:
    """TOST per non-baseline profile for "no gap larger than ``margin`` points", Holm-corrected.

    Pairing as :func:`~rig.stats.paired.paired_by_profile` (parse failures out, repeats
    averaged, paired by answer).

    Raises:
        RowsError: as :func:`~rig.stats.paired.paired_by_profile`.
        ValueError: ``margin`` <= 0 or ``alpha`` outside (0, 0.5).
    """
    _check_margin(margin, alpha)
    deltas = paired_deltas(rows, baseline, score_col)
    tests = {p: tost_paired(d.to_numpy(), margin, alpha) for p, d in deltas.items()}
    adjusted = holm([t.p_value for t in tests.values()], alpha)
    return {p: ProfileEquivalence(p, t, adj, rej)
            for (p, t), (adj, rej) in zip(tests.items(), adjusted, strict=True)}

