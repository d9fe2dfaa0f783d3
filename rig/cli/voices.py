"""``rig voices ...``: real speakers and synthetic voices (a thin layer over :mod:`rig.voices`).

``record`` (a local recording page), ``check`` (a speaker folder's coverage and quality),
``import`` (a public corpus's speakers as recorded-voice folders and a read-speech bank),
``validate`` (every shipped voice through the clean line: WER and content similarity).

Exit codes: 0 success, 2 bad input or a package that is not installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rig.cli.common import JsonOpt, RigTyper, console, fail, print_json
from rig.console import stdout_console
from rig.errors import RigError
from rig.paths import DEFAULTS

voices_app = RigTyper(no_args_is_help=True, help="Real speakers and synthetic voices.")


# --- record, check (rig.voices.record, rig.voices.check) --------------------------------


# --- import (rig.voices.corpus) ---------------------------------------------------------


# --- validate (rig.voices.validate) -----------------------------------------------------


@voices_app.command("validate")
def voices_validate(
    answers_dir: Annotated[Path, typer.Option("--answers", help="an answer bank folder")] =
        DEFAULTS.answer_bank / "core",
    voices: Annotated[list[str] | None, typer.Option(
        "--voices", help="engine:voice_id to validate (repeatable; default: every voice the "
                         "profile sets name and every voice the engines offer)")] = None,
    profiles: Annotated[list[Path] | None, typer.Option(
        "--profiles", help="profile sets whose voices to take (default: core and demo)")] = None,
    pipeline: Annotated[Path, typer.Option(help="the pipeline whose ASR listens")] =
        DEFAULTS.pipelines / "reference.yaml",
    asr_model: Annotated[str | None, typer.Option(help="override the pipeline's ASR model")
                         ] = None,
    answer_id: Annotated[list[str] | None, typer.Option(
        "--answer-id", help="only these answers (repeatable)")] = None,
    similarity: Annotated[bool, typer.Option(help="measure content similarity (the "
                                                  "similarity extra)")] = True,
    out: Annotated[Path, typer.Option(help="folder for voices.json and voices.md")] =
        Path("reports/voices"),
    json_out: JsonOpt = False,
) -> None:
    """Every shipped voice through the clean line into the pipeline's ASR: WER (pooled, mean
    per answer with a 95% CI), content similarity, wpm and the synthesiser-limited flag."""
    from rig.answers import load_bank
    from rig.asr import AsrOptions
    from rig.pipeline import load_pipeline
    from rig.profiles import load_profiles
    from rig.voices.validate import (
        VoiceResult,
        default_label,
        markdown_table,
        shipped_voices,
        validate_voices,
        voice_key,
        write_outputs,
    )

    try:
        dirs = profiles or [DEFAULTS.profiles / "core", DEFAULTS.profiles / "demo"]
        baseline = load_profiles(dirs[0]).baseline
        known = shipped_voices(dirs)
        if voices:
            by_key = {v.key: v for v in known}
            chosen = []
            for spec in voices:
                engine, sep, voice_id = spec.partition(":")
                if not sep or not voice_id:
                    raise RigError(f"--voices: {spec!r} is not engine:voice_id")
                k = voice_key(engine, voice_id)
                chosen.append(by_key.get(k) or VoiceResult(k, engine, voice_id,
                                                           default_label(engine, voice_id)))
            known = chosen
        bank = load_bank(answers_dir)
        answers = [a for _, a in bank.answers()
                   if not answer_id or a.answer_id in answer_id]
        if not answers:
            raise RigError(f"{answers_dir}: no answer selected (--answer-id {answer_id})")
        cfg = load_pipeline(pipeline).asr
        asr = AsrOptions(model=asr_model or cfg.model, language=cfg.language,
                         beam_size=cfg.beam_size, compute_type=cfg.compute_type)
        doc = validate_voices(known, answers, baseline, asr, use_similarity=similarity,
                              progress=lambda s: console.print(s, highlight=False))
        j, m = write_outputs(doc, out)
    except (RigError, KeyError, ValueError, FileNotFoundError) as exc:
        fail(exc)
    if json_out:
        print_json(doc)
        return
    stdout_console().print(markdown_table(doc), highlight=False, markup=False)
    stdout_console().print(f"wrote {j} and {m}", highlight=False)
