"""``rig voices ...``: real speakers and synthetic voices (a thin layer over :mod:`rig.voices`).

``record`` (a local recording page), ``check`` (a speaker folder's coverage and quality),
``import`` (a public corpus's speakers as recorded-voice folders and a read-speech bank),
``validate`` (every shipped voice through the clean line: WER and content similarity).

Exit codes: 0 success, 2 bad input or a package that is not installed.
"""

from __future__ import annotations

from rig.cli.common import RigTyper

voices_app = RigTyper(no_args_is_help=True, help="Real speakers and synthetic voices.")


# --- record, check (rig.voices.record, rig.voices.check) --------------------------------


# --- import (rig.voices.corpus) ---------------------------------------------------------


# --- validate (rig.voices.validate) -----------------------------------------------------
