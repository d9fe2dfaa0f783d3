"""``rig scorer validate``: grade every script of an answer bank (the oracle path, no audio)
and measure the judge against the bank's reference grades (:mod:`rig.stats.validity`).

Per scoring mode and repeat, every answer's clean script is graded with seed = repeat. A
repeat is a fresh grading: the scorer's in-process memo is cleared and the answers are taken
in a new (seeded) order, so the model's prompt cache holds something else before each
prompt; identical repeats then show that a grade does not depend on what came before it.

Outputs (:func:`write_validation`): ``validity.json`` (the figures per mode, the bank's own
inter-grader figures, and one row per answer and repeat), ``answers.csv`` (those rows) and
``report.html`` (the figures and a scatter of judge vs reference grade, offline).
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from rig.answers import Answer, AnswerBank, Question
from rig.jsonfile import loads_json
from rig.paths import write_text_atomic
from rig.scorer.base import Scorer
from rig.stats.validity import inter_grader, judge_validity

if TYPE_CHECKING:
    from rig.campaign.executors.base import ExecutorSpec

_NOTE_POINTS = re.compile(r"\ba:\s*((?:[a-z_-]+\s+\d+(?:,\s*)?)+)")


def reference_criterion_points(question: Question, answer: Answer) -> dict[str, int] | None:
    """Grader ``a``'s points per criterion, read from the answer's ``note``
    (``a: situation 20, approach 33, ...`` in rubric order, names shortened). None when the
    note has no such list, its names do not match the rubric's ids in order, or its points
    do not add up to grader a's score."""
    m = _NOTE_POINTS.search(answer.note or "")
    if not m:
        return None
    items = [(n.replace("-", "_"), p) for n, p in re.findall(r"([a-z_-]+)\s+(\d+)", m.group(1))]
    if len(items) != len(question.rubric):
        return None
    out = {}
    for (name, pts), c in zip(items, question.rubric, strict=True):
        if not (c.id.startswith(name) or name in c.id.split("_")):
            return None
        out[c.id] = int(pts)
    a = [g.score for g in answer.reference_grades if g.grader_id.endswith("-a")]
    if a and abs(sum(out.values()) - a[0]) > 0.5:
        return None
    return out


@dataclass
class ValidationRun:
    """What :func:`validate_bank` graded: ``rows`` (one per mode, answer and repeat)."""
    bank_name: str
    modes: list[str]
    repeats: int
    rows: list[dict] = field(default_factory=list)


def grading_row(scorer: Scorer, mode: str, r: int, q: Question, a: Answer) -> dict:
    """One row of ``answers.csv``: ``a``'s clean script graded by ``scorer`` with seed ``r``.

    Raises:
        RigError: the scorer cannot run (missing model package, unsupported mode)."""
    res = scorer.score(q, a.clean_text, r)
    ref_pts = reference_criterion_points(q, a)
    return {
        "mode": mode, "repeat": r, "answer_id": a.answer_id,
        "question_id": q.question_id, "tier": a.tier, "cutoff": q.cutoff,
        "reference_score": a.reference_score,
        **{f"grade_{g.grader_id}": g.score for g in a.reference_grades},
        "score": res.score, "parse_status": res.parse_status,
        "error": res.error, "seconds": res.seconds, "raw": res.raw,
        "top_prob_min": res.top_prob_min,
        "entropy_mean_bits": res.entropy_mean_bits,
        "criteria_json": json.dumps([c.to_dict() for c in res.criteria or ()]),
        "reference_points_json": json.dumps(ref_pts) if ref_pts else None,
    }


@dataclass(frozen=True)
class PipelineScorers:
    """``make_scorer`` for :func:`validate_bank` that pickles (for ``--workers``): the scorer
    of ``pipeline`` (a :class:`rig.pipeline.PipelineConfig`) in the given mode."""
    pipeline: object

    def __call__(self, mode: str) -> Scorer:
        from rig.scorer.factory import build_scorer

        pipe = self.pipeline
        cfg = pipe.model_copy(update={"scorer": pipe.scorer.model_copy(  # type: ignore
            update={"mode": mode})})
        return build_scorer(cfg.scorer)


def grading_worker(make_scorer: Callable[[str], Scorer]) -> Callable[[tuple], dict]:
    """A validate worker (:mod:`rig.jobs`): builds each mode's scorer once, then grades
    ``(mode, repeat, question, answer)`` payloads into :func:`grading_row` rows (the scorer's
    memo cleared when the repeat changes, as the serial loop does)."""
    scorers: dict[str, Scorer] = {}
    last: list[tuple | None] = [None]

    def grade(payload: tuple) -> dict:
        mode, r, q, a = payload
        if mode not in scorers:
            scorers[mode] = make_scorer(mode)
        if last[0] != (mode, r):
            scorers[mode]._memo.clear()
            last[0] = (mode, r)
        return grading_row(scorers[mode], mode, r, q, a)

    return grade


