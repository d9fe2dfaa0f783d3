"""Text-level probes of a scorer: does it grade style instead of content?

Before any audio, a team needs to know whether its scorer marks down an answer for how it is
worded. A probe holds the content fixed and changes one feature of the wording, on the same
scorer code path as the campaigns (:meth:`rig.scorer.base.Scorer.complete`), so that the
text-level gap and the audio-level gap of one scorer sit side by side.

Modules:

* :mod:`rig.probes.data`       probe sets (``probes/shibboleth/*.yaml``), their schema and the
  machine checks of equivalence; proposal transforms (:func:`drop_articles`).
* :mod:`rig.probes.prompts`    the rating and decision prompts, GBNF grammars and parsers.
* :mod:`rig.probes.core`       the scorer from ``--scorer``, seeded sessions, the ask log.
* :mod:`rig.probes.stats`      paired comparison (t, Wilcoxon, d_z) and the decision test.
* :mod:`rig.probes.shibboleth` the hedging and accent-marker probes: run, summarise.
* :mod:`rig.probes.report`     ``report.html``; :func:`~rig.probes.report.table`,
  :func:`~rig.probes.report.page` and :func:`~rig.probes.report.gap_plot_svg` for other probes.

Adding a probe family (name swap, dual framing, invariance): write its prompts, grammars and
parsers returning :class:`~rig.scorer.base.Parsed`; send every ask through
:class:`~rig.probes.core.AskLog` (durable, resumable, memoised at temperature 0, failures
recorded with their raw text); draw items with :func:`~rig.probes.core.sample_sessions` when
the design has sessions; take the scorer from :func:`~rig.probes.core.build_scorer` (embedded
or any OpenAI-compatible endpoint); write ``scores.parquet``, ``summary.json`` and
``report.html`` from a pure ``summarize(rows, meta)`` so that ``rig probe summarize`` can
rewrite them; put tests that fit several probes in :mod:`rig.probes.stats`, each returning
None with a reason in ``not_computable`` rather than NaN or an exception.
"""

from rig.probes.core import AskLog, build_scorer, describe_scorer, sample_sessions
from rig.probes.data import (
    CATEGORIES,
    ShibbolethSet,
    check_item,
    drop_articles,
    hedge_markers,
    load_shibboleth,
    propose_hedged,
)
from rig.probes.prompts import PROMPT_CONDITIONS, parse_decision, parse_rating
from rig.probes.shibboleth import PROBES, ProbeResult, ProbeSpec, run_probe, summarize
from rig.probes.stats import DecisionTest, PairedComparison, decision_test, paired_comparison

__all__ = [
    "CATEGORIES",
    "PROBES",
    "PROMPT_CONDITIONS",
    "AskLog",
    "DecisionTest",
    "PairedComparison",
    "ProbeResult",
    "ProbeSpec",
    "ShibbolethSet",
    "build_scorer",
    "check_item",
    "decision_test",
    "describe_scorer",
    "drop_articles",
    "hedge_markers",
    "load_shibboleth",
    "paired_comparison",
    "parse_decision",
    "parse_rating",
    "propose_hedged",
    "run_probe",
    "sample_sessions",
    "summarize",
]
