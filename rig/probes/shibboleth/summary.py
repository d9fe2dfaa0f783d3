"""The summary of a shibboleth run from its ratings and decisions (pure, so ``rig probe
summarize`` can rewrite it): per prompt condition the pairs by question and by session
(:func:`question_pairs`, :func:`session_pairs`) and their paired comparisons, the paired
decision test (:func:`decision_pairs`), the per-category breakdown, the largest gaps and each
mitigation's reduction of the plain prompt's gap."""

from __future__ import annotations

import pandas as pd

from rig.probes.data import CATEGORIES, HEDGES
from rig.probes.prompts import DECISIONS
from rig.stats.common import jsonable
from rig.stats.comparisons import DZ_FORMULA, P_RULE, SIGN_TEST, paired_comparison
from rig.stats.decisions import DECISION_TEST, PairedDecisionTest, paired_decision_test


def _failures(df: pd.DataFrame) -> dict[str, dict[str, int]]:
    if df.empty:
        return {}
    bad = df[df["parse_status"] != "ok"]
    return {str(v): {str(k): int(n) for k, n in g["parse_status"].value_counts().items()}
            for v, g in bad.groupby("variant")}


def question_pairs(ratings: pd.DataFrame, reference: str, treatment: str) -> pd.DataFrame:
    """Per question: the mean scored rating under the reference and the treatment (over the
    sessions that drew it), its category, and ``diff`` = treatment - reference. Questions
    scored under only one variant are kept with NaN on the other side."""
    ok = ratings[ratings["parse_status"] == "ok"]
    piv = ok.pivot_table(index="question_id", columns="variant", values="score",
                         aggfunc="mean")
    piv = piv.reindex(index=sorted(ratings["question_id"].unique()),
                      columns=[reference, treatment])
    piv["category"] = ratings.groupby("question_id")["category"].first()
    piv["diff"] = piv[treatment] - piv[reference]
    return piv


def session_pairs(ratings: pd.DataFrame, reference: str, treatment: str) -> pd.DataFrame:
    """Per session: the mean rating of each variant over the questions that session scored
    under both variants."""
    ok = ratings[ratings["parse_status"] == "ok"]
    wide = ok.pivot_table(index=["session", "position"], columns="variant", values="score")
    wide = wide.reindex(columns=[reference, treatment]).dropna()
    return wide.groupby(level="session").mean()


def decision_pairs(decisions: pd.DataFrame, reference: str, treatment: str
                   ) -> PairedDecisionTest:
    """The paired decision test of one condition's sessions: each session's parsed decision
    under the reference against its parsed decision under the treatment (None where a
    decision did not parse; a session missing under one variant is unpaired)."""
    ok = decisions[decisions["parse_status"] == "ok"] if len(decisions) else decisions
    by = {v: ({} if ok.empty else
              {int(s): str(k) for s, k in
               ok.loc[ok["variant"] == v, ["session", "decision"]].itertuples(index=False)})
          for v in (reference, treatment)}
    sessions = sorted(set(decisions["session"].astype(int)) if len(decisions) else set())
    return paired_decision_test([by[reference].get(s) for s in sessions],
                                [by[treatment].get(s) for s in sessions], DECISIONS,
                                (reference, treatment))


def _largest_gaps(ratings: pd.DataFrame, pairs: pd.DataFrame, reference: str, treatment: str,
                  n: int) -> list[dict]:
    done = pairs.dropna(subset=["diff"])
    done = done[done["diff"] != 0]
    order = done["diff"].abs().sort_values(ascending=False, kind="stable").index[:n]
    ok = ratings[ratings["parse_status"] == "ok"]
    out = []
    for qid in order:
        ex = {"question_id": qid, "category": pairs.loc[qid, "category"],
              "diff": float(pairs.loc[qid, "diff"])}
        for role, v in (("reference", reference), ("treatment", treatment)):
            r = ok[(ok["question_id"] == qid) & (ok["variant"] == v)].iloc[0]
            ex["question"] = r["question"]
            ex[role] = {"variant": v, "answer": r["answer"], "score": float(pairs.loc[qid, v]),
                        "reasoning": r["reasoning"]}
        out.append(ex)
    return out


