"""The gate's turn-taking budgets (``budgets:`` in ``gate.yaml``,
:class:`rig.gate.policy.BudgetPolicy`): per profile of the candidate campaign, its response
latency p95 and talk-over rate over its real calls (:func:`rig.campaign.taking_summary.
profile_turn_taking`) against the budget. A line blocks when the figure is above its budget
and says which profile breached which budget; no statistical test (the figure is what the
candidate's callers got). A profile without the figure (a simulated campaign: no real call)
gives a line that is not computable.
"""

from __future__ import annotations

from rig.campaign.taking_summary import profile_turn_taking
from rig.gate.campaigns import Campaign
from rig.gate.policy import GatePolicy
from rig.gate.result import GateCheck

#: budget name -> (the figure of ProfileTurnTaking, how it reads, unit format)
BUDGETS = {"latency_p95_ms": ("response_latency_p95_ms", "response latency p95", "{:.0f} ms"),
           "talk_over_rate": ("talk_over_rate", "talk-over rate", "{:.3f}")}


def budget_checks(candidate: Campaign, policy: GatePolicy) -> list[GateCheck]:
    """One line per (budget set, profile) of the candidate."""
    set_ = {k: getattr(policy.budgets, k) for k in BUDGETS
            if getattr(policy.budgets, k) is not None}
    if not set_ or "profile_id" not in candidate.rows:
        return []
    out = []
    for pid, g in candidate.rows.groupby("profile_id", sort=True):
        tt = profile_turn_taking(g)
        for name, budget in set_.items():
            field, what, fmt = BUDGETS[name]
            value = None if tt is None else getattr(tt, field)
            if value is None:
                out.append(GateCheck(name, str(pid), None, None, budget, None, None, False,
                                     False, f"profile {pid}: no {what} (no real call with "
                                     "turn-taking figures)"))
                continue
            over = value > budget
            verdict = "over" if over else "within"
            out.append(GateCheck(
                name, str(pid), float(value), None, float(budget), None, None, over, True,
                f"profile {pid}: {what} {fmt.format(value)} is {verdict} the budget "
                f"{name} {fmt.format(budget)}", {"n_calls": tt.n_calls}))
    return out
