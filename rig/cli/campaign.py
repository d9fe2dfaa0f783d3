"""``rig campaign run|summarize|export``: matched-pair campaigns (a thin layer over
:mod:`rig.campaign` and, for real calls, :mod:`rig.calls`); ``rig demo`` is in
:mod:`rig.cli.demo`.

Exit codes: 0 success, 2 bad input, or a campaign in which every call failed.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from rig.campaign.summary_file import load_summary
from rig.cli.common import CONDUCT_HELP, VARY_DELIVERY_HELP, RigTyper, console, fail
from rig.cli.finish import print_finish
from rig.cli.summary_lines import print_summary as _print_summary  # its old home
from rig.console import stdout_console
from rig.errors import RigError
from rig.jsonfile import read_json

campaign_app = RigTyper(no_args_is_help=True, help="Matched-pair campaigns.")

AUDIO_HELP = ("write each call's caller and line audio (FLAC) and word timings under OUT/audio "
              "for the report's drill-down (--no-audio: none, for large campaigns)")


def _run(spec, progress: bool, executor=None, stages=None, finish: bool = True, **calls):
    """Run ``spec`` (over its transport; ``calls``: :class:`rig.calls.run.caller.TransportCaller`'s
    options) on ``executor`` (:class:`rig.campaign.executors.ExecutorSpec`; ``stages``: fakes,
    for tests), print what was run and the summary; exit 2 when every call failed, 130 on
    Ctrl-C and 143 on SIGTERM (with how to resume, no traceback). With ``finish``, end with
    the wall time, the audio rate and the report's path (:mod:`rig.cli.finish`). Returns the
    :class:`rig.campaign.runner.CampaignResult`."""
    from rig.campaign.executors import CampaignInterrupted
    from rig.sigint import interrupted_code, sigterm_as_interrupt

    t0 = time.perf_counter()
    try:
        with sigterm_as_interrupt():
            res = _run_calls(spec, progress, executor, stages, **calls)
    except RigError as exc:
        fail(exc)
    except CampaignInterrupted as exc:
        console.print(Text(str(exc), style="yellow"))
        raise typer.Exit(interrupted_code()) from None
    rt = getattr(res, "runtime", None) or {}
    pc = rt.get("judge_prefix_cache") or {}
    rate = "" if pc.get("hit_rate") is None else (
        f"; judge prefix cache {pc['hits']}/{pc['hits'] + pc['misses']} hits "
        f"({100 * pc['hit_rate']:.0f}%)")
    n_run = f"{res.n_run} call" + ("" if res.n_run == 1 else "s")
    console.print(f"{n_run} run, {res.n_skipped} already done, {res.seconds:.0f} s{rate}",
                  markup=False)
    if rt.get("worker_deaths"):
        causes = "; ".join(dict.fromkeys(rt.get("death_causes") or []))
        console.print(Text(f"warning: {rt['worker_deaths']} worker(s) died and were replaced "
                           f"({causes or 'cause unknown'}); their calls were rerun"
                           + (f", {rt['calls_failed_by_worker_deaths']} logged failed after "
                              "killing 3 workers" if rt.get("calls_failed_by_worker_deaths")
                              else ""), style="yellow"))
    if res.n_dropped:
        console.print(f"late results for calls already logged, dropped: {res.n_dropped}")
    if res.n_repeats_skipped:
        console.print(f"{res.n_repeats_skipped} repeats skipped, "
                      f"{res.repeats_skipped['reason']}", markup=False, highlight=False)
    failed = [r for r in res.rows if r.get("status") != "ok"]
    if failed:
        console.print(Text(f"warning: {len(failed)} of {len(res.rows)} calls failed (rerun the "
                           f"command to retry them); first error: {failed[0].get('error')}",
                           style="yellow"))
    unscored = _unscored(res.rows)
    if unscored:
        console.print(Text(f"warning: {unscored}", style="yellow"))
    _print_summary(res.summary, res.out_dir)
    if res.rows and len(failed) == len(res.rows):
        # nothing measured: almost always the set-up (credentials, an interviewer URL)
        console.print(Text("error: every call failed; nothing was measured", style="red"))
        raise typer.Exit(2)
    if finish:
        print_finish(time.perf_counter() - t0, getattr(res, "audio_s", 0.0), res.seconds,
                     res.out_dir / "report.html")
    return res


def _run_calls(spec, progress: bool, executor, stages, **calls):
    """Run ``spec``'s calls: in this process's simulation, or one real call each over its
    transport (:class:`rig.calls.run.caller.TransportCaller`); the campaign's result."""
    from rig.campaign.phases import printer
    from rig.campaign.runner import run_campaign

    # the phases before the first call (assembling, loading models: minutes on a fresh
    # machine) are said without the progress bar too: --no-progress output is not silent
    say = printer(spec.campaign_id or spec.out_dir.name)
    if spec.transport == "sim":
        return run_campaign(spec, progress=progress, executor=executor, stages=stages,
                            say=say)
    from rig.calls.interviewer.service import quiet_logs
    from rig.calls.run.caller import TransportCaller
    from rig.campaign.plan import check_selectors
    from rig.paths import make_out_dir

    check_selectors(spec)  # a typo in --profile or --answer-id leaves no folder behind
    make_out_dir(spec.out_dir)  # the caller writes there before the campaign starts
    quiet_logs()
    with TransportCaller(spec.transport, spec.answers_path, spec.out_dir, **calls) as caller:
        return run_campaign(spec, progress=progress, call_fn=caller, executor=executor,
                            stages=stages, say=say)


