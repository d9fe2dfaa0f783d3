"""Check 5: answers the interviewer lost as faults (:mod:`rig.campaign.faults`: not heard by
the VAD, a looped transcript, an empty reference), per profile, against the previous release.

Such calls are kept out of the scorer and of every score the other checks compare, so a
release that stops hearing short answers would otherwise lose them from the flip and impact
checks and pass. Per profile, an answer counts as lost when any of its calls was kept out as
a fault; on the answers both releases ran, the share lost is compared with an exact one-sided
McNemar test (b = answers lost only in the candidate, c = only in the previous release), in
the gate's Holm family; it blocks when the rise exceeds ``faults.min_rise`` and is
significant (:func:`rig.gate.evaluate.decide`)."""

from __future__ import annotations

from rig.gate.campaigns import Campaign
from rig.gate.policy import FaultGatePolicy
from rig.gate.result import GateCheck
from rig.stats.proportions import mcnemar_one_sided


def _answers(c: Campaign) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Per profile, the answers run (kept or kept out) and the answers kept out as faults."""
    ran: dict[str, set[str]] = {}
    if {"answer_id", "profile_id"} <= set(c.rows.columns):
        for a, p in c.rows[["answer_id", "profile_id"]].astype(str).itertuples(index=False):
            ran.setdefault(p, set()).add(a)
    lost: dict[str, set[str]] = {}
    for key in c.rows.attrs.get("fault_excluded_keys", []):
        if len(key) == 2:
            a, p = key
            lost.setdefault(p, set()).add(a)
            ran.setdefault(p, set()).add(a)
    return ran, lost


def fault_checks(candidate: Campaign, previous: Campaign, fp: FaultGatePolicy
                 ) -> list[GateCheck]:
    """One line per profile in both releases with a fault in either: the share of answers
    lost as faults, candidate and previous, and the McNemar p-value. Nothing when neither
    release kept a call out (rows without the fault columns: a user's own export)."""
    cran, clost = _answers(candidate)
    pran, plost = _answers(previous)
    out = []
    for p in sorted((set(clost) | set(plost)) & set(cran) & set(pran)):
        both = cran[p] & pran[p]
        if not both:
            continue
        cl, pl = clost.get(p, set()) & both, plost.get(p, set()) & both
        rc, rp = len(cl) / len(both), len(pl) / len(both)
        b, c = len(cl - pl), len(pl - cl)
        out.append(GateCheck(
            "fault_rate", p, rc, rp, fp.min_rise, mcnemar_one_sided(b, c), None, False, True,
            f"answers lost as faults (not heard, looped, empty reference) {rc:.3f} vs "
            f"{rp:.3f} (rise {rc - rp:+.3f}; margin {fp.min_rise:g}, policy min_rise)",
            {"n_answers": len(both), "rise": rc - rp, "only_candidate_lost": b,
             "only_previous_lost": c}))
    return out
