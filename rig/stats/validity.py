"""Judge validity: how well a scorer's grades of the bank's scripts agree with the bank's
reference grades (MEASUREMENT.md, "Judge validity").

Input is one row per answer: the judge's score of the clean script (the oracle path, no
audio; averaged over repeats when there are several), the mean reference grade, the
question's cutoff and the answer's tier. :func:`judge_validity` returns:

* ``spearman`` and ``pearson`` correlation with the reference grade, each with a percentile
  bootstrap 95% CI over answers (seeded; Efron & Tibshirani 1993, ch. 13);
* ``mae_points``: mean absolute error on the 0-100 scale;
* ``decision_agreement``: share of answers whose advance/reject decision at the question's
  cutoff (score >= cutoff) matches the reference grade's, and Cohen's kappa of the two
  decisions (Cohen 1960; statsmodels' ``cohens_kappa``), with its asymptotic 95% CI;
* ``tier_order_rate``: share of questions whose answers the judge orders
  strong > every borderline > weak (strict), and ``tier_pair_concordance``: over every pair of
  answers to one question from different tiers, the share the judge orders as the tiers do
  (a tie counts one half);
* ``distinct_scores``: how many different scores the judge used (rounded to 0.1 point);
* ``retest_sd``: pooled within-answer SD of the judge's score over repeats (None with one
  repeat), and ``retest_identical``: every answer's repeats gave the same score.

The same figures for one reference grader against another (:func:`inter_grader`) are the
ceiling a judge can be expected to reach on this bank.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from rig.stats.common import jsonable

TIER_RANK = {"weak": 0, "borderline": 1, "strong": 2}
#: Below these, a report warns that deltas from this judge are not to be trusted as such.
MIN_SPEARMAN = 0.7
MIN_DECISION_AGREEMENT = 0.8
#: Below this many answers there is no verdict (``not_measured``): on 5 answers a Spearman of
#: 0.9 has a 95% CI reaching below 0 and one decision moves agreement by 0.2, so the demo's
#: five answers called a judge ``adequate`` that the whole bank calls ``low``.
MIN_ANSWERS_FOR_VERDICT = 10


@dataclass(frozen=True)
class Validity:
    """Validity figures of one judge (see the module docstring); None with a reason in
    ``not_computable`` when a figure cannot be computed (too few answers, no spread)."""
    n_answers: int
    n_questions: int
    spearman: float | None
    spearman_ci95: tuple[float, float] | None
    pearson: float | None
    pearson_ci95: tuple[float, float] | None
    mae_points: float | None
    decision_agreement: float | None
    n_decisions_agree: int
    cohen_kappa: float | None
    cohen_kappa_ci95: tuple[float, float] | None
    tier_order_rate: float | None
    tier_pair_concordance: float | None
    distinct_scores: int
    retest_sd: float | None = None
    retest_identical: bool | None = None
    n_boot: int = 2000
    not_computable: dict[str, str] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        """``adequate`` when Spearman >= MIN_SPEARMAN and decision agreement >=
        MIN_DECISION_AGREEMENT; ``low`` when either is below; ``not_measured`` when either is
        not computable or there are fewer than MIN_ANSWERS_FOR_VERDICT answers (the figures are
        still given)."""
        if (self.spearman is None or self.decision_agreement is None
                or self.n_answers < MIN_ANSWERS_FOR_VERDICT):
            return "not_measured"
        ok = self.spearman >= MIN_SPEARMAN and self.decision_agreement >= MIN_DECISION_AGREEMENT
        return "adequate" if ok else "low"

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["verdict"] = self.verdict
        if self.n_answers < MIN_ANSWERS_FOR_VERDICT:
            d["not_computable"] = {**self.not_computable, "verdict": (
                f"{self.n_answers} answer{'' if self.n_answers == 1 else 's'}; a verdict "
                "needs at least "
                f"{MIN_ANSWERS_FOR_VERDICT} (rig scorer validate measures the whole bank)")}
        d["thresholds"] = {"min_spearman": MIN_SPEARMAN,
                           "min_decision_agreement": MIN_DECISION_AGREEMENT,
                           "min_answers": MIN_ANSWERS_FOR_VERDICT}
        return jsonable(d)  # type: ignore[return-value]


def _corr_cis(x: np.ndarray, y: np.ndarray, n_boot: int, seed: int
              ) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """Percentile bootstrap 95% CIs ``(spearman, pearson)`` of ``x`` and ``y`` (float arrays
    of one length n): Spearman's rho as Pearson's r of the average ranks (Spearman 1904), from
    the same ``n_boot`` resamples of n pairs with replacement, each drawn as
    ``rng.integers(0, n, n)`` from ``default_rng(seed)`` (one call draws them all: the same
    numbers, checked in ``tests/test_validity_ci_unit.py``); a resample with no spread in
    either grade has no correlation and is left out. Both None when fewer than half remain.

    All resamples are ranked and correlated at once (``scipy.stats.rankdata`` and
    ``pearsonr`` along axis 1): a replay's ratings summary computes hundreds of these CIs."""
    if n_boot <= 0:
        return None, None
    rng = np.random.default_rng(seed)
    n = len(x)
    idx = rng.integers(0, n, (n_boot, n))  # the draws of n_boot calls rng.integers(0, n, n)
    xs, ys = x[idx], y[idx]
    keep = (np.ptp(xs, axis=1) != 0) & (np.ptp(ys, axis=1) != 0)
    if keep.sum() < n_boot / 2:
        return None, None
    xs, ys = xs[keep], ys[keep]
    ranked = (stats.rankdata(xs, axis=1), stats.rankdata(ys, axis=1))
    out = []
    for a, b in (ranked, (xs, ys)):
        lo, hi = np.percentile(stats.pearsonr(a, b, axis=1).statistic, [2.5, 97.5])
        out.append((float(lo), float(hi)))
    return out[0], out[1]


