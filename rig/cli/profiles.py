"""``rig profiles list|check|render``: caller profiles (audio conditions), a thin layer over
:mod:`rig.profiles`; ``render`` runs the campaign's own chain (:func:`rig.campaign.call.
render_call_audio`). Exit codes: 0 success, 2 bad input (``FILE: FIELD: problem (got
VALUE)``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from rig.cli.common import RigTyper, fail
from rig.console import print_table, stdout_console
from rig.errors import RigError
from rig.paths import DEFAULTS

profiles_app = RigTyper(no_args_is_help=True, help="Caller profiles (audio conditions).")


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
        fail(exc)
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
    measure: Annotated[str | None, typer.Option(
        help="also render this answer id (clean speech, no noise or line) under every "
             "profile and print what was measured on the output: words per minute, the "
             "silence at sentence ends (median, max) and the longest silence")] = None,
    answers_dir: Annotated[Path, typer.Option("--answers", help="the bank of --measure")] =
        DEFAULTS.answer_bank / "core",
) -> None:
    """Validate a profile set and the one-dimension rule; exit 2 with FILE: FIELD: problem
    (got VALUE) when a file is bad."""
    from rig.errors import EngineUnavailable
    from rig.profiles import OFFLINE_RECORD_ONLY, load_profiles
    from rig.synth import get_engine

    try:
        s = load_profiles(folder)
    except RigError as exc:
        fail(exc)
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
        fail(RigError("; ".join(missing)))
    out.print(f"{folder}: {len(s.profiles)} profiles OK (baseline + "
              f"{len(s.profiles) - 1}, one dimension each unless declared)")
    if measure:
        _measure_set(s, measure, answers_dir)


def _measure_set(s, answer_id: str, answers_dir: Path) -> None:
    """Print pace and silences measured on ``answer_id`` rendered under each profile of
    ``s`` (:func:`rig.synth.pauses.measure_gaps`); a profile that cannot render says why."""
    from rig.answers import load_bank
    from rig.errors import EngineUnavailable
    from rig.synth.pauses import measure_gaps
    from rig.synth.render import render_speech

    try:
        a = next((a for _, a in load_bank(answers_dir).answers() if a.answer_id == answer_id),
                 None)
    except RigError as exc:
        fail(exc)
    if a is None:
        fail(RigError(f"{answers_dir}: --measure: no answer {answer_id!r}"))
    t = Table(title=f"{answer_id} measured on the output (clean speech)")
    for col in ("profile", "wpm", "rate", "sentence_gap_median_s", "sentence_gap_max_s",
                "longest_gap_s"):
        t.add_column(col)
    for p in s.profiles:
        try:
            r = render_speech(a.script, p, 0, answer_id=a.answer_id,
                              resolve_path=lambda rel, p=p: s.resolve_path(p, rel))
        except (EngineUnavailable, RigError, ValueError, FileNotFoundError) as exc:
            t.add_row(p.profile_id, f"not rendered: {exc}", "", "", "", "")
            continue
        g = measure_gaps(r.audio.samples, r.audio.sample_rate_hz, r.words)

        def f(x: float | None) -> str:
            return "-" if x is None else f"{x:.2f}"
        t.add_row(p.profile_id, "-" if r.wpm_measured is None else f"{r.wpm_measured:.0f}",
                  "-" if r.rate is None else f"{r.rate:g}",
                  f(g.sentence_gap_median_s), f(g.sentence_gap_max_s), f(g.longest_gap_s))
    print_table(t)


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
    from rig.campaign.call import render_call_audio
    from rig.pipeline import Telephony
    from rig.profiles import load_profiles

    try:
        s = load_profiles(profiles_dir)
        p = s.get(profile)
        bank = load_bank(answers_dir)
        a = next((a for _, a in bank.answers() if a.answer_id == answer), None)
        if a is None:
            raise RigError(f"{answers_dir}: no answer {answer!r}")
        made = render_call_audio(a, p, seed, resolve_path=lambda rel: s.resolve_path(p, rel),
                                 telephony=Telephony() if line else None)
        write_wav(out, made.audio)
    except (RigError, KeyError, ValueError, FileNotFoundError) as exc:
        fail(exc)
    audio, r, report = made.audio, made.rendered, made.channel_report
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
