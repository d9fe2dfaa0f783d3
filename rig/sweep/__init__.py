"""``rig sweep``: vary the interviewer's settings on a finished campaign and say which setting
closes each profile's gap, at what cost (``docs/sweep.md``).

Modules: :mod:`~rig.sweep.plan` (``--vary`` parsing, variants, what re-runs),
:mod:`~rig.sweep.run` (a variant's calls, re-running only downstream stages),
:mod:`~rig.sweep.verdict` (per profile x variant: figures, costs, verdict),
:mod:`~rig.sweep.report` (``report.html``), :mod:`~rig.sweep.core` (:func:`run_sweep`, the
outputs, :func:`headline`).
"""

from rig.sweep.core import SweepResult, headline, recompute, run_sweep
from rig.sweep.plan import Variant, Vary, parse_vary, plan_variants

__all__ = [
           "SweepResult",
           "Variant",
           "Vary",
           "headline",
           "parse_vary",
           "plan_variants",
           "recompute",
           "run_sweep",
]
