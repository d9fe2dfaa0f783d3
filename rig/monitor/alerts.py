"""One week's per-segment figures and the alert rules, computed from the SQL aggregates.

Input: the frame of :meth:`rig.monitor.store.MonitorStore.weekly_aggregates` (counts and sums
per week, dimension and segment); no call-level data is needed here, so this step runs the
same on aggregates exported from a distributed engine.

Per segment of each dimension, in the report's week (MEASUREMENT.md's definitions):

* **volume** ``n_calls``; **advance rate** = selection rate = ``n_advanced / n_decided``
  (calls with a score and a decision); **mean score** over scored calls.
* **scoring rate** = share of the segment's scored calls strictly above the median of all the
  week's scored calls; **impact ratio** = scoring rate / the reference segment's.
* **selection-rate ratio** = selection rate / the reference segment's (four-fifths rule).
* The **reference** of each rate is the segment with the highest rate among the segments with
  at least ``alerts.min_n`` calls in its denominator (ties: the first in display order); a
  ratio is None when the reference's rate is 0 or no segment has ``min_n`` calls.
* **z, p**: the pooled two-proportion z-test of the segment against the reference
  (:func:`rig.stats.rates.compare_proportions`, which also gives Fisher's exact p).

Alerts (each only for a segment with at least ``min_n`` calls, against a reference with as
many):

* ``scoring_impact_ratio`` / ``selection_ratio``: the ratio is under ``ratio_threshold``
  (0.8) and the z-test's p, adjusted, is under ``alpha``.
* ``mean_shift``: the segment's mean score this week moved from its **trailing baseline**
  (all its scored calls of the previous ``baseline_weeks`` weeks, pooled) by more than the
  **noise floor**, and Welch's t-test of the two means, adjusted, is under ``alpha``. The
  dimension ``all`` (every call in one segment) carries the shift of the whole week; a
  dimension with a single segment this week repeats it and is not tested again.

**Noise floor** of a segment's weekly mean, in score points: production has no repeats of a
call, so the floor is how much the segment's weekly mean moves when nothing is known to have
changed: ``noise_floor_k`` (2) x the standard deviation of its weekly means over the baseline
weeks that have ``min_n`` scored calls, when there are at least ``min_baseline_weeks`` (3) of
them (a Shewhart-style control limit), and never less than the **scorer floor**. The scorer
floor is on the scale of a shift of means: ``scorer_repeat_sd_points`` is the scorer's noise
in *one* call's score (the SD between repeats, ``repeat_sd`` of a campaign of the same
pipeline: MEASUREMENT.md's noise floor describes single calls), and a weekly mean of n_week
calls minus a baseline mean of n_baseline calls carries that noise with standard error
``scorer_repeat_sd_points * sqrt(1/n_week + 1/n_baseline)``; the scorer floor is
``noise_floor_k`` x that standard error. With too few baseline weeks the floor is the larger
of the scorer floor and the sampling floor, z(1 - alpha/2) x the standard error of the shift
(Welch), and says which (``noise_floor_source``: ``week_to_week``, ``scorer`` or
``sampling``).

**Adjustment**: with ``correction: holm`` (default) every test of the week that could raise
an alert (both ratios of every eligible non-reference segment, every eligible mean shift) is
one family, Holm-adjusted (Holm 1979), so a week with no effect raises a false alert with
probability at most ``alpha``. ``none`` uses the raw p-values.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field, fields, replace
from datetime import date, datetime, timedelta
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from rig.monitor.config import AlertsConfig
from rig.monitor.segments import Dimension
from rig.stats.common import jsonable
from rig.stats.equivalence import holm
from rig.stats.rates import compare_proportions

AlertKind = Literal["scoring_impact_ratio", "selection_ratio", "mean_shift"]
NoiseFloorSource = Literal["week_to_week", "scorer", "sampling"]
#: Fields hidden for a segment under ``privacy.min_cell`` calls.
_CELL_FIELDS = ("mean_score", "sd_score", "scoring_rate", "impact_ratio", "selection_rate",
                "selection_ratio", "n_above_median", "n_advanced", "baseline_mean", "shift",
                # a test statistic's sign tells whether a lone call advanced: hidden too
                "scoring_z", "scoring_p", "scoring_p_fisher", "scoring_p_adj", "selection_z",
                "selection_p", "selection_p_fisher", "selection_p_adj", "shift_t", "shift_p",
                "shift_p_adj", "sd_week_to_week")


@dataclass(frozen=True)
class SegmentWeek:
    """One segment's figures for the week (rates in [0, 1], scores in the interviewer's score
    units). ``*_p_adj``: the p-value after the week's adjustment (None when the test is not
    in the alert family). ``not_computable`` maps a None field to the reason."""
    dimension: str
    segment: str
    n_calls: int
    n_scored: int
    n_above_median: int
    n_decided: int
    n_advanced: int
    mean_score: float | None
    sd_score: float | None
    scoring_rate: float | None
    impact_ratio: float | None
    scoring_reference: bool
    scoring_z: float | None
    scoring_p: float | None
    scoring_p_fisher: float | None
    scoring_p_adj: float | None
    selection_rate: float | None
    selection_ratio: float | None
    selection_reference: bool
    selection_z: float | None
    selection_p: float | None
    selection_p_fisher: float | None
    selection_p_adj: float | None
    baseline_n: int
    baseline_weeks: int
    baseline_mean: float | None
    shift: float | None
    sd_week_to_week: float | None
    noise_floor: float | None
    noise_floor_source: NoiseFloorSource | None
    shift_t: float | None
    shift_p: float | None
    shift_p_adj: float | None
    not_computable: dict[str, str] = field(default_factory=dict)

    def to_dict(self, min_cell: int = 1) -> dict:
        """JSON values; under ``min_cell`` calls only the counts of calls are kept."""
        out = {f.name: jsonable(getattr(self, f.name)) for f in fields(self)}
        if self.n_calls < min_cell:
            for k in _CELL_FIELDS:
                out[k] = None
            out["not_computable"] = {**out["not_computable"], "suppressed":
                                     f"fewer than {min_cell} calls (privacy.min_cell)"}
        return out


@dataclass(frozen=True)
class Alert:
    """One alert. ``value``: the ratio, or the shift in score points; ``threshold``: the ratio
    threshold, or the noise floor; ``statistic``: z or Welch's t."""
    kind: AlertKind
    week: str
    dimension: str
    segment: str
    reference: str | None
    value: float
    threshold: float
    n: int
    n_reference: int
    statistic: float | None
    p_value: float
    p_adjusted: float
    message: str

    def to_dict(self) -> dict:
        return {f.name: jsonable(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True)
class WeekAnalysis:
    """Segments (in dimension, then display order) and the alerts they raise."""
    week_start: date
    segments: tuple[SegmentWeek, ...]
    alerts: tuple[Alert, ...]
    baseline_weeks: tuple[date, ...]
    n_tests: int


def week_label(week_start: date) -> str:
    """ISO week label of a Monday, e.g. ``2025-W03``."""
    y, w, _ = week_start.isocalendar()
    return f"{y}-W{w:02d}"


def _reference(rows: list[dict], hits: str, n: str, min_n: int) -> str | None:
    best, best_rate = None, -1.0
    for r in rows:
        if r[n] >= min_n and r[n] > 0 and r[hits] / r[n] > best_rate:
            best, best_rate = r["segment"], r[hits] / r[n]
    return best


def _rate_figures(r: dict, ref: dict | None, hits: str, n: str, cfg: AlertsConfig,
                  why: dict, kind: str) -> dict:
    den, x = int(r[n]), int(r[hits])
    out = {"rate": x / den if den else None, "ratio": None, "reference": False, "z": None,
           "p": None, "p_fisher": None, "eligible": False}
    if not den:
        why[f"{kind}_rate"] = "no calls in the denominator"
    if ref is None:
        why[f"{kind}_ratio"] = f"no segment has {cfg.min_n} calls (alerts.min_n)"
        return out
    ref_den, ref_x = int(ref[n]), int(ref[hits])
    ref_rate = ref_x / ref_den
    out["reference"] = r["segment"] == ref["segment"]
    if out["rate"] is not None:
        if ref_rate > 0:
            out["ratio"] = out["rate"] / ref_rate
        else:
            why[f"{kind}_ratio"] = "the reference's rate is 0: the ratio is undefined"
    if out["reference"]:
        return out
    if den:
        cmp = compare_proportions(x, den, ref_x, ref_den, threshold=cfg.ratio_threshold,
                                  min_n=cfg.min_n)
        out["z"], out["p"], out["p_fisher"] = cmp.ztest.z, cmp.ztest.p_value, cmp.fisher.p_value
        if cmp.ztest.reason:
            why[f"{kind}_z"] = cmp.ztest.reason
    out["eligible"] = den >= cfg.min_n and out["p"] is not None
    return out


def _mean_sd(n: float, s: float, ss: float) -> tuple[float | None, float | None]:
    if n <= 0:
        return None, None
    mean = s / n
    if n < 2:
        return mean, None
    var = max(0.0, (ss - s * s / n) / (n - 1))
    return mean, math.sqrt(var)


def _shift(base_rows: list[dict], n_w: int, mean_w: float | None, sd_w: float | None,
           cfg: AlertsConfig, why: dict) -> dict:
    out = {"baseline_n": 0, "baseline_weeks": 0, "baseline_mean": None, "shift": None,
           "sd_week_to_week": None, "noise_floor": None, "noise_floor_source": None,
           "t": None, "p": None, "eligible": False}
    b = [r for r in base_rows if r["n_scored"] > 0]
    if not b or mean_w is None:
        why["shift"] = ("no scored calls in the baseline weeks" if not b else
                        "no scored calls this week")
        return out
    n_b = int(sum(r["n_scored"] for r in b))
    mean_b, sd_b = _mean_sd(n_b, float(sum(r["sum_score"] for r in b)),
                            float(sum(r["sum_sq_score"] for r in b)))
    assert mean_b is not None
    out.update(baseline_n=n_b, baseline_weeks=len(b), baseline_mean=mean_b,
               shift=mean_w - mean_b)
    weekly = np.array([r["sum_score"] / r["n_scored"] for r in b if r["n_scored"] >= cfg.min_n])
    if len(weekly) >= cfg.min_baseline_weeks:
        out["sd_week_to_week"] = float(np.std(weekly, ddof=1))
    else:
        why["sd_week_to_week"] = (f"{len(weekly)} baseline weeks with {cfg.min_n} scored calls; "
                                  f"{cfg.min_baseline_weeks} needed (alerts.min_baseline_weeks)")
    se = None
    if sd_w is not None and sd_b is not None and n_w >= 2 and n_b >= 2:
        se = math.sqrt(sd_w**2 / n_w + sd_b**2 / n_b)
    scorer = scorer_floor(cfg, n_w, n_b)
    floors: list[tuple[float, NoiseFloorSource]] = []
    if out["sd_week_to_week"] is not None:
        floors.append((cfg.noise_floor_k * out["sd_week_to_week"], "week_to_week"))
    elif se is not None:
        floors.append((float(stats.norm.ppf(1 - cfg.alpha / 2)) * se, "sampling"))
    if scorer is not None:
        floors.append((scorer, "scorer"))
    if floors:  # the largest; on a tie the first (week_to_week or sampling)
        floor, src = max(floors, key=lambda f: f[0])
        out["noise_floor"], out["noise_floor_source"] = floor, src
    if se is None or se == 0:
        why["shift_t"] = "fewer than two scored calls on a side, or no variation in the scores"
        return out
    res = stats.ttest_ind_from_stats(mean_w, sd_w, n_w, mean_b, sd_b, n_b, equal_var=False)
    out["t"], out["p"] = float(res.statistic), float(res.pvalue)
    out["eligible"] = n_w >= cfg.min_n and n_b >= cfg.min_n and out["noise_floor"] is not None
    return out


def scorer_floor(cfg: AlertsConfig, n_week: int, n_baseline: int) -> float | None:
    """The scorer's part of the noise floor of a shift between a mean of ``n_week`` calls
    and a mean of ``n_baseline`` calls, in score points: ``noise_floor_k`` x
    ``scorer_repeat_sd_points`` x sqrt(1/n_week + 1/n_baseline) (each call's score carries
    independent scorer noise of SD ``scorer_repeat_sd_points``; the variance of a mean of n
    of them is SD^2 / n, of a difference of two such means the sum). None when the SD is not
    given (0) or a side has no calls."""
    if cfg.scorer_repeat_sd_points <= 0 or n_week < 1 or n_baseline < 1:
        return None
    return cfg.noise_floor_k * cfg.scorer_repeat_sd_points * math.sqrt(
        1.0 / n_week + 1.0 / n_baseline)


def _as_date(v: object) -> date:
    if isinstance(v, datetime):
        return v.date()
    if isinstance(v, date):
        return v
    return pd.Timestamp(v).date()  # numpy datetime64 or text


def analyse_week(agg: pd.DataFrame, week_start: date, dims: list[Dimension],
                 cfg: AlertsConfig) -> WeekAnalysis:
    """Figures and alerts of the week starting ``week_start`` (module docstring).

    Args:
        agg: rows of :func:`rig.monitor.segments.weekly_aggregate_sql` for the week and the
            ``cfg.baseline_weeks`` weeks before it (other weeks are ignored).
        week_start: the Monday of the week reported.
        dims: the dimensions, in report order.
        cfg: the alert settings.
    """
    first_base = week_start - timedelta(days=7 * cfg.baseline_weeks)
    cur: dict[str, list[dict]] = defaultdict(list)
    base: dict[tuple[str, str], list[dict]] = defaultdict(list)
    baseline_weeks: set[date] = set()
    for r in agg.to_dict("records"):
        r["week_start"] = w = _as_date(r["week_start"])
        for k in ("sum_score", "sum_sq_score"):
            r[k] = 0.0 if r[k] is None or r[k] != r[k] else float(r[k])
        if w == week_start:
            cur[r["dimension"]].append(r)
        elif first_base <= w < week_start:
            base[(r["dimension"], r["segment"])].append(r)
            baseline_weeks.add(w)
    segs: list[SegmentWeek] = []
    tests: list[tuple[int, str, float]] = []  # (segment index, kind, p)
    refs: dict[tuple[str, str], tuple[str, int]] = {}
    for d in dims:
        rows = sorted(cur.get(d.name, []), key=lambda r: d.order(r["segment"]))
        if not rows:
            continue
        ref_sc = _reference(rows, "n_above_median", "n_scored", cfg.min_n)
        ref_se = _reference(rows, "n_advanced", "n_decided", cfg.min_n)
        row_of = {r["segment"]: r for r in rows}
        if ref_sc:
            refs[(d.name, "scoring")] = (ref_sc, int(row_of[ref_sc]["n_scored"]))
        if ref_se:
            refs[(d.name, "selection")] = (ref_se, int(row_of[ref_se]["n_decided"]))
        for r in rows:
            why: dict[str, str] = {}
            sc = _rate_figures(r, row_of.get(ref_sc) if ref_sc else None, "n_above_median",
                               "n_scored", cfg, why, "scoring")
            se = _rate_figures(r, row_of.get(ref_se) if ref_se else None, "n_advanced",
                               "n_decided", cfg, why, "selection")
            mean_w, sd_w = _mean_sd(r["n_scored"], r["sum_score"], r["sum_sq_score"])
            sh = _shift(base.get((d.name, r["segment"]), []), int(r["n_scored"]), mean_w, sd_w,
                        cfg, why)
            if d.name != "all" and len(rows) == 1 and sh["eligible"]:
                sh["eligible"] = False  # the same test as the dimension "all": tested there
                why["shift_p_adj"] = ("the only segment of its dimension this week: its shift "
                                      "is that of all calls (dimension all)")
            i = len(segs)
            for kind, fig in (("scoring", sc), ("selection", se), ("shift", sh)):
                if fig["eligible"]:
                    tests.append((i, kind, fig["p"]))
            segs.append(SegmentWeek(
                dimension=d.name, segment=str(r["segment"]), n_calls=int(r["n_calls"]),
                n_scored=int(r["n_scored"]), n_above_median=int(r["n_above_median"]),
                n_decided=int(r["n_decided"]), n_advanced=int(r["n_advanced"]),
                mean_score=mean_w, sd_score=sd_w, scoring_rate=sc["rate"],
                impact_ratio=sc["ratio"], scoring_reference=sc["reference"],
                scoring_z=sc["z"], scoring_p=sc["p"], scoring_p_fisher=sc["p_fisher"],
                scoring_p_adj=None, selection_rate=se["rate"], selection_ratio=se["ratio"],
                selection_reference=se["reference"], selection_z=se["z"],
                selection_p=se["p"], selection_p_fisher=se["p_fisher"], selection_p_adj=None,
                baseline_n=sh["baseline_n"], baseline_weeks=sh["baseline_weeks"],
                baseline_mean=sh["baseline_mean"], shift=sh["shift"],
                sd_week_to_week=sh["sd_week_to_week"], noise_floor=sh["noise_floor"],
                noise_floor_source=sh["noise_floor_source"], shift_t=sh["t"],
                shift_p=sh["p"], shift_p_adj=None, not_computable=why))
    adjusted = (holm([p for _, _, p in tests], cfg.alpha) if cfg.correction == "holm"
                else [(p, p < cfg.alpha) for _, _, p in tests])
    for (i, kind, _p), (p_adj, _rej) in zip(tests, adjusted, strict=True):
        segs[i] = replace(segs[i], **{f"{kind}_p_adj": p_adj})
    label = week_label(week_start)
    alerts = [a for s in segs for a in _alerts_of(s, refs, cfg, label)]
    return WeekAnalysis(week_start, tuple(segs), tuple(alerts), tuple(sorted(baseline_weeks)),
                        len(tests))


def _alerts_of(s: SegmentWeek, refs: dict, cfg: AlertsConfig, week: str) -> list[Alert]:
    out: list[Alert] = []
    name = s.segment if s.dimension == "all" else f"{s.dimension}={s.segment}"
    for kind, ratio, n, z, p, p_adj, what in (
            ("scoring_impact_ratio", s.impact_ratio, s.n_scored, s.scoring_z, s.scoring_p,
             s.scoring_p_adj, "scoring rate"),
            ("selection_ratio", s.selection_ratio, s.n_decided, s.selection_z, s.selection_p,
             s.selection_p_adj, "selection (advance) rate")):
        if p_adj is None or ratio is None or not (ratio < cfg.ratio_threshold
                                                  and p_adj < cfg.alpha):
            continue
        ref, n_ref = refs[(s.dimension, kind.split("_")[0])]
        out.append(Alert(kind, week, s.dimension, s.segment, ref, ratio, cfg.ratio_threshold,
                         n, n_ref, z, p, p_adj,
                         f"{name}: {what} ratio {ratio:.2f} against "
                         f"{ref} (under {cfg.ratio_threshold:g}; n={n} vs {n_ref}, z={z:.2f}, "
                         f"adjusted p={p_adj:.2g})"))
    if (s.shift_p_adj is not None and s.shift is not None and s.noise_floor is not None
            and abs(s.shift) > s.noise_floor and s.shift_p_adj < cfg.alpha):
        out.append(Alert("mean_shift", week, s.dimension, s.segment, None, s.shift,
                         s.noise_floor, s.n_scored, s.baseline_n, s.shift_t,
                         s.shift_p or 0.0, s.shift_p_adj,
                         f"{name}: mean score {s.mean_score:.2f} moved "
                         f"{s.shift:+.2f} from its {s.baseline_weeks}-week baseline "
                         f"{s.baseline_mean:.2f}, beyond the noise floor {s.noise_floor:.2f} "
                         f"({s.noise_floor_source}); n={s.n_scored} vs {s.baseline_n}, "
                         f"adjusted p={s.shift_p_adj:.2g}"))
    return out
