"""Per profile and variant: the gap, its cost, and a verdict on what the variant did to it.

The gap of a profile under a variant is the campaign summary's paired mean delta (profile
minus that variant's own baseline, points, repeats averaged per answer:
:func:`rig.campaign.summary.campaign_summary` on the variant's rows) with its Student t 95%
interval (``t_ci95``; the bootstrap ``ci95`` runs narrow below 30 pairs) and standard error
``se = sd_delta / sqrt(n_pairs)``. The verdict compares it with the same profile's gap in the
campaign (the rules, first that holds; ``docs/sweep.md`` gives the reasons):

``closes``
    the variant's t interval includes 0 AND the paired TOST
    (:func:`rig.stats.equivalence.tost_paired`, which equals statsmodels' ``ttost_paired``)
    shows equivalence within +-``margin`` points at
    ``alpha`` (p < alpha; when every paired delta is the same value, equivalence holds iff that
    value is inside the margin: the t statistics are infinite).
``narrows``
    |delta| shrinks (|d_v| < |d_c|) and either the two t intervals do not overlap or the
    point moves toward 0 by more than the variant's standard error (|d_c| - |d_v| > se_v).
``widens``
    the mirror image: |d_v| > |d_c| and (the intervals do not overlap or |d_v| - |d_c| > se_v).
``no effect``
    anything else, including a variant that leaves the gap where it was.

The baseline profile gets ``baseline`` (its delta is 0 by construction); a profile whose
delta cannot be computed (no pairs), or whose delta has neither an interval nor a standard
error (a single pair: a move of any size cannot be told from noise), gets ``not computable``;
the campaign's own rows (variant ``campaign``) get ``closes`` when the campaign already had no
gap, else ``campaign``.

Costs (per variant, the same for every profile): ``dead_air_added_s``, the endpointing
timer's change in seconds (variant minus campaign: silence every candidate waits through at
the end of every turn before the interviewer answers; negative when the timer is shorter);
``asr_s_per_call`` and ``scorer_s_per_call``, the mean ``t_asr_s`` and ``t_scorer_s`` of the
variant's completed calls (a stage the sweep did not re-run keeps the campaign's times).
"""

from __future__ import annotations

import math

import pandas as pd

from rig.stats.equivalence import tost_paired
from rig.stats.paired import paired_deltas

VERDICTS = ("closes", "narrows", "no effect", "widens", "baseline", "campaign",
            "not computable")


def _disjoint(a: list | None, b: list | None) -> bool:
    return bool(a and b and (a[1] < b[0] or b[1] < a[0]))


def verdict(delta: float | None, ci: list | None, se: float | None, tost_p: float | None,
            campaign_delta: float | None, campaign_ci: list | None,
            alpha: float = 0.05) -> str:
    """The verdict of one profile under one variant (rules in the module docstring).

    Args:
        delta, ci, se: the variant's mean paired delta (points), its 95% interval
            ``[low, high]`` and standard error; ci/se None when not computable.
        tost_p: the paired TOST p-value against the margin (None: not computable).
        campaign_delta, campaign_ci: the same profile's delta and interval in the campaign.
    """
    if delta is None or campaign_delta is None or (ci is None and se is None):
        return "not computable"
    if ci is not None and ci[0] <= 0 <= ci[1] and tost_p is not None and tost_p < alpha:
        return "closes"
    shift = abs(campaign_delta) - abs(delta)
    clear = _disjoint(ci, campaign_ci) or (se is not None and abs(shift) > se)
    if shift > 0 and clear:
        return "narrows"
    if shift < 0 and clear:
        return "widens"
    return "no effect"


def tost_p_value(deltas: pd.Series, margin: float, alpha: float = 0.05) -> float | None:
    """The paired TOST p-value of ``deltas`` within +-``margin``; when every delta is the
    same value, 0.0 if it lies strictly inside the margin and 1.0 otherwise; None with
    fewer than 2 deltas."""
    d = pd.to_numeric(deltas, errors="coerce").dropna()
    if len(d) < 2:
        return None
    if d.nunique() == 1:
        return 0.0 if abs(float(d.iloc[0])) < margin else 1.0
    return tost_paired(d.to_numpy(), margin, alpha).p_value


def _mean(rows: pd.DataFrame, col: str) -> float | None:
    if col not in rows:
        return None
    s = pd.to_numeric(rows.loc[rows["status"] == "ok", col], errors="coerce").dropna()
    return float(s.mean()) if len(s) else None


def variant_costs(rows: pd.DataFrame, timer_ms: int, campaign_timer_ms: int) -> dict:
    """``dead_air_added_s``, ``asr_s_per_call``, ``scorer_s_per_call`` (see the module
    docstring) of one variant's rows."""
    return {"dead_air_added_s": (timer_ms - campaign_timer_ms) / 1000.0,
            "asr_s_per_call": _mean(rows, "t_asr_s"),
            "scorer_s_per_call": _mean(rows, "t_scorer_s")}


def _se(p: dict) -> float | None:
    sd, n = p.get("sd_delta"), p.get("n_pairs") or 0
    return sd / math.sqrt(n) if sd is not None and n > 1 else None


def verdict_table(variant_id: str, rows: pd.DataFrame, summary: dict, campaign_summary: dict,
                  costs: dict, *, margin: float, alpha: float = 0.05) -> list[dict]:
    """One record per profile of ``summary`` (a campaign summary of the variant's rows):
    the profile's delta, interval, SE, TOST p, flip/truncation rates, WER (mean of calls and
    pooled: errors over reference words), the campaign's
    delta and interval, the variant's costs and the verdict."""
    baseline = summary["baseline"]
    deltas = paired_deltas(_scored(rows), baseline=baseline) if len(rows) else {}
    out = []
    for pid, p in summary["profiles"].items():
        c = campaign_summary["profiles"].get(pid, {})
        ci = p.get("t_ci95") or p.get("ci95")
        cci = c.get("t_ci95") or c.get("ci95")
        tp = tost_p_value(deltas.get(pid, pd.Series(dtype=float)), margin, alpha) \
            if pid != baseline else None
        v = "baseline" if pid == baseline else verdict(
            p.get("mean_delta"), ci, _se(p), tp, c.get("mean_delta"), cci, alpha)
        if variant_id == "campaign" and v not in ("baseline", "closes", "not computable"):
            v = "campaign"  # the reference itself: nothing to compare it with
        out.append({"variant": variant_id, "profile_id": pid, "n_pairs": p.get("n_pairs"),
                    "mean_delta": p.get("mean_delta"), "ci95": ci, "se": _se(p),
                    "tost_p": tp, "margin_points": margin,
                    "campaign_mean_delta": c.get("mean_delta"), "campaign_ci95": cci,
                    "flip_rate": p.get("flip_rate"),
                    "truncation_rate": p.get("truncation_rate"), "wer_mean": p.get("wer_mean"),
                    "wer_pooled": p.get("wer_pooled"),
                    **costs, "verdict": v})
    return out


def _scored(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows as the campaign summary pairs them: a failed call or parse failure has no
    score."""
    rows = rows.copy()
    rows.loc[(rows["status"] != "ok") | (rows["parse_status"] != "ok"), "score"] = float("nan")
    return rows
