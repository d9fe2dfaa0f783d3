"""``rig sweep``: run every variant of a campaign's pipeline and write the sweep's outputs.

Output folder:
    ``variants/<variant_id>/calls.jsonl`` each variant's durable log (resume reads it);
    ``sweep.parquet`` every variant's rows (the campaign's included, variant ``campaign``),
        the columns of ``calls.parquet`` plus ``variant``;
    ``sweep.json``    what was run and, per variant, its campaign summary, costs and, per
        profile x variant, the verdict table (:mod:`rig.sweep.verdict`);
    ``report.html``   one offline page (:mod:`rig.sweep.report`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from rig.campaign.call import ROW_TYPES
from rig.campaign.phases import printer
from rig.campaign.store import write_parquet, write_text_atomic
from rig.campaign.summary import campaign_summary
from rig.console import progress_bar
from rig.errors import ConfigError
from rig.jsonfile import read_json
from rig.paths import make_out_dir, remove_partials
from rig.pipeline import PipelineConfig
from rig.stages import Stages
from rig.sweep.plan import Variant, Vary, plan_variants
from rig.sweep.report import write_sweep_report
from rig.sweep.run import Campaign, load_campaign, logged_calls, run_variant
from rig.sweep.verdict import variant_costs, verdict_table

SWEEP_SCHEMA = "rig.sweep/1"


@dataclass
class SweepResult:
    out_dir: Path
    sweep: dict  # the content of sweep.json
    n_run: int  # calls made in this run (all variants)
    seconds: float
    files: dict[str, Path]


def default_stages(pipeline: PipelineConfig, audio_cache_dir: Path | None = None) -> Stages:
    """The real stages of ``pipeline`` for one process (models loaded once and kept), reading
    renders from ``audio_cache_dir`` (default: the render cache campaigns use)."""
    from rig.campaign.executors.worker import build_worker_stages, default_worker_runtime

    st = build_worker_stages(pipeline, default_worker_runtime(1))
    return replace(st, audio_cache_dir=audio_cache_dir)


@dataclass(frozen=True)
class StagesFor:
    """``stages_for`` that pickles (sweep workers): :func:`default_stages` of a pipeline."""
    audio_cache_dir: Path | None = None

    def __call__(self, pipeline: PipelineConfig) -> Stages:
        return default_stages(pipeline, self.audio_cache_dir)


def _settings(p: PipelineConfig, paths: Sequence[str]) -> dict:
    dump = p.model_dump(mode="json")
    out = {}
    for path in paths:
        node = dump
        for k in path.split("."):
            node = node.get(k) if isinstance(node, dict) else None
        out[path] = node
    return out


def _restrict(camp: Campaign, profile_ids: Sequence[str]) -> Campaign:
    if not profile_ids:
        return camp
    known = set(camp.rows["profile_id"])
    unknown = sorted(set(profile_ids) - known)
    if unknown:
        raise ConfigError(camp.folder / "calls.parquet", "--profile",
                          f"not in the campaign (it has {sorted(known)})", unknown, True)
    keep = set(profile_ids) | {camp.baseline}
    return replace(camp, rows=camp.rows[camp.rows["profile_id"].isin(keep)].reset_index(
        drop=True))


def run_sweep(campaign_dir: Path, varies: list[Vary], out: Path, *, grid: bool = False,
              margin: float = 5.0, profile_ids: Sequence[str] = (), n_boot: int = 2000,
              stages_for: Callable[[PipelineConfig], Stages] | None = None,
              audio_cache_dir: Path | None = None,
              on_call: Callable[[dict], None] | None = None,
              progress: bool = False, executor: object | None = None) -> SweepResult:
    """Run (or resume) a sweep of ``campaign_dir`` and write its outputs to ``out``.

    ``progress``: show :func:`rig.console.progress_bar` over the variants' calls (those a
    resumed sweep has logged count as done; no bar when every variant is the campaign).

    ``stages_for(pipeline)``: the stages of a variant (default :func:`default_stages`; tests
    give fakes). ``executor`` (:class:`rig.campaign.executors.ExecutorSpec`; None: serial):
    where the variants' calls run (:mod:`rig.jobs`); on local or Ray workers ``stages_for``
    must pickle (a module-level function; default :class:`StagesFor`) and each worker builds
    a variant's stages once; the rows are the same as serial. ``profile_ids``: sweep these
    profiles only (the baseline always).
    ``margin``: the TOST equivalence margin in points (``closes``).

    Raises:
        ConfigError: the campaign folder, a ``--vary`` or a ``--profile`` is wrong (names
            it and the value); ModelMissingError: a model package is missing.
    """
    t0 = time.perf_counter()
    if margin <= 0:
        raise ConfigError("--margin-points", "", "must be > 0", margin, True)
    camp = _restrict(load_campaign(Path(campaign_dir)), profile_ids)
    variants = plan_variants(camp.pipeline, varies, grid)
    variants[0] = replace(variants[0], version=camp.version)
    make_out_dir(out)
    remove_partials(out)  # a killed sweep's temporary files (each variant's: run_variant)
    build = stages_for or StagesFor(audio_cache_dir)
    parallel = executor is not None and not executor.in_driver()  # type: ignore[attr-defined]
    camp_rows = [{k: v for k, v in r.items()} for r in camp.rows.to_dict("records")]
    rows_by: dict[str, list[dict]] = {"campaign": camp_rows}
    n_run: dict[str, int] = {"campaign": 0}
    cid = camp.meta.get("campaign_id", camp.folder.name)
    total = len(camp_rows) * (len(variants) - 1)  # 0: every variant is the campaign
    done = sum(logged_calls(camp, v, out / "variants" / v.variant_id) for v in variants[1:])
    with progress_bar(progress and total > 0) as bar:
        task = bar.add_task(f"{cid}: sweep calls", total=total, completed=done)
        for v in variants[1:]:
            rows_by[v.variant_id], n_run[v.variant_id] = run_variant(
                camp, v, out / "variants" / v.variant_id,
                None if parallel else build(v.pipeline), on_call=on_call,
                on_row=lambda: bar.advance(task), stages_for=build, executor=executor)
    if progress:  # silent otherwise: each variant's summary has its bootstrap intervals
        printer(cid)(f"summarizing {len(variants)} variants ({n_boot} bootstrap resamples "
                     "each interval), then sweep.json, sweep.parquet and report.html")
    sweep = _assemble(camp, variants, varies, rows_by, n_run, grid=grid, margin=margin,
                      n_boot=n_boot, campaign_dir=Path(campaign_dir),
                      audio_cache_dir=audio_cache_dir)
    files = write_outputs(out, sweep, rows_by)
    return SweepResult(out, sweep, sum(n_run.values()), time.perf_counter() - t0, files)


def _assemble(camp: Campaign, variants: list[Variant], varies: list[Vary],
              rows_by: dict[str, list[dict]], n_run: dict[str, int], *, grid: bool,
              margin: float, n_boot: int, campaign_dir: Path,
              audio_cache_dir: Path | None) -> dict:
    paths = [v.path for v in varies]
    cid = camp.meta.get("campaign_id", camp.folder.name)
    timer0 = camp.pipeline.endpointing.silence_timeout_ms
    summaries, entries, table = {}, [], []
    for v in variants:
        df = pd.DataFrame(rows_by[v.variant_id])
        summaries[v.variant_id] = campaign_summary(
            df, campaign_id=f"{cid}:{v.variant_id}", pipeline_version=v.version,
            baseline=camp.baseline, n_boot=n_boot).to_dict()
    for v in variants:
        df = pd.DataFrame(rows_by[v.variant_id])
        costs = variant_costs(df, v.pipeline.endpointing.silence_timeout_ms, timer0)
        entries.append({"variant_id": v.variant_id, "changes": v.changes,
                        "settings": _settings(v.pipeline, paths),
                        "pipeline_version": v.version, "rerun_from": v.rerun_from,
                        "regrade_oracle": v.regrade_oracle, "n_calls": len(df),
                        "n_run_now": n_run[v.variant_id], **costs,
                        "summary": summaries[v.variant_id]})
        table += verdict_table(v.variant_id, df, summaries[v.variant_id],
                               summaries["campaign"], costs, margin=margin)
    return {"schema": SWEEP_SCHEMA, "campaign_id": cid, "campaign_dir": str(campaign_dir),
            "campaign_pipeline_version": camp.version, "baseline": camp.baseline,
            "grid": grid, "margin_points": margin, "n_boot": n_boot,
            "audio_cache_dir": str(audio_cache_dir) if audio_cache_dir else None,
            "varies": [{"path": v.path, "values": list(v.values)} for v in varies],
            "variants": entries, "table": table}


def write_outputs(out: Path, sweep: dict, rows_by: dict[str, list[dict]]) -> dict[str, Path]:
    """Write sweep.parquet (every variant's rows plus ``variant``), sweep.json and
    report.html."""
    rows = [{**r, "variant": vid} for vid, rs in rows_by.items() for r in rs]
    parquet = write_parquet(rows, out / "sweep.parquet", types={**ROW_TYPES, "variant": "string"})
    spath = write_text_atomic(out / "sweep.json", json.dumps(sweep, indent=2, default=str))
    report = write_sweep_report(out / "report.html", sweep)
    return {"parquet": parquet, "sweep": spath, "report": report}


def recompute(out: Path, margin: float | None = None) -> list[dict]:
    """The verdict table recomputed from ``sweep.parquet`` and ``sweep.json``'s campaign
    settings alone (what a reviewer checks): same rows, same table."""
    sweep = read_json(out / "sweep.json")
    df = pd.read_parquet(out / "sweep.parquet")
    margin = sweep["margin_points"] if margin is None else margin
    summaries = {v["variant_id"]: campaign_summary(
        df[df["variant"] == v["variant_id"]].drop(columns="variant").reset_index(drop=True),
        campaign_id=f"{sweep['campaign_id']}:{v['variant_id']}",
        pipeline_version=v["pipeline_version"], baseline=sweep["baseline"],
        n_boot=sweep["n_boot"]).to_dict() for v in sweep["variants"]}
    table = []
    for v in sweep["variants"]:
        costs = {k: v[k] for k in ("dead_air_added_s", "asr_s_per_call", "scorer_s_per_call")}
        g = df[df["variant"] == v["variant_id"]].reset_index(drop=True)
        table += verdict_table(v["variant_id"], g, summaries[v["variant_id"]],
                               summaries["campaign"], costs, margin=margin)
    return table


def headline(sweep: dict, profile_id: str, path: str = "endpointing.silence_timeout_ms"
             ) -> str:
    """One line on what varying ``path`` did to ``profile_id``'s gap: the variant that closes
    it with the least dead air added, else the one that narrows it most, else that none did.
    """
    rows = {r["variant"]: r for r in sweep["table"] if r["profile_id"] == profile_id}
    cands = [v for v in sweep["variants"] if set(v["changes"]) == {path}
             and v["variant_id"] in rows]
    camp = rows.get("campaign")

    def name(v: dict) -> str:
        x = v["changes"][path]
        if path == "endpointing.silence_timeout_ms":
            return f"a {x:,} ms timer"
        return f"{path}={x}"

    def fig(r: dict) -> str:
        ci = r["ci95"]
        d = f"{r['mean_delta']:+.1f}" if r["mean_delta"] is not None else "n/a"
        return d + (f" [{ci[0]:+.1f}, {ci[1]:+.1f}]" if ci else "")

    def wait(v: dict) -> str:
        s = v["dead_air_added_s"]
        if path != "endpointing.silence_timeout_ms" or not s:
            return ""
        return f"; every turn waits {abs(s):.1f} s {'longer' if s > 0 else 'less'}"

    closes = [v for v in cands if rows[v["variant_id"]]["verdict"] == "closes"]
    if closes:
        v = min(closes, key=lambda v: abs(v["dead_air_added_s"]))
        return (f"{name(v)} closes the {profile_id} gap: delta {fig(rows[v['variant_id']])}"
                f" (campaign {fig(camp) if camp else 'n/a'}){wait(v)}")
    narrows = [v for v in cands if rows[v["variant_id"]]["verdict"] == "narrows"]
    if narrows:
        v = min(narrows, key=lambda v: abs(rows[v["variant_id"]]["mean_delta"]))
        return (f"{name(v)} narrows the {profile_id} gap: delta {fig(rows[v['variant_id']])}"
                f" (campaign {fig(camp) if camp else 'n/a'}){wait(v)}")
    tried = ", ".join(str(v["changes"][path]) for v in cands) or "nothing"
    unknown = [v for v in cands if rows[v["variant_id"]]["verdict"] == "not computable"
               and rows[v["variant_id"]]["mean_delta"] is not None]
    if unknown and len(unknown) == len(cands):
        moved = "; ".join(f"{name(v)}: delta {fig(rows[v['variant_id']])}" for v in unknown)
        return (f"too few pairs to judge the {profile_id} gap ({moved}; campaign "
                f"{fig(camp) if camp else 'n/a'}): with one pair per variant there is no "
                "interval to tell a change from noise; sweep more answers")
    return (f"no {path} tried ({tried}) closes or narrows the {profile_id} gap "
            f"(campaign {fig(camp) if camp else 'n/a'})")
