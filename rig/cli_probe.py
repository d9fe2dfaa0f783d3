"""``rig probe ...``: text-level probes of the scorer (a thin layer over :mod:`rig.probes`).

Mounted by :mod:`rig.cli` as ``rig probe``. Exit codes: 0 success, 2 bad input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from rig.errors import RigError
from rig.probes.data import DEFAULT_SHIBBOLETH

probe_app = typer.Typer(no_args_is_help=True, pretty_exceptions_show_locals=False,
                        help="Text-level probes: does the scorer grade style instead of "
                             "content? (hedging, accent markers)")
console = Console(stderr=True)

_MITIGATIONS = {"anti-bias": "anti_bias", "reasoning-fewshot": "reasoning_fewshot",
                "anti_bias": "anti_bias", "reasoning_fewshot": "reasoning_fewshot"}

ScorerOpt = Annotated[str, typer.Option(
    help="'embedded' (llama.cpp, the verified GGUF) or a YAML file: a pipeline, or scorer "
         "settings (backend: openai, base_url, model, api_key_env = the NAME of the "
         "environment variable holding the key)")]
SessionsOpt = Annotated[int, typer.Option(min=1, help="sessions per variant and condition")]
PerSessionOpt = Annotated[int, typer.Option(min=1, help="questions drawn per session")]
SeedOpt = Annotated[int, typer.Option(help="seed of the session draws (and the sampling "
                                           "above temperature 0)")]
MitigationOpt = Annotated[list[str] | None, typer.Option(
    help="mitigation prompt condition to run besides the plain prompt: anti-bias, "
         "reasoning-fewshot, or none (repeatable; default: both)")]
DataOpt = Annotated[Path, typer.Option(help="probe data folder")]
ProgressOpt = Annotated[bool, typer.Option(help="show a progress bar")]


def _fail(exc: Exception) -> None:
    console.print(Text("error: ", style="red") + Text(str(exc)), highlight=False)
    raise typer.Exit(2)


def _conditions(mitigation: list[str] | None) -> tuple[str, ...]:
    if not mitigation:
        return ("plain", "anti_bias", "reasoning_fewshot")
    if mitigation == ["none"]:
        return ("plain",)
    bad = [m for m in mitigation if m not in _MITIGATIONS]
    if bad:
        _fail(RigError(f"--mitigation: unknown {bad} (use anti-bias, reasoning-fewshot or "
                       "none)"))
    return ("plain", *dict.fromkeys(_MITIGATIONS[m] for m in mitigation))


def _print(summary: dict, out: Path) -> None:
    ref, treat = summary["reference"], summary["treatment"]
    t = Table(title=f"probe {summary['probe']}: {treat} (trt) vs {ref} (ref), per question",
              box=None, caption="t p: paired t-test; W p: Wilcoxon signed-rank; "
                                           "dec p: chi-square on the decisions")
    for col in ("condition", "n", "ref", "trt", "diff", "gap %", "t p", "W p", "d_z", "dec p"):
        t.add_column(col, justify="left" if col == "condition" else "right", no_wrap=True)

    def f(v, d=2):
        return "n/a" if v is None else (f"{v:.{d}f}" if isinstance(v, float) else str(v))

    for cond, d in summary["conditions_detail"].items():
        p = d["paired"]
        t.add_row(cond, f(p["n_pairs"]), f(p["mean_reference"]), f(p["mean_treatment"]),
                  f(p["mean_diff"]), f(p["gap_pct"], 1), f(p["t_p"], 3), f(p["wilcoxon_p"], 3),
                  f(p["cohens_dz"]), f(d["decisions"]["p"], 3))
    Console().print(t)
    Console().print(f"replies not scored: {summary['n_rating_failures']} ratings, "
                    f"{summary['n_decision_failures']} decisions")
    Console().print(f"wrote {out}/scores.parquet, {out}/decisions.parquet, "
                    f"{out}/summary.json, {out}/report.html")


def _run(probe: str, scorer: str, sessions: int, questions_per_session: int, seed: int,
         out: Path, mitigation: list[str] | None, data: Path, progress: bool) -> None:
    from rig.probes.core import build_scorer
    from rig.probes.shibboleth import ProbeSpec, run_probe

    spec = ProbeSpec(probe=probe, out_dir=out, data_path=data, n_sessions=sessions,
                     questions_per_session=questions_per_session, seed=seed,
                     conditions=_conditions(mitigation))  # type: ignore[arg-type]
    try:
        res = run_probe(spec, build_scorer(scorer), progress=progress)
    except RigError as exc:
        _fail(exc)
    console.print(f"{res.n_backend_calls} scorer calls, {res.seconds:.0f} s")
    _print(res.summary, res.out_dir)


@probe_app.command("hedging")
def hedging(
    scorer: ScorerOpt = "embedded",
    sessions: SessionsOpt = 20,
    questions_per_session: PerSessionOpt = 10,
    seed: SeedOpt = 0,
    out: Annotated[Path, typer.Option(help="output folder (resumes)")] = Path(
        "reports/probe-hedging"),
    mitigation: MitigationOpt = None,
    data: DataOpt = DEFAULT_SHIBBOLETH,
    progress: ProgressOpt = True,
) -> None:
    """Confident vs hedged answers with the same content: the scorer's gap."""
    _run("hedging", scorer, sessions, questions_per_session, seed, out, mitigation, data,
         progress)


@probe_app.command("accent-markers")
def accent_markers(
    scorer: ScorerOpt = "embedded",
    sessions: SessionsOpt = 20,
    questions_per_session: PerSessionOpt = 10,
    seed: SeedOpt = 0,
    out: Annotated[Path, typer.Option(help="output folder (resumes)")] = Path(
        "reports/probe-accent-markers"),
    mitigation: MitigationOpt = None,
    data: DataOpt = DEFAULT_SHIBBOLETH,
    progress: ProgressOpt = True,
) -> None:
    """Confident answers vs the same answers with articles dropped: the scorer's gap."""
    _run("accent-markers", scorer, sessions, questions_per_session, seed, out, mitigation,
         data, progress)


@probe_app.command("summarize")
def summarize_cmd(out: Annotated[Path, typer.Argument(help="a probe output folder")]) -> None:
    """Rewrite summary.json and report.html from the folder's parquet files."""
    import pandas as pd

    from rig.probes.report import write_shibboleth_report
    from rig.probes.shibboleth import summarize

    meta_path = out / "probe.json"
    if not meta_path.is_file():
        _fail(RigError(f"{meta_path}: not a probe folder (no probe.json)"))
    meta = json.loads(meta_path.read_text())
    summary = summarize(pd.read_parquet(out / "scores.parquet"),
                        pd.read_parquet(out / "decisions.parquet"), meta)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    write_shibboleth_report(out / "report.html", summary)
    _print(summary, out)


@probe_app.command("check")
def check(data: Annotated[Path, typer.Argument(help="probe data folder")] = DEFAULT_SHIBBOLETH
          ) -> None:
    """Validate a probe data folder (schema and equivalence checks); count its questions."""
    from rig.probes.data import CATEGORIES, load_shibboleth

    try:
        s = load_shibboleth(data)
    except RigError as exc:
        _fail(exc)
    t = Table(title=f"{data} ({s.version})")
    t.add_column("category")
    t.add_column("questions", justify="right")
    for cat, n in s.counts().items():
        t.add_row(CATEGORIES[cat][0], str(n))
    t.add_row("total", str(len(s.items)))
    Console().print(t)
    Console().print(f"{len(s.fewshot)} few-shot examples; every item passed the checks")
