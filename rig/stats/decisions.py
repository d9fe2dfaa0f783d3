"""Paired decisions: the same sessions decided under two conditions (McNemar, Stuart-Maxwell).

A probe session asks the same questions under a reference variant (the confident answers) and
a treatment (their hedged twins), and each ends in a decision (advance, advance with
reservations, do not advance). The two decisions of one session are paired, so the question is
whether the treatment's decisions are distributed like the reference's *over the same
sessions*, not whether two independent samples differ: a chi-square test of the
condition x decision table treats the 2n decisions as independent and misstates the evidence.

:func:`paired_decision_test` builds the square table (row: the session's decision under the
reference, column: under the treatment; sessions with a parsed decision under both) and tests
marginal homogeneity, the null that both conditions give each decision equally often:

* two decisions in play: **McNemar's exact test** (McNemar 1947, Psychometrika 12:153-157):
  with b and c the two discordant counts, p = min(1, 2 * P(Binomial(b + c, 1/2) <= min(b, c)));
  ``statsmodels.stats.contingency_tables.mcnemar(table, exact=True)``, whose statistic is
  min(b, c).
* three or more: the **Stuart-Maxwell test** (Stuart 1955, Biometrika 42:412-416; Maxwell
  1970, Br. J. Psychiatry 116:651-655): with d the k - 1 differences of the row and column
  margins (one level left out) and V their covariance (V_ii = n_i. + n_.i - 2 n_ii,
  V_ij = -(n_ij + n_ji)), X2 = d' V^-1 d on k - 1 degrees of freedom;
  ``SquareTable(table, shift_zeros=False).homogeneity(method="stuart_maxwell")``
  (statsmodels' default ``shift_zeros=True`` would replace empty cells by 0.5 and change it).
  For two levels X2 is McNemar's uncorrected chi-square (b - c)**2 / (b + c).

Which decisions are tested: only the diagonal (sessions decided the same under both) never
enters either statistic, so the test runs on the decisions that take part in a discordant
session. A decision given only in concordant sessions would make V singular; it is left out
(a note says so), and when two decisions remain McNemar's exact test compares them.

Not computable (None with the reason, never an error): no session decided under both
conditions; every paired session given one and the same decision; every paired session
decided the same way under both conditions (no discordant session: nothing to test).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from rig.stats.common import dataclass_dict

DecisionTestKind = Literal["mcnemar_exact", "stuart_maxwell"]
DECISION_TEST = ("paired by session: row = the session's decision under the reference, column "
                 "= under the treatment; McNemar's exact test when two decisions take part in "
                 "a discordant session (statsmodels mcnemar, exact=True), Stuart-Maxwell "
                 "marginal homogeneity when three do (statsmodels SquareTable(table, "
                 "shift_zeros=False).homogeneity('stuart_maxwell'))")
_FIELDS = ("test", "statistic", "dof", "p")


@dataclass(frozen=True)
class PairedDecisionTest:
    """Decisions of the same sessions under two conditions, and the paired test.

    Fields:
        conditions: (reference, treatment) names.
        levels: the decision vocabulary, in order.
        counts: ``counts[condition][level]``: parsed decisions per condition (every session
            with a parsed decision under it, paired or not; zeros included).
        table: the square table over ``levels``, ``table[i][j]`` = paired sessions decided
            ``levels[i]`` under the reference and ``levels[j]`` under the treatment.
        n_paired: sessions with a parsed decision under both; n_unpaired: sessions with one
            under only one condition (left out of the test); n_discordant: paired sessions
            decided differently.
        tested_decisions: the levels the test compares (those in a discordant session).
        test: ``mcnemar_exact`` or ``stuart_maxwell``; statistic: min(b, c) for McNemar's
            exact test, X2 for Stuart-Maxwell; dof: Stuart-Maxwell's degrees of freedom (None
            for the exact test); p: two-sided p-value.
    """
    conditions: tuple[str, str]
    levels: tuple[str, ...]
    counts: dict[str, dict[str, int]]
    table: list[list[int]]
    n_paired: int
    n_unpaired: int
    n_discordant: int
    tested_decisions: tuple[str, ...]
    test: DecisionTestKind | None
    statistic: float | None
    dof: int | None
    p: float | None
    not_computable: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return dataclass_dict(self)


def paired_decision_test(reference: Sequence[str | None], treatment: Sequence[str | None],
                         levels: Sequence[str],
                         conditions: tuple[str, str] = ("reference", "treatment"),
                         ) -> PairedDecisionTest:
    """Test whether two conditions give the same sessions' decisions equally often.

    Args:
        reference, treatment: one decision per session, same sessions in the same order
            (``reference[i]`` and ``treatment[i]`` are session i); None where that
            condition's decision did not parse.
        levels: the decision vocabulary (e.g. advance, advance with reservations, do not
            advance).
        conditions: the two conditions' names, for ``counts`` and the reasons.

    Raises:
        ValueError: the two sides differ in length, or a decision is not in ``levels``
            (naming the decision and the session index).
    """
    if len(reference) != len(treatment):
        raise ValueError(f"{conditions[0]} and {conditions[1]} differ in length "
                         f"({len(reference)} vs {len(treatment)} sessions)")
    lv = tuple(levels)
    index = {k: i for i, k in enumerate(lv)}
    for name, side in zip(conditions, (reference, treatment), strict=True):
        for s, v in enumerate(side):
            if v is not None and v not in index:
                raise ValueError(f"{name}: session {s}: decision {v!r} is not one of {lv}")
    counts = {name: {k: sum(1 for v in side if v == k) for k in lv}
              for name, side in zip(conditions, (reference, treatment), strict=True)}
    tab = np.zeros((len(lv), len(lv)), dtype=int)
    n_unpaired = 0
    for r, t in zip(reference, treatment, strict=True):
        if r is None or t is None:
            n_unpaired += int(r is not None or t is not None)
            continue
        tab[index[r], index[t]] += 1
    n_paired = int(tab.sum())
    n_disc = n_paired - int(np.trace(tab))
    off = tab - np.diag(np.diag(tab))
    in_discord = [j for j in range(len(lv)) if off[j, :].sum() + off[:, j].sum() > 0]
    tested = tuple(lv[j] for j in in_discord)
    notes: list[str] = []
    if n_unpaired:
        notes.append(f"{n_unpaired} session(s) with a parsed decision under only one "
                     "condition left out of the paired test")

    def result(test: DecisionTestKind | None, stat: float | None, dof: int | None,
               p: float | None, why: str | None = None) -> PairedDecisionTest:
        nc = {} if why is None else dict.fromkeys(_FIELDS, why)
        if why is None and dof is None:
            nc["dof"] = "McNemar's exact test has no degrees of freedom"
        return PairedDecisionTest(conditions, lv, counts, tab.tolist(), n_paired, n_unpaired,
                                  n_disc, tested, test, stat, dof, p, nc, tuple(notes))

    empty = [c for c in conditions if sum(counts[c].values()) == 0]
    if empty:
        return result(None, None, None, None, f"no parsed decision under {empty[0]!r}")
    if n_paired == 0:
        return result(None, None, None, None, "no session has a parsed decision under both "
                      f"{conditions[0]!r} and {conditions[1]!r}")
    used = [lv[j] for j in range(len(lv)) if tab[j, :].sum() + tab[:, j].sum() > 0]
    if len(used) < 2:
        return result(None, None, None, None, f"every paired session received the same "
                      f"decision ({used[0]!r}) under both conditions: nothing to test")
    if n_disc == 0:
        return result(None, None, None, None, f"all {n_paired} paired sessions received the "
                      "same decision under both conditions (no discordant session): no "
                      "evidence of a difference, nothing to test")
    concordant_only = [k for k in used if k not in tested]
    if concordant_only:
        notes.append(f"decision(s) {concordant_only} given only in sessions decided the same "
                     "under both conditions: left out of the test (they add nothing to the "
                     "statistic and would make Stuart-Maxwell's covariance singular)")
    sub = tab[np.ix_(in_discord, in_discord)]
    from statsmodels.stats.contingency_tables import SquareTable, mcnemar

    if len(in_discord) == 2:
        if len(used) > 2:
            notes.append("two decisions left in discordant sessions: McNemar's exact test "
                         "instead of Stuart-Maxwell")
        res = mcnemar(sub, exact=True)
        return result("mcnemar_exact", float(res.statistic), None, float(res.pvalue))
    singular = (f"Stuart-Maxwell's covariance of the margin differences is singular for the "
                f"table {sub.tolist()} over {list(tested)}: the discordant sessions do not "
                "link every decision with the others")
    if np.linalg.matrix_rank(_margin_covariance(sub)) < len(in_discord) - 1:
        return result(None, None, None, None, singular)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = SquareTable(sub, shift_zeros=False).homogeneity(method="stuart_maxwell")
    stat, p = float(res.statistic), float(res.pvalue)
    if caught or not (np.isfinite(stat) and np.isfinite(p)):  # pragma: no cover - guarded
        return result(None, None, None, None, singular)
    if n_disc < 25:
        notes.append(f"only {n_disc} discordant sessions: Stuart-Maxwell's chi-square "
                     "reference distribution is a rough approximation at this size (for two "
                     "decisions the exact test is the usual advice below 25)")
    return result("stuart_maxwell", stat, int(res.df), p)


def _margin_covariance(table: np.ndarray) -> np.ndarray:
    """Stuart-Maxwell's covariance of the k - 1 margin differences, in counts (the last level
    left out): V_ii = n_i. + n_.i - 2 n_ii, V_ij = -(n_ij + n_ji)."""
    t = np.asarray(table, dtype=float)[:-1, :-1]
    full = np.asarray(table, dtype=float)
    v = -(t + t.T)
    np.fill_diagonal(v, full.sum(1)[:-1] + full.sum(0)[:-1] - 2 * np.diag(t))
    return v