def _unscored(rows: list[dict]) -> str | None:
    """What a grading that gave no score did to a run's calls (a timeout under load, a reply
    that did not parse), or None. A call's own grading missing leaves its pair out of the
    deltas; its oracle (script) grading missing leaves it out of the stage split. Never
    scored as 0."""
    from collections import Counter

    ok = [r for r in rows if r.get("status") == "ok"]
    parts = []
    for col, what, effect in (("parse_status", "no score", "the deltas"),
                              ("oracle_parse_status", "no oracle (script) grade",
                               "the stage split")):
        c = Counter(r.get(col) for r in ok if r.get(col) not in (None, "ok"))
        if c:
            how = ", ".join(f"{n} {k}" for k, n in c.most_common())
            parts.append(f"{sum(c.values())} of {len(ok)} calls have {what} ({how}): left "
                         f"out of {effect}")
    if not parts:
        return None
    return "; ".join(parts) + " (calls.parquet: parse_status, oracle_parse_status, scorer_error)"


#: ``rig campaign run --help``'s panels: the common options first (typer's default panel),
#: then these, in this order.
_SEL = "Selection"
_NF = "Repeats and the noise floor"
_CALLS = "Real calls (transports, bots)"
_WORK = "Workers and threads"


@campaign_app.command("run")
def campaign_run(
    answers: Annotated[Path, typer.Option(help="answer bank folder")],
    profiles: Annotated[Path, typer.Option(help="profile set folder")],
    pipeline: Annotated[Path, typer.Option(help="pipelines/<name>.yaml")],
    out: Annotated[Path, typer.Option(help="output folder (resumes if it has calls)")],
    repeats: Annotated[int, typer.Option(min=1, help="repeats per (answer, profile)")] = 1,
    profile: Annotated[list[str] | None, typer.Option(
        help="only this profile (repeatable; the baseline is always kept)")] = None,
    answer_id: Annotated[list[str] | None, typer.Option(
        help="only this answer id (repeatable)")] = None,
    question: Annotated[list[str] | None, typer.Option(
        rich_help_panel=_SEL, help="only this question id (repeatable)")] = None,
    repeat: Annotated[list[int] | None, typer.Option(
        rich_help_panel=_SEL, help="only this repeat index (repeatable)")] = None,
    campaign_id: Annotated[str | None, typer.Option(rich_help_panel=_SEL,
        help="default: the output folder name")
                           ] = None,
    baseline_repeats: Annotated[int | None, typer.Option(
        rich_help_panel=_NF, help="at least this many baseline repeats (noise floor)")] = None,
    run_deterministic_repeats: Annotated[bool, typer.Option(
        "--run-deterministic-repeats", rich_help_panel=_NF,
        help="run the repeats that cannot differ from repeat 0 (nothing seeded in the "
             "profile, a scorer deterministic at its temperature, the simulated line), e.g. "
             "to check reproducibility; skipped by default")] = False,
    skip_deterministic_repeats: Annotated[bool, typer.Option(
        "--skip-deterministic-repeats", hidden=True,
        help="the default (kept for scripts that name it)")] = False,
    vary_delivery: Annotated[float, typer.Option(
        rich_help_panel=_NF, min=0.0, max=20.0, help=VARY_DELIVERY_HELP)] = 0.0,
    n_boot: Annotated[int, typer.Option(rich_help_panel=_NF,
        min=100, help="bootstrap resamples")] = 2000,
    progress: Annotated[bool, typer.Option(help="show a progress bar")] = True,
    transport: Annotated[str, typer.Option(
        rich_help_panel=_CALLS,
        help="sim (simulated line), or a real call per answer: webrtc, twilio (Media Streams "
             "websocket), sip, pipecat (in-process, with --interviewer)")] = "sim",
    interviewer_url: Annotated[str | None, typer.Option(
        rich_help_panel=_CALLS,
        help="a running `rig interviewer serve` or your bot's URL (webrtc: its /api/offer "
             "server; twilio: ws://HOST:PORT/PATH, its Media Streams websocket, used as "
             "given; default: start rig's interviewer on 127.0.0.1)")] = None,
    interviewer: Annotated[str | None, typer.Option(
        rich_help_panel=_CALLS,
        help="pipecat:PATH.py:FACTORY: your pipecat bot, run in-process on an in-memory "
             "transport (implies --transport pipecat; docs/bots.md)")] = None,
    bot_clock: Annotated[str | None, typer.Option(
        rich_help_panel=_CALLS,
        help="with --interviewer: real (default) or fast (idle waits skipped; docs/bots.md, "
             "'Fast mode')")] = None,
    twilio_to: Annotated[str | None, typer.Option(
        rich_help_panel=_CALLS,
        help="twilio with an account: call this number (credentials from TWILIO_* env)")
                         ] = None,
    twilio_from: Annotated[str | None, typer.Option(rich_help_panel=_CALLS,
        help="the account's number to call from")
                           ] = None,
    stream_url: Annotated[str | None, typer.Option(
        rich_help_panel=_CALLS,
        help="wss:// URL at which Twilio reaches the agent's media-stream server")] = None,
    agent_port: Annotated[int | None, typer.Option(
        rich_help_panel=_CALLS,
        help="port of the agent's media-stream server (with --twilio-to; default 8770)")
                          ] = None,
    results_token_env: Annotated[str | None, typer.Option(
        rich_help_panel=_CALLS,
        help="NAME of the environment variable holding the bearer token of the interviewer's "
             "GET /results (with --interviewer-url)")] = None,
    score_source: Annotated[str | None, typer.Option(
        rich_help_panel=_CALLS,
        help="calls to a bot: where each call's score comes from: interviewer (the bot's "
             "GET /results/{call_id}; default), rig (the rig grades what the bot received: "
             "the bot's transcript, else the rig's ASR), rig:asr (always the rig's ASR), "
             "extractor:MODULE:FUNCTION (your function reads it from the bot's messages, "
             "frames or log), or a chain tried in order, e.g. interviewer,rig "
             "(docs/bots.md)")] = None,
    result_wait_s: Annotated[float | None, typer.Option(
        rich_help_panel=_CALLS,
        help="calls to a bot: how long to wait for the interviewer's result after each call, "
             "s (default 300; progress every 10 s on stderr)")] = None,
    call_limit_s: Annotated[float | None, typer.Option(
        rich_help_panel=_CALLS,
        help="calls over a transport: the caller agent hangs up after this long on a call, s "
             "(default 120; raise it for a long interview)")] = None,
    answer_in_order: Annotated[bool, typer.Option(
        "--answer-in-order", rich_help_panel=_CALLS,
        help="calls to a bot: answer the interviewer's questions in the bank's order, without "
             "matching their words to the bank's (an interviewer that asks its own questions "
             "or paraphrases them)")] = False,
    conduct: Annotated[str | None, typer.Option(rich_help_panel=_CALLS, help=CONDUCT_HELP)] = None,
    executor: Annotated[str, typer.Option(
        rich_help_panel=_WORK,
        help="where simulated calls run: local (worker processes on this machine; "
             "--workers 1 runs them in this process), ray (actors on a Ray cluster, extra "
             "'ray'), serial (this process)")] = "local",
    workers: Annotated[int | None, typer.Option(
        rich_help_panel=_WORK,
        min=1, help="worker processes or Ray actors, each holding its own models (default: "
                    "one per two cores; ray: as many as the cluster's CPUs hold)")] = None,
    ray_address: Annotated[str | None, typer.Option(
        rich_help_panel=_WORK,
        help="with --executor ray: auto (the cluster this machine joined) or HOST:PORT "
             "(default: a Ray instance started for this campaign)")] = None,
    concurrency: Annotated[int, typer.Option(
        rich_help_panel=_CALLS,
        min=1, help="real transports: calls in flight at once (each takes its real time)")
                           ] = 1,
    asr_threads: Annotated[int | None, typer.Option(
        rich_help_panel=_WORK,
        min=1, help="threads of each worker's ASR (default: cores split over workers)")
                           ] = None,
    scorer_threads: Annotated[int | None, typer.Option(
        rich_help_panel=_WORK,
        min=1, help="threads of each worker's scorer (default: cores split over workers)")
                              ] = None,
    overlap: Annotated[bool | None, typer.Option(
        "--overlap/--no-overlap", rich_help_panel=_WORK,
        help="inside a worker, transcribe the next call while the scorer grades this one "
             "(default: when the worker's threads leave room)")] = None,
    audio: Annotated[bool, typer.Option(help=AUDIO_HELP)] = True,
) -> None:
    """Run (or resume) a matched-pair campaign: every answer under every profile."""
    from rig.calls.run.options import TransportOptions, transport_call_options
    from rig.campaign.plan import CampaignSpec

    if interviewer and transport == "sim":
        transport = "pipecat"
    if run_deterministic_repeats and skip_deterministic_repeats:
        fail(RigError("--run-deterministic-repeats and --skip-deterministic-repeats: give one "
                      "(skipping is the default)"))
    spec = CampaignSpec(answers_path=answers, profiles_path=profiles, pipeline_path=pipeline,
                        out_dir=out, repeats=repeats, campaign_id=campaign_id,
                        profile_ids=tuple(profile or ()), answer_ids=tuple(answer_id or ()),
                        question_ids=tuple(question or ()), repeat_ids=tuple(repeat or ()),
                        n_boot=n_boot, baseline_repeats=baseline_repeats,
                        transport=transport,
                        skip_deterministic_repeats=not run_deterministic_repeats, audio=audio,
                        delivery_sd_pct=vary_delivery)
    try:  # before any model loads or call is placed
        calls = transport_call_options(TransportOptions(
            transport, interviewer_url=interviewer_url, results_token_env=results_token_env,
            twilio_to=twilio_to, twilio_from=twilio_from, stream_url=stream_url,
            agent_port=agent_port, interviewer=interviewer, bot_clock=bot_clock,
            score_source=score_source, result_wait_s=result_wait_s, call_limit_s=call_limit_s,
            conduct=conduct, answer_in_order=answer_in_order or None))
    except RigError as exc:
        fail(exc)
    try:
        ex = executor_spec(executor, workers, ray_address, concurrency, asr_threads,
                           scorer_threads, overlap)
    except RigError as exc:
        fail(exc)
    _run(spec, progress, executor=ex, **calls)


