"""A replay against people (issue 29): how well each version's score agrees with human
ratings of the same recorded turns, overall and per measured segment.

A replay changes the pipeline, not the recording, so a person's grade of a turn (``rig ratings
collect`` or ``rig ratings import`` into the replay folder; unit ``call``, id the turn's
``turn_key``) is the reference for **both** versions. The question a team asks before it
ships B: does B's score agree with people at least as well as A's, and where not?

* A turn's **human grade**: the mean over raters of its ratings; ``could_not_hear`` ratings
  left out (and counted).
* Per version: :func:`rig.ratings.agreement.agreement` of ``score_a`` (``score_b``) against
  the human grade over the rated turns that version scored (Spearman, MAE in points, decision
  agreement at the turn's question cutoff, Cohen's kappa), overall and per segment of each
  :data:`rig.replay.segments.DIMENSIONS` dimension.
* ``decision_agreement_diff`` (B - A) over the rated turns both versions scored, with a
  cluster bootstrap 95% CI that resamples whole interviews (``call_id``: turns of one
  interview share a speaker and a line; :mod:`rig.replay.stats`), percentile, seed 0; None
  under :data:`rig.replay.stats.MIN_CLUSTERS_CI` interviews.
* ``b_lower_than_a``: B's Spearman or decision agreement below A's (differential validity:
  where B agrees less with people, B's score moves are partly B's own error); a segment so
  flagged is listed in ``segments_b_lower``.
* ``inter_rater``: the first two raters (by id) against each other on the turns both rated,
  at each turn's cutoff: the ceiling a judge can reach.

The human grades are of the recordings, so they do not differ between versions: a mean
human-scale score per version would be the same number twice, and is not given.
"""

from __future__ import annotations

import pandas as pd

from rig.ratings.agreement import agreement, first_two_raters, ratings_frame
from rig.ratings.model import Rating
from rig.replay.segments import DIMENSIONS
from rig.replay.stats import cluster_bootstrap_ci


def turn_grades(ratings: list[Rating]) -> pd.DataFrame:
    """Per rated turn (``turn_key`` index): ``human`` (mean over raters, points) and
    ``n_raters``; ``could_not_hear`` ratings and answer-script ratings left out."""
    r = ratings_frame(ratings)
    r = r[r["unit_kind"] == "call"].rename(columns={"unit_id": "turn_key"})
    return r.groupby("turn_key").agg(human=("score", "mean"), n_raters=("rater_id", "nunique"))


def _versions(d: pd.DataFrame, seed: int, n_boot: int) -> dict:
    out = {}
    for v in ("a", "b"):
        x = d.assign(score=d[f"score_{v}"], tier="")
        out[v.upper()] = agreement(x[x["score"].notna()], seed=seed, n_boot=n_boot)
    both = [(out["B"][k], out["A"][k]) for k in ("spearman", "decision_agreement")
            if out["A"][k] is not None and out["B"][k] is not None]
    out["b_lower_than_a"] = any(b < a for b, a in both) if both else None
    out["decision_agreement_diff"], out["decision_agreement_diff_ci95"] = _diff(d, seed,
                                                                                n_boot)
    return out


def _diff(d: pd.DataFrame, seed: int, n_boot: int
          ) -> tuple[float | None, list[float] | None]:
    """(B's decision agreement - A's, its cluster bootstrap CI) over turns both scored."""
    p = d[d["score_a"].notna() & d["score_b"].notna()]
    if p.empty:
        return None, None
    h = p["human"] >= p["cutoff"]
    p = p.assign(agree_diff=((p["score_b"] >= p["cutoff"]) == h).astype(float)
                 - ((p["score_a"] >= p["cutoff"]) == h).astype(float))
    return (float(p["agree_diff"].mean()),
            cluster_bootstrap_ci(p, "agree_diff", n_boot=n_boot, seed=seed))


def _inter_rater(pairs: pd.DataFrame, ratings: list[Rating], seed: int, n_boot: int
                 ) -> dict | None:
    twice = first_two_raters(ratings_frame(ratings))
    if twice is None:
        return None
    a, b, both = twice
    both = both[both["unit_kind"] == "call"]
    info = pairs.drop_duplicates("turn_key").set_index("turn_key")
    both = both[both["unit_id"].isin(info.index)]
    if both.empty:
        return None
    keys = both["unit_id"]
    d = pd.DataFrame({"rater_a": both[a].to_numpy(), "rater_b": both[b].to_numpy(),
                      "question_id": info.loc[keys, "question_id"].to_numpy(),
                      "cutoff": info.loc[keys, "cutoff"].to_numpy(), "tier": ""})
    return {"raters": [a, b], **agreement(d, "rater_b", "rater_a", seed, n_boot)}


