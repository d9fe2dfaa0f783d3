"""``rig scorer validate``: the judge against the bank's reference grades (a thin layer over
:mod:`rig.scorer.validate`); ``rig scorer calibrate``: a calibration of the judge fitted on
those gradings and measured out of sample (:mod:`rig.scorer.calibrated`). Mounted by
:mod:`rig.cli`. Exit codes: 0 done, 2 bad input or a scorer that cannot run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from rig.cli.common import ExecutorOpt, RayAddressOpt, RigTyper, WorkersOpt, console, fail, job_spec
from rig.console import print_table, progress_bar, stdout_console
from rig.errors import ConfigError, RigError
from rig.paths import DEFAULTS

scorer_app = RigTyper(no_args_is_help=True, pretty_exceptions_show_locals=False,
                      help="The scorer (judge): validity against the bank's grades.")
_MODES = ("argmax", "expected")


def _modes(value: str | None, default: str) -> list[str]:
    modes = [m.strip() for m in (value or default).split(",") if m.strip()]
    bad = [m for m in modes if m not in _MODES]
    if bad or not modes or len(set(modes)) != len(modes):
        raise ConfigError("--modes", "", f"a comma-separated list of {', '.join(_MODES)} "
                          "without repeats", value)
    return modes


def _table(result: dict) -> Table:
    cols = [(m, d["validity"]) for m, d in result["modes"].items()]
    if "inter_grader" in result:
        cols.append(("graders (ceiling)", result["inter_grader"]["validity"]))
    lang = result.get("language")
    t = Table(title=f"judge validity on {result['bank']}"
              + (f", language {lang}" if lang else "") + f" ({result['pipeline_version']})")
    t.add_column("figure")
    for name, _ in cols:
        t.add_column(name, justify="right")

    def f(v, d=3):
        if v is None:
            return "n/a"
        if isinstance(v, bool):
            return "yes" if v else "no"
        if isinstance(v, list):
            return "[" + ", ".join(f(x, 2) for x in v) + "]"
        return f"{v:.{d}f}" if isinstance(v, float) else str(v)

    for key, label in (("n_answers", "answers"), ("spearman", "Spearman"),
                       ("spearman_ci95", "  95% CI"), ("pearson", "Pearson"),
                       ("mae_points", "mean abs. error"),
                       ("decision_agreement", "decision agreement"),
                       ("cohen_kappa", "Cohen's kappa"), ("tier_order_rate", "tier order"),
                       ("distinct_scores", "distinct scores"), ("retest_sd", "test-retest SD"),
                       ("verdict", "verdict")):
        if key == "retest_sd":  # identical repeats: a deterministic scorer, not a 0 SD
            t.add_row(label, *("identical" if v.get("retest_identical") else f(v.get(key))
                               for _, v in cols))
            continue
        t.add_row(label, *(f(v.get(key)) for _, v in cols))
    t.add_row("s per grading (median)",
              *(f(d["seconds_per_grading"]["median"], 2) for d in result["modes"].values()),
              *([""] if "inter_grader" in result else []))
    return t


@scorer_app.command("validate")
def validate(
    answers: Annotated[Path, typer.Option(help="answer bank folder")] = DEFAULTS.answer_bank
    / "core",
    pipeline: Annotated[Path, typer.Option(help="pipelines/<name>.yaml (its scorer settings)")
                        ] = DEFAULTS.pipelines / "reference.yaml",
    modes: Annotated[str | None, typer.Option(
        help="scoring modes to compare, comma-separated: argmax, expected (default: the "
             "pipeline's)")] = None,
    repeats: Annotated[int, typer.Option(min=1, help="gradings per script (test-retest)")] = 1,
    out: Annotated[Path | None, typer.Option(
        help="write validity.json, answers.csv and report.html here")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print validity.json to stdout")
                       ] = False,
    progress: Annotated[bool, typer.Option(help="show a progress bar")] = True,
    executor: ExecutorOpt = "serial",
    workers: WorkersOpt = 1,
    ray_address: RayAddressOpt = None,
) -> None:
    """Grade every script of the bank (the oracle path, no audio) and compare the judge with
    the bank's reference grades: correlation, error, decision agreement, tier order. The
    figures are the bank's language's (``language`` in the JSON and the title): run it once
    per language bank (answer_bank/es, fr, de; es_twin against answer_bank/mini's
    q01_conflict for the same content in two languages; docs/measurement.md)."""
    from rig.answers import load_bank
    from rig.pipeline import load_pipeline, pipeline_version
    from rig.scorer.validate import (
        PipelineScorers,
        summarise,
        validate_bank,
        write_validation,
    )

    spec = job_spec(executor, workers, ray_address)
    try:
        bank = load_bank(answers)
        pipe = load_pipeline(pipeline)
        chosen = _modes(modes, pipe.scorer.mode)
        if out is not None and out.exists() and not out.is_dir():
            raise ConfigError(out, "--out", "exists and is not a folder", str(out))
        versions = {}

        for mode in chosen:
            versions[mode] = pipeline_version(pipe.model_copy(update={
                "scorer": pipe.scorer.model_copy(update={"mode": mode})}))

        total = len(bank.answers()) * len(chosen) * repeats
        with progress_bar(progress and not as_json, console=console, transient=True) as bar:
            task = bar.add_task("gradings", total=total)
            run = validate_bank(bank, PipelineScorers(pipe), chosen, repeats,
                                on_grading=lambda _row: bar.advance(task), executor=spec)
        result = summarise(run)
    except RigError as exc:
        fail(exc)
    result["pipeline_version"] = versions[chosen[0]] if len(chosen) == 1 else None
    result["pipeline_versions"] = versions
    result["answers_path"] = str(answers)
    result["language"] = bank.meta.language  # the bank's: rubric, question and scripts
    if out is not None:
        files = write_validation(out, result)
    from rig.scorer.bank_validity import record

    kept = record(result, bank.meta.version)  # campaigns of this bank and version state it
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    print_table(_table(result), min_width=100)
    if out is not None:
        stdout_console().print("wrote " + ", ".join(str(p) for p in files.values()))
    stdout_console().print(f"kept as the bank-wide verdict that campaigns of {result['bank']!r} "
                           f"under these pipeline versions state: {', '.join(map(str, kept))}",
                           markup=False, highlight=False)


@scorer_app.command("calibrate")
def calibrate(
    validity: Annotated[Path, typer.Argument(help="a folder written by rig scorer validate "
                                                  "--out (its answers.csv)")],
    out: Annotated[Path, typer.Option(help="the calibration.json to write")],
    method: Annotated[str, typer.Option(help="linear or isotonic")] = "linear",
    mode: Annotated[str, typer.Option(help="the gradings' scoring mode")] = "expected",
    as_json: Annotated[bool, typer.Option("--json", help="print the figures as JSON")
                       ] = False,
) -> None:
    """Fit a map of the judge's score onto the reference scale on VALIDITY's gradings, per
    question without that question (leave one question out), and print the out-of-sample
    Spearman, MAE and decision agreement before and after. Name the file in a pipeline's
    scorer.calibration to grade with it (a new pipeline_version)."""
    from rig.paths import write_text_atomic
    from rig.scorer.calibrated import build_calibration

    if method not in ("linear", "isotonic"):
        fail(ConfigError("--method", "", "linear or isotonic", method, True))
    try:
        cal = build_calibration(validity, method, mode)  # type: ignore[arg-type]
    except RigError as exc:
        fail(exc)
    write_text_atomic(out, cal.model_dump_json(indent=1) + "\n")
    fig = cal.out_of_sample
    if as_json:
        typer.echo(json.dumps(fig, indent=2))
        return
    t = Table(title=f"{method} calibration, leave one question out ({fig['n_answers']} "
              f"answers, {fig['n_questions']} questions)")
    for h in ("", "Spearman", "MAE (points)", "decision agreement", "bias (points)"):
        t.add_column(h)
    for k in ("before", "after"):
        f = fig[k]
        t.add_row(k, f"{f['spearman']:.3f}", f"{f['mae_points']:.1f}",
                  f"{f['decision_agreement']:.3f}", f"{f['mean_bias_points']:+.1f}")
    print_table(t)
    stdout_console().print(f"wrote {out}", highlight=False)
