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
    test of the aligned scores, the neutrality rate; and the framing asymmetry."""
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
    return out


def summarize(rows: pd.DataFrame, meta: dict) -> dict:
    """The summary of a run from its rows (pure)."""
    summary = {k: meta[k] for k in ("probe", "scorer", "judge", "prompt_version",
                                    "iterations", "seed", "options")}
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
