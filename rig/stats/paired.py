"""Paired analysis of each profile against the baseline (MEASUREMENT.md: Pair, Flip, Tier
inversion, Noise floor).

The design is matched pairs: every answer is delivered under the baseline and under each
profile, so an answer's own quality cancels out of its paired delta.

1. Parse failures (score NaN, or ``parse_status`` not "ok") are left out and counted.
2. Repeats are averaged per (answer, profile): the score of an answer under a profile is the
   mean of its scored repeats (a repeat that failed to parse is skipped, not counted as 0).
3. Each profile is paired with the baseline by ``answer_id``; an answer scored under only one
   of the two is unpaired and left out (``n_answers - n_pairs`` of them).
4. Paired delta of an answer = its profile score - its baseline score (points). The profile's
   effect is the mean paired delta over answers with a 95% interval.

The table includes the baseline itself, with ``is_baseline=True``: its delta is 0 by
construction (no interval, flip rate 0 by construction), and its row carries the baseline's
parse failures and its own tier inversion rate (weak vs strong answers, both on the clean line),
which is the reference the profiles' rates are read against.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rig.stats.common import Interval, NotComputable, jsonable
from rig.stats.intervals import (
    SMALL_SAMPLE_PAIRS,
    bootstrap_mean_interval,
    t_interval,
    wilson_interval,
)
from rig.stats.noise import NoiseFloor, noise_floor_from
from rig.stats.rows import RowsError, source_of, standardise

_BASELINE_REASON = "baseline: its delta is 0 by construction"


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
            It runs a little narrow in small samples (about 94% coverage at 32 pairs, 89% at
            8); below 30 pairs a note says so and ``t_ci95`` is the one to read.
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
        out = {k: jsonable(getattr(self, k)) for k in self.__dataclass_fields__}
        out["not_computable"] = dict(self.not_computable)
        out["notes"] = list(self.notes)
        return out


@dataclass(frozen=True)
class PairedAnalysis:
    """The per-profile table plus the baseline's noise floor.

    ``table`` maps profile_id -> :class:`ProfilePaired`, the baseline first, then the other
    profiles in sorted order.
    """

    baseline: str
    table: dict[str, ProfilePaired]
    noise_floor: NoiseFloor
    n_calls: int
    n_parse_failures: int

    def to_dict(self) -> dict:
        """JSON-able form: ``{"baseline", "n_calls", "n_parse_failures", "noise_floor",
        "profiles": {profile_id: ProfilePaired.to_dict()}}``."""
        return {"baseline": self.baseline, "n_calls": self.n_calls,
                "n_parse_failures": self.n_parse_failures,
                "noise_floor": self.noise_floor.to_dict(),
                "profiles": {k: v.to_dict() for k, v in self.table.items()}}


@dataclass(frozen=True)
class _AnswerScores:
    """Repeat-averaged scores per (answer, profile) and what is needed to decide on them."""

    mean: pd.DataFrame  # index answer_id, columns profile_id: repeat-averaged score
    n_rep: pd.DataFrame  # same shape: scored repeats averaged (NaN: none)
    advance: pd.DataFrame | None  # same shape: 1.0 advance / 0.0 reject / NaN
    cutoff: pd.Series | None  # answer_id -> cutoff (points), when decided on a cutoff
    decide_reason: str | None
    question: pd.Series | None  # answer_id -> question_id
    tier: pd.Series | None  # answer_id -> tier
    weak_strong: tuple[np.ndarray, np.ndarray] | None  # row positions of (weak, strong) pairs
    calls: pd.DataFrame  # profile_id -> n_calls, n_failed


def _answer_scores(calls: pd.DataFrame) -> _AnswerScores:
    scored = calls[~calls["failed"]]
    mean = scored.pivot_table(index="answer_id", columns="profile_id", values="score",
                              aggfunc="mean")
    n_rep = scored.pivot_table(index="answer_id", columns="profile_id", values="score",
                               aggfunc="size").reindex(index=mean.index, columns=mean.columns)
    advance = None
    reason = None
    cut = None
    if "cutoff" in calls.columns and calls["cutoff"].notna().any():
        cutoff = calls.dropna(subset=["cutoff"]).groupby("answer_id")["cutoff"].first()
        cut = cutoff.reindex(mean.index)
        known = mean.notna().to_numpy(dtype=bool) & cut.notna().to_numpy(dtype=bool)[:, None]
        advance = mean.ge(cut, axis=0).astype(float).where(known)
        if cut.isna().any():
            reason = f"answer {cut[cut.isna()].index[0]!r} has no cutoff"
    elif "advance" in calls.columns:
        per = scored.groupby(["answer_id", "profile_id"])["advance"]
        if (per.size() > 1).any():
            reason = ("no cutoff column, and decisions of single repeats cannot be averaged; "
                      "add the cutoff to decide on repeat-averaged scores")
        else:
            advance = per.first().unstack("profile_id").reindex(index=mean.index,
                                                                 columns=mean.columns)
    else:
        reason = "no cutoff column and no decision column"
    question = tier = None
    weak_strong = None
    if "question_id" in calls.columns and "tier" in calls.columns:
        first = calls.groupby("answer_id")[["question_id", "tier"]].first()
        question, tier = first["question_id"], first["tier"]
        q = question.reindex(mean.index).astype(object).to_numpy()
        t = tier.reindex(mean.index).astype(object).to_numpy()
        has_q = pd.notna(q)
        w = np.flatnonzero((t == "weak") & has_q)
        st = np.flatnonzero((t == "strong") & has_q)
        same = q[w][:, None] == q[st][None, :]
        wi, si = np.nonzero(same)
        weak_strong = (w[wi], st[si])
    counts = calls.groupby("profile_id")["failed"].agg(n_calls="size", n_failed="sum")
    return _AnswerScores(mean, n_rep, advance, cut, reason, question, tier, weak_strong,
                         counts)


def _tier_inversions(scores: _AnswerScores, baseline: str, profile: str
                     ) -> tuple[int, int, str | None]:
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


def _profile_row(scores: _AnswerScores, nf: NoiseFloor, baseline: str, profile: str,
                 n_boot: int, seed: int) -> ProfilePaired:
    why: dict[str, str] = {}
    notes: list[str] = []
    is_base = profile == baseline
    n_calls = int(scores.calls["n_calls"].get(profile, 0))
    n_fail = int(scores.calls["n_failed"].get(profile, 0))
    if n_fail:
        notes.append(f"{n_fail} of {n_calls} calls left out: the scorer reply did not parse")
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
        why["sd_delta"] = why["ci95"] = why["t_ci95"] = _BASELINE_REASON
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

    n_inv, n_tier, tier_reason = _tier_inversions(scores, baseline, profile)
    tier_rate = None
    if tier_reason:
        why["tier_inversion_rate"] = tier_reason
    else:
        tier_rate = n_inv / n_tier

    within = flip_within = None
    se = limit = flip_avg = None
    sizes: tuple[int, int] | None = None
    if is_base:
        why["within_noise_floor"] = why["flip_within_noise_floor"] = _BASELINE_REASON
        for k in ("noise_floor_se_mean_delta", "noise_floor_mean_delta_limit",
                  "noise_floor_flip_rate_averaged", "noise_floor_flip_repeats"):
            why[k] = _BASELINE_REASON
    else:
        if n_pairs:
            kp = scores.n_rep[profile].to_numpy(dtype=float)[both]
            kb = scores.n_rep[baseline].to_numpy(dtype=float)[both]
            try:
                se, limit = nf.mean_delta_limit(kp, kb)
            except NotComputable as exc:
                why["noise_floor_se_mean_delta"] = why["noise_floor_mean_delta_limit"] = \
                    exc.reason
            sizes = (_most_common(kp), _most_common(kb))
            try:
                flip_avg = _no_change_flip_rate(scores, nf, baseline, profile)
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


def _no_change_flip_rate(scores: _AnswerScores, nf: NoiseFloor, baseline: str,
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


def _most_common(counts: np.ndarray) -> int:
    """The most common repeat count (the larger one on a tie)."""
    vals, n = np.unique(counts.astype(int), return_counts=True)
    return int(vals[n == n.max()].max())


def _check_baseline(calls: pd.DataFrame, baseline: str, source: str) -> None:
    if not (calls["profile_id"] == baseline).any():
        raise RowsError(source, "profile_id", "no row has the baseline profile; profiles are "
                        f"{sorted(calls['profile_id'].unique())}", baseline, has_value=True)


class CampaignScores:
    """Call rows checked once, repeats averaged once; every paired figure is derived from it.

    Build it with :func:`campaign_scores`; the gate uses it to avoid re-reading the rows for
    each figure.
    """

    def __init__(self, calls: pd.DataFrame, baseline: str,
                 repeats_skipped: str | None = None) -> None:
        self.calls = calls
        self.baseline = baseline
        self.repeats_skipped = repeats_skipped
        self.scores = _answer_scores(calls)
        others = sorted(p for p in calls["profile_id"].unique() if p != baseline)
        self.profiles = [baseline, *others]
        self._noise: NoiseFloor | None = None

    @property
    def source(self) -> str:
        return source_of(self.calls)

    def noise_floor(self) -> NoiseFloor:
        """The baseline's noise floor (:func:`~rig.stats.noise.noise_floor`)."""
        if self._noise is None:
            self._noise = noise_floor_from(self.calls, self.baseline, self.repeats_skipped)
        return self._noise

    def paired(self, n_boot: int = 2000, seed: int = 0) -> PairedAnalysis:
        """The per-profile table (:func:`paired_by_profile`) and the noise floor."""
        if n_boot < 0:
            raise ValueError(f"n_boot must be >= 0 (got {n_boot!r})")
        nf = self.noise_floor()
        table = {p: _profile_row(self.scores, nf, self.baseline, p, n_boot, seed)
                 for p in self.profiles}
        return PairedAnalysis(self.baseline, table, nf, len(self.calls),
                              int(self.calls["failed"].sum()))

    def no_change_flip_rate(self, profile: str) -> float:
        """The flip rate under no change of ``profile``'s kind of decision (the
        ``noise_floor_flip_rate_averaged`` of :class:`ProfilePaired`).

        Raises:
            NotComputable: no pairs, no cutoff, or the noise floor not measured (reason).
        """
        return _no_change_flip_rate(self.scores, self.noise_floor(), self.baseline, profile)

    def repeat_counts(self, profile: str) -> tuple[int, int] | None:
        """The most common numbers of scored repeats averaged per pair: (under ``profile``,
        under the baseline), over the answers scored under both; None when there are none."""
        n = self.scores.n_rep
        if profile not in n or self.baseline not in n:
            return None
        both = n[[profile, self.baseline]].dropna()
        if both.empty:
            return None
        return (_most_common(both[profile].to_numpy()),
                _most_common(both[self.baseline].to_numpy()))

    def deltas(self) -> dict[str, pd.Series]:
        """Paired deltas (points) per non-baseline profile, indexed by answer_id."""
        mean = self.scores.mean
        base = mean[self.baseline] if self.baseline in mean else pd.Series(dtype=float)
        out = {}
        for p in self.profiles[1:]:
            d = (mean[p] - base).dropna() if p in mean else pd.Series(dtype=float)
            out[p] = d.rename(p)
        return out

    def flips(self) -> dict[str, pd.Series] | None:
        """Per-answer flip indicators (1.0 flip, 0.0 same decision) per non-baseline profile;
        None when decisions cannot be taken."""
        sc = self.scores
        if sc.advance is None or sc.decide_reason or self.baseline not in sc.advance:
            return None
        adv = sc.advance
        base = adv[self.baseline].to_numpy(dtype=float)
        out = {}
        for p in self.profiles[1:]:
            if p not in adv:
                out[p] = pd.Series(dtype=float, name=p)
                continue
            prof = adv[p].to_numpy(dtype=float)
            ok = ~(np.isnan(prof) | np.isnan(base))
            out[p] = pd.Series((prof[ok] != base[ok]).astype(float), index=adv.index[ok],
                               name=p)
        return out

    def averaged(self) -> pd.DataFrame:
        """One row per scored (answer, profile): repeat-averaged ``score`` (points),
        ``advance`` (1.0/0.0 on the cutoff, NaN when no decision can be taken), ``decision``
        ("advance"/"reject"/None), ``n_repeats``, and ``question_id``/``tier`` when present."""
        sc = self.scores
        scored = self.calls[~self.calls["failed"]]
        n_rep = scored.groupby(["answer_id", "profile_id"]).size().rename("n_repeats")
        out = sc.mean.stack().rename("score").to_frame()
        out.index = out.index.set_names(["answer_id", "profile_id"])
        if sc.advance is not None:
            out["advance"] = sc.advance.stack(future_stack=True).reindex(out.index)
        else:
            out["advance"] = math.nan
        out = out.join(n_rep).reset_index()
        out["decision"] = np.where(out["advance"].isna(), None,
                                   np.where(out["advance"] == 1.0, "advance", "reject"))
        if sc.question is not None and sc.tier is not None:
            out["question_id"] = sc.question.reindex(out["answer_id"]).to_numpy()
            out["tier"] = sc.tier.reindex(out["answer_id"]).to_numpy()
        out.attrs["source"] = self.source
        return out


