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

from rig.cli.common import JsonOpt, RigTyper, console, fail, or_fail, print_json
from rig.console import stdout_console
from rig.errors import RigError
from rig.paths import DEFAULTS

voices_app = RigTyper(no_args_is_help=True, help="Real speakers and synthetic voices.")


# --- record, check (rig.voices.record, rig.voices.check) --------------------------------

@voices_app.command("record")
def voices_record(
    out: Annotated[Path, typer.Option(help="the speaker's folder, voices/<speaker_id>")],
    answers: Annotated[Path, typer.Option(help="answer bank folder")] = (
        DEFAULTS.answer_bank / "core"),
    port: Annotated[int, typer.Option(min=1, max=65535, help="port on 127.0.0.1")] = 8780,
    consent_file: Annotated[Path | None, typer.Option(
        help="a text file with your own consent text (default: rig's, shown on the page)")
                            ] = None,
    open_browser: Annotated[bool, typer.Option("--open/--no-open",
                                               help="open the page in the browser")] = False,
) -> None:
    """Serve a local recording page (http://127.0.0.1:PORT) for one speaker: consent, the
    speaker's own description, then every answer's script to read, recorded from the
    browser's microphone into OUT/<answer_id>.wav. Ctrl-C stops it; run it again to go on."""
    from rig.voices.record import CONSENT_TEXT, create_app, serve

    consent = CONSENT_TEXT
    if consent_file is not None:
        try:
            consent = " ".join(consent_file.read_text(encoding="utf-8").split())
        except (OSError, UnicodeDecodeError) as exc:
            fail(f"{consent_file}: --consent-file cannot be read ({exc})")
        if not consent:
            fail(f"{consent_file}: --consent-file is empty")
    or_fail(lambda: create_app(answers, out, consent))  # bad input: exit 2 before serving

    def ready(url: str) -> None:
        console.print(f"recording page for {out.name}: {url}  (Ctrl-C to stop)",
                      highlight=False)
        if open_browser:
            import webbrowser

            webbrowser.open(url)

    try:
        serve(answers, out, port, consent, on_ready=ready)
    except (RigError, OSError) as exc:
        fail(exc)


@voices_app.command("check")
def voices_check(
    folder: Annotated[Path, typer.Argument(help="a speaker folder, voices/<speaker_id>")],
    answers: Annotated[Path, typer.Option(help="answer bank folder")] = (
        DEFAULTS.answer_bank / "core"),
    asr_model: Annotated[str, typer.Option(help="Whisper model for the WER")] = "whisper-base",
    max_wer: Annotated[float, typer.Option(
        min=0.0, help="flag a file whose WER against its script is above this")] = 0.2,
    as_json: JsonOpt = False,
) -> None:
    """Coverage of the bank and, per recording, level, peak, clipping, SNR, Whisper's WER
    against the script and speaking rate. Exit 1 when a file is flagged (re-take) or
    speaker.json is missing or invalid (the problem is printed), 2 on bad input."""
    from rig.models import MODELS
    from rig.voices.check import Thresholds, check_voice, render_check

    if asr_model not in MODELS:
        fail(f"--asr-model: unknown model {asr_model!r} (known: "
             f"{', '.join(sorted(k for k in MODELS if k.startswith('whisper')))})")
    result = or_fail(lambda: check_voice(folder, answers, asr_model,
                                         Thresholds(max_wer=max_wer)))
    if as_json:
        print_json(result.to_json())
    else:
        render_check(result, stdout_console())
    if any(f.flags for f in result.files) or result.speaker_problem:
        raise typer.Exit(1)


# --- import (rig.voices.corpus) ---------------------------------------------------------


