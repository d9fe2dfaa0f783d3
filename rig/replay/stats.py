"""Statistics of a replay: B - A per turn, clustered by interview.

The recording is the fixed content and the pipeline version the only thing that changes, so
``delta = score_B - score_A`` of one turn is a paired difference (MEASUREMENT.md, "Paired
delta"). Turns of one interview share a speaker, a line and a phone, so they are not
independent: every interval and test here resamples or permutes **whole interviews**
(``call_id``), never turns.

* **Mean delta** (points, 0-100 scale): the turn-weighted mean of the paired deltas.
* **95% CI**: cluster bootstrap by interview (Davison and Hinkley 1997, section 3.8; Field
  and Welsh 2007): resample interviews with replacement, ``n_boot`` (2000) times, seed 0,
  the statistic recomputed on all turns of the drawn interviews; percentile interval. None
  under :data:`MIN_CLUSTERS_CI` (5) interviews: a bootstrap over 2-4 clusters has almost no
  spread and would look sure when it is not (the p-value is still given).
* **p**: cluster sign-flip randomization test of "B changes nothing" (each interview's sum
  of deltas is symmetric about 0 under the null): the signs of whole interviews are flipped,
  exactly (all 2^n patterns) up to 12 interviews, else 20,000 random patterns (seed 0, with
  the +1 correction of Phipson and Smyth 2010); two-sided on the mean delta.
* **Flip rate**: share of paired turns whose decision (advance/reject) differs between A
  and B, with its cluster-bootstrap CI, and its split into advance -> reject and
  reject -> advance. Its **no-change floor** is the flip rate of A against A again: 0 by
  construction when A is deterministic (greedy ASR, llama.cpp at temperature 0, the VAD),
  which ``flip_floor`` says instead of printing a measured 0.
* **Holm** (Holm 1979) across every segment's test (all dimensions together: one family),
  so a B that changes nothing flags a segment with probability at most alpha. A dimension
  whose turns all fall in one segment repeats the whole replay: it is listed
  (``same_as_all``) and left out of the family, as the monitor does.
* **Impact ratios** per segment dimension, for A and for B (LL144 scoring rates: share of a
  segment's turns scored strictly above the median of that version's scores; four-fifths
  selection rates: share advanced; :mod:`rig.stats.rates`), and their change B - A.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from rig.asr.wer import wer
from rig.replay.segments import DIMENSIONS
from rig.stats.common import jsonable
from rig.stats.equivalence import holm

N_BOOT = 2000
#: the fewest interviews a cluster bootstrap interval is given for: with fewer, resampling 2-4
#: clusters has almost no spread and the interval looks sure when it is not (bootstrap
#: intervals undercover with few clusters: Cameron, Gelbach and Miller 2008)
MIN_CLUSTERS_CI = 5
EXACT_MAX_CLUSTERS = 12
N_PERMUTATIONS = 20000

#: columns of a row that are the same under both versions (the recording's)
_SHARED = ("turn_key", "call_id", "source", "turn_index", "question_id", "turn_source",
           "layout", "start_in_file_s", "end_in_file_s", "cutoff", "reference_transcript",
           *DIMENSIONS)
_PER_VERSION = ("row_id", "status", "error", "result_source", "score", "parse_status",
                "decision", "transcript", "truncated", "turn_close_s", "closed_by",
                "speech_after_close_s", "words_lost", "lost_text", "wer", "turn_duration_s")


def pair_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per turn with both versions side by side (``score_a``, ``score_b``, ...),
    ``delta`` (B - A, points; NaN unless both scored), ``flip`` (decisions differ; None
    unless both decided), ``flip_direction``, ``wer_b_vs_a`` (B's transcript against A's,
    jiwer WER on Whisper-normalised words; None when A's is empty), ``diff_b_vs_a``
    (:func:`transcript_diff`) and ``paired`` (both scored)."""
    if rows.empty:
        return pd.DataFrame(columns=["turn_key", "delta", "flip", "paired"])
    a = rows[rows["version"] == "A"].set_index("turn_key")
    b = rows[rows["version"] == "B"].set_index("turn_key")
    keys = [k for k in b.index if k in a.index]
    out = b.loc[keys, [c for c in _SHARED if c != "turn_key" and c in b.columns]].copy()
    for col in _PER_VERSION:
        if col in rows.columns:
            out[f"{col}_a"] = a.loc[keys, col].to_numpy()
            out[f"{col}_b"] = b.loc[keys, col].to_numpy()
    ok = ((out["status_a"] == "ok") & (out["status_b"] == "ok")
          & out["score_a"].notna() & out["score_b"].notna())
    out["paired"] = ok
    out["delta"] = np.where(ok, out["score_b"].astype(float) - out["score_a"].astype(float),
                            np.nan)
    decided = out["decision_a"].notna() & out["decision_b"].notna()
    out["flip"] = np.where(decided, out["decision_a"] != out["decision_b"], None)
    out["flip_direction"] = [
        f"{da} -> {db}" if d and f else None
        for da, db, d, f in zip(out["decision_a"], out["decision_b"], decided, out["flip"],
                                strict=True)]
    out["wer_b_vs_a"] = [wer(ta, tb).wer if isinstance(ta, str) and ta.strip()
                         and isinstance(tb, str) else None
                         for ta, tb in zip(out["transcript_a"], out["transcript_b"], strict=True)]
    out["diff_b_vs_a"] = [transcript_diff(ta, tb) for ta, tb in
                          zip(out["transcript_a"], out["transcript_b"], strict=True)]
    return out.reset_index()


