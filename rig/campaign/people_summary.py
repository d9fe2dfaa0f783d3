"""The parts of ``summary.json`` that hold the pipeline against people and the truth:
``error_parity`` (every graded campaign: against the bank's reference grades,
:mod:`rig.stats.parity`) and ``human_ratings`` (with ``ratings.jsonl``:
:mod:`rig.ratings.agreement`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from rig.campaign.impact_summary import impact_ratios
from rig.campaign.schema_ratings import HumanRatings, ProfileParity
from rig.ratings.agreement import human_ratings_block
from rig.stats.parity import error_parity

if TYPE_CHECKING:
    from rig.ratings.model import Rating


def _finite(v: object) -> object:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_finite(x) for x in v)
    return v


def people_fields(rows: pd.DataFrame, ratings: list[Rating] | None, *, baseline: str,
                  n_boot: int, seed: int) -> dict:
    """``{"error_parity": ..., "impact_ratios": ..., "human_ratings": ...}`` for
    :class:`~rig.campaign.schema.CampaignSummary`; a key is left out when its figures cannot
    be made (no scored call with a reference grade; under two profiles; no ratings)."""
    out: dict = {}
    if rows.empty or not {"score", "cutoff", "reference_score"} <= set(rows.columns):
        return out
    scored = rows
    if "status" in rows.columns:
        scored = rows[(rows["status"] == "ok")
                      & (rows.get("parse_status", "ok") == "ok")]
    if scored["score"].notna().any():
        par = error_parity(scored, baseline=baseline, n_boot=n_boot, seed=seed)
        out["error_parity"] = {p: ProfileParity(**_finite(v)) for p, v in par.items()}
        imp = impact_ratios(scored, n_boot=n_boot, seed=seed)
        if imp:
            out["impact_ratios"] = imp
    if ratings:
        out["human_ratings"] = HumanRatings(**_finite(human_ratings_block(
            scored, ratings, baseline=baseline, seed=seed, n_boot=n_boot)))
    return out
