"""The stage attribution of the profiles the gate's lines name (docs/measurement.md, "Stage
attribution"): each release's mean paired delta split into turn detection, ASR and the rest,
added to the line's reason and detail, so a blocked flip rate says which stage moved."""

from __future__ import annotations

import dataclasses

from rig.campaign.attribution import profile_attribution, split_text
from rig.gate.campaigns import Campaign
from rig.gate.policy import GatePolicy
from rig.gate.result import GateCheck


def _split(c: Campaign, baseline: str, profile: str, policy: GatePolicy) -> dict | None:
    rows = c.rows
    if ("loss_turn_detection" not in rows or not rows["loss_turn_detection"].notna().any()
            or profile not in set(rows["profile_id"])):
        return None
    a = profile_attribution(rows, baseline, profile, n_boot=policy.n_boot, seed=policy.seed)
    return a if a["mean_delta"] is not None else None


def with_attribution(checks: list[GateCheck], candidate: Campaign, previous: Campaign,
                     policy: GatePolicy) -> list[GateCheck]:
    """``checks`` with, on every line whose subject is a profile other than the baseline and
    whose rows carry the attribution columns, the split appended to ``reason``
    (``"; delta split: candidate -45 = -44 turn detection, -1 ASR, 0 rest; previous ..."``)
    and put in ``detail["attribution"]`` (``candidate``/``previous``: the fields of
    :class:`rig.campaign.schema.ProfileAttribution`, or None). Lines without it are kept as
    they are; nothing blocks on it."""
    base = policy.baseline_profile
    cache: dict[str, tuple[dict | None, dict | None]] = {}
    out = []
    for c in checks:
        if c.subject == base or c.subject == "*":
            out.append(c)
            continue
        if c.subject not in cache:
            cache[c.subject] = (_split(candidate, base, c.subject, policy),
                                _split(previous, base, c.subject, policy))
        cand, prev = cache[c.subject]
        if cand is None and prev is None:
            out.append(c)
            continue
        parts = [f"{name} {split_text(a)}" for name, a in (("candidate", cand),
                                                             ("previous", prev)) if a]
        out.append(dataclasses.replace(
            c, reason=f"{c.reason}; delta split: " + "; ".join(parts),
            detail={**c.detail, "attribution": {"candidate": cand, "previous": prev}}))
    return out