def validate_bank(bank: AnswerBank, make_scorer: Callable[[str], Scorer],
                  modes: Sequence[str], repeats: int = 1,
                  on_grading: Callable[[dict], None] | None = None,
                  executor: ExecutorSpec | None = None) -> ValidationRun:
    """Grade every answer's clean script in each mode, ``repeats`` times (seed = repeat).

    ``executor``: where the gradings run (:mod:`rig.jobs`; None or serial: this process, in
    the order below); on local or Ray workers ``make_scorer`` must pickle
    (:class:`PipelineScorers`) and each worker builds each mode's scorer once. The rows come
    out in the serial order (mode, repeat, then the repeat's answer order) whatever ran them.

    Raises:
        RigError: the scorer cannot run (missing model package, unsupported mode).
    """
    run = ValidationRun(bank.meta.name, list(modes), repeats)
    pairs = bank.answers()
    plan = []
    for mode in modes:
        for r in range(repeats):
            order = (np.arange(len(pairs)) if r == 0
                     else np.random.default_rng(r).permutation(len(pairs)))
            plan += [(mode, r, int(i)) for i in order]
    if executor is not None and not executor.in_driver():
        from rig.jobs import Item, JobSetup, run_items

        items = [Item(f"{m}/{r}/{i}", (m, r, *pairs[i]), m) for m, r, i in plan]
        got: dict[str, dict] = {}

        def keep(item_id: str, row: dict) -> None:
            got[item_id] = row
            if on_grading:
                on_grading(row)

        run_items(items, JobSetup(grading_worker, (make_scorer,)), executor, keep)
        run.rows = [got[it.item_id] for it in items]
        return run
    grade = grading_worker(make_scorer)
    for m, r, i in plan:
        row = grade((m, r, *pairs[i]))
        run.rows.append(row)
        if on_grading:
            on_grading(row)
    return run


def criterion_agreement(rows: pd.DataFrame) -> dict:
    """Judge vs grader a per (answer, criterion), as shares of the criterion's maximum:
    mean absolute error, Pearson correlation and the number of pairs; and the same per
    criterion id. Rows whose note gives no per-criterion points are left out."""
    pairs = []
    where = rows.attrs.get("source", "rows")
    for _, r in rows.iterrows():
        if not isinstance(r.get("reference_points_json"), str) or not isinstance(
                r.get("criteria_json"), str):
            continue
        ref = loads_json(where, r["reference_points_json"], "reference_points_json")
        for c in loads_json(where, r["criteria_json"], "criteria_json"):
            if c["criterion_id"] in ref and c["points_max"]:
                pairs.append((c["criterion_id"], c["points"] / c["points_max"],
                              ref[c["criterion_id"]] / c["points_max"]))
    if not pairs:
        return {"n_pairs": 0, "note": "no per-criterion reference points"}
    df = pd.DataFrame(pairs, columns=["criterion_id", "judge", "reference"])
    corr = (float(np.corrcoef(df["judge"], df["reference"])[0, 1])
            if df["judge"].std() > 0 and df["reference"].std() > 0 else None)
    by = {cid: {"n": len(g), "mae_share": float((g["judge"] - g["reference"]).abs().mean())}
          for cid, g in df.groupby("criterion_id")}
    return {"n_pairs": len(df), "mae_share": float((df["judge"] - df["reference"]).abs().mean()),
            "pearson": corr, "by_criterion": by}


def summarise(run: ValidationRun, n_boot: int = 2000, seed: int = 0) -> dict:
    """The figures of ``validity.json``: per mode the judge's validity (repeat-averaged
    scores per answer), per-criterion agreement, seconds per grading and failures; the
    bank's inter-grader ceiling; the rows."""
    df = pd.DataFrame(run.rows)
    out: dict = {"bank": run.bank_name, "repeats": run.repeats, "modes": {},
                 "score": "the judge's score of each clean script, averaged over repeats"}
    for mode in run.modes:
        m = df[df["mode"] == mode]
        ok = m[m["parse_status"] == "ok"]
        per = (m.groupby("answer_id", sort=False)
               .agg(question_id=("question_id", "first"), tier=("tier", "first"),
                    cutoff=("cutoff", "first"), reference_score=("reference_score", "first"),
                    score=("score", "mean")).reset_index())
        reps = [list(g["score"]) for _, g in ok.groupby("answer_id")]
        v = judge_validity(per, n_boot=n_boot, seed=seed,
                           repeat_scores=reps if run.repeats > 1 else None)
        secs = [s for s in m["seconds"] if s and s > 0]
        out["modes"][mode] = {
            "validity": v.to_dict(),
            "criteria": criterion_agreement(m[m["repeat"] == 0]),
            "seconds_per_grading": {
                "median": statistics.median(secs) if secs else None,
                "mean": statistics.fmean(secs) if secs else None,
                "max": max(secs) if secs else None, "n": len(secs)},
            "n_gradings": len(m), "n_failures": int((m["parse_status"] != "ok").sum()),
            "failures": m.loc[m["parse_status"] != "ok", ["answer_id", "repeat",
                                                         "parse_status", "error"]]
            .to_dict("records"),
        }
    graders = sorted(c for c in df.columns if c.startswith("grade_"))
    if len(graders) >= 2:
        first = df[(df["mode"] == run.modes[0]) & (df["repeat"] == 0)]
        ig = inter_grader(first, graders[0], graders[1], n_boot=n_boot, seed=seed)
        out["inter_grader"] = {
            "graders": [g.removeprefix("grade_") for g in graders[:2]],
            "validity": ig.to_dict(),
            "caveat": ("both reference passes come from the same authoring process, so their "
                       "agreement is a ceiling for this bank, not independent evidence of "
                       "inter-rater reliability (answer_bank/README.md)")}
    out["answers"] = [{k: None if isinstance(v, float) and v != v else v for k, v in r.items()}
                      for r in run.rows]  # exact floats: the figures recompute from them
    return out


def write_validation(out_dir: Path, result: dict) -> dict[str, Path]:
    """Write ``validity.json``, ``answers.csv`` and ``report.html`` into ``out_dir``."""
    from rig.scorer.validate_report import write_validity_report

    out_dir.mkdir(parents=True, exist_ok=True)
    vpath = out_dir / "validity.json"
    write_text_atomic(vpath, json.dumps(result, indent=2))
    cpath = out_dir / "answers.csv"
    pd.DataFrame(result["answers"]).to_csv(cpath, index=False)
    rpath = write_validity_report(out_dir / "report.html", result)
    return {"validity": vpath, "answers": cpath, "report": rpath}
