"""The release gate: may this pipeline release ship, compared with the previous one?

``rig gate CANDIDATE_DIR --baseline PREVIOUS_DIR [--policy gate.yaml]`` reads two campaign
folders (each with ``calls.parquet`` or ``calls.csv``, and optionally ``summary.json``), runs the
checks below, writes ``gate.json`` and exits 0 (pass), 1 (blocked, with a table of reasons) or
2 (bad input).

Checks (each can be switched off in the policy):

1. **Pipeline version.** With ``versions.allow_change: false`` any change of
   ``pipeline_version`` blocks. ``versions.forbid_changes`` lists dotted keys of the resolved
   pipeline configuration (``summary.json``'s ``pipeline`` mapping, or a ``pipeline.yaml`` /
   ``pipeline.json`` in the folder), e.g. ``scorer.model``; a change in any of them blocks.
   When a version is not recorded, or the versions differ and a folder records no
   configuration, the gate cannot show that the forbidden parts are unchanged and blocks
   (version rules fail closed).
2. **Flip rate.** For each profile present in both releases, the flip rates (MEASUREMENT.md,
   "Flip") are compared on the answers both releases scored. It blocks when the rise
   (candidate - previous) exceeds the margin = max(``flip.min_rise``, the noise-floor flip
   rate) **and** the rise is significant: exact one-sided McNemar test (McNemar 1947, in its
   binomial form) on the answers whose flip status changed: b = answers that flip only in the
   candidate, c = only in the previous release, p = P(Binomial(b + c, 1/2) >= b). The noise
   floor is, per profile, the flip rate under no change of the same kind of decision as the
   profile's (the mean of the profile's repeats against the mean of the baseline's, at the
   repeat counts the release used: :meth:`rig.stats.noise.NoiseFloor.flip_rate_averaged`), not
   the flip rate between single repeats, which is wider when repeats are averaged. It is the
   previous release's (the reference the release is held to; a noisier candidate must not
   loosen its own gate), or the candidate's when the previous one's is not measured (single
   repeats, or identical ones).
3. **Impact ratios** of the candidate by ``impact.by`` (default: profile): selection rates
   (four-fifths rule, 29 CFR 1607.4(D)) by default, and LL144 scoring rates when
   ``impact.kinds`` lists ``scoring``. Repeats are averaged per
   (answer, profile) first, so a category's n counts answers, not re-runs of the same answer.
   A category's ratio *falls below* the threshold when, all at once: its ratio is below
   ``impact.threshold``; it has volume (the category and the highest category each have at
   least ``impact.min_n`` rows); and it is significant, which takes two tests that must both
   reject (an intersection-union test, p = the larger of the two): the disparity against the
   highest category in the candidate (z-test or Fisher's exact test, per ``impact.test``), and
   the fall of the category's own rate from the previous release (exact one-sided McNemar
   test on the rows matched by answer and profile; a one-sided two-proportion z-test when no
   row matches). A ratio that fell only because the top category rose, or a breach already
   there in the previous release that did not significantly worsen, is reported and does not
   block, unless ``impact.block_existing`` is true: then the disparity test alone decides, and
   a release that changed nothing is blocked for as long as a breach lasts. A category new in
   the candidate is judged on the disparity test alone.
4. **Turn-taking budgets** (``budgets.latency_p95_ms``, ``budgets.talk_over_rate``; unset by
   default): per profile of the candidate, the 95th percentile of its real calls'
   ``response_latency_ms`` and its talk-over rate (docs/calls.md, "Turn-taking and
   conduct"); a figure over its budget blocks, and the line names the profile and the
   budget (no test: it is what the candidate's callers got). :mod:`rig.gate.budgets`.

5. **Answers lost as faults** (``faults.min_rise``, 0 by default): per profile, the share of
   answers with a call kept out of the scores as a fault (not heard by the VAD, a looped
   transcript, an empty reference: :mod:`rig.campaign.faults`) against the previous
   release's, on the answers both ran; exact one-sided McNemar test. Those calls have no
   score, so checks 2 and 3 never see them: a release that stops hearing short answers
   would pass them. :mod:`rig.gate.faults`.

All the statistical tests of one gate run form one family: their p-values are Holm-adjusted
(Holm 1979) and compared with ``alpha``, so a release that changed nothing is blocked with
probability at most ``alpha`` (``benchmarks/stats_simulation.py`` measures it). A check that
cannot be computed is reported and does not block unless ``fail_on_not_computable`` is true.

Modules:

* :mod:`rig.gate.policy`     the policy (``gate.yaml``) and :func:`load_policy`.
* :mod:`rig.gate.campaigns`  a release's campaign folder (:func:`load_campaign`).
* :mod:`rig.gate.versions`   check 1, pipeline version and configuration.
* :mod:`rig.gate.flips`      check 2, flip rates against the noise floor.
* :mod:`rig.gate.impact`     check 3, impact ratios (disparity and fall tests).
* :mod:`rig.gate.faults`     check 5, answers lost as faults.
* :mod:`rig.gate.result`     :class:`GateCheck` and :class:`GateResult` (gate.json).
* :mod:`rig.gate.evaluate`   Holm across the checks, the verdict (:func:`evaluate_gate`) and
  :func:`run_gate`.
* :mod:`rig.gate.replay`     a replay folder instead (``rig gate REPLAY_DIR``, no
  ``--baseline``: version A is the baseline): the policy's ``replay`` rules per segment.
"""

from rig.gate.campaigns import CALLS_FILES, Campaign, load_campaign
from rig.gate.evaluate import evaluate_gate, run_gate
from rig.gate.policy import FlipPolicy, GatePolicy, ImpactPolicy, VersionPolicy, load_policy
from rig.gate.result import CheckKind, GateCheck, GateResult, Verdict

__all__ = [
    "CALLS_FILES",
    "Campaign",
    "CheckKind",
    "FlipPolicy",
    "GateCheck",
    "GatePolicy",
    "GateResult",
    "ImpactPolicy",
    "Verdict",
    "VersionPolicy",
    "evaluate_gate",
    "load_campaign",
    "load_policy",
    "run_gate",
]
