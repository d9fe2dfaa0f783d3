"""Check 2: the flip rate of each profile, against the previous release's (exact one-sided
McNemar test on the answers whose flip status changed; margin = the larger of the policy's
``min_rise`` and the noise-floor flip rate of repeat-averaged decisions)."""

from __future__ import annotations

import pandas as pd

from rig.gate.policy import FlipPolicy
from rig.gate.result import GateCheck
from rig.stats.common import NotComputable
from rig.stats.paired import CampaignScores
from rig.stats.proportions import mcnemar_one_sided


def flip_checks(cand: CampaignScores, prev: CampaignScores, fp: FlipPolicy,
                notes: list[str]) -> list[GateCheck]:
    """One line per profile in both releases: flip rates on the answers both scored, the margin
    and the McNemar p-value (:func:`rig.gate.evaluate.decide` blocks). A profile in one
    release only, or with no noise floor, adds a line to ``notes``."""
    fc, fpv = cand.flips(), prev.flips()
    if fc is None or fpv is None:
        which = "candidate" if fc is None else "previous release"
        return [GateCheck("flip_rate", "*", None, None, None, None, None, False, False,
                          f"the {which} has no decisions to compare (no cutoff column)")]
    out = []
    no_floor: list[str] = []
    for p in sorted(set(fc) | set(fpv)):
        if p not in fc or p not in fpv:
            notes.append(f"profile {p!r} is only in the "
                         f"{'candidate' if p in fc else 'previous release'}; not compared")
            continue
        margin, source = fp.min_rise, "policy min_rise"
        if fp.use_noise_floor:
            nf, nf_source = _flip_floor(prev, cand, p)
            if nf is None:
                no_floor.append(f"{p} ({nf_source})")
            elif nf > margin:
                margin, source = nf, nf_source
        both = pd.concat([fc[p].rename("c"), fpv[p].rename("p")], axis=1, join="inner")
        if both.empty:
            out.append(GateCheck("flip_rate", p, None, None, margin, None, None, False, False,
                                 "no answer scored in both releases"))
            continue
        rc, rp = float(both["c"].mean()), float(both["p"].mean())
        b = int(((both["c"] == 1) & (both["p"] == 0)).sum())
        c = int(((both["c"] == 0) & (both["p"] == 1)).sum())
        out.append(GateCheck(
            "flip_rate", p, rc, rp, margin, mcnemar_one_sided(b, c), None, False, True,
            f"flip rate {rc:.3f} vs {rp:.3f} (rise {rc - rp:+.3f}; margin {margin:.3f}, "
            f"{source})",
            {"n_answers": len(both), "rise": rc - rp, "only_candidate_flips": b,
             "only_previous_flips": c}))
    if no_floor:
        notes.append("no noise-floor flip rate for " + "; ".join(no_floor) + ": the flip "
                     f"margin there is the policy's min_rise {fp.min_rise:g}")
    return out


def _flip_floor(prev: CampaignScores, cand: CampaignScores, profile: str
                ) -> tuple[float | None, str]:
    """The no-change flip rate of ``profile``'s kind of decision: the previous release's
    baseline noise at the previous release's repeat counts, else the candidate's. Returns
    (rate, where it comes from), or (None, why not)."""
    why = []
    for name, s in (("previous release", prev), ("candidate", cand)):
        try:
            rate = s.no_change_flip_rate(profile)
        except NotComputable as exc:
            why.append(f"{name}: {exc.reason}")
            continue
        sizes = s.repeat_counts(profile) or (0, 0)
        return rate, (f"no-change flip rate of {sizes[0]}- vs {sizes[1]}-repeat means, "
                      f"{name}")
    return None, "; ".join(why)
