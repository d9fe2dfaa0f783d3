"""``rig replay``: recorded interviews through pipeline versions A and B, paired by turn
(:mod:`rig.replay`; docs/replay.md).

Exit codes: 0 done, 2 bad input (the message names the file, the field and the value), or no
turn could be replayed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rig.cli.common import JsonOpt, console, fail, or_fail, print_json
from rig.console import stdout_console


def _profile(profiles: Path | None, profile_id: str | None):
    if profile_id is None:
        return None
    if profiles is None:
        fail("--profile needs --profiles (the profile set folder that holds it)")
    from rig.profiles import load_profiles

    pset = or_fail(lambda: load_profiles(profiles))
    prof = or_fail(lambda: pset.get(profile_id))
    if prof.noise.kind == "file" and prof.noise.path:  # resolved here: workers run elsewhere
        path = str(pset.resolve_path(prof, prof.noise.path))
        prof = prof.model_copy(update={"noise": prof.noise.model_copy(update={"path": path})})
    return prof


def replay_command(
    pipeline_b: Annotated[Path, typer.Option(
        "--pipeline-b", help="Version B's pipeline YAML (the candidate).")],
    answers: Annotated[Path, typer.Option(help="Answer bank: the questions' rubrics and "
                                          "cutoffs (the bank the interviews were graded "
                                          "on).")],
    recordings: Annotated[Path | None, typer.Argument(
        help="Folder of recordings in the monitor's input format (sidecars or a manifest) "
             "with question_id or turns; omit with --from-monitor.")] = None,
    pipeline_a: Annotated[Path | None, typer.Option(
        "--pipeline-a", help="Version A's pipeline YAML (the one that served the calls); "
        "with --logged-a, optional.")] = None,
    out: Annotated[Path, typer.Option(help="Output folder (rerun to resume).")] = Path(
        "reports/replay"),
    from_monitor: Annotated[Path | None, typer.Option(
        "--from-monitor", help="Replay the stereo calls a monitoring database holds.")] = None,
    manifest: Annotated[Path | None, typer.Option(help="A manifest file instead of the "
                                                  "folder's own.")] = None,
    logged_a: Annotated[bool, typer.Option(
        "--logged-a", help="Use version A's transcript, score and decision stored with each "
        "recording instead of replaying A.")] = False,
    profiles: Annotated[Path | None, typer.Option(help="Profile set folder (with "
                                                  "--profile).")] = None,
    profile: Annotated[str | None, typer.Option(
        help="Apply this profile's noise and line to the real speech.")] = None,
    apply_codec: Annotated[bool, typer.Option(
        "--apply-codec", help="Send the recordings through the pipeline's codec again (they "
        "are already on a line: off by default).")] = False,
    stereo_layout: Annotated[str | None, typer.Option(
        "--stereo-layout", help="candidate_left or candidate_right, for stereo recordings "
        "whose metadata has no layout.")] = None,
    monitor_config: Annotated[Path | None, typer.Option(
        "--monitor-config", help="The monitor's YAML: how the segments are measured and "
        "binned.")] = None,
    executor: Annotated[str, typer.Option(help="serial, local or ray.")] = "serial",
    workers: Annotated[int, typer.Option(min=1, help="Worker processes (local, ray).")] = 1,
    copy_audio: Annotated[bool, typer.Option(
        "--copy-audio", help="Copy each answer's audio into OUT/audio (the report then plays "
        "it from there).")] = False,
    no_audio: Annotated[bool, typer.Option("--no-audio", help="A report without players or "
                                           "waveforms.")] = False,
    alpha: Annotated[float, typer.Option(min=0.0001, max=0.5, help="Family-wise error rate "
                                         "of the segment tests (Holm).")] = 0.05,
    json_out: JsonOpt = False,
) -> None:
    """Replay recorded interviews through pipeline versions A and B, paired by turn.

    Writes calls.parquet (one row per turn and version), pairs.parquet, summary.json and
    report.html to OUT; rerunning the same command resumes.
    """
    from rig.monitor.config import load_config
    from rig.replay.run import run_replay
    from rig.replay.summary import write_outputs

    if executor not in ("serial", "local", "ray"):
        fail(f"--executor: one of serial, local, ray (got {executor!r})")
    if stereo_layout not in (None, "candidate_left", "candidate_right"):
        fail(f"--stereo-layout: candidate_left or candidate_right (got {stereo_layout!r})")
    if pipeline_a is None and not logged_a:
        fail("--pipeline-a: missing (version A's pipeline; or --logged-a to use the results "
             "stored with the recordings)")
    if recordings is None and from_monitor is None:
        fail("RECORDINGS: missing (a folder of recordings, or --from-monitor DB)")
    prof = _profile(profiles, profile)
    cfg = or_fail(lambda: load_config(monitor_config))
    con = stdout_console(highlight=False)
    done = [0]

    def tick(outcome) -> None:
        done[0] += 1
        console.print(f"replay: recording {done[0]}: {outcome.source}: {len(outcome.rows)} "
                      f"rows replayed, {len(outcome.problems)} left out")

    res = or_fail(lambda: run_replay(
        recordings, bank=answers, pipeline_a=pipeline_a or pipeline_b, pipeline_b=pipeline_b,
        out=out, logged_a=logged_a, profile=prof, codec_reapplied=apply_codec,
        stereo_layout=stereo_layout, manifest=manifest, from_monitor=from_monitor,
        monitor_config=cfg, executor=executor, workers=workers,  # type: ignore[arg-type]
        copy_audio=copy_audio, on_recording=tick))
    if res.n_skipped_done:
        console.print(f"replay: resumed: {res.n_skipped_done} of {res.n_recordings} recordings "
                      f"were done already in {out} (skipped); {done[0]} replayed now")
    summary = or_fail(lambda: write_outputs(out, res.rows, res.problems, audio=not no_audio,
                                            alpha=alpha))
    if json_out:
        print_json(summary)
    else:
        from rig.replay.report import verdict_sentences

        for s in verdict_sentences(summary):
            con.print(s)
        for m in res.problems:
            con.print(f"left out: {m}")
        con.print(f"wrote {out / 'report.html'}, {out / 'summary.json'}, "
                  f"{out / 'calls.parquet'}")
    if not res.rows:
        fail("no turn could be replayed (see 'left out' above)")
