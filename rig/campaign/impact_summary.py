"""The ``impact_ratios`` part of ``summary.json`` (:mod:`rig.campaign.schema_impact`): the
rate tables of :mod:`rig.stats.rates` by ``profile_id``, on answers with their repeats
averaged (as the release gate's impact checks and the flips are), with no small-category
exclusion (every profile is part of the design)."""

from __future__ import annotations

import pandas as pd

from rig.campaign.schema_impact import ImpactProfile, ImpactTable
from rig.stats.parity import answer_decisions
from rig.stats.rates import RateTable, scoring_rate_table, selection_rate_table


def _table(t: RateTable) -> ImpactTable:
    return ImpactTable(kind=t.kind, median=t.median, threshold=t.threshold,
                       reference=t.reference, by_profile={
                           c.category: ImpactProfile(
                               n=c.n, rate=c.rate, impact_ratio=c.impact_ratio,
                               impact_ratio_ci95=c.impact_ratio_ci95, flagged=c.flagged,
                               p_fisher=c.p_fisher, is_reference=c.is_reference,
                               not_computable=dict(c.not_computable))
                           for c in t.by_group})


def impact_ratios(rows: pd.DataFrame, *, n_boot: int, seed: int) -> dict[str, ImpactTable]:
    """``{"scoring": ..., "selection": ...}`` from scored call rows (columns profile_id,
    answer_id, score, cutoff, reference_score); {} with fewer than two profiles.

    Raises:
        KeyError: a required column is missing (:func:`rig.stats.parity.answer_decisions`).
    """
    g = answer_decisions(rows)
    if g["profile_id"].nunique() < 2:
        return {}
    g = g.assign(decision=g["advanced"].map({True: "advance", False: "reject"}))
    kw = {"min_share": 0.0, "n_boot": n_boot, "seed": seed}
    return {"scoring": _table(scoring_rate_table(g, ["profile_id"], "score", **kw)),
            "selection": _table(selection_rate_table(g, ["profile_id"], "decision", **kw))}
