"""A matched-pair campaign: every selected answer under every selected profile, R repeats.

:func:`run_campaign` runs (or resumes) the plan of :mod:`rig.campaign.plan` (which holds
:class:`~rig.campaign.plan.CampaignSpec`, the calls planned and the repeats skipped) on an
executor and writes the outputs (:func:`write_outputs`).

Output folder:
    ``calls.jsonl``   the durable log, one line per finished call (resume reads it);
    ``oracle.jsonl``  the scorer's grade of each script text, per (answer, seed);
    ``calls.parquet`` one row per planned call, no duplicate ids;
    ``summary.json``  per-profile paired statistics against the baseline;
    ``report.html``   one offline page;
    ``audio/``        each simulated call's audio and word timings, for the report's
                      drill-down (:mod:`rig.drilldown.audio`; ``CampaignSpec.audio=False``:
                      none);
    ``campaign.json`` what was run (inputs, pipeline version, selectors).

Running the same command again skips the calls already in ``calls.jsonl`` and retries the
ones that failed.

Repeats that cannot differ from repeat 0 (a profile that draws nothing from the seed, a
scorer deterministic at its temperature, the simulated line: :mod:`rig.campaign.repeats`)
are not run; ``campaign.json`` and ``summary.json`` report them under ``repeats_skipped``
with the reason, and the baseline's noise floor is then reported as not measured.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rig.answers import load_bank
from rig.campaign.call import ROW_TYPES, run_call, with_transport_columns
from rig.campaign.executors import (
    CallTask,
    CampaignInterrupted,
    ExecutorSpec,
    OracleTask,
    ProfilePaths,
    TaskFailure,
    WorkerSetup,
    default_workers,
    open_executor,
)
from rig.campaign.executors.worker import (
    build_worker_stages,
    default_worker_runtime,
    given_up_row,
    oracle_result,
)
from rig.campaign.export import input_hashes
from rig.campaign.oracle import OracleCache, oracle_done, oracle_key  # noqa: F401 (OracleCache: its old home)
from rig.campaign.phases import (
    Say,
    loading_line,
    models_needed,
    prepare_models,
    printer,
    quiet,
    summarizing_line,
)
from rig.campaign.plan import (  # noqa: F401 (CampaignPlan to plan_calls: their old home)
    CampaignPlan,
    CampaignSpec,
    PlannedCall,
    no_repeats_skipped,
    plan_calls,
    plan_campaign,
)
from rig.campaign.schema import CampaignSummary
from rig.campaign.store import CallLog, open_campaign_folder, write_parquet, write_text_atomic
from rig.campaign.summary_file import load_summary
from rig.console import progress_bar
from rig.drilldown.audio import AUDIO_DIRNAME
from rig.language import check_profile_languages
from rig.pipeline import load_pipeline, pipeline_version
from rig.profiles import load_profiles
from rig.stages import Stages


@dataclass
class CampaignResult:
    out_dir: Path
    rows: list[dict]
    summary: CampaignSummary
    n_run: int
    n_skipped: int
    seconds: float
    files: dict[str, Path] = field(default_factory=dict)
    n_repeats_skipped: int = 0  # planned repeats not run: they could not differ (reason in
    repeats_skipped: dict = field(default_factory=dict)  # ... this, as in summary.json)
    n_dropped: int = 0  # workers' rows for calls already logged ok (not written again)
    runtime: dict = field(default_factory=dict)  # campaign.json's (+ judge_prefix_cache)
    audio_s: float = 0.0  # caller audio of the calls this run made (seconds), for the rate


def run_campaign(spec: CampaignSpec, *, stages: Stages | None = None,
                 progress: bool = True, on_call: Callable[[dict], None] | None = None,
                 call_fn: Callable[..., dict] = run_call,
                 executor: ExecutorSpec | None = None, say: Say | None = None
                 ) -> CampaignResult:
    """Run (or resume) a campaign and write its outputs.

    ``call_fn`` runs one call with :func:`run_call`'s keyword arguments and returns its row;
    :class:`rig.calls.run.caller.TransportCaller` places it over a real transport instead (in
    this process, ``executor.concurrency`` calls at once). ``executor``: where the calls run
    (:class:`ExecutorSpec`; default serial, in this process). With ``stages`` given, every
    worker runs a copy of them (they must pickle for ``local`` and ``ray``); else each worker
    builds the real stages once. First the oracle gradings the calls need, then the calls;
    this process alone writes the logs, a worker's row for a call already logged ``ok`` is
    dropped. ``say``: where the phases before the first call are said (assembling and
    loading models: :mod:`rig.campaign.phases`); default stdout when ``progress``, else
    nothing.

    Raises:
        ConfigError: an input file is malformed (names the file, field and value).
        ModelMissingError: a model package is missing (names the package).
        CampaignInterrupted: Ctrl-C; the workers were stopped, a rerun resumes.
    """
    t_start = time.perf_counter()
    executor = executor or ExecutorSpec()
    bank = load_bank(spec.answers_path)
    profiles = load_profiles(spec.profiles_path)
    check_profile_languages(bank.meta.language, spec.answers_path, profiles)
    pipeline = load_pipeline(spec.pipeline_path)
    version = pipeline_version(pipeline)
    campaign_id = spec.campaign_id or spec.out_dir.name
    out = spec.out_dir
    # planned first: an unknown --profile or --answer-id fails before the folder is made
    campaign_plan = plan_campaign(spec, bank, profiles, version, pipeline,
                                  0.0 if bank.read_speech  # no scorer runs
                                  else None if stages is None else stages.scorer.temperature)
    earlier_runs = open_campaign_folder(out, spec.transport)
    groups = None
    if bank.read_speech:  # rig.campaign.read_speech: no oracle, no scorer; per speaker
        from rig.campaign.read_speech import speaker_groups

        groups = speaker_groups(profiles)
    plan = campaign_plan.calls
    executor = executor.resolved(real_transport=call_fn is not run_call)
    in_driver = executor.in_driver(real_transport=call_fn is not run_call)
    n_workers = executor.n_workers() if executor.kind != "ray" else executor.workers
    runtime = executor.runtime or default_worker_runtime(n_workers or default_workers(),
                                                         overlap=bool(executor.overlap))
    say = say or (printer(campaign_id) if progress else quiet)
    required, optional = models_needed(pipeline, profiles, scored=not bank.read_speech)
    if stages is None and executor.kind != "ray":
        # fail fast, naming the package, rather than record every call as failed; a model
        # assembled now (once per machine) is said before and after (rig.campaign.phases)
        prepare_models(required, optional, say)
    if stages is None:
        say(loading_line(required, n_workers, in_driver))
    if stages is None and in_driver:
        stages = build_worker_stages(pipeline, runtime)
    log = CallLog(out / "calls.jsonl")
    oracle_log = CallLog(out / "oracle.jsonl")
    campaign_json = {
        "campaign_id": campaign_id, "pipeline_version": version,
        "pipeline": pipeline.model_dump(mode="json"),
        "answers_path": str(spec.answers_path), "bank": bank.meta.model_dump(),
        "profiles_path": str(spec.profiles_path), "pipeline_path": str(spec.pipeline_path),
        "inputs_sha256": input_hashes(spec.answers_path, spec.profiles_path,
                                      spec.pipeline_path),  # checked by rig campaign export
        "repeats": spec.repeats, "profile_ids": [p.profile_id for p in profiles.profiles],
        "selectors": {"profiles": list(spec.profile_ids), "answers": list(spec.answer_ids),
                      "questions": list(spec.question_ids), "repeats": list(spec.repeat_ids)},
        "n_planned_calls": len(plan), "transport": spec.transport,
        "repeats_skipped": campaign_plan.repeats_skipped,
        "delivery_sd_pct": spec.delivery_sd_pct,  # rig.campaign.delivery (the sweep reads it)
        "noise_floor_advice": campaign_plan.floor_advice,
        "runtime": {**executor.record(runtime, 1 if in_driver else n_workers),
                    "earlier_runs": earlier_runs},
        **({"mode": "read_speech", "speaker_groups": groups} if groups is not None else {}),
    }
    write_text_atomic(out / "campaign.json", json.dumps(campaign_json, indent=2))
    todo = [c for c in plan if c.call_id not in log or log.get(c.call_id)["status"] != "ok"]
    n_skipped = len(plan) - len(todo)
    setup = WorkerSetup(pipeline, version, campaign_id, runtime, stages, executor.overlap,
                        out / AUDIO_DIRNAME if spec.audio else None)
    keys = {c.call_id: oracle_key(c.question, c.answer, c.seed, version) for c in todo}
    grade = {}
    for c in todo if not bank.read_speech else ():
        if not oracle_done(oracle_log.get(keys[c.call_id])):
            grade.setdefault(keys[c.call_id], OracleTask(keys[c.call_id], c.question, c.answer,
                                                         c.seed))
    n_dropped = 0

    def logged(task, row: dict) -> None:
        nonlocal n_dropped
        if isinstance(task, OracleTask):
            if not oracle_done(oracle_log.get(task.key)):
                oracle_log.append(row)
            bar.advance(grade_bar)
            return
        prev = log.get(task.call_id)
        if prev is not None and prev["status"] == "ok":  # a late duplicate: never twice
            n_dropped += 1
            return
        log.append(row)
        if on_call:
            on_call(row)
        bar.advance(task_bar)

    def given_up(failure: TaskFailure) -> None:
        logged(failure.task, given_up_row(failure.task, failure.error, setup))

    with progress_bar(progress) as bar:
        # the scripts' gradings come first, on a line of their own (they can take minutes)
        grade_bar = bar.add_task(f"{campaign_id}: script gradings (oracle)",
                                 total=len(grade)) if grade else None
        task_bar = None if grade else bar.add_task(f"{campaign_id}: calls", total=len(plan),
                                                   completed=n_skipped)
        try:
            with open_executor(executor, setup,
                               call_fn=None if call_fn is run_call else call_fn) as ex:
                if grade:
                    ex.run(list(grade.values()), logged, given_up)
                    task_bar = bar.add_task(f"{campaign_id}: calls", total=len(plan),
                                            completed=n_skipped)
                ex.run([CallTask(c.call_id, c.question, c.answer, c.profile, c.repeat, c.seed,
                                 _oracle_of(oracle_log, keys[c.call_id], c.seed,
                                            bank.read_speech),
                                 ProfilePaths(profiles.sources[c.profile.profile_id].parent))
                        for c in todo], logged, given_up)
                run_stats = ex.stats
                n_started = getattr(ex, "n_workers", None)  # Ray: sized from the cluster
        except KeyboardInterrupt as exc:
            # count what is on disk: Ctrl-C may land inside an append, after the row was
            # written but before the in-memory log saw it
            on_disk = CallLog(out / "calls.jsonl")
            n_logged = sum(c.call_id in on_disk for c in plan)
            raise CampaignInterrupted(n_logged, len(plan)) from exc
    campaign_json["runtime"].update({
        "judge_prefix_cache": run_stats.judge_prefix_cache(), "devices_used": run_stats.devices(),
        "worker_deaths": run_stats.n_worker_deaths, "death_causes": run_stats.death_causes,
        "calls_failed_by_worker_deaths": run_stats.n_failed_by_deaths})
    if campaign_json["runtime"]["workers"] is None and isinstance(n_started, int):
        campaign_json["runtime"]["workers"] = n_started
    write_text_atomic(out / "campaign.json", json.dumps(campaign_json, indent=2))
    planned = {c.call_id for c in plan}
    # a row logged before the transport columns existed (resuming an older run) is a sim row
    rows = [with_transport_columns(r) for r in log.rows() if r["call_id"] in planned]
    # silent otherwise: seconds to a minute on 2 busy cores (the judge-validity and the
    # deltas' bootstrap intervals, then the report's figures), issue 33
    say(summarizing_line(len(rows), spec.n_boot))
    files = write_outputs(out, rows, campaign_id=campaign_id, version=version,
                          baseline=profiles.baseline.profile_id, n_boot=spec.n_boot,
                          n_excluded=len(log.rows()) - len(rows),
                          pipeline=pipeline.model_dump(mode="json"),
                          repeats_skipped=campaign_plan.repeats_skipped, speaker_groups=groups,
                          floor_advice=campaign_plan.floor_advice,
                          bank=bank.meta.model_dump())
    return CampaignResult(out, rows, load_summary(files["summary"]), len(todo),
                          n_skipped, time.perf_counter() - t_start, files,
                          campaign_plan.repeats_skipped["n"], campaign_plan.repeats_skipped,
                          n_dropped, campaign_json["runtime"], _audio_s(rows, todo))


def _audio_s(rows: list[dict], todo: list) -> float:
    """Seconds of caller audio in the rows of the calls ``todo`` (this run's), ok or not."""
    ran = {c.call_id for c in todo}
    return float(sum(r.get("audio_duration_s") or 0.0 for r in rows if r.get("call_id") in ran))


def _oracle_of(oracle_log: CallLog, key: str, seed: int, read_speech: bool):
    """A call's oracle grade: the logged one, or none (``not_scored``) in read-speech mode."""
    if read_speech:
        from rig.campaign.read_speech import not_scored

        return not_scored(seed)
    return oracle_result(oracle_log.get(key))


def write_outputs(out: Path, rows: Sequence[dict], *, campaign_id: str, version: str,
                  baseline: str, n_boot: int, n_excluded: int = 0,
                  pipeline: dict | None = None, repeats_skipped: dict | None = None,
                  speaker_groups: dict | None = None, floor_advice: str | None = None,
                  bank: dict | None = None) -> dict[str, Path]:
    """Write calls.parquet, summary.json and report.html from the call rows (rows without the
    transport columns, logged by an older rig, get them: ``transport`` ``sim``, facts null).
    ``repeats_skipped``: the plan's (:class:`rig.campaign.plan.CampaignPlan`), as
    campaign.json records it. calls.parquet's columns have the types of
    :data:`rig.campaign.call.ROW_TYPES`, null or not, so any two campaigns' files read
    together. summary.json is a :class:`rig.campaign.schema.CampaignSummary` with
    ``n_log_rows_not_in_plan`` = ``n_excluded`` and the resolved ``pipeline``.
    ``speaker_groups`` (a read-speech campaign: :func:`rig.campaign.read_speech.
    speaker_groups`) adds ``mode`` and ``read_speech`` to the summary and writes the
    read-speech report (:mod:`rig.report.read_speech`). ``out/ratings.jsonl``, when there,
    adds ``human_ratings`` to the summary (:mod:`rig.ratings`).
    ``floor_advice``: campaign.json's
    ``noise_floor_advice`` (:func:`rig.campaign.summary.campaign_summary`). ``bank``: the
    bank's meta (campaign.json's ``bank``): with ``pipeline``, the judge's bank-wide verdict
    is looked up (:func:`rig.scorer.bank_validity.lookup`) and stated in the summary."""
    import pandas as pd

    from rig.campaign.summary import campaign_summary
    from rig.campaign.summary_file import write_summary
    from rig.ratings.model import read_ratings
    from rig.report import write_campaign_report

    rows = [with_transport_columns(r) for r in rows]
    calls = write_parquet(rows, out / "calls.parquet", types=ROW_TYPES)
    summary = campaign_summary(pd.DataFrame(list(rows)), campaign_id=campaign_id,
                               pipeline_version=version, baseline=baseline, n_boot=n_boot,
                               repeats_skipped=repeats_skipped,
                               n_log_rows_not_in_plan=n_excluded, pipeline=pipeline,
                               speaker_groups=speaker_groups, ratings=read_ratings(out),
                               floor_advice=floor_advice,
                               bank_validity=_bank_validity(bank, version, pipeline))
    spath = write_summary(out / "summary.json", summary)
    write_report = write_campaign_report
    if speaker_groups is not None:  # read-speech mode: its own page (no scores to show)
        from rig.report.read_speech import write_read_speech_report as write_report
    report = write_report(out / "report.html", summary, pd.DataFrame(list(rows)))
    return {"calls": calls, "summary": spath, "report": report}


def _bank_validity(bank: dict | None, version: str, pipeline: dict | None):
    """The judge's bank-wide verdict for a campaign of ``bank`` (campaign.json's ``bank``)
    under pipeline ``version``; None without a bank or a pipeline record (an older folder)."""
    if not bank or not pipeline or bank.get("mode") == "read_speech":
        return None
    from rig.scorer.bank_validity import lookup

    return lookup(bank["name"], int(bank.get("version", 1)), version,
                  (pipeline.get("scorer") or {}).get("mode"))