def tier_order(rows: pd.DataFrame, score_col: str = "score") -> tuple[float | None, float | None]:
    """(tier_order_rate, tier_pair_concordance) over the questions of ``rows`` (columns
    ``question_id``, ``tier``, ``score_col``). None when no question has two tiers. Rows with
    an empty or null ``tier`` are left out.

    Raises:
        ValueError: a ``tier`` that is not ``weak``, ``borderline`` or ``strong``.
    """
    col = rows["tier"]
    named = col.notna() & (col != "")  # "" or null: an answer without a tier
    unknown = col[named & ~col.isin(list(TIER_RANK))]
    if len(unknown):
        raise ValueError(f"column 'tier': {unknown.iloc[0]!r} is not a tier (one of "
                         f"{', '.join(TIER_RANK)}; empty or null for an answer without one)")
    rows = rows[named]
    ordered, n_q, conc, n_pairs = 0, 0, 0.0, 0
    for _, g in rows.groupby("question_id"):
        tiers = set(g["tier"])
        if len(tiers) < 2:
            continue
        n_q += 1
        s = g[score_col].to_numpy(float)
        r = g["tier"].map(TIER_RANK).to_numpy(int)
        ok = True
        for i in range(len(g)):
            for j in range(len(g)):
                if r[i] > r[j]:
                    n_pairs += 1
                    conc += 1.0 if s[i] > s[j] else 0.5 if s[i] == s[j] else 0.0
                    ok = ok and s[i] > s[j]
        ordered += ok
    if n_q == 0:
        return None, None
    return ordered / n_q, conc / n_pairs


