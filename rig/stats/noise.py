"""The noise floor: how much the same call moves between identical repeats under the baseline.

MEASUREMENT.md, "Noise floor": the spread of scores between repeats of the same call under the
baseline (standard deviation of repeat differences) and the flip rate between identical
repeats. A profile effect smaller than the noise floor is not evidence of anything.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rig.stats.common import jsonable
from rig.stats.rows import RowsError, source_of, standardise


@dataclass(frozen=True)
class NoiseFloor:
    """Repeat-to-repeat noise of one profile (normally the baseline).

    Fields (scores in points of the 0-100 scale, rates in [0, 1]):
        profile_id: the profile measured.
        n_answers: answers with at least two scored repeats (the ones that count).
        n_repeat_pairs: pairs of repeats of the same answer, sum of k(k-1)/2.
        repeat_sd: pooled within-answer standard deviation of one run's score,
            sqrt(sum over answers of sum (x - mean)^2 / sum (k - 1)) (one-way ANOVA
            within-group mean square; Fisher 1925).
        sd_repeat_diff: standard deviation of the difference between two repeats of the same
            answer, sqrt(2) * repeat_sd; with two repeats it is the root mean square of the
            differences. **This is the noise floor for a mean delta.**
        flip_rate: share of repeat pairs whose single-run decisions (score >= cutoff, or the
            ``decision`` column when there is no cutoff) differ; None when neither exists.
            Pairs within an answer are not independent when k > 2, so no interval is given.
        n_flips: repeat pairs whose decisions differ.
        not_computable: field -> reason for every None.
    """

    profile_id: str
    n_answers: int
    n_repeat_pairs: int
    repeat_sd: float | None
    sd_repeat_diff: float | None
    flip_rate: float | None
    n_flips: int
    not_computable: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-able values; None for a figure that is not computable."""
        return {"profile_id": self.profile_id, "n_answers": self.n_answers,
                "n_repeat_pairs": self.n_repeat_pairs, "repeat_sd": jsonable(self.repeat_sd),
                "sd_repeat_diff": jsonable(self.sd_repeat_diff),
                "flip_rate": jsonable(self.flip_rate), "n_flips": self.n_flips,
                "not_computable": dict(self.not_computable)}


def noise_floor_from(calls: pd.DataFrame, profile: str = "baseline") -> NoiseFloor:
    """:func:`noise_floor` on rows already passed through :func:`~rig.stats.rows.standardise`."""
    why: dict[str, str] = {}
    mine = calls[(calls["profile_id"] == profile) & ~calls["failed"]]
    sizes = mine.groupby("answer_id")["score"].transform("size")
    multi = mine[sizes >= 2]
    if multi.empty:
        reason = (f"profile {profile!r} has no answer with two or more scored repeats; "
                  "run the campaign with --repeats 2 or more")
        return NoiseFloor(profile, 0, 0, None, None, None, 0,
                          {"repeat_sd": reason, "sd_repeat_diff": reason, "flip_rate": reason})
    grouped = multi.groupby("answer_id")["score"]
    k = grouped.size()
    ss_within = float((multi["score"] - grouped.transform("mean")).pow(2).sum())
    df_within = int((k - 1).sum())
    repeat_sd = math.sqrt(ss_within / df_within)
    n_pairs = int((k * (k - 1) // 2).sum())
    flip_rate: float | None = None
    n_flips = 0
    if "cutoff" in multi.columns and multi["cutoff"].notna().all():
        adv = (multi["score"] >= multi["cutoff"]).astype(float)
    elif "advance" in multi.columns and multi["advance"].notna().all():
        adv = multi["advance"]
    else:
        adv = None
        why["flip_rate"] = "no cutoff column (and no complete decision column) to decide on"
    if adv is not None:
        a = adv.groupby(multi["answer_id"]).sum()
        n_flips = int(np.round((a * (k - a)).sum()))
        flip_rate = n_flips / n_pairs
    return NoiseFloor(profile, int(k.size), n_pairs, repeat_sd, math.sqrt(2.0) * repeat_sd,
                      flip_rate, n_flips, why)


def noise_floor(rows: pd.DataFrame, baseline: str = "baseline",
                score_col: str = "score") -> NoiseFloor:
    """Noise floor of ``baseline``: repeat-run SD, SD of repeat differences, repeat flip rate.

    Parse failures are left out; an answer needs two scored repeats to count. See
    :class:`NoiseFloor` for each figure's definition and units.

    Raises:
        RowsError: a required column is missing or malformed, or no row has profile
            ``baseline``.
    """
    calls = standardise(rows, score_col)
    if not (calls["profile_id"] == baseline).any():
        raise RowsError(source_of(rows), "profile_id", "no row has the baseline profile; "
                        f"profiles are {sorted(calls['profile_id'].unique())}", baseline,
                        has_value=True)
    return noise_floor_from(calls, baseline)
