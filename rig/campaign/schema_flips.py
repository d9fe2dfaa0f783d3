"""A profile's flips by direction: toward or away from the reference decision
(``summary.json``'s ``profiles.<id>.flip_direction``; :mod:`rig.stats.flip_direction`;
docs/measurement.md, "Flip direction")."""

from __future__ import annotations

from typing import Literal

from rig.campaign.schema_base import _f, _Part

Decision = Literal["advance", "reject"]


class FlipRecord(_Part):
    """One flipped pair."""

    answer_id: str = _f("the answer")
    baseline_decision: Decision = _f("decision on the baseline's repeat-averaged score")
    profile_decision: Decision = _f("decision on the profile's repeat-averaged score")
    reference_decision: Decision | None = _f("decision on the reference grade (bank's "
                                             "reference_score >= cutoff); null when unknown")
    direction: Literal["toward", "away", "none"] = _f(
        "away: the baseline matched the reference decision and the profile does not; toward: "
        "the profile matches it and the baseline did not; none: no reference decision")


class ProfileFlipDirection(_Part):
    """Flips toward and away from the reference decision, counted apart (away + toward +
    no_reference = n_flips; rates over n_pairs, Wilson 95% CIs)."""

    n_pairs: int = _f("pairs with a decision under both profiles", ge=0)
    n_flips: int = _f("pairs whose decision differs", ge=0)
    n_away: int = _f("flips away from the reference decision", ge=0)
    n_toward: int = _f("flips toward the reference decision", ge=0)
    n_no_reference: int = _f("flips on answers without a reference decision", ge=0)
    n_away_qualified_rejected: int = _f("flips away whose reference decision is advance: a "
                                        "qualified candidate rejected", ge=0)
    n_away_unqualified_advanced: int = _f("flips away whose reference decision is reject: an "
                                          "unqualified candidate advanced", ge=0)
    away_rate: float | None = _f("n_away / n_pairs; null without pairs")
    away_ci95: tuple[float, float] | None = _f("Wilson 95% interval of away_rate")
    toward_rate: float | None = _f("n_toward / n_pairs; null without pairs")
    toward_ci95: tuple[float, float] | None = _f("Wilson 95% interval of toward_rate")
    flips: list[FlipRecord] = _f("every flip, in answer order")