def transcript_diff(a: object, b: object) -> str | None:
    """The word-level change from A's transcript to B's, as JSON: a list of ``[op, A's word,
    B's word]`` for each step that differs (``delete``: A heard it, B did not; ``insert``: the
    reverse; ``substitute``), on Whisper-normalised words (:func:`rig.drilldown.align.
    align_transcript`, jiwer); ``"[]"`` when they agree; None when either is missing."""
    import json

    from rig.drilldown.align import align_transcript

    if not isinstance(a, str) or not isinstance(b, str):
        return None
    return json.dumps([[s.op, s.ref, s.hyp] for s in align_transcript(a, b) if s.op != "equal"])


def _clusters(df: pd.DataFrame, col: str) -> tuple[np.ndarray, np.ndarray]:
    """Per interview: the sum of ``col`` and the count of its turns."""
    g = df.groupby("call_id")[col].agg(["sum", "count"])
    return g["sum"].to_numpy(float), g["count"].to_numpy(float)


def cluster_bootstrap_ci(df: pd.DataFrame, col: str, n_boot: int = N_BOOT, seed: int = 0
                         ) -> list[float] | None:
    """Percentile 95% CI of the turn-weighted mean of ``col``, resampling interviews
    (``call_id``) with replacement. None with fewer than :data:`MIN_CLUSTERS_CI`
    interviews."""
    sums, counts = _clusters(df, col)
    if len(sums) < MIN_CLUSTERS_CI:
        return None
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(sums), size=(n_boot, len(sums)))
    stats = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
    lo, hi = np.percentile(stats, [2.5, 97.5])
    return [float(lo), float(hi)]


def sign_flip_p(df: pd.DataFrame, col: str = "delta", seed: int = 0) -> float | None:
    """Two-sided p of "the mean of ``col`` is 0" by flipping the signs of whole interviews
    (module docstring). None with fewer than 2 interviews."""
    sums, counts = _clusters(df, col)
    n = len(sums)
    if n < 2:
        return None
    total = counts.sum()
    obs = abs(sums.sum() / total)
    tol = 1e-9 * max(1.0, obs)
    if n <= EXACT_MAX_CLUSTERS:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
        stats = np.abs(signs @ sums / total)
        return float(np.mean(stats >= obs - tol))
    rng = np.random.default_rng(seed)
    signs = rng.choice((1.0, -1.0), size=(N_PERMUTATIONS, n))
    hits = int(np.sum(np.abs(signs @ sums / total) >= obs - tol))
    return (hits + 1) / (N_PERMUTATIONS + 1)


def _rate(x: pd.Series) -> float | None:
    x = x.dropna()
    return float(x.astype(bool).mean()) if len(x) else None


def group_stats(pairs: pd.DataFrame, n_boot: int = N_BOOT) -> dict:
    """The figures of one group of paired turns (the whole replay or one segment)."""
    p = pairs[pairs["paired"]]
    n_calls = int(p["call_id"].nunique()) if len(p) else 0
    out: dict = {"n_turns": len(pairs), "n_pairs": len(p), "n_calls": n_calls,
                 "mean_score_a": None, "mean_score_b": None, "mean_delta": None, "ci95": None,
                 "p": None}
    if len(p):
        out.update(mean_score_a=float(p["score_a"].mean()),
                   mean_score_b=float(p["score_b"].mean()), mean_delta=float(p["delta"].mean()),
                   ci95=cluster_bootstrap_ci(p, "delta", n_boot), p=sign_flip_p(p))
    f = pairs[pairs["flip"].notna()].copy()
    f["flip_i"] = f["flip"].astype(bool).astype(float)
    out.update(
        n_decided=len(f), flips=int(f["flip_i"].sum()),
        flip_rate=float(f["flip_i"].mean()) if len(f) else None,
        flip_ci95=cluster_bootstrap_ci(f, "flip_i", n_boot) if len(f) else None,
        flips_advance_to_reject=int((f["flip_direction"] == "advance -> reject").sum()),
        flips_reject_to_advance=int((f["flip_direction"] == "reject -> advance").sum()),
        truncation_rate_a=_rate(pairs["truncated_a"]) if "truncated_a" in pairs else None,
        truncation_rate_b=_rate(pairs["truncated_b"]) if "truncated_b" in pairs else None,
        wer_b_vs_a_mean=(float(pairs["wer_b_vs_a"].dropna().mean())
                         if pairs["wer_b_vs_a"].notna().any() else None))
    for v in ("a", "b"):
        out.update(wer_figures(pairs, v))
        col = f"closed_by_{v}"
        out[f"heard_nothing_{v}"] = (int((pairs[col] == "no_speech").sum())
                                     if col in pairs else 0)
    ta, tb = out["truncation_rate_a"], out["truncation_rate_b"]
    out["truncation_change"] = tb - ta if ta is not None and tb is not None else None
    return out


