"""Check 3: impact ratios of the candidate by category (four-fifths selection rates, LL144
scoring rates), each held to a disparity test in the candidate and, unless the policy says
``block_existing``, a test that the category's own rate fell since the previous release."""

from __future__ import annotations

import pandas as pd

from rig.gate.campaigns import Campaign
from rig.gate.policy import ImpactPolicy
from rig.gate.result import CheckKind, GateCheck
from rig.stats.paired import CampaignScores
from rig.stats.proportions import mcnemar_one_sided, two_proportion_ztest
from rig.stats.rates import (
    CategoryRate,
    RateTable,
    category_labels,
    scoring_rate_table,
    selection_rate_table,
)
from rig.stats.rows import require_columns


def _averaged_with_segments(scores: CampaignScores, raw: pd.DataFrame, ip: ImpactPolicy,
                            source: str) -> pd.DataFrame:
    avg = scores.averaged()
    extra = [c for c in ip.by if c not in avg.columns]
    if extra:
        require_columns(raw, extra, "impact.by of the gate policy")
        seg = raw.loc[scores.calls.index, extra]
        seg = seg.assign(answer_id=scores.calls["answer_id"],
                         profile_id=scores.calls["profile_id"])
        first = seg.groupby(["answer_id", "profile_id"])[extra].first().reset_index()
        avg = avg.merge(first, on=["answer_id", "profile_id"], how="left")
    avg.attrs["source"] = source
    return avg


def _rate_table(avg: pd.DataFrame, kind: str, ip: ImpactPolicy) -> RateTable:
    if kind == "selection":
        return selection_rate_table(avg, ip.by, "decision", min_share=ip.min_share,
                                    threshold=ip.threshold, pooled=ip.pooled, min_n=ip.min_n)
    return scoring_rate_table(avg, ip.by, "score", min_share=ip.min_share,
                              threshold=ip.threshold, pooled=ip.pooled, min_n=ip.min_n)


def _row_hits(avg: pd.DataFrame, kind: str, by: tuple[str, ...]) -> pd.DataFrame:
    """Per (answer, profile) row: its category and whether it is a hit (advanced, or scored
    strictly above this release's median)."""
    if kind == "selection":
        hit = avg["advance"]
    else:
        hit = (avg["score"] > avg["score"].median()).astype(float)
    return pd.DataFrame({"answer_id": avg["answer_id"], "profile_id": avg["profile_id"],
                         "category": category_labels(avg, by), "hit": hit}).dropna()


def _fall_tests(now: pd.DataFrame, before: pd.DataFrame) -> dict[str, tuple[float | None,
                                                                          str]]:
    """Per category, a one-sided test that its rate fell: exact McNemar on the rows matched by
    (answer, profile) across the releases; a one-sided pooled two-proportion z-test when no
    row matches."""
    keys = ["answer_id", "profile_id", "category"]
    both = now.merge(before, on=keys, suffixes=("_now", "_before"))
    lost = ((both["hit_before"] == 1) & (both["hit_now"] == 0)).groupby(both["category"]).sum()
    gained = ((both["hit_before"] == 0) & (both["hit_now"] == 1)).groupby(
        both["category"]).sum()
    matched = both.groupby("category").size()
    n_now, x_now = now.groupby("category")["hit"].size(), now.groupby("category")["hit"].sum()
    n_bef = before.groupby("category")["hit"].size()
    x_bef = before.groupby("category")["hit"].sum()
    out: dict[str, tuple[float | None, str]] = {}
    for cat in set(n_now.index) | set(n_bef.index):
        m = int(matched.get(cat, 0))
        if m:
            b, c = int(lost.get(cat, 0)), int(gained.get(cat, 0))
            out[cat] = (mcnemar_one_sided(b, c),
                        f"exact McNemar on {m} matched rows: {b} lost, {c} gained")
        elif cat not in n_now.index or cat not in n_bef.index:
            out[cat] = (None, "the category has no rows in one of the releases")
        else:
            z = two_proportion_ztest(float(x_bef[cat]), int(n_bef[cat]), float(x_now[cat]),
                                     int(n_now[cat]), alternative="larger")
            out[cat] = (z.p_value, "two-proportion z-test (no matched rows)"
                        + (f": {z.reason}" if z.reason else ""))
    return out


def impact_checks(cand: CampaignScores, prev: CampaignScores, candidate: Campaign,
                  previous: Campaign, ip: ImpactPolicy) -> list[GateCheck]:
    """One line per category of the candidate other than the highest, per kind of rate in
    ``ip.kinds``: its impact ratio, the previous release's, and the p-value that decides
    (see the module docstring of :mod:`rig.gate`); :func:`rig.gate.evaluate.decide` blocks."""
    ca = _averaged_with_segments(cand, candidate.rows, ip, candidate.name)
    pa = _averaged_with_segments(prev, previous.rows, ip, previous.name)
    out = []
    for kind in ip.kinds:
        table, old_table = _rate_table(ca, kind, ip), _rate_table(pa, kind, ip)
        ref = table.reference_group
        if ref is None:
            continue
        falls = _fall_tests(_row_hits(ca, kind, ip.by), _row_hits(pa, kind, ip.by)) \
            if not ip.block_existing else {}
        out += [_category_check(kind, table, cat, ref, old_table.group(cat.category), falls, ip)
                for cat in table.by_group if not cat.is_reference]
    return out


def _category_check(kind: str, table: RateTable, cat: CategoryRate, ref: CategoryRate,
                    old: CategoryRate | None, falls: dict[str, tuple[float | None, str]],
                    ip: ImpactPolicy) -> GateCheck:
    """The line of one category ``cat`` against the reference ``ref`` (``old``: the same
    category in the previous release)."""
    check: CheckKind = "selection_rate_ratio" if kind == "selection" else "scoring_rate_ratio"
    pr = None if old is None else old.impact_ratio
    if cat.impact_ratio is None:
        return GateCheck(check, cat.category, None, pr, ip.threshold, None, None, False, False,
                         cat.not_computable.get("impact_ratio", "impact ratio not computable"))
    p_disp = cat.p_fisher if ip.test == "fisher" else cat.p_z
    p_fall, fall_note = (None, "fall test: not needed")
    if old is not None and not ip.block_existing:
        p_fall, fall_note = falls.get(cat.category, (None, "no rows to compare"))
    volume = cat.n >= ip.min_n and ref.n >= ip.min_n
    reason = (f"{kind} rate ratio {cat.impact_ratio:.3f} vs {table.reference} "
              f"(was {'n/a' if pr is None else f'{pr:.3f}'}; threshold "
              f"{ip.threshold:g}; n {cat.n} and {ref.n}, min_n {ip.min_n})")
    if ip.block_existing or old is None:
        pval = p_disp
    elif p_fall is None or p_disp is None:
        pval = None
    else:
        pval = max(p_disp, p_fall)  # intersection-union: both must reject
    if p_disp is None:
        reason += "; disparity test not computable: " + cat.not_computable.get("z", "")
    detail = {"rate": cat.rate, "reference": table.reference,
              "reference_rate": ref.rate, "n": cat.n, "reference_n": ref.n,
              "z": cat.z, "p_z": cat.p_z, "p_fisher": cat.p_fisher,
              "p_disparity": p_disp, "p_fall": p_fall, "fall_test": fall_note,
              "previous_rate": None if old is None else old.rate,
              "volume": volume, "small_sample": cat.small_sample,
              "existing_breach": bool(pr is not None and pr < ip.threshold)}
    return GateCheck(check, cat.category, cat.impact_ratio, pr, ip.threshold, pval, None,
                     False, True, reason, detail)
