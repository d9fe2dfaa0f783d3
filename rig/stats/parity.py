"""Error-rate parity against the truth (docs/measurement.md, "Error-rate parity").

Per profile, on answers (repeats averaged per answer first, as for flips), with the
question's cutoff and the answer's reference grade (the bank's mean reference grade):

* ``qualified_rejected``: among answers whose reference grade is >= the cutoff, the share
  the pipeline rejected (score < cutoff);
* ``unqualified_advanced``: among answers whose reference grade is < the cutoff, the share
  the pipeline advanced (score >= cutoff).

Each rate has a Wilson score 95% CI (Wilson 1927; statsmodels ``proportion_confint``,
``method="wilson"``) and its ratio to the baseline's rate (an equalized-odds screen: Hardt,
Price and Srebro 2016), with a percentile bootstrap 95% CI of the ratio over the answers both
profiles hold, resampled as pairs (``scipy.stats.bootstrap(..., paired=True)``, seeded).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

KINDS = ("qualified_rejected", "unqualified_advanced")


def answer_decisions(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (profile_id, answer_id): the repeat-averaged ``score``, ``cutoff``,
    ``reference_score``, ``qualified`` (reference >= cutoff) and ``advanced`` (score >=
    cutoff). ``rows``: call rows; rows without a score are left out.

    Raises:
        KeyError: a required column is missing."""
    need = ["profile_id", "answer_id", "score", "cutoff", "reference_score"]
    missing = [c for c in need if c not in rows.columns]
    if missing:
        raise KeyError(f"parity rows lack column(s) {missing}")
    d = rows.dropna(subset=["score", "cutoff", "reference_score"])
    g = d.groupby(["profile_id", "answer_id"], as_index=False).agg(
        score=("score", "mean"), cutoff=("cutoff", "first"),
        reference_score=("reference_score", "first"))
    g["qualified"] = g["reference_score"] >= g["cutoff"]
    g["advanced"] = g["score"] >= g["cutoff"]
    return g


def _errors(g: pd.DataFrame, kind: str) -> pd.Series:
    """Per answer of the kind's denominator: 1.0 when wrongly decided, indexed by answer."""
    sub = g[g["qualified"]] if kind == "qualified_rejected" else g[~g["qualified"]]
    wrong = ~sub["advanced"] if kind == "qualified_rejected" else sub["advanced"]
    return pd.Series(wrong.to_numpy(float), index=sub["answer_id"].to_numpy())


def _ratio(p: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.mean(p, axis=axis) / np.mean(b, axis=axis)


def error_parity(rows: pd.DataFrame, *, baseline: str, n_boot: int = 2000,
                 seed: int = 0) -> dict[str, dict[str, dict]]:
    """profile id -> kind -> ``{n, errors, rate, wilson_ci95, ratio_to_baseline,
    ratio_ci95}`` (the fields of :class:`rig.campaign.schema_ratings.ParityRate`)."""
    g = answer_decisions(rows)
    base = g[g["profile_id"] == baseline]
    out: dict[str, dict[str, dict]] = {}
    for pid, gp in g.groupby("profile_id", sort=False):
        out[str(pid)] = {}
        for kind in KINDS:
            e = _errors(gp, kind)
            n, k = len(e), int(e.sum())
            rate = k / n if n else None
            ci = (tuple(float(v) for v in proportion_confint(k, n, 0.05, "wilson"))
                  if n else None)
            fig = {"n": n, "errors": k, "rate": rate, "wilson_ci95": ci,
                   "ratio_to_baseline": None, "ratio_ci95": None}
            eb = _errors(base, kind)
            if n and len(eb) and eb.mean() > 0:
                fig["ratio_to_baseline"] = float(e.mean() / eb.mean())
                both = e.index.intersection(eb.index)
                p, b = e.loc[both].to_numpy(), eb.loc[both].to_numpy()
                if pid != baseline and len(both) >= 2 and (p.std() > 0 or b.std() > 0):
                    # a resample whose baseline has no error gives an infinite ratio (0/0:
                    # NaN); the percentile interval is then not finite and not reported
                    # (below), so scipy's warning (which names BCa even for a percentile
                    # interval) is not printed: the demo printed it 7 times
                    with np.errstate(divide="ignore", invalid="ignore"), \
                            warnings.catch_warnings():
                        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
                        res = stats.bootstrap((p, b), _ratio, paired=True, vectorized=True,
                                              n_resamples=n_boot, method="percentile",
                                              random_state=np.random.default_rng(seed))
                    lo, hi = res.confidence_interval
                    if np.isfinite(lo) and np.isfinite(hi):
                        fig["ratio_ci95"] = (float(lo), float(hi))
            out[str(pid)][kind] = fig
    return out
