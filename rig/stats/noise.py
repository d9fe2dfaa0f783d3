"""The noise floor: how much the same call moves between identical repeats under the baseline.

MEASUREMENT.md, "Noise floor" (``docs/measurement.md`` has this implementation's precise
form): the spread of scores between repeats of the same call under the baseline (standard
deviation of repeat differences) and the flip rate between identical repeats. Both describe
*single calls*. A profile's mean delta is held to the standard error of a mean delta under no
change (:meth:`NoiseFloor.mean_delta_limit`), and its flip rate to the flip rate of decisions
on repeat-averaged scores under no change (:meth:`NoiseFloor.flip_rate_averaged`), never to
the single-call figures themselves.

When every repeat pair of the baseline is identical (same score, and same transcript when the
rows have one), the repeats measured nothing: a deterministic pipeline graded the same audio
twice. The noise floor is then **not measured** (``measured`` False, ``reason``
:data:`NOT_MEASURED`), never reported as 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from rig.stats.common import NotComputable, jsonable
from rig.stats.rows import RowsError, source_of, standardise

#: The sentence a summary and a report show when the repeats measured nothing.
NOT_MEASURED = "not measured: the repeats are identical"
#: Two-sided level of :meth:`NoiseFloor.mean_delta_limit`.
LIMIT_LEVEL = 0.95


@dataclass(frozen=True)
class NoiseFloor:
    """Repeat-to-repeat noise of one profile (normally the baseline).

    Fields (scores in points of the 0-100 scale, rates in [0, 1]):
        profile_id: the profile measured.
        n_answers: answers with at least two scored repeats (the ones that count).
        n_repeat_pairs: pairs of repeats of the same answer, sum of k(k-1)/2.
        repeat_sd: pooled within-answer standard deviation of one call's score,
            sqrt(sum over answers of sum (x - mean)^2 / sum (k - 1)) (one-way ANOVA
            within-group mean square; Fisher 1925). The SD of the noise of a single call.
        sd_repeat_diff: standard deviation of the difference between two repeats of the same
            answer, sqrt(2) * repeat_sd; with two repeats it is the root mean square of the
            differences. It describes single calls: a *mean* delta over n answers is held to
            :meth:`mean_delta_limit`, about ``sd_repeat_diff / sqrt(n)`` (smaller again when
            repeats are averaged), not to this figure.
        flip_rate: share of repeat pairs whose single-call decisions (score >= cutoff, or the
            ``decision`` column when there is no cutoff) differ; None when neither exists.
            Pairs within an answer are not independent when k > 2, so no interval is given.
            A profile's flip rate (decisions on repeat-averaged scores) is held to
            :meth:`flip_rate_averaged`, not to this figure.
        n_flips: repeat pairs whose decisions differ.
        not_computable: field -> reason for every None.
        measured: False when the floor is not measured: every repeat pair identical
            (:data:`NOT_MEASURED`), the planner skipped the repeats because they could not
            differ, or no answer has two scored repeats. ``reason`` says which.
        reason: why it is not measured (None when measured).
        n_identical_repeat_pairs: repeat pairs with the same score and (when the rows have a
            ``transcript`` column) the same transcript.
        df_within: degrees of freedom of ``repeat_sd``, sum over answers of (k - 1).
    """

    profile_id: str
    n_answers: int
    n_repeat_pairs: int
    repeat_sd: float | None
    sd_repeat_diff: float | None
    flip_rate: float | None
    n_flips: int
    not_computable: dict[str, str] = field(default_factory=dict)
    measured: bool = True
    reason: str | None = None
    n_identical_repeat_pairs: int = 0
    df_within: int | None = None

    def to_dict(self) -> dict:
        """JSON-able values; None for a figure that is not computable."""
        return {"profile_id": self.profile_id, "measured": self.measured,
                "reason": self.reason, "n_answers": self.n_answers,
                "n_repeat_pairs": self.n_repeat_pairs,
                "n_identical_repeat_pairs": self.n_identical_repeat_pairs,
                "repeat_sd": jsonable(self.repeat_sd),
                "sd_repeat_diff": jsonable(self.sd_repeat_diff),
                "df_within": self.df_within,
                "flip_rate": jsonable(self.flip_rate), "n_flips": self.n_flips,
                "not_computable": dict(self.not_computable)}

    def _require(self) -> None:
        if not self.measured or self.repeat_sd is None:
            raise NotComputable(self.reason or self.not_computable.get(
                "repeat_sd", "noise floor not computable"))

    def se_mean_delta(self, k_profile: Sequence[int], k_baseline: Sequence[int]) -> float:
        """Standard error (points) of a profile's mean paired delta when nothing changed.

        Args:
            k_profile, k_baseline: per pair (answer), the number of scored repeats averaged
                under the profile and under the baseline (same length n >= 1, each >= 1).

        Derivation: under no change, call r of answer i scores mu_i + e_ir under either
        profile, the e_ir independent with mean 0 and SD sigma (``repeat_sd``: one call's
        noise). Answer i's paired delta is the difference of two means of independent noise,
        d_i = mean(e_profile) - mean(e_baseline), with Var(d_i) = sigma^2 (1/kp_i + 1/kb_i).
        The answers are independent, so Var(mean d) = sigma^2 / n^2 * sum_i (1/kp_i + 1/kb_i),
        which is sigma^2 (1/kp + 1/kb) / n when every answer has kp and kb repeats. With one
        repeat a side and one answer it is sigma^2 * 2 = ``sd_repeat_diff``^2: the single-call
        figure is sqrt(n) (and more, with averaging) wider than the error of a mean delta.

        Raises:
            NotComputable: the floor is not measured (reason given).
            ValueError: the lengths differ, are 0, or a count is < 1.
        """
        self._require()
        kp = np.asarray(k_profile, dtype=float)
        kb = np.asarray(k_baseline, dtype=float)
        if kp.shape != kb.shape or kp.ndim != 1 or kp.size == 0:
            raise ValueError(f"k_profile and k_baseline need the same length >= 1 (got "
                             f"{kp.shape} and {kb.shape})")
        if (kp < 1).any() or (kb < 1).any():
            raise ValueError("every repeat count must be >= 1")
        n = kp.size
        return float(self.repeat_sd) * math.sqrt(float(np.sum(1.0 / kp + 1.0 / kb))) / n

    def mean_delta_limit(self, k_profile: Sequence[int], k_baseline: Sequence[int],
                         level: float = LIMIT_LEVEL) -> tuple[float, float]:
        """``(se, limit)``: :meth:`se_mean_delta` and the largest |mean delta| that repeat
        noise alone produces at ``level`` (two-sided): ``limit = t * se``, t the
        ``(1 + level) / 2`` quantile of Student's t with ``df_within`` degrees of freedom.

        Why t and not 1.96: ``repeat_sd`` is estimated from the baseline's within-answer
        deviations (``df_within`` degrees of freedom), which are independent of the answer
        means in the deltas; under normal noise mean(d) / se then follows t with
        ``df_within`` degrees of freedom exactly (Student 1908; Cochran's theorem). With few
        repeat pairs 1.96 would be too narrow (at 5 degrees of freedom t is 2.57); with many,
        t is 1.96.

        Raises:
            NotComputable: the floor is not measured.
            ValueError: as :meth:`se_mean_delta`, or ``level`` outside (0, 1).
        """
        if not 0.0 < level < 1.0:
            raise ValueError(f"level must be in (0, 1) (got {level!r})")
        se = self.se_mean_delta(k_profile, k_baseline)
        q = float(stats.t.ppf((1.0 + level) / 2.0, self.df_within))
        return se, q * se

    def flip_rate_averaged(self, baseline_means: Sequence[float], cutoffs: Sequence[float],
                           k_profile: Sequence[int], k_baseline: Sequence[int]) -> float:
        """Flip rate, under no change, of decisions on repeat-averaged scores: for each pair
        (answer), the chance that the decision on the mean of ``k_profile`` calls differs from
        the decision on the mean of ``k_baseline`` other calls of the same answer; averaged
        over the pairs.

        Args:
            baseline_means: per pair, the answer's repeat-averaged baseline score (points).
            cutoffs: per pair, its question's cutoff (advance when the mean >= cutoff).
            k_profile, k_baseline: per pair, the repeats averaged under the profile and under
                the baseline (each >= 1). All four the same length n >= 1.

        Method (a normal model of the repeat-level noise): a mean of k calls of answer i is
        taken as normal around the answer's score with SD ``repeat_sd / sqrt(k)``; with
        z_i = (baseline mean - cutoff) / ``repeat_sd``, p_i(k) = Phi(z_i sqrt(k)) is the chance
        that a k-call mean advances, and the pair's flip probability is
        p_i(kp)(1 - p_i(kb)) + p_i(kb)(1 - p_i(kp)). It uses the same ``repeat_sd`` as the
        error of a mean delta, at exactly the repeat counts of each pair. Checked in
        simulation (60 answers, 3 repeats a side, 3- vs 3-call means, mean of 20 campaigns;
        tests/test_noise_floor_unit.py): 0.21 against a true 0.23 with normal noise, 0.13
        against 0.17 for a judge that gives only 0 or 100; and 0.10 against 0.10 when half
        the answers have no noise at all. A distribution-free alternative, the plug-in flip
        probability from each answer's own repeats, ran further low (0.15 against 0.23 with
        normal noise). It runs a little low, so it errs towards reporting a flip rate as
        beyond noise, never towards dismissing it.

        Raises:
            NotComputable: the floor is not measured.
            ValueError: lengths differ or are 0, or a repeat count < 1.
        """
        self._require()
        m, c = np.asarray(baseline_means, float), np.asarray(cutoffs, float)
        kp, kb = np.asarray(k_profile, float), np.asarray(k_baseline, float)
        if not (m.shape == c.shape == kp.shape == kb.shape) or m.ndim != 1 or m.size == 0:
            raise ValueError("baseline_means, cutoffs, k_profile and k_baseline need the same "
                             f"length >= 1 (got {m.shape}, {c.shape}, {kp.shape}, {kb.shape})")
        if (kp < 1).any() or (kb < 1).any():
            raise ValueError("every repeat count must be >= 1")
        if self.repeat_sd == 0:
            return 0.0  # no noise: a mean lands where the answer's score is, every time
        z = (m - c) / float(self.repeat_sd)  # type: ignore[arg-type]
        p1, p2 = stats.norm.cdf(z * np.sqrt(kp)), stats.norm.cdf(z * np.sqrt(kb))
        return float(np.mean(p1 * (1.0 - p2) + p2 * (1.0 - p1)))


def _not_measured(profile: str, reason: str, n_answers: int = 0, n_pairs: int = 0,
                  n_identical: int = 0, why: dict[str, str] | None = None) -> NoiseFloor:
    reasons = {**(why or {}), "repeat_sd": reason, "sd_repeat_diff": reason,
               "flip_rate": reason}
    return NoiseFloor(profile, n_answers, n_pairs, None, None, None, 0, reasons,
                      measured=False, reason=reason, n_identical_repeat_pairs=n_identical)


def noise_floor_from(calls: pd.DataFrame, profile: str = "baseline",
                     repeats_skipped: str | None = None, advice: str | None = None
                     ) -> NoiseFloor:
    """:func:`noise_floor` on rows already passed through :func:`~rig.stats.rows.standardise`.
    """
    why: dict[str, str] = {}
    mine = calls[(calls["profile_id"] == profile) & ~calls["failed"]]
    sizes = mine.groupby("answer_id")["score"].transform("size")
    multi = mine[sizes >= 2]
    then = f"; to measure it, {advice}" if advice else ""
    if multi.empty:
        if repeats_skipped:
            return _not_measured(profile, f"{NOT_MEASURED} (they could not differ, so they "
                                 f"were not run: {repeats_skipped}){then}")
        reason = (f"profile {profile!r} has no answer with two or more scored repeats; "
                  + (advice or "run the campaign with --repeats 2 or more"))
        return _not_measured(profile, reason)
    grouped = multi.groupby("answer_id")["score"]
    k = grouped.size()
    n_pairs = int((k * (k - 1) // 2).sum())
    keys = multi[["answer_id", "score"]].copy()
    if "transcript" in multi.columns:
        keys["transcript"] = multi["transcript"].astype(object).where(
            multi["transcript"].notna(), "\0none")
    c = keys.groupby(list(keys.columns)).size()
    n_identical = int((c * (c - 1) // 2).sum())
    if n_identical == n_pairs:
        what = "same score and transcript" if "transcript" in multi.columns else \
            "same score; the rows have no transcript to tell the calls apart"
        return _not_measured(profile, f"{NOT_MEASURED} (all {n_pairs} repeat pairs of "
                             f"{int(k.size)} answers identical: {what}){then}", int(k.size),
                             n_pairs,
                             n_identical)
    ss_within = float((multi["score"] - grouped.transform("mean")).pow(2).sum())
    df_within = int((k - 1).sum())
    repeat_sd = math.sqrt(ss_within / df_within)
    flip_rate: float | None = None
    n_flips = 0
    if "cutoff" in multi.columns and multi["cutoff"].notna().all():
        adv = (multi["score"] >= multi["cutoff"]).astype(float)
    elif "advance" in multi.columns and multi["advance"].notna().all():
        adv = multi["advance"]
    else:
        adv = None
        why["flip_rate"] = "no cutoff column (and no complete decision column) to decide on"
    if adv is not None:
        a = adv.groupby(multi["answer_id"]).sum()
        n_flips = int(np.round((a * (k - a)).sum()))
        flip_rate = n_flips / n_pairs
    return NoiseFloor(profile, int(k.size), n_pairs, repeat_sd, math.sqrt(2.0) * repeat_sd,
                      flip_rate, n_flips, why, n_identical_repeat_pairs=n_identical,
                      df_within=df_within)


def noise_floor(rows: pd.DataFrame, baseline: str = "baseline", score_col: str = "score",
                repeats_skipped: str | None = None, advice: str | None = None) -> NoiseFloor:
    """Noise floor of ``baseline``: repeat-call SD, SD of repeat differences, repeat flip rate.

    Parse failures are left out; an answer needs two scored repeats to count. See
    :class:`NoiseFloor` for each figure's definition and units. ``repeats_skipped``: why a
    campaign's planner did not run the baseline's repeats r > 0 (they could not differ from
    repeat 0, :mod:`rig.campaign.repeats`); the floor is then reported as not measured
    (:data:`NOT_MEASURED`) rather than as needing more repeats. ``advice``: the step that
    would measure it in this campaign (:func:`rig.campaign.repeats.floor_advice`), said in
    the reason instead of "--repeats 2 or more", which a deterministic pipeline would skip.

    Raises:
        RowsError: a required column is missing or malformed, or no row has profile
            ``baseline``.
    """
    calls = standardise(rows, score_col)
    if not (calls["profile_id"] == baseline).any():
        raise RowsError(source_of(rows), "profile_id", "no row has the baseline profile; "
                        f"profiles are {sorted(calls['profile_id'].unique())}", baseline,
                        has_value=True)
    return noise_floor_from(calls, baseline, repeats_skipped, advice)
