"""How many answers a paired campaign needs to see a given effect.

Normal approximation (the published formula), for a two-sided test at level alpha:

    n = ((z(1 - alpha/2) + z(power)) * sd_d / delta)^2, rounded up,

where sd_d is the standard deviation of the paired deltas (points) and delta the smallest
effect worth detecting (points). Worked example: sd_d = 6, delta = 3, alpha = 0.05, power = 0.8
gives 31.4, so 32 answers per profile; with a baseline and 6 profiles 32 x 7 = 224 calls per run,
and three runs 672 calls. Source: Chow, Shao & Wang (2008), *Sample Size Calculations in
Clinical Research*, 2nd ed., sec. 3.1 (one-sample / paired mean).

t refinement beside it: the smallest n whose exact power of the paired t-test (noncentral t
with n - 1 degrees of freedom and noncentrality delta / sd_d * sqrt(n), both tails) reaches the
target. It is larger because sd_d is estimated from the same data; it equals statsmodels
``TTestPower().solve_power`` rounded up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import optimize, stats

from rig.stats.common import dataclass_dict


@dataclass(frozen=True)
class SampleSize:
    """Answers per profile (and calls) for a paired campaign.

    Fields: the inputs (``sd_delta`` and ``delta`` in points); ``n_exact`` the unrounded normal
    formula; ``n_answers`` = ceil(n_exact), at least 2; ``n_exact_t`` the unrounded t solution
    and ``n_answers_t`` = ceil of it; ``profiles`` (not counting the baseline) and ``repeats``;
    ``calls_per_run`` = n_answers x (profiles + 1) and ``calls_total`` = calls_per_run x repeats
    (None when ``profiles`` is not given); ``calls_total_t`` the same with ``n_answers_t``.
    """

    sd_delta: float
    delta: float
    alpha: float
    power: float
    n_exact: float
    n_answers: int
    n_exact_t: float
    n_answers_t: int
    profiles: int | None
    repeats: int
    calls_per_run: int | None
    calls_total: int | None
    calls_total_t: int | None

    def to_dict(self) -> dict:
        return dataclass_dict(self)


def _t_power(n: float, effect: float, alpha: float) -> float:
    df = n - 1.0
    crit = stats.t.ppf(1.0 - alpha / 2.0, df)
    nc = effect * math.sqrt(n)
    upper = float(stats.nct.sf(crit, df, nc))
    # the far tail, P(T < -crit), written as an upper tail of nct(-nc): numerically stabler
    lower = float(stats.nct.sf(crit, df, -nc))
    return upper + (lower if math.isfinite(lower) else 0.0)


def paired_sample_size(sd_delta: float, delta: float, alpha: float = 0.05, power: float = 0.8,
                       profiles: int | None = None, repeats: int = 1) -> SampleSize:
    """Answers per profile to detect a mean paired delta of ``delta`` points (see module doc).

    Raises:
        ValueError: ``sd_delta`` <= 0, ``delta`` = 0, ``alpha`` or ``power`` outside (0, 1),
            ``profiles`` < 0 or ``repeats`` < 1; the message names the parameter and value.
    """
    for name, v in (("sd", sd_delta), ("delta", delta), ("alpha", alpha), ("power", power)):
        if not math.isfinite(v):
            raise ValueError(f"{name} must be a finite number (got {v!r})")
    if sd_delta <= 0:
        raise ValueError(f"sd must be > 0 points (got {sd_delta!r}); with no spread there is "
                         "nothing to size")
    if delta == 0:
        raise ValueError("delta must not be 0: no sample detects a zero effect")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1 (got {alpha!r})")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be between 0 and 1 (got {power!r})")
    if profiles is not None and profiles < 0:
        raise ValueError(f"profiles must be >= 0 (got {profiles!r})")
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1 (got {repeats!r})")
    effect = abs(delta) / sd_delta
    z = stats.norm.ppf(1.0 - alpha / 2.0) + stats.norm.ppf(power)
    n_exact = float((z / effect) ** 2)
    n = max(2, math.ceil(n_exact - 1e-9))
    # t refinement: power rises with n; search above n = 2 (df = 1).
    if _t_power(2.0, effect, alpha) >= power:
        n_t_exact = 2.0
    else:
        hi = max(4.0, 2.0 * n_exact + 4.0)
        while _t_power(hi, effect, alpha) < power:
            hi *= 2.0
        n_t_exact = float(optimize.brentq(lambda m: _t_power(m, effect, alpha) - power, 2.0, hi,
                                          xtol=1e-10))
    n_t = max(2, math.ceil(n_t_exact - 1e-9))
    per_run = per_run_t = None
    if profiles is not None:
        per_run, per_run_t = n * (profiles + 1), n_t * (profiles + 1)
    return SampleSize(
        sd_delta=float(sd_delta), delta=float(delta), alpha=float(alpha), power=float(power),
        n_exact=n_exact, n_answers=n, n_exact_t=n_t_exact, n_answers_t=n_t,
        profiles=profiles, repeats=int(repeats), calls_per_run=per_run,
        calls_total=None if per_run is None else per_run * repeats,
        calls_total_t=None if per_run_t is None else per_run_t * repeats)
