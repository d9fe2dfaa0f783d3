"""A profile's turn-taking and conduct figures (:class:`rig.campaign.schema_taking.
ProfileTurnTaking`) from its call rows' :data:`rig.campaign.row_taking.TAKING_COLUMNS`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rig.campaign.schema_taking import ProfileTurnTaking


def _vals(g: pd.DataFrame, col: str) -> np.ndarray:
    if col not in g:
        return np.zeros(0)
    return g[col].dropna().to_numpy(dtype=float)


def _pct(x: np.ndarray, q: float) -> float | None:
    return round(float(np.percentile(x, q)), 3) if len(x) else None


def _share(x: np.ndarray) -> float | None:
    return float(np.mean(x)) if len(x) else None


def profile_turn_taking(g: pd.DataFrame) -> ProfileTurnTaking | None:
    """The figures over ``g`` (one profile's rows); None when no row has turn-taking columns
    (a simulated campaign, or rows written before them)."""
    if "candidate_turns" not in g or g["candidate_turns"].isna().all():
        return None
    lat = _vals(g, "response_latency_ms")
    turns = int(_vals(g, "candidate_turns").sum())
    over = int(_vals(g, "talked_over_turns").sum())
    stopped = _vals(g, "barge_in_stopped")
    bc = _vals(g, "backchannel_stopped")
    dead = _vals(g, "dead_air_max_s")
    said = g[g["conduct_prohibited"].notna()] if "conduct_prohibited" in g else g.iloc[:0]
    topics: dict[str, int] = {}
    for text in said["conduct_prohibited"]:
        for hit in filter(None, str(text).split("; ")):
            k = hit.split(":", 1)[0]
            topics[k] = topics.get(k, 0) + 1
    acc = _vals(g, "conduct_accommodation_handled")
    return ProfileTurnTaking(
        n_calls=int(g["candidate_turns"].notna().sum()), n_latency=len(lat),
        response_latency_p50_ms=_pct(lat, 50), response_latency_p95_ms=_pct(lat, 95),
        candidate_turns=turns, talked_over_turns=over,
        talk_over_rate=over / turns if turns else None,
        n_barge_ins=len(stopped), barge_in_stopped_rate=_share(stopped),
        barge_in_stop_p50_ms=_pct(_vals(g, "barge_in_stop_ms"), 50),
        n_backchannel_calls=len(bc), backchannel_stopped_rate=_share(bc),
        dead_air_max_s=float(dead.max()) if len(dead) else None,
        dead_air_p50_s=_pct(dead, 50),
        n_conduct_checked=len(said),
        ai_disclosed_rate=_share(_vals(said, "conduct_ai_disclosed")),
        n_prohibited_calls=int((_vals(said, "conduct_prohibited_count") > 0).sum()),
        prohibited_topics=topics, n_accommodation_asked=len(acc),
        accommodation_handled_rate=_share(acc))
