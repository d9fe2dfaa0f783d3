"""Text-level probes of a scorer: does it grade style instead of content?

Before any audio, a team needs to know whether its scorer marks down an answer for how it is
worded. A probe holds the content fixed and changes one feature of the wording, on the same
scorer code path as the campaigns (:meth:`rig.scorer.base.Scorer.complete`), so that the
text-level gap and the audio-level gap of one scorer sit side by side.

Modules:

* :mod:`rig.probes.core`       the scorer from ``--scorer``, seeded sessions, the ask log, and
  the frame of a run (:func:`~rig.probes.core.start_run`, ``rig.console.progress_bar``,
  ``write_probe_outputs``, ``finish_run``).
* :mod:`rig.probes.data`       probe sets (``probes/shibboleth/*.yaml``), their schema and the
  machine checks of equivalence; proposal transforms (:func:`drop_articles`).
* :mod:`rig.probes.prompts`    the rating and decision prompts, GBNF grammars and parsers.
* :mod:`rig.probes.shibboleth` the hedging and accent-marker probes: ``run`` and ``summary``.
* :mod:`rig.probes.schema`     ``summary.json``'s typed contract, one model per probe
  (docs/probe_summary.md); probes write and read their summaries through it.
* :mod:`rig.probes.report`     ``report.html``; :func:`~rig.probes.report.table`,
  :func:`~rig.probes.report.page` and :func:`~rig.probes.report.gap_plot_svg` for other probes.
* :mod:`rig.probes.names`      name sets (``probes/names/``) and name-swap material
  (``probes/name_swap/``): slots that pair the groups.
* :mod:`rig.probes.name_swap`  the name-swap probe: qualification, hire, compensation per group;
  chi-square, Mann-Whitney, KS and the bias index (``asks``, ``run``, ``summary``).
* :mod:`rig.probes.framing`    the dual-framing probe: ``topics`` (and wrappers), the rules
  that ``normalise`` a reply and the LLM ``judge`` of the rest, ``run``, ``summary``.
* :mod:`rig.probes.measures`   text measures (reading ease, length, polarity, subjectivity) and
  control perturbations (typos, spacing).
* :mod:`rig.probes.invariance` the invariance probe: the written ``assessment`` under name
  swaps, controls and audio profiles (``pairs``); paired t-tests with Bonferroni (``run``,
  ``summary``).
* :mod:`rig.probes.report_bias` ``report.html`` of those three, and the violation rate's text.
* :mod:`rig.probes.languages`  the probe languages (en, es, fr, de) and which probe ships a
  prompt set in which (``--language``); :mod:`rig.probes.hedges` hedge markers per language
  (``hedges.yaml``, cited) and the hedged-pair check.
* :mod:`rig.probes.replicate`  ``rig probe import``: a published set run as it is, rig's
  checks as warnings per pair, each pair's score gap beside its content gap.

Each probe package imports the report modules, never the other way round.

Adding a probe family (as :mod:`~rig.probes.name_swap`, :mod:`~rig.probes.framing` and
:mod:`~rig.probes.invariance` do): write its prompts, grammars and
parsers returning :class:`~rig.scorer.base.Parsed`; send every ask through
:class:`~rig.probes.core.AskLog` (durable, resumable, memoised at temperature 0, failures
recorded with their raw text); draw items with :func:`~rig.probes.core.sample_sessions` when
the design has sessions; take the scorer from :func:`~rig.probes.core.build_scorer` (embedded
or any OpenAI-compatible endpoint); frame the run with :func:`~rig.probes.core.start_run` and
:func:`~rig.probes.core.finish_run`; write ``scores.parquet``, ``summary.json`` and
``report.html`` from a pure ``summarize(rows, meta)`` so that ``rig probe summarize`` can
rewrite them. The statistics live in :mod:`rig.stats` (:mod:`~rig.stats.comparisons`:
paired t, Wilcoxon and sign tests, d_z, one-sample t, Bonferroni; :mod:`~rig.stats.decisions`:
McNemar and Stuart-Maxwell on paired decisions; :mod:`~rig.stats.groups`: group tests and the
bias index); put a new test there, returning None with a reason in ``not_computable`` rather
than NaN or an exception.
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
from rig.probes.framing import FramingSpec, run_dual_framing
from rig.probes.invariance import InvarianceSpec, run_invariance
from rig.probes.name_swap import NameSwapSpec, run_name_swap
from rig.probes.names import load_materials, load_name_set
from rig.probes.prompts import PROMPT_CONDITIONS, parse_decision, parse_rating
from rig.probes.shibboleth import PROBES, ProbeResult, ProbeSpec, run_probe, summarize

__all__ = [
    "CATEGORIES",
    "PROBES",
    "PROMPT_CONDITIONS",
    "AskLog",
    "FramingSpec",
    "InvarianceSpec",
    "NameSwapSpec",
    "ProbeResult",
    "ProbeSpec",
    "ShibbolethSet",
    "build_scorer",
    "check_item",
    "describe_scorer",
    "drop_articles",
    "hedge_markers",
    "load_materials",
    "load_name_set",
    "load_shibboleth",
    "parse_decision",
    "parse_rating",
    "propose_hedged",
    "run_dual_framing",
    "run_invariance",
    "run_name_swap",
    "run_probe",
    "sample_sessions",
    "summarize",
]