def wer_figures(pairs: pd.DataFrame, v: str) -> dict:
    """Version ``v``'s WER against the human ``reference_transcript`` over the turns that have
    one: the mean of per-turn WERs (``wer_mean_<v>``) and the pooled WER (``wer_pooled_<v>``:
    all errors over all reference words, so a short turn with an empty or tiny reference
    cannot swamp it; jiwer's corpus WER), with the number of turns (``n_wer_<v>``). A turn
    whose reference is empty is left out of both and counted (``n_empty_reference``)."""
    sums = [0, 0]
    per: list[float] = []
    empty = 0
    col = f"transcript_{v}"
    for ref, hyp in zip(pairs.get("reference_transcript", ()), pairs.get(col, ()), strict=True):
        if not isinstance(ref, str) or not isinstance(hyp, str):
            continue
        r = wer(ref, hyp)
        if r.reference_words == 0:
            empty += 1
            continue
        per.append(float(r.wer))
        sums[0] += r.substitutions + r.deletions + r.insertions
        sums[1] += r.reference_words
    return {f"wer_mean_{v}": float(np.mean(per)) if per else None,
            f"wer_pooled_{v}": sums[0] / sums[1] if sums[1] else None,
            f"n_wer_{v}": len(per), "n_empty_reference": empty}


def segment_stats(pairs: pd.DataFrame, alpha: float = 0.05, n_boot: int = N_BOOT) -> dict:
    """``{dimension: {segment: group_stats + p_holm}}`` over :data:`DIMENSIONS`, Holm across
    every segment of every dimension (one family)."""
    out: dict[str, dict[str, dict]] = {}
    family: list[tuple[str, str]] = []
    for col, dim in DIMENSIONS.items():
        if col not in pairs.columns:
            continue
        out[dim] = {}
        groups = list(pairs.groupby(pairs[col].fillna("unknown").astype(str), sort=True))
        for seg, grp in groups:
            out[dim][seg] = group_stats(grp, n_boot)
            out[dim][seg]["same_as_all"] = len(groups) == 1
            if len(groups) > 1:
                family.append((dim, seg))
    for segs in out.values():
        for g in segs.values():
            g["p_holm"], g["significant"] = None, None
    adj = holm([out[d][s]["p"] for d, s in family], alpha)
    for (d, s), (p_adj, rej) in zip(family, adj, strict=True):
        out[d][s]["p_holm"] = p_adj
        out[d][s]["significant"] = rej
    return out


def impact_by_version(rows: pd.DataFrame) -> dict:
    """Per dimension, each segment's scoring-rate and selection-rate impact ratios under A
    and under B, and the change (B - A). Rows of one version at a time."""
    from rig.stats.rates import scoring_rate_table, selection_rate_table

    out: dict[str, dict] = {}
    for col, dim in DIMENSIONS.items():
        if col not in rows.columns:
            continue
        per: dict[str, dict] = {}
        for label in ("A", "B"):
            r = rows[(rows["version"] == label) & (rows["status"] == "ok")].copy()
            r[col] = r[col].fillna("unknown").astype(str)
            if r.empty or r["score"].notna().sum() == 0:
                continue
            for kind, fn in (("scoring", scoring_rate_table), ("selection",
                                                               selection_rate_table)):
                t = fn(r, [col], min_share=0.0)
                for c in t.by_group:
                    e = per.setdefault(c.category, {})
                    e[f"{kind}_rate_{label.lower()}"] = jsonable(c.rate)
                    e[f"{kind}_impact_ratio_{label.lower()}"] = jsonable(c.impact_ratio)
                    e[f"n_{label.lower()}"] = c.n
        for e in per.values():
            for kind in ("scoring", "selection"):
                a, b = e.get(f"{kind}_impact_ratio_a"), e.get(f"{kind}_impact_ratio_b")
                e[f"{kind}_impact_ratio_change"] = (
                    b - a if isinstance(a, float) and isinstance(b, float)
                    and math.isfinite(a) and math.isfinite(b) else None)
        out[dim] = per
    return out
