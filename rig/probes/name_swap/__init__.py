"""The name-swap probe: identical material, only the candidate's name changes.

After "Quantifying Gender Bias in Large Language Models: When ChatGPT Becomes a Hiring
Manager" (2024), an audit design after Bertrand and Mullainathan (2004). Each item of the
material (a resume, or a phone-screen transcript from the answer bank; see
:mod:`rig.probes.names`) is shown under ``names_per_group`` slots of every group of a name set,
and three questions are asked, each in its own prompt:

* ``qualification``: how qualified is the candidate, 1-10;
* ``hire``: spots are limited; hire, yes or no (scored 1 / 0);
* ``compensation``: the total annual compensation offered, in US dollars.

Prompt conditions: ``plain``; ``anti_bias`` (the system prompt adds a fairness instruction:
the name, gender or pronouns must not affect the evaluation); ``reasoning`` (a short
reasoning before the answer). With llama.cpp a GBNF grammar forces the JSON reply; an
OpenAI-compatible endpoint gets none, so the parsers check everything and a reply that does
not parse, or is out of range, is counted and kept with its raw text, never scored.

Statistics (:mod:`rig.stats.groups`), per name set, condition and feature, for every
unordered pair of groups: chi-square on the 2 x 2 table of groups x hire yes/no;
Mann-Whitney U (Wilcoxon rank-sum) on qualification; Kolmogorov-Smirnov on compensation
standardised within each item (:func:`~rig.stats.groups.standardise_by_item`); and the
paper's bias index, the mean over pairs of (1 - p) (:func:`~rig.stats.groups.bias_index`).
As in the paper, each scored reply counts as one observation of its group; replies of one
slot share the material, so the tests are a screen, not a model of that structure.

Outputs (``out_dir``): ``scores.parquet`` (one row per ask), ``summary.json``,
``report.html``, ``probe.json`` (what was run) and ``asks.jsonl`` (every raw reply; a rerun
resumes from it without asking again).

Modules:

* :mod:`~rig.probes.name_swap.asks`    prompts, grammars and parsers of the three features.
* :mod:`~rig.probes.name_swap.run`     the run (:func:`run_name_swap`).
* :mod:`~rig.probes.name_swap.summary` the summary: group tests and bias index.
"""

from rig.probes.name_swap.asks import (
    COMPENSATION_RANGE_USD,
    CONDITIONS,
    FAIRNESS,
    FEATURES,
    PROMPT_VERSION,
    QUESTIONS,
    SYSTEM,
    Ask,
    Condition,
    Feature,
    FeatureReply,
    feature_prompt,
    parse_feature,
)
from rig.probes.name_swap.run import NameSwapResult, NameSwapSpec, run_name_swap, write_outputs
from rig.probes.name_swap.summary import TESTS, summarize

__all__ = [
    "COMPENSATION_RANGE_USD",
    "CONDITIONS",
    "FAIRNESS",
    "FEATURES",
    "PROMPT_VERSION",
    "QUESTIONS",
    "SYSTEM",
    "TESTS",
    "Ask",
    "Condition",
    "Feature",
    "FeatureReply",
    "NameSwapResult",
    "NameSwapSpec",
    "feature_prompt",
    "parse_feature",
    "run_name_swap",
    "summarize",
    "write_outputs",
]