def campaign_scores(rows: pd.DataFrame, baseline: str = "baseline",
                    score_col: str = "score", repeats_skipped: str | None = None
                    ) -> CampaignScores:
    """Check ``rows`` and average repeats once (see :class:`CampaignScores`).

    ``repeats_skipped``: why the campaign did not run the baseline's repeats r > 0 (they
    could not differ; :func:`rig.stats.noise.noise_floor`).

    Raises:
        RowsError: a required column is missing, a value is malformed (names the file, the
            column and the value), or no row has profile ``baseline``.
    """
    calls = standardise(rows, score_col)
    _check_baseline(calls, baseline, source_of(rows))
    return CampaignScores(calls, baseline, repeats_skipped)


def paired_analysis(rows: pd.DataFrame, baseline: str = "baseline", n_boot: int = 2000,
                    seed: int = 0, score_col: str = "score",
                    repeats_skipped: str | None = None) -> PairedAnalysis:
    """Per-profile paired table and the baseline's noise floor (see :func:`paired_by_profile`).

    Raises:
        RowsError: as :func:`paired_by_profile`.
        ValueError: ``n_boot`` negative.
    """
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0 (got {n_boot!r})")
    return campaign_scores(rows, baseline, score_col, repeats_skipped).paired(n_boot, seed)


