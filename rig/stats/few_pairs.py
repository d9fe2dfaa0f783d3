"""Too few pairs for an interval worth reading: below :data:`MIN_PAIRS` a profile's 95%
interval (a t interval on 1-3 degrees of freedom spans hundreds of points on a 0-100 scale)
is replaced in the verdict and on the console by the number of pairs needed, from the
sample-size planner (:func:`rig.stats.sample_size.paired_sample_size`, its t solution, at the
observed SD of the paired deltas). summary.json keeps the statistics unchanged."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rig.campaign.schema import ProfileSummary

#: fewer pairs than this: no interval is quoted (with 5 pairs the t multiplier is 2.78)
MIN_PAIRS = 5
#: the change the pairs-needed figure is sized to see (points, 0-100 scale)
CHANGE_POINTS = 5.0


def too_few_pairs(profile: ProfileSummary) -> bool:
    """Whether ``profile`` (a summary.json profile) has pairs, but fewer than :data:`MIN_PAIRS`."""
    return 0 < profile.n_pairs < MIN_PAIRS


def pairs_needed(sd_delta: float | None, change: float = CHANGE_POINTS) -> int | None:
    """Pairs to see a ``change``-point mean delta at 80% power, alpha 0.05, at ``sd_delta``
    (points); None when the SD is not a positive number."""
    from rig.stats.sample_size import paired_sample_size

    if sd_delta is None or not math.isfinite(sd_delta) or sd_delta <= 0:
        return None
    return max(MIN_PAIRS, paired_sample_size(sd_delta, change).n_answers_t)


def few_pairs_text(profile: ProfileSummary) -> str:
    """``"too few pairs (2) for an interval; about 64 are needed to see a 5-point change"``."""
    n = profile.n_pairs
    need = pairs_needed(profile.sd_delta)
    head = f"too few pairs ({n}) for an interval"
    if need is None:
        return f"{head}; at least {MIN_PAIRS} are needed"
    return (f"{head}; about {need} are needed to see a {CHANGE_POINTS:.0f}-point change "
            f"(at this SD of the deltas, {profile.sd_delta:.1f} points)")
