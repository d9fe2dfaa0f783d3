"""``rig sweep CAMPAIGN_DIR --vary PATH=V1,V2 ... --out DIR``: which interviewer setting closes
each profile's gap, and what it costs (a thin layer over :mod:`rig.sweep`).

Exit codes: 0 success, 2 bad input (a ``--vary`` the pipeline refuses, a folder that is not a
finished campaign), 130 interrupted (Ctrl-C; rerun the same command to resume).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from rig.cli.common import (
    ExecutorOpt,
    RayAddressOpt,
    WorkersOpt,
    console,
    job_spec,
    or_fail,
)
from rig.console import print_table, stdout_console


def print_sweep(sweep: dict) -> None:
    """The verdict table on stdout."""
    t = Table(title=f"sweep of {sweep['campaign_id']} (margin +-{sweep['margin_points']:g})")
    for c in ("variant", "profile", "delta", "95% CI (t)", "campaign", "trunc.", "WER mean",
              "WER pooled", "dead air +s", "verdict"):
        t.add_column(c, justify="left" if c in ("variant", "profile", "verdict") else "right")

    def f(v, d=1):
        return "n/a" if v is None else f"{v:.{d}f}"

    for r in sweep["table"]:
        ci = r["ci95"]
        t.add_row(r["variant"], r["profile_id"], f(r["mean_delta"]),
                  f"[{f(ci[0])}, {f(ci[1])}]" if ci else "n/a", f(r["campaign_mean_delta"]),
                  f(r["truncation_rate"], 2), f(r["wer_mean"], 3),
                  f(r.get("wer_pooled"), 3), f(r["dead_air_added_s"], 2), r["verdict"])
    print_table(t, min_width=130)


@contextlib.contextmanager
def resumable(out: Path):
    """On Ctrl-C (or SIGTERM) inside, say how to resume (the calls made are logged) and exit 130
    (143 after SIGTERM), as an interrupted campaign does, with no traceback."""
    from rig.sigint import interrupted_code, sigterm_as_interrupt

    try:
        with sigterm_as_interrupt():
            yield
    except KeyboardInterrupt:
        console.print(Text(f"interrupted: every call the sweep finished is logged in "
                           f"{out}/variants; rerun the same command to resume",
                           style="yellow"))
        raise typer.Exit(interrupted_code()) from None


def sweep_command(
    campaign_dir: Annotated[Path, typer.Argument(help="a finished campaign's output folder")],
    vary: Annotated[list[str], typer.Option(help="DOTTED.PATH=V1,V2,... a pipeline field and "
                                            "the values to try (repeatable)")],
    out: Annotated[Path, typer.Option(help="output folder (resumes if it has calls)")],
    grid: Annotated[bool, typer.Option(help="every combination of the --vary values "
                                       "(default: one setting at a time)")] = False,
    margin_points: Annotated[float, typer.Option(help="TOST equivalence margin, points: "
                                                 "`closes` needs |delta| < this")] = 5.0,
    profile: Annotated[list[str] | None, typer.Option(
        help="sweep only these profiles (the baseline always; repeatable)")] = None,
    n_boot: Annotated[int, typer.Option(min=100, help="bootstrap resamples")] = 2000,
    audio_cache: Annotated[Path | None, typer.Option(
        help="the render cache the campaign used (default $RIG_AUDIO_CACHE or audio/cache)"
    )] = None,
    progress: Annotated[bool, typer.Option(help="show a progress bar")] = True,
    executor: ExecutorOpt = "serial",
    workers: WorkersOpt = 1,
    ray_address: RayAddressOpt = None,
) -> None:
    """Vary the campaign's pipeline settings, re-running only the stages downstream of each
    change, and give per profile and variant the gap, its cost and a verdict."""
    from rig.sweep import parse_vary, run_sweep

    spec = job_spec(executor, workers, ray_address)
    varies = or_fail(lambda: [parse_vary(v) for v in vary])
    with resumable(out):
        res = or_fail(lambda: run_sweep(campaign_dir, varies, out, grid=grid,
                                        margin=margin_points, profile_ids=tuple(profile or ()),
                                        n_boot=n_boot, audio_cache_dir=audio_cache,
                                        progress=progress, executor=spec))
    print_sweep(res.sweep)
    stdout_console().print(f"{res.n_run} calls made in {res.seconds:.0f} s; wrote "
                           f"{out}/sweep.json, {out}/sweep.parquet, {out}/report.html",
                           markup=False, highlight=False)
