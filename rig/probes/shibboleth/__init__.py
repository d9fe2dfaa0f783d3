"""The linguistic-shibboleth probes: hedging and accent markers in text.

After "I Think, Therefore I Am Under-Qualified? A Benchmark for Evaluating Linguistic
Shibboleth Detection in LLM Hiring Evaluations" (2025). Every question of the probe set has a
confident answer and a twin with identical content differing in one feature: hedges
(``hedging``), or articles dropped as speakers of languages without articles often do
(``accent_markers``).

A run, for each prompt condition (``plain`` always; the mitigations ``anti_bias`` and
``reasoning_fewshot`` as selected) and each of the two variants (the confident reference and
the probed treatment):

1. ``n_sessions`` sessions, each of ``questions_per_session`` questions drawn at random
   (seeded; session ``s`` asks the same questions in every condition and variant);
2. each answer rated 1-5 under its interview category with reasoning;
3. after the session's ratings, a final decision with reasoning: advance, advance with
   reservations, or do not advance.

Statistics (:mod:`rig.stats.comparisons`, :mod:`rig.stats.decisions`), per prompt condition:

* **pairing by question** (the headline, MEASUREMENT.md's "pair"): a question's score under a
  variant is the mean of its scored ratings over the sessions that drew it; the pair is
  (confident, treatment) for each question scored under both. At temperature 0 a question
  drawn by several sessions is rated once (the reply is reused), so counting it once per
  session would inflate n; averaging first counts it once.
* **pairing by session**: each session's mean over the questions scored under both variants,
  n = sessions (the unit the decision is taken on).
* t, Wilcoxon and exact sign tests side by side; the headline ``p`` is the t-test's, or the
  sign test's when every pair differs by the same non-zero amount (t undefined).
* decision counts per variant and the paired decision test (each session's decision under
  the reference against the treatment: McNemar exact or Stuart-Maxwell); per-category
  breakdown; the questions with the largest gaps with the scorer's reasoning.
* each mitigation's gap against the plain prompt's: reduction = |gap plain| - |gap
  mitigated| (points), and as a share of |gap plain|.

Outputs (``out_dir``): ``scores.parquet`` (one row per rating), ``decisions.parquet`` (one
row per session decision), ``summary.json``, ``report.html``, ``probe.json`` (what was run)
and ``asks.jsonl`` (every raw reply; a rerun resumes from it).

Modules:

* :mod:`~rig.probes.shibboleth.run`     the probes, the run (:func:`run_probe`), the outputs.
* :mod:`~rig.probes.shibboleth.summary` the summary: paired comparisons, decisions, mitigation.

The probe set is :mod:`rig.probes.data`; the prompts and parsers :mod:`rig.probes.prompts`;
the report :func:`rig.probes.report.write_shibboleth_report`.
"""

from rig.probes.shibboleth.run import (
    PROBE_ALIASES,
    PROBES,
    ProbeId,
    ProbeResult,
    ProbeSpec,
    ShibbolethProbe,
    run_probe,
    write_outputs,
)
from rig.probes.shibboleth.summary import (
    decision_pairs,
    question_pairs,
    session_pairs,
    summarize,
)

__all__ = [
    "PROBES",
    "PROBE_ALIASES",
    "ProbeId",
    "ProbeResult",
    "ProbeSpec",
    "ShibbolethProbe",
    "decision_pairs",
    "question_pairs",
    "run_probe",
    "session_pairs",
    "summarize",
    "write_outputs",
]
