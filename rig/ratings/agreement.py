"""Judge-human agreement where the decisions are: overall, per profile, against the baseline,
with inter-rater agreement as the ceiling; and the prediction-powered per-profile means and
paired deltas (docs/measurement.md, "Human ratings" and "Prediction-powered estimates").

A call's **human grade** is the mean over raters of its own ratings (``unit_kind`` call);
a call with none takes its answer's (``unit_kind`` answer: the script, which stands for
every call of that answer). Ratings flagged ``could_not_hear`` are left out and counted.
The pipeline's grade is the call's ``score``; failed and unparsed calls are left out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rig.ratings.model import Rating
from rig.stats.ppi import ppi_mean, ratings_for_width
from rig.stats.validity import judge_validity

TARGET_CI_WIDTH_POINTS = 10.0
_AGREEMENT_FIELDS = ("spearman", "spearman_ci95", "mae_points", "decision_agreement",
                     "cohen_kappa", "cohen_kappa_ci95")


def ratings_frame(ratings: list[Rating]) -> pd.DataFrame:
    """One row per rating (``could_not_hear`` ones out): rater_id, unit_kind, unit_id,
    score."""
    rows = [{"rater_id": r.rater_id, "unit_kind": r.unit_kind, "unit_id": r.unit_id,
             "score": r.score} for r in ratings if not r.could_not_hear]
    return pd.DataFrame(rows, columns=["rater_id", "unit_kind", "unit_id", "score"])


def rated_calls(rows: pd.DataFrame, ratings: list[Rating]) -> pd.DataFrame:
    """The scored call rows with a ``human`` column (their human grade, NaN when none)."""
    d = rows[(rows.get("status") == "ok") & rows["score"].notna()].copy() \
        if "status" in rows.columns else rows[rows["score"].notna()].copy()
    r = ratings_frame(ratings)
    by_call = r[r["unit_kind"] == "call"].groupby("unit_id")["score"].mean()
    by_answer = r[r["unit_kind"] == "answer"].groupby("unit_id")["score"].mean()
    d["human"] = d["call_id"].map(by_call).fillna(d["answer_id"].map(by_answer))
    return d


def agreement(d: pd.DataFrame, score_col: str = "score", ref_col: str = "human",
              seed: int = 0, n_boot: int = 2000) -> dict:
    """``score_col`` against ``ref_col`` (points, 0-100) over the rows of ``d`` (one per unit,
    with ``question_id``, ``tier`` and ``cutoff``): :class:`rig.campaign.schema_ratings.
    Agreement`'s fields from :func:`rig.stats.validity.judge_validity`."""
    v = judge_validity(d, score_col=score_col, reference_col=ref_col, n_boot=n_boot,
                       seed=seed)
    why = {k: s for k, s in v.not_computable.items() if k in _AGREEMENT_FIELDS}
    return {"n_units": v.n_answers, **{k: getattr(v, k) for k in _AGREEMENT_FIELDS},
            "not_computable": why}


def first_two_raters(r: pd.DataFrame) -> tuple[str, str, pd.DataFrame] | None:
    """``(a, b, both)``: the first two raters of :func:`ratings_frame` ``r`` (sorted ids) and
    the units both rated (columns ``unit_kind``, ``unit_id``, ``a``, ``b``: their scores);
    None with fewer than two raters or no unit rated by both."""
    if r.empty:
        return None
    wide = r.pivot_table(index=["unit_kind", "unit_id"], columns="rater_id", values="score")
    raters = sorted(wide.columns)
    if len(raters) < 2:
        return None
    a, b = raters[:2]
    both = wide[[a, b]].dropna().reset_index()
    return None if both.empty else (a, b, both)


def inter_rater(rows: pd.DataFrame, ratings: list[Rating], seed: int = 0) -> dict | None:
    """The first two raters (sorted ids) against each other, over the units both rated, on
    the calls' cutoffs: None when no unit was rated by both."""
    twice = first_two_raters(ratings_frame(ratings))
    if twice is None:
        return None
    a, b, both = twice
    info = rows.drop_duplicates("answer_id").set_index("answer_id")
    calls = rows.drop_duplicates("call_id").set_index("call_id")
    aid = np.where(both["unit_kind"] == "call", both["unit_id"].map(calls["answer_id"]),
                   both["unit_id"])
    both["answer_id"] = aid
    both = both[both["answer_id"].isin(info.index)]
    for col in ("question_id", "tier", "cutoff"):
        both[col] = both["answer_id"].map(info[col])
    both = both.rename(columns={a: "rater_a", b: "rater_b"})
    return agreement(both, "rater_b", "rater_a", seed)


def _ppi(y: np.ndarray, f: np.ndarray, fu: np.ndarray) -> dict:
    empty = {"estimate": None, "ci95": None, "lam": None, "n_rated": len(y),
             "n_unrated": len(fu), "judge_only": (float(np.concatenate([f, fu]).mean())
                                                  if len(f) + len(fu) else None),
             "ratings_only_ci95": None, "ratings_for_target_width": None}
    if len(y) < 2:
        return {**empty, "not_computable": f"{len(y)} rated unit(s); PPI needs 2 or more"}
    p = ppi_mean(y, f, fu)
    return {"estimate": p.estimate, "ci95": p.ci95, "lam": p.lam, "n_rated": p.n_rated,
            "n_unrated": p.n_unrated, "judge_only": p.judge_only,
            "ratings_only_ci95": p.ratings_only_ci95,
            "ratings_for_target_width": ratings_for_width(p, TARGET_CI_WIDTH_POINTS)}


