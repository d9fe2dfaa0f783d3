"""The embedded judge's validity and speed in both scoring modes, side by side in one run.

Grades every clean script of the bank (the oracle path, no audio) in ``argmax`` and
``expected`` mode with the reference pipeline's scorer, and prints per mode: Spearman and
Pearson with the reference grades, mean absolute error, decision agreement and Cohen's kappa,
tier order, distinct score values, and seconds per grading (median and max), then the ratio
of the modes' median seconds. The modes are interleaved per question (argmax then expected on
the same question) so a load change on the machine hits both alike; compare ratios, not
seconds, across machines. The bank's own inter-grader figures are printed as the ceiling.

    python benchmarks/judge_validity.py [--answers answer_bank/core] [--questions 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
from pathlib import Path

from rig.answers import load_bank
from rig.paths import DEFAULTS
from rig.pipeline import load_pipeline
from rig.scorer.factory import build_scorer
from rig.scorer.validate import ValidationRun, summarise, validate_bank

MODES = ("argmax", "expected")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--answers", type=Path, default=DEFAULTS.answer_bank / "core")
    ap.add_argument("--pipeline", type=Path, default=DEFAULTS.pipelines / "reference.yaml")
    ap.add_argument("--questions", type=int, default=0, help="first N questions (0 = all)")
    args = ap.parse_args()
    bank = load_bank(args.answers)
    pipe = load_pipeline(args.pipeline)
    scorers = {m: build_scorer(pipe.scorer.model_copy(update={"mode": m})) for m in MODES}
    questions = bank.questions[: args.questions] if args.questions else bank.questions
    run = ValidationRun(bank.meta.name, list(MODES), 1)
    for q in questions:  # interleaved: both modes see the same machine load
        one = dataclasses.replace(bank, questions=(q,))
        for m in MODES:
            run.rows += validate_bank(one, lambda _m, m=m: scorers[m], [m]).rows
    res = summarise(run)
    keys = [("n_answers", "answers", 0), ("spearman", "Spearman", 3), ("pearson", "Pearson", 3),
            ("mae_points", "mean abs. error", 1), ("decision_agreement", "decision agreement", 3),
            ("cohen_kappa", "Cohen's kappa", 3), ("tier_order_rate", "tier order", 3),
            ("distinct_scores", "distinct scores", 0)]
    cols = [*MODES, "graders (ceiling)"]
    vals = [res["modes"][m]["validity"] for m in MODES] + [res["inter_grader"]["validity"]]
    print(f"{'':22s}" + "".join(f"{c:>20s}" for c in cols))
    for k, label, d in keys:
        cells = ["n/a" if v.get(k) is None else f"{v[k]:.{d}f}" for v in vals]
        print(f"{label:22s}" + "".join(f"{c:>20s}" for c in cells))
    med = {}
    for m in MODES:
        secs = [r["seconds"] for r in run.rows if r["mode"] == m and r["seconds"]]
        med[m] = statistics.median(secs)
        print(f"{m}: {med[m]:.2f} s per grading (median), {max(secs):.2f} s max, "
              f"{res['modes'][m]['n_failures']} failures of {len(secs)}")
    print(f"median seconds per grading, expected / argmax: {med['expected'] / med['argmax']:.2f}")


if __name__ == "__main__":
    main()
