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

from rig.cli.common import RigTyper, fail

voices_app = RigTyper(no_args_is_help=True, help="Real speakers and synthetic voices.")


# --- record, check (rig.voices.record, rig.voices.check) --------------------------------


# --- import (rig.voices.corpus) ---------------------------------------------------------


@voices_app.command("import")
def voices_import(
    path: Annotated[Path, typer.Argument(help="the corpus folder (you bring it)")],
    layout: Annotated[str, typer.Option(help="vctk (0.92 or 0.80), l2-arctic or cmu-arctic")],
    out: Annotated[Path, typer.Option(help="where the speaker folders, bank/ and profiles/ "
                                           "go")] = Path("voices"),
    speakers: Annotated[str, typer.Option(help="comma-separated corpus speaker ids (p225,p226"
                                               "); default all")] = "",
    max_prompts: Annotated[int, typer.Option(help="at most this many shared prompts (0: "
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
    con.print(f"{len(res.speaker_dirs)} speakers x {len(res.answer_ids)} shared prompts "
              f"written under {out} (licence: {LICENCE[layout]})")
    for why in res.prompts_left_out:
        con.print(f"  left out: {why}")
    con.print(f"bank: {res.bank_dir}  profiles: {res.profiles_dir} (baseline: "
              f"{res.speaker_dirs[0].name})")
    con.print(f"run: rig campaign run --answers {res.bank_dir} --profiles {res.profiles_dir} "
              "--pipeline pipelines/reference.yaml --out reports/read-speech")


# --- validate (rig.voices.validate) -----------------------------------------------------
