"""Repeat-averaged scores per (answer, profile), and what deciding on them needs.

The second and third steps of the paired analysis (:mod:`rig.stats.paired`): parse failures
left out, repeats averaged per (answer, profile) (a repeat that failed to parse is skipped, not
counted as 0), the advance/reject decision on each average, and the (weak, strong) answer
pairs of each question for tier inversions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class AnswerScores:
    """Repeat-averaged scores per (answer, profile) and what is needed to decide on them."""

    mean: pd.DataFrame  # index answer_id, columns profile_id: repeat-averaged score
    n_rep: pd.DataFrame  # same shape: scored repeats averaged (NaN: none)
    advance: pd.DataFrame | None  # same shape: 1.0 advance / 0.0 reject / NaN
    cutoff: pd.Series | None  # answer_id -> cutoff (points), when decided on a cutoff
    decide_reason: str | None
    question: pd.Series | None  # answer_id -> question_id
    tier: pd.Series | None  # answer_id -> tier
    weak_strong: tuple[np.ndarray, np.ndarray] | None  # row positions of (weak, strong) pairs
    calls: pd.DataFrame  # profile_id -> n_calls, n_failed


def answer_scores(calls: pd.DataFrame) -> AnswerScores:
    """Average the scored repeats of every (answer, profile) of checked call rows.

    ``calls``: the rows as :func:`rig.stats.rows.standardise` returns them (``answer_id``,
    ``profile_id``, ``score`` in points, ``failed``; ``cutoff``, ``advance``, ``question_id``
    and ``tier`` when present). Decisions are taken on the averaged score against the
    answer's cutoff (advance when score >= cutoff); without a cutoff column, the rows' own
    decisions are used when each (answer, profile) has one scored repeat, else
    ``decide_reason`` says why there are none.
    """
    scored = calls[~calls["failed"]]
    mean = scored.pivot_table(index="answer_id", columns="profile_id", values="score",
                              aggfunc="mean")
    n_rep = scored.pivot_table(index="answer_id", columns="profile_id", values="score",
                               aggfunc="size").reindex(index=mean.index, columns=mean.columns)
    advance = None
    reason = None
    cut = None
    if "cutoff" in calls.columns and calls["cutoff"].notna().any():
        cutoff = calls.dropna(subset=["cutoff"]).groupby("answer_id")["cutoff"].first()
        cut = cutoff.reindex(mean.index)
        known = mean.notna().to_numpy(dtype=bool) & cut.notna().to_numpy(dtype=bool)[:, None]
        advance = mean.ge(cut, axis=0).astype(float).where(known)
        if cut.isna().any():
            reason = f"answer {cut[cut.isna()].index[0]!r} has no cutoff"
    elif "advance" in calls.columns:
        per = scored.groupby(["answer_id", "profile_id"])["advance"]
        if (per.size() > 1).any():
            reason = ("no cutoff column, and decisions of single repeats cannot be averaged; "
                      "add the cutoff to decide on repeat-averaged scores")
        else:
            advance = per.first().unstack("profile_id").reindex(index=mean.index,
                                                                 columns=mean.columns)
    else:
        reason = "no cutoff column and no decision column"
    question = tier = None
    weak_strong = None
    if "question_id" in calls.columns and "tier" in calls.columns:
        first = calls.groupby("answer_id")[["question_id", "tier"]].first()
        question, tier = first["question_id"], first["tier"]
        q = question.reindex(mean.index).astype(object).to_numpy()
        t = tier.reindex(mean.index).astype(object).to_numpy()
        has_q = pd.notna(q)
        w = np.flatnonzero((t == "weak") & has_q)
        st = np.flatnonzero((t == "strong") & has_q)
        same = q[w][:, None] == q[st][None, :]
        wi, si = np.nonzero(same)
        weak_strong = (w[wi], st[si])
    counts = calls.groupby("profile_id")["failed"].agg(n_calls="size", n_failed="sum")
    if "fail_reason" in calls.columns:  # "2 the interviewer did not hear the answer; 1 ..."
        counts["fail_reasons"] = calls[calls["failed"]].groupby("profile_id")[
            "fail_reason"].agg(lambda s: "; ".join(
                f"{n} {why}" for why, n in s.fillna("no score").value_counts().items()))
    return AnswerScores(mean, n_rep, advance, cut, reason, question, tier, weak_strong,
                         counts)

def most_common_count(counts: np.ndarray) -> int:
    """The most common repeat count (the larger one on a tie)."""
    vals, n = np.unique(counts.astype(int), return_counts=True)
    return int(vals[n == n.max()].max())