def profile_ppi(d: pd.DataFrame, profile: str, baseline: str
                ) -> tuple[dict, dict | None, dict]:
    """(mean, paired delta, advance rate) of one profile as PPI figures. Units are answers:
    the judge's score and the human grade averaged over the profile's calls of that answer
    (repeats); the delta pairs an answer's profile value with its baseline value; the
    advance rate is the share of answers at or above their cutoff, in percent (100 x the
    decision on the repeat-averaged grade, judge's and people's)."""
    per = d.groupby(["profile_id", "answer_id"]).agg(f=("score", "mean"), y=("human", "mean"),
                                                     cutoff=("cutoff", "first"))
    g = per.loc[profile]
    rated = g["y"].notna()
    mean = _ppi(g["y"][rated].to_numpy(), g["f"][rated].to_numpy(), g["f"][~rated].to_numpy())
    fa = 100.0 * (g["f"] >= g["cutoff"]).to_numpy(float)
    ya = 100.0 * (g["y"][rated] >= g["cutoff"][rated]).to_numpy(float)
    advance = _ppi(ya, fa[rated.to_numpy()], fa[~rated.to_numpy()])
    if profile == baseline or baseline not in per.index.get_level_values(0):
        return mean, None, advance
    b = per.loc[baseline]
    both = g.index.intersection(b.index)
    fd = g.loc[both, "f"] - b.loc[both, "f"]
    yd = g.loc[both, "y"] - b.loc[both, "y"]
    r = yd.notna()
    return mean, _ppi(yd[r].to_numpy(), fd[r].to_numpy(), fd[~r].to_numpy()), advance


def _diff_ci(p: pd.DataFrame, b: pd.DataFrame, seed: int, n_boot: int = 2000
             ) -> tuple[float, float] | None:
    """Percentile bootstrap CI of (decision agreement of p) - (that of b), the two resampled
    apart (different calls)."""
    ap = ((p["score"] >= p["cutoff"]) == (p["human"] >= p["cutoff"])).to_numpy(float)
    ab = ((b["score"] >= b["cutoff"]) == (b["human"] >= b["cutoff"])).to_numpy(float)
    if len(ap) < 2 or len(ab) < 2:
        return None
    rng = np.random.default_rng(seed)
    diffs = (ap[rng.integers(0, len(ap), (n_boot, len(ap)))].mean(1)
             - ab[rng.integers(0, len(ab), (n_boot, len(ab)))].mean(1))
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    return float(lo), float(hi)


def human_ratings_block(rows: pd.DataFrame, ratings: list[Rating], *, baseline: str,
                        seed: int = 0, n_boot: int = 2000) -> dict:
    """The ``human_ratings`` part of summary.json (:class:`rig.campaign.schema_ratings.
    HumanRatings`) from call rows and ratings."""
    d = rated_calls(rows, ratings)
    h = d[d["human"].notna()]
    by_profile: dict[str, dict] = {}
    base = agreement(h[h["profile_id"] == baseline], seed=seed, n_boot=n_boot)
    flagged: list[str] = []
    profiles = [baseline, *sorted(p for p in d["profile_id"].unique() if p != baseline)]
    for pid in profiles:
        if pid not in set(d["profile_id"]):
            continue
        hp = h[h["profile_id"] == pid]
        ag = base if pid == baseline else agreement(hp, seed=seed, n_boot=n_boot)
        lower = None
        if pid != baseline:
            pairs = [(ag[k], base[k]) for k in ("spearman", "decision_agreement")
                     if ag[k] is not None and base[k] is not None]
            lower = any(x < y for x, y in pairs) if pairs else None
            if lower:
                flagged.append(pid)
        mean, delta, advance = profile_ppi(d, pid, baseline)
        by_profile[pid] = {
            "agreement": ag, "lower_than_baseline": lower,
            "decision_agreement_diff_ci95": (None if pid == baseline else _diff_ci(
                hp, h[h["profile_id"] == baseline], seed, n_boot)),
            "mean": mean, "paired_delta": delta, "advance_rate_pct": advance}
    raters = {r.rater_id for r in ratings}
    return {"n_ratings": len(ratings), "n_raters": len(raters), "n_calls_rated": len(h),
            "n_could_not_hear": sum(r.could_not_hear for r in ratings),
            "overall": agreement(h, seed=seed, n_boot=n_boot),
            "inter_rater": inter_rater(rows, ratings, seed),
            "target_ci_width_points": TARGET_CI_WIDTH_POINTS,
            "profiles_lower_than_baseline": flagged, "by_profile": by_profile,
            "ppi_sample_note": ppi_sample_note(ratings), "source": "ratings.jsonl"}


def ppi_sample_note(ratings: list[Rating]) -> str | None:
    """Why the PPI figures may be biased, or None: PPI assumes the rated units are a random
    sample of the profile's units (Angelopoulos et al. 2023). ``rig ratings collect`` rates
    its seeded stratified random sample; imported ratings may have been chosen any way."""
    imported = [r for r in ratings if r.source != "collect"]
    if not imported:
        return None
    files = sorted({r.source.removeprefix("import:") for r in imported})
    return (f"{len(imported)} of {len(ratings)} ratings were imported ({', '.join(files)}), "
            "not drawn by rig ratings collect: the PPI estimates hold only if the rated calls "
            "are a random sample of each profile's calls (e.g. not the hard cases picked out)")
