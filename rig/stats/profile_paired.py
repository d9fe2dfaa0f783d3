"""One profile's paired comparison with the baseline: the row of the per-profile table
(:class:`ProfilePaired`) and its computation from the repeat-averaged scores
(:func:`profile_paired`): mean delta with bootstrap and t intervals, flips, tier inversions,
and what the baseline's noise floor holds the profile to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rig.stats.answer_scores import AnswerScores, most_common_count
from rig.stats.common import Interval, NotComputable, dataclass_dict
from rig.stats.intervals import (
    SMALL_SAMPLE_PAIRS,
    bootstrap_mean_interval,
    t_interval,
    wilson_interval,
)
from rig.stats.noise import NoiseFloor

#: Why the baseline's own delta figures are not computed.
BASELINE_REASON = "baseline: its delta is 0 by construction"


@dataclass(frozen=True)
class ProfilePaired:
    """One profile's paired comparison with the baseline (one row of the per-profile table).

    Scores and deltas are in points of the 0-100 scale; rates are shares in [0, 1].

    Fields:
        profile_id, is_baseline: the profile, and whether it is the baseline itself.
        n_calls: rows of this profile; n_parse_failures: those left out as parse failures.
        n_answers: answers with at least one scored repeat under this profile.
        n_pairs: answers scored under both this profile and the baseline.
        mean_delta: mean over pairs of (profile score - baseline score), repeats averaged first.
        sd_delta: standard deviation of the paired deltas (n - 1 denominator).
        ci95: seeded percentile bootstrap 95% interval of ``mean_delta`` (resampling answers,
            ``n_boot`` resamples, generator seeded with ``seed`` for each profile, so a profile's
            interval does not depend on the other profiles); needs 3 pairs with some spread.
            It runs a little narrow in small samples (94.0% coverage at 32 pairs, 88.3% at 8,
            as ``benchmarks/stats_simulation.py`` measures it; see
            :data:`~rig.stats.intervals.SMALL_SAMPLE_PAIRS`); below 30 pairs a note says so
            and ``t_ci95`` is the one to read.
        t_ci95: Student t 95% interval of ``mean_delta``; needs 2 pairs with some spread.
        flip_rate: flips / pairs, where a flip is a pair whose decision (repeat-averaged score
            >= cutoff) differs between baseline and profile. n_flips: the flips.
        flip_ci95: Wilson 95% interval of ``flip_rate``.
        tier_inversion_rate: among pairs (weak answer w, strong answer s) to the same question
            by the reference tiers, the share where w under the baseline scores strictly above
            s under this profile (repeat-averaged scores; a tie is not an inversion): a strong
            candidate on a bad line losing to a weak candidate on a clean one.
            n_tier_inversions / n_tier_pairs.
        noise_floor_sd, noise_floor_flip_rate: the baseline's single-call noise floor
            (``sd_repeat_diff`` and the repeat flip rate of
            :class:`~rig.stats.noise.NoiseFloor`), repeated here for reading; neither is
            what this profile's figures are held to.
        noise_floor_se_mean_delta: the standard error of this profile's mean delta if nothing
            had changed, from the baseline's ``repeat_sd`` and the repeats averaged on each
            side of every pair: ``repeat_sd * sqrt(sum_i (1/kp_i + 1/kb_i)) / n``
            (:meth:`~rig.stats.noise.NoiseFloor.se_mean_delta`, derivation there).
        noise_floor_mean_delta_limit: the largest |mean delta| repeat noise alone gives at
            95%: t(0.975, df_within) x ``noise_floor_se_mean_delta``.
        within_noise_floor: ``|mean_delta| <= noise_floor_mean_delta_limit``: the effect is
            no larger than re-running the same calls would give, so it is not evidence of
            anything. (Not a claim of no effect: read ``t_ci95``, or a TOST against a margin,
            :mod:`rig.stats.equivalence`, for that.)
        noise_floor_flip_rate_averaged: the flip rate under no change of the same kind of
            decision as this profile's, over its pairs: the decision on the mean of the
            profile's repeats against the decision on the mean of the baseline's, at each
            pair's repeat counts, from the baseline's ``repeat_sd`` and each answer's baseline
            score (:meth:`~rig.stats.noise.NoiseFloor.flip_rate_averaged`).
            noise_floor_flip_repeats: the most common (profile, baseline) repeat counts of
            the pairs, for reading.
        flip_within_noise_floor: ``flip_rate <= noise_floor_flip_rate_averaged``.
        n_boot, seed: the bootstrap settings used.
        not_computable: field -> reason, for every field that is None.
        notes: warnings a reader needs (small samples, unpaired answers, parse failures).
    """

    profile_id: str
    is_baseline: bool
    n_calls: int
    n_parse_failures: int
    n_answers: int
    n_pairs: int
    mean_delta: float | None
    sd_delta: float | None
    ci95: Interval | None
    t_ci95: Interval | None
    flip_rate: float | None
    flip_ci95: Interval | None
    n_flips: int | None
    tier_inversion_rate: float | None
    n_tier_inversions: int
    n_tier_pairs: int
    noise_floor_sd: float | None
    noise_floor_flip_rate: float | None
    noise_floor_se_mean_delta: float | None
    noise_floor_mean_delta_limit: float | None
    noise_floor_flip_rate_averaged: float | None
    noise_floor_flip_repeats: tuple[int, int] | None
    within_noise_floor: bool | None
    flip_within_noise_floor: bool | None
    n_boot: int
    seed: int
    not_computable: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """JSON-able values (intervals as [low, high]); None for undefined, never NaN."""
        return dataclass_dict(self)


def tier_inversions(scores: AnswerScores, baseline: str, profile: str
                    ) -> tuple[int, int, str | None]:
    """(inversions, (weak, strong) pairs compared, None) of ``profile`` against the baseline
    (the definition on :class:`ProfilePaired`), or (0, 0, why) when none can be compared."""
    if scores.weak_strong is None:
        return 0, 0, "needs question_id and tier columns"
    if baseline not in scores.mean or profile not in scores.mean:
        return 0, 0, "no scored answers under the baseline or this profile"
    w, s = scores.weak_strong
    base_w = scores.mean[baseline].to_numpy()[w]
    prof_s = scores.mean[profile].to_numpy()[s]
    ok = ~(np.isnan(base_w) | np.isnan(prof_s))
    if not ok.any():
        return 0, 0, ("no question has both a weak answer scored under the baseline and a "
                      "strong answer scored under this profile")
    return int((base_w[ok] > prof_s[ok]).sum()), int(ok.sum()), None


def profile_paired(scores: AnswerScores, nf: NoiseFloor, baseline: str, profile: str,
                   n_boot: int, seed: int) -> ProfilePaired:
    """The row of ``profile`` (the baseline's own row when ``profile == baseline``); each
    figure as defined on :class:`ProfilePaired`, None with a reason when not computable."""
    why: dict[str, str] = {}
    notes: list[str] = []
    is_base = profile == baseline
    n_calls = int(scores.calls["n_calls"].get(profile, 0))
    n_fail = int(scores.calls["n_failed"].get(profile, 0))
    if n_fail:
        why_failed = (scores.calls["fail_reasons"].get(profile)
                      if "fail_reasons" in scores.calls.columns else None)
        notes.append(f"{n_fail} of {n_calls} calls left out: "
                     + (why_failed if isinstance(why_failed, str) and why_failed
                        else "no score"))
    nan = np.full(len(scores.mean), np.nan)
    prof = scores.mean[profile].to_numpy(dtype=float) if profile in scores.mean else nan
    base = scores.mean[baseline].to_numpy(dtype=float) if baseline in scores.mean else nan
    both = ~(np.isnan(prof) | np.isnan(base))
    n_answers, n_pairs = int((~np.isnan(prof)).sum()), int(both.sum())
    if n_answers > n_pairs:
        notes.append(f"{n_answers - n_pairs} answers scored under this profile have no scored "
                     "baseline partner and are left out")
    deltas = prof[both] - base[both]

    mean_delta = sd_delta = None
    ci95 = t_ci95 = None
    if n_pairs == 0:
        why["mean_delta"] = "no pairs: no answer is scored under both this profile and the " \
                            "baseline"
    else:
        mean_delta = 0.0 if is_base else float(np.mean(deltas))
    if n_pairs >= 2 and not is_base:
        sd_delta = float(np.std(deltas, ddof=1))
    elif not is_base:
        why["sd_delta"] = f"needs at least 2 pairs (got {n_pairs})"
    if is_base:
        why["sd_delta"] = why["ci95"] = why["t_ci95"] = BASELINE_REASON
    else:
        try:
            ci95 = bootstrap_mean_interval(deltas, n_boot=n_boot, seed=seed)
        except NotComputable as exc:
            why["ci95"] = exc.reason
        try:
            t_ci95 = t_interval(deltas)
        except NotComputable as exc:
            why["t_ci95"] = exc.reason
        if 0 < n_pairs < SMALL_SAMPLE_PAIRS:
            beside = ("read t_ci95 beside it" if t_ci95 is not None
                      else "t_ci95 is not computable either")
            notes.append(f"only {n_pairs} pairs: the percentile bootstrap interval runs narrow "
                         f"below {SMALL_SAMPLE_PAIRS} pairs; {beside}")

    flip_rate = flip_ci95 = n_flips = None
    if is_base and n_pairs:
        flip_rate, n_flips = 0.0, 0
        why["flip_ci95"] = "baseline against itself: no flips by construction"
    elif scores.advance is None or scores.decide_reason:
        why["flip_rate"] = why["flip_ci95"] = why["n_flips"] = (
            scores.decide_reason or "no decisions")
    elif n_pairs == 0:
        why["flip_rate"] = why["flip_ci95"] = why["n_flips"] = "no pairs"
    else:
        adv_p = scores.advance[profile].to_numpy(dtype=float)[both]
        adv_b = scores.advance[baseline].to_numpy(dtype=float)[both]
        n_flips = int((adv_p != adv_b).sum())
        flip_rate = n_flips / n_pairs
        flip_ci95 = wilson_interval(n_flips, n_pairs)
    if n_pairs == 0 and is_base:
        why["flip_rate"] = why["n_flips"] = "no scored baseline answers"
        why["flip_ci95"] = "no scored baseline answers"

    n_inv, n_tier, tier_reason = tier_inversions(scores, baseline, profile)
    tier_rate = None
    if tier_reason:
        why["tier_inversion_rate"] = tier_reason
    else:
        tier_rate = n_inv / n_tier

    within = flip_within = None
    se = limit = flip_avg = None
    sizes: tuple[int, int] | None = None
    if is_base:
        why["within_noise_floor"] = why["flip_within_noise_floor"] = BASELINE_REASON
        for k in ("noise_floor_se_mean_delta", "noise_floor_mean_delta_limit",
                  "noise_floor_flip_rate_averaged", "noise_floor_flip_repeats"):
            why[k] = BASELINE_REASON
    else:
        if n_pairs:
            kp = scores.n_rep[profile].to_numpy(dtype=float)[both]
            kb = scores.n_rep[baseline].to_numpy(dtype=float)[both]
            try:
                se, limit = nf.mean_delta_limit(kp, kb)
            except NotComputable as exc:
                why["noise_floor_se_mean_delta"] = why["noise_floor_mean_delta_limit"] = \
                    exc.reason
            sizes = (most_common_count(kp), most_common_count(kb))
            try:
                flip_avg = no_change_flip_rate(scores, nf, baseline, profile)
            except NotComputable as exc:
                why["noise_floor_flip_rate_averaged"] = exc.reason
        else:
            for k in ("noise_floor_se_mean_delta", "noise_floor_mean_delta_limit",
                      "noise_floor_flip_rate_averaged", "noise_floor_flip_repeats"):
                why[k] = "no pairs"
        if mean_delta is None or limit is None:
            why["within_noise_floor"] = why.get("mean_delta") or why.get(
                "noise_floor_mean_delta_limit", "noise floor not computable")
        else:
            within = abs(mean_delta) <= limit
        if flip_rate is None or flip_avg is None:
            why["flip_within_noise_floor"] = why.get("flip_rate") or why.get(
                "noise_floor_flip_rate_averaged", "noise floor not computable")
        else:
            flip_within = flip_rate <= flip_avg
    if nf.sd_repeat_diff is None:
        why["noise_floor_sd"] = nf.not_computable.get("sd_repeat_diff", "")
    if nf.flip_rate is None:
        why["noise_floor_flip_rate"] = nf.not_computable.get("flip_rate", "")

    return ProfilePaired(
        profile_id=profile, is_baseline=is_base, n_calls=n_calls, n_parse_failures=n_fail,
        n_answers=n_answers, n_pairs=n_pairs, mean_delta=mean_delta, sd_delta=sd_delta,
        ci95=ci95, t_ci95=t_ci95, flip_rate=flip_rate, flip_ci95=flip_ci95, n_flips=n_flips,
        tier_inversion_rate=tier_rate, n_tier_inversions=n_inv, n_tier_pairs=n_tier,
        noise_floor_sd=nf.sd_repeat_diff, noise_floor_flip_rate=nf.flip_rate,
        noise_floor_se_mean_delta=se, noise_floor_mean_delta_limit=limit,
        noise_floor_flip_rate_averaged=flip_avg, noise_floor_flip_repeats=sizes,
        within_noise_floor=within, flip_within_noise_floor=flip_within, n_boot=int(n_boot),
        seed=int(seed), not_computable=why, notes=tuple(notes))


def no_change_flip_rate(scores: AnswerScores, nf: NoiseFloor, baseline: str,
                        profile: str) -> float:
    """:meth:`NoiseFloor.flip_rate_averaged` over ``profile``'s pairs: each answer's
    repeat-averaged baseline score, cutoff and repeat counts.

    Raises:
        NotComputable: no pairs, decisions not taken on a cutoff, or the floor not measured.
    """
    if scores.cutoff is None or scores.decide_reason:
        raise NotComputable(scores.decide_reason or "no cutoff column: decisions of single "
                            "calls cannot be averaged")
    if profile not in scores.mean or baseline not in scores.mean:
        raise NotComputable("no pairs")
    sel = scores.mean[[profile, baseline]].notna().all(axis=1).to_numpy()
    if not sel.any():
        raise NotComputable("no pairs")
    return nf.flip_rate_averaged(scores.mean[baseline].to_numpy(float)[sel],
                                 scores.cutoff.to_numpy(float)[sel],
                                 scores.n_rep[profile].to_numpy(float)[sel],
                                 scores.n_rep[baseline].to_numpy(float)[sel])
