"""Which way a decision flip goes: toward or away from the reference decision (issue 33,
item 6; ``docs/measurement.md``, "Flip direction").

A flip (MEASUREMENT.md, "Flip") is a pair whose advance/reject decision, taken on the
repeat-averaged score against the answer's cutoff, differs between the baseline and the
profile. The **reference decision** of an answer is the same rule applied to its reference
grade (the bank's ``reference_score``, the graders' grade of the script): advance when
``reference_score >= cutoff``. As decisions are binary, a flip is exactly one of:

* **away from the reference**: the baseline's decision equals the reference decision and the
  profile's does not (the audio path turned a decision the judge got right wrong); of these,
  a reference ``advance`` turned ``reject`` is a qualified candidate rejected (the error the
  ratings' error-rate parity counts, issue 29), a reference ``reject`` turned ``advance`` an
  unqualified one advanced;
* **toward the reference**: the profile's decision equals the reference decision and the
  baseline's does not (the judge was wrong on the clean line and the audio path happened to
  put it right: still a change the audio caused, but not a harm against the reference).

A flip on an answer without a reference grade or cutoff has no direction (``n_no_reference``).
Rates are over the profile's pairs, as the flip rate is, so ``away + toward + no_reference``
= the flip rate; each with its Wilson 95% interval (Wilson 1927).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from rig.stats.answer_scores import answer_scores
from rig.stats.common import Interval
from rig.stats.intervals import wilson_interval
from rig.stats.rows import ADVANCE, REJECT, standardise

Direction = str  # "toward" | "away" | "none"


@dataclass(frozen=True)
class Flip:
    """One flipped pair: decisions as ``advance``/``reject`` (reference None when unknown)."""
    answer_id: str
    baseline_decision: str
    profile_decision: str
    reference_decision: str | None
    direction: Direction


@dataclass(frozen=True)
class FlipDirection:
    """A profile's flips by direction (module docstring). Counts of pairs; rates over
    ``n_pairs``; ``flips`` in answer order."""
    n_pairs: int
    n_flips: int
    n_away: int
    n_toward: int
    n_no_reference: int
    n_away_qualified_rejected: int
    n_away_unqualified_advanced: int
    away_rate: float | None
    away_ci95: Interval | None
    toward_rate: float | None
    toward_ci95: Interval | None
    flips: list[Flip] = field(default_factory=list)


def reference_decision(reference_score: float | None, cutoff: float | None) -> str | None:
    """``advance`` when the reference grade reaches the cutoff, ``reject`` below; None when
    either is missing."""
    if reference_score is None or cutoff is None or pd.isna(reference_score) or pd.isna(cutoff):
        return None
    return ADVANCE if float(reference_score) >= float(cutoff) else REJECT


def flip_directions(rows: pd.DataFrame, baseline: str = "baseline",
                    score_col: str = "score") -> dict[str, FlipDirection]:
    """Every profile's flips (the baseline excepted) by direction, from call rows with
    ``answer_id``, ``profile_id``, ``score_col``, ``cutoff`` and ``reference_score``; decisions
    on repeat-averaged scores, as :func:`rig.stats.paired.paired_by_profile` takes them. An
    empty dict when the rows have no cutoff (no decision to flip).

    Raises:
        RowsError: a required column is missing or malformed (names the column and value).
    """
    calls = standardise(rows, score_col)
    sc = answer_scores(calls)
    if sc.advance is None or baseline not in sc.advance.columns:
        return {}
    ref = {}
    if "reference_score" in rows.columns and sc.cutoff is not None:
        # standardise keeps the columns the paired analysis reads; the grade is read here
        known = rows.dropna(subset=["reference_score"])
        grade = known.groupby(known["answer_id"].astype(str))["reference_score"].first()
        ref = {a: reference_decision(grade.get(a), sc.cutoff.get(a)) for a in sc.mean.index}
    adv = sc.advance
    out = {}
    for pid in adv.columns:
        if pid == baseline:
            continue
        both = adv[[baseline, pid]].dropna()
        flips = []
        for aid, (b, p) in both.iterrows():
            if b == p:
                continue
            bd, pd_ = (ADVANCE if b else REJECT), (ADVANCE if p else REJECT)
            r = ref.get(aid)
            d = "none" if r is None else "away" if bd == r else "toward"
            flips.append(Flip(str(aid), bd, pd_, r, d))
        out[pid] = _counted(len(both), flips)
    return out


def _counted(n_pairs: int, flips: list[Flip]) -> FlipDirection:
    away = [f for f in flips if f.direction == "away"]
    toward = sum(f.direction == "toward" for f in flips)
    rate = (lambda k: None) if n_pairs == 0 else (lambda k: k / n_pairs)
    ci = (lambda k: None) if n_pairs == 0 else (lambda k: wilson_interval(k, n_pairs))
    return FlipDirection(
        n_pairs=n_pairs, n_flips=len(flips), n_away=len(away), n_toward=int(toward),
        n_no_reference=sum(f.direction == "none" for f in flips),
        n_away_qualified_rejected=sum(f.reference_decision == ADVANCE for f in away),
        n_away_unqualified_advanced=sum(f.reference_decision == REJECT for f in away),
        away_rate=rate(len(away)), away_ci95=ci(len(away)),
        toward_rate=rate(int(toward)), toward_ci95=ci(int(toward)), flips=flips)
