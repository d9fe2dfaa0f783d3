"""``rig demo``: the demo campaign on the embedded defaults, then a small sweep of the
endpointing timer with a one-line answer (a thin layer over :func:`rig.cli.campaign._run`
and :mod:`rig.sweep`). ``--language es`` runs the Spanish demo (:data:`DEMOS`): the Spanish
bank, its espeak-ng profile set and the multilingual pipeline (``asr.language: auto``).

Exit codes: 0 success, 2 bad input or every call failed, 130 interrupted (Ctrl-C), 143
stopped by SIGTERM.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

import typer

from rig.cli.campaign import AUDIO_HELP, _run
from rig.cli.common import VARY_DELIVERY_HELP, fail
from rig.cli.finish import print_finish
from rig.console import stdout_console
from rig.errors import ConfigError, RigError
from rig.paths import DEFAULTS


@dataclass(frozen=True)
class Demo:
    """One language's demo: the bank, profile set and pipeline (folder names under the
    embedded defaults) and the answers run under every profile."""
    bank: str
    profiles: str
    pipeline: str
    answer_ids: tuple[str, ...]


DemoLanguage = Literal["en", "es"]
#: The demos per language. Spanish only beyond English: espeak-ng's French and German voices
#: fail Whisper's language detection on the 8 kHz line (docs/voices.md), so a demo in them
#: would show the synthesiser, not the pipeline.
DEMOS: dict[str, Demo] = {
    "en": Demo("core", "demo", "reference.yaml", DEFAULTS.demo_answer_ids),
    # a strong, a borderline and a weak answer of the first question and the second's strong
    # and weak, under three profiles: 20 planned calls (15 run), about 3-6 min on 2 idle cores
    "es": Demo("es", "es", "multilingual.yaml", ("es_q01_strong", "es_q01_border_lo",
                                                 "es_q01_weak", "es_q02_strong",
                                                 "es_q02_weak")),
}


def demo(
    out: Annotated[Path | None, typer.Option(
        help="output folder (default: reports/demo, or reports/demo-<language>)")] = None,
    language: Annotated[DemoLanguage, typer.Option(
        help="en: the core bank in English; es: the Spanish bank, Spanish espeak-ng voices "
             "and the multilingual pipeline (Whisper detects the language)")] = "en",
    answer_id: Annotated[list[str] | None, typer.Option(
        "--answer-id", help="run only these of the demo's answers (repeatable)")] = None,
    repeats: Annotated[int, typer.Option(min=1, help="repeats per call")] = 1,
    progress: Annotated[bool, typer.Option(help="show a progress bar")] = True,
    sweep: Annotated[bool, typer.Option(help="then sweep the endpointing timer on "
                                        "long_pauses (10 calls more)")] = True,
    audio: Annotated[bool, typer.Option(help=AUDIO_HELP)] = True,
    vary_delivery: Annotated[float, typer.Option(
        rich_help_panel="Repeats and the noise floor", min=0.0, max=20.0,
        help=VARY_DELIVERY_HELP)] = 0.0,
) -> None:
    """Run the demo campaign on the embedded defaults (offline; 30 calls and the sweep's 10:
    about 3.5 min on 2 idle cores, 18 min at a load of 3.4; benchmarks/first_run.py),
    then a small sweep of the endpointing timer on long_pauses (its pauses outlast the 800 ms
    timer; the 2,000 ms timer's 10 calls re-use the campaign's renders) with a one-line answer.

    The baseline is planned twice for the noise floor; with the deterministic reference
    pipeline its second repeat could not differ, so it is skipped and reported as such.
    --vary-delivery 5 speaks each repeat at its own rate, so the floor is measured (35 calls
    and the sweep's 15 instead of 30 and 10)."""
    from rig.campaign.plan import CampaignSpec

    d, which = DEFAULTS, DEMOS[language]
    out = out or Path("reports/demo" if language == "en" else f"reports/demo-{language}")
    ids = tuple(answer_id or which.answer_ids)
    unknown = sorted(set(ids) - set(which.answer_ids))
    if unknown:
        fail(ConfigError("--answer-id", "", f"not an answer of the {language} demo "
                         f"({', '.join(which.answer_ids)})", unknown))
    spec = CampaignSpec(answers_path=d.answer_bank / which.bank,
                        profiles_path=d.profiles / which.profiles,
                        pipeline_path=d.pipelines / which.pipeline, out_dir=out,
                        repeats=repeats, campaign_id="demo" if language == "en"
                        else f"demo-{language}", answer_ids=ids, baseline_repeats=2,
                        audio=audio, delivery_sd_pct=vary_delivery)
    t0 = time.perf_counter()
    res = _run(spec, progress, finish=False)
    if sweep:
        _demo_sweep(out, progress)
    print_finish(time.perf_counter() - t0, res.audio_s, res.seconds, out / "report.html")


#: The demo's sweep: the endpointing timer on the profile whose pauses (1.6 s) outlast the
#: reference pipeline's 800 ms timer; the campaign's own timer is the other value.
DEMO_SWEEP_PROFILE = "long_pauses"
DEMO_SWEEP_TIMERS_MS = (2000,)


def _demo_sweep(out: Path, progress: bool) -> None:
    """After the demo campaign: sweep the timer on :data:`DEMO_SWEEP_PROFILE` (its calls and
    the baseline's, renders from the cache) and print the one-line answer."""
    from rig.campaign.schema import SweepNote
    from rig.cli.sweep import print_sweep, resumable
    from rig.sweep import Vary, headline, run_sweep

    path = "endpointing.silence_timeout_ms"
    try:
        with resumable(out / "sweep"):
            res = run_sweep(out, [Vary(path, DEMO_SWEEP_TIMERS_MS)], out / "sweep",
                            profile_ids=(DEMO_SWEEP_PROFILE,), progress=progress)
    except RigError as exc:
        fail(exc)
    print_sweep(res.sweep)
    line = headline(res.sweep, DEMO_SWEEP_PROFILE, path)
    stdout_console().print(line, markup=False, highlight=False)
    _note_sweep(out, SweepNote(
        vary=f"{path}={','.join(str(v) for v in DEMO_SWEEP_TIMERS_MS)}",
        profile_id=DEMO_SWEEP_PROFILE, verdict=line, report="sweep/report.html"))
    stdout_console().print(f"wrote {out}/sweep/sweep.json, {out}/sweep/sweep.parquet, "
                           f"{out}/sweep/report.html ({res.n_run} calls, {res.seconds:.0f} s)",
                           markup=False, highlight=False)


def _note_sweep(out: Path, note) -> None:
    """Record the demo's sweep (a :class:`rig.campaign.schema.SweepNote`) in the campaign's
    summary.json and rewrite its report.html, whose verdict then states it."""
    import pandas as pd

    from rig.campaign.summary_file import load_summary, write_summary
    from rig.report import write_campaign_report

    summary = load_summary(out / "summary.json").model_copy(update={"sweep": note})
    write_summary(out / "summary.json", summary)
    write_campaign_report(out / "report.html", summary,
                          pd.read_parquet(out / "calls.parquet"))