def paired_by_profile(rows: pd.DataFrame, baseline: str = "baseline", n_boot: int = 2000,
                      seed: int = 0, score_col: str = "score",
                      repeats_skipped: str | None = None) -> dict[str, ProfilePaired]:
    """Paired effect of every profile against ``baseline``: delta, intervals, flips, inversions.

    ``rows``: one row per call with at least ``answer_id``, ``profile_id`` and ``score_col``
    (points, NaN for a parse failure); ``parse_status``, ``repeat``, ``cutoff`` (points;
    advance when the repeat-averaged score >= cutoff), ``decision`` (used for flips only when
    there is no cutoff and one scored repeat per answer and profile), ``question_id``,
    ``tier`` and ``transcript`` (identical repeats) are used when present. Each figure's
    definition is on :class:`ProfilePaired`. ``repeats_skipped``: why the campaign's planner
    did not run the baseline's repeats r > 0 (the noise floor is then not measured).

    Sources: matched-pairs design and paired t-interval (Student 1908); percentile bootstrap
    (Efron & Tibshirani 1993); Wilson interval (Wilson 1927); the flip, tier inversion and noise
    floor definitions of rig's MEASUREMENT.md.

    Returns:
        profile_id -> :class:`ProfilePaired`, the baseline first (delta 0 by construction),
        then the other profiles sorted. Degenerate data (no pairs, one or two pairs, zero
        variance, all parse failures) give None figures with reasons in ``not_computable``;
        this function does not raise on them.

    Raises:
        RowsError: a required column is missing, a value is malformed (names the file, the
            column and the value), or no row has profile ``baseline``.
        ValueError: ``n_boot`` negative.
    """
    return paired_analysis(rows, baseline, n_boot, seed, score_col, repeats_skipped).table


def paired_deltas(rows: pd.DataFrame, baseline: str = "baseline",
                  score_col: str = "score") -> dict[str, pd.Series]:
    """Paired deltas (points) of every non-baseline profile, indexed by ``answer_id``.

    Same rules as :func:`paired_by_profile` (parse failures out, repeats averaged, paired by
    answer). A profile with no pairs maps to an empty Series.

    Raises:
        RowsError: as :func:`paired_by_profile`.
    """
    return campaign_scores(rows, baseline, score_col).deltas()
