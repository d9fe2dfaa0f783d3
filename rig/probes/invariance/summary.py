"""The summary of an invariance run from its rows (pure, so ``rig probe summarize`` can
rewrite it): per perturbation and measure the paired test, Bonferroni-corrected over the
measures (:func:`~rig.stats.comparisons.bonferroni_paired`); the violation rates per
perturbation and per kind (:func:`violation_rate`)."""

from __future__ import annotations

import pandas as pd

from rig.probes.invariance.assessment import MASK
from rig.probes.measures import MEASURES
from rig.stats.common import jsonable
from rig.stats.comparisons import bonferroni_paired


def violation_rate(tests: list[dict]) -> dict:
    """The violation rate of some paired tests (each a ``MeasureTest.to_dict()``, its
    ``violated`` True, False or None when untestable): ``n_tests``, ``n_tested``,
    ``n_violated`` and ``violation_rate`` = n_violated / n_tested (None, with a reason in
    ``not_computable``, when none could be tested)."""
    tested = [t for t in tests if t["violated"] is not None]
    n_v = sum(1 for t in tested if t["violated"])
    out = {"n_tests": len(tests), "n_tested": len(tested), "n_violated": n_v,
           "violation_rate": n_v / len(tested) if tested else None}
    if not tested:
        out["not_computable"] = {"violation_rate": "no measure could be tested"}
    return out


def summarize(rows: pd.DataFrame, meta: dict) -> dict:
    """The summary of a run from its rows (pure)."""
    summary = {k: meta[k] for k in ("probe", "scorer", "prompt_version", "name_set", "alpha",
                                    "seed", "measures", "measure_units", "campaign",
                                    "instruction")}
    summary.update({
        "n_pairs": len(rows),
        "n_failures": int((rows["reference_parse_status"] != "ok").sum()
                           + (rows["perturbed_parse_status"] != "ok").sum()) if len(rows)
        else 0,
        "violation_rate": "share of a perturbation's measures whose paired test (the "
                          "t-test; the exact sign test when every pair differs by the same "
                          "non-zero amount), Bonferroni-corrected over the measures, has "
                          "p < alpha",
        "difference": "perturbed - reference",
        "masking": f"the candidate's name in each assessment replaced by {MASK!r} before it "
                   "is measured (full name, first name, surname; any case)",
        "by_perturbation": {}, "by_kind": {},
    })
    kinds = meta["kinds"]
    for pert in meta["perturbations"]:
        r = rows[rows["perturbation"] == pert]
        ok = r[r["scored"].astype(bool)]
        tests = bonferroni_paired(
            {m: ok[f"reference_{m}"].to_numpy(dtype=float) for m in MEASURES},
            {m: ok[f"perturbed_{m}"].to_numpy(dtype=float) for m in MEASURES},
            meta["alpha"])
        td = [t.to_dict() for t in tests]
        changed = ok["reply_changed"].astype(bool)
        summary["by_perturbation"][pert] = {
            "kind": kinds[pert], "n_pairs": len(r), "n_scored": len(ok),
            "n_failures": int((r["reference_parse_status"] != "ok").sum()
                               + (r["perturbed_parse_status"] != "ok").sum()),
            "changed_reply_rate": float(changed.mean()) if len(ok) else None,
            "tests": td, **violation_rate(td)}
    for kind in ("demographic", "control", "audio"):
        per = [d for d in summary["by_perturbation"].values() if d["kind"] == kind]
        if per:
            summary["by_kind"][kind] = {
                "perturbations": [p for p, d in summary["by_perturbation"].items()
                                  if d["kind"] == kind],
                **violation_rate([t for d in per for t in d["tests"]])}
    return jsonable(summary)  # type: ignore[return-value]