def executor_spec(kind: str, workers: int | None, ray_address: str | None, concurrency: int,
                  asr_threads: int | None, scorer_threads: int | None, overlap: bool | None):
    """The :class:`rig.campaign.executors.ExecutorSpec` of ``rig campaign run``'s options
    (thread counts go to each worker's :class:`rig.runtime.Runtime`). Raises ConfigError on
    an unknown executor or a Ray address without ``--executor ray``."""
    from rig.campaign.executors import ExecutorSpec
    from rig.campaign.executors.worker import default_worker_runtime
    from rig.errors import ConfigError

    if ray_address and kind != "ray":
        raise ConfigError("--ray-address", "", "needs --executor ray", ray_address)
    spec = ExecutorSpec(kind, workers, ray_address, concurrency, None, overlap)  # type: ignore
    if asr_threads is None and scorer_threads is None:
        return spec
    runtime = default_worker_runtime(spec.n_workers() if kind != "ray" else workers or 1,
                                     asr_threads, scorer_threads)
    return ExecutorSpec(kind, workers, ray_address, concurrency, runtime, overlap)


def _torn_note(log: Path, torn: int) -> None:
    """Say (on stderr) that the log's torn last line (a write cut off mid-row) is left out,
    and where torn lines are set aside (``<log>.torn``, by the next append)."""
    aside = log.with_name(log.name + ".torn")
    earlier = (len(aside.read_bytes().splitlines()) if aside.is_file() else 0)
    if torn:
        console.print(Text(
            f"note: {log}: {torn} torn last line (a write cut off mid-row) left out of the "
            f"summary; the next `rig campaign run` into this folder moves it to {aside} and "
            "runs that call again", style="yellow"), highlight=False)
    if earlier:
        console.print(Text(f"note: {aside}: {earlier} torn line(s) set aside by earlier runs "
                           "(not in the summary)"), highlight=False)