def judge_validity(rows: pd.DataFrame, *, score_col: str = "score",
                   reference_col: str = "reference_score", n_boot: int = 2000,
                   seed: int = 0, repeat_scores: Sequence[Sequence[float]] | None = None
                   ) -> Validity:
    """Validity of ``score_col`` against ``reference_col``.

    Args:
        rows: one row per answer with ``question_id``, ``tier``, ``cutoff``, ``score_col``
            and ``reference_col`` (points, 0-100). Rows with no score (a parse failure) are
            left out and counted in ``not_computable['n_unscored']``.
        repeat_scores: per answer, the scores of its repeats (for ``retest_sd``).

    Raises:
        KeyError: a required column is missing.
        ValueError: a ``tier`` that is not ``weak``, ``borderline`` or ``strong`` (empty or
            null: no tier).
    """
    from statsmodels.stats.inter_rater import cohens_kappa

    why: dict[str, str] = {}
    need = ["question_id", "tier", "cutoff", score_col, reference_col]
    missing = [c for c in need if c not in rows.columns]
    if missing:
        raise KeyError(f"validity rows lack column(s) {missing}")
    d = rows.dropna(subset=[score_col, reference_col])
    if len(d) < len(rows):
        why["n_unscored"] = f"{len(rows) - len(d)} answer(s) had no score and are left out"
    x, y = d[score_col].to_numpy(float), d[reference_col].to_numpy(float)
    n = len(d)
    sp = pe = None
    sp_ci = pe_ci = None
    if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        why["spearman"] = why["pearson"] = (f"needs 3 or more scored answers with spread in both "
                                            f"grades (n={n})")
    else:
        sp, pe = float(stats.spearmanr(x, y)[0]), float(stats.pearsonr(x, y)[0])
        sp_ci, pe_ci = _corr_cis(x, y, n_boot, seed)
        no_ci = ("n_boot is 0: no bootstrap" if n_boot <= 0 else f"fewer than half of the "
                 f"{n_boot} bootstrap resamples had spread in both grades")
        for name, ci in (("spearman_ci95", sp_ci), ("pearson_ci95", pe_ci)):
            if ci is None:
                why[name] = no_ci
    mae = float(np.mean(np.abs(x - y))) if n else None
    cut = d["cutoff"].to_numpy(float)
    dj, dr = x >= cut, y >= cut
    agree = int((dj == dr).sum())
    kappa = kappa_ci = None
    if n:
        table = np.array([[np.sum(dj & dr), np.sum(dj & ~dr)],
                          [np.sum(~dj & dr), np.sum(~dj & ~dr)]], dtype=float)
        pe_chance = (table.sum(0) @ table.sum(1)) / n**2
        if pe_chance >= 1:
            why["cohen_kappa"] = "both graders made one decision for every answer"
        else:
            with np.errstate(invalid="ignore", divide="ignore"):  # its z when kappa0's SE is 0
                k = cohens_kappa(table)
            kappa = float(k.kappa)  # the asymptotic CI, clipped to kappa's range [-1, 1]
            kappa_ci = (max(-1.0, float(k.kappa_low)), min(1.0, float(k.kappa_upp)))
            if not all(math.isfinite(v) for v in kappa_ci):
                kappa_ci = None
    t_rate, t_conc = tier_order(d, score_col)
    if t_rate is None:
        why["tier_order_rate"] = "no question has answers in two tiers"
    sd = ident = None
    if repeat_scores is not None:
        groups = [np.asarray(g, float) for g in repeat_scores if len(g) >= 2]
        if groups:
            ss = sum(float(((g - g.mean()) ** 2).sum()) for g in groups)
            sd = math.sqrt(ss / sum(len(g) - 1 for g in groups))
            ident = all(np.ptp(g) == 0 for g in groups)
        else:
            why["retest_sd"] = "one repeat per answer: run with --repeats 2 or more"
    return Validity(
        n_answers=n, n_questions=int(d["question_id"].nunique()), spearman=sp,
        spearman_ci95=sp_ci, pearson=pe, pearson_ci95=pe_ci, mae_points=mae,
        decision_agreement=agree / n if n else None, n_decisions_agree=agree,
        cohen_kappa=kappa, cohen_kappa_ci95=kappa_ci, tier_order_rate=t_rate,
        tier_pair_concordance=t_conc, distinct_scores=len({round(float(v), 1) for v in x}),
        retest_sd=sd, retest_identical=ident, n_boot=n_boot, not_computable=why)


def inter_grader(grades: pd.DataFrame, grader_a: str, grader_b: str, **kw) -> Validity:
    """Grader ``grader_b``'s reference grades judged against ``grader_a``'s, as
    :func:`judge_validity` judges a scorer (the ceiling a judge can reach on the bank).
    ``grades``: the validity rows with one column per grader id."""
    return judge_validity(grades, score_col=grader_b, reference_col=grader_a, **kw)
