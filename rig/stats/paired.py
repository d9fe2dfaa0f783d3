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

Modules: :mod:`rig.stats.answer_scores` (steps 1-2 and the decisions),
:mod:`rig.stats.profile_paired` (one profile's row, steps 3-4), this one (the table, and
:class:`CampaignScores` for callers that need several figures from the same rows).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rig.stats.answer_scores import answer_scores, most_common_count
from rig.stats.noise import NoiseFloor, noise_floor_from
from rig.stats.profile_paired import ProfilePaired, no_change_flip_rate, profile_paired
from rig.stats.rows import RowsError, source_of, standardise

__all__ = ["CampaignScores", "PairedAnalysis", "ProfilePaired", "campaign_scores",
           "paired_analysis", "paired_by_profile", "paired_deltas"]


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


def _check_baseline(calls: pd.DataFrame, baseline: str, source: str,
                    fault_keys: list | tuple = ()) -> None:
    if not (calls["profile_id"] == baseline).any():
        lost = sum(1 for key in fault_keys if len(key) == 2 and key[1] == baseline)
        why = (f" (its {lost} answer(s) were all kept out as faults: fault_excluded)"
               if lost else "")
        raise RowsError(source, "profile_id", f"no row has the baseline profile{why}; "
                        f"profiles are {sorted(calls['profile_id'].unique())}", baseline,
                        has_value=True)


class CampaignScores:
    """Call rows checked once, repeats averaged once; every paired figure is derived from it.

    Build it with :func:`campaign_scores`; the gate uses it to avoid re-reading the rows for
    each figure.
    """

    def __init__(self, calls: pd.DataFrame, baseline: str,
                 repeats_skipped: str | None = None, advice: str | None = None) -> None:
        self.calls = calls
        self.baseline = baseline
        self.repeats_skipped = repeats_skipped
        self.advice = advice  # what would measure the floor (rig.stats.noise.noise_floor)
        self.scores = answer_scores(calls)
        others = sorted(p for p in calls["profile_id"].unique() if p != baseline)
        self.profiles = [baseline, *others]
        self._noise: NoiseFloor | None = None

    @property
    def source(self) -> str:
        return source_of(self.calls)

    def noise_floor(self) -> NoiseFloor:
        """The baseline's noise floor (:func:`~rig.stats.noise.noise_floor`)."""
        if self._noise is None:
            self._noise = noise_floor_from(self.calls, self.baseline, self.repeats_skipped,
                                           self.advice)
        return self._noise

    def paired(self, n_boot: int = 2000, seed: int = 0) -> PairedAnalysis:
        """The per-profile table (:func:`paired_by_profile`) and the noise floor."""
        if n_boot < 0:
            raise ValueError(f"n_boot must be >= 0 (got {n_boot!r})")
        nf = self.noise_floor()
        table = {p: profile_paired(self.scores, nf, self.baseline, p, n_boot, seed)
                 for p in self.profiles}
        return PairedAnalysis(self.baseline, table, nf, len(self.calls),
                              int(self.calls["failed"].sum()))

    def no_change_flip_rate(self, profile: str) -> float:
        """The flip rate under no change of ``profile``'s kind of decision (the
        ``noise_floor_flip_rate_averaged`` of :class:`ProfilePaired`).

        Raises:
            NotComputable: no pairs, no cutoff, or the noise floor not measured (reason).
        """
        return no_change_flip_rate(self.scores, self.noise_floor(), self.baseline, profile)

    def repeat_counts(self, profile: str) -> tuple[int, int] | None:
        """The most common numbers of scored repeats averaged per pair: (under ``profile``,
        under the baseline), over the answers scored under both; None when there are none."""
        n = self.scores.n_rep
        if profile not in n or self.baseline not in n:
            return None
        both = n[[profile, self.baseline]].dropna()
        if both.empty:
            return None
        return (most_common_count(both[profile].to_numpy()),
                most_common_count(both[self.baseline].to_numpy()))

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
                    score_col: str = "score", repeats_skipped: str | None = None,
                    advice: str | None = None) -> CampaignScores:
    """Check ``rows`` and average repeats once (see :class:`CampaignScores`).

    ``repeats_skipped``: why the campaign did not run the baseline's repeats r > 0 (they
    could not differ; :func:`rig.stats.noise.noise_floor`); ``advice``: the step that would
    measure the noise floor, said when it is not measured (same function).

    Raises:
        RowsError: a required column is missing, a value is malformed (names the file, the
            column and the value), or no row has profile ``baseline``.
    """
    calls = standardise(rows, score_col)
    _check_baseline(calls, baseline, source_of(rows), rows.attrs.get("fault_excluded_keys", ()))
    return CampaignScores(calls, baseline, repeats_skipped, advice)


def paired_analysis(rows: pd.DataFrame, baseline: str = "baseline", n_boot: int = 2000,
                    seed: int = 0, score_col: str = "score",
                    repeats_skipped: str | None = None, advice: str | None = None
                    ) -> PairedAnalysis:
    """Per-profile paired table and the baseline's noise floor (see :func:`paired_by_profile`).

    Raises:
        RowsError: as :func:`paired_by_profile`.
        ValueError: ``n_boot`` negative.
    """
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0 (got {n_boot!r})")
    return campaign_scores(rows, baseline, score_col, repeats_skipped, advice).paired(n_boot,
                                                                                       seed)


def paired_by_profile(rows: pd.DataFrame, baseline: str = "baseline", n_boot: int = 2000,
                      seed: int = 0, score_col: str = "score",
                      repeats_skipped: str | None = None, advice: str | None = None
                      ) -> dict[str, ProfilePaired]:
    """Paired effect of every profile against ``baseline``: delta, intervals, flips, inversions.

    ``rows``: one row per call with at least ``answer_id``, ``profile_id`` and ``score_col``
    (points, NaN for a parse failure); ``parse_status``, ``repeat``, ``cutoff`` (points;
    advance when the repeat-averaged score >= cutoff), ``decision`` (used for flips only when
    there is no cutoff and one scored repeat per answer and profile), ``question_id``,
    ``tier`` and ``transcript`` (identical repeats) are used when present. Each figure's
    definition is on :class:`ProfilePaired`. ``repeats_skipped``: why the campaign's planner
    did not run the baseline's repeats r > 0 (the noise floor is then not measured);
    ``advice``: what would measure it (:func:`rig.stats.noise.noise_floor`).

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
    return paired_analysis(rows, baseline, n_boot, seed, score_col, repeats_skipped,
                           advice).table


def paired_deltas(rows: pd.DataFrame, baseline: str = "baseline",
                  score_col: str = "score") -> dict[str, pd.Series]:
    """Paired deltas (points) of every non-baseline profile, indexed by ``answer_id``.

    Same rules as :func:`paired_by_profile` (parse failures out, repeats averaged, paired by
    answer). A profile with no pairs maps to an empty Series.

    Raises:
        RowsError: as :func:`paired_by_profile`.
    """
    return campaign_scores(rows, baseline, score_col).deltas()
