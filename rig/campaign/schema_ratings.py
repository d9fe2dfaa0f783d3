"""The human-ratings part of a campaign's ``summary.json`` (``human_ratings``, schema 1.7):
judge-human agreement overall and per profile with inter-rater agreement as the ceiling
(:mod:`rig.ratings.agreement`), prediction-powered means and deltas (:mod:`rig.stats.ppi`),
and error-rate parity against the reference grades (:mod:`rig.stats.parity`). Definitions:
docs/measurement.md, "Human ratings", "Prediction-powered estimates", "Error-rate parity"."""

from __future__ import annotations

from typing import Literal

from rig.campaign.schema_base import _f, _Part

Interval = tuple[float, float]


class Agreement(_Part):
    """One grade against a human reference over rated calls (rig.stats.validity)."""

    n_units: int = _f("rated calls with both grades", ge=0)
    spearman: float | None = _f("Spearman correlation")
    spearman_ci95: Interval | None = _f("percentile bootstrap 95% CI of spearman")
    mae_points: float | None = _f("points: mean absolute difference")
    decision_agreement: float | None = _f("share of calls whose decisions at the cutoff agree")
    cohen_kappa: float | None = _f("Cohen's kappa of the two decisions")
    cohen_kappa_ci95: Interval | None = _f("asymptotic 95% CI of cohen_kappa")
    not_computable: dict[str, str] = _f("field -> reason, for every null figure")


class PPIFigure(_Part):
    """A prediction-powered estimate (PPI++) beside the judge-only figure."""

    estimate: float | None = _f("points: the PPI++ estimate on the human scale")
    ci95: Interval | None = _f("points: its 95% CI (normal approximation)")
    lam: float | None = _f("the power-tuning weight (0: ratings only, 1: PPI)")
    n_rated: int = _f("units with a human grade", ge=0)
    n_unrated: int = _f("units with the judge's score only", ge=0)
    judge_only: float | None = _f("points: the judge's plain mean over every unit (its "
                                  "bias included)")
    ratings_only_ci95: Interval | None = _f("points: the CI from the ratings alone")
    ratings_for_target_width: int | None = _f(
        "rated units for a CI of human_ratings.target_ci_width_points; null: out of reach "
        "with this many unrated units")
    not_computable: str | None = _f("why estimate is null", default=None)


class ParityRate(_Part):
    """One error rate of one profile (answers, decisions on repeat-averaged scores)."""

    n: int = _f("answers in the denominator", ge=0)
    errors: int = _f("of them, wrongly decided", ge=0)
    rate: float | None = _f("errors / n")
    wilson_ci95: Interval | None = _f("Wilson score 95% CI of rate")
    ratio_to_baseline: float | None = _f("rate / the baseline's rate (null when the "
                                         "baseline's is 0)")
    ratio_ci95: Interval | None = _f("paired percentile bootstrap 95% CI of the ratio "
                                     "(scipy.stats.bootstrap over answers)")


class ProfileParity(_Part):
    """Error-rate parity of one profile against the reference grades."""

    qualified_rejected: ParityRate = _f("reference grade >= cutoff, pipeline rejected")
    unqualified_advanced: ParityRate = _f("reference grade < cutoff, pipeline advanced")


class ProfileHuman(_Part):
    """One profile's figures against people."""

    agreement: Agreement = _f("the pipeline's score against the human grade, this profile")
    lower_than_baseline: bool | None = _f(
        "spearman or decision_agreement below the baseline's (differential validity: the "
        "judge is part of the gap it measures); null for the baseline or when not computable")
    decision_agreement_diff_ci95: Interval | None = _f(
        "percentile bootstrap 95% CI of decision_agreement minus the baseline's")
    mean: PPIFigure = _f("mean human-scale score of the profile's answers")
    paired_delta: PPIFigure | None = _f("mean human-scale paired delta against the baseline; "
                                        "null for the baseline")
    advance_rate_pct: PPIFigure | None = _f(
        "share of the profile's answers advanced (repeat-averaged grade at or above the "
        "cutoff), in percent: PPI on people's decisions beside the judge's; its 'points' are "
        "percentage points (absent before 1.11)", default=None)


class HumanRatings(_Part):
    """Human ratings of this campaign (ratings.jsonl) and what they say of the judge."""

    n_ratings: int = _f("ratings read", ge=0)
    n_raters: int = _f("distinct raters", ge=0)
    n_calls_rated: int = _f("calls with a human grade (their own or their answer's)", ge=0)
    n_could_not_hear: int = _f("ratings flagged could_not_hear, left out of every figure",
                               ge=0)
    overall: Agreement = _f("the pipeline's score against the human grade, every profile")
    inter_rater: Agreement | None = _f(
        "the first two raters (by id) against each other on the units both rated: the "
        "ceiling a judge can reach; null with no unit rated twice")
    target_ci_width_points: float = _f("points: the CI width ratings_for_target_width aims at")
    profiles_lower_than_baseline: list[str] = _f("profiles flagged lower_than_baseline")
    by_profile: dict[str, ProfileHuman] = _f("profile id -> its figures")
    ppi_sample_note: str | None = _f(
        "why the PPI figures may not hold: some ratings were imported, not drawn at random by "
        "rig ratings collect (PPI assumes a random sample); null when every rating was "
        "collected (absent before 1.11)", default=None)
    source: Literal["ratings.jsonl"] = _f("where the ratings came from")
