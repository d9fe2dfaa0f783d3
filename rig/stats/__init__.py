"""Statistics a fairness auditor can trust: paired effects, noise floor, rates, equivalence.

Modules, one per question a campaign or a probe asks:

* :mod:`rig.stats.paired`      per-profile paired deltas against the baseline, bootstrap and t
  intervals, decision flips (Wilson), tier inversions (:func:`paired_by_profile`), built from
  :mod:`rig.stats.answer_scores` (repeats averaged, decisions) and
  :mod:`rig.stats.profile_paired` (one profile's row).
* :mod:`rig.stats.noise`       the baseline's repeat-to-repeat noise floor (:func:`noise_floor`)
  and what a profile is held to: the error of a mean delta and the flip rate of averaged
  decisions under no change; "not measured" when the repeats were identical.
* :mod:`rig.stats.sample_size` answers needed for a paired campaign (:func:`paired_sample_size`).
* :mod:`rig.stats.rates`       LL144 scoring-rate impact ratios and four-fifths selection-rate
  ratios by category (:class:`RateTable`).
* :mod:`rig.stats.frame`       the shape of a group metric (fairlearn's ``MetricFrame``):
  ``overall``, ``by_group``, ``ratio()``, ``difference()``.
* :mod:`rig.stats.proportions` tests of two proportions: z-test, Fisher's exact test, the
  four-fifths comparison (:func:`compare_proportions`), exact McNemar on matched pairs.
* :mod:`rig.stats.equivalence` TOST per profile with Holm correction.
* :mod:`rig.stats.intervals`   Wilson, t and percentile bootstrap intervals.
* :mod:`rig.stats.rows`        reading and checking call rows (CSV or Parquet).
* :mod:`rig.stats.simulation`  campaigns with known truth, to validate all of the above.
* :mod:`rig.stats.comparisons` the probes' paired comparisons: t, Wilcoxon and exact sign
  tests, d_z (:func:`paired_comparison`); one-sample t; Bonferroni over measures.
* :mod:`rig.stats.decisions`   paired decisions of the same sessions under two conditions:
  McNemar's exact test or Stuart-Maxwell (:func:`paired_decision_test`).
* :mod:`rig.stats.groups`      audit-study group tests (chi-square, Mann-Whitney, KS) and the
  bias index.
* :mod:`rig.stats.common`      the not-computable signal and JSON values of results.

Every definition follows ``MEASUREMENT.md``. A figure that cannot be computed is ``None`` with a
reason in the result's ``not_computable`` mapping, never NaN and never a misleading 0 or 1.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what the names are, for type checkers; at run time they load on first use
    from rig.stats.common import NotComputable
    from rig.stats.comparisons import (
        MeasureTest,
        OneSample,
        PairedComparison,
        bonferroni_paired,
        one_sample,
        paired_comparison,
        sign_test,
    )
    from rig.stats.decisions import PairedDecisionTest, paired_decision_test
    from rig.stats.equivalence import (
        ProfileEquivalence,
        Tost,
        equivalence_by_profile,
        holm,
        tost_paired,
    )
    from rig.stats.frame import GroupFrame
    from rig.stats.groups import (
        BiasIndex,
        GroupTest,
        bias_index,
        group_test,
        standardise_by_item,
    )
    from rig.stats.intervals import bootstrap_mean_interval, t_interval, wilson_interval
    from rig.stats.noise import NoiseFloor, noise_floor
    from rig.stats.paired import (
        CampaignScores,
        PairedAnalysis,
        ProfilePaired,
        campaign_scores,
        paired_analysis,
        paired_by_profile,
        paired_deltas,
    )
    from rig.stats.proportions import (
        FisherTest,
        ProportionComparison,
        ZTest,
        compare_proportions,
        fisher_exact_test,
        mcnemar_one_sided,
        two_proportion_ztest,
    )
    from rig.stats.rates import (
        CategoryRate,
        RateTable,
        category_labels,
        scoring_rate_table,
        selection_rate_table,
    )
    from rig.stats.rows import RowsError, read_rows
    from rig.stats.sample_size import SampleSize, paired_sample_size

#: each public name -> the module that defines it. A name loads its module on first use
#: (PEP 562), so ``from rig.stats.common import NotComputable`` in a campaign worker does not
#: import scipy.stats (about 2 s) through the package's ``__init__``.
_EXPORTS: dict[str, str] = {
    "BiasIndex": "groups",
    "CampaignScores": "paired",
    "CategoryRate": "rates",
    "FisherTest": "proportions",
    "GroupFrame": "frame",
    "GroupTest": "groups",
    "MeasureTest": "comparisons",
    "NoiseFloor": "noise",
    "NotComputable": "common",
    "OneSample": "comparisons",
    "PairedAnalysis": "paired",
    "PairedComparison": "comparisons",
    "PairedDecisionTest": "decisions",
    "ProfileEquivalence": "equivalence",
    "ProfilePaired": "paired",
    "ProportionComparison": "proportions",
    "RateTable": "rates",
    "RowsError": "rows",
    "SampleSize": "sample_size",
    "Tost": "equivalence",
    "ZTest": "proportions",
    "bias_index": "groups",
    "bonferroni_paired": "comparisons",
    "bootstrap_mean_interval": "intervals",
    "campaign_scores": "paired",
    "category_labels": "rates",
    "compare_proportions": "proportions",
    "equivalence_by_profile": "equivalence",
    "fisher_exact_test": "proportions",
    "group_test": "groups",
    "holm": "equivalence",
    "mcnemar_one_sided": "proportions",
    "noise_floor": "noise",
    "one_sample": "comparisons",
    "paired_analysis": "paired",
    "paired_by_profile": "paired",
    "paired_comparison": "comparisons",
    "paired_decision_test": "decisions",
    "paired_deltas": "paired",
    "paired_sample_size": "sample_size",
    "read_rows": "rows",
    "scoring_rate_table": "rates",
    "selection_rate_table": "rates",
    "sign_test": "comparisons",
    "standardise_by_item": "groups",
    "t_interval": "intervals",
    "tost_paired": "equivalence",
    "two_proportion_ztest": "proportions",
    "wilson_interval": "intervals",
}


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rig.stats' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"rig.stats.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = [
    "BiasIndex",
    "CampaignScores",
    "CategoryRate",
    "FisherTest",
    "GroupFrame",
    "GroupTest",
    "MeasureTest",
    "NoiseFloor",
    "NotComputable",
    "OneSample",
    "PairedAnalysis",
    "PairedComparison",
    "PairedDecisionTest",
    "ProfileEquivalence",
    "ProfilePaired",
    "ProportionComparison",
    "RateTable",
    "RowsError",
    "SampleSize",
    "Tost",
    "ZTest",
    "bias_index",
    "bonferroni_paired",
    "bootstrap_mean_interval",
    "campaign_scores",
    "category_labels",
    "compare_proportions",
    "equivalence_by_profile",
    "fisher_exact_test",
    "group_test",
    "holm",
    "mcnemar_one_sided",
    "noise_floor",
    "one_sample",
    "paired_analysis",
    "paired_by_profile",
    "paired_comparison",
    "paired_decision_test",
    "paired_deltas",
    "paired_sample_size",
    "read_rows",
    "scoring_rate_table",
    "selection_rate_table",
    "sign_test",
    "standardise_by_item",
    "t_interval",
    "tost_paired",
    "two_proportion_ztest",
    "wilson_interval",
]
