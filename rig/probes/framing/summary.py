"""The summary of a dual-framing run from its rows (pure, so ``rig probe summarize`` can
rewrite it): per topic and over all topics, each frame and both pooled, the one-sample test of
the aligned scores against 0 (:func:`~rig.stats.comparisons.one_sample`), the neutrality rate
and the framing asymmetry."""

from __future__ import annotations

import pandas as pd

from rig.probes.framing.topics import FRAMES, STANCE_SCORE, STANCE_TEXT, STANCES
from rig.stats.common import jsonable
from rig.stats.comparisons import one_sample


def frame_stats(rows: pd.DataFrame) -> dict:
    """Per frame (and ``both``): n asked and scored, failures, stance counts, the one-sample
    test of the aligned scores, the neutrality rate; the framing asymmetry and the
    :func:`statement_pairs` counts."""
    out: dict = {}
    for frame in (*FRAMES, "both"):
        r = rows if frame == "both" else rows[rows["frame"] == frame]
        ok = r[r["parse_status"] == "ok"]
        counts = {s: int((ok["stance"] == s).sum()) for s in STANCES}
        d = {"n_asked": len(r), "n_scored": len(ok), "n_failures": len(r) - len(ok),
             "stances": counts, "one_sample": one_sample(ok["aligned_score"].to_numpy(
                 dtype=float)).to_dict(),
             "neutrality_rate": counts["neutral"] / len(ok) if len(ok) else None}
        if not len(ok):
            d["not_computable"] = {"neutrality_rate": "no scored reply"}
        out[frame] = d
    ma = out["affirmative"]["one_sample"]["mean"]
    mr = out["reverse"]["one_sample"]["mean"]
    out["asymmetry"] = ma - mr if ma is not None and mr is not None else None
    if out["asymmetry"] is None:
        out["not_computable"] = {"asymmetry": "a frame has no scored reply"}
    out["statement_pairs"] = statement_pairs(rows)
    return out


def statement_pairs(rows: pd.DataFrame) -> dict:
    """The statement pairs (a statement in one iteration, both frames scored) by what the
    scorer did with the two wordings: ``n`` pairs; ``n_same_stance`` with the same aligned
    score in both frames (its stance does not depend on the wording); ``n_agree_both`` and
    ``n_disagree_both`` agreeing (score > 0) or disagreeing (score < 0) with both wordings
    (it follows the wording). The asymmetry is their mean difference, so +4 and -4 pairs
    cancel: these counts tell that apart from a stance that holds across the frames."""
    ok = rows[rows["parse_status"] == "ok"]
    key = ["topic", "statement_index", "iteration"]
    both = (ok[ok["frame"] == "affirmative"].set_index(key)[["score", "aligned_score"]]
            .join(ok[ok["frame"] == "reverse"].set_index(key)[["score", "aligned_score"]],
                  lsuffix="_a", rsuffix="_r", how="inner"))
    return {"n": len(both),
            "n_same_stance": int((both["aligned_score_a"] == both["aligned_score_r"]).sum()),
            "n_agree_both": int(((both["score_a"] > 0) & (both["score_r"] > 0)).sum()),
            "n_disagree_both": int(((both["score_a"] < 0) & (both["score_r"] < 0)).sum())}


def summarize(rows: pd.DataFrame, meta: dict) -> dict:
    """The summary of a run from its rows (pure)."""
    summary = {k: meta[k] for k in ("probe", "scorer", "judge", "prompt_version",
                                    "iterations", "seed", "options")}
    summary["language"] = meta.get("language", "en")
    summary["topics"] = {t["id"]: {"title": t["title"], "a": t["a"], "b": t["b"],
                                   "statements": t["statements"]} for t in meta["topics"]}
    summary.update({
        "n_asks": len(rows),
        "n_failures": int((rows["parse_status"] != "ok").sum()) if len(rows) else 0,
        "n_judged": int((rows["normalised_by"] == "judge").sum()) if len(rows) else 0,
        "scale": {STANCE_TEXT[s]: v for s, v in STANCE_SCORE.items()},
        "alignment": "aligned score = score in the affirmative frame, -score in the reverse "
                     "frame: positive favours target a",
        "asymmetry": "mean aligned score (affirmative) - mean aligned score (reverse)",
        "statement_pairs": "a statement in one iteration with both frames scored: "
                           "n_same_stance = same aligned score in both frames; "
                           "n_agree_both / n_disagree_both = agreed / disagreed with both "
                           "wordings (followed the wording)",
        "by_topic": {}, "overall": frame_stats(rows) if len(rows) else {},
    })
    for tid in summary["topics"]:
        r = rows[rows["topic"] == tid] if len(rows) else rows
        if len(r):
            summary["by_topic"][tid] = frame_stats(r)
    failed = rows[rows["parse_status"] != "ok"] if len(rows) else rows
    summary["failures"] = [{"topic": f["topic"], "frame": f["frame"],
                            "iteration": int(f["iteration"]), "parse_status": f["parse_status"],
                            "raw": f["raw"], "error": f["error"]}
                           for _, f in failed.iterrows()]
    return jsonable(summary)  # type: ignore[return-value]
