"""``rig monitor``: thin command-line wrappers over :mod:`rig.monitor`.

Exit codes: 0 ok, 1 an alert was raised and ``--fail-on-alert`` was given, 2 bad input (the
message names the file, the field and the value; with ``ingest --strict``, also any skipped
file).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from rig.cli.common import RigTyper, fail
from rig.console import MessageConsole, stdout_console
from rig.errors import RigError

HELP = (
    "Per-segment production monitoring of live interview scores.\n\n"
    "ingest a folder of calls (recording + metadata) into a local DuckDB file; serve an HTTP "
    "endpoint that does the same per call; report a week per segment (volume, advance rate, "
    "mean score, impact and selection-rate ratios with z-tests, mean shift against the "
    "trailing weeks) with alerts; export per-call signals with hashed call ids.\n\n"
    "Segments are measured audio and line conditions and the interview's context, never "
    "inferred demographics. See docs/monitoring.md.\n\n"
    "Exit codes: 0 ok, 1 alert raised with --fail-on-alert, 2 bad input."
)

monitor_app = RigTyper(name="monitor", help=HELP, no_args_is_help=True,
                       add_completion=False)

DbOpt = Annotated[Path, typer.Option("--db", help="The monitoring database (DuckDB file).")]
ConfigOpt = Annotated[Path | None, typer.Option(
    "--config", help="A YAML file overriding the defaults (see `rig monitor segments`).")]
DEFAULT_DB = Path("monitor.duckdb")
err = MessageConsole(stderr=True, highlight=False)


def _config(path: Path | None):
    from rig.monitor.config import load_config

    try:
        return load_config(path)
    except RigError as exc:
        fail(exc)


@monitor_app.command("ingest")
def ingest_command(
    path: Annotated[Path, typer.Argument(help="A folder of recordings (.wav, .flac, .ulaw, "
                                              ".mulaw) with JSON sidecars or a manifest.")],
    db: DbOpt = DEFAULT_DB,
    manifest: Annotated[Path | None, typer.Option(
        help="A manifest (.jsonl or .csv) instead of sidecars; default PATH/manifest.jsonl "
             "or PATH/manifest.csv when present.")] = None,
    config: ConfigOpt = None,
    strict: Annotated[bool, typer.Option(help="Exit 2 when any file was skipped.")] = False,
    progress: Annotated[bool, typer.Option(help="Print each call as it is done.")] = False,
) -> None:
    """Ingest a folder of calls into the database (idempotent on call_id).

    Each call's signals are measured and stored with its metadata; a bad file is reported
    with its name and the reason, and skipped."""
    from rig.monitor.ingest import ingest_folder
    from rig.monitor.store import MonitorStore

    cfg = _config(config)

    def on_call(source: str, outcome: str) -> None:
        if progress:
            err.print(f"{outcome}: {source}", markup=False)

    try:
        with MonitorStore(db) as store:
            res = ingest_folder(path, store, cfg, manifest=manifest, on_call=on_call)
            total = store.count()
    except RigError as exc:
        fail(exc)
    for bad in res.bad:
        err.print(f"skipped: {bad.reason}", markup=False, style="yellow",
                  soft_wrap=not err.is_terminal)  # one line per file in a log
    rate = res.n_ingested / (res.seconds / 60) if res.seconds > 0 and res.n_ingested else 0.0
    typer.echo(f"{res.n_ingested} calls ingested, {res.n_duplicates} already stored, "
               f"{len(res.bad)} skipped, in {res.seconds:.1f} s ({rate:.1f} calls/min); "
               f"{db} holds {total} calls")
    if strict and res.bad:
        raise typer.Exit(2)


@monitor_app.command("report")
def report_command(
    db: DbOpt = DEFAULT_DB,
    aggregates: Annotated[Path | None, typer.Option(
        help="Report from aggregate rows (.parquet or .csv) computed elsewhere with the SQL "
             "of `rig monitor sql`, instead of --db.")] = None,
    out: Annotated[Path, typer.Option(help="Output folder.")] = Path("reports/monitor"),
    week: Annotated[str | None, typer.Option(
        help="The week: 2025-W03, or a date inside it; default the latest week with calls.")
    ] = None,
    config: ConfigOpt = None,
    noise_floor_from: Annotated[Path | None, typer.Option(
        help="A campaign's summary.json: its noise_floor.repeat_sd (one call's scorer noise) "
             "becomes alerts.scorer_repeat_sd_points (same scorer and score scale only).")
    ] = None,
    fail_on_alert: Annotated[bool, typer.Option(
        "--fail-on-alert", help="Exit 1 when the week raises an alert.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print alerts.json.")] = False,
) -> None:
    """Report one week per segment and write report.html, summary.json and alerts.json."""
    from rig.monitor.report import build_report, parse_week, report_from_aggregates, write_report
    from rig.monitor.store import MonitorStore

    cfg = _config(config)
    try:
        if noise_floor_from is not None:
            cfg = _with_scorer_floor(cfg, noise_floor_from)
        wk = parse_week(week) if week else None
        if aggregates is not None:
            report = report_from_aggregates(_read_table(aggregates), cfg, wk,
                                            source=str(aggregates))
        else:
            with MonitorStore(db, read_only=True) as store:
                report = build_report(store, cfg, wk)
        paths = write_report(report, out)
    except RigError as exc:
        fail(exc)
    if json_out:
        typer.echo(json.dumps(report.alerts_dict(), indent=2))
    else:
        _print_alerts(report)
        typer.echo(f"wrote {paths['report']}, {paths['summary']}, {paths['alerts']}")
    if fail_on_alert and report.analysis.alerts:
        raise typer.Exit(1)


def _read_table(path: Path):
    import pandas as pd

    try:
        if path.suffix.lower() == ".csv":
            return pd.read_csv(path)
        return pd.read_parquet(path)
    except Exception as exc:  # pandas/pyarrow raise many types for unreadable files
        raise RigError(f"{path}: cannot read the aggregates ({exc})") from exc


def _with_scorer_floor(cfg, summary: Path):
    """``cfg`` with ``alerts.scorer_repeat_sd_points`` from a campaign summary's noise floor
    (its single-call ``repeat_sd``; the alerts scale it to a shift of weekly means).

    Raises:
        ConfigError: ``summary`` is not a campaign's summary.json (names the file and field).
        RigError: its noise floor was not measured."""
    from rig.campaign.summary_file import load_summary

    nf = load_summary(summary).noise_floor
    sd = nf.repeat_sd if nf is not None else None
    if nf is None or nf.measured is False or sd is None:
        why = (nf.reason if nf is not None else None) or "not computable in that campaign"
        raise RigError(f"{summary}: noise_floor.repeat_sd: {why} (it needs a campaign whose "
                       "baseline repeats can differ, run with --repeats 2 or more)")
    alerts = cfg.alerts.model_copy(update={"scorer_repeat_sd_points": float(sd)})
    return cfg.model_copy(update={"alerts": alerts})


def _print_alerts(report) -> None:
    a = report.analysis
    out = stdout_console(highlight=False)
    out.print(f"week {report.week}: {report.facts.get('n_calls', 0)} calls, {a.n_tests} "
              f"tests, {len(a.alerts)} alert(s)")
    if not a.alerts:
        return
    t = Table()
    for col in ("kind", "dimension", "segment", "reference", "value", "threshold", "n",
                "p (adj.)"):
        t.add_column(col)
    for x in a.alerts:
        t.add_row(x.kind, x.dimension, x.segment, x.reference or "baseline",
                  f"{x.value:.3f}", f"{x.threshold:.3f}", str(x.n), f"{x.p_adjusted:.2g}")
    out.print(t)


@monitor_app.command("serve")
def serve_command(
    db: DbOpt = DEFAULT_DB,
    host: Annotated[str, typer.Option(help="Address to bind (loopback by default).")
                    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535)] = 8765,
    token_env: Annotated[str, typer.Option(
        help="NAME of the environment variable holding the bearer token (never logged).")
    ] = "RIG_MONITOR_TOKEN",
    recordings: Annotated[Path | None, typer.Option(
        help="Where posted recordings are kept; default: a recordings folder beside --db.")
    ] = None,
    config: ConfigOpt = None,
    max_body_mb: Annotated[float, typer.Option(
        min=0.001, help="Largest POST body, MB; a larger one gets 413 before it is read.")
    ] = 64.0,
) -> None:
    """Serve POST /v1/calls (ingest one call), GET /v1/alerts and GET /v1/health."""
    from rig.monitor.serve import serve

    cfg = _config(config)
    try:
        serve(db, cfg, token_env, host, port, recordings, max_body_mb=max_body_mb)
    except RigError as exc:
        fail(exc)


@monitor_app.command("export")
def export_command(
    out: Annotated[Path, typer.Option(help="Parquet file to write.")],
    db: DbOpt = DEFAULT_DB,
    config: ConfigOpt = None,
) -> None:
    """Export per-call signals and outcomes with call ids hashed (keyed).

    The key comes from the environment variable named by privacy.hash_key_env; no
    transcript, path or timestamp finer than the week is written."""
    from rig.monitor.privacy import export_calls
    from rig.monitor.store import MonitorStore

    cfg = _config(config)
    try:
        with MonitorStore(db, read_only=True) as store:
            n = export_calls(store, out, cfg)
    except RigError as exc:
        fail(exc)
    typer.echo(f"wrote {n} calls to {out}")


@monitor_app.command("sql")
def sql_command(
    first_week: Annotated[str, typer.Option(help="First week: 2025-W01 or a date in it.")],
    last_week: Annotated[str, typer.Option(help="Last week (inclusive).")],
    table: Annotated[str, typer.Option(help="The calls table in the target engine.")
                     ] = "calls",
    dialect: Annotated[str, typer.Option(help="duckdb, spark or trino (the median "
                                              "function differs).")] = "duckdb",
    from_export: Annotated[bool, typer.Option(
        help="The table is a `rig monitor export` (week_start instead of ts).")] = False,
    config: ConfigOpt = None,
) -> None:
    """Print the weekly aggregation SQL, to run on another engine over the same columns.

    Its output rows feed `rig monitor report --aggregates FILE`."""
    from rig.monitor.report import parse_week
    from rig.monitor.segments import MEDIAN_SQL, WEEK_OF_TS, weekly_aggregate_sql

    cfg = _config(config)
    if dialect not in MEDIAN_SQL:
        fail(RigError(f"--dialect: one of {sorted(MEDIAN_SQL)} (got {dialect!r})"))
    try:
        a, b = parse_week(first_week), parse_week(last_week)
    except RigError as exc:
        fail(exc)
    if b < a:
        fail(RigError(f"--last-week {last_week} is before --first-week {first_week}"))
    typer.echo(weekly_aggregate_sql(
        cfg.segments, table, dialect=dialect,  # type: ignore[arg-type]
        week_sql="week_start" if from_export else WEEK_OF_TS,
        first_week=f"DATE '{a.isoformat()}'", last_week=f"DATE '{b.isoformat()}'"))


@monitor_app.command("segments")
def segments_command(config: ConfigOpt = None) -> None:
    """Print the segment dimensions and bins in effect (the defaults, or --config's)."""
    from rig.monitor.segments import dimensions

    cfg = _config(config)
    t = Table(title="segments" + (f" ({config})" if config else " (defaults)"))
    t.add_column("dimension")
    t.add_column("segments")
    for d in dimensions(cfg.segments):
        t.add_row(d.name, ", ".join(d.labels) if d.labels else "one per value, and unknown")
    stdout_console(highlight=False).print(t)
    a = cfg.alerts
    typer.echo(f"alerts: ratio < {a.ratio_threshold:g} or |shift| > noise floor, n >= "
               f"{a.min_n}, {a.correction}-adjusted p < {a.alpha:g}; baseline "
               f"{a.baseline_weeks} weeks; noise floor {a.noise_floor_k:g} x SD of weekly "
               f"means (>= {a.min_baseline_weeks} weeks), at least {a.noise_floor_k:g} x "
               f"scorer repeat SD {a.scorer_repeat_sd_points:g} points x sqrt(1/n_week + "
               "1/n_baseline)")