@campaign_app.command("summarize")
def campaign_summarize(
    out: Annotated[Path, typer.Argument(help="a campaign output folder")],
    n_boot: Annotated[int, typer.Option(min=100)] = 2000,
) -> None:
    """Rewrite calls.parquet, summary.json and report.html from the folder's call log."""
    from rig.campaign.runner import write_outputs
    from rig.campaign.store import CallLog

    meta_path = out / "campaign.json"
    if not meta_path.is_file():
        fail(RigError(f"{meta_path}: not a campaign folder (no campaign.json)"))
    try:
        meta = read_json(meta_path)
        log = CallLog(out / "calls.jsonl")
    except RigError as exc:
        fail(exc)
    _torn_note(log.path, log.torn_lines)
    rows = [r for r in log.rows() if r.get("pipeline_version") == meta["pipeline_version"]]
    write_outputs(out, rows, campaign_id=meta["campaign_id"], version=meta["pipeline_version"],
                  baseline=meta["profile_ids"][0], n_boot=n_boot, pipeline=meta.get("pipeline"),
                  repeats_skipped=meta.get("repeats_skipped"),
                  speaker_groups=meta.get("speaker_groups"),
                  floor_advice=meta.get("noise_floor_advice"), bank=meta.get("bank"))
    _print_summary(load_summary(out / "summary.json"), out)


@campaign_app.command("export")
def campaign_export(
    folder: Annotated[Path, typer.Argument(help="a campaign output folder")],
    out: Annotated[Path, typer.Option("--out", help="the bundle to write (a .zip)")],
) -> None:
    """Write the auditor's bundle: rows, summary, report, audio, the inputs used and a
    MANIFEST.json of their sha256 (docs/export.md). Exit 2 when a file is missing or an input
    changed since the campaign ran."""
    from rig.campaign.export import export_campaign

    try:
        bundle = export_campaign(folder, out)
    except RigError as exc:
        fail(exc)
    stdout_console().print(f"wrote {bundle.path}: {bundle.n_files} files "
                           f"({bundle.size_bytes / 1e6:.1f} MB) and MANIFEST.json (inputs "
                           f"checked by {bundle.manifest['inputs_verified']})",
                           markup=False, highlight=False)
