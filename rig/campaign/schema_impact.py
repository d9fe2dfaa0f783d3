"""The impact-ratio part of a campaign's ``summary.json`` (``impact_ratios``, schema 1.8):
per profile, the LL144 scoring rate and the selection rate on repeat-averaged answers, each
profile's ratio to the highest profile's rate, the four-fifths flag and a bootstrap 95% CI of
the ratio (:mod:`rig.stats.rates`, :mod:`rig.stats.ratio_ci`; docs/measurement.md, "Scoring
rate and impact ratio", "Selection rate and the four-fifths rule")."""

from __future__ import annotations

from typing import Literal

from rig.campaign.schema_base import _f, _Part

Interval = tuple[float, float]


class ImpactProfile(_Part):
    """One profile's rate and impact ratio."""

    n: int = _f("answers (repeats averaged) with a score", ge=0)
    rate: float | None = _f("scoring: share strictly above the median of all answers' "
                            "scores; selection: share advanced")
    impact_ratio: float | None = _f("rate / the highest profile's rate (null when that is 0)")
    impact_ratio_ci95: Interval | None = _f(
        "percentile bootstrap 95% CI of impact_ratio (the two profiles' answers resampled "
        "apart; the reference and the median held fixed); null for the reference profile")
    flagged: bool | None = _f("impact_ratio below the threshold (a screen, with p_fisher)")
    p_fisher: float | None = _f("Fisher's exact test against the reference profile")
    is_reference: bool = _f("the profile with the highest rate")
    not_computable: dict[str, str] = _f("field -> reason, for every null figure")


class ImpactTable(_Part):
    """Rates and impact ratios by profile of one kind."""

    kind: Literal["scoring", "selection"] = _f("LL144 scoring rate, or selection rate")
    median: float | None = _f("points: the median score that defines a hit (scoring only)")
    threshold: float = _f("the four-fifths threshold")
    reference: str | None = _f("the profile with the highest rate")
    by_profile: dict[str, ImpactProfile] = _f("profile id -> its figures")