def replay_human_ratings(pairs: pd.DataFrame, ratings: list[Rating], *, seed: int = 0,
                         n_boot: int = 2000) -> dict | None:
    """The ``human_ratings`` part of a replay's summary.json (see the module), or None when
    no turn of ``pairs`` (:func:`rig.replay.stats.pair_rows`) has a rating.

    ``pairs`` needs ``turn_key``, ``call_id``, ``question_id``, ``cutoff``, ``score_a``,
    ``score_b`` and the segment columns present; scores and grades are points (0-100)."""
    grades = turn_grades(ratings)
    if grades.empty:
        return None
    d = pairs.join(grades, on="turn_key", how="inner")
    if d.empty:
        return None
    segments: dict[str, dict] = {}
    lower: list[str] = []
    for col, dim in DIMENSIONS.items():
        if col not in d.columns:
            continue
        segments[dim] = {}
        for seg, grp in d.groupby(d[col].fillna("unknown").astype(str), sort=True):
            segments[dim][seg] = _versions(grp, seed, n_boot)
            if segments[dim][seg]["b_lower_than_a"]:
                lower.append(f"{dim}={seg}")
    return {"n_ratings": len(ratings), "n_raters": len({r.rater_id for r in ratings}),
            "n_turns_rated": len(d), "n_could_not_hear": sum(r.could_not_hear
                                                             for r in ratings),
            "overall": _versions(d, seed, n_boot),
            "inter_rater": _inter_rater(pairs, ratings, seed, n_boot),
            "segments": segments, "segments_b_lower": lower, "source": "ratings.jsonl"}


def people_html(summary: dict) -> str:
    """The report's "Against people" section: each version's agreement with the human
    grades, overall and per segment ("" without ``human_ratings``)."""
    import html

    from rig.report.pages import fmt

    hr = summary.get("human_ratings")
    if not hr:
        return ""
    esc = html.escape

    def row(label: str, seg: str, g: dict) -> str:
        a, b = g["A"], g["B"]
        flag = " (B agrees less)" if g["b_lower_than_a"] else ""
        return (f"<tr><th scope='row'>{esc(label)}</th><td>{esc(seg)}</td>"
                f"<td>{a['n_units']}</td><td>{fmt(a['spearman'])}</td>"
                f"<td>{fmt(b['spearman'])}</td><td>{fmt(a['decision_agreement'])}</td>"
                f"<td>{fmt(b['decision_agreement'])}</td>"
                f"<td>{fmt(g['decision_agreement_diff'])}{flag}</td>"
                f"<td>{fmt(g['decision_agreement_diff_ci95'])}</td>"
                f"<td>{fmt(a['mae_points'], 1)}</td><td>{fmt(b['mae_points'], 1)}</td></tr>")
    rows = [row("all turns", "", hr["overall"])]
    rows += [row(dim, seg, g) for dim, segs in hr["segments"].items() for seg, g in segs.items()]
    head = "".join(f"<th scope='col'>{h}</th>" for h in (
        "dimension", "segment", "rated turns", "Spearman A", "Spearman B",
        "decision agreement A", "decision agreement B", "B - A", "95% CI (by interview)",
        "MAE A (points)", "MAE B (points)"))
    ir = hr.get("inter_rater")
    ceiling = (f"Inter-rater ceiling ({esc(' vs '.join(ir['raters']))}, {ir['n_units']} turns):"
               f" decision agreement {fmt(ir['decision_agreement'])}, Spearman "
               f"{fmt(ir['spearman'])}." if ir else "No turn was rated by two raters: no "
               "inter-rater ceiling.")
    lower = (f"B agrees less with people than A in: {esc(', '.join(hr['segments_b_lower']))}."
             if hr["segments_b_lower"] else "B agrees with people at least as well as A in "
             "every segment.")
    return (f"<h2>Against people ({hr['n_turns_rated']} rated turns, {hr['n_raters']} "
            f"raters)</h2><p class='note'>{lower} {ceiling} Ratings flagged could-not-hear: "
            f"{hr['n_could_not_hear']}.</p><div class='table-wrap' tabindex='0'><table>"
            "<caption>Each version's score against the human grade of the same turn</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>" + "".join(rows) + "</tbody></table></div>")