@voices_app.command("import")
def voices_import(
    path: Annotated[Path, typer.Argument(help="the corpus folder (you bring it)")],
    layout: Annotated[str, typer.Option(help="vctk (0.92 or 0.80), l2-arctic or cmu-arctic")],
    out: Annotated[Path, typer.Option(help="where the speaker folders, bank/ and profiles/ "
                                           "go")] = Path("voices"),
    speakers: Annotated[str, typer.Option(help="comma-separated corpus speaker ids (p225,p226"
                                               "); default all")] = "",
    max_prompts: Annotated[int, typer.Option(min=0, help="at most this many shared prompts (0: "
                                                  "all)")] = 30,
    sample_rate_hz: Annotated[int, typer.Option(help="downsample recordings above this "
                                                     "rate")] = 16000,
    mic: Annotated[str, typer.Option(help="VCTK 0.92 microphone: mic1 or mic2")] = "mic1",
) -> None:
    """Import a public corpus's speakers as recorded-voice folders, with a read-speech bank
    of the prompts they all read and one profile per speaker (docs/voices.md)."""
    from rig.console import stdout_console
    from rig.errors import RigError
    from rig.voices.corpus import LICENCE
    from rig.voices.corpus_import import import_corpus

    ids = tuple(s.strip() for s in speakers.split(",") if s.strip())
    try:
        res = import_corpus(layout, path, out, speakers=ids, max_prompts=max_prompts or None,
                            sample_rate_hz=sample_rate_hz, mic=mic)
    except RigError as exc:
        fail(exc)
    con = stdout_console()
    n_spk, n_prompts = len(res.speaker_dirs), len(res.answer_ids)
    con.print(f"{n_spk} speaker{'' if n_spk == 1 else 's'} x {n_prompts} shared "
              f"prompt{'' if n_prompts == 1 else 's'} "
              f"written under {out} (licence: {LICENCE[layout]})")
    for why in res.prompts_left_out:
        con.print(f"  left out: {why}")
    con.print(f"bank: {res.bank_dir}  profiles: {res.profiles_dir} (baseline: "
              f"{res.speaker_dirs[0].name})")
    con.print(f"run: rig campaign run --answers {res.bank_dir} --profiles {res.profiles_dir} "
              "--pipeline pipelines/reference.yaml --out reports/read-speech")


# --- validate (rig.voices.validate) -----------------------------------------------------

def _check_named_voice(spec: str, engine: str, voice_id: str) -> None:
    """A voice named with ``--voices`` must be a valid profile voice and be installed here:
    RigError naming the option otherwise (before anything is rendered)."""
    from pydantic import ValidationError

    from rig.errors import EngineUnavailable
    from rig.profiles.settings import Voice
    from rig.synth.engines import get_engine

    try:
        Voice(engine=engine, voice_id=voice_id)
    except ValidationError as exc:
        raise RigError(f"--voices {spec}: {exc.errors()[0]['msg']}") from None
    try:
        get_engine(engine, voice_id)
    except (EngineUnavailable, ValueError) as exc:
        raise RigError(f"--voices {spec}: {exc}") from None



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
    from rig.asr.whisper import AsrOptions
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
                _check_named_voice(spec, engine, voice_id)
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
        language = bank.meta.language
        english_only = (asr_model or cfg.model).endswith(".en")
        if cfg.language not in (language, "auto") or (english_only and language != "en"):
            raise RigError(f"{answers_dir} is in {language!r} but {pipeline} decodes "
                           f"{cfg.language!r} with {asr_model or cfg.model}: use a pipeline "
                           "with a multilingual model and asr.language auto or "
                           f"{language} (pipelines/multilingual.yaml)")
        asr = AsrOptions(model=asr_model or cfg.model, language=cfg.whisper_language,
                         beam_size=cfg.beam_size, compute_type=cfg.compute_type)
        doc = validate_voices(known, answers, baseline, asr, use_similarity=similarity,
                              progress=lambda s: console.print(s, highlight=False),
                              language=language)
        j, m = write_outputs(doc, out)
    except (RigError, KeyError, ValueError, FileNotFoundError) as exc:
        fail(exc)
    if json_out:
        print_json(doc)
        return
    stdout_console().print(markdown_table(doc), highlight=False, markup=False)
    stdout_console().print(f"wrote {j} and {m}", highlight=False)
