"""Invariance of the scorer's written output under perturbations of the same material.

After "Who Does the Giant Number Pile Like Best" (2025): the scorer writes a short assessment
of a candidate; the same material is then perturbed, and measures of the written text that
would sway a human reader (:mod:`rig.probes.measures`: reading ease, length, sentiment
polarity, subjectivity) are compared between the reference and the perturbed version.

The candidate's name is masked in both assessments before they are measured
(:func:`mask_names`): every occurrence of the name shown in that side's material (the full
name as written, "first surname", the first name alone, the surname alone) is replaced,
case-insensitively, by "the candidate" ("The candidate" opening a sentence). Otherwise a name
swap would change the length and reading ease of an assessment merely because the two names
differ in length and syllables ("Christopher" against "Amanda"), a change that says nothing
about how the candidate is judged. The raw replies are kept (``*_reply``) next to the masked
texts that were measured (``*_masked``).

Perturbations (:data:`Perturbation` kinds):

* ``demographic``: ``name_swap:<group>``: the name-swap material (:mod:`rig.probes.names`)
  under the first group's name and under ``<group>``'s name in the same slot;
* ``control`` (content and demographic signal unchanged, to tell general brittleness apart
  from bias): ``typos`` (two inner letters swapped in some words,
  :func:`~rig.probes.measures.add_typos`), ``spacing`` (whitespace only,
  :func:`~rig.probes.measures.respace`), ``name_within_group`` (another name of the first
  group, same surname);
* ``audio``: ``profile:<id>``: from a campaign folder (``rig campaign run``), the ASR
  transcript of an answer under an audio profile against the baseline's transcript of the same
  answer and repeat (``calls.parquet``: answer_id, profile_id, repeat, transcript; baseline
  profile id ``baseline``).

For each perturbation and measure, a paired test over the pairs (perturbed - reference as
:func:`~rig.stats.comparisons.paired_comparison` computes it: the paired t-test, or the exact
sign test when every pair differs by the same non-zero amount, where t is undefined),
Bonferroni-corrected over the measures (:func:`~rig.stats.comparisons.bonferroni_paired`). The
**invariance violation rate** of a perturbation (rig's definition) is the share of its
measures whose corrected p-value is below alpha (0.05); a kind's rate pools the tests of its
perturbations. A measure is untestable only with fewer than 2 scored pairs. Also reported: the
share of pairs whose two assessments differ at all once the names are masked
(``changed_reply_rate``). A demographic
rate above the controls' points to bias rather than general brittleness.

Outputs (``out_dir``): ``scores.parquet`` (one row per pair: both assessments and their
measures), ``summary.json``, ``report.html``, ``probe.json`` and ``asks.jsonl``.

Modules:

* :mod:`~rig.probes.invariance.assessment` the assessment's prompt and parser; name masking.
* :mod:`~rig.probes.invariance.pairs`      the pairs: name-based and from a campaign.
* :mod:`~rig.probes.invariance.run`        the run (:func:`run_invariance`).
* :mod:`~rig.probes.invariance.summary`    the summary and the violation rates.

The report and :func:`violation_text` are in :mod:`rig.probes.report_bias`.
"""

from rig.probes.invariance.assessment import (
    INSTRUCTION,
    MASK,
    REPLY_GRAMMAR,
    SYSTEM,
    assessment_prompt,
    mask_names,
    parse_assessment,
)
from rig.probes.invariance.pairs import (
    BASELINE_PROFILE,
    CAMPAIGN_COLUMNS,
    CAMPAIGN_ROLE,
    CONTROLS,
    Kind,
    Pair,
    campaign_pairs,
    name_pairs,
    name_variants,
    perturbation_kind,
)
from rig.probes.invariance.run import (
    PROMPT_VERSION,
    InvarianceResult,
    InvarianceSpec,
    build_pairs,
    run_invariance,
    write_outputs,
)
from rig.probes.invariance.summary import summarize, violation_rate
from rig.probes.report_bias import violation_text

__all__ = [
    "BASELINE_PROFILE",
    "CAMPAIGN_COLUMNS",
    "CAMPAIGN_ROLE",
    "CONTROLS",
    "INSTRUCTION",
    "MASK",
    "PROMPT_VERSION",
    "REPLY_GRAMMAR",
    "SYSTEM",
    "InvarianceResult",
    "InvarianceSpec",
    "Kind",
    "Pair",
    "assessment_prompt",
    "build_pairs",
    "campaign_pairs",
    "mask_names",
    "name_pairs",
    "name_variants",
    "parse_assessment",
    "perturbation_kind",
    "run_invariance",
    "summarize",
    "violation_rate",
    "violation_text",
    "write_outputs",
]