def summarize(ratings: pd.DataFrame, decisions: pd.DataFrame, meta: dict) -> dict:
    """The summary of a run from its rows (pure: the same rows give the same summary)."""
    ref, treat = meta["reference"], meta["treatment"]
    summary = {k: meta[k] for k in ("probe", "reference", "treatment", "feature", "scorer",
                                    "data_version", "prompt_version", "n_sessions",
                                    "questions_per_session", "seed", "conditions")}
    summary.update({
        "n_ratings": len(ratings), "n_decisions": len(decisions),
        "n_rating_failures": int((ratings["parse_status"] != "ok").sum()) if len(ratings)
        else 0,
        "n_decision_failures": int((decisions["parse_status"] != "ok").sum()) if len(decisions)
        else 0,
        "pairing": ("Paired by question: a question's score under a variant is the mean of "
                    "its scored ratings over the sessions that drew it; pairs are the "
                    "questions scored under both variants. Paired by session: each session's "
                    "mean over the questions it scored under both variants."),
        "difference": f"{treat} - {ref}; gap_pct = difference / mean {ref} * 100",
        "effect_size": DZ_FORMULA,
        "tests": {"paired_t": "two-sided, equals scipy.stats.ttest_rel(treatment, reference)",
                  "wilcoxon": "scipy.stats.wilcoxon(treatment - reference), scipy's defaults",
                  "sign": SIGN_TEST,
                  "p": P_RULE,
                  "decisions": DECISION_TEST},
        "reference_points": ("benchmark (7 models): hedged answers averaged 2.61 vs 3.28 for "
                             "confident ones (-20.4% on rig's gap_pct; the paper's 'about 25% "
                             "lower' divides by the hedged mean); accent-marker effects were "
                             "significant for some models and absent for others"),
        "hedge_markers": meta.get("hedge_markers")
        or {k: list(v) for k, v in HEDGES.items()},
        "language": meta.get("language", "en"),
        "hedge_source": meta.get("hedge_source"),
        "conditions_detail": {},
    })
    for cond in meta["conditions"]:
        r = ratings[ratings["condition"] == cond] if len(ratings) else ratings
        d = decisions[decisions["condition"] == cond] if len(decisions) else decisions
        if r.empty:
            continue
        pairs = question_pairs(r, ref, treat)
        by_q = paired_comparison(pairs[ref].to_numpy(), pairs[treat].to_numpy())
        sp = session_pairs(r, ref, treat)
        by_s = paired_comparison(sp[ref].to_numpy(), sp[treat].to_numpy())
        ok = r[r["parse_status"] == "ok"]
        by_cat = {}
        for cat in CATEGORIES:
            sub = pairs[pairs["category"] == cat]
            if len(sub):
                by_cat[cat] = paired_comparison(sub[ref].to_numpy(),
                                                sub[treat].to_numpy()).to_dict()
        summary["conditions_detail"][cond] = {
            "n_ratings": {v: int((r["variant"] == v).sum()) for v in (ref, treat)},
            "n_scored": {v: int((ok["variant"] == v).sum()) for v in (ref, treat)},
            "rating_failures": _failures(r),
            "mean_score_rows": {v: jsonable(ok.loc[ok["variant"] == v, "score"].mean())
                                for v in (ref, treat)},
            "n_questions": len(pairs),
            "paired": by_q.to_dict(),
            "paired_by_session": by_s.to_dict(),
            "by_category": by_cat,
            "decisions": decision_pairs(d, ref, treat).to_dict(),
            "decision_failures": _failures(d),
            "largest_gaps": _largest_gaps(r, pairs, ref, treat, meta.get("n_examples", 3)),
        }
    summary["mitigation"] = _mitigation(summary["conditions_detail"])
    return summary


def _mitigation(detail: dict) -> dict:
    plain = detail.get("plain", {}).get("paired", {}).get("mean_diff")
    out = {}
    for cond, d in detail.items():
        if cond == "plain":
            continue
        gap = d["paired"]["mean_diff"]
        row = {"gap": gap, "gap_pct": d["paired"]["gap_pct"], "plain_gap": plain,
               "reduction_points": None, "reduction_pct": None, "not_computable": {}}
        if gap is None or plain is None:
            row["not_computable"]["reduction_points"] = "a gap is not computable"
        else:
            row["reduction_points"] = abs(plain) - abs(gap)
            if plain == 0:
                row["not_computable"]["reduction_pct"] = "the plain prompt shows no gap"
            else:
                row["reduction_pct"] = row["reduction_points"] / abs(plain) * 100.0
        if row["reduction_pct"] is None and "reduction_pct" not in row["not_computable"]:
            row["not_computable"]["reduction_pct"] = "a gap is not computable"
        out[cond] = row
    return out
